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
//! * **Failures.** Every `extern "Rust"` function that can fail returns `Result` and
//!   runs under `catch_unwind`: a Rust panic becomes a C++ exception (cxx maps `Err`
//!   to `rust::Error`), never undefined behaviour.

mod backend;

use backend::{Buf, Fail, Wait};
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
        if opts.thread && opts.pinned {
            return Err("hoare: a process on its own thread cannot also be pinned".into());
        }
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
        backend::sleep_for(Duration::from_nanos(ns));
        Ok(())
    })
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
/// flag for that short moment (yielding).
pub struct RawItem {
    ptr: *mut u8,
    ops: *const ValueOps,
    owned: bool,
    ack: *const AtomicBool,
}

// SAFETY: the pointee is a C++ value the sender gave up for the communication; only
// the receiver touches it (C++ process bodies and values must be movable between
// threads, as documented in hoare.hpp).
unsafe impl Send for RawItem {}

impl RawItem {
    /// The item for a send of the C++ value at `value`: borrowed on a rendezvous
    /// channel, boxed on a buffered one. `None` if the move into the box threw (the
    /// exception is in `err`).
    ///
    /// # Safety
    /// `value` is a live C++ value of the type of `ops`; `ack` outlives the item's
    /// delivery (the sender waits for it, see [`wait_ack`]).
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
            })
        } else {
            Some(RawItem {
                ptr: value,
                ops,
                owned: false,
                ack,
            })
        }
    }

    /// Moves the value into the storage at `dst` and releases the sender. A
    /// throwing move constructor is caught in C++ and stored in `err`.
    ///
    /// # Safety
    /// `dst` is storage for the channel's C++ type.
    unsafe fn move_into(self, dst: *mut u8, err: *mut ExcSlot) {
        // SAFETY: `self.ptr` is live: the sender waits for `ack`, or the box is ours.
        unsafe { bridge::value_move(self.ops, dst, self.ptr, err) };
        if !self.ack.is_null() {
            // The last access to the sender's memory: it may leave at once.
            // SAFETY: the sender keeps `ack` alive until it sees it set.
            unsafe { (*self.ack).store(true, std::sync::atomic::Ordering::Release) };
        }
        // Dropping `self` frees an owned box (its moved-from value).
    }

    /// A send that failed: gives the value back to the sender's object (C4).
    ///
    /// # Safety
    /// `value` is the sender's live object this item was made from.
    unsafe fn give_back(mut self, value: *mut u8) {
        if self.owned {
            self.owned = false;
            // SAFETY: the box is ours again.
            unsafe { bridge::value_unbox(self.ops, self.ptr, value) };
        }
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

/// A Rust type that a channel can carry between C++ and Rust, moved through an
/// address on the C++ side.
trait Native: Sized + Send + 'static {
    /// Takes the value out of the C++ object at `p`, leaving a valid object behind.
    unsafe fn take(p: *mut u8) -> Self;
    /// Gives a value back to the C++ object at `p` (a failed send).
    unsafe fn put_back(self, p: *mut u8);
    /// Writes the value into uninitialised storage at `dst`.
    unsafe fn write_to(self, dst: *mut u8) {
        // SAFETY: the caller's contract: `dst` is storage for a `Self`.
        unsafe { std::ptr::write(dst as *mut Self, self) }
    }
}

macro_rules! native_copy {
    ($($t:ty),*) => {$(
        impl Native for $t {
            unsafe fn take(p: *mut u8) -> Self {
                // SAFETY: the caller's contract: `p` points to a live value.
                unsafe { std::ptr::read(p as *const Self) }
            }
            unsafe fn put_back(self, _p: *mut u8) {}
        }
    )*};
}
native_copy!(i64, u64, f64);

macro_rules! native_move {
    ($($t:ty),*) => {$(
        impl Native for $t {
            unsafe fn take(p: *mut u8) -> Self {
                // SAFETY: `p` points to a live `rust::String`/`rust::Vec`, which has
                // this type's layout; an empty value is left behind.
                unsafe { std::mem::take(&mut *(p as *mut Self)) }
            }
            unsafe fn put_back(self, p: *mut u8) {
                // SAFETY: as in `take`.
                unsafe { *(p as *mut Self) = self }
            }
        }
    )*};
}
native_move!(String, Vec<u8>);

// ---------------------------------------------------------------- channel ends

