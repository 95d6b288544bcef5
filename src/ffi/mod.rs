//! The C++ bridge (`cxx` feature): what `cpp/include/hoare/hoare.hpp` is built on.
//!
//! # Design
//! * **Processes.** A C++ process body is a `hoare::ffi::Task` (a C++ object with a
//!   virtual `run() noexcept`). The Rust process owns it through a `UniquePtr`, runs
//!   it and hands it back from `join`, so the result or the `std::exception_ptr`
//!   stored in it reaches the C++ joiner. C++ exceptions are caught in `Task::run`
//!   and never unwind through Rust frames.
//! * **Channels** carry C++ values by address. A C++ `Chan<T>` for an arbitrary
//!   movable `T` is a Rust channel of `RawItem`: on a rendezvous channel the item
//!   points at the sender's own `T`, and the receiver move-constructs its value out
//!   of it inside an extended rendezvous (`recv_with`) while the sender is still
//!   blocked: no allocation, no copy. Buffered channels need the value to outlive
//!   the send, so the sender moves it into a heap box (`new T(std::move(v))`) and the
//!   item owns the box (it is destroyed by C++ `delete` if the channel drops it).
//!   An alt's receive is not an extended rendezvous: there the sender, released
//!   when the alt commits, waits (yielding) on an `ack` flag until the alt has
//!   moved the value out.
//! * **Trivially copyable C++ types** of at most 64 bytes travel by value in
//!   channels of `[u64; N]` (`Elem::Pod*`): no extended rendezvous needed.
//! * **Native elements** (`i64`, `u64`, `f64`, `String`, `Vec<u8>`) travel in plain
//!   Rust channels of those types, so a Rust process can hold the other end (SPEC
//!   X3). `rust::String` and `rust::Vec<uint8_t>` share Rust's layout, so the value
//!   moves with a bitwise move, without a copy of the bytes.
//! * **Alternation** is one call (`alt_select`) over a list of guards built in C++;
//!   an alt of only receive guards on ends of one element type and sharing kind
//!   takes a fast path (one `RecvAny`-style case set). `RecvSet` is the C++
//!   `hoare::RecvAny`: the case set built once and selected on many times.
//!   Scoped forking and request/reply bundles are C++ over `spawn`/`join` and
//!   channels; alting barriers are bridged (`AltingBarrier*Handle`, `AltKind::Barrier`).
//! * **Failures.** Misuse that C++ can commit (a spawn outside a runtime, an alt
//!   with no enabled guard, a bad channel kind or capacity, ...) is checked here
//!   before the Rust API would panic, and comes back as `Err` (cxx maps it to
//!   `rust::Error`, hoare.hpp to `hoare::Error`): no panic, so no panic message on
//!   stderr. Every `extern "Rust"` function that can fail also runs under
//!   `catch_unwind`, so a panic that is a bug still becomes a C++ exception
//!   (`"hoare: Rust panic: ..."`), never undefined behaviour.

mod backend;

use backend::{Buf, Fail, Rx, Tx, Wait};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub use bridge::{Buffering, Elem, Sharing, Status};

#[cxx::bridge(namespace = "hoare::ffi")]
#[allow(missing_docs)]
mod bridge {
    /// How a channel operation ended.
    #[repr(u8)]
    #[derive(Debug)]
    enum Status {
        Ok = 0,
        Poisoned = 1,
        Timeout = 2,
        WouldBlock = 3,
    }

    /// Which ends of a channel may be shared (cloned).
    #[repr(u8)]
    #[derive(Debug)]
    enum Sharing {
        One2One = 0,
        Any2One = 1,
        One2Any = 2,
        Any2Any = 3,
    }

    /// How a channel buffers.
    #[repr(u8)]
    #[derive(Debug)]
    enum Buffering {
        Rendezvous = 0,
        Bounded = 1,
        Overwriting = 2,
        Unbounded = 3,
    }

    /// The element type of a channel as the Rust side sees it.
    #[repr(u8)]
    #[derive(Debug)]
    enum Elem {
        /// Any C++ type, by address (see the module documentation).
        Raw = 0,
        I64 = 1,
        U64 = 2,
        F64 = 3,
        /// `rust::String` ↔ `String`.
        Str = 4,
        /// `rust::Vec<uint8_t>` ↔ `Vec<u8>`.
        Bytes = 5,
        /// A trivially copyable C++ type of at most 8, 16, 32 or 64 bytes, moved by
        /// value (memcpy) through a channel of `[u64; N]`: no extended rendezvous.
        Pod1 = 6,
        Pod2 = 7,
        Pod4 = 8,
        Pod8 = 9,
    }

    /// How long an operation may wait.
    #[repr(u8)]
    enum WaitMode {
        Block = 0,
        Try = 1,
        Timeout = 2,
    }

    /// Options of a spawned process.
    struct SpawnOpts {
        /// Never migrate the process off the worker it starts on.
        pinned: bool,
        /// Stack size in bytes (0: the runtime's default).
        stack_size: usize,
        /// Run on an OS thread of its own (for blocking calls).
        thread: bool,
        /// The process's name (empty: unnamed).
        name: String,
    }

    /// Options of a runtime started by `run`.
    struct RunOpts {
        /// Worker threads (0: default, i.e. `HOARE_WORKERS` or the core count).
        workers: usize,
        /// Default stack size in bytes (0: the runtime's default).
        stack_size: usize,
    }

    /// The kind of one guard of an alt.
    #[repr(u8)]
    enum AltKind {
        Recv = 0,
        Send = 1,
        Timeout = 2,
        Skip = 3,
        /// An alting barrier (`end`: `*mut AltingBarrierEndHandle`).
        Barrier = 4,
    }

    /// One guard of an alt, as C++ describes it (addresses as integers).
    struct AltGuard {
        kind: AltKind,
        /// The precondition.
        enabled: bool,
        /// `*const ChanRx` (receive) or `*const ChanTx` (send).
        end: usize,
        /// Receive: storage for the value; send: the C++ value to send.
        value: usize,
        /// `*mut ExcSlot` for an exception of a move constructor.
        err: usize,
        /// Timeout: nanoseconds from now.
        timeout_ns: u64,
    }

    /// The guard an alt chose and how its communication ended.
    struct AltOutcome {
        /// Index into the guards (`usize::MAX`: a move into a box threw before the
        /// alt started; see the guards' exception slots).
        guard: usize,
        status: Status,
        /// The fair policy's next start.
        fair_next: usize,
    }

    /// Both ends of a new channel.
    struct ChanPair {
        tx: Box<ChanTx>,
        rx: Box<ChanRx>,
    }

    unsafe extern "C++" {
        include!("hoare/bridge.hpp");

        type Task;
        type ValueOps;
        type ExcSlot;

        fn task_run(task: Pin<&mut Task>);
        unsafe fn value_move(
            ops: *const ValueOps,
            dst: *mut u8,
            src: *mut u8,
            err: *mut ExcSlot,
        ) -> bool;
        unsafe fn value_box(ops: *const ValueOps, src: *mut u8, err: *mut ExcSlot) -> *mut u8;
        unsafe fn value_unbox(ops: *const ValueOps, boxed: *mut u8, dst: *mut u8);
        unsafe fn value_drop_box(ops: *const ValueOps, boxed: *mut u8);
        unsafe fn exc_share(from: *mut ExcSlot, to: *mut ExcSlot);
    }

