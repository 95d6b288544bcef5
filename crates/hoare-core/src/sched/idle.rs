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
//!
//! Sleepers come in two kinds. A *deep* sleeper saw no work anywhere and sleeps until
//! notified. A *light* sleeper saw work it chose to leave alone (tasks queued on a
//! worker that is busy running short processes and will get to them within
//! microseconds: stealing them would split a communicating group of processes
//! across cores) and sleeps with a timeout, after which it looks again. Work that
//! any worker should take at once ([`Idle::notify_one`]) wakes either kind; tasks a
//! busy worker queues on itself ([`Idle::notify_weak`], [`Idle::notify_weak_once`])
//! wake only a deep sleeper, since a light one is already watching and will steal
//! them if their worker stops keeping up; the first queue of two or more since
//! that worker last slept ([`Idle::notify_one_once`]) wakes either kind, so a
//! fan-out gets a second worker without waiting for a nap.
//!
//! A sleeper with a deadline (its runtime's earliest timer, or the end of a
//! nap) publishes it ([`Idle::publish_deadline`]) and then re-reads the timers;
//! whoever arms a timer publishes it where sleepers read and then looks at the
//! published deadlines ([`Idle::timer_armed`]), waking a sleeper that would
//! sleep past it: a `SeqCst` fence on each side, so either the sleeper's re-read
//! sees the new timer or the armer sees the sleeper's deadline. Without it a
//! timer armed on a worker that then computes would wait for the sleeper's own
//! (later) deadline.

use crate::park::Unparker;
use crate::sync::{self, fence, lock, AtomicBool, AtomicU64, Condvar, Mutex, Ordering};
use std::time::Duration;

const SEARCH_ONE: u64 = 1;
const SEARCH_MASK: u64 = (1 << 16) - 1;

/// The most workers one [`Idle`] (so one runtime) can have: 65,534. The counts of
/// searching and of lightly sleeping workers are 16-bit fields of one atomic
/// word, which must not overflow into each other.
pub const MAX_WORKERS: usize = SEARCH_MASK as usize - 1;
const LIGHT_ONE: u64 = 1 << 16;
const DEEP_ONE: u64 = 1 << 32;
/// Any sleeper, light or deep.
const SLEEP_MASK: u64 = !SEARCH_MASK;

/// One worker's sleeping place: a wake flag under a mutex, and a condvar.
#[derive(Debug, Default)]
struct Sleeper {
    woken: Mutex<SleepState>,
    cv: Condvar,
    /// The worker's next [`Idle::notify_weak_once`] must notify: set when it
    /// registers as a sleeper, cleared by that notify (only the worker touches it).
    weak_due: AtomicBool,
    /// The same for [`Idle::notify_one_once`].
    strong_due: AtomicBool,
}

/// What a [`Sleeper`]'s mutex guards.
#[derive(Debug, Default)]
struct SleepState {
    woken: bool,
    /// Set while the worker sleeps in something other than the condvar (an I/O
    /// poller, see [`Idle::sleep_in`]): how to make that return.
    interrupt: Option<Unparker>,
}

impl Sleeper {
    fn wake(&self) {
        let mut g = lock(&self.woken);
        g.woken = true;
        // Under the lock: the worker sets and clears `interrupt` under it too, so
        // it is valid here, and a worker about to block in its poller either sees
        // `woken` first or has published `interrupt` (whose effect the poller
        // keeps until it polls: mio's `Waker` is an eventfd).
        match g.interrupt {
            // SAFETY: see `Idle::sleep_in`: valid while set.
            Some(u) => unsafe { u.unpark() },
            None => self.cv.notify_one(),
        }
    }

    /// Like `sleep`, but blocks in `block(timeout)` instead of the condvar; a
    /// `wake` meanwhile calls `interrupt`. Returns whether it was woken.
    fn sleep_in(
        &self,
        timeout: Option<Duration>,
        interrupt: Unparker,
        block: impl FnOnce(Option<Duration>),
    ) -> bool {
        {
            let mut g = lock(&self.woken);
            if g.woken {
                g.woken = false;
                return true;
            }
            g.interrupt = Some(interrupt);
        }
        block(timeout);
        let mut g = lock(&self.woken);
        g.interrupt = None;
        std::mem::take(&mut g.woken)
    }

