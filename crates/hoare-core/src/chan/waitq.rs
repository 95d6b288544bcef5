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
///
/// 24 bytes (`repr(C)`, the token in 32 bits): a channel's two lone entries then
/// fit in its lock word's cache line (see [`super::raw::State`]).
#[repr(C)]
pub(crate) struct Entry<T> {
    pub(crate) waiter: *const Waiter,
    pub(crate) packet: *const Packet<T>,
    token: u32,
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
    /// No entry (an empty lone slot).
    pub(crate) const NONE: Self = Self {
        waiter: ptr::null(),
        packet: ptr::null(),
        token: 0,
        exclusive: false,
    };

    /// An entry for `waiter` and `packet`, claimed with `token`.
    ///
    /// The pointers are only stored here; the contract that makes them usable is on
    /// the `register_*` methods that put the entry in a queue.
    ///
    /// # Panics
    /// If `token` (an alt's guard index) does not fit in 32 bits: an alt of more
    /// than 4,294,967,295 guards.
    #[inline]
    pub(crate) fn new(waiter: *const Waiter, token: usize, packet: *const Packet<T>) -> Self {
        let token = u32::try_from(token).expect("hoare: an alt has at most u32::MAX guards");
        Self {
            waiter,
            packet,
            token,
            exclusive: false,
        }
    }

    /// An entry of a plain blocking operation: `exclusive` when it has no deadline
    /// (see [`Waiter::claim_exclusive`]).
    #[inline]
    pub(crate) fn plain(waiter: *const Waiter, packet: *const Packet<T>, exclusive: bool) -> Self {
        Self {
            waiter,
            packet,
            token: 0,
            exclusive,
        }
    }

    /// The token the waiter is claimed with.
    #[inline(always)]
    pub(crate) fn token(&self) -> usize {
        self.token as usize
    }
}

const _: () = assert!(std::mem::size_of::<Entry<u64>>() == 24);

/// A FIFO of waiting parties, behind its channel's lock: one side's queue,
/// borrowed out of the channel's [`State`](super::raw::State).
///
/// A lone entry is kept inline (`one`), more in a `VecDeque` (`many`), never both:
/// a one2one rendezvous has at most one waiting party per side, and registers and
/// claims it with a few plain moves instead of the ring buffer's index arithmetic
/// (CommsTime, 1 worker: 489 → 472 instructions per communication; ring 382 →
/// 368 per hop; StressedAlt 10 × 100, whose queues are long, 500 → 516 per alt).
/// `one` and `more` live in the channel's first cache line, `many` further on:
/// `more` says whether `many` holds anything, so a rendezvous never reads it.
pub(crate) struct WaitQueue<'a, T> {
    /// The only entry, while `many` is empty (a null waiter: none).
    one: &'a mut Entry<T>,
    /// Whether `many` is not empty.
    more: &'a mut bool,
    /// The entries, oldest first, once there were two at a time (then `one` is
    /// empty).
    many: &'a mut VecDeque<Entry<T>>,
}

impl<'a, T> WaitQueue<'a, T> {
    /// The queue kept in these three places (see [`super::raw::State`]).
    #[inline(always)]
    pub(crate) fn new(
        one: &'a mut Entry<T>,
        more: &'a mut bool,
        many: &'a mut VecDeque<Entry<T>>,
    ) -> Self {
        Self { one, more, many }
    }

    /// Appends an entry (FIFO).
    #[inline]
    pub(crate) fn push(&mut self, e: Entry<T>) {
        if self.is_empty() {
            *self.one = e;
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
            self.many.push_back(*self.one);
            self.one.waiter = ptr::null();
        }
        self.many.push_back(e);
        *self.more = true;
    }

    /// Takes the oldest entry out.
    #[inline(always)]
    fn pop_front(&mut self) -> Option<Entry<T>> {
        if !self.one.waiter.is_null() {
            let e = *self.one;
            self.one.waiter = ptr::null();
            return Some(e);
        }
        if !*self.more {
            return None;
        }
        let e = self.many.pop_front();
        *self.more = !self.many.is_empty();
        e
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
                unsafe { (*e.waiter).claim_exclusive(e.token()) };
                return Some(e);
            }
            // SAFETY: an entry in the queue points to a live waiter while we hold the
            // channel's lock (its owner unregisters under that lock before leaving).
            if unsafe { (*e.waiter).try_claim(e.token()) } {
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
        if w.is_null() && !*self.more {
            // Nobody queued (the blocking side's common case): said here, LLVM
            // tests the lone slot once instead of again in `pop_front`.
            return (ptr::null(), ptr::null());
        }
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
        self.one.waiter.is_null() && !*self.more
    }