    extern "Rust" {
        /// A spawned process (a Rust `JoinHandle`).
        type ProcHandle;
        /// A sending end of any element type and sharing kind.
        type ChanTx;
        /// A receiving end of any element type and sharing kind.
        type ChanRx;

        fn run(task: UniquePtr<Task>, opts: &RunOpts) -> Result<UniquePtr<Task>>;
        fn spawn(task: UniquePtr<Task>, opts: &SpawnOpts) -> Result<Box<ProcHandle>>;
        fn join(handle: Box<ProcHandle>) -> Result<UniquePtr<Task>>;
        fn yield_now() -> Result<()>;
        fn sleep_ns(ns: u64) -> Result<()>;
        fn proc_id() -> u64;
        fn proc_name(out: &mut String) -> bool;
        fn in_process() -> bool;
        fn default_workers() -> usize;

        unsafe fn chan_new(
            elem: Elem,
            ops: *const ValueOps,
            size: usize,
            sharing: Sharing,
            buffering: Buffering,
            capacity: usize,
        ) -> Result<ChanPair>;
        unsafe fn tx_send(
            tx: &ChanTx,
            value: *mut u8,
            err: *mut ExcSlot,
            mode: WaitMode,
            timeout_ns: u64,
        ) -> Result<Status>;
        unsafe fn rx_recv(
            rx: &ChanRx,
            dst: *mut u8,
            err: *mut ExcSlot,
            mode: WaitMode,
            timeout_ns: u64,
        ) -> Result<Status>;
        /// Extended rendezvous: receives into `dst`, then runs `task` (the C++
        /// handler, which reads `dst`) while the writer stays blocked.
        unsafe fn rx_recv_with(
            rx: &ChanRx,
            dst: *mut u8,
            err: *mut ExcSlot,
            task: Pin<&mut Task>,
        ) -> Result<Status>;
        fn tx_poison(tx: &ChanTx) -> Result<()>;
        fn rx_poison(rx: &ChanRx) -> Result<()>;
        fn tx_clone(tx: &ChanTx) -> Result<Box<ChanTx>>;
        fn rx_clone(rx: &ChanRx) -> Result<Box<ChanRx>>;
        fn tx_elem(tx: &ChanTx) -> Elem;
        fn rx_elem(rx: &ChanRx) -> Elem;

        /// A barrier (`hoare::Barrier`): a handle to enroll with.
        type BarrierHandle;
        /// One enrolled party of a barrier (`hoare::BarrierEnd`).
        type BarrierEndHandle;

        fn barrier_new() -> Box<BarrierHandle>;
        fn barrier_clone(b: &BarrierHandle) -> Box<BarrierHandle>;
        fn barrier_enroll(b: &BarrierHandle) -> Result<Box<BarrierEndHandle>>;
        fn barrier_enrolled(b: &BarrierHandle) -> usize;
        fn barrier_rounds(b: &BarrierHandle) -> Result<u64>;
        fn barrier_same(a: &BarrierHandle, b: &BarrierHandle) -> bool;
        fn barrier_sync(e: &mut BarrierEndHandle) -> Result<()>;
        fn barrier_of(e: &BarrierEndHandle) -> Box<BarrierHandle>;

        // Alternation: one call selects over a list of guards built in C++.
        unsafe fn alt_select(
            guards: &[AltGuard],
            fair: bool,
            fair_next: usize,
        ) -> Result<AltOutcome>;

        /// An alting barrier (`hoare::AltingBarrier`).
        type AltingBarrierHandle;
        /// One enrolled end of an alting barrier (`hoare::AltingBarrierEnd`).
        type AltingBarrierEndHandle;

        fn alting_barrier_new() -> Box<AltingBarrierHandle>;
        fn alting_barrier_clone(b: &AltingBarrierHandle) -> Box<AltingBarrierHandle>;
        fn alting_barrier_enroll(b: &AltingBarrierHandle) -> Result<Box<AltingBarrierEndHandle>>;
        fn alting_barrier_enrolled(b: &AltingBarrierHandle) -> Result<usize>;
        fn alting_barrier_rounds(b: &AltingBarrierHandle) -> Result<u64>;
        fn alting_barrier_sync(e: &mut AltingBarrierEndHandle) -> Result<()>;
        fn alting_barrier_of(e: &AltingBarrierEndHandle) -> Box<AltingBarrierHandle>;

        /// A replicated receive guard over a fixed set of ends (`hoare::RecvAny`),
        /// built once and selected on many times.
        type RecvSet;
        unsafe fn recv_set_new(ends: &[usize]) -> Result<Box<RecvSet>>;
        unsafe fn recv_set_select(
            set: &mut RecvSet,
            dst: *mut u8,
            err: *mut ExcSlot,
            fair: bool,
            fair_next: usize,
        ) -> Result<AltOutcome>;

        // Rust processes for the mixed Rust/C++ example and tests.
        fn rust_doubler(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<()>;
        fn rust_upper(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<()>;
        fn rust_reverse_bytes(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<()>;
        fn rust_counter(n: i64) -> Result<Box<ChanRx>>;
        fn rust_sum(rx: Box<ChanRx>) -> Result<i64>;
        fn rust_commstime(iters: i64) -> Result<f64>;

        // Failure-path hooks for the C++ tests.
        fn test_panic(msg: &str) -> Result<()>;
        fn test_spawn_panicking() -> Result<Box<ProcHandle>>;
    }
}

use bridge::{
    AltGuard, AltKind, AltOutcome, ChanPair, ExcSlot, RunOpts, SpawnOpts, Task, ValueOps, WaitMode,
};
use hoare_core::alt::{Alt, Fair, SendKey};
use hoare_core::chan::{RecvError, SendError};

// SAFETY: a `Task` is a C++ closure object that hoare::spawn requires to be movable
// to another thread (C++ process bodies must not depend on the creating thread).
unsafe impl Send for Task {}
// SAFETY: `ValueOps` is an immutable table of function pointers with static storage.
unsafe impl Sync for ValueOps {}

/// The message of a panic payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a Rust panic".to_string()
    }
}

/// The message of the error C++ sees when the runtime shuts down while a C++
/// process is blocked (hoare.hpp maps it to `hoare::Cancelled`).
pub(crate) const CANCELLED: &str = "hoare: cancelled: the runtime shut down";

/// Runs `f`, turning a panic into an error (which cxx turns into a C++ exception).
///
/// When the runtime shuts down it unwinds every process that is still blocked by
/// resuming it with a forced unwind (a panic whose payload is not a string). Such a
/// panic must not reach the cxx shim (it would abort), so it too becomes an error:
/// the C++ code above unwinds by the C++ exception `hoare::Cancelled` instead
/// (running its destructors), its task catches it and returns normally, which ends
/// the coroutine as the runtime wants.
fn guard<R>(f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) if p.is::<String>() || p.is::<&str>() => {
            Err(format!("hoare: Rust panic: {}", panic_message(&*p)))
        }
        Err(_) => Err(CANCELLED.to_string()),
    }
}

// ---------------------------------------------------------------- processes

/// A process spawned from C++.
pub struct ProcHandle(backend::Proc<cxx::UniquePtr<Task>>);

fn run_task(mut task: cxx::UniquePtr<Task>) -> cxx::UniquePtr<Task> {
    if let Some(t) = task.as_mut() {
        bridge::task_run(t);
    }
    task
}

fn run(task: cxx::UniquePtr<Task>, opts: &RunOpts) -> Result<cxx::UniquePtr<Task>, String> {
    let (workers, stack) = (opts.workers, opts.stack_size);
    guard(move || backend::run(workers, stack, move || run_task(task)))
}

fn spawn(task: cxx::UniquePtr<Task>, opts: &SpawnOpts) -> Result<Box<ProcHandle>, String> {
    guard(move || {
        let name = (!opts.name.is_empty()).then(|| opts.name.clone());
        backend::spawn_with(opts.pinned, opts.stack_size, opts.thread, name, move || {
            run_task(task)
        })
        .map(|p| Box::new(ProcHandle(p)))
    })
}

fn join(handle: Box<ProcHandle>) -> Result<cxx::UniquePtr<Task>, String> {
    guard(move || handle.0.join().map_err(backend::process_error))
}

fn yield_now() -> Result<(), String> {
    guard(|| {
        backend::yield_now();
        Ok(())
    })
}

fn sleep_ns(ns: u64) -> Result<(), String> {
    guard(|| {
        hoare_runtime::sleep_until(deadline_in(ns));
        Ok(())
    })
}

/// The longest wait the bridge asks the runtime for: C++ timeouts and sleeps go up
/// to `u64::MAX` nanoseconds (584 years; hoare.hpp saturates longer durations), and
/// a deadline that far ahead is not handled by the runtime's timers (an alt with
/// such a timeout never woke for a ready channel). A century is "for ever" too.
const FAR: Duration = Duration::from_secs(100 * 365 * 86400);

/// The instant `ns` nanoseconds from now, at most [`FAR`] ahead.
fn deadline_in(ns: u64) -> Instant {
    // At most a century ahead: `Instant + Duration` cannot overflow.
    Instant::now() + Duration::from_nanos(ns).min(FAR)
}

fn proc_id() -> u64 {
    backend::proc_id()
}

