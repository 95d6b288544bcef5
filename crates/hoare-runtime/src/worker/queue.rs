//! Where runnable processes wait on a worker: the next slot (Go's runnext: the
//! process just woken or spawned by the running one), the queue (stealable),
//! the pinned queue, and the list of processes that yielded. The hand-off path
//! (`push_next`, `take_next`) is here.

use super::WorkerLocal;
use crate::prefetch;
use crate::proc::{Proc, Task, PIN_PENDING};
use crossbeam_deque::Steal;
use std::ptr;
use std::sync::atomic::Ordering;

impl WorkerLocal {
    /// A woken or newly spawned process goes to the "next" slot; the one it displaces
    /// goes to the queue, and then another worker may be needed.
    /// Returns whether it notified other workers (it displaced a task; on a lone
    /// worker, whether the slot was taken).
    ///
    /// The common case inline (not pinned to another worker, the slot empty: one
    /// load and one store), the rest out of line (`push_next_slow`): with all of
    /// it out of line, the wake saved registers and made a call for it (5.8
    /// instructions more per CommsTime communication, 10 per ring hop).
    #[inline(always)]
    pub(crate) fn push_next(&self, t: Task) -> bool {
        let pin = t.proc().pin.get();
        let next = &self.me().next;
        let cur = next.load(Ordering::Relaxed);
        // `PIN_NONE` and `PIN_PENDING` are the two largest values.
        if cur.is_null() && (pin >= PIN_PENDING || pin as usize == self.index) {
            // Only this worker stores non-null values (thieves only take), so an
            // empty slot stays empty until our store: no read-modify-write needed.
            next.store(t.header().as_ptr(), Ordering::Release);
            return false;
        }
        self.push_next_slow(t)
    }

    /// `push_next` when the process is pinned to another worker or the slot is
    /// taken.
    #[inline(never)]
    fn push_next_slow(&self, t: Task) -> bool {
        let Some(t) = self.shared().route_pinned(t, self.index) else {
            return true;
        };
        let next = &self.me().next;
        let cur = next.load(Ordering::Relaxed);
        let new = t.header().as_ptr();
        if cur.is_null() {
            next.store(new, Ordering::Release);
            return false;
        }
        if self.solo {
            // On a lone worker a wake that finds the slot taken ends the streak
            // (see `push_next_solo_taken`): when the queue is empty, or holds
            // only what such wakes queued since the last dispatch, the woken
            // one goes behind the queue and the next dispatch begins a streak,
            // which is what `end_streak` would do, without the call (and the
            // slot's process stays).
            // SAFETY: as in `push_yielded`.
            let q = unsafe { &mut *self.solo_queue.get() };
            let from = self.me().ticks.load(Ordering::Relaxed).wrapping_add(1);
            if (q.is_empty() || self.streak_start.get() == from) && q.len() < q.capacity() {
                q.push_back(t);
                self.streak_start.set(from);
                return true;
            }
        }
        self.push_next_taken(t, cur)
    }

    /// `push_next` when the next slot holds `cur`, but for the common case of a
    /// lone worker. Out of line: the wake's common paths then keep fewer
    /// registers (inlined, ring 503 cost 5 instructions more per hop).
    #[inline(never)]
    fn push_next_taken(&self, t: Task, cur: *mut Proc) -> bool {
        if self.solo {
            // SAFETY: a lone worker's slot holds `cur`, which no thief can take.
            unsafe { self.push_next_solo_taken(t, cur) };
            return true;
        }
        let old = self.me().next.swap(t.header().as_ptr(), Ordering::AcqRel);
        if old.is_null() {
            return false;
        }
        // SAFETY: a non-null next slot holds a task we just took over.
        self.push_back(unsafe { Task::from_ptr(old) });
        self.notify_queued();
        true
    }

