//! What a process asks about itself, and does to itself: its id and name, a
//! yield, a sleep.

use crate::context;
use crate::proc;
use std::time::{Duration, Instant};

/// The id of the calling process (a plain thread gets an id of its own on first
/// use).
pub fn id() -> u64 {
    #[cfg(feature = "check")]
    if let Some(id) = crate::check::current_id() {
        return id;
    }
    let p = proc::current();
    if !p.is_null() {
        // SAFETY: the running process's header is valid while it runs.
        return unsafe { (*p).id };
    }
    match context::thread_id() {
        0 => {
            let id = proc::fresh_ids(1);
            context::set_thread_id(id);
            id
        }
        id => id,
    }
}

/// Whether the caller runs as a process of a runtime: a process on a worker, or a
/// process on an OS thread of its own ([`spawn_blocking`], [`Builder::thread`]).
/// `false` on a plain OS thread. Where it is `true`, [`spawn`] has a runtime to
/// spawn into.
///
/// [`hoare_core::park::in_process`] answers a narrower question, whether blocking
/// parks a process on a worker: it is `false` in a thread process too, whose
/// operations block its OS thread.
///
/// ```
/// use hoare_runtime::{in_process, run, spawn_blocking};
/// assert!(!in_process());
/// run(|| {
///     assert!(in_process());
///     assert!(spawn_blocking(in_process).join().unwrap());
/// });
/// ```
///
/// [`spawn_blocking`]: crate::spawn_blocking
/// [`Builder::thread`]: crate::Builder::thread
/// [`spawn`]: crate::spawn
// Never inlined: it reads thread-locals (see `context`).
#[inline(never)]
pub fn in_process() -> bool {
    #[cfg(feature = "check")]
    if crate::check::active() {
        return true;
    }
    !proc::current().is_null() || !context::thread_rt().is_null()
}

/// The name of the calling process (for a thread: the thread's name).
pub fn name() -> Option<String> {
    let p = proc::current();
    if !p.is_null() {
        // SAFETY: as in `id`.
        return unsafe { (*p).name.as_deref().map(str::to_owned) };
    }
    std::thread::current().name().map(str::to_owned)
}

/// Lets other processes run: requeues the caller at the back of its worker's queue.
/// On a plain thread: `std::thread::yield_now`.
///
/// A loop that polls channels needs no explicit yield (failed polls spend a
/// [cooperative budget](hoare_core::park#the-cooperative-budget) and yield when it
/// runs out), but a long computation that neither blocks nor polls does: call this
/// now and then, or the processes queued on its worker, and its due timers, wait.
// Inlined into the caller: a context switch from inside an extra (non-inlined)
// call level costs several times more (return-address mispredictions).
#[inline]
pub fn yield_now() {
    let p = proc::current();
    if p.is_null() {
        thread_yield();
    } else {
        // SAFETY: as in `id`; the reference is not kept after the switch.
        unsafe { (*p).yield_now() }
    }
}

#[cold]
fn thread_yield() {
    std::thread::yield_now();
}

/// Sleeps the calling process (or thread) until `t`: the core's
/// [`sleep_until`](hoare_core::timer::sleep_until), which parks a process on its
/// worker's timers and a plain thread on the OS.
pub fn sleep_until(t: Instant) {
    hoare_core::timer::sleep_until(t)
}

/// Sleeps the calling process (or thread) for `d`. A `d` too long to add to an
/// `Instant` (`Duration::MAX`) sleeps for [`FAR_FUTURE`](hoare_core::timer::FAR_FUTURE),
/// about a century: for ever, in practice.
pub fn sleep_for(d: Duration) {
    hoare_core::timer::sleep_for(d);
}