/// The running process's name (a thread's name outside a process) into `out`;
/// false if it has none.
fn proc_name(out: &mut String) -> bool {
    match hoare_runtime::name() {
        Some(n) => {
            *out = n;
            true
        }
        None => false,
    }
}

fn in_process() -> bool {
    backend::in_process()
}

fn default_workers() -> usize {
    hoare_runtime::default_workers()
}

// ---------------------------------------------------------------- channel elements

/// A C++ value in a channel of C++ values: a borrowed address (rendezvous: the
/// sender's own object) or an owned heap box (buffered channels).
///
/// A borrowed item carries the sender's `ack` flag: the sender does not leave its
/// send (and so keeps its object alive) until the receiver has moved the value out
/// and set the flag. A plain receive moves inside an extended rendezvous
/// (`recv_with`), so the flag is already set when the sender is released; an alt's
/// receive guard moves right after the alt committed, and the sender waits for the
/// flag for that short moment (yielding). It also carries the sender's exception
/// slot: a move constructor that throws is reported to both sides (the value
/// stays in the sender's object, C4).
pub struct RawItem {
    ptr: *mut u8,
    ops: *const ValueOps,
    owned: bool,
    ack: *const AtomicBool,
    /// The sender's exception slot (borrowed items only; null otherwise).
    sender_err: *mut ExcSlot,
}

// SAFETY: the pointee is a C++ value the sender gave up for the communication; only
// the receiver touches it (C++ process bodies and values must be movable between
// threads, as documented in hoare.hpp).
unsafe impl Send for RawItem {}

impl RawItem {
    /// The item for a send of the C++ value at `value`: borrowed on a rendezvous
    /// channel, boxed on a buffered one. `None` if the move into the box threw (the
    /// exception is in `err`, the sender's exception slot).
    ///
    /// # Safety
    /// `value` is a live C++ value of the type of `ops`; `ack` and `err` outlive the
    /// item's delivery (the sender waits for `ack`, see [`wait_ack`]).
    unsafe fn new(
        value: *mut u8,
        ops: *const ValueOps,
        buffered: bool,
        err: *mut ExcSlot,
        ack: *const AtomicBool,
    ) -> Option<Self> {
        if buffered {
            // SAFETY: the caller's contract.
            let b = unsafe { bridge::value_box(ops, value, err) };
            (!b.is_null()).then_some(RawItem {
                ptr: b,
                ops,
                owned: true,
                ack: std::ptr::null(),
                sender_err: std::ptr::null_mut(),
            })
        } else {
            Some(RawItem {
                ptr: value,
                ops,
                owned: false,
                ack,
                sender_err: err,
            })
        }
    }

    /// Moves the value into the storage at `dst` and releases the sender. A
    /// throwing move constructor is caught in C++ and stored in `err`, and in the
    /// sender's slot too if the sender waits (a borrowed item): its send fails with
    /// the same exception, and the value stays in its object. (A boxed value whose
    /// move throws is destroyed with its box: its sender is gone.)
    ///
    /// # Safety
    /// `dst` is storage for the channel's C++ type; `err` an exception slot.
    unsafe fn move_into(self, dst: *mut u8, err: *mut ExcSlot) {
        // SAFETY: `self.ptr` is live: the sender waits for `ack`, or the box is ours.
        let moved = unsafe { bridge::value_move(self.ops, dst, self.ptr, err) };
        if !moved && !self.sender_err.is_null() {
            // SAFETY: the sender keeps its slot alive until it sees `ack` (below),
            // and reads it only then.
            unsafe { bridge::exc_share(err, self.sender_err) };
        }
        if !self.ack.is_null() {
            // The last access to the sender's memory: it may leave at once.
            // SAFETY: the sender keeps `ack` alive until it sees it set.
            unsafe { (*self.ack).store(true, std::sync::atomic::Ordering::Release) };
        }
        // Dropping `self` frees an owned box (its moved-from value).
    }
}

/// Waits until the receiver of a borrowed item has moved the value out.
fn wait_ack(ack: &AtomicBool) {
    while !ack.load(std::sync::atomic::Ordering::Acquire) {
        yield_once();
    }
}

/// One yield, in a frame of its own: `hoare_runtime::yield_now` is `#[inline]` and
/// reads a thread-local; inlined into a loop, LLVM computes that thread-local's
/// address once before the loop (`__tls_get_addr` in PIC code such as this static
/// library) and the process, migrated by the first yield, would go on reading the
/// previous worker's state.
#[inline(never)]
fn yield_once() {
    backend::yield_now();
}

impl Drop for RawItem {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned item holds a box made by `value_box` for this `ops`
            // that nobody else frees.
            unsafe { bridge::value_drop_box(self.ops, self.ptr) }
        }
    }
}

/// A Rust element type of the channels C++ holds: how a received value reaches its
/// C++ storage, and how a value whose send failed goes back to its C++ object.
trait Carried: Sized + Send + 'static {
    /// Writes a received value into the C++ storage at `dst`.
    ///
    /// # Safety
    /// `dst` is storage for the channel's C++ type (`size` bytes for a by-value
    /// class, `size <= size_of::<Self>()`); `err` is an exception slot (for the move
    /// of a by-address value).
    unsafe fn deliver(self, dst: *mut u8, err: *mut ExcSlot, size: usize);

    /// A send that failed: gives the value back to the sender's C++ object (C4).
    ///
    /// # Safety
    /// `p` is the sender's live object the value was taken (or made) from.
    unsafe fn give_back(self, p: *mut u8);

    /// What an alt keeps of a send guard's value to give it back if another guard
    /// is chosen (`Unsent::Nothing` where the C++ object still holds it).
    fn unsent(key: SendKey<Self>, p: *mut u8) -> Unsent;

    /// A receive into `dst`: by default a plain receive, since the value is owned
    /// by the channel once sent and the writer need not wait for the write into
    /// `dst`.
    ///
    /// # Safety
    /// As for [`Carried::deliver`].
    unsafe fn recv_into(
        rx: &backend::Rx<Self>,
        dst: *mut u8,
        err: *mut ExcSlot,
        size: usize,
        w: Wait,
    ) -> Status {
        match rx.recv(w) {
            Ok(v) => {
                // SAFETY: the caller's contract.
                unsafe { v.deliver(dst, err, size) };
                Status::Ok
            }
            Err(f) => status_of(f),
        }
    }
}

/// The element types C++ sends by value (the natives and the by-value classes): the
/// value is taken out of the C++ object for the send.
trait ByValue: Carried {
    /// Takes the value out of the C++ object at `p`, leaving a valid object behind.
    ///
    /// # Safety
    /// `p` points to a live value of the channel's C++ type (`size` readable bytes
    /// for a by-value class, `size <= size_of::<Self>()`).
    unsafe fn take(p: *mut u8, size: usize) -> Self;
}

impl Carried for RawItem {
    unsafe fn deliver(self, dst: *mut u8, err: *mut ExcSlot, _size: usize) {
        // SAFETY: the caller's contract.
        unsafe { self.move_into(dst, err) }
    }

    unsafe fn give_back(mut self, p: *mut u8) {
        if self.owned {
            self.owned = false;
            // SAFETY: the box is ours again; `p` is the object it was made from.
            unsafe { bridge::value_unbox(self.ops, self.ptr, p) };
        }
    }

    fn unsent(key: SendKey<Self>, p: *mut u8) -> Unsent {
        Unsent::Raw(key, p)
    }

    /// The move runs inside an extended rendezvous: the sender's object is alive.
    unsafe fn recv_into(
        rx: &backend::Rx<Self>,
        dst: *mut u8,
        err: *mut ExcSlot,
        _size: usize,
        w: Wait,
    ) -> Status {
        // SAFETY: `dst` is storage for the channel's C++ type (the caller's contract).
        match rx.recv_with(w, |item| unsafe { item.move_into(dst, err) }) {
            Ok(_) => Status::Ok,
            Err(f) => status_of(f),
        }
    }
}

macro_rules! native_copy {
    ($($t:ty),*) => {$(
        impl Carried for $t {
            unsafe fn deliver(self, dst: *mut u8, _err: *mut ExcSlot, _size: usize) {
                // SAFETY: the caller's contract: `dst` is storage for a `Self`.
                unsafe { std::ptr::write(dst as *mut Self, self) }
            }
            // The C++ object was only read: it still holds the value.
            unsafe fn give_back(self, _p: *mut u8) {}
            fn unsent(_key: SendKey<Self>, _p: *mut u8) -> Unsent {
                Unsent::Nothing
            }
        }
        impl ByValue for $t {
            unsafe fn take(p: *mut u8, _size: usize) -> Self {
                // SAFETY: the caller's contract: `p` points to a live value.
                unsafe { std::ptr::read(p as *const Self) }
            }
        }
    )*};
}
native_copy!(i64, u64, f64);

