//! Work from outside a worker's own queues: due timers (its own, and other
//! workers'), the global queue, and the queues and next slots of other workers.
//!
//! Idle workers steal; a busy one takes only from a worker stuck for `STUCK`, at
//! its periodic look. What waits on a busy worker (its queue, however long, and
//! its next slot) is left to it for `GRACE`: a queue until its worker has not
//! emptied it for that long, the next slot until its worker has neither run
//! another process nor put another in the slot for that long (an idle worker
//! that first sees a process there waits that out at once: see
//! `wait_stalled`). That keeps a group of communicating processes on one worker
//! (an alt's reader and the writers it wakes, a pipeline) instead of splitting it
//! across cores for every hand-off, while work its worker does not keep up with
//! (long processes, a fan-out) is taken within `GRACE` by a searching worker, or
//! at the end of a light sleeper's nap.

use super::queue::settle;
use super::WorkerLocal;
use crate::proc::Task;
use crossbeam_deque::Stealer;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What waits on a busy worker is left to it unless that worker has run no process
/// for this long (its next slot: it is stuck in a long one) or has not emptied its
/// queue for this long (stuck, or more work than it keeps up with). Stealing
/// sooner would split a group of communicating processes across cores for every
/// hand-off (Go waits ~3 µs before stealing a running P's runnext for the same
/// reason). The queue was once stolen from at once when it held two or more: an
/// alt's reader waking its writers, or ten processes handing off, then ran on both
/// workers, every process header, waiter and channel lock crossing between the
/// caches on every hand-off (StressedAlt 1 x 1024 on 2 workers: 950k notifies and
/// up to 14,600 batch steals per million alts; see BENCHMARKS.md, w17s).
const GRACE: Duration = Duration::from_micros(5);
/// A busy worker takes the waiting work of a worker that has run no process for
/// this long (see `WorkerLocal::steal_stuck`). Much longer than `GRACE`: a busy
/// worker has work of its own, and taking a group's processes splits it.
const STUCK: Duration = Duration::from_micros(100);

/// The most a thief takes of another worker's queue at once (it takes half).
/// crossbeam's own batch is 32: a fan-out of short processes (a join waking
/// 100,000 on one worker) was then taken 32 at a time, a thousand steals, each
/// followed by a search that waited out `GRACE` again, and the join ran slower
/// on 2 workers than on one (BENCHMARKS.md, "Spawn: idle workers prepare stack
/// slots"). Half the queue leaves each worker a long run of its own.
const STEAL_MAX: usize = 1024;

/// Which progress counter of another worker `WorkerLocal::stalled` watches.
#[derive(Clone, Copy)]
enum Watch {
    Next = 0,
    Queue = 1,
}

impl WorkerLocal {
    pub(super) fn steal_global(&self) -> Option<Task> {
        let t = settle(|| self.shared().injector.steal_batch_and_pop(&self.queue));
        self.settle_solo();
        t
    }

    /// A batch of another worker's queue: half of it, up to `STEAL_MAX`.
    fn steal_from(&self, victim: &Stealer<Task>) -> Option<Task> {
        settle(|| victim.steal_batch_with_limit_and_pop(&self.queue, STEAL_MAX))
    }

    /// Another worker's next slot. A process pinned elsewhere (to `v`, or a
    /// third worker) can only wait for its worker: it goes to that worker's pinned
    /// queue.
    fn steal_next(&self, v: usize) -> Option<Task> {
        let t = self.take_next(v)?;
        self.shared().route_pinned(t, self.index)
    }

    /// Fires worker `w`'s due timers (this worker's, or, with `blocking` false and
    /// only if its lock is free, another's); returns one of the processes woken
    /// to run now, and queues the others.
    pub(super) fn run_timers(&self, w: usize, blocking: bool) -> Option<Task> {
        let sh = self.shared();
        let timers = &sh.workers[w].timers;
        let now = timers.due()?;
        let mut fired = Vec::new();
        timers.fire_due(now, blocking, &mut fired);
        let first = fired.pop();
        let more = !fired.is_empty();
        for t in fired {
            if let Some(t) = sh.route_pinned(t, self.index) {
                self.push_back(t);
            }
        }
        if more {
            sh.idle.notify_one();
        }
        first.and_then(|t| sh.route_pinned(t, self.index))
    }

