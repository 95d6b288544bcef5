//! The worker thread: its loop, which runs what `find_local` gives, searches the
//! other workers when that is nothing, and sleeps when they have nothing either
//! (lightly, watching work a busy worker leaves waiting; deeply otherwise).

use super::run::{MAX_STREAK_SHARED, MAX_STREAK_SOLO};
use super::WorkerLocal;
use crate::context;
use crate::proc::Task;
use crate::shared::Shared;
use crate::signal;
use crate::timers::nanos;
use crossbeam_deque::Worker;
use hoare_core::park;
use hoare_core::sched::NO_DEADLINE;
use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Steal rounds a searching worker makes before it sleeps.
const SPIN_ROUNDS: usize = 32;
/// First and longest nap of a worker that sleeps lightly, watching such a task.
const NAP_MIN: Duration = Duration::from_micros(50);
const NAP_MAX: Duration = Duration::from_micros(500);

/// The body of worker thread `index`, whose queue is `queue`.
pub(crate) fn worker_thread(shared: Arc<Shared>, index: usize, queue: Worker<Task>) {
    park::set_worker_index(index);
    let _alt = signal::ensure_altstack();
    let local = WorkerLocal {
        index,
        shared: Arc::as_ptr(&shared),
        me: &shared.workers[index],
        queue,
        solo_queue: UnsafeCell::new(VecDeque::new()),
        yielded: UnsafeCell::new(VecDeque::new()),
        free: UnsafeCell::new(Vec::with_capacity(super::LOCAL_SLOTS + 1)),
        ids: Cell::new((0, 0)),
        streak_start: Cell::new(0),
        max_streak: if shared.workers.len() == 1 {
            MAX_STREAK_SOLO
        } else {
            MAX_STREAK_SHARED
        },
        watch: UnsafeCell::new(vec![[None; 2]; shared.workers.len()]),
        saw_pending: Cell::new(false),
        nap: Cell::new(NAP_MIN),
        solo: shared.workers.len() == 1,
        running: Cell::new(ptr::null()),
    };
    context::set_current_worker((&local as *const WorkerLocal).cast());
    local.main_loop();
    context::set_current_worker(ptr::null());
    park::set_worker_index(usize::MAX);
}

impl WorkerLocal {
    /// A searching worker found work: it stops searching, and if it was the last
    /// searcher wakes another worker, so that other pending work gets one too.
    fn end_search(&self) {
        let idle = &self.shared().idle;
        if idle.end_search() {
            idle.notify_one();
        }
    }

    fn find_any(&self) -> Option<Task> {
        self.find_local().or_else(|| self.steal_others())
    }

    /// Sleeps until notified or `timeout` (see `Idle::sleep`); in the I/O poller
    /// if the runtime has one (see `io`). Returns whether now searching.
    #[inline]
    fn idle_sleep(&self, timeout: Option<Duration>, light: bool) -> bool {
        #[cfg(feature = "io")]
        return self.sleep_maybe_polling(timeout, light);
        #[cfg(not(feature = "io"))]
        {
            let _ = light;
            self.shared().idle.sleep(self.index, timeout)
        }
    }

    /// Publishes until when this worker is to sleep (`timeout` from now), then
    /// re-reads every worker's timers: a timer armed meanwhile is either seen
    /// here (the sleep ends at it) or wakes this worker (see
    /// `Idle::timer_armed`). Returns the timeout to sleep for.
    fn publish_deadline(&self, timeout: Option<Duration>) -> Option<Duration> {
        let sh = self.shared();
        if self.solo {
            // Nobody else arms a timer while this worker sleeps.
            return timeout;
        }
        let now = Instant::now();
        // `nanos` stays below `NO_DEADLINE`.
        let until = timeout
            .and_then(|t| now.checked_add(t))
            .map_or(NO_DEADLINE, |u| nanos(sh.epoch, u));
        sh.idle.publish_deadline(self.index, until);
        match (timeout, sh.sleep_timeout()) {
            (Some(t), Some(again)) => Some(t.min(again)),
            (t, again) => t.or(again),
        }
    }