enum TxAny {
    Raw(backend::Tx<RawItem>),
    I64(backend::Tx<i64>),
    U64(backend::Tx<u64>),
    F64(backend::Tx<f64>),
    Str(backend::Tx<String>),
    Bytes(backend::Tx<Vec<u8>>),
    Pod1(backend::Tx<[u64; 1]>),
    Pod2(backend::Tx<[u64; 2]>),
    Pod4(backend::Tx<[u64; 4]>),
    Pod8(backend::Tx<[u64; 8]>),
}

enum RxAny {
    Raw(backend::Rx<RawItem>),
    I64(backend::Rx<i64>),
    U64(backend::Rx<u64>),
    F64(backend::Rx<f64>),
    Str(backend::Rx<String>),
    Bytes(backend::Rx<Vec<u8>>),
    Pod1(backend::Rx<[u64; 1]>),
    Pod2(backend::Rx<[u64; 2]>),
    Pod4(backend::Rx<[u64; 4]>),
    Pod8(backend::Rx<[u64; 8]>),
}

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

macro_rules! each_elem {
    ($m:ident) => {
        $m!(I64, i64);
        $m!(U64, u64);
        $m!(F64, f64);
        $m!(Str, String);
        $m!(Bytes, Vec<u8>);
    };
}

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
        macro_rules! mk {
            ($v:ident) => {{
                let (t, r) = backend::channel(ts, rs, buf);
                (TxAny::$v(t), RxAny::$v(r))
            }};
        }
        let (t, r) = match elem {
            Elem::Raw if ops.is_null() => return Err("hoare: no value operations".into()),
            Elem::Raw => mk!(Raw),
            Elem::I64 => mk!(I64),
            Elem::U64 => mk!(U64),
            Elem::F64 => mk!(F64),
            Elem::Str => mk!(Str),
            Elem::Bytes => mk!(Bytes),
            Elem::Pod1 if size <= 8 => mk!(Pod1),
            Elem::Pod2 if size <= 16 => mk!(Pod2),
            Elem::Pod4 if size <= 32 => mk!(Pod4),
            Elem::Pod8 if size <= 64 => mk!(Pod8),
            Elem::Pod1 | Elem::Pod2 | Elem::Pod4 | Elem::Pod8 => {
                return Err("hoare: element too large for its by-value class".into())
            }
            _ => return Err("hoare: unknown element type".into()),
        };
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
        WaitMode::Timeout => match Instant::now().checked_add(Duration::from_nanos(timeout_ns)) {
            Some(d) => Wait::Until(d),
            None => Wait::Block,
        },
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

unsafe fn send_native<T: Native>(tx: &backend::Tx<T>, p: *mut u8, w: Wait) -> Status {
    // SAFETY: the C++ caller passes the address of a live value of the channel's type.
    let v = unsafe { T::take(p) };
    match tx.send(v, w) {
        Ok(()) => Status::Ok,
        Err((f, v)) => {
            // SAFETY: as above; C4: the value goes back to the sender.
            unsafe { v.put_back(p) };
            status_of(f)
        }
    }
}

unsafe fn recv_native<T: Native>(rx: &backend::Rx<T>, dst: *mut u8, w: Wait) -> Status {
    // A plain receive: the value is owned by the channel once sent, so the writer
    // need not wait for the write into `dst`.
    match rx.recv(w) {
        // SAFETY: the C++ caller passes storage for a value of the channel's type.
        Ok(v) => {
            unsafe { v.write_to(dst) };
            Status::Ok
        }
        Err(f) => status_of(f),
    }
}

/// Sends the `size` bytes of a trivially copyable C++ value by value.
unsafe fn send_pod<const N: usize>(
    tx: &backend::Tx<[u64; N]>,
    p: *mut u8,
    size: usize,
    w: Wait,
) -> Status {
    let mut a = [0u64; N];
    // SAFETY: `p` points to `size` readable bytes; `size <= 8 * N` (checked at
    // creation).
    unsafe { std::ptr::copy_nonoverlapping(p, a.as_mut_ptr() as *mut u8, size) };
    match tx.send(a, w) {
        Ok(()) => Status::Ok,
        // The caller's object was only read: it still holds the value (C4).
        Err((f, _)) => status_of(f),
    }
}

