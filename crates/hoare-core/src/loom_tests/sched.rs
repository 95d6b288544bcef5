//! Loom models of the scheduler protocols in `crate::sched`.

use crate::sched::{Idle, JoinSlot, ProcState};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

fn take(work: &AtomicUsize) -> bool {
    work.compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// One worker's idle loop: look for work, register as a sleeper, look again, sleep
/// (lightly, with a timeout that loom never fires, if `light`).
pub(super) fn worker_until_work(idle: &Idle, work: &AtomicUsize, mut searching: bool, light: bool) {
    loop {
        if take(work) {
            if searching {
                idle.end_search();
            }
            return;
        }
        idle.prepare_sleep(0, searching);
        if take(work) {
            if idle.cancel_sleep(0) {
                idle.end_search();
            }
            return;
        }
        let timeout = light.then(|| {
            idle.make_light(0);
            std::time::Duration::from_micros(50)
        });
        searching = idle.sleep(0, timeout);
    }
}

/// One worker (searching already, if `searching`) that looks for work and sleeps
/// (lightly, if `light`) while a producer makes work and calls `notify`: the worker
/// must end up with the work (loom reports it asleep for ever otherwise).
fn work_reaches_worker(searching: bool, light: bool, notify: fn(&Idle)) {
    let idle = Arc::new(Idle::new(2));
    if searching {
        assert!(idle.try_begin_search());
    }
    let work = Arc::new(AtomicUsize::new(0));
    let (i2, w2) = (idle.clone(), work.clone());
    let t = thread::spawn(move || worker_until_work(&i2, &w2, searching, light));
    work.store(1, Ordering::SeqCst);
    notify(&idle);
    t.join().unwrap();
}

/// Catches a lost wake-up: work pushed while the worker is between "found nothing"
/// and "asleep" must either be seen by the worker's re-check after `prepare_sleep`
/// or make `notify_one` wake it. (Breaking it: re-check before `prepare_sleep`, or
/// drop the SeqCst fences, and loom reports the worker asleep forever.)
#[test]
fn idle_no_lost_wakeup() {
    loom::model(|| work_reaches_worker(false, false, Idle::notify_one));
}

/// Catches the "last searcher" bug: a producer that sees a searching worker does not
/// wake anyone, so that searcher must re-check after it stops searching. (Breaking
/// it: make `prepare_sleep` drop the searching count after the caller's re-check.)
#[test]
fn idle_last_searcher_rechecks() {
    loom::model(|| work_reaches_worker(true, false, Idle::notify_one));
}

/// Catches a weak notification that misses a deep sleeper: `notify_weak` (a lone
/// task displaced on a busy worker) must wake a worker that registered as a deep
/// sleeper, or that worker's re-check must see the work. (Breaking it: make
/// `notify_weak` test the light-sleeper bits instead of the deep ones, and loom
/// reports the worker asleep forever.)
#[test]
fn idle_weak_notify_wakes_deep_sleeper() {
    loom::model(|| work_reaches_worker(false, false, Idle::notify_weak));
}

/// Worker 1 spent its weak notify in an earlier period awake and slept; then it
/// wakes on its own (its poller, a timeout: nobody notified it) and queues tasks
/// on itself, as `WorkerLocal::notify_queued` does (`notify_weak_once` after each
/// push; `notify_one_once` once two are queued), while worker 0, having found nothing, sleeps deeply if it sees worker 1
/// asleep (as `WorkerLocal::main_loop` decides), lightly otherwise (it would look
/// again after its nap: under loom it just stops). `batch`: worker 1 queues two
/// tasks and leaves them (it computes for ever); else it queues one, runs it
/// itself, and queues another. Worker 0 must not sleep deeply with a task queued
/// and nobody waking it (loom reports it asleep for ever).
fn weak_notify_once_reaches_a_deep_sleeper(batch: bool) {
    let idle = Arc::new(Idle::new(2));
    let work = Arc::new(AtomicUsize::new(0));
    // Worker 1's earlier period awake spent its notifies; then it slept.
    idle.notify_weak_once(1);
    idle.notify_one_once(1);
    idle.prepare_sleep(1, false);
    let (i2, w2) = (idle.clone(), work.clone());
    let sleeper = thread::spawn(move || {
        i2.prepare_sleep(0, false);
        if w2.load(Ordering::SeqCst) != 0 || i2.others_awake() {
            // Sees a task, or a worker awake that may queue one: it would sleep
            // lightly and look again (no timeout under loom).
            if i2.cancel_sleep(0) {
                i2.end_search();
            }
            return;
        }
        // Deeply: only a notify wakes it.
        assert!(i2.sleep(0, None));
        i2.end_search();
    });
    if idle.cancel_sleep(1) {
        idle.end_search();
    }
    work.fetch_add(1, Ordering::SeqCst);
    idle.notify_weak_once(1);
    if !batch {
        work.store(0, Ordering::SeqCst);
    }
    work.fetch_add(1, Ordering::SeqCst);
    if batch {
        // A queue of two: `notify_queued`'s strong notify.
        idle.notify_one_once(1);
    } else {
        idle.notify_weak_once(1);
    }
    sleeper.join().unwrap();
}

/// Catches a deep sleeper stranded by `Idle::notify_weak_once` (issue 16: one
/// weak notify per period awake, not per displaced task): worker 1 queues a lone
/// task, runs it itself, and queues another (see
/// `weak_notify_once_reaches_a_deep_sleeper`). (Breaking it: take the re-arm out
/// of `prepare_sleep`, so the notify already spent in worker 1's earlier period
/// awake is not made again; or let worker 0 sleep deeply without looking at
/// `others_awake`, so it goes deep between worker 1's two tasks: loom reports
/// the deadlock.)
#[test]
fn weak_notify_once_per_period_awake() {
    loom::model(|| weak_notify_once_reaches_a_deep_sleeper(false));
}

/// Catches a batch of tasks stranded on a busy worker (issue 16, w17s: a queue of
/// two or more no longer calls `notify_one` on every push, only
/// `notify_one_once`, the first since its worker slept; light sleepers take
/// from the queue once its worker leaves it unemptied for `GRACE`): worker 1
/// queues two tasks and computes for ever; a deep sleeper must be woken by
/// one of its first notifies. (Breaking it: take the re-arms out of
/// `prepare_sleep`, so worker 1's notifies were spent before it slept, and
/// loom reports worker 0 asleep for ever; checked.)
#[test]
fn weak_notify_once_covers_a_batch() {
    loom::model(|| weak_notify_once_reaches_a_deep_sleeper(true));
}

/// Catches a strong notification that misses a light sleeper: a worker that chose
/// to sleep lightly (under loom its timeout never fires) must still be woken by
/// `notify_one`. (Breaking it: make `notify_one` look at deep sleepers only, or
/// `make_light` forget to move the worker between the counts, and loom reports a
/// deadlock.)
#[test]
fn idle_notify_one_wakes_light_sleeper() {
    loom::model(|| work_reaches_worker(false, true, Idle::notify_one));
}

/// Catches a sleeper that misses an earlier timer (issue 16): worker 0 goes to
/// sleep until its own deadline (100) while worker 1 arms a timer due at 10 and
/// goes on computing. The sleeper publishes its deadline and re-reads the timers
/// (`Idle::publish_deadline`, as `WorkerLocal::publish_deadline` does); the
/// armer publishes its timer and then reads the deadlines (`Idle::timer_armed`).
/// Either the sleeper sees the timer (and would sleep only until it) or the
/// armer wakes it; loom reports the sleeper asleep for ever otherwise (its
/// timeout never fires under loom). (Breaking it: drop the fence in
/// `publish_deadline`, or re-read the timers before publishing, and loom finds
/// the sleeper asleep past the timer.)
#[test]
fn timer_armed_wakes_a_later_sleeper() {
    use crate::sched::NO_DEADLINE;
    use loom::sync::atomic::AtomicU64;
    const OWN: u64 = 100;
    const TIMER: u64 = 10;
    loom::model(|| {
        let idle = Arc::new(Idle::new(2));
        // The armer's worker's earliest timer (`Timers::earliest`).
        let earliest = Arc::new(AtomicU64::new(NO_DEADLINE));
        let (i2, e2) = (idle.clone(), earliest.clone());
        let sleeper = thread::spawn(move || {
            i2.prepare_sleep(0, false);
            // Found nothing; its own deadline first, then the timers again.
            i2.publish_deadline(0, OWN);
            let until = OWN.min(e2.load(Ordering::Acquire));
            if until <= TIMER {
                // Sleeps until the timer: in time (loom has no clock to wait for).
                if i2.cancel_sleep(0) {
                    i2.end_search();
                }
            } else {
                // Past the timer: only a wake from the armer helps.
                let woken = i2.sleep(0, Some(std::time::Duration::from_nanos(until)));
                assert!(woken);
                i2.end_search();
            }
            i2.clear_deadline(0);
        });
        earliest.store(TIMER, Ordering::Release);
        idle.timer_armed(TIMER);
        sleeper.join().unwrap();
    });
}

/// Catches a lost wake-up in `Park::park_releasing` for processes: the worker parks
/// the process with plain stores (`park_sole_uncontended`) while the process still
/// holds the channel lock, and only then releases it, so the unparker, who must
/// take that lock to find the waiter, always finds the process parked. (Breaking
/// it: release the lock before `park_sole_uncontended`, and loom finds the unpark
/// landing between its load and store: nobody runs the process.)
#[test]
fn park_releasing_parks_before_the_unlock() {
    loom::model(|| {
        let st = Arc::new(ProcState::new());
        let registered = Arc::new(Mutex::new(false));
        let runs = Arc::new(AtomicUsize::new(0));
        let (s2, g2, r2) = (st.clone(), registered.clone(), runs.clone());
        let worker = thread::spawn(move || {
            // The process registers its waiter under the lock and switches out ...
            let mut g = g2.lock().unwrap();
            *g = true;
            // ... and the worker parks it, then releases the lock for it.
            let parked = s2.park_sole_uncontended();
            drop(g);
            if !parked {
                r2.fetch_add(1, Ordering::SeqCst);
            }
        });
        // The partner finds the waiter under the lock, then unparks.
        loop {
            if *registered.lock().unwrap() {
                break;
            }
            thread::yield_now();
        }
        if st.unpark() {
            runs.fetch_add(1, Ordering::SeqCst);
        }
        worker.join().unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    });
}

/// One unpark racing a process that checks for a token and then is parked by its
/// worker with `park` (true: parked): exactly one of them must end up running it.
/// Returns the state afterwards.
fn unpark_races_park(park: fn(&ProcState) -> bool) -> Arc<ProcState> {
    let st = Arc::new(ProcState::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let (s2, r2) = (st.clone(), runs.clone());
    let worker = thread::spawn(move || {
        // The process checks for a token before suspending ...
        if s2.take_token() {
            r2.fetch_add(1, Ordering::SeqCst);
            return;
        }
        // ... and the worker parks it after the switch.
        if !park(&s2) {
            r2.fetch_add(1, Ordering::SeqCst);
        }
    });
    if st.unpark() {
        runs.fetch_add(1, Ordering::SeqCst);
    }
    worker.join().unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    st
}

/// Catches a double run or a lost wake-up when an unpark races the worker's
/// post-switch `try_park`: exactly one of them must end up running the process
/// (the worker when a token was already there, else the unparker).
#[test]
fn unpark_races_post_switch_park() {
    loom::model(|| {
        unpark_races_park(|s| s.try_park().is_some());
    });
}

/// The same race for a park without a timer (`try_park_sole`), whose unpark ends
/// the park with a load and a plain store instead of a compare-and-swap: catches a
/// double run or a lost wake-up if that shortcut is taken while the worker can
/// still be between its check and its park (breaking it: let `unpark` store
/// without its check of the PARKED_SOLE tag, or make `try_park_sole` a plain
/// store, and loom reports two runs or none).
#[test]
fn unpark_races_post_switch_park_sole() {
    loom::model(|| {
        let st = unpark_races_park(ProcState::try_park_sole);
        // Whoever ran it left it RUNNING with no token: the next park parks.
        assert!(!st.take_token());
        assert!(st.try_park_sole());
        assert!(st.is_parked());
    });
}

/// Catches state the unparker of a PARKED_SOLE process fails to see: what the
/// parking worker wrote before `try_park_sole` must be visible to the party that
/// took the process over with the plain-store unpark (breaking it: make the
/// unpark's first load `Relaxed`, and loom reports the stale read).
#[test]
fn sole_unpark_hands_over_process_state() {
    loom::model(|| {
        let st = Arc::new(ProcState::new());
        let data = Arc::new(loom::cell::UnsafeCell::new(0u32));
        let (s2, d2) = (st.clone(), data.clone());
        let worker = thread::spawn(move || {
            // The process's last writes before it suspends.
            // SAFETY: only this thread touches `data` before the park.
            d2.with_mut(|p| unsafe { *p = 7 });
            s2.try_park_sole()
        });
        // The unparker tries until the park happened (one unpark per park: it
        // only unparks once it saw the process parked).
        loop {
            if st.is_parked() {
                break;
            }
            thread::yield_now();
        }
        assert!(st.unpark());
        // SAFETY: the unpark made us the owner; the worker no longer writes.
        assert_eq!(data.with(|p| unsafe { *p }), 7);
        assert!(worker.join().unwrap());
    });
}

/// A park with a timer and a sole park of the next generation: the stale timer
/// must not fire a PARKED_SOLE process (breaking it: let `fire` match any parked
/// kind).
#[test]
fn stale_timer_does_not_fire_sole_park() {
    loom::model(|| {
        let st = Arc::new(ProcState::new());
        let g1 = st.next_gen();
        assert_eq!(st.try_park(), Some(g1));
        assert!(st.unpark());
        let s2 = st.clone();
        let t = thread::spawn(move || s2.fire(g1 + 1));
        assert!(st.try_park_sole());
        assert!(!t.join().unwrap(), "a timer fired a park without a timer");
        assert!(st.is_parked());
        assert!(st.unpark());
    });
}

/// Catches a process resumed twice (or never) when its `park_until` timer fires
/// while an unpark arrives: the worker arms the timer and parks under the timer
/// lock, the timer fires under the same lock only for the same park generation,
/// and whoever wins the transition out of PARKED resumes it.
#[test]
fn unpark_races_timer() {
    loom::model(|| {
        let st = Arc::new(ProcState::new());
        let timers: Arc<Mutex<Option<u64>>> = Arc::new(Mutex::new(None));
        let runs = Arc::new(AtomicUsize::new(0));

        let (s2, t2, r2) = (st.clone(), timers.clone(), runs.clone());
        let worker = thread::spawn(move || {
            let mut g = t2.lock().unwrap();
            let gen = s2.next_gen();
            *g = Some(gen);
            match s2.try_park() {
                Some(got) => assert_eq!(got, gen),
                None => {
                    *g = None;
                    r2.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        let (s3, t3, r3) = (st.clone(), timers.clone(), runs.clone());
        let timer = thread::spawn(move || {
            let mut g = t3.lock().unwrap();
            if let Some(gen) = g.take() {
                if s3.fire(gen) {
                    r3.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        if st.unpark() {
            runs.fetch_add(1, Ordering::SeqCst);
        }
        worker.join().unwrap();
        timer.join().unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    });
}

/// Catches a stale timer waking a later park: a timer armed for park generation
/// `g` must not fire the process once it parked again (generation `g + 1`).
#[test]
fn stale_timer_does_not_fire_next_park() {
    loom::model(|| {
        let st = Arc::new(ProcState::new());
        let g1 = st.next_gen();
        assert_eq!(st.try_park(), Some(g1));
        assert!(st.unpark());
        let s2 = st.clone();
        let t = thread::spawn(move || s2.fire(g1));
        let g2 = st.try_park().unwrap();
        assert_ne!(g1, g2);
        assert!(!t.join().unwrap(), "stale timer fired");
        assert!(st.is_parked());
    });
}

/// Catches a lost or torn result at completion: the joiner either sees DONE and the
/// value, or publishes its waiter first and is woken after the value was written.
#[test]
fn join_and_complete() {
    loom::model(|| {
        let slot = Arc::new(JoinSlot::new());
        let s2 = slot.clone();
        let t = thread::spawn(move || s2.complete(42usize));
        assert_eq!(slot.join(), 42);
        t.join().unwrap();
    });
}