macro_rules! native_move {
    ($($v:ident $t:ty),*) => {$(
        impl Carried for $t {
            unsafe fn deliver(self, dst: *mut u8, _err: *mut ExcSlot, _size: usize) {
                // SAFETY: the caller's contract: `dst` is storage for a `Self`.
                unsafe { std::ptr::write(dst as *mut Self, self) }
            }
            unsafe fn give_back(self, p: *mut u8) {
                // SAFETY: `p` points to a live `rust::String`/`rust::Vec`, which has
                // this type's layout.
                unsafe { *(p as *mut Self) = self }
            }
            fn unsent(key: SendKey<Self>, p: *mut u8) -> Unsent {
                Unsent::$v(key, p)
            }
        }
        impl ByValue for $t {
            unsafe fn take(p: *mut u8, _size: usize) -> Self {
                // SAFETY: as in `give_back`; an empty value is left behind.
                unsafe { std::mem::take(&mut *(p as *mut Self)) }
            }
        }
    )*};
}
native_move!(Str String, Bytes Vec<u8>);

/// A trivially copyable C++ value of `size <= 8 * N` bytes, carried by value.
impl<const N: usize> Carried for [u64; N] {
    unsafe fn deliver(self, dst: *mut u8, _err: *mut ExcSlot, size: usize) {
        // SAFETY: `dst` is storage for `size <= 8 * N` bytes (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(self.as_ptr() as *const u8, dst, size) }
    }
    // The caller's object was only read: it still holds the value (C4).
    unsafe fn give_back(self, _p: *mut u8) {}
    fn unsent(_key: SendKey<Self>, _p: *mut u8) -> Unsent {
        Unsent::Nothing
    }
}

impl<const N: usize> ByValue for [u64; N] {
    unsafe fn take(p: *mut u8, size: usize) -> Self {
        let mut a = [0u64; N];
        // SAFETY: `p` points to `size` readable bytes; `size <= 8 * N` (checked at
        // creation).
        unsafe { std::ptr::copy_nonoverlapping(p, a.as_mut_ptr() as *mut u8, size) };
        a
    }
}

// ---------------------------------------------------------------- channel ends

/// Calls `$m!(args; Raw RawItem; <natives>; <by-value classes>)`: every element
/// type of a C++-held channel, by its variant name (of `Elem`, `TxAny`, `RxAny`,
/// `SetAny`) and its Rust type. The one list every per-type match is made from.
macro_rules! elems {
    ($m:ident!($($args:tt)*)) => {
        $m! {
            $($args)*;
            Raw RawItem;
            I64 i64, U64 u64, F64 f64, Str String, Bytes Vec<u8>;
            Pod1 [u64; 1], Pod2 [u64; 2], Pod4 [u64; 4], Pod8 [u64; 8]
        }
    };
}

/// `match $e { $any::V(x) => $body, .. }` over every element type: `$body` is
/// compiled once per type (a match on the type tag, static calls, as if written out).
/// With `Raw => $raw`, the `Raw` arm (C++ values by address) is `$raw` instead.
macro_rules! dispatch {
    ($any:ident($x:ident) in $e:expr => $body:expr) => {
        dispatch!($any($x) in $e => $body, Raw => $body)
    };
    ($any:ident($x:ident) in $e:expr => $body:expr, Raw => $raw:expr) => {
        elems!(dispatch_arms!($any, $x, $e, $body, $raw))
    };
}

macro_rules! dispatch_arms {
    ($any:ident, $x:ident, $e:expr, $body:expr, $raw:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $e {
            $any::$rv($x) => $raw,
            $($any::$v($x) => $body,)*
            $($any::$pv($x) => $body,)*
        }
    };
}

/// `match $e { $any::V(_) => $m!(V), .. }`: for code that names the variant.
macro_rules! each_variant {
    ($any:ident, $e:expr, $m:ident; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $e {
            $any::$rv(_) => $m!($rv),
            $($any::$v(_) => $m!($v),)*
            $($any::$pv(_) => $m!($pv),)*
        }
    };
}

/// The enums of ends and receive sets, one variant per element type, with `From`
/// the typed end or set and (ends) `elem()`, the type tag C++ checks.
macro_rules! any_enums {
    (; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        any_enums!(@enum TxAny, Tx; $rv $rt, $($v $t,)* $($pv $pt),*);
        any_enums!(@enum RxAny, Rx; $rv $rt, $($v $t,)* $($pv $pt),*);
        any_enums!(@enum SetAny, SetOf; $rv $rt, $($v $t,)* $($pv $pt),*);
        any_enums!(@elem TxAny; $rv, $($v,)* $($pv),*);
        any_enums!(@elem RxAny; $rv, $($v,)* $($pv),*);
    };
    (@enum $any:ident, $w:ident; $($v:ident $t:ty),*) => {
        enum $any {
            $($v($w<$t>),)*
        }
        $(impl From<$w<$t>> for $any {
            fn from(x: $w<$t>) -> Self {
                $any::$v(x)
            }
        })*
    };
    (@elem $any:ident; $($v:ident),*) => {
        impl $any {
            /// The element type tag.
            fn elem(&self) -> Elem {
                match self {
                    $($any::$v(_) => Elem::$v,)*
                }
            }
        }
    };
}
elems!(any_enums!());

/// A sending end as C++ holds it.
pub struct ChanTx {
    inner: TxAny,
    ops: *const ValueOps,
    buffered: bool,
    /// Size in bytes of a `Pod*` element.
    size: usize,
}

/// A receiving end as C++ holds it.
pub struct ChanRx {
    inner: RxAny,
    ops: *const ValueOps,
    /// Whether the channel buffers (C++ values are then boxed, not borrowed).
    buffered: bool,
    /// Size in bytes of a `Pod*` element.
    size: usize,
}

// SAFETY: `ops` points to an immutable static table; the ends themselves are Send.
unsafe impl Send for ChanTx {}
// SAFETY: as above.
unsafe impl Send for ChanRx {}

fn buf_of(buffering: Buffering, capacity: usize) -> Result<Buf, String> {
    Ok(match buffering {
        Buffering::Rendezvous => Buf::Rendezvous,
        Buffering::Bounded if capacity == 0 => Buf::Rendezvous,
        Buffering::Bounded => Buf::Bounded(capacity),
        Buffering::Overwriting if capacity == 0 => {
            return Err("hoare: an overwriting buffer needs a capacity of at least 1".into())
        }
        Buffering::Overwriting => Buf::Overwriting(capacity),
        Buffering::Unbounded => Buf::Unbounded,
        _ => return Err("hoare: unknown buffering".into()),
    })
}

fn sharing_of(sharing: Sharing) -> Result<(bool, bool), String> {
    Ok(match sharing {
        Sharing::One2One => (false, false),
        Sharing::Any2One => (true, false),
        Sharing::One2Any => (false, true),
        Sharing::Any2Any => (true, true),
        _ => return Err("hoare: unknown sharing kind".into()),
    })
}

/// Both ends of a new channel of `T`.
fn new_ends<T>(ts: bool, rs: bool, buf: Buf) -> (TxAny, RxAny)
where
    TxAny: From<Tx<T>>,
    RxAny: From<Rx<T>>,
{
    let (t, r) = backend::channel::<T>(ts, rs, buf);
    (t.into(), r.into())
}

/// The ends of a new channel of the element type `elem` (`size`: the C++ type's).
macro_rules! ends_of {
    ($elem:expr, $size:expr, $ts:expr, $rs:expr, $buf:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $elem {
            Elem::$rv => new_ends::<$rt>($ts, $rs, $buf),
            $(Elem::$v => new_ends::<$t>($ts, $rs, $buf),)*
            $(Elem::$pv if $size <= std::mem::size_of::<$pt>() => new_ends::<$pt>($ts, $rs, $buf),)*
            $(Elem::$pv)|* => {
                return Err("hoare: element too large for its by-value class".into())
            }
            _ => return Err("hoare: unknown element type".into()),
        }
    };
}

