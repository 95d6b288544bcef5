//! Loom models of the I/O protocols: a worker sleeping in the I/O poller
//! (`Idle::sleep_in`) and a socket's readiness (`hoare_core::readiness`).
//!
//! `CARGO_TARGET_DIR=target/loom RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2
//! cargo test -p hoare-core --release --lib loom_tests::io`

use crate::park::Unparker;
use crate::readiness::{Interest, Readiness, Wait, READABLE};
use crate::sched::Idle;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// A stand-in for the I/O poller: `poll` blocks until `wake` (mio's `Waker`, an
/// eventfd: a wake that comes before the poll is kept) or readiness.
#[derive(Default)]
struct FakePoller {
    woken: Mutex<bool>,
    cv: Condvar,
}

impl FakePoller {
    fn poll(&self) {
        let mut g = self.woken.lock().unwrap();
        while !*g {
            g = self.cv.wait(g).unwrap();
        }
        *g = false;
    }

    unsafe fn wake_raw(data: *const ()) {
        // SAFETY: `data` is the `FakePoller` the model keeps alive.
        let me = unsafe { &*(data as *const FakePoller) };
        *me.woken.lock().unwrap() = true;
        me.cv.notify_one();
    }

    fn waker(&self) -> Unparker {
        // SAFETY: `wake_raw` may be called from any thread while `self` lives.
        unsafe { Unparker::from_raw(self as *const Self as *const (), Self::wake_raw) }
    }
}

fn take(work: &AtomicUsize) -> bool {
    work.compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Catches a worker left blocked in the poller after a notifier picked it: a
/// notify must interrupt the poller (mio's `Waker`), not signal the condvar the
/// worker is not waiting on; and a notify that lands between the worker's last
/// look at its wake flag and the start of its poll must still end the poll.
/// (Broken on purpose once: `Sleeper::wake` always notifying the condvar, and
/// loom reported the worker blocked for ever.)
#[test]
fn notify_interrupts_the_poller() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2));
        let work = Arc::new(AtomicUsize::new(0));
        let poller = Arc::new(FakePoller::default());
        let (i2, w2, p2) = (idle.clone(), work.clone(), poller.clone());
        let t = thread::spawn(move || {
            let mut searching = false;
            loop {
                if take(&w2) {
                    if searching {
                        i2.end_search();
                    }
                    return;
                }
                i2.prepare_sleep(0, searching);
                if take(&w2) {
                    if i2.cancel_sleep(0) {
                        i2.end_search();
                    }
                    return;
                }
                // SAFETY: the poller outlives the model's threads.
                searching = unsafe { i2.sleep_in(0, None, p2.waker(), |_| p2.poll()) };
            }
        });
        work.store(1, Ordering::SeqCst);
        idle.notify_one();
        t.join().unwrap();
    });
}

/// Catches a readiness edge lost between a failed operation and the clear that
/// follows it: the reader found no data (its operation "would block"), the data
/// and its edge arrive, and only then does the reader clear the readable bit. A
/// clear that ignores the tick (a plain `fetch_and`) wipes that edge, and the
/// reader then waits for ever for one that already came. (Broken on purpose
/// once: `clear` as a plain `fetch_and`, and loom reported the reader blocked.)
#[test]
fn edge_between_would_block_and_clear_is_kept() {
    loom::model(|| {
        let r = Arc::new(Readiness::new());
        // An earlier edge whose data was read: the bit is still set.
        r.set(READABLE);
        let data = Arc::new(AtomicUsize::new(0));
        let (r2, d2) = (r.clone(), data.clone());
        let reader = thread::spawn(move || loop {
            let snap = r2.snapshot();
            if d2.load(Ordering::Acquire) != 0 {
                return;
            }
            r2.clear(snap, Interest::Read);
            assert_eq!(r2.wait(Interest::Read, None), Wait::Ready);
        });
        data.store(1, Ordering::Release);
        r.set(READABLE);
        reader.join().unwrap();
    });
}

/// Catches a guard token lost to a drain: after an
/// operation cleared the readable bit and drained the alt guard's token, an edge
/// that raced with the drain must leave a token in the guard, so an alt on it
/// fires. (Broken on purpose once: no look at the word after the drain, and
/// loom found the socket readable with an empty guard.)
#[test]
fn guard_keeps_a_token_for_a_racing_edge() {
    loom::model(|| {
        let r = Arc::new(Readiness::new());
        r.set(READABLE);
        let guard = r.guard();
        let r2 = r.clone();
        let t = thread::spawn(move || {
            let snap = r2.snapshot();
            r2.clear(snap, Interest::Read);
        });
        r.set(READABLE);
        t.join().unwrap();
        // At rest the token is there whenever the socket is readable (the clear
        // may legitimately come after the second edge and clear it; a token
        // without readiness is a spurious wake-up, which the guard allows).
        if r.snapshot().is_ready(Interest::Read) {
            assert!(guard.receiver().try_recv().is_ok());
        }
    });
}