    /// `push_next` on a lone worker whose next slot holds `cur`: the one waiting
    /// there runs first, `t` goes behind what is queued, and the streak ends
    /// (woken while another waits in the slot: an alt claiming one ready partner
    /// after another, a fan-out). Else the one woken last would run first and,
    /// with the process that woke it, hand off on the next slot for a whole
    /// (long) streak while the others wait (seen with a longer streak cap: a
    /// fair alt over four live writers chose one of them 90% of the time; with
    /// today's cap the writers' streaks came in pairs, and in a window of 1,044
    /// alts one writer was chosen twice: tests/liveness.rs
    /// `fair_alt_over_live_writers_1_worker_streaks_take_turns`). With other
    /// workers the streak is short anyway, and ending it there too made a
    /// pipeline (the prime sieve) a quarter slower, and CommsTime a third.
    ///
    /// What ending the streak does (`end_streak` at the next dispatch: the
    /// queue's front first, the next slot's process behind the queue) is done
    /// at once when the queue is empty: `t` queued alone, `cur` left in the
    /// slot and a new streak from the next dispatch on give the same order,
    /// without the displacement and the trip through `end_streak`. Further wakes
    /// before that dispatch (a streak start one ahead of the dispatch count says
    /// so: nothing else sets it there) queue behind `t`, as they would behind
    /// the displaced ones. (CommsTime's delta wakes up to three in a row, an
    /// alt's reader one ready writer after another.) `push_next` does this
    /// inline when the queue has room.
    ///
    /// # Safety
    /// `self.solo`, and `cur` is the (non-null) process in this worker's next slot.
    #[inline(always)]
    unsafe fn push_next_solo_taken(&self, t: Task, cur: *mut Proc) {
        // SAFETY: as in `push_yielded`.
        let q = unsafe { &mut *self.solo_queue.get() };
        let from = self.me().ticks.load(Ordering::Relaxed).wrapping_add(1);
        if q.is_empty() || self.streak_start.get() == from {
            q.push_back(t);
            // The next dispatch (`find_local`, or `after_yield`) begins a streak.
            self.streak_start.set(from);
            return;
        }
        // No thief can take `cur` meanwhile (see `take_next`).
        self.me().next.store(t.header().as_ptr(), Ordering::Relaxed);
        // SAFETY: the caller's contract: `cur` was in the slot, now ours.
        q.push_back(unsafe { Task::from_ptr(cur) });
        self.spend_streak();
    }

    /// After queueing a task on this (busy) worker: only the first of a kind
    /// since this worker last slept looks for a worker to wake (see
    /// `Idle::notify_weak_once`): for a lone task a deep sleeper, for a queue
    /// of two or more any sleeper (`Idle::notify_one_once`: a fan-out gets a
    /// second worker at once). A light sleeper watches this queue anyway and
    /// takes from it once this worker leaves it unemptied for `GRACE` (see
    /// `steal`); a searching worker sees it too. (A queue of two or more once
    /// called `notify_one` on every push: a `SeqCst` fence per StressedAlt
    /// alt that woke nobody, or woke a worker that split the alt's group
    /// across cores.)
    #[inline]
    pub(super) fn notify_queued(&self) {
        if self.solo {
            // Nobody to wake (and the notifiers' fence is the costly part).
            return;
        }
        // One fence per kind and period awake, not per task queued:
        // `main_loop` sleeps deeply only when no other worker is awake.
        let idle = &self.shared().idle;
        if self.queue.len() >= 2 {
            idle.notify_one_once(self.index);
        } else {
            idle.notify_weak_once(self.index);
        }
    }

    /// Takes the process in worker `w`'s next slot (this worker's, or, stealing,
    /// another's).
    #[inline]
    pub(super) fn take_next(&self, w: usize) -> Option<Task> {
        let next = if w == self.index {
            &self.me().next
        } else {
            &self.shared().workers[w].next
        };
        let p = next.load(Ordering::Relaxed);
        if p.is_null() {
            return None;
        }
        if self.solo {
            // The only worker: no thief exists, and only this worker stores into its
            // own slot, so nobody can take `p` between the load and the store.
            next.store(ptr::null_mut(), Ordering::Relaxed);
            // SAFETY: as below; we are the slot's only reader and writer.
            return Some(unsafe { Task::from_ptr(p) });
        }
        let p = next.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: whoever swaps a task out of a next slot holds it.
        (!p.is_null()).then(|| unsafe { Task::from_ptr(p) })
    }

    /// Back of this worker's queue (pinned processes to its private pinned queue,
    /// unless this is the only worker: nobody steals then, and one queue keeps
    /// them in order with the others).
    #[inline]
    pub(super) fn push_back(&self, t: Task) {
        if self.solo {
            // SAFETY: as in `push_yielded`.
            unsafe { (*self.solo_queue.get()).push_back(t) };
        } else if t.proc().pin.get() < PIN_PENDING {
            self.me().pinned.push(t);
        } else {
            self.queue.push(t);
        }
    }