/// Receives a trivially copyable C++ value of `size` bytes into `dst`.
unsafe fn recv_pod<const N: usize>(
    rx: &backend::Rx<[u64; N]>,
    dst: *mut u8,
    size: usize,
    w: Wait,
) -> Status {
    match rx.recv(w) {
        Ok(a) => {
            // SAFETY: `dst` is storage for `size <= 8 * N` bytes.
            unsafe { std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size) };
            Status::Ok
        }
        Err(f) => status_of(f),
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
        macro_rules! native {
            ($v:ident, $t:ty) => {
                if let TxAny::$v(t) = &tx.inner {
                    // SAFETY: the C++ caller's contract (see `send_native`).
                    return Ok(unsafe { send_native(t, value, w) });
                }
            };
        }
        each_elem!(native);
        macro_rules! pod {
            ($($v:ident),*) => {$(
                if let TxAny::$v(t) = &tx.inner {
                    // SAFETY: `value` points to a trivially copyable C++ value of
                    // `tx.size` bytes.
                    return Ok(unsafe { send_pod(t, value, tx.size, w) });
                }
            )*};
        }
        pod!(Pod1, Pod2, Pod4, Pod8);
        let TxAny::Raw(t) = &tx.inner else {
            unreachable!()
        };
        let ack = AtomicBool::new(false);
        // SAFETY: `value` is a live C++ value of the type `ops` was made for; we wait
        // for `ack` below before returning.
        let Some(item) = (unsafe { RawItem::new(value, tx.ops, tx.buffered, err, &ack) }) else {
            // The move into the box threw; the C++ caller rethrows from `err`.
            return Ok(Status::Ok);
        };
        let borrowed = !item.owned;
        Ok(match t.send(item, w) {
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
        })
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
        macro_rules! native {
            ($v:ident, $t:ty) => {
                if let RxAny::$v(r) = &rx.inner {
                    // SAFETY: the C++ caller's contract (see `recv_native`).
                    return Ok(unsafe { recv_native(r, dst, w) });
                }
            };
        }
        each_elem!(native);
        macro_rules! pod {
            ($($v:ident),*) => {$(
                if let RxAny::$v(r) = &rx.inner {
                    // SAFETY: `dst` is storage for a trivially copyable C++ value of
                    // `rx.size` bytes.
                    return Ok(unsafe { recv_pod(r, dst, rx.size, w) });
                }
            )*};
        }
        pod!(Pod1, Pod2, Pod4, Pod8);
        let RxAny::Raw(r) = &rx.inner else {
            unreachable!()
        };
        // The move runs inside the extended rendezvous: the sender's object is alive.
        // SAFETY: `dst` is storage for the channel's C++ type.
        match r.recv_with(w, |item| unsafe { item.move_into(dst, err) }) {
            Ok(_) => Ok(Status::Ok),
            Err(f) => Ok(status_of(f)),
        }
    })
}

