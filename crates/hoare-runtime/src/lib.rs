//! hoare's M:N runtime: worker threads run stackful processes (contexts of our
//! own on pooled, guarded stacks, `ctx`) with work stealing (crossbeam-deque), a
//! per-worker "next" slot for hand-offs, per-worker timer maps, and idle workers
//! that sleep on an OS primitive until work or their next timer is due.
//!
//! Processes implement [`hoare_core::park::Park`], so every channel, alt, barrier
//! and timer of `hoare-core` blocks a process by switching away from its stack, and a
//! plain OS thread by parking the thread.
//!
//! ```
//! let sum = hoare_runtime::run(|| {
//!     let hs: Vec<_> = (0..10u64).map(|i| hoare_runtime::spawn(move || i)).collect();
//!     hs.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
//! });
//! assert_eq!(sum, 45);
//! ```
//!
//! Scheduling is cooperative: a process runs until it blocks, yields or finishes.
//! Within that, no runnable process, yielding process or due timer waits
//! unboundedly while others run: workers look at due timers every few dispatches
//! however busy they are, two processes handing off to each other cannot keep a
//! queued one waiting for long, and a process that *polls* (failing `try_recv`s,
//! alts taking `skip`, zero timeouts) yields by itself now and then (the
//! [cooperative budget](hoare_core::park#the-cooperative-budget)). A process that
//! computes for long without any of these must call [`yield_now`] now and then.
//!
//! A panic in the root process of [`run`] is re-raised by `run` once the runtime
//! has shut down; [`try_run`] returns it as a [`ProcessError`] instead.

// The modules, each using only the ones listed above it (no import cycle):
//
// context    every thread-local, each read by an `#[inline(never)]` function; a leaf
// sync       the poison-tolerant lock
// ctx        switching stacks: one symmetric switch between saved contexts
// stack      pooled, guarded stack slots
// stack_mark where a parked process's stack ends (for the holds scan of reports)
// proc       a process's header, what it asks of its worker, tasks, process ids
// signal     the stack overflow handler
// timers     one worker's timers
// threads    the registry of a runtime's thread processes
// shared     what a runtime's workers share; pin routing; the caller's runtime
// worker/    a worker: its queues, stealing, parking and waking, dispatch, its loop
// io         the I/O poller (feature `io`): idle workers sleep in it, sockets register
// spawn      creating a process
// sweep      the shutdown sweep, which unwinds the processes that did not finish
// lifecycle  a runtime's start and shutdown
// api/       the public API
// check/     the checking runtime (feature `check`): processes as coroutines on
//            the caller's thread, exploring their interleavings

mod api;
#[cfg(feature = "check")]
pub mod check;
mod context;
mod ctx;
mod detect;
#[cfg(feature = "io")]
pub mod io;
mod lifecycle;
mod prefetch;
mod proc;
pub mod report;
mod shared;
mod signal;
mod slot_blocks;
mod spawn;
mod stack;
mod stack_mark;
mod sweep;
mod sync;
mod threads;
mod timers;
mod worker;

pub use detect::OnDeadlock;
pub use report::Report;

pub use api::{
    default_workers, id, in_process, name, par, par2, par3, par_for, run, scope, sleep_for,
    sleep_until, spawn, spawn_blocking, try_run, yield_now, Builder, Handle, JoinHandle, ParFn,
    Process, ProcessError, Runtime, RuntimeBuilder, Scope, ScopedJoinHandle, DEFAULT_STACK_SIZE,
    MAX_STACK_SIZE, MAX_WORKERS,
};
