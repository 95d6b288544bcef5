//! The thread-local context: which process runs on this thread, which worker
//! this thread is, which runtime a thread process belongs to, and the id of a
//! thread. Every thread-local of the crate lives here (the running process is
//! the owner of the core's current party: one thread-local serves both crates).
//!
//! **The TLS rule** (DEVELOPERS.md): never keep a thread-local's *address* across
//! anything that may park, since processes migrate between workers. LLVM takes a
//! thread-local's address to be constant within one function, so a read inlined
//! into a function that also switches (directly or through inlined callees) may be
//! hoisted before the switch and reused after it, on the wrong thread (seen: the
//! yield loop of benches/runtime.rs hoisted it). So every reader here is
//! `#[inline(never)]`: each call reads afresh (one exception, an `unsafe` reader
//! for the wake, which is itself never inlined and never switches:
//! `current_worker_no_switch`). The writers are called only where
//! no process runs (a worker's own loop, the shutdown sweep, a thread's start and
//! end), and may be inlined.
//!
//! The slots are untyped: this module is the leaf every other one may use, and
//! the types they point at are defined above it. Their typed views:
//! `proc::current`, `WorkerLocal::current`, `Shared::with_current`.

use std::cell::Cell;
use std::ptr;

std::thread_local! {
    /// The worker (`WorkerLocal`) this thread is (null: not a worker).
    static WORKER: Cell<*const ()> = const { Cell::new(ptr::null()) };
    /// For a thread process: its runtime (`Shared`), which the thread process
    /// keeps alive while it is set (null: not a thread process).
    static THREAD_RT: Cell<*const ()> = const { Cell::new(ptr::null()) };
    /// The process id of a plain thread or a thread process (0: none yet).
    static THREAD_ID: Cell<u64> = const { Cell::new(0) };
}

/// The process (`Proc`) running on this thread (null: none): the owner of the
/// core's current party, which `worker::set_running` installs (a checking
/// runtime's processes have none). A plain read of a const-initialised
/// thread-local, so the stack overflow handler may call it; the read itself is
/// the core's `current_owner`, which is never inlined (the TLS rule).
#[inline(always)]
pub(crate) fn current_proc() -> *const () {
    hoare_core::park::current_owner()
}

/// The worker this thread is (null: not a worker).
#[inline(never)]
pub(crate) fn current_worker() -> *const () {
    WORKER.with(|c| c.get())
}

/// The worker this thread is (null: not a worker), read inline: for the wake
/// (`Proc::unpark_raw`), where the call to `current_worker` was a tenth of the
/// wake's instructions.
///
/// # Safety
/// Only from a function that is never inlined and neither switches stacks nor
/// calls anything that may (directly or through what is inlined into it): then
/// the thread-local's address this computes cannot outlive a switch (the TLS
/// rule above).
#[inline(always)]
pub(crate) unsafe fn current_worker_no_switch() -> *const () {
    WORKER.with(|c| c.get())
}

/// Sets the worker this thread is (null: none), at the start and end of its loop.
pub(crate) fn set_current_worker(w: *const ()) {
    WORKER.with(|c| c.set(w));
}

/// The runtime of the thread process on this thread (null: none).
#[inline(never)]
pub(crate) fn thread_rt() -> *const () {
    THREAD_RT.with(|c| c.get())
}

/// Sets the runtime of the thread process on this thread (null: none).
pub(crate) fn set_thread_rt(rt: *const ()) {
    THREAD_RT.with(|c| c.set(rt));
}

/// This thread's process id (0: none yet).
#[inline(never)]
pub(crate) fn thread_id() -> u64 {
    THREAD_ID.with(|c| c.get())
}

/// Sets this thread's process id.
pub(crate) fn set_thread_id(id: u64) {
    THREAD_ID.with(|c| c.set(id));
}