unsafe fn chan_new(
    elem: Elem,
    ops: *const ValueOps,
    size: usize,
    sharing: Sharing,
    buffering: Buffering,
    capacity: usize,
) -> Result<ChanPair, String> {
    guard(|| {
        let buf = buf_of(buffering, capacity)?;
        let buffered = !matches!(buf, Buf::Rendezvous);
        let (ts, rs) = sharing_of(sharing)?;
        if elem == Elem::Raw && ops.is_null() {
            return Err("hoare: no value operations".into());
        }
        let (t, r) = elems!(ends_of!(elem, size, ts, rs, buf));
        Ok(ChanPair {
            tx: Box::new(ChanTx {
                inner: t,
                ops,
                buffered,
                size,
            }),
            rx: Box::new(ChanRx {
                inner: r,
                ops,
                buffered,
                size,
            }),
        })
    })
}

fn wait_of(mode: WaitMode, timeout_ns: u64) -> Wait {
    match mode {
        WaitMode::Try => Wait::Try,
        // Beyond a century: no deadline at all (see `FAR`).
        WaitMode::Timeout if Duration::from_nanos(timeout_ns) < FAR => {
            Wait::Until(Instant::now() + Duration::from_nanos(timeout_ns))
        }
        _ => Wait::Block,
    }
}

fn status_of(f: Fail) -> Status {
    match f {
        Fail::Poisoned => Status::Poisoned,
        Fail::Timeout => Status::Timeout,
        Fail::WouldBlock => Status::WouldBlock,
    }
}

/// Sends the value of the C++ object at `p` by value (a native or a trivially
/// copyable C++ value of `size` bytes).
///
/// # Safety
/// `p` points to a live value of the channel's C++ type.
unsafe fn send_value<T: ByValue>(tx: &backend::Tx<T>, p: *mut u8, size: usize, w: Wait) -> Status {
    // SAFETY: the caller's contract.
    let v = unsafe { T::take(p, size) };
    match tx.send(v, w) {
        Ok(()) => Status::Ok,
        Err((f, v)) => {
            // SAFETY: as above; C4: the value goes back to the sender.
            unsafe { v.give_back(p) };
            status_of(f)
        }
    }
}

/// Sends the C++ value at `value` by address (see [`RawItem`]).
///
/// # Safety
/// `value` is a live C++ value of the type `tx.ops` was made for; `err` an
/// exception slot.
unsafe fn send_raw(
    t: &backend::Tx<RawItem>,
    tx: &ChanTx,
    value: *mut u8,
    err: *mut ExcSlot,
    w: Wait,
) -> Status {
    let ack = AtomicBool::new(false);
    // SAFETY: the caller's contract; we wait for `ack` below before returning.
    let Some(item) = (unsafe { RawItem::new(value, tx.ops, tx.buffered, err, &ack) }) else {
        // The move into the box threw; the C++ caller rethrows from `err`.
        return Status::Ok;
    };
    let borrowed = !item.owned;
    match t.send(item, w) {
        Ok(()) => {
            if borrowed {
                wait_ack(&ack);
            }
            Status::Ok
        }
        Err((f, item)) => {
            // SAFETY: `value` is the object the item was made from.
            unsafe { item.give_back(value) };
            status_of(f)
        }
    }
}

unsafe fn tx_send(
    tx: &ChanTx,
    value: *mut u8,
    err: *mut ExcSlot,
    mode: WaitMode,
    timeout_ns: u64,
) -> Result<Status, String> {
    let w = wait_of(mode, timeout_ns);
    guard(|| {
        Ok(dispatch!(TxAny(t) in &tx.inner =>
            // SAFETY: the C++ caller passes the address of a live value of the
            // channel's type (`tx.size` bytes for a by-value class).
            unsafe { send_value(t, value, tx.size, w) },
            // SAFETY: as above; `err` is an exception slot.
            Raw => unsafe { send_raw(t, tx, value, err, w) }
        ))
    })
}

unsafe fn rx_recv(
    rx: &ChanRx,
    dst: *mut u8,
    err: *mut ExcSlot,
    mode: WaitMode,
    timeout_ns: u64,
) -> Result<Status, String> {
    let w = wait_of(mode, timeout_ns);
    guard(|| {
        Ok(dispatch!(RxAny(r) in &rx.inner =>
            // SAFETY: the C++ caller passes storage for a value of the channel's
            // type (`rx.size` bytes for a by-value class) and an exception slot.
            unsafe { Carried::recv_into(r, dst, err, rx.size, w) }
        ))
    })
}

/// Receives into `dst`, then runs `task` (the C++ handler, which reads `dst`) while
/// the writer stays blocked.
///
/// # Safety
/// As for [`Carried::deliver`].
unsafe fn recv_with_task<T: Carried>(
    rx: &backend::Rx<T>,
    dst: *mut u8,
    err: *mut ExcSlot,
    size: usize,
    task: std::pin::Pin<&mut Task>,
) -> Status {
    let r = rx.recv_with(Wait::Block, move |v| {
        // SAFETY: `dst` is storage for the element type (the caller's contract); the
        // sender's object is alive inside the extended rendezvous.
        unsafe { v.deliver(dst, err, size) };
        bridge::task_run(task)
    });
    match r {
        Ok(()) => Status::Ok,
        Err(f) => status_of(f),
    }
}

unsafe fn rx_recv_with(
    rx: &ChanRx,
    dst: *mut u8,
    err: *mut ExcSlot,
    task: std::pin::Pin<&mut Task>,
) -> Result<Status, String> {
    guard(move || {
        Ok(dispatch!(RxAny(r) in &rx.inner =>
            // SAFETY: the C++ caller's contract (storage for the element type).
            unsafe { recv_with_task(r, dst, err, rx.size, task) }
        ))
    })
}

fn tx_poison(tx: &ChanTx) -> Result<(), String> {
    guard(|| {
        dispatch!(TxAny(t) in &tx.inner => t.poison());
        Ok(())
    })
}

fn rx_poison(rx: &ChanRx) -> Result<(), String> {
    guard(|| {
        dispatch!(RxAny(r) in &rx.inner => r.poison());
        Ok(())
    })
}

const NOT_SHARED: &str = "hoare: this channel end cannot be shared (one2one side)";

fn tx_clone(tx: &ChanTx) -> Result<Box<ChanTx>, String> {
    guard(|| {
        let inner =
            dispatch!(TxAny(t) in &tx.inner => t.try_clone().map(TxAny::from)).ok_or(NOT_SHARED)?;
        Ok(Box::new(ChanTx {
            inner,
            ops: tx.ops,
            buffered: tx.buffered,
            size: tx.size,
        }))
    })
}

fn rx_clone(rx: &ChanRx) -> Result<Box<ChanRx>, String> {
    guard(|| {
        let inner =
            dispatch!(RxAny(r) in &rx.inner => r.try_clone().map(RxAny::from)).ok_or(NOT_SHARED)?;
        Ok(Box::new(ChanRx {
            inner,
            ops: rx.ops,
            buffered: rx.buffered,
            size: rx.size,
        }))
    })
}

fn tx_elem(tx: &ChanTx) -> Elem {
    tx.inner.elem()
}

fn rx_elem(rx: &ChanRx) -> Elem {
    rx.inner.elem()
}

// ---------------------------------------------------------------- alternation

/// A send guard's value that may have to go back to its C++ object.
enum Unsent {
    Nothing,
    Raw(SendKey<RawItem>, *mut u8),
    Str(SendKey<String>, *mut u8),
    Bytes(SendKey<Vec<u8>>, *mut u8),
}

/// A receive guard on `rx` that delivers the value into the C++ storage at `dst`.
///
/// # Safety
/// As for [`Carried::deliver`], until the alt has selected.
unsafe fn add_recv<'a, T: Carried>(
    alt: &mut Alt<'a, Status>,
    rx: &'a backend::Rx<T>,
    dst: *mut u8,
    err: *mut ExcSlot,
    size: usize,
) {
    let h = move |r: Result<T, RecvError>| match r {
        Ok(v) => {
            // SAFETY: the caller's contract.
            unsafe { v.deliver(dst, err, size) };
            Status::Ok
        }
        Err(_) => Status::Poisoned,
    };
    match rx {
        backend::Rx::One(r) => {
            alt.recv(r, h);
        }
        backend::Rx::Any(r) => {
            alt.recv(r, h);
        }
    }
}

