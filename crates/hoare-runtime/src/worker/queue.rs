//! Where runnable processes wait on a worker: the next slot (Go's runnext: the
//! process just woken or spawned by the running one), the queue (stealable),
//! the pinned queue, and the list of processes that yielded. The hand-off path
//! (`push_next`, `take_next`) is here.

use super::WorkerLocal;
use crate::proc::{Task, PIN_PENDING};
use crossbeam_deque::Steal;
use std::ptr;
use std::sync::atomic::Ordering;

impl WorkerLocal {
    /// A woken or newly spawned process goes to the "next" slot; the one it displaces
    /// goes to the queue, and then another worker may be needed.
    /// Returns whether it notified other workers (it displaced a task).
    #[inline]
    pub(crate) fn push_next(&self, t: Task) -> bool {
        let Some(t) = self.shared().route_pinned(t, self.index) else {
            return true;
        };
        let next = &self.me().next;
        // Only this worker stores non-null values (thieves only take), so an empty
        // slot stays empty until our store: no read-modify-write needed then.
        let cur = next.load(Ordering::Relaxed);
        let new = t.header().as_ptr();
        let old = if cur.is_null() {
            next.store(new, Ordering::Release);
            ptr::null_mut()
        } else if self.solo {
            // No thief can take `cur` meanwhile (see `take_next`).
            next.store(new, Ordering::Relaxed);
            cur
        } else {
            next.swap(new, Ordering::AcqRel)
        };
        if old.is_null() {
            return false;
        }
        // SAFETY: a non-null next slot holds a task we just took over.
        self.push_back(unsafe { Task::from_ptr(old) });
        self.notify_queued();
        if self.solo {
            // Woken while another waits in the slot (an alt claiming one ready
            // partner after another, a fan-out): on a lone worker the streak
            // ends, so the displaced one and the queue go first. Else the one
            // woken last runs first and, with the process that woke it, hands
            // off on the next slot for a whole (long) streak while the others
            // wait (seen: a fair alt over four live writers chose one of them
            // 90% of the time). With other workers the streak is short anyway,
            // and ending it here too made a pipeline (the prime sieve) a
            // quarter slower, and CommsTime a third.
            self.spend_streak();
        }
        true
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
            return unsafe { (*self.solo_queue.get()).pop_front() };
        }
        let t = self.queue.pop()?;
        if self.queue.is_empty() {
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

    /// Whether anything but this worker's queue and yielded processes could run
    /// (next slot, pinned queue, global queue), or the runtime shuts down: a
    /// yielder with nothing else to do goes on, or hands over to a yielded one.
    #[inline]
    pub(super) fn has_other_work_than_yielded(&self) -> bool {
        let sh = self.shared();
        !self.me().next.load(Ordering::Relaxed).is_null()
            || !sh.injector.is_empty()
            || !self.me().pinned.is_empty()
            || sh.shutdown.load(Ordering::Relaxed)
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
