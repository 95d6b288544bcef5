//! Loom models of the core's protocols. They live inside the crate so that they can
//! drive its internals (the select handle, packets, queue entries) directly. Each
//! model names the bug it catches, and was checked to fail with that bug put back.
//!
//! Run: `CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2
//! cargo test -p hoare-core --release --lib` (one module: add `loom_tests::chan`).
//! Keep models to 2–3 threads.
//!
//! Time does not pass under loom (see `crate::sync`): `park_until` returns at once
//! unless an unpark is pending, so a wait with a deadline is a timeout racing
//! everything that happened before it.

mod alt;
mod awake;
mod barrier;
mod broadcast;
mod cancel;
mod chan;
mod io;
mod sched;
mod waiter;

use crate::park::{set_current_party, Park, Party, Unparker};
use crate::waiter::Waiter;
use loom::sync::atomic::AtomicBool;
use loom::thread;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A parker for a loom thread that stands for a process: with `cancelled`, one that
/// the runtime is unwinding at shutdown (like the runtime's processes, it still
/// consumes the unpark of a wait another party has committed: it never refuses
/// `park`).
///
/// Every wake-up token is paired with one loom `park`/`unpark`. The core's
/// `ThreadParker` lets a thread take its token before the waker has called loom's
/// `unpark`; loom then keeps that `unpark` pending, and the thread's next wait on
/// a contended channel lock returns at once and trips loom's "expected to be able
/// to acquire lock" (a false alarm: a real thread would just spin on). Here the
/// token is only taken after loom's `park` returned, so no `unpark` is left
/// pending.
struct ModelParker {
    token: AtomicBool,
    thread: thread::Thread,
    cancelled: bool,
}

impl ModelParker {
    unsafe fn unpark_raw(data: *const ()) {
        // SAFETY: `data` is a parker whose thread is inside a wait (the contract of
        // `Unparker::unpark`); it stays alive until that thread has left the wait.
        let me = unsafe { &*(data as *const ModelParker) };
        let t = me.thread.clone();
        me.token.store(true, Ordering::Release);
        t.unpark();
    }

    fn take_token(&self) -> bool {
        self.token
            .compare_exchange(true, false, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }
}

impl Park for ModelParker {
    fn park(&self, _w: &Waiter) {
        loop {
            thread::park();
            if self.take_token() {
                return;
            }
        }
    }

    fn park_until(&self, _deadline: Instant, _w: Option<&Waiter>) -> bool {
        self.take_token()
    }

    fn cancelled(&self) -> bool {
        self.cancelled
    }

    fn unparker(&self) -> Unparker {
        // SAFETY: `unpark_raw` may be called from any thread while the parker's
        // thread waits, and touches the parker only before its `unpark`.
        unsafe { Unparker::from_raw(self as *const Self as *const (), Self::unpark_raw) }
    }
}

/// Runs `f` with this loom thread parking through a [`ModelParker`] (a cancelled
/// one with `cancelled`).
fn as_process<R>(cancelled: bool, f: impl FnOnce() -> R) -> R {
    let p = ModelParker {
        token: AtomicBool::new(false),
        thread: thread::current(),
        cancelled,
    };
    // SAFETY: `p` outlives every wait of `f` (which all end before `f` returns) and
    // is reset before it goes out of scope; it is this thread's party.
    // SAFETY: `p` is valid.
    let party = unsafe { Party::new(NonNull::from(&p as &dyn Park)) };
    // SAFETY: as for `p`, and `party` lives as long.
    unsafe { set_current_party(&party) };
    let r = f();
    // SAFETY: back to the thread's own parker.
    unsafe { set_current_party(std::ptr::null()) };
    r
}
