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
//!   Rust channels of those types, so a Rust process can hold the other end (see
//!   [`NativeElem`](crate::ffi::NativeElem)). `rust::String` and `rust::Vec<uint8_t>`
//!   share Rust's layout, so the value moves with a bitwise move, without a copy of
//!   the bytes.
//! * **Alternation** is one call (`alt_select`) over a list of guards built in C++
//!   (kept inside the C++ `hoare::Alt` object for up to 8 guards); the bridge makes
//!   hoare-core's alt cases, as the `alt!` macro does, in an array on its stack for
//!   up to 8 guards, so such an alt allocates on neither side. `RecvSet` is the C++
//!   `hoare::RecvAny`: a case set built once and selected on many times.
//!   Scoped forking and request/reply bundles are C++ over `spawn`/`join` and
//!   channels; barriers, alting barriers and timers are the Rust ones, bridged as
//!   opaque types (`BarrierHandle`, `AltingBarrier*Handle`, `TimerHandle`).
//! * **Failures.** Misuse that C++ can commit (a spawn outside a runtime, an alt
//!   with no enabled guard, a bad channel kind or capacity, ...) is checked here
//!   before the Rust API would panic, and comes back as `Err` (cxx maps it to
//!   `rust::Error`, hoare.hpp to `hoare::Error`): no panic, so no panic message on
//!   stderr. Every `extern "Rust"` function that can fail also runs under
//!   `catch_unwind`, so a panic that is a bug still becomes a C++ exception
//!   (`"hoare: Rust panic: ..."`), never undefined behaviour.
//!
//! # Layout
//! cxx needs every item of one bridge in one module: this file holds the bridge
//! (the C++ side of its `extern "C++"` half is `cpp/include/hoare/bridge.hpp`; cxx
//! generates `hoare/src/ffi/mod.rs.h` from it) and the implementations live in one
//! module per concept:
//!
//! | module | what it holds |
//! |---|---|
//! | `backend` | the thin layer over hoare's Rust API: one end type per element type, one `Wait` argument |
//! | `process` | run, spawn, join, the per-process operations |
//! | `macros` | the list of element types and the per-type `match` every end and set is dispatched by |
//! | `elem` | how each element type moves between C++ storage and a Rust channel (`RawItem`, `Carried`) |
//! | `chan` | the C++-held channel ends (`ChanTx`, `ChanRx`) and their operations |
//! | `alt` | `alt_select`: an alt over guards C++ describes |
//! | `recv_set` | `RecvSet`: a receive guard over a fixed set of ends (`hoare::RecvAny`) |
//! | `barrier`, `alting` | barriers and alting barriers |
//! | `timer` | the Rust timers (`Egg`, `Repeat`, `Date`) as C++ holds them, and time points across the bridge |
//! | `rust_side` | [`NativeElem`](crate::ffi::NativeElem): C++-held ends to and from Rust channel ends ([`Rx`](crate::ffi::Rx), [`Tx`](crate::ffi::Tx), defined in `backend`) |
//! | `test_hooks` | (feature `cxx-test-hooks`) a second bridge: the demo Rust processes and failure hooks of hoare's own C++ tests and examples |

mod backend;
#[macro_use]
mod macros;
#[macro_use]
mod bcast;
mod alt;
mod alting;
mod barrier;
mod chan;
mod check;
mod elem;
mod net;
mod par;
mod process;
mod recv_set;
mod runtime;
mod rust_side;
#[cfg(feature = "cxx-test-hooks")]
mod test_hooks;
mod timer;

use std::panic::{catch_unwind, AssertUnwindSafe};

pub use alting::{AltingBarrierEndHandle, AltingBarrierHandle};
pub use backend::{Rx, Tx};
pub use barrier::{BarrierEndHandle, BarrierHandle};
pub use bcast::{BcastRx, BcastTx};
pub use bridge::{Buffering, Elem, Sharing, Status};
pub use chan::{ChanRx, ChanTx};
pub use elem::RawItem;
pub use net::{NetAccepter, NetNode};
pub use process::ProcHandle;
pub use recv_set::RecvSet;
pub use runtime::{RuntimeBox, RuntimeHandle};
pub use rust_side::NativeElem;
pub use timer::TimerHandle;

