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
pub(crate) struct WaitQueue<T> {
    q: VecDeque<Entry<T>>,
}

// SAFETY: the raw pointers in the entries are only dereferenced under the contract of
// the module (the owner stays in its wait, or the channel's lock is held), whichever
// thread holds the queue.
unsafe impl<T: Send> Send for WaitQueue<T> {}

impl<T> WaitQueue<T> {
    pub(crate) const fn new() -> Self {
        Self { q: VecDeque::new() }
    }

    /// Appends an entry (FIFO).
    #[inline]
    pub(crate) fn push(&mut self, e: Entry<T>) {
        self.q.push_back(e);
    }

    /// Pops entries from the front until one's waiter can be claimed, and returns it
    /// (claimed: the caller must `finish` it). Entries whose waiter is no longer
    /// waiting (a timed-out party, an alt that chose another guard) are dropped on
    /// the way: their owners tolerate finding them gone when they unregister.
    #[inline]
    pub(crate) fn claim(&mut self) -> Option<Entry<T>> {
        while let Some(e) = self.q.pop_front() {
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

    /// Removes every entry of `waiter`; returns whether there was one.
    pub(crate) fn remove(&mut self, waiter: *const Waiter) -> bool {
        if self.q.iter().any(|e| e.waiter == waiter) {
            self.q.retain(|e| e.waiter != waiter);
            return true;
        }
        false
    }

    /// Wakes every waiting party with poison and empties the queue.
    pub(crate) fn poison_all(&mut self) {
        for e in self.q.drain(..) {
            // SAFETY: live while in the queue and we hold the lock; a waiter another
            // party committed makes `try_wake` fail without touching anything else.
            unsafe { Waiter::try_wake(e.waiter, e.token, true) };
        }
    }
}