    fn main_loop(&self) {
        let sh = self.shared();
        let mut searching = false;
        // The last sleep was a light one that timed out: look once, without the
        // search's spinning, and nap again if there is still nothing.
        let mut napped = false;
        'outer: loop {
            if sh.shutdown.load(Ordering::Relaxed) {
                break;
            }
            if let Some(t) = self.find_local() {
                if searching {
                    searching = false;
                    self.end_search();
                }
                // SAFETY: we hold the task.
                unsafe { self.run(t) };
                continue;
            }
            // A burst of spawns outruns the stack pool's thread (at idle
            // priority, it waits for a core a spinning worker holds): prepare
            // stack slots instead of searching while that lasts, looking for
            // processes between batches. That is work: the search ends first.
            if sh.pool.help_prepare() {
                if searching {
                    searching = false;
                    self.end_search();
                }
                loop {
                    if let Some(t) = self.find_any() {
                        // SAFETY: we hold the task.
                        unsafe { self.run(t) };
                        continue 'outer;
                    }
                    if sh.shutdown.load(Ordering::Relaxed) || !sh.pool.help_prepare() {
                        break;
                    }
                }
            }
            if !searching && !napped {
                searching = sh.idle.try_begin_search();
            }
            napped = false;
            if searching {
                for round in 0..SPIN_ROUNDS {
                    if let Some(t) = self.steal_others().or_else(|| self.find_local()) {
                        searching = false;
                        self.end_search();
                        // SAFETY: we hold the task.
                        unsafe { self.run(t) };
                        continue 'outer;
                    }
                    if sh.shutdown.load(Ordering::Relaxed) {
                        break;
                    }
                    if round < SPIN_ROUNDS / 2 {
                        std::hint::spin_loop();
                    } else {
                        // A runtime with an I/O poller: stop searching and go to
                        // sleep (in the poller, if free) instead of yielding the
                        // thread: a reply from the network is then seen at once
                        // by epoll's wake-up, where each yield could hand the
                        // core to another program for a time slice while the
                        // reply waited (issue 14: the network round trip).
                        #[cfg(feature = "io")]
                        if sh.io.get().is_some() {
                            break;
                        }
                        std::thread::yield_now();
                    }
                }
            }
            sh.idle.prepare_sleep(self.index, searching);
            self.saw_pending.set(false);
            if let Some(t) = self.find_any() {
                self.nap.set(NAP_MIN);
                // A notifier may have picked this worker to search meanwhile.
                if sh.idle.cancel_sleep(self.index) {
                    self.end_search();
                }
                searching = false;
                // SAFETY: we hold the task.
                unsafe { self.run(t) };
                continue;
            }
            if sh.shutdown.load(Ordering::Relaxed) {
                sh.idle.cancel_sleep(self.index);
                break;
            }
            let mut timeout = sh.sleep_timeout();
            let light = if self.saw_pending.get() {
                // Work is waiting on a busy worker: look again after a nap (longer
                // each time that worker keeps up by itself).
                let nap = self.nap.get();
                self.nap.set((nap * 2).min(NAP_MAX));
                Some(nap)
            } else if sh.idle.others_awake() {
                // Another worker runs: it may leave a woken process in its next
                // slot while it computes (hand-offs do not notify), so look again
                // now and then.
                Some(NAP_MAX)
            } else {
                self.nap.set(NAP_MIN);
                None
            };
            if let Some(nap) = light {
                sh.idle.make_light(self.index);
                timeout = Some(timeout.map_or(nap, |t| t.min(nap)));
            }
            let timeout = self.publish_deadline(timeout);
            searching = self.idle_sleep(timeout, light.is_some());
            sh.idle.clear_deadline(self.index);
            napped = light.is_some() && !searching;
        }
        // Give our stack cache back so the shutdown sweep sees one pool.
        self.return_slots();
    }
}