    /// Sleeps until woken or `timeout` passes; returns whether it was woken (and
    /// consumes the wake). Under loom the timeout never fires.
    fn sleep(&self, timeout: Option<Duration>) -> bool {
        let (mut g, woken) =
            sync::wait_until(&self.cv, lock(&self.woken), timeout, |s: &SleepState| {
                s.woken
            });
        g.woken = false;
        woken
    }

    fn consume(&self) {
        lock(&self.woken).woken = false;
    }
}

/// What [`Idle::wait_all_asleep`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watch {
    /// Every worker sleeps without a deadline; the number of that state.
    AllAsleep(u64),
    /// The timeout passed first.
    TimedOut,
    /// [`Idle::stop_watch`] was called.
    Stopped,
}

/// The idle/searching bookkeeping of a runtime's workers.
#[derive(Debug)]
pub struct Idle {
    /// searching count (bits 0–15) | light sleepers (16–31) | deep sleepers (32–).
    state: AtomicU64,
    sleepers: Mutex<Sleepers>,
    parkers: Box<[Sleeper]>,
    /// Signalled (under `sleepers`) when every worker sleeps without a deadline,
    /// and at [`stop_watch`](Idle::stop_watch): a deadlock detector waits on it.
    all_asleep: Condvar,
    /// Per worker: until when it sleeps (see
    /// [`publish_deadline`](Idle::publish_deadline)), [`AWAKE`] when it does not.
    deadlines: Box<[AtomicU64]>,
}

/// A worker's published deadline while it does not sleep: no timer is earlier.
pub const AWAKE: u64 = 0;
/// A worker's published deadline while it sleeps until notified: every timer is
/// earlier.
pub const NO_DEADLINE: u64 = u64::MAX;

/// The registered sleepers, and which of them sleep lightly.
#[derive(Debug)]
struct Sleepers {
    list: Vec<usize>,
    light: Box<[bool]>,
    /// Which workers sleep without a deadline (and are still in `list`).
    indefinite: Box<[bool]>,
    /// How many do: when it equals the number of workers, no worker can run
    /// anything until somebody notifies one (the deadlock detector's count).
    /// Changed only under this lock: by the sleeper going to sleep, and by whoever
    /// takes it off `list` (a notifier counts it awake before it wakes, the
    /// "waker counts" rule: otherwise the count could read "all asleep" after
    /// the notifier left and before the woken worker counted itself).
    asleep: usize,
    /// Bumped every time `asleep` reaches the number of workers.
    epoch: u64,
    /// Set by `stop_watch`.
    unwatched: bool,
}

