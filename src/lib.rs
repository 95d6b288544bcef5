//! hoare: a CSP runtime.
//!
//! Lightweight stackful processes run on every core and share nothing: they talk
//! over channels, choose between events with alternation, meet at barriers and wait
//! on timers. [`run`] starts the embedded default runtime; everything else works
//! inside it, and channels, alts, barriers and timers also work from plain OS
//! threads (they block the thread instead of a process).
//!
//! ```
//! let total = hoare::run(|| {
//!     let (tx, rx) = hoare::one2one::<u32>();
//!     let squares = hoare::spawn(move || {
//!         for i in 1..=4 {
//!             tx.send(i * i).unwrap();
//!         }
//!     }); // returning drops `tx`, which poisons the channel and ends `rx.iter()`
//!     let total: u32 = rx.iter().sum();
//!     squares.join().unwrap();
//!     total
//! });
//! assert_eq!(total, 30);
//! ```
//!
//! | module | what it holds |
//! |---|---|
//! | runtime (root) | [`run`], [`spawn`], [`par`], [`par_for`], [`scope`], [`Builder`], [`Runtime`] |
//! | [`chan`] | channels of every sharing kind and buffering, poison, extended rendezvous |
//! | [`alt!`](macro@alt), [`Alt`] | alternation over receive, send, timeout, skip and barrier guards |
//! | [`barrier`], [`timer`] | barriers and alting barriers; `Egg`, `Repeat`, `Date` timers |
//! | [`net`] | sockets whose operations park the calling process: TCP, UDP, readiness alt guards (feature `net`) |
//! | [`core`] | the model-checked synchronisation core and its park/unpark seam |

pub use hoare_core as core;

/// The checking runtime: explores the interleavings of a network's CSP events
/// (built with the `check` feature; see `docs/checking.md`).
#[cfg(feature = "check")]
pub use hoare_runtime::check;

#[cfg(feature = "net")]
pub mod net;

/// The C++ bridge behind `cpp/include/hoare/hoare.hpp` (built with the `cxx` feature).
#[cfg(feature = "cxx")]
pub mod ffi;

pub use hoare_runtime::{
    default_workers, id, in_process, name, par, par2, par3, par_for, run, scope, sleep_for,
    sleep_until, spawn, spawn_blocking, try_run, yield_now, Builder, Handle, JoinHandle, ParFn,
    Process, ProcessError, Runtime, RuntimeBuilder, Scope, ScopedJoinHandle, DEFAULT_STACK_SIZE,
    MAX_STACK_SIZE, MAX_WORKERS,
};

/// Deadlock detection and the reports of blocked processes: see
/// [`RuntimeBuilder::on_deadlock`] and [`report::Report`].
pub use hoare_runtime::{report, OnDeadlock, Report};

/// Channels: every sharing kind and buffering, poison, extended rendezvous, timeouts,
/// factories and request–reply bundles (see [`hoare_core::chan`]).
pub use hoare_core::chan;
pub use hoare_core::chan::{
    any2any, any2one, broadcast, broadcast_bounded, broadcast_overwriting, one2any, one2one,
    request_reply, request_reply_with, Any, BroadcastReceiver, BroadcastSender, Buffer, CallError,
    Channel, ChannelBuilder, ClientEnd, One, Reason, Receiver, RecvError, RecvTimeoutError, Refuse,
    Request, SendError, SendTimeoutError, Sender, ServerEnd, TryRecvError, TrySendError,
};

/// Alternation: the [`alt!`](macro@alt), [`pri_alt!`] and [`fair_alt!`] macros for a fixed set
/// of guards and the [`Alt`] builder for a dynamic one (see [`hoare_core::alt`](mod@hoare_core::alt)).
pub use hoare_core::alt::{
    par_recv, par_send, Alt, AltingBarrier, AltingBarrierEnd, Fair, Fired, Par, RecvAny, SendKey,
};
pub use hoare_core::{alt, fair_alt, pri_alt};

/// Barriers with dynamic enroll/resign, combining per worker (see [`hoare_core::barrier`]).
pub use hoare_core::barrier::{self, Barrier, BarrierEnd};

/// Timers for sleeps and timeouts: [`Egg`], [`Repeat`], [`Date`] (see [`hoare_core::timer`]).
pub use hoare_core::timer::{self, Date, Egg, Repeat, Timer};