// The implementations of the bridge's Rust functions (cxx calls them as `super::f`).
use alt::alt_select;
use alting::{
    alting_barrier_clone, alting_barrier_enroll, alting_barrier_enrolled, alting_barrier_new,
    alting_barrier_of, alting_barrier_rounds, alting_barrier_sync,
};
use barrier::{
    barrier_clone, barrier_enroll, barrier_enrolled, barrier_new, barrier_of, barrier_rounds,
    barrier_same, barrier_sync,
};
use bcast::{
    bcast_new, bcast_readers, bcast_recv, bcast_rx_elem, bcast_rx_is_open, bcast_rx_poison,
    bcast_rx_subscribe, bcast_send, bcast_tx_elem, bcast_tx_is_open, bcast_tx_poison,
    bcast_tx_subscribe,
};
use chan::{
    chan_new, rx_clone, rx_elem, rx_poison, rx_recv, rx_recv_with, tx_clone, tx_elem, tx_poison,
    tx_send,
};
use check::{check_fail, check_run};
use net::{
    net_accept, net_accepter_next, net_bind, net_connect, net_connect_pair,
    net_default_close_timeout_ns, net_local_addr, net_lost, net_publish, net_register, net_resolve,
    net_serve_names,
};
use par::par_run;
use process::{
    default_workers, in_process, join, proc_id, proc_name, run, sleep_ns, spawn, yield_now,
};
use recv_set::{recv_set_new, recv_set_select};
use runtime::{
    handle_clone, handle_current, handle_is_shut_down, handle_spawn, handle_workers, rt_handle,
    rt_new, rt_shutdown,
};
use timer::{
    timer_advance, timer_clone, timer_date, timer_date_after, timer_deadline, timer_egg,
    timer_expired, timer_fired, timer_next, timer_period, timer_repeat, timer_repeat_from,
    timer_skip_missed, timer_sleep,
};

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

    /// Options of a check (`hoare::check::Builder` in C++).
    struct CheckOpts {
        /// 0: exhaustive, 1: random, 2: PCT, 3: delay-bounded.
        mode: u8,
        /// Executions of random and PCT modes.
        executions: u64,
        /// PCT's depth, or the delay bound.
        depth: u32,
        seed: u64,
        /// 0: the default limit (reported when reached).
        max_steps: u64,
        /// 0: none.
        max_time_ms: u64,
        /// A schedule to replay ("": none).
        replay: String,
        quiescent: bool,
    }

    /// What a check explored.
    struct CheckStats {
        executions: u64,
        complete: bool,
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
        /// A broadcast's reader (`end`: `*const BcastRx`).
        BcastRecv = 5,
        /// A broadcast's writer (`end`: `*const BcastTx`).
        BcastSend = 6,
        /// An extended receive (`end`: `*const ChanRx`, `task` the handler run
        /// with the writer held).
        RecvWith = 7,
    }

    /// One guard of an alt, as C++ describes it (addresses as integers).
    struct AltGuard {
        kind: AltKind,
        /// The precondition.
        enabled: bool,
        /// `*const ChanRx` (receive), `*const ChanTx` (send), `*mut TimerHandle`
        /// (timeout; 0: `timeout_ns` from now, as an `Egg`).
        end: usize,
        /// Receive: storage for the value; send: the C++ value to send.
        value: usize,
        /// `*mut ExcSlot` for an exception of a move constructor.
        err: usize,
        /// Timeout: nanoseconds from now (when `end` is 0).
        timeout_ns: u64,
        /// Extended receive: the `*mut Task` (the C++ handler) run on the value
        /// with the writer held.
        task: usize,
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

    /// One communication of a parallel communication (`hoare::Par`).
    struct ParItem {
        /// A send (`end`: `*const ChanTx`) or a receive (`*const ChanRx`).
        send: bool,
        end: usize,
        /// Send: the C++ value; receive: storage for one.
        value: usize,
        /// `*mut ExcSlot`.
        err: usize,
        /// How it ended (set by `par_run`).
        status: Status,
    }

    /// Both ends of a new broadcast.
    struct BcastPair {
        tx: Box<BcastTx>,
        rx: Box<BcastRx>,
    }

    /// The two ends a network accepter or `connect_pair` gives: the writing end
    /// of one direction and the reading end of the other.
    struct NetPair {
        tx: Box<ChanTx>,
        rx: Box<ChanRx>,
    }

    /// A network connection that ended, and why.
    struct LostConn {
        peer: String,
        why: String,
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
        /// `std::chrono::steady_clock::now()` in nanoseconds since its epoch.
        fn steady_now_ns() -> i64;
    }

    extern "Rust" {
        /// A spawned process (a Rust `JoinHandle`).
        #[derive(ExternType)]
        type ProcHandle;
        /// A sending end of any element type and sharing kind.
        #[derive(ExternType)]
        type ChanTx;
        /// A receiving end of any element type and sharing kind.
        #[derive(ExternType)]
        type ChanRx;

        fn run(task: UniquePtr<Task>, opts: &RunOpts) -> Result<UniquePtr<Task>>;
        fn spawn(task: UniquePtr<Task>, opts: &SpawnOpts) -> Result<Box<ProcHandle>>;
        fn join(handle: Box<ProcHandle>) -> Result<UniquePtr<Task>>;
        fn check_run(task: UniquePtr<Task>, opts: &CheckOpts) -> Result<CheckStats>;
        fn check_fail(msg: &str);
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

        /// A timer of hoare::timer (`hoare::Egg`, `Repeat`, `Date`). Time points
        /// are nanoseconds of `std::chrono::steady_clock` (its `time_since_epoch`).
        type TimerHandle;
        fn timer_egg(period_ns: u64) -> Box<TimerHandle>;
        fn timer_repeat(period_ns: u64) -> Box<TimerHandle>;
        fn timer_repeat_from(start: i64, period_ns: u64) -> Box<TimerHandle>;
        fn timer_date(at: i64) -> Box<TimerHandle>;
        fn timer_date_after(ns: u64) -> Box<TimerHandle>;
        fn timer_clone(t: &TimerHandle) -> Box<TimerHandle>;
        /// The deadline of an operation that starts now.
        fn timer_deadline(t: &TimerHandle) -> i64;
        fn timer_fired(t: &mut TimerHandle);
        fn timer_expired(t: &TimerHandle) -> bool;
        fn timer_period(t: &TimerHandle) -> u64;
        /// A `Repeat`'s next tick, a `Date`'s instant (an `Egg`: the deadline of a
        /// use starting now).
        fn timer_next(t: &TimerHandle) -> i64;
        fn timer_advance(t: &mut TimerHandle);
        fn timer_skip_missed(t: &mut TimerHandle);
        fn timer_sleep(t: &mut TimerHandle) -> Result<()>;

        /// Runs every communication of `items` at once (at most `timeout_ns` if
        /// `timed`); false if a move into a box threw first (nothing happened).
        unsafe fn par_run(items: &mut [ParItem], timed: bool, timeout_ns: u64) -> Result<bool>;

        /// A broadcast's writing end (`hoare::BroadcastTx`).
        type BcastTx;
        /// A broadcast's reading end (`hoare::BroadcastRx`).
        type BcastRx;
        fn bcast_new(
            elem: Elem,
            size: usize,
            buffering: Buffering,
            capacity: usize,
        ) -> Result<BcastPair>;
        unsafe fn bcast_send(tx: &BcastTx, value: *mut u8) -> Result<Status>;
        unsafe fn bcast_recv(
            rx: &BcastRx,
            dst: *mut u8,
            mode: WaitMode,
            timeout_ns: u64,
        ) -> Result<Status>;
        fn bcast_tx_subscribe(tx: &BcastTx) -> Box<BcastRx>;
        fn bcast_rx_subscribe(rx: &BcastRx) -> Box<BcastRx>;
        fn bcast_tx_poison(tx: &BcastTx);
        fn bcast_rx_poison(rx: &BcastRx);
        fn bcast_tx_is_open(tx: &BcastTx) -> bool;
        fn bcast_rx_is_open(rx: &BcastRx) -> bool;
        fn bcast_readers(tx: &BcastTx) -> usize;
        fn bcast_tx_elem(tx: &BcastTx) -> Elem;
        fn bcast_rx_elem(rx: &BcastRx) -> Elem;

        /// A runtime started by C++ (`hoare::Runtime`), running until shut down.
        type RuntimeBox;
        /// A handle to a runtime, for any thread (`hoare::RuntimeHandle`).
        type RuntimeHandle;
        fn rt_new(opts: &RunOpts) -> Result<Box<RuntimeBox>>;
        fn rt_handle(rt: &RuntimeBox) -> Box<RuntimeHandle>;
        /// `detach`: from a process, shut down on a thread of its own instead of
        /// failing (the destructor's case).
        fn rt_shutdown(rt: &mut RuntimeBox, detach: bool) -> Result<()>;
        fn handle_current() -> Result<Box<RuntimeHandle>>;
        fn handle_clone(h: &RuntimeHandle) -> Box<RuntimeHandle>;
        fn handle_spawn(h: &RuntimeHandle, task: UniquePtr<Task>) -> Result<Box<ProcHandle>>;
        fn handle_is_shut_down(h: &RuntimeHandle) -> bool;
        fn handle_workers(h: &RuntimeHandle) -> usize;

        /// A network node (`hoare::net::Node`).
        type NetNode;
        /// An accepter published on a node (`hoare::net::Accepter`).
        type NetAccepter;
        /// `max_message` 0: the default limit; `close_timeout_ns` `u64::MAX`:
        /// no bound (`Duration::MAX`).
        fn net_bind(
            addr: &str,
            secret: &[u8],
            max_message: usize,
            close_timeout_ns: u64,
        ) -> Result<Box<NetNode>>;
        /// `DEFAULT_CLOSE_TIMEOUT` in nanoseconds.
        fn net_default_close_timeout_ns() -> u64;
        fn net_local_addr(n: &NetNode) -> String;
        fn net_publish(n: &NetNode, name: &str, elem: Elem) -> Result<Box<ChanRx>>;
        /// `service` not empty: `url` is a name to resolve through that name service.
        fn net_connect(
            n: &NetNode,
            url: &str,
            service: &str,
            elem: Elem,
            buffer: usize,
        ) -> Result<Box<ChanTx>>;
        fn net_accept(n: &NetNode, name: &str, req: Elem, rep: Elem) -> Result<Box<NetAccepter>>;
        /// The next client's pair: `rx` its requests, `tx` its replies.
        fn net_accepter_next(a: &NetAccepter) -> Result<NetPair>;
        /// `tx` the requests, `rx` the replies.
        fn net_connect_pair(n: &NetNode, url: &str, req: Elem, rep: Elem) -> Result<NetPair>;
        fn net_register(n: &NetNode, service: &str, name: &str) -> Result<()>;
        fn net_resolve(n: &NetNode, service: &str, name: &str) -> Result<String>;
        fn net_serve_names(n: &NetNode) -> Result<()>;
        fn net_lost(n: &NetNode) -> Vec<LostConn>;
    }
}

use bridge::{Task, ValueOps};

// SAFETY: a `Task` is a C++ closure object that hoare::spawn requires to be movable
// to another thread (C++ process bodies must not depend on the creating thread).
unsafe impl Send for Task {}
// SAFETY: `ValueOps` is an immutable table of function pointers with static storage.
unsafe impl Sync for ValueOps {}

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
            let e = hoare_runtime::ProcessError::from_panic(&*p);
            Err(format!(
                "hoare: Rust panic: {}",
                e.message().unwrap_or_default()
            ))
        }
        Err(_) => Err(CANCELLED.to_string()),
    }
}