    /// Behind everything queued, without an atomic operation: for a yield while
    /// every other worker is busy (see `WorkerLocal::yielded`).
    #[inline]
    pub(super) fn push_yielded(&self, t: Task) {
        // SAFETY: `yielded` is only touched by this worker's thread, never
        // reentrantly.
        unsafe { (*self.yielded.get()).push_back(t) };
    }

    /// Moves the yielded processes behind the queue as it stands.
    pub(super) fn requeue_yielded(&self) {
        // SAFETY: as in `push_yielded`.
        let y = unsafe { &mut *self.yielded.get() };
        for t in y.drain(..) {
            self.push_back(t);
        }
    }

    /// The oldest process waiting on this worker: the queue's, then the pinned
    /// queue's (with other workers; on a lone one pinned processes queue with
    /// the others, see `push_back`), then the yielded ones.
    #[inline(always)]
    pub(super) fn pop_waiting(&self) -> Option<Task> {
        self.pop_queue()
            .or_else(|| self.pop_pinned())
            // SAFETY: as in `push_yielded`.
            .or_else(|| unsafe { (*self.yielded.get()).pop_front() })
    }

    /// Whether this worker's queue is empty.
    #[inline]
    pub(super) fn queue_is_empty(&self) -> bool {
        if self.solo {
            // SAFETY: as in `push_yielded`.
            return unsafe { (*self.solo_queue.get()).is_empty() };
        }
        self.queue.is_empty()
    }

    /// Moves what a batch steal left in `queue` to a lone worker's `solo_queue`.
    pub(super) fn settle_solo(&self) {
        if self.solo {
            while let Some(t) = self.queue.pop() {
                // SAFETY: as in `push_yielded`.
                unsafe { (*self.solo_queue.get()).push_back(t) };
            }
        }
    }

    /// Pops the front of this worker's queue (and counts it emptied, for thieves).
    #[inline(always)]
    fn pop_queue(&self) -> Option<Task> {
        if self.solo {
            // SAFETY: as in `push_yielded`.
            let q = unsafe { &mut *self.solo_queue.get() };
            let t = q.pop_front();
            if q.len() >= prefetch::COLD_QUEUE {
                // The next two wait behind so many that their lines are out of
                // the caches: the next one's stack (its header was asked for at
                // the last pop), and the header of the one after it.
                // SAFETY: a queued process: live and suspended.
                unsafe { prefetch::stack(q[0].header().as_ptr()) };
                prefetch::header(q[1].header().as_ptr());
            }
            return t;
        }
        let t = self.queue.pop()?;
        let left = self.queue.len();
        if left >= prefetch::COLD_QUEUE {
            // No look at the next one (a stealable queue has no peek): ask for
            // this one's lines all at once, so its resume waits for one miss
            // instead of one per frame it returns through.
            // SAFETY: the process just taken: ours, live and suspended.
            unsafe { prefetch::stack(t.header().as_ptr()) };
        }
        if left == 0 {
            let d = &self.me().drained;
            d.store(d.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        }
        Some(t)
    }

    fn pop_pinned(&self) -> Option<Task> {
        let pinned = &self.me().pinned;
        // Two plain loads; an `Injector`'s `steal` of an empty queue costs a
        // `SeqCst` fence (seen on every yield of a lone worker). A push it misses
        // notifies this worker.
        if pinned.is_empty() {
            return None;
        }
        settle(|| pinned.steal())
    }

    /// Whether anything that `find_local` would run before the oldest yielded
    /// process waits here (next slot, pinned queue): a yielder with nothing else
    /// to do goes on, or hands over to a yielded one. Not the global queue nor
    /// the shutdown flag: `find_local` looks at those only at its periodic look
    /// (every `GLOBAL_CHECK` dispatches), which `after_yield` leaves to it, so
    /// testing them on every yield changed nothing but its cost.
    #[inline]
    pub(super) fn has_other_work_than_yielded(&self) -> bool {
        !self.me().next.load(Ordering::Relaxed).is_null() || !self.me().pinned.is_empty()
    }
}

/// Retries a steal until it takes a task or finds none.
#[inline]
pub(super) fn settle(mut steal: impl FnMut() -> Steal<Task>) -> Option<Task> {
    loop {
        match steal() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => continue,
        }
    }
}