    /// Removes every entry of `waiter`; returns whether there was one.
    pub(crate) fn remove(&mut self, waiter: *const Waiter) -> bool {
        if !waiter.is_null() && self.one.waiter == waiter {
            self.one.waiter = ptr::null();
            return true;
        }
        if *self.more && self.many.iter().any(|e| e.waiter == waiter) {
            self.many.retain(|e| e.waiter != waiter);
            *self.more = !self.many.is_empty();
            return true;
        }
        false
    }

    /// Wakes every waiting party with poison and empties the queue.
    pub(crate) fn poison_all(&mut self) {
        let one = std::mem::replace(self.one, Entry::NONE);
        let one = (!one.waiter.is_null()).then_some(one);
        *self.more = false;
        for e in one.into_iter().chain(self.many.drain(..)) {
            // SAFETY: live while in the queue and we hold the lock; a waiter another
            // party committed makes `try_wake` fail without touching anything else.
            unsafe { Waiter::try_wake(e.waiter, e.token(), true) };
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

    /// A queue's storage on its own.
    struct Storage {
        one: Entry<u32>,
        more: bool,
        many: VecDeque<Entry<u32>>,
    }

    impl Storage {
        fn new() -> Self {
            Self {
                one: Entry::NONE,
                more: false,
                many: VecDeque::new(),
            }
        }
        fn q(&mut self) -> WaitQueue<'_, u32> {
            WaitQueue::new(&mut self.one, &mut self.more, &mut self.many)
        }
    }

    /// `more` follows `many` through every way it empties: a queue emptied by
    /// claims, by `remove` or by poison is empty again, and its next entry is
    /// kept inline, not in `many` (fails if `remove` or `poison_all` leaves
    /// `more` set: checked).
    #[test]
    fn emptied_queues_are_empty() {
        let ws = waiters(9);
        let mut st = Storage::new();
        let empty_then_inline = |st: &mut Storage, w: &Waiter| {
            let mut q = st.q();
            assert!(q.is_empty());
            q.push(entry(w, 9));
            assert!(st.many.is_empty() && !st.one.waiter.is_null());
            assert_eq!(st.q().claim().map(|e| e.token()), Some(9));
        };
        for way in 0..3 {
            {
                let mut q = st.q();
                q.push(entry(&ws[2 * way], 0));
                q.push(entry(&ws[2 * way + 1], 1));
                match way {
                    0 => {
                        assert!(q.claim().is_some() && q.claim().is_some());
                        assert!(q.claim().is_none());
                    }
                    1 => assert!(q.remove(&ws[2]) && q.remove(&ws[3])),
                    _ => q.poison_all(),
                }
            }
            empty_then_inline(&mut st, &ws[6 + way]);
        }
    }

    /// FIFO across the lone entry and the deque, both ways (fails if `push` fills
    /// the empty `one` while `many` still holds entries: checked).
    #[test]
    fn fifo_through_one_and_many() {
        let ws = waiters(5);
        let mut st = Storage::new();
        let mut q = st.q();
        q.push(entry(&ws[0], 0));
        q.push(entry(&ws[1], 1));
        q.push(entry(&ws[2], 2));
        assert_eq!(q.claim().map(|e| e.token()), Some(0));
        q.push(entry(&ws[3], 3));
        assert_eq!(q.claim().map(|e| e.token()), Some(1));
        assert_eq!(q.claim().map(|e| e.token()), Some(2));
        assert_eq!(q.claim().map(|e| e.token()), Some(3));
        assert!(q.claim().is_none());
        // Empty again: the next one is kept inline, and served before later ones.
        q.push(entry(&ws[4], 4));
        assert_eq!(q.claim().map(|e| e.token()), Some(4));
        assert!(q.claim().is_none());
    }

    /// Removing from the lone entry and from the deque; a stale (claimed) entry
    /// is skipped by the next claim.
    #[test]
    fn remove_and_stale_entries() {
        let ws = waiters(4);
        let mut st = Storage::new();
        let mut q = st.q();
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
        assert_eq!(q.claim().map(|e| e.token()), Some(3));
        assert!(q.claim().is_none());
    }

    /// Poison wakes the lone entry and every queued one.
    #[test]
    fn poison_all_wakes_every_entry() {
        let ws = waiters(3);
        let mut st = Storage::new();
        let mut q = st.q();
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
