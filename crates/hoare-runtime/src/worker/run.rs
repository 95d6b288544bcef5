//! Dispatch: which process a worker runs next (the next slot's, within a
//! bounded streak, and a periodic look at everything else), and running it until
//! it suspends, with what its request asks of the worker. The hand-off path:
//! `find_local`, `run`, `run_one`.

use super::park::{set_not_running, set_running};
use super::{release, WorkerLocal};
use crate::proc::{Proc, ProcTag, Req, Task, FINISHED, PIN_PENDING};
use crate::timers::nanos;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// After this many processes run in a row from the next slot while others wait
/// (in the queue, the pinned queue or yielded), the oldest waiting one goes
/// first and the next slot's process goes behind it: two processes handing off
/// to each other must not starve the rest, and each waiting process runs within
/// this many runs per process ahead of it. (On a lone worker a wake that finds
/// the slot taken ends the streak at once, see `WorkerLocal::push_next`.) With
/// other workers the streak is cut much sooner: what that queued process wakes
/// then lengthens the queue, which thieves take from at once, so a long pipeline
/// spreads over the workers (measured with the prime sieve, 2 workers, 1000
/// primes: 22.6 µs per prime against 30.0 with the long streak). A lone worker
/// keeps a long one (the same sieve on 1 worker: 29.6 against 37.8 with 32; 256
/// runs it in the same instructions as 1024, and keeps a fair alt over four live
/// writers within 6% over 10,000 alts, where 1024 lets one pair hand off for
/// 500 alts at a time).
pub(super) const MAX_STREAK_SOLO: u32 = 256;
pub(super) const MAX_STREAK_SHARED: u32 = 32;
/// Every this many dispatches (a yield that goes on counts as one) a worker looks
/// at due timers (its own and other workers'), the global queue, its yielded
/// processes and stuck workers first (its pinned queue waits its turn with the
/// local queue, see `MAX_STREAK_SOLO`), and whether the runtime shuts down: a due
/// timer waits at most this many dispatches (plus the running process's time
/// slice) however busy the worker is. Between two such looks the only cost is
/// the dispatch counter (`WorkerShared::ticks`, which thieves read as the
/// worker's progress, and which also measures the streak); at a look, one load of
/// each worker's earliest deadline, and the clock only if one is set. A power of
/// two, so that the test is a mask. (Tokio polls its timer driver every 61
/// ticks; Go checks timers on every scheduling round.)
const GLOBAL_CHECK: u32 = 64;
const _: () = assert!(GLOBAL_CHECK.is_power_of_two());

/// What follows a yield (see `WorkerLocal::after_yield`).
enum Yielded {
    /// Run the yielder again.
    Again(Task),
    /// Run this process (the yielder is queued).
    To(Task),
    /// The yielder is queued: look for work.
    Queued,
}

impl WorkerLocal {
    /// Work this worker can get without searching others (`None` also once the
    /// runtime shuts down, seen at the periodic look).
    #[inline(always)]
    pub(super) fn find_local(&self) -> Option<Task> {
        // One counter for the periodic look, the streak and the thieves' view of
        // this worker's progress: one load and one store per dispatch.
        let ticks = &self.me().ticks;
        let n = ticks.load(Ordering::Relaxed).wrapping_add(1);
        ticks.store(n, Ordering::Relaxed);
        if n & (GLOBAL_CHECK - 1) == 0 {
            if self.shared().shutdown.load(Ordering::Relaxed) {
                return None;
            }
            // The streak goes on: only serving the queue ends it.
            if let Some(t) = self.periodic() {
                return Some(t);
            }
        }
        if n.wrapping_sub(self.streak_start.get()) > self.max_streak {
            if let Some(t) = self.end_streak(n) {
                return Some(t);
            }
        }
        if let Some(t) = self.take_next(self.index) {
            return Some(t);
        }
        if let Some(t) = self.pop_waiting() {
            self.streak_start.set(n);
            return Some(t);
        }
        self.run_timers(self.index, true)
            .or_else(|| self.steal_global())
    }

    /// The streak is spent (`max_streak` dispatches since it began): what waits
    /// goes first, in order, and the next slot's process goes behind it (tokio
    /// caps its LIFO slot the same way). Two processes handing off to each other
    /// so never keep a queued one waiting for more than `max_streak` runs. If
    /// nothing waits, a new streak begins (and no look at the queue for as long).
    #[cold]
    #[inline(never)]
    fn end_streak(&self, n: u32) -> Option<Task> {
        self.streak_start.set(n);
        let t = self.pop_waiting()?;
        if let Some(next) = self.take_next(self.index) {
            self.push_back(next);
        }
        Some(t)
    }

    /// Ends the streak now: the next dispatch serves what waits first (see
    /// `end_streak`).
    #[inline]
    pub(super) fn spend_streak(&self) {
        let n = self.me().ticks.load(Ordering::Relaxed);
        self.streak_start.set(n.wrapping_sub(self.max_streak));
    }

