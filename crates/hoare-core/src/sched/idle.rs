//! How workers fall asleep and how new work wakes one.
//!
//! Tokio's "searching" idea (Go's spinning Ms): a worker that looks for work
//! counts itself as *searching*. Whoever makes work available calls
//! [`Idle::notify_one`], which wakes a sleeping worker only if nobody is searching,
//! because a searcher will find the work. The last searcher to give up registers as
//! a sleeper first and then re-checks every queue ([`Idle::prepare_sleep`] then the
//! caller's re-check, with a `SeqCst` fence between): either it sees the new work or
//! the producer sees it asleep and wakes it. A searcher that finds work and was the
//! last one wakes another worker ([`Idle::end_search`]), so a burst of work spreads.

use crate::sync::{fence, lock, AtomicUsize, Condvar, Mutex, Ordering};
use std::time::Duration;

const SEARCH_ONE: usize = 1;
const IDLE_ONE: usize = 1 << 16;
const SEARCH_MASK: usize = IDLE_ONE - 1;

/// One worker's sleeping place: a wake flag under a mutex, and a condvar.
#[derive(Debug, Default)]
pub struct Sleeper {
    woken: Mutex<bool>,
    cv: Condvar,
}

impl Sleeper {
    fn wake(&self) {
        *lock(&self.woken) = true;
        self.cv.notify_one();
    }

    /// Sleeps until woken or `timeout` passes; returns whether it was woken (and
    /// consumes the wake).
    fn sleep(&self, timeout: Option<Duration>) -> bool {
        let mut g = lock(&self.woken);
        #[cfg(not(loom))]
        if let Some(t) = timeout {
            let deadline = std::time::Instant::now() + t;
            while !*g {
                let now = std::time::Instant::now();
                if now >= deadline {
                    return false;
                }
                g = match self.cv.wait_timeout(g, deadline - now) {
                    Ok((g, _)) => g,
                    Err(p) => p.into_inner().0,
                };
            }
            *g = false;
            return true;
        }
        #[cfg(loom)]
        let _ = timeout;
        while !*g {
            g = match self.cv.wait(g) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        *g = false;
        true
    }

    fn consume(&self) {
        *lock(&self.woken) = false;
    }
}

/// The idle/searching bookkeeping of a runtime's workers.
#[derive(Debug)]
pub struct Idle {
    /// searching count (low 16 bits) | sleeping count (high bits).
    state: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    parkers: Box<[Sleeper]>,
}

impl Idle {
    /// Bookkeeping for `workers` workers, all running and none searching.
    pub fn new(workers: usize) -> Self {
        assert!(workers < SEARCH_MASK);
        Self {
            state: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            parkers: (0..workers).map(|_| Sleeper::default()).collect(),
        }
    }

    /// Whether some worker sleeps or searches (a hint: work kept private to one
    /// worker should rather be made stealable then).
    #[inline]
    pub fn others_idle(&self) -> bool {
        self.state.load(Ordering::Relaxed) != 0
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.parkers.len()
    }

    /// Call after making work any worker may take: wakes a sleeping worker unless a
    /// worker is searching (it will find the work) or none sleeps.
    #[inline]
    pub fn notify_one(&self) {
        fence(Ordering::SeqCst);
        let s = self.state.load(Ordering::SeqCst);
        if s & SEARCH_MASK != 0 || s < IDLE_ONE {
            return;
        }
        self.notify_slow(None);
    }

    /// Call after making work only worker `i` may take (a pinned process): wakes it
    /// if it sleeps.
    pub fn notify_worker(&self, i: usize) {
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::SeqCst) < IDLE_ONE {
            return;
        }
        self.notify_slow(Some(i));
    }

    /// Wakes every sleeping worker (shutdown).
    pub fn notify_all(&self) {
        fence(Ordering::SeqCst);
        let mut sl = lock(&self.sleepers);
        for i in sl.drain(..) {
            self.state
                .fetch_add(SEARCH_ONE.wrapping_sub(IDLE_ONE), Ordering::SeqCst);
            self.parkers[i].wake();
        }
    }

    #[cold]
    fn notify_slow(&self, target: Option<usize>) {
        let mut sl = lock(&self.sleepers);
        let s = self.state.load(Ordering::SeqCst);
        let pos = match target {
            Some(i) => sl.iter().position(|&w| w == i),
            None if s & SEARCH_MASK != 0 => None,
            None => sl.len().checked_sub(1),
        };
        let Some(pos) = pos else { return };
        let i = sl.swap_remove(pos);
        // The woken worker starts out searching. The flag is set under the sleepers
        // lock so `cancel_sleep`, seeing the worker gone from the list, knows the
        // flag is already up and can consume it.
        self.state
            .fetch_add(SEARCH_ONE.wrapping_sub(IDLE_ONE), Ordering::SeqCst);
        self.parkers[i].wake();
        drop(sl);
    }

    /// A worker with nothing to run asks to start searching. `false` when half the
    /// workers already search (it should go to sleep instead).
    pub fn try_begin_search(&self) -> bool {
        let s = self.state.load(Ordering::SeqCst);
        if 2 * (s & SEARCH_MASK) >= self.parkers.len() {
            return false;
        }
        self.state.fetch_add(SEARCH_ONE, Ordering::SeqCst);
        true
    }

    /// A searching worker found work. Returns `true` if it was the last searcher:
    /// the caller must then [`notify_one`](Self::notify_one) so other pending work
    /// gets a worker too.
    pub fn end_search(&self) -> bool {
        let prev = self.state.fetch_sub(SEARCH_ONE, Ordering::SeqCst);
        debug_assert!(prev & SEARCH_MASK != 0);
        prev & SEARCH_MASK == 1
    }

    /// Worker `i` registers as a sleeper (stopping its search if `searching`).
    /// The caller must then re-check every queue and either
    /// [`cancel_sleep`](Self::cancel_sleep) or [`sleep`](Self::sleep).
    pub fn prepare_sleep(&self, i: usize, searching: bool) {
        let mut sl = lock(&self.sleepers);
        sl.push(i);
        let delta = if searching {
            IDLE_ONE - SEARCH_ONE
        } else {
            IDLE_ONE
        };
        self.state.fetch_add(delta, Ordering::SeqCst);
        drop(sl);
        // Pairs with the fence in `notify_*`: either the re-check that follows sees
        // the new work, or the notifier sees this sleeper.
        fence(Ordering::SeqCst);
    }

    /// Worker `i` found work after [`prepare_sleep`](Self::prepare_sleep). Returns
    /// whether it is now searching (a notifier picked it meanwhile and counted it as
    /// a searcher) — the caller then must end that search as usual.
    pub fn cancel_sleep(&self, i: usize) -> bool {
        let mut sl = lock(&self.sleepers);
        if let Some(pos) = sl.iter().position(|&w| w == i) {
            sl.swap_remove(pos);
            self.state.fetch_sub(IDLE_ONE, Ordering::SeqCst);
            false
        } else {
            // A notifier removed us and set our wake flag (under this lock): consume
            // it so the next sleep does not return at once.
            self.parkers[i].consume();
            drop(sl);
            true
        }
    }

    /// Worker `i` sleeps after [`prepare_sleep`](Self::prepare_sleep) until woken or
    /// `timeout` passes. Returns whether it is now searching (woken by a notifier).
    pub fn sleep(&self, i: usize, timeout: Option<Duration>) -> bool {
        if self.parkers[i].sleep(timeout) {
            return true;
        }
        self.cancel_sleep(i)
    }
}
