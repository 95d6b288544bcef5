//! The FIFO of waiting parties on one side of a channel, and its entries.
//!
//! A party that blocks on a channel puts an [`Entry`] into the queue of its side:
//! the address of its [`Waiter`] and of its [`Packet`], and a token. Whoever
//! completes the communication with that party must win [`Waiter::try_claim`]
//! first, under the channel's lock ([`WaitQueue::claim`]); the hand-off itself
//! ([`super::packet::hand_off`]) happens under the claim.

use super::packet::Packet;
use crate::waiter::Waiter;
use std::collections::VecDeque;
use std::ptr;

/// One guard of one waiting party in a channel's queue: its waiter, the token the
/// waiter is claimed with (an alt's guard index; `0` for a plain send or receive),
/// and its value slot.
pub(crate) struct Entry<T> {
    pub(crate) waiter: *const Waiter,
    pub(crate) token: usize,
    pub(crate) packet: *const Packet<T>,
    /// Only parties holding this channel's lock can end the wait (a plain blocking
    /// operation without a deadline): it is claimed with a plain store.
    pub(crate) exclusive: bool,
}

impl<T> Clone for Entry<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Entry<T> {}

impl<T> Entry<T> {
    /// No entry (an empty [`WaitQueue::one`]).
    const NONE: Self = Self {
        waiter: ptr::null(),
        token: 0,
        packet: ptr::null(),
        exclusive: false,
    };

    /// An entry for `waiter` and `packet`, claimed with `token`.
    ///
    /// The pointers are only stored here; the contract that makes them usable is on
    /// the `register_*` methods that put the entry in a queue.
    pub(crate) fn new(waiter: *const Waiter, token: usize, packet: *const Packet<T>) -> Self {
        Self {
            waiter,
            token,
            packet,
            exclusive: false,
        }
    }

    /// An entry of a plain blocking operation: `exclusive` when it has no deadline
    /// (see [`Waiter::claim_exclusive`]).
    pub(crate) fn plain(waiter: *const Waiter, packet: *const Packet<T>, exclusive: bool) -> Self {
        Self {
            exclusive,
            ..Self::new(waiter, 0, packet)
        }
    }
}

/// A FIFO of waiting parties, behind its channel's lock.
///
/// A lone entry is kept inline (`one`), more in a `VecDeque` (`many`), never both:
/// a one2one rendezvous has at most one waiting party per side, and registers and
/// claims it with a few plain moves instead of the ring buffer's index arithmetic
/// (CommsTime, 1 worker: 489 → 472 instructions per communication; ring 382 →
/// 368 per hop; StressedAlt 10 × 100, whose queues are long, 500 → 516 per alt).
pub(crate) struct WaitQueue<T> {
    /// The only entry, while `many` is empty (a null waiter: none).
    one: Entry<T>,
    /// The entries, oldest first, once there were two at a time (then `one` is
    /// empty).
    many: VecDeque<Entry<T>>,
}

// SAFETY: the raw pointers in the entries are only dereferenced under the contract of
// the module (the owner stays in its wait, or the channel's lock is held), whichever
// thread holds the queue.
unsafe impl<T: Send> Send for WaitQueue<T> {}

impl<T> WaitQueue<T> {
    pub(crate) const fn new() -> Self {
        Self {
            one: Entry::NONE,
            many: VecDeque::new(),
        }
    }

    /// Appends an entry (FIFO).
    #[inline]
    pub(crate) fn push(&mut self, e: Entry<T>) {
        if self.is_empty() {
            self.one = e;
        } else {
            self.push_many(e);
        }
    }

    /// [`push`](Self::push) of a plain blocking operation's exclusive entry
    /// (`Entry::plain(waiter, packet, true)`), written field by field into the
    /// lone slot: built whole first, LLVM kept the entry on the frame and copied
    /// it.
    #[inline(always)]
    pub(crate) fn push_exclusive(&mut self, waiter: *const Waiter, packet: *const Packet<T>) {
        if self.is_empty() {
            self.one.waiter = waiter;
            self.one.token = 0;
            self.one.packet = packet;
            self.one.exclusive = true;
        } else {
            self.push_many(Entry::plain(waiter, packet, true));
        }
    }

    /// Appends `e` to `many`, behind the lone entry if there is one.
    #[inline]
    fn push_many(&mut self, e: Entry<T>) {
        if !self.one.waiter.is_null() {
            self.many.push_back(self.one);
            self.one.waiter = ptr::null();
        }
        self.many.push_back(e);
    }

    /// Takes the oldest entry out.
    #[inline(always)]
    fn pop_front(&mut self) -> Option<Entry<T>> {
        if !self.one.waiter.is_null() {
            let e = self.one;
            self.one.waiter = ptr::null();
            return Some(e);
        }
        self.many.pop_front()
    }

    /// Pops entries from the front until one's waiter can be claimed, and returns it
    /// (claimed: the caller must `finish` it). Entries whose waiter is no longer
    /// waiting (a timed-out party, an alt that chose another guard) are dropped on
    /// the way: their owners tolerate finding them gone when they unregister.
    #[inline]
    pub(crate) fn claim(&mut self) -> Option<Entry<T>> {
        while let Some(e) = self.pop_front() {
            if e.exclusive {
                // SAFETY: live as below; an exclusive entry's waiter can only be
                // ended by a holder of this lock, which removes the entry first, so
                // it is still open and nobody races us.
                unsafe { (*e.waiter).claim_exclusive(e.token) };
                return Some(e);
            }
            // SAFETY: an entry in the queue points to a live waiter while we hold the
            // channel's lock (its owner unregisters under that lock before leaving).
            if unsafe { (*e.waiter).try_claim(e.token) } {
                return Some(e);
            }
        }
        None
    }