impl Sleepers {
    /// Takes worker `i` off the indefinite count (it is leaving `list`).
    fn wake_count(&mut self, i: usize) {
        if std::mem::replace(&mut self.indefinite[i], false) {
            self.asleep -= 1;
            workers_awake_count().fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The state delta of removing worker `i` as a sleeper.
    fn one(&self, i: usize) -> u64 {
        if self.light[i] {
            LIGHT_ONE
        } else {
            DEEP_ONE
        }
    }
}

sync::global_counter! {
    /// The workers of every runtime of the program that are not asleep without a
    /// deadline (see [`workers_awake`]).
    fn workers_awake_count();
}

/// How many workers of all the program's runtimes are awake (running, searching,
/// or asleep with a deadline). A channel may link processes of two runtimes, so a
/// deadlock detector needs every runtime asleep, not only its own. Changed under
/// each runtime's sleepers lock, by the same rule as that runtime's own count.
pub fn workers_awake() -> usize {
    workers_awake_count().load(Ordering::SeqCst)
}

impl Drop for Idle {
    fn drop(&mut self) {
        let sl = lock(&self.sleepers);
        workers_awake_count().fetch_sub(self.parkers.len() - sl.asleep, Ordering::SeqCst);
    }
}

impl Idle {
    /// Bookkeeping for `workers` workers, all running and none searching.
    ///
    /// # Panics
    /// If `workers` is above [`MAX_WORKERS`] (a runtime refuses that before).
    pub fn new(workers: usize) -> Self {
        assert!(
            workers <= MAX_WORKERS,
            "hoare: {workers} workers is more than the most a runtime can have ({MAX_WORKERS})"
        );
        workers_awake_count().fetch_add(workers, Ordering::SeqCst);
        Self {
            state: AtomicU64::new(0),
            sleepers: Mutex::new(Sleepers {
                list: Vec::with_capacity(workers),
                light: vec![false; workers].into_boxed_slice(),
                indefinite: vec![false; workers].into_boxed_slice(),
                asleep: 0,
                epoch: 0,
                unwatched: false,
            }),
            parkers: (0..workers)
                .map(|_| Sleeper {
                    weak_due: AtomicBool::new(true),
                    strong_due: AtomicBool::new(true),
                    ..Sleeper::default()
                })
                .collect(),
            all_asleep: Condvar::new(),
            deadlines: (0..workers).map(|_| AtomicU64::new(AWAKE)).collect(),
        }
    }

    /// Worker `i`, registered with [`prepare_sleep`](Self::prepare_sleep), will
    /// sleep until `until` (in the clock of [`timer_armed`](Self::timer_armed)'s
    /// callers, e.g. ns since the runtime's epoch; [`NO_DEADLINE`]: until
    /// notified). The caller must then re-read every timer and sleep until the
    /// earlier of the two, and [`clear_deadline`](Self::clear_deadline) when it
    /// wakes: a timer armed meanwhile is either seen by that re-read or wakes it.
    pub fn publish_deadline(&self, i: usize, until: u64) {
        self.deadlines[i].store(until, Ordering::SeqCst);
        // Pairs with the fence in `timer_armed` (a store-buffering pattern: one of
        // the two sides sees the other's store).
        fence(Ordering::SeqCst);
    }

    /// Worker `i` no longer sleeps (see [`publish_deadline`](Self::publish_deadline)).
    #[inline]
    pub fn clear_deadline(&self, i: usize) {
        self.deadlines[i].store(AWAKE, Ordering::Relaxed);
    }

    /// Call after arming a timer due at `at` (in the clock of
    /// [`publish_deadline`](Self::publish_deadline)) and publishing it where
    /// sleepers re-read: wakes a sleeper that would sleep past `at` (it then sees
    /// the timer and sleeps until it). Returns whether it woke one. One `SeqCst`
    /// fence and a load per worker; the wake only when needed.
    pub fn timer_armed(&self, at: u64) -> bool {
        fence(Ordering::SeqCst);
        let late = self
            .deadlines
            .iter()
            .position(|d| d.load(Ordering::SeqCst) > at);
        match late {
            Some(j) => {
                self.notify_worker(j);
                true
            }
            None => false,
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

    /// Call after making work any worker may take: wakes a sleeping worker (light or
    /// deep) unless a worker is searching (it will find the work) or none sleeps.
    #[inline]
    pub fn notify_one(&self) {
        fence(Ordering::SeqCst);
        let s = self.state.load(Ordering::SeqCst);
        if s & SEARCH_MASK != 0 || s & SLEEP_MASK == 0 {
            return;
        }
        self.notify_slow(None, false);
    }

    /// Call after queueing a task on a busy worker (one displaced from its next
    /// slot, or a yield): wakes a *deep* sleeper only, unless a worker searches.
    /// Light sleepers are watching already and take the task if it waits too long.
    #[inline]
    pub fn notify_weak(&self) {
        fence(Ordering::SeqCst);
        let s = self.state.load(Ordering::SeqCst);
        if s & SEARCH_MASK != 0 || s < DEEP_ONE {
            return;
        }
        self.notify_slow(None, true);
    }

    /// [`notify_weak`](Self::notify_weak) for a task worker `i` queued on itself,
    /// but only the first since `i` last registered as a sleeper
    /// ([`prepare_sleep`](Self::prepare_sleep)); the others cost a relaxed load.
    ///
    /// Why once is enough: a worker sleeps deeply only if every other worker is
    /// a sleeper (see [`others_awake`](Self::others_awake)), so while `i` is
    /// awake no new deep sleeper appears; one that went deep before `i` woke is
    /// seen by this first notify (its fence pairs with `prepare_sleep`'s, and
    /// `i`'s way out of the sleepers' count orders after that sleeper's way
    /// in), which wakes it, or leaves it to a searcher, which will sleep lightly
    /// at most. A light sleeper watches `i`'s queue anyway. The caller must
    /// sleep deeply only when `others_awake` is false.
    #[inline]
    pub fn notify_weak_once(&self, i: usize) {
        if first_since_sleep(&self.parkers[i].weak_due) {
            self.notify_weak();
        }
    }

    /// [`notify_one`](Self::notify_one) for tasks worker `i` queued on itself
    /// (a queue of two or more), but only the first since `i` last registered
    /// as a sleeper ([`prepare_sleep`](Self::prepare_sleep)); the others cost a
    /// relaxed load. The first wakes a light sleeper at once (a fan-out of
    /// spawns gets a second worker without waiting for its nap); later ones
    /// leave light sleepers to their naps, which take from a queue its worker
    /// does not keep up with. Deep sleepers: as for
    /// [`notify_weak_once`](Self::notify_weak_once), whose argument holds for
    /// this first notify too (it wakes deep sleepers as well). The caller must
    /// sleep deeply only when [`others_awake`](Self::others_awake) is false.
    #[inline]
    pub fn notify_one_once(&self, i: usize) {
        if first_since_sleep(&self.parkers[i].strong_due) {
            self.notify_one();
        }
    }

    /// Call after making work only worker `i` may take (a pinned process): wakes it
    /// if it sleeps.
    pub fn notify_worker(&self, i: usize) {
        fence(Ordering::SeqCst);
        if self.state.load(Ordering::SeqCst) & SLEEP_MASK == 0 {
            return;
        }
        self.notify_slow(Some(i), false);
    }

    /// Wakes every sleeping worker (shutdown).
    pub fn notify_all(&self) {
        fence(Ordering::SeqCst);
        let mut sl = lock(&self.sleepers);
        while let Some(i) = sl.list.pop() {
            sl.wake_count(i);
            let one = sl.one(i);
            self.state
                .fetch_add(SEARCH_ONE.wrapping_sub(one), Ordering::SeqCst);
            self.parkers[i].wake();
        }
    }

    #[cold]
    fn notify_slow(&self, target: Option<usize>, deep_only: bool) {
        let mut sl = lock(&self.sleepers);
        let s = self.state.load(Ordering::SeqCst);
        let pos = match target {
            Some(i) => sl.list.iter().position(|&w| w == i),
            None if s & SEARCH_MASK != 0 => None,
            None if deep_only => sl.list.iter().rposition(|&w| !sl.light[w]),
            None => sl.list.len().checked_sub(1),
        };
        let Some(pos) = pos else { return };
        let i = sl.list.swap_remove(pos);
        sl.wake_count(i);
        let one = sl.one(i);
        // The woken worker starts out searching. The flag is set under the sleepers
        // lock so `cancel_sleep`, seeing the worker gone from the list, knows the
        // flag is already up and can consume it.
        self.state
            .fetch_add(SEARCH_ONE.wrapping_sub(one), Ordering::SeqCst);
        self.parkers[i].wake();
        drop(sl);
    }

    /// A worker with nothing to run asks to start searching. `false` when half the
    /// workers already search (it should go to sleep instead).
    pub fn try_begin_search(&self) -> bool {
        let s = self.state.load(Ordering::SeqCst);
        if 2 * (s & SEARCH_MASK) >= self.parkers.len() as u64 {
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

    /// Worker `i` registers as a (deep) sleeper, stopping its search if
    /// `searching`. The caller must then re-check every queue and either
    /// [`cancel_sleep`](Self::cancel_sleep) or [`sleep`](Self::sleep) (after
    /// [`make_light`](Self::make_light) if it left work alone on purpose).
    pub fn prepare_sleep(&self, i: usize, searching: bool) {
        // Its next weak and strong notifies after this sleep must look (see
        // `notify_weak_once`, `notify_one_once`).
        self.parkers[i].weak_due.store(true, Ordering::Relaxed);
        self.parkers[i].strong_due.store(true, Ordering::Relaxed);
        let mut sl = lock(&self.sleepers);
        sl.list.push(i);
        sl.light[i] = false;
        let delta = if searching {
            DEEP_ONE - SEARCH_ONE
        } else {
            DEEP_ONE
        };
        self.state.fetch_add(delta, Ordering::SeqCst);
        drop(sl);
        // Pairs with the fence in `notify_*`: either the re-check that follows sees
        // the new work, or the notifier sees this sleeper.
        fence(Ordering::SeqCst);
    }

    /// Worker `i`, registered with [`prepare_sleep`](Self::prepare_sleep), saw work
    /// it leaves alone for now and will sleep with a timeout: from now on only
    /// [`notify_one`](Self::notify_one) wakes it, not
    /// [`notify_weak`](Self::notify_weak). (If a notifier already picked it, this
    /// does nothing and its sleep returns at once.)
    pub fn make_light(&self, i: usize) {
        let mut sl = lock(&self.sleepers);
        if sl.list.contains(&i) && !sl.light[i] {
            sl.light[i] = true;
            self.state
                .fetch_add(LIGHT_ONE.wrapping_sub(DEEP_ONE), Ordering::SeqCst);
        }
    }

    /// Whether some worker is neither sleeping nor about to (it runs or searches).
    /// A worker that finds nothing sleeps lightly while this holds: a process that
    /// worker woke and left in its next slot before computing for long would
    /// otherwise wait for it, since hand-offs do not notify.
    pub fn others_awake(&self) -> bool {
        let s = self.state.load(Ordering::SeqCst);
        let sleepers = ((s >> 16) & 0xffff) + (s >> 32);
        sleepers < self.parkers.len() as u64
    }

    /// Worker `i` found work after [`prepare_sleep`](Self::prepare_sleep). Returns
    /// whether it is now searching (a notifier picked it meanwhile and counted it as
    /// a searcher) — the caller then must end that search as usual.
    pub fn cancel_sleep(&self, i: usize) -> bool {
        let mut sl = lock(&self.sleepers);
        if let Some(pos) = sl.list.iter().position(|&w| w == i) {
            sl.list.swap_remove(pos);
            sl.wake_count(i);
            let one = sl.one(i);
            self.state.fetch_sub(one, Ordering::SeqCst);
            false
        } else {
            // A notifier removed us and set our wake flag (under this lock): consume
            // it so the next sleep does not return at once.
            self.parkers[i].consume();
            drop(sl);
            true
        }
    }

    /// Worker `i` is about to sleep without a deadline: counts it asleep, unless a
    /// notifier took it off the list already (then its sleep returns at once).
    fn count_asleep(&self, i: usize) {
        let mut sl = lock(&self.sleepers);
        if !sl.indefinite[i] && sl.list.contains(&i) {
            sl.indefinite[i] = true;
            sl.asleep += 1;
            workers_awake_count().fetch_sub(1, Ordering::SeqCst);
            if sl.asleep == self.parkers.len() {
                sl.epoch += 1;
                self.all_asleep.notify_all();
            }
        }
    }

    /// Waits until every worker sleeps without a deadline, in a state other than
    /// the one numbered `after` (0: any), and returns that state's number: pass it
    /// to [`with_all_asleep`](Self::with_all_asleep) to make sure no worker ran in
    /// between. For a deadlock detector.
    pub fn wait_all_asleep(&self, after: u64, timeout: Option<Duration>) -> Watch {
        let deadline = timeout.map(crate::timer::deadline_after);
        let mut sl = lock(&self.sleepers);
        while !sl.unwatched && (sl.asleep < self.parkers.len() || sl.epoch == after) {
            sl = match deadline {
                None => match self.all_asleep.wait(sl) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                },
                Some(d) => {
                    let left = d.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return Watch::TimedOut;
                    }
                    match self.all_asleep.wait_timeout(sl, left) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    }
                }
            };
        }
        if sl.unwatched {
            Watch::Stopped
        } else {
            Watch::AllAsleep(sl.epoch)
        }
    }

    /// Runs `f` if every worker is in the sleepers' list now (asleep with or
    /// without a deadline, or about to sleep), holding the lock each of them needs
    /// to leave it: no worker runs anything while `f` runs. For a stall report.
    pub fn with_all_sleeping<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        let sl = lock(&self.sleepers);
        if sl.unwatched || sl.list.len() < self.parkers.len() {
            return None;
        }
        let r = f();
        drop(sl);
        Some(r)
    }

    /// Runs `f` if every worker has slept without a deadline since
    /// [`wait_all_asleep`](Self::wait_all_asleep) returned `epoch`, holding the
    /// lock every notifier needs: no worker can be woken while `f` runs.
    pub fn with_all_asleep<R>(&self, epoch: u64, f: impl FnOnce() -> R) -> Option<R> {
        self.if_all_asleep(Some(epoch), f)
    }

    /// Runs `f` if every worker sleeps without a deadline (in state `epoch`, if
    /// given), holding the lock every notifier needs.
    pub(crate) fn if_all_asleep<R>(&self, epoch: Option<u64>, f: impl FnOnce() -> R) -> Option<R> {
        let sl = lock(&self.sleepers);
        if sl.unwatched || sl.asleep < self.parkers.len() || epoch.is_some_and(|e| e != sl.epoch) {
            return None;
        }
        let r = f();
        drop(sl);
        Some(r)
    }

    /// Whether every worker sleeps without a deadline now (a snapshot).
    pub fn all_asleep(&self) -> bool {
        lock(&self.sleepers).asleep == self.parkers.len()
    }

    /// Ends [`wait_all_asleep`](Self::wait_all_asleep) for good (shutdown).
    pub fn stop_watch(&self) {
        lock(&self.sleepers).unwatched = true;
        self.all_asleep.notify_all();
    }

    /// Worker `i` sleeps after [`prepare_sleep`](Self::prepare_sleep) until woken or
    /// `timeout` passes. Returns whether it is now searching (woken by a notifier).
    pub fn sleep(&self, i: usize, timeout: Option<Duration>) -> bool {
        if timeout.is_none() {
            self.count_asleep(i);
        }
        if self.parkers[i].sleep(timeout) {
            return true;
        }
        self.cancel_sleep(i)
    }

    /// Worker `i` sleeps after [`prepare_sleep`](Self::prepare_sleep) as in
    /// [`sleep`](Self::sleep), but blocked in `block(timeout)` (an I/O poller
    /// waiting for readiness, with the next timer as its timeout) instead of its
    /// condvar. A notifier that picks it meanwhile calls `interrupt` (which must
    /// make `block` return soon, e.g. mio's `Waker`; an interrupt that comes just
    /// before `block` starts must still make it return). `block` may return early
    /// for its own reasons (readiness). Returns whether the worker is now
    /// searching (a notifier picked it).
    ///
    /// # Safety
    /// `interrupt` must be sound to call, from any thread and any number of times,
    /// until this returns.
    pub unsafe fn sleep_in(
        &self,
        i: usize,
        timeout: Option<Duration>,
        interrupt: Unparker,
        block: impl FnOnce(Option<Duration>),
    ) -> bool {
        if timeout.is_none() {
            // Asleep for the deadlock count; readiness that wakes it is an
            // external event, which processes waiting on it never count as a
            // deadlock (it uncounts itself in `cancel_sleep`).
            self.count_asleep(i);
        }
        if self.parkers[i].sleep_in(timeout, interrupt, block) {
            return true;
        }
        self.cancel_sleep(i)
    }
}

/// Whether this is the first call since `due` was re-armed (by `prepare_sleep`),
/// disarming it: a relaxed load, and a store only the first time. Only its
/// worker touches `due` (it arms it going to sleep and reads it while awake).
#[inline(always)]
fn first_since_sleep(due: &AtomicBool) -> bool {
    if due.load(Ordering::Relaxed) {
        due.store(false, Ordering::Relaxed);
        return true;
    }
    false
}