    /// Work waiting on a worker that has dispatched nothing for `STUCK`: its
    /// thread runs one long process, or the OS does not run it. Only idle workers
    /// steal otherwise, so with every other worker busy that work would wait for
    /// its worker however long; a busy worker takes it at its periodic look.
    pub(super) fn steal_stuck(&self) -> Option<Task> {
        let sh = self.shared();
        let n = sh.workers.len();
        for k in 1..n {
            let v = (self.index + k) % n;
            let ws = &sh.workers[v];
            if ws.stealer.is_empty() && ws.next.load(Ordering::Relaxed).is_null() {
                continue;
            }
            if !self.stalled_for(v, Watch::Next, STUCK) {
                continue;
            }
            if let Some(t) = self.steal_from(&ws.stealer).or_else(|| self.steal_next(v)) {
                return Some(t);
            }
        }
        None
    }

    /// Work from other workers: their queues, and their due timers if they are busy.
    pub(super) fn steal_others(&self) -> Option<Task> {
        let sh = self.shared();
        let n = sh.workers.len();
        let start = self.me().ticks.load(Ordering::Relaxed) as usize;
        for v in others(self.index, n, start) {
            let victim = &sh.workers[v].stealer;
            if victim.is_empty() {
                continue;
            }
            if !self.stalled(v, Watch::Queue) {
                self.saw_pending.set(true);
                continue;
            }
            if let Some(t) = self.steal_from(victim) {
                // The next batch waits until `v` again leaves its queue unemptied
                // for `GRACE`: a queue its worker never empties (an alt's reader
                // waking one writer after another) is not taken batch after batch.
                self.forget(v, Watch::Queue);
                return Some(t);
            }
        }
        if let Some(t) = self.steal_global() {
            return Some(t);
        }
        // One wait for a stall per look (see `wait_stalled`).
        let mut waited = false;
        for v in others(self.index, n, start) {
            if sh.workers[v].next.load(Ordering::Relaxed).is_null() {
                continue;
            }
            if !self.stalled(v, Watch::Next) && (waited || !self.wait_stalled(v)) {
                waited = true;
                self.saw_pending.set(true);
                continue;
            }
            if let Some(t) = self.steal_next(v) {
                return Some(t);
            }
        }
        for k in 1..n {
            let v = (self.index + k) % n;
            if let Some(t) = self.run_timers(v, false) {
                return Some(t);
            }
        }
        None
    }

    /// Whether what waits on worker `v` is worth stealing: for its next slot, `v`
    /// has run no other process and put no other in the slot for `GRACE` (it
    /// is stuck in a long one); for its queue, `v` has not emptied it for
    /// `GRACE` (stuck, or more work than it keeps up with), counted from when
    /// this worker first saw the counter at its value (or, for the queue, last
    /// stole from it).
    fn stalled(&self, v: usize, what: Watch) -> bool {
        self.stalled_for(v, what, GRACE)
    }

    /// Worker `v` has a process in its next slot and this (idle) worker has
    /// just begun counting `v`'s dispatches: waits `GRACE` here, then says
    /// whether `v` has dispatched nothing and the same process still waits in
    /// the slot (`v` is stuck in a long process: take the slot). Left to this
    /// worker's next look instead, the count is seen again only after a nap (up to
    /// `NAP_MAX`), when a worker computing for tens of microseconds at a time
    /// has moved on, so a process woken behind such a one was never taken (the
    /// mandelbrot farm on 2 workers, its two computing processes on one
    /// worker, ran at one worker's speed in most runs). Go's thief likewise
    /// waits ~3 µs and looks at a running P's runnext again.
    fn wait_stalled(&self, v: usize) -> bool {
        let ws = &self.shared().workers[v];
        let seen = ws.ticks.load(Ordering::Relaxed);
        let waiting = ws.next.load(Ordering::Relaxed);
        // Looked at again only at the end: polled meanwhile, the busy
        // worker's line (its count and slot) would be taken from it on every
        // dispatch and wake, slowing the worker being watched.
        let t = Instant::now();
        while t.elapsed() < GRACE {
            std::hint::spin_loop();
        }
        // The same process still waits in the slot (a worker handing off
        // from process to process changes it without a dispatch).
        ws.ticks.load(Ordering::Relaxed) == seen && ws.next.load(Ordering::Relaxed) == waiting
    }