    /// What a busy worker looks at every `GLOBAL_CHECK` dispatches, before its
    /// next slot and queue: due timers (its own, and those of workers stuck in a
    /// long process), the global queue, its yielded processes (which a queue that
    /// never empties would otherwise starve), and the work of stuck workers. Not
    /// its pinned queue: that is served with the local queue when a streak ends
    /// (taking it here, out of turn, made a fair alt over pinned writers choose
    /// one of them 95% of the time).
    #[cold]
    #[inline(never)]
    fn periodic(&self) -> Option<Task> {
        let n = self.shared().workers.len();
        // Each worker's `earliest` first (one load; the clock only if one is set).
        (0..n)
            .find_map(|k| {
                let v = if k == 0 {
                    self.index
                } else {
                    (self.index + k) % n
                };
                self.run_timers(v, v == self.index)
            })
            .or_else(|| self.steal_global())
            .or_else(|| {
                // Yielded processes go behind the queue as it stands: they wait for
                // what is queued now (a yield lets others go first), but no longer
                // for a queue that never empties.
                self.requeue_yielded();
                // Sockets that became ready wake their processes into this
                // worker's queues (behind what is queued).
                #[cfg(feature = "io")]
                self.poll_io_now();
                self.steal_stuck()
            })
    }

    /// Runs a process until it parks, yields or finishes.
    /// Then runs whatever local work there is next, without returning to the main
    /// loop between two processes: a hand-off costs two context switches and no
    /// further (return-mispredicted) call levels.
    ///
    /// # Safety
    /// The caller holds `t`.
    pub(super) unsafe fn run(&self, mut t: Task) {
        loop {
            // SAFETY: we hold `t` (the caller's, or one `find_local` gave us).
            unsafe { self.run_one(t) };
            match self.find_local() {
                Some(n) => t = n,
                None => return,
            }
        }
    }

    /// Makes `p` the process running on this worker (its pin, shutdown's
    /// report of a process that never gives its worker back, the thread's
    /// current process), just before switching to it.
    ///
    /// # Safety
    /// As `set_running`; the caller holds `p`'s task.
    #[inline(always)]
    pub(crate) unsafe fn enter(&self, p: NonNull<Proc>) {
        // SAFETY: the caller's contract.
        let proc = unsafe { p.as_ref() };
        if proc.pin.get() == PIN_PENDING {
            proc.pin.set(self.index as u32);
        }
        let me = self.me();
        me.running
            .store(ProcTag::of(p.as_ptr()).cast_mut(), Ordering::Relaxed);
        self.running.set(p.as_ptr());
        proc.worker.set((self as *const WorkerLocal).cast());
        // SAFETY: the caller's contract.
        unsafe { set_running(p) };
    }

    /// The process to hand this worker to directly when the running one parks:
    /// what `find_local` would take now from the next slot or the queues, when
    /// no periodic look and no streak end is due. Counts the dispatch.
    #[inline(always)]
    pub(crate) fn next_direct(&self) -> Option<Task> {
        let ticks = &self.me().ticks;
        let n = ticks.load(Ordering::Relaxed).wrapping_add(1);
        if n & (GLOBAL_CHECK - 1) == 0 || n.wrapping_sub(self.streak_start.get()) > self.max_streak
        {
            return None;
        }
        if let Some(t) = self.take_next(self.index) {
            ticks.store(n, Ordering::Relaxed);
            return Some(t);
        }
        let t = self.pop_waiting()?;
        ticks.store(n, Ordering::Relaxed);
        self.streak_start.set(n);
        Some(t)
    }

