//! Loom models of the "awake" counts a deadlock detector trusts: the workers
//! asleep without a deadline (`Idle`) and the registered threads
//! (`park::threads_awake`). The rule both follow: whoever wakes a sleeper counts
//! it awake before it wakes it. A sleeper that counted itself awake after waking
//! would leave a window in which the counts read "everybody asleep" while work is
//! pending: the waker has moved on (or exited) and the woken party has not run.

use super::sched::worker_until_work;
use crate::park::{register_thread, threads_awake, unregister_thread};
use crate::sched::Idle;
use crate::waiter::Waiter;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// A worker goes to sleep for good while a registered thread makes work for it,
/// notifies and leaves; a detector looks at any moment. It must never see every
/// worker asleep and no thread awake while the work is still pending.
///
/// Catches a waker that does not count the worker it wakes awake (take
/// `sl.wake_count(i)` out of `Idle::notify_slow` and let the woken worker uncount
/// itself after its sleep instead): the detector then sees "all asleep, nobody
/// awake" between the thread's exit and the worker running. Checked to fail so.
#[test]
fn a_notify_counts_the_last_sleeper_awake() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(1));
        let work = Arc::new(AtomicUsize::new(0));
        let (i2, w2) = (idle.clone(), work.clone());
        let worker = thread::spawn(move || worker_until_work(&i2, &w2, false, false));
        let (i3, w3) = (idle.clone(), work.clone());
        let notifier = thread::spawn(move || {
            register_thread();
            w3.store(1, Ordering::SeqCst);
            i3.notify_one();
            unregister_thread(); // the thread exits
        });
        // The detector's look, at any point of the above. (Work is read first: a
        // thread that has not registered yet is one the detector cannot see.)
        idle.if_all_asleep(None, || {
            let pending = work.load(Ordering::SeqCst) == 1;
            assert!(
                !(pending && threads_awake() == 0),
                "every worker counted asleep, no thread awake, work pending"
            );
        });
        notifier.join().unwrap();
        worker.join().unwrap();
    });
}

/// A registered thread parks without a deadline while another registered thread
/// wakes it and exits; a detector reads the count. It may read 0 only once the
/// woken thread is done too.
///
/// Catches a wake that does not count the sleeper awake (drop the increment in
/// `ThreadParker::unpark_raw` when it finds `SLEEPING`, and let the sleeper count
/// itself awake after `park` returns): between the waker's exit and the sleeper
/// running, the count reads 0 with the sleeper's wake pending. Checked to fail so.
#[test]
fn a_wake_counts_the_sleeping_thread_awake() {
    loom::model(|| {
        // The sleeper's waiter address, handed to the waker without a spin loop.
        let slot = Arc::new((Mutex::new(0usize), Condvar::new()));
        let ready = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let (s1, r1, d1) = (slot.clone(), ready.clone(), done.clone());
        let sleeper = thread::spawn(move || {
            register_thread();
            r1.fetch_add(1, Ordering::SeqCst);
            let w = Waiter::for_current();
            *s1.0.lock().unwrap() = &w as *const Waiter as usize;
            s1.1.notify_one();
            w.wait(None);
            d1.store(1, Ordering::SeqCst);
            unregister_thread();
        });
        let (s2, r2) = (slot.clone(), ready.clone());
        let waker = thread::spawn(move || {
            register_thread();
            r2.fetch_add(1, Ordering::SeqCst);
            let mut g = s2.0.lock().unwrap();
            while *g == 0 {
                g = s2.1.wait(g).unwrap();
            }
            let w = *g as *const Waiter;
            drop(g);
            // SAFETY: the sleeper waits on `w` until this wake.
            unsafe { Waiter::try_wake(w, 0, false) };
            unregister_thread();
        });
        // The detector's look: once both threads are counted, the count may read
        // 0 only when the sleeper is done.
        if ready.load(Ordering::SeqCst) == 2 && threads_awake() == 0 {
            assert_eq!(
                done.load(Ordering::SeqCst),
                1,
                "no thread counted awake while one is being woken"
            );
        }
        sleeper.join().unwrap();
        waker.join().unwrap();
    });
}
