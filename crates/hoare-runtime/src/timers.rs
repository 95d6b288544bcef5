//! One worker's timers: the processes parked in `park_until` on it, by deadline.
//!
//! A process's timer is armed by the worker it suspended on (`Timers::park_until`).
//! Whichever comes first, an unpark or the deadline, takes it out: an unparked
//! process withdraws its entry on its way out of the wait (`Timers::cancel`,
//! through its `TimerKey`); a due timer fires it (`Timers::fire_due`, under the
//! lock that withdrawal waits for, so the process is still alive there). The
//! earliest deadline is kept in an atomic so that a worker can look at every
//! worker's timers with one load each.

use crate::proc::{Task, TimerKey};
use crate::sync::lock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// An earliest deadline that stands for none.
pub(crate) const NO_TIMER: u64 = u64::MAX;

struct TimerEntry {
    task: Task,
    gen: u64,
}

#[derive(Default)]
struct TimerMap {
    map: BTreeMap<(Instant, u64), TimerEntry>,
    seq: u64,
}

/// One worker's timers.
pub(crate) struct Timers {
    map: Mutex<TimerMap>,
    /// Earliest deadline of `map` in ns since `epoch`, or `NO_TIMER`.
    earliest: AtomicU64,
    /// The runtime's epoch (the same for all its workers).
    epoch: Instant,
}

/// `t` in ns since `epoch`, saturated below `NO_TIMER` (an `as` cast would wrap a
/// deadline ~585 years away to a small number: a worker would spin).
pub(crate) fn nanos(epoch: Instant, t: Instant) -> u64 {
    let ns = t.saturating_duration_since(epoch).as_nanos();
    u64::try_from(ns).map_or(NO_TIMER - 1, |n| n.min(NO_TIMER - 1))
}

impl Timers {
    pub(crate) fn new(epoch: Instant) -> Self {
        Self {
            map: Mutex::new(TimerMap::default()),
            earliest: AtomicU64::new(NO_TIMER),
            epoch,
        }
    }

    /// The earliest deadline in ns since the runtime's epoch, or `NO_TIMER`.
    pub(crate) fn earliest(&self) -> u64 {
        self.earliest.load(Ordering::Acquire)
    }

    fn publish_earliest(&self, t: &TimerMap) {
        let e = t
            .map
            .keys()
            .next()
            .map_or(NO_TIMER, |(d, _)| nanos(self.epoch, *d));
        self.earliest.store(e, Ordering::Release);
    }

    /// Arms a timer at `deadline` for the process of `t`, which has just suspended
    /// in `park_until` on worker `worker` (these timers' worker), and parks it.
    /// Returns `false`, with the timer withdrawn, if an unpark came first: the
    /// process goes on running.
    pub(crate) fn park_until(&self, t: Task, deadline: Instant, worker: usize) -> bool {
        let proc = t.proc();
        let mut timers = lock(&self.map);
        timers.seq += 1;
        let seq = timers.seq;
        let gen = proc.state.next_gen();
        timers
            .map
            .insert((deadline, seq), TimerEntry { task: t, gen });
        proc.timer.set(Some(TimerKey {
            worker,
            deadline,
            seq,
        }));
        // The timer lock is held across the park so no timer can fire (and no
        // cancel can run) before the process is really parked.
        match proc.state.try_park() {
            Some(g) => {
                debug_assert_eq!(g, gen);
                self.publish_earliest(&timers);
                true
            }
            None => {
                timers.map.remove(&(deadline, seq));
                proc.timer.set(None);
                false
            }
        }
    }

    /// Withdraws the timer of `key` (which names these timers' worker), unless
    /// it fired.
    pub(crate) fn cancel(&self, key: TimerKey) {
        let mut t = lock(&self.map);
        t.map.remove(&(key.deadline, key.seq));
        self.publish_earliest(&t);
    }

    /// When a timer is due: now, if the earliest deadline has passed (one load,
    /// and the clock only if a timer is set).
    pub(crate) fn due(&self) -> Option<Instant> {
        let e = self.earliest();
        if e == NO_TIMER {
            return None;
        }
        let now = Instant::now();
        (nanos(self.epoch, now) >= e).then_some(now)
    }

    /// Fires the timers due at `now` and pushes the processes it took over to
    /// `out`. With `blocking` false it does nothing if the lock is taken (another
    /// worker's timers, looked at in passing).
    pub(crate) fn fire_due(&self, now: Instant, blocking: bool, out: &mut Vec<Task>) {
        let mut t: MutexGuard<'_, TimerMap> = if blocking {
            lock(&self.map)
        } else {
            match self.map.try_lock() {
                Ok(t) => t,
                Err(_) => return,
            }
        };
        while let Some(entry) = t.map.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let e = entry.remove();
            let p = e.task.proc();
            // Under the timer lock: a process that was unparked normally waits for
            // this lock to cancel its entry, so it is still alive here.
            if p.state.fire(e.gen) {
                p.timed_out.set(true);
                p.timer.set(None);
                out.push(e.task);
            }
        }
        self.publish_earliest(&t);
    }
}