    /// Starts the count of `stalled` for worker `v`'s counter afresh.
    fn forget(&self, v: usize, what: Watch) {
        // SAFETY: as in `stalled_for`.
        unsafe { (&mut *self.watch.get())[v][what as usize] = None };
    }

    /// Whether worker `v`'s counter has not moved for `d` since this worker first
    /// saw it at its value (see `stalled`).
    fn stalled_for(&self, v: usize, what: Watch, d: Duration) -> bool {
        let ws = &self.shared().workers[v];
        let now = match what {
            // Progress is a dispatch, or another process in the slot: a
            // process that runs on without blocking while it wakes others (an
            // alt's reader taking one ready writer after another) dispatches
            // nothing, but each wake puts another process in its slot.
            // Counted as stuck, its writers were stolen one after another and
            // the group split across the cores for good (StressedAlt
            // 1 x 1,024 on 2 workers: 7,000-69,000 such steals in the runs at
            // 50-150 ns per alt, ~600 in those at 43 ns).
            Watch::Next => {
                // Headers are 64-byte aligned: the low bits say nothing.
                let p = (ws.next.load(Ordering::Relaxed) as usize >> 6) as u32;
                ws.ticks.load(Ordering::Relaxed).wrapping_mul(0x9E37_79B9) ^ p
            }
            Watch::Queue => ws.drained.load(Ordering::Relaxed),
        };
        // SAFETY: `watch` is only touched by this worker's thread, never reentrantly.
        let w = unsafe { &mut (&mut *self.watch.get())[v][what as usize] };
        match *w {
            Some((seen, since)) if seen == now => since.elapsed() >= d,
            _ => {
                *w = Some((now, Instant::now()));
                false
            }
        }
    }
}

/// The workers other than `me` (of `n`), each once, beginning at one picked by
/// `start` (a count that moves, so that thieves spread over their victims).
///
/// Once `(me + start + k) % n` for `k` in `1..n`: with `start` not a multiple
/// of `n` that lands on `me` once and skips another worker, so on 2 workers a
/// thief whose dispatch count was odd never looked at the other worker while it
/// slept and woke without dispatching (the count stays put): the second worker
/// napped through a fan-out of 100,000 woken processes queued on the first.
fn others(me: usize, n: usize, start: usize) -> impl Iterator<Item = usize> {
    let m = n.saturating_sub(1).max(1);
    let first = start % m;
    (0..n.saturating_sub(1)).map(move |k| (me + 1 + (first + k) % m) % n)
}

#[cfg(test)]
mod tests {
    use super::others;

    /// Every other worker once, never the thief itself, whatever the count:
    /// the old rotation failed this for every odd `start` on 2 workers.
    #[test]
    fn a_thief_visits_every_other_worker_once() {
        for n in 1..7 {
            for me in 0..n {
                for start in [0, 1, 2, 3, 5, 8, 13, usize::MAX - 1, usize::MAX] {
                    let mut seen: Vec<usize> = others(me, n, start).collect();
                    assert!(!seen.contains(&me), "n {n} me {me} start {start}: {seen:?}");
                    seen.sort_unstable();
                    let want: Vec<usize> = (0..n).filter(|&w| w != me).collect();
                    assert_eq!(seen, want, "n {n} me {me} start {start}");
                }
            }
        }
    }

    /// The first victim moves with the count (thieves spread out).
    #[test]
    fn the_first_victim_rotates() {
        let firsts: Vec<usize> = (0..3).map(|s| others(0, 4, s).next().unwrap()).collect();
        assert_eq!(firsts, [1, 2, 3]);
    }
}