    /// Runs a process until it parks, yields or finishes, with the processes
    /// it hands the worker to directly (see `Proc::hand_to`): whichever of them
    /// switches back here is the one the request is from.
    ///
    /// # Safety
    /// The caller holds `t`.
    #[inline(always)]
    unsafe fn run_one(&self, mut t: Task) {
        // Whether `t` still has to be made the running process: not when a yield
        // goes on with the yielder, which `enter` left running (a yield clears
        // nothing, see below).
        let mut enter = true;
        loop {
            let p = t.header();
            if enter {
                // SAFETY: we own the process until we hand it on (queue, PARKED,
                // finish).
                unsafe { self.enter(p) };
            }
            enter = true;
            // SAFETY: the process is suspended (made at spawn, or in a switch) and
            // ours; it switches back here (itself, or one it handed the worker to).
            let a = unsafe {
                let proc = p.as_ref();
                crate::ctx::switch(proc.parent.as_ptr(), proc.sp.get(), 0)
            };
            // The one that came back is the last one `enter`ed here.
            let p = self.running.get();
            // SAFETY: the process that came back was running on this worker: ours.
            t = unsafe { Task::from_ptr(p) };
            let proc = t.proc();
            if a == FINISHED {
                set_not_running();
                // SAFETY: the process finished on this worker; we own it.
                unsafe { self.finish(p.cast_mut()) };
                return;
            }
            // SAFETY: a `Req` on the process's stack, which is suspended until we
            // let it go (copied before anything below can).
            let r = unsafe { *(a as *const Req) };
            // A yield that goes on (to the yielder or a yielded one) sets the
            // next process at once: no need to clear first.
            if !matches!(r, Req::Yield) {
                set_not_running();
            }
            match r {
                // The process holds a lock every unparker must take, so nobody can
                // race this park: plain stores, then the release publishes them.
                Req::ParkRelease(release, data) => {
                    let parked = proc.state.park_sole_uncontended();
                    // SAFETY: `Park::park_releasing`'s contract: called once, while
                    // the process is suspended; it does not touch the process's
                    // stack after the store that lets others resume it.
                    unsafe { release(data) };
                    if parked {
                        // From the release on someone else owns it: do not touch it.
                        return;
                    }
                }
                Req::Yield => match self.after_yield(t) {
                    Yielded::Again(back) => {
                        t = back;
                        enter = false;
                    }
                    Yielded::To(back) => t = back,
                    Yielded::Queued => {
                        set_not_running();
                        return;
                    }
                },
                // No timer for this park: its one unpark takes it over with a plain
                // store (see `ProcState::try_park_sole`).
                Req::Park => {
                    if proc.state.try_park_sole() {
                        // From here on someone else owns it: do not touch it.
                        return;
                    }
                }
                Req::ParkUntil(d) => {
                    // From a `true` on someone else owns it: do not touch it.
                    if self.park_until(t, d) {
                        return;
                    }
                }
            }
        }
    }

    /// Where a process that yielded goes. Alone (nothing else `find_local` would
    /// run first: the queue, the next slot and the pinned queue empty, and
    /// nothing yielded; the global queue waits for the periodic look either way)
    /// it goes on. When only yielded processes wait and no other worker
    /// idles, `find_local` would run the oldest of them next: hand over to it at
    /// once, this one going behind the others, without the trip through the
    /// queues. Either counts as a dispatch, as `find_local` would, and leaves
    /// the periodic look (every `GLOBAL_CHECK`) to `find_local`. Otherwise the
    /// yielder is queued: stealable if another worker idles, else behind
    /// everything (`yielded`).
    #[inline(always)]
    fn after_yield(&self, t: Task) -> Yielded {
        if self.queue_is_empty() && !self.has_other_work_than_yielded() {
            // SAFETY: as in `push_yielded`.
            let y = unsafe { &mut *self.yielded.get() };
            let ticks = &self.me().ticks;
            let n = ticks.load(Ordering::Relaxed).wrapping_add(1);
            if n & (GLOBAL_CHECK - 1) != 0 {
                if y.is_empty() {
                    ticks.store(n, Ordering::Relaxed);
                    return Yielded::Again(t);
                }
                if self.solo || !self.shared().idle.others_idle() {
                    ticks.store(n, Ordering::Relaxed);
                    self.streak_start.set(n);
                    if y.len() == 1 {
                        // As a push to the back and a pop from the front.
                        return Yielded::To(std::mem::replace(&mut y[0], t));
                    }
                    y.push_back(t);
                    return match y.pop_front() {
                        Some(next) => Yielded::To(next),
                        None => unreachable!(),
                    };
                }
            } else if y.is_empty() {
                self.push_yielded(t);
                return Yielded::Queued;
            }
        }
        if self.shared().idle.others_idle() {
            self.push_back(t);
            self.notify_queued();
        } else {
            self.push_yielded(t);
        }
        Yielded::Queued
    }

    /// Arms a timer at `d` for `t`'s process and parks it (see
    /// `Timers::park_until`: `false` if an unpark came first). If another worker
    /// sleeps past `d`, wakes it: this worker may run a long process next, and a
    /// sleeping worker otherwise first looks at this one's timers at its own
    /// deadline. Out of line, as one call: with the wake inlined the yield cost
    /// 3 instructions more (`run_one` keeps more registers across its switch),
    /// and arming a timer costs far more than a call.
    #[inline(never)]
    fn park_until(&self, t: Task, d: Instant) -> bool {
        if !self.me().timers.park_until(t, d, self.index) {
            return false;
        }
        // From here on someone else owns the process: only `d` is used.
        if !self.solo {
            let sh = self.shared();
            sh.idle.timer_armed(nanos(sh.epoch, d));
        }
        true
    }

    /// Releases a finished process's slot.
    ///
    /// # Safety
    /// `p` finished on this worker and nobody else references it.
    unsafe fn finish(&self, p: *mut Proc) {
        // SAFETY: per the contract the header is ours to tear down.
        unsafe { release(p, Some(self)) }
    }
}