/// A send guard offering `v` (taken or made from the C++ object at `p`, to which it
/// goes back if the channel is poisoned); returns what to give back if another
/// guard is chosen.
///
/// # Safety
/// `p` is the live C++ object `v` came from, until the alt has selected.
unsafe fn add_send<'a, T: Carried>(
    alt: &mut Alt<'a, Status>,
    tx: &'a backend::Tx<T>,
    v: T,
    p: *mut u8,
) -> Unsent {
    let h = move |r: Result<(), SendError<T>>| match r {
        Ok(()) => Status::Ok,
        Err(e) => {
            // SAFETY: the caller's contract.
            unsafe { e.into_inner().give_back(p) };
            Status::Poisoned
        }
    };
    let key = match tx {
        backend::Tx::One(t) => alt.send(t, v, h),
        backend::Tx::Any(t) => alt.send(t, v, h),
    };
    T::unsent(key, p)
}

/// Gives the value of a send guard that was not chosen back to its C++ object.
///
/// # Safety
/// `p` is the live C++ object the value came from.
unsafe fn give_back_unsent<T: Carried>(alt: &mut Alt<'_, Status>, key: SendKey<T>, p: *mut u8) {
    if let Some(v) = alt.take_unsent(key, 0) {
        // SAFETY: the caller's contract.
        unsafe { v.give_back(p) }
    }
}

unsafe fn alt_select(
    guards: &[AltGuard],
    fair: bool,
    fair_next: usize,
) -> Result<AltOutcome, String> {
    // SAFETY: forwarded from the C++ caller (hoare::Alt), whose ends, values and
    // slots live until this call returns.
    guard(|| unsafe { alt_impl(guards, fair, fair_next) })
}

/// Refuses, before the alt engine would panic (or alias an end), an alt that could
/// only wait for ever and one with two guards on one alting-barrier end.
fn check_guards(gs: &[AltGuard]) -> Result<(), String> {
    if !gs.iter().any(|g| g.enabled) {
        return Err("hoare: an alt with no enabled guard would wait for ever".into());
    }
    let is_barrier = |g: &&AltGuard| g.kind == AltKind::Barrier;
    for (i, g) in gs.iter().enumerate().filter(|(_, g)| is_barrier(g)) {
        if gs[..i].iter().filter(is_barrier).any(|h| h.end == g.end) {
            return Err("hoare: two barrier guards on one alting barrier end in one alt".into());
        }
    }
    Ok(())
}

/// # Safety
/// Every `end` points to a live end of the kind its guard says; every `value`
/// points to a live C++ value (send) or storage for one (receive) of the end's
/// element type; every `err` to an `ExcSlot`.
unsafe fn alt_impl(gs: &[AltGuard], fair: bool, next: usize) -> Result<AltOutcome, String> {
    check_guards(gs)?;
    // Fast path: only enabled receive guards on ends of one element type and one
    // sharing kind (a replicated receive, as in StressedAlt): one set of cases, no
    // boxed guard per end.
    if gs.len() > 1 && gs.iter().all(|g| g.kind == AltKind::Recv && g.enabled) {
        // SAFETY: the caller's contract.
        let rxs: Vec<&ChanRx> = gs
            .iter()
            .map(|g| unsafe { &*(g.end as *const ChanRx) })
            .collect();
        // SAFETY: the ends live until this call returns.
        if let Ok(mut set) = unsafe { build_set(&rxs) } {
            let mut f = Fair::new();
            let fp = if fair {
                f.chosen(next.wrapping_sub(1));
                Some(&mut f)
            } else {
                None
            };
            // SAFETY: each guard's `value` is storage for the element type.
            let (i, status) = unsafe {
                set_pick(&mut set, rxs[0].size, fp, |i| {
                    (gs[i].value as *mut u8, gs[i].err as *mut ExcSlot)
                })
            };
            return Ok(AltOutcome {
                guard: i,
                status,
                fair_next: if fair { f.next_start() } else { next },
            });
        }
    }
    // First the items of C++ values to send (a move into a box may throw).
    let acks: Vec<AtomicBool> = gs.iter().map(|_| AtomicBool::new(false)).collect();
    let mut items: Vec<Option<RawItem>> = gs.iter().map(|_| None).collect();
    for (i, g) in gs.iter().enumerate() {
        if g.kind != AltKind::Send || !g.enabled {
            continue;
        }
        // SAFETY: the caller's contract.
        let tx = unsafe { &*(g.end as *const ChanTx) };
        if let TxAny::Raw(_) = tx.inner {
            let (v, e) = (g.value as *mut u8, g.err as *mut ExcSlot);
            // SAFETY: the caller's contract; we wait for the ack before returning.
            match unsafe { RawItem::new(v, tx.ops, tx.buffered, e, &acks[i]) } {
                Some(it) => items[i] = Some(it),
                None => {
                    for (j, it) in items.iter_mut().enumerate() {
                        if let Some(it) = it.take() {
                            // SAFETY: made from guard j's value.
                            unsafe { it.give_back(gs[j].value as *mut u8) };
                        }
                    }
                    return Ok(AltOutcome {
                        guard: usize::MAX,
                        status: Status::Ok,
                        fair_next: next,
                    });
                }
            }
        }
    }

    let mut unsent: Vec<Unsent> = Vec::with_capacity(gs.len());
    let mut alt: Alt<'_, Status> = Alt::new();
    for (i, g) in gs.iter().enumerate() {
        let (value, err) = (g.value as *mut u8, g.err as *mut ExcSlot);
        alt.when(g.enabled);
        match g.kind {
            AltKind::Recv => {
                // SAFETY: the caller's contract.
                let rx = unsafe { &*(g.end as *const ChanRx) };
                dispatch!(RxAny(r) in &rx.inner =>
                    // SAFETY: `value` is storage for the element type, `err` an
                    // exception slot (the caller's contract), until select returns.
                    unsafe { add_recv(&mut alt, r, value, err, rx.size) }
                );
                unsent.push(Unsent::Nothing);
            }
            AltKind::Send if !g.enabled => {
                // A disabled placeholder keeps the indices; the value is not touched.
                alt.skip(|| Status::Ok);
                unsent.push(Unsent::Nothing);
            }
            AltKind::Send => {
                // SAFETY: the caller's contract.
                let tx = unsafe { &*(g.end as *const ChanTx) };
                let u = dispatch!(TxAny(t) in &tx.inner => {
                        // SAFETY: `value` is a live value of the element type (the
                        // caller's contract; `tx.size` bytes for a by-value class).
                        let v = unsafe { ByValue::take(value, tx.size) };
                        // SAFETY: `v` came from `value`, which outlives the alt.
                        unsafe { add_send(&mut alt, t, v, value) }
                    },
                    Raw => {
                        let it = items[i].take().expect("hoare: alt send item");
                        // SAFETY: the item was made from `value`, which outlives the
                        // alt.
                        unsafe { add_send(&mut alt, t, it, value) }
                    }
                );
                unsent.push(u);
            }
            AltKind::Timeout => {
                alt.timeout(deadline_in(g.timeout_ns), || Status::Timeout);
                unsent.push(Unsent::Nothing);
            }
            AltKind::Skip => {
                alt.skip(|| Status::Ok);
                unsent.push(Unsent::Nothing);
            }
            AltKind::Barrier => {
                // SAFETY: the caller's contract: a live end that only this alt uses
                // while it runs (hoare::Alt takes it by non-const reference).
                let e = unsafe { &mut *(g.end as *mut AltingBarrierEndHandle) };
                alt.barrier(&mut e.0, || Status::Ok);
                unsent.push(Unsent::Nothing);
            }
            _ => return Err("hoare: unknown alt guard kind".into()),
        }
    }

    let mut fair_next = next;
    let fired = if fair {
        let mut f = Fair::new();
        f.chosen(next.wrapping_sub(1));
        let fired = alt.select_fair(&mut f);
        fair_next = f.next_start();
        fired
    } else {
        alt.select()
    };
    // Values of the send guards that were not chosen go back to their objects.
    for (i, u) in unsent.into_iter().enumerate() {
        if i == fired.guard {
            continue;
        }
        // SAFETY: each value pointer is the C++ object its item was made from.
        match u {
            Unsent::Nothing => {}
            Unsent::Raw(k, v) => unsafe { give_back_unsent(&mut alt, k, v) },
            Unsent::Str(k, v) => unsafe { give_back_unsent(&mut alt, k, v) },
            Unsent::Bytes(k, v) => unsafe { give_back_unsent(&mut alt, k, v) },
        }
    }
    drop(alt);
    // A C++ value lent to a receiver: wait until it has been moved out.
    let g = &gs[fired.guard];
    if g.kind == AltKind::Send && fired.output == Status::Ok {
        // SAFETY: the caller's contract.
        let tx = unsafe { &*(g.end as *const ChanTx) };
        if matches!(tx.inner, TxAny::Raw(_)) && !tx.buffered {
            wait_ack(&acks[fired.guard]);
        }
    }
    Ok(AltOutcome {
        guard: fired.guard,
        status: fired.output,
        fair_next,
    })
}

