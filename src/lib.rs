//! hoare: a CSP runtime.
pub use hoare_core as core;

/// The C++ bridge behind `cpp/include/hoare/hoare.hpp` (built with the `cxx` feature).
#[cfg(feature = "cxx")]
pub mod ffi;
pub use hoare_runtime::{
    default_workers, id, name, par, par2, par3, par_for, run, scope, sleep_for, sleep_until,
    spawn, spawn_blocking, try_run, yield_now, Builder, JoinHandle, ParFn, Process,
    ProcessError, Runtime, RuntimeBuilder, Scope, ScopedJoinHandle, DEFAULT_STACK_SIZE,
};
/// Channels: every sharing kind and buffering, poison, extended rendezvous, timeouts,
/// factories and request–reply bundles (see [`hoare_core::chan`]).
pub use hoare_core::chan;
pub use hoare_core::chan::{
    any2any, any2one, one2any, one2one, request_reply, request_reply_with, Any, Buffer,
    CallError, Channel, ChannelBuilder, ClientEnd, One, Receiver, RecvError, RecvTimeoutError,
    Request, SendError, SendTimeoutError, Sender, ServerEnd, TryRecvError, TrySendError,
};
/// Barriers with dynamic enroll/resign, combining per worker (see [`hoare_core::barrier`]).
pub use hoare_core::barrier::{self, Barrier, BarrierEnd};
/// Timers for sleeps and timeouts: [`Egg`], [`Repeat`], [`Date`] (see [`hoare_core::timer`]).
pub use hoare_core::timer::{self, Date, Egg, Repeat, Timer};
/// Alternation: the [`alt!`], [`pri_alt!`] and [`fair_alt!`] macros for a fixed set
/// of guards and the [`Alt`] builder for a dynamic one (see [`hoare_core::alt`]).
pub use hoare_core::alt::{Alt, AltingBarrier, AltingBarrierEnd, Fair, Fired, RecvAny, SendKey};
pub use hoare_core::{alt, fair_alt, pri_alt};