    /// [`claim`](Self::claim) for a plain send or receive, which needs only the
    /// claimed party's waiter and packet (a null waiter: nobody could be
    /// claimed). An exclusive lone entry is claimed field by field: copying the
    /// whole entry (and the `Option` around it) cost a plain send ~10
    /// instructions of moves.
    #[inline(always)]
    pub(crate) fn claim_plain(&mut self) -> (*const Waiter, *const Packet<T>) {
        let w = self.one.waiter;
        if !w.is_null() && self.one.exclusive {
            self.one.waiter = ptr::null();
            // Only `Entry::plain` makes exclusive entries, with token 0.
            debug_assert_eq!(self.one.token, 0);
            // SAFETY: an exclusive entry is claimed under its channel's lock,
            // which the caller holds, with nobody racing (see `Entry::plain`).
            unsafe { (*w).claim_exclusive(0) };
            return (w, self.one.packet);
        }
        match self.claim() {
            Some(e) => (e.waiter, e.packet),
            None => (ptr::null(), ptr::null()),
        }
    }

    /// Whether no entry is queued (stale ones count).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.one.waiter.is_null() && self.many.is_empty()
    }

    /// Removes every entry of `waiter`; returns whether there was one.
    pub(crate) fn remove(&mut self, waiter: *const Waiter) -> bool {
        if !waiter.is_null() && self.one.waiter == waiter {
            self.one.waiter = ptr::null();
            return true;
        }
        if self.many.iter().any(|e| e.waiter == waiter) {
            self.many.retain(|e| e.waiter != waiter);
            return true;
        }
        false
    }

    /// Wakes every waiting party with poison and empties the queue.
    pub(crate) fn poison_all(&mut self) {
        let one = std::mem::replace(&mut self.one, Entry::NONE);
        let one = (!one.waiter.is_null()).then_some(one);
        for e in one.into_iter().chain(self.many.drain(..)) {
            // SAFETY: live while in the queue and we hold the lock; a waiter another
            // party committed makes `try_wake` fail without touching anything else.
            unsafe { Waiter::try_wake(e.waiter, e.token, true) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::park::Unparker;

    unsafe fn nothing(_: *const ()) {}

    fn waiters(n: usize) -> Vec<Waiter> {
        (0..n)
            // SAFETY: `nothing` touches nothing.
            .map(|_| Waiter::new(unsafe { Unparker::from_raw(ptr::null(), nothing) }))
            .collect()
    }

    fn entry(w: &Waiter, token: usize) -> Entry<u32> {
        Entry::new(w, token, ptr::null())
    }

    /// FIFO across the lone entry and the deque, both ways (fails if `push` fills
    /// the empty `one` while `many` still holds entries: checked).
    #[test]
    fn fifo_through_one_and_many() {
        let ws = waiters(5);
        let mut q = WaitQueue::new();
        q.push(entry(&ws[0], 0));
        q.push(entry(&ws[1], 1));
        q.push(entry(&ws[2], 2));
        assert_eq!(q.claim().map(|e| e.token), Some(0));
        q.push(entry(&ws[3], 3));
        assert_eq!(q.claim().map(|e| e.token), Some(1));
        assert_eq!(q.claim().map(|e| e.token), Some(2));
        assert_eq!(q.claim().map(|e| e.token), Some(3));
        assert!(q.claim().is_none());
        // Empty again: the next one is kept inline, and served before later ones.
        q.push(entry(&ws[4], 4));
        assert_eq!(q.claim().map(|e| e.token), Some(4));
        assert!(q.claim().is_none());
    }

    /// Removing from the lone entry and from the deque; a stale (claimed) entry
    /// is skipped by the next claim.
    #[test]
    fn remove_and_stale_entries() {
        let ws = waiters(4);
        let mut q = WaitQueue::new();
        q.push(entry(&ws[0], 0));
        assert!(q.remove(&ws[0]));
        assert!(!q.remove(&ws[0]));
        assert!(!q.remove(ptr::null()));
        assert!(q.claim().is_none());
        q.push(entry(&ws[1], 1));
        q.push(entry(&ws[2], 2));
        q.push(entry(&ws[3], 3));
        assert!(q.remove(&ws[2]));
        assert!(ws[1].try_claim(9)); // committed elsewhere: stale here
        assert_eq!(q.claim().map(|e| e.token), Some(3));
        assert!(q.claim().is_none());
    }

    /// Poison wakes the lone entry and every queued one.
    #[test]
    fn poison_all_wakes_every_entry() {
        let ws = waiters(3);
        let mut q = WaitQueue::new();
        q.push(entry(&ws[0], 0));
        q.poison_all();
        assert!(ws[0].is_done());
        q.push(entry(&ws[1], 1));
        q.push(entry(&ws[2], 2));
        q.poison_all();
        assert!(ws[1].is_done() && ws[2].is_done());
        assert!(q.claim().is_none());
    }
}