// ---------------------------------------------------------------- receive sets

/// A `RecvAny` over ends of one sharing kind.
enum SetOf<T: 'static> {
    One(hoare_core::alt::RecvAny<'static, T>),
    Any(hoare_core::alt::RecvAny<'static, T>),
}

impl<T: 'static> SetOf<T> {
    /// # Safety
    /// The ends outlive the set (the C++ `RecvAny`'s contract).
    unsafe fn new(rxs: Vec<&backend::Rx<T>>) -> Result<Self, String> {
        // SAFETY: the caller's contract: the set never outlives the ends.
        let rxs: Vec<&'static backend::Rx<T>> = unsafe { std::mem::transmute(rxs) };
        if rxs.iter().all(|r| matches!(r, backend::Rx::One(_))) {
            Ok(SetOf::One(hoare_core::alt::RecvAny::from_ends(
                // An exact-size iterator: the cases are allocated once.
                rxs.into_iter().map(|r| match r {
                    backend::Rx::One(r) => r,
                    backend::Rx::Any(_) => unreachable!("checked above"),
                }),
            )))
        } else if rxs.iter().all(|r| matches!(r, backend::Rx::Any(_))) {
            Ok(SetOf::Any(hoare_core::alt::RecvAny::from_ends(
                rxs.into_iter().map(|r| match r {
                    backend::Rx::Any(r) => r,
                    backend::Rx::One(_) => unreachable!("checked above"),
                }),
            )))
        } else {
            Err("hoare: a RecvAny needs ends of one sharing kind".into())
        }
    }

    fn select(&mut self, fair: Option<&mut Fair>) -> (usize, Result<T, RecvError>) {
        let set = match self {
            SetOf::One(s) | SetOf::Any(s) => s,
        };
        match fair {
            Some(f) => set.select_fair(f),
            None => set.select(),
        }
    }
}

/// A replicated receive guard as C++ holds it (`hoare::RecvAny<T>`).
pub struct RecvSet {
    inner: SetAny,
    /// Size in bytes of a `Pod*` element.
    size: usize,
    fair: Fair,
}

/// The set of receive guards over `rxs` (non-empty; one element type and one
/// sharing kind, or an error).
///
/// # Safety
/// The ends outlive the set.
unsafe fn build_set(rxs: &[&ChanRx]) -> Result<SetAny, String> {
    let first = rxs
        .first()
        .ok_or("hoare: a RecvAny over no ends would wait for ever")?;
    if rxs
        .iter()
        .any(|r| std::mem::discriminant(&r.inner) != std::mem::discriminant(&first.inner))
    {
        return Err("hoare: a RecvAny needs ends of one element type".into());
    }
    macro_rules! set {
        ($v:ident) => {{
            let v: Vec<_> = rxs
                .iter()
                .map(|r| match &r.inner {
                    RxAny::$v(x) => x,
                    _ => unreachable!("checked above"),
                })
                .collect();
            // SAFETY: forwarded (the ends outlive the set).
            SetAny::$v(unsafe { SetOf::new(v) }?)
        }};
    }
    Ok(elems!(each_variant!(RxAny, &first.inner, set)))
}

/// Selects on `set`; `out(i)` gives the storage (and exception slot) for the value
/// of end `i`.
///
/// # Safety
/// `out(i)` is storage for the element type (`size` bytes for a by-value class).
unsafe fn pick<T: Carried>(
    set: &mut SetOf<T>,
    size: usize,
    fair: Option<&mut Fair>,
    out: impl Fn(usize) -> (*mut u8, *mut ExcSlot),
) -> (usize, Status) {
    let (i, r) = set.select(fair);
    let status = match r {
        Ok(v) => {
            let (dst, err) = out(i);
            // SAFETY: the caller's contract.
            unsafe { v.deliver(dst, err, size) };
            Status::Ok
        }
        Err(_) => Status::Poisoned,
    };
    (i, status)
}

/// [`pick`] on a set of any element type.
///
/// # Safety
/// As for [`pick`].
unsafe fn set_pick(
    set: &mut SetAny,
    size: usize,
    fair: Option<&mut Fair>,
    out: impl Fn(usize) -> (*mut u8, *mut ExcSlot),
) -> (usize, Status) {
    // SAFETY: the caller's contract.
    dispatch!(SetAny(s) in set => unsafe { pick(s, size, fair, out) })
}

unsafe fn recv_set_new(ends: &[usize]) -> Result<Box<RecvSet>, String> {
    guard(|| {
        // SAFETY: C++ passes addresses of live `ChanRx` boxes that outlive the set.
        let rxs: Vec<&ChanRx> = ends
            .iter()
            .map(|&e| unsafe { &*(e as *const ChanRx) })
            .collect();
        // SAFETY: as above.
        let inner = unsafe { build_set(&rxs) }?;
        Ok(Box::new(RecvSet {
            inner,
            size: rxs[0].size,
            fair: Fair::new(),
        }))
    })
}

unsafe fn recv_set_select(
    set: &mut RecvSet,
    dst: *mut u8,
    err: *mut ExcSlot,
    fair: bool,
    fair_next: usize,
) -> Result<AltOutcome, String> {
    guard(|| {
        let f = if fair {
            set.fair.chosen(fair_next.wrapping_sub(1));
            Some(&mut set.fair)
        } else {
            None
        };
        // SAFETY: `dst` is storage for the element type (the caller's contract).
        let (i, status) = unsafe { set_pick(&mut set.inner, set.size, f, |_| (dst, err)) };
        Ok(AltOutcome {
            guard: i,
            status,
            fair_next: if fair {
                set.fair.next_start()
            } else {
                fair_next
            },
        })
    })
}

// ---------------------------------------------------------------- barriers

/// A barrier as C++ holds it.
pub struct BarrierHandle(pub hoare_core::barrier::Barrier);
/// An enrolled barrier end as C++ holds it (dropping it resigns).
pub struct BarrierEndHandle(pub hoare_core::barrier::BarrierEnd);

fn barrier_new() -> Box<BarrierHandle> {
    Box::new(BarrierHandle(hoare_core::barrier::Barrier::new()))
}

fn barrier_clone(b: &BarrierHandle) -> Box<BarrierHandle> {
    Box::new(BarrierHandle(b.0.clone()))
}

fn barrier_enroll(b: &BarrierHandle) -> Result<Box<BarrierEndHandle>, String> {
    guard(|| Ok(Box::new(BarrierEndHandle(b.0.enroll()))))
}

fn barrier_enrolled(b: &BarrierHandle) -> usize {
    b.0.enrolled()
}

fn barrier_rounds(b: &BarrierHandle) -> Result<u64, String> {
    guard(|| Ok(b.0.rounds()))
}

fn barrier_same(a: &BarrierHandle, b: &BarrierHandle) -> bool {
    a.0.same(&b.0)
}

fn barrier_sync(e: &mut BarrierEndHandle) -> Result<(), String> {
    guard(|| {
        e.0.sync();
        Ok(())
    })
}

fn barrier_of(e: &BarrierEndHandle) -> Box<BarrierHandle> {
    Box::new(BarrierHandle(e.0.barrier()))
}

// ---------------------------------------------------------------- alting barriers

/// An alting barrier as C++ holds it.
pub struct AltingBarrierHandle(pub hoare_core::alt::AltingBarrier);
/// An enrolled alting-barrier end as C++ holds it (dropping it resigns).
pub struct AltingBarrierEndHandle(pub hoare_core::alt::AltingBarrierEnd);

fn alting_barrier_new() -> Box<AltingBarrierHandle> {
    Box::new(AltingBarrierHandle(hoare_core::alt::AltingBarrier::new()))
}