unsafe fn rx_recv_with(
    rx: &ChanRx,
    dst: *mut u8,
    err: *mut ExcSlot,
    task: std::pin::Pin<&mut Task>,
) -> Result<Status, String> {
    guard(move || {
        let size = rx.size;
        macro_rules! with {
            ($r:expr, $v:ident => $write:expr) => {
                match $r.recv_with(Wait::Block, move |$v| {
                    // SAFETY: `dst` is storage for the element type (the C++
                    // caller's contract); the sender's object is alive inside the
                    // extended rendezvous.
                    unsafe { $write };
                    bridge::task_run(task)
                }) {
                    Ok(()) => Ok(Status::Ok),
                    Err(f) => Ok(status_of(f)),
                }
            };
        }
        match &rx.inner {
            RxAny::Raw(r) => with!(r, it => it.move_into(dst, err)),
            RxAny::I64(r) => with!(r, v => v.write_to(dst)),
            RxAny::U64(r) => with!(r, v => v.write_to(dst)),
            RxAny::F64(r) => with!(r, v => v.write_to(dst)),
            RxAny::Str(r) => with!(r, v => v.write_to(dst)),
            RxAny::Bytes(r) => with!(r, v => v.write_to(dst)),
            RxAny::Pod1(r) => {
                with!(r, a => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
            }
            RxAny::Pod2(r) => {
                with!(r, a => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
            }
            RxAny::Pod4(r) => {
                with!(r, a => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
            }
            RxAny::Pod8(r) => {
                with!(r, a => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
            }
        }
    })
}

fn tx_poison(tx: &ChanTx) -> Result<(), String> {
    guard(|| {
        match &tx.inner {
            TxAny::Raw(t) => t.poison(),
            TxAny::I64(t) => t.poison(),
            TxAny::U64(t) => t.poison(),
            TxAny::F64(t) => t.poison(),
            TxAny::Str(t) => t.poison(),
            TxAny::Bytes(t) => t.poison(),
            TxAny::Pod1(t) => t.poison(),
            TxAny::Pod2(t) => t.poison(),
            TxAny::Pod4(t) => t.poison(),
            TxAny::Pod8(t) => t.poison(),
        }
        Ok(())
    })
}

fn rx_poison(rx: &ChanRx) -> Result<(), String> {
    guard(|| {
        match &rx.inner {
            RxAny::Raw(r) => r.poison(),
            RxAny::I64(r) => r.poison(),
            RxAny::U64(r) => r.poison(),
            RxAny::F64(r) => r.poison(),
            RxAny::Str(r) => r.poison(),
            RxAny::Bytes(r) => r.poison(),
            RxAny::Pod1(r) => r.poison(),
            RxAny::Pod2(r) => r.poison(),
            RxAny::Pod4(r) => r.poison(),
            RxAny::Pod8(r) => r.poison(),
        }
        Ok(())
    })
}

const NOT_SHARED: &str = "hoare: this channel end cannot be shared (one2one side)";

fn tx_clone(tx: &ChanTx) -> Result<Box<ChanTx>, String> {
    guard(|| {
        let inner = match &tx.inner {
            TxAny::Raw(t) => t.try_clone().map(TxAny::Raw),
            TxAny::I64(t) => t.try_clone().map(TxAny::I64),
            TxAny::U64(t) => t.try_clone().map(TxAny::U64),
            TxAny::F64(t) => t.try_clone().map(TxAny::F64),
            TxAny::Str(t) => t.try_clone().map(TxAny::Str),
            TxAny::Bytes(t) => t.try_clone().map(TxAny::Bytes),
            TxAny::Pod1(t) => t.try_clone().map(TxAny::Pod1),
            TxAny::Pod2(t) => t.try_clone().map(TxAny::Pod2),
            TxAny::Pod4(t) => t.try_clone().map(TxAny::Pod4),
            TxAny::Pod8(t) => t.try_clone().map(TxAny::Pod8),
        }
        .ok_or(NOT_SHARED)?;
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
        let inner = match &rx.inner {
            RxAny::Raw(r) => r.try_clone().map(RxAny::Raw),
            RxAny::I64(r) => r.try_clone().map(RxAny::I64),
            RxAny::U64(r) => r.try_clone().map(RxAny::U64),
            RxAny::F64(r) => r.try_clone().map(RxAny::F64),
            RxAny::Str(r) => r.try_clone().map(RxAny::Str),
            RxAny::Bytes(r) => r.try_clone().map(RxAny::Bytes),
            RxAny::Pod1(r) => r.try_clone().map(RxAny::Pod1),
            RxAny::Pod2(r) => r.try_clone().map(RxAny::Pod2),
            RxAny::Pod4(r) => r.try_clone().map(RxAny::Pod4),
            RxAny::Pod8(r) => r.try_clone().map(RxAny::Pod8),
        }
        .ok_or(NOT_SHARED)?;
        Ok(Box::new(ChanRx {
            inner,
            ops: rx.ops,
            buffered: rx.buffered,
            size: rx.size,
        }))
    })
}

fn tx_elem(tx: &ChanTx) -> Elem {
    match tx.inner {
        TxAny::Raw(_) => Elem::Raw,
        TxAny::I64(_) => Elem::I64,
        TxAny::U64(_) => Elem::U64,
        TxAny::F64(_) => Elem::F64,
        TxAny::Str(_) => Elem::Str,
        TxAny::Bytes(_) => Elem::Bytes,
        TxAny::Pod1(_) => Elem::Pod1,
        TxAny::Pod2(_) => Elem::Pod2,
        TxAny::Pod4(_) => Elem::Pod4,
        TxAny::Pod8(_) => Elem::Pod8,
    }
}

fn rx_elem(rx: &ChanRx) -> Elem {
    match rx.inner {
        RxAny::Raw(_) => Elem::Raw,
        RxAny::I64(_) => Elem::I64,
        RxAny::U64(_) => Elem::U64,
        RxAny::F64(_) => Elem::F64,
        RxAny::Str(_) => Elem::Str,
        RxAny::Bytes(_) => Elem::Bytes,
        RxAny::Pod1(_) => Elem::Pod1,
        RxAny::Pod2(_) => Elem::Pod2,
        RxAny::Pod4(_) => Elem::Pod4,
        RxAny::Pod8(_) => Elem::Pod8,
    }
}

// ---------------------------------------------------------------- alternation

/// A send guard's value that may have to go back to its C++ object.
enum Unsent {
    Nothing,
    Raw(SendKey<RawItem>, *mut u8),
    Str(SendKey<String>, *mut u8),
    Bytes(SendKey<Vec<u8>>, *mut u8),
}

fn add_recv<'a, T: 'a>(
    alt: &mut Alt<'a, Status>,
    rx: &'a backend::Rx<T>,
    take: impl FnOnce(T) + 'a,
) {
    let h = move |r: Result<T, RecvError>| match r {
        Ok(v) => {
            take(v);
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

fn add_send<'a, T: 'a>(
    alt: &mut Alt<'a, Status>,
    tx: &'a backend::Tx<T>,
    v: T,
    give_back: impl FnOnce(T) + 'a,
) -> SendKey<T> {
    let h = move |r: Result<(), SendError<T>>| match r {
        Ok(()) => Status::Ok,
        Err(e) => {
            give_back(e.into_inner());
            Status::Poisoned
        }
    };
    match tx {
        backend::Tx::One(t) => alt.send(t, v, h),
        backend::Tx::Any(t) => alt.send(t, v, h),
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

/// # Safety
/// Every `end` points to a live end of the kind its guard says; every `value`
/// points to a live C++ value (send) or storage for one (receive) of the end's
/// element type; every `err` to an `ExcSlot`.
unsafe fn alt_impl(gs: &[AltGuard], fair: bool, next: usize) -> Result<AltOutcome, String> {
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
                let size = rx.size;
                // SAFETY (closures): `value` is storage for the element type.
                match &rx.inner {
                    RxAny::Raw(r) => {
                        add_recv(&mut alt, r, move |it| unsafe { it.move_into(value, err) })
                    }
                    RxAny::I64(r) => add_recv(&mut alt, r, move |v| unsafe { v.write_to(value) }),
                    RxAny::U64(r) => add_recv(&mut alt, r, move |v| unsafe { v.write_to(value) }),
                    RxAny::F64(r) => add_recv(&mut alt, r, move |v| unsafe { v.write_to(value) }),
                    RxAny::Str(r) => add_recv(&mut alt, r, move |v| unsafe { v.write_to(value) }),
                    RxAny::Bytes(r) => add_recv(&mut alt, r, move |v| unsafe { v.write_to(value) }),
                    RxAny::Pod1(r) => add_recv(&mut alt, r, move |a| unsafe {
                        std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, value, size)
                    }),
                    RxAny::Pod2(r) => add_recv(&mut alt, r, move |a| unsafe {
                        std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, value, size)
                    }),
                    RxAny::Pod4(r) => add_recv(&mut alt, r, move |a| unsafe {
                        std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, value, size)
                    }),
                    RxAny::Pod8(r) => add_recv(&mut alt, r, move |a| unsafe {
                        std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, value, size)
                    }),
                }
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
                let size = tx.size;
                macro_rules! pod {
                    ($t:expr, $n:literal) => {{
                        let mut a = [0u64; $n];
                        // SAFETY: `value` holds `size <= 8 * N` readable bytes.
                        unsafe {
                            std::ptr::copy_nonoverlapping(value, a.as_mut_ptr() as *mut u8, size)
                        };
                        add_send(&mut alt, $t, a, |_| {});
                        Unsent::Nothing
                    }};
                }
                // SAFETY (closures and takes): `value` is a live value of the
                // element type.
                let u = match &tx.inner {
                    TxAny::Raw(t) => {
                        let it = items[i].take().expect("hoare: alt send item");
                        let key =
                            add_send(&mut alt, t, it, move |it| unsafe { it.give_back(value) });
                        Unsent::Raw(key, value)
                    }
                    TxAny::I64(t) => {
                        add_send(&mut alt, t, unsafe { i64::take(value) }, |_| {});
                        Unsent::Nothing
                    }
                    TxAny::U64(t) => {
                        add_send(&mut alt, t, unsafe { u64::take(value) }, |_| {});
                        Unsent::Nothing
                    }
                    TxAny::F64(t) => {
                        add_send(&mut alt, t, unsafe { f64::take(value) }, |_| {});
                        Unsent::Nothing
                    }
                    TxAny::Str(t) => {
                        let v = unsafe { String::take(value) };
                        let key = add_send(&mut alt, t, v, move |v| unsafe { v.put_back(value) });
                        Unsent::Str(key, value)
                    }
                    TxAny::Bytes(t) => {
                        let v = unsafe { <Vec<u8>>::take(value) };
                        let key = add_send(&mut alt, t, v, move |v| unsafe { v.put_back(value) });
                        Unsent::Bytes(key, value)
                    }
                    TxAny::Pod1(t) => pod!(t, 1),
                    TxAny::Pod2(t) => pod!(t, 2),
                    TxAny::Pod4(t) => pod!(t, 4),
                    TxAny::Pod8(t) => pod!(t, 8),
                };
                unsent.push(u);
            }
            AltKind::Timeout => {
                let now = Instant::now();
                let d = now
                    .checked_add(Duration::from_nanos(g.timeout_ns))
                    .unwrap_or(now + Duration::from_secs(100 * 365 * 86400));
                alt.timeout(d, || Status::Timeout);
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
            Unsent::Raw(k, v) => {
                if let Some(it) = alt.take_unsent(k, 0) {
                    unsafe { it.give_back(v) }
                }
            }
            Unsent::Str(k, v) => {
                if let Some(s) = alt.take_unsent(k, 0) {
                    unsafe { s.put_back(v) }
                }
            }
            Unsent::Bytes(k, v) => {
                if let Some(b) = alt.take_unsent(k, 0) {
                    unsafe { b.put_back(v) }
                }
            }
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

enum SetAny {
    Raw(SetOf<RawItem>),
    I64(SetOf<i64>),
    U64(SetOf<u64>),
    F64(SetOf<f64>),
    Str(SetOf<String>),
    Bytes(SetOf<Vec<u8>>),
    Pod1(SetOf<[u64; 1]>),
    Pod2(SetOf<[u64; 2]>),
    Pod4(SetOf<[u64; 4]>),
    Pod8(SetOf<[u64; 8]>),
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
    Ok(match &first.inner {
        RxAny::Raw(_) => set!(Raw),
        RxAny::I64(_) => set!(I64),
        RxAny::U64(_) => set!(U64),
        RxAny::F64(_) => set!(F64),
        RxAny::Str(_) => set!(Str),
        RxAny::Bytes(_) => set!(Bytes),
        RxAny::Pod1(_) => set!(Pod1),
        RxAny::Pod2(_) => set!(Pod2),
        RxAny::Pod4(_) => set!(Pod4),
        RxAny::Pod8(_) => set!(Pod8),
    })
}

/// Selects on a set; `out(i)` gives the storage (and exception slot) for the value
/// of end `i`.
///
/// # Safety
/// `out(i)` is storage for the element type.
unsafe fn set_pick(
    set: &mut SetAny,
    size: usize,
    fair: Option<&mut Fair>,
    out: impl Fn(usize) -> (*mut u8, *mut ExcSlot),
) -> (usize, Status) {
    macro_rules! sel {
        ($s:expr, $v:ident, $dst:ident, $err:ident => $write:expr) => {{
            let (i, r) = $s.select(fair);
            let status = match r {
                Ok($v) => {
                    let ($dst, $err) = out(i);
                    let _ = $err;
                    // SAFETY: the caller's contract.
                    unsafe { $write };
                    Status::Ok
                }
                Err(_) => Status::Poisoned,
            };
            (i, status)
        }};
    }
    match set {
        SetAny::Raw(s) => sel!(s, it, dst, err => it.move_into(dst, err)),
        SetAny::I64(s) => sel!(s, v, dst, err => v.write_to(dst)),
        SetAny::U64(s) => sel!(s, v, dst, err => v.write_to(dst)),
        SetAny::F64(s) => sel!(s, v, dst, err => v.write_to(dst)),
        SetAny::Str(s) => sel!(s, v, dst, err => v.write_to(dst)),
        SetAny::Bytes(s) => sel!(s, v, dst, err => v.write_to(dst)),
        SetAny::Pod1(s) => {
            sel!(s, a, dst, err => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
        }
        SetAny::Pod2(s) => {
            sel!(s, a, dst, err => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
        }
        SetAny::Pod4(s) => {
            sel!(s, a, dst, err => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
        }
        SetAny::Pod8(s) => {
            sel!(s, a, dst, err => std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, dst, size))
        }
    }
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

macro_rules! native_elem {
    ($v:ident, $t:ty) => {
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
    };
}
each_elem!(native_elem);

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