fn alting_barrier_clone(b: &AltingBarrierHandle) -> Box<AltingBarrierHandle> {
    Box::new(AltingBarrierHandle(b.0.clone()))
}

fn alting_barrier_enroll(b: &AltingBarrierHandle) -> Result<Box<AltingBarrierEndHandle>, String> {
    guard(|| Ok(Box::new(AltingBarrierEndHandle(b.0.enroll()))))
}

fn alting_barrier_enrolled(b: &AltingBarrierHandle) -> Result<usize, String> {
    guard(|| Ok(b.0.enrolled()))
}

fn alting_barrier_rounds(b: &AltingBarrierHandle) -> Result<u64, String> {
    guard(|| Ok(b.0.rounds()))
}

fn alting_barrier_sync(e: &mut AltingBarrierEndHandle) -> Result<(), String> {
    guard(|| {
        e.0.sync();
        Ok(())
    })
}

fn alting_barrier_of(e: &AltingBarrierEndHandle) -> Box<AltingBarrierHandle> {
    Box::new(AltingBarrierHandle(e.0.barrier()))
}

// ---------------------------------------------------------------- Rust-side access

/// Conversions between the C++-held ends and Rust channel ends, for Rust code that
/// exchanges channels with C++ (SPEC X3).
pub trait NativeElem: Sized + Send + 'static {
    /// Unwraps a C++-held sending end carrying `Self`.
    fn tx_from(tx: ChanTx) -> Result<backend::Tx<Self>, ChanTx>;
    /// Unwraps a C++-held receiving end carrying `Self`.
    fn rx_from(rx: ChanRx) -> Result<backend::Rx<Self>, ChanRx>;
    /// Wraps a Rust sending end for C++.
    fn tx_into(tx: backend::Tx<Self>) -> ChanTx;
    /// Wraps a Rust receiving end for C++.
    fn rx_into(rx: backend::Rx<Self>) -> ChanRx;
}

macro_rules! native_elems {
    (; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {$(
        impl NativeElem for $t {
            fn tx_from(tx: ChanTx) -> Result<backend::Tx<Self>, ChanTx> {
                match tx.inner {
                    TxAny::$v(t) => Ok(t),
                    inner => Err(ChanTx { inner, ..tx }),
                }
            }
            fn rx_from(rx: ChanRx) -> Result<backend::Rx<Self>, ChanRx> {
                match rx.inner {
                    RxAny::$v(r) => Ok(r),
                    inner => Err(ChanRx { inner, ..rx }),
                }
            }
            fn tx_into(tx: backend::Tx<Self>) -> ChanTx {
                ChanTx {
                    inner: TxAny::$v(tx),
                    ops: std::ptr::null(),
                    buffered: false,
                    size: std::mem::size_of::<Self>(),
                }
            }
            fn rx_into(rx: backend::Rx<Self>) -> ChanRx {
                ChanRx {
                    inner: RxAny::$v(rx),
                    ops: std::ptr::null(),
                    buffered: false,
                    size: std::mem::size_of::<Self>(),
                }
            }
        }
    )*};
}
elems!(native_elems!());

fn wrong_type(what: &str) -> String {
    format!("hoare: channel end has the wrong element type (expected {what})")
}

// ---------------------------------------------------------------- mixed-network demo

/// A Rust process that doubles every integer from `rx` onto `tx` until poison, then
/// poisons `tx`.
fn rust_doubler(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<(), String> {
    guard(move || {
        let rx = i64::rx_from(*rx).map_err(|_| wrong_type("i64"))?;
        let tx = i64::tx_from(*tx).map_err(|_| wrong_type("i64"))?;
        let _detached = backend::spawn(false, 0, move || {
            while let Ok(v) = rx.recv(Wait::Block) {
                if tx.send(v * 2, Wait::Block).is_err() {
                    break;
                }
            }
            rx.poison();
            tx.poison();
        })?;
        Ok(())
    })
}

/// A Rust process that upper-cases every string from `rx` onto `tx`.
fn rust_upper(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<(), String> {
    guard(move || {
        let rx = String::rx_from(*rx).map_err(|_| wrong_type("String"))?;
        let tx = String::tx_from(*tx).map_err(|_| wrong_type("String"))?;
        let _detached = backend::spawn(false, 0, move || {
            while let Ok(s) = rx.recv(Wait::Block) {
                if tx.send(s.to_uppercase(), Wait::Block).is_err() {
                    break;
                }
            }
            rx.poison();
            tx.poison();
        })?;
        Ok(())
    })
}

/// A Rust process that reverses every byte buffer from `rx` onto `tx`.
fn rust_reverse_bytes(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<(), String> {
    guard(move || {
        let rx = <Vec<u8>>::rx_from(*rx).map_err(|_| wrong_type("Vec<u8>"))?;
        let tx = <Vec<u8>>::tx_from(*tx).map_err(|_| wrong_type("Vec<u8>"))?;
        let _detached = backend::spawn(false, 0, move || {
            while let Ok(mut b) = rx.recv(Wait::Block) {
                b.reverse();
                if tx.send(b, Wait::Block).is_err() {
                    break;
                }
            }
            rx.poison();
            tx.poison();
        })?;
        Ok(())
    })
}

/// A Rust process that sends `0..n` on a channel it made, then poisons it; returns
/// the reading end to C++.
fn rust_counter(n: i64) -> Result<Box<ChanRx>, String> {
    guard(move || {
        let (tx, rx) = backend::channel::<i64>(false, false, Buf::Rendezvous);
        let _detached = backend::spawn(false, 0, move || {
            for i in 0..n {
                if tx.send(i, Wait::Block).is_err() {
                    return;
                }
            }
            tx.poison();
        })?;
        Ok(Box::new(i64::rx_into(rx)))
    })
}

/// Sums the integers from `rx` until poison, in the calling process.
fn rust_sum(rx: Box<ChanRx>) -> Result<i64, String> {
    guard(move || {
        let rx = i64::rx_from(*rx).map_err(|_| wrong_type("i64"))?;
        let mut s = 0;
        while let Ok(v) = rx.recv(Wait::Block) {
            s += v;
        }
        Ok(s)
    })
}

/// CommsTime written in Rust against the Rust API (prefix, delta (seq), succ, with
/// the consumer in the calling process), for comparing with the C++ version in
/// one binary and one runtime: returns ns per communication.
fn rust_commstime(iters: i64) -> Result<f64, String> {
    use hoare_core::chan::one2one;
    guard(move || {
        backend::need_runtime()?;
        let (a_tx, a_rx) = one2one::<i64>();
        let (b_tx, b_rx) = one2one::<i64>();
        let (c_tx, c_rx) = one2one::<i64>();
        let (d_tx, d_rx) = one2one::<i64>();
        let prefix = hoare_runtime::spawn(move || {
            if a_tx.send(0).is_err() {
                return;
            }
            while let Ok(v) = c_rx.recv() {
                if a_tx.send(v).is_err() {
                    break;
                }
            }
        });
        let delta = hoare_runtime::spawn(move || {
            while let Ok(v) = a_rx.recv() {
                if b_tx.send(v).is_err() || d_tx.send(v).is_err() {
                    break;
                }
            }
        });
        let succ = hoare_runtime::spawn(move || {
            while let Ok(v) = b_rx.recv() {
                if c_tx.send(v + 1).is_err() {
                    break;
                }
            }
        });
        let _ = d_rx.recv();
        let t0 = Instant::now();
        for i in 1..=iters {
            match d_rx.recv() {
                Ok(v) if v == i => {}
                other => return Err(format!("rust commstime: expected {i}, got {other:?}")),
            }
        }
        let ns = t0.elapsed().as_nanos() as f64 / (4.0 * iters.max(1) as f64);
        drop(d_rx); // poisons the ring
        for h in [prefix, delta, succ] {
            h.join().map_err(backend::process_error)?;
        }
        Ok(ns)
    })
}

// ---------------------------------------------------------------- test hooks

fn test_panic(msg: &str) -> Result<(), String> {
    guard(|| panic!("{msg}"))
}

fn test_spawn_panicking() -> Result<Box<ProcHandle>, String> {
    guard(|| {
        let p = backend::spawn(false, 0, || -> cxx::UniquePtr<Task> {
            panic!("a Rust process panicked")
        })?;
        Ok(Box::new(ProcHandle(p)))
    })
}
