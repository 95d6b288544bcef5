//! Queue entries, value packets and the per-channel FIFO of waiting parties.
//!
//! A party that blocks on a channel owns, on its own stack, a [`Waiter`] and a
//! [`Packet`] (the value slot). The channel's queue holds an [`Entry`]: the address
//! of both plus a token. Whoever wants to complete the communication with that party
//! must win [`Waiter::try_claim`] first; then it moves the value through the packet
//! and calls [`Waiter::finish`]. The queue itself sits behind the channel's lock;
//! the hand-off does not need it.

use crate::sync::UnsafeCell;
use crate::waiter::Waiter;
use std::collections::VecDeque;
use std::fmt;
use std::mem::MaybeUninit;
use std::ptr;

/// One guard of one waiting party in a channel's queue: its waiter, the token the
/// waiter is claimed with (an alt's guard index; `0` for a plain send or receive),
/// and its value slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub(crate) waiter: *const Waiter,
    pub(crate) token: usize,
    pub(crate) packet: *const (),
    /// Only parties holding this channel's lock can end the wait (a plain blocking
    /// operation without a deadline): it is claimed with a plain store.
    pub(crate) exclusive: bool,
}

impl Entry {
    /// An entry for `waiter` and `packet`, claimed with `token`.
    ///
    /// The pointers are only stored here; the contract that makes them usable is on
    /// the `register_*` methods that put the entry in a queue.
    pub fn new<T>(waiter: *const Waiter, token: usize, packet: *const Packet<T>) -> Self {
        Self {
            waiter,
            token,
            packet: packet as *const (),
            exclusive: false,
        }
    }

    /// An entry of a plain blocking operation: `exclusive` when it has no deadline
    /// (see [`Waiter::claim_exclusive`]).
    pub(crate) fn plain<T>(
        waiter: *const Waiter,
        packet: *const Packet<T>,
        exclusive: bool,
    ) -> Self {
        Self {
            exclusive,
            ..Self::new(waiter, 0, packet)
        }
    }

    /// The waiter this entry wakes.
    pub fn waiter(&self) -> *const Waiter {
        self.waiter
    }

    /// The token the waiter is claimed or woken with.
    pub fn token(&self) -> usize {
        self.token
    }
}

/// The value slot of one party in a communication: the value a sender offers, or
/// the place where a receiver's value lands.
///
/// A packet is owned by its party (usually on its stack). While it is registered in
/// a channel's queue, only the party that claimed the packet's waiter touches it,
/// between its claim and its `finish`; the owner reads it again once its wait has
/// ended and it has unregistered.
///
/// A value is moved into a packet once and out of it once, by pointer: a large
/// value is never copied through temporaries on the way (the channel operations
/// keep one packet per party, see `RawChan::send`).
pub struct Packet<T> {
    value: UnsafeCell<MaybeUninit<T>>,
    /// Whether `value` holds a value.
    full: UnsafeCell<bool>,
    /// A receiver that runs an extended rendezvous: a sender that hands it a value
    /// on a rendezvous channel stays blocked until the reader's closure returns.
    extended: bool,
    /// Set by a rendezvous sender that handed a value to an extended receiver: the
    /// waiter of the sender's second phase, which the receiver wakes at the end.
    writer: UnsafeCell<*const Waiter>,
}

impl<T> fmt::Debug for Packet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packet")
            .field("full", &self.is_full())
            .field("extended", &self.extended)
            .finish_non_exhaustive()
    }
}

impl<T> Default for Packet<T> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<T> Drop for Packet<T> {
    fn drop(&mut self) {
        // Nobody else can touch the packet any more: drop a value left in it (an
        // unsent value, or an item an overwriting channel displaced into it).
        drop(self.take());
    }
}

impl<T> Packet<T> {
    /// An empty packet: what a receiver registers.
    #[inline]
    pub fn empty() -> Self {
        Self::make(MaybeUninit::uninit(), false, false)
    }

    /// A packet holding `value`: what a sender registers.
    #[inline]
    pub fn with_value(value: T) -> Self {
        Self::make(MaybeUninit::new(value), true, false)
    }

    /// An empty packet of a receiver that runs an extended rendezvous.
    #[inline]
    pub(crate) fn extended() -> Self {
        Self::make(MaybeUninit::uninit(), false, true)
    }

    #[inline(always)]
    fn make(value: MaybeUninit<T>, full: bool, extended: bool) -> Self {
        Self {
            value: UnsafeCell::new(value),
            full: UnsafeCell::new(full),
            extended,
            writer: UnsafeCell::new(ptr::null()),
        }
    }

    /// Takes the value out (the owner, once no other party can touch the packet).
    #[inline]
    pub fn take(&mut self) -> Option<T> {
        if self.is_full() {
            Some(self.take_full())
        } else {
            None
        }
    }

    /// Takes the value out of a packet the owner knows to be full.
    ///
    /// # Panics
    /// If the packet is empty.
    #[inline]
    pub(crate) fn take_full(&mut self) -> T {
        assert!(self.is_full(), "hoare: a packet was empty");
        // SAFETY: `&mut self`: nobody else accesses the packet; it is full.
        unsafe { Self::read_raw(self) }
    }

    /// Puts a value in (the owner, before registering a send); a value already
    /// there is dropped.
    pub fn set(&mut self, value: T) {
        drop(self.take());
        // SAFETY: `&mut self`: nobody else accesses the packet; it is empty.
        unsafe { Self::put_raw(self, value) }
    }

    /// Whether the packet holds a value.
    #[inline]
    pub fn is_full(&self) -> bool {
        // SAFETY: `&self` from the owner, who only calls this when no claimer can be
        // writing (the same condition as `take`).
        self.full.with(|f| unsafe { *f })
    }

    /// Takes the value out through a pointer (leaving the packet empty).
    ///
    /// # Safety
    /// The caller has exclusive access to the packet (it owns it and nobody holds a
    /// claim on its waiter, or it holds that claim), and the packet is full.
    #[inline(always)]
    pub(crate) unsafe fn read_raw(p: *const Self) -> T {
        // SAFETY: exclusive access per the caller's contract; the value is there.
        unsafe {
            (*p).full.with_mut(|f| *f = false);
            (*p).value.with(|v| ptr::read(v).assume_init())
        }
    }

    /// Stores a value through a pointer. Same contract as [`read_raw`](Self::read_raw),
    /// except that the packet must be empty.
    #[inline(always)]
    pub(crate) unsafe fn put_raw(p: *const Self, value: T) {
        // SAFETY: exclusive access per the caller's contract.
        unsafe {
            (*p).value.with_mut(|v| (*v).write(value));
            (*p).full.with_mut(|f| *f = true);
        }
    }

    /// Moves the value of the full packet `from` into the empty packet `to`, with
    /// one copy and no temporary. Both need the contract of
    /// [`read_raw`](Self::read_raw) (`from`) and [`put_raw`](Self::put_raw) (`to`).
    #[inline(always)]
    pub(crate) unsafe fn move_raw(from: *const Self, to: *const Self) {
        // SAFETY: exclusive access to both per the caller's contract; they are two
        // packets (of two parties), so they do not overlap.
        unsafe {
            (*from).full.with_mut(|f| *f = false);
            (*from).value.with(|src| {
                (*to)
                    .value
                    .with_mut(|dst| ptr::copy_nonoverlapping(src, dst, 1))
            });
            (*to).full.with_mut(|f| *f = true);
        }
    }

    /// Exchanges the value of the full packet `p` with `*other` (an item of an
    /// overwriting buffer), without a temporary copy of either on the stack.
    ///
    /// # Safety
    /// As [`read_raw`](Self::read_raw); `other` is valid and not inside the packet.
    #[inline(always)]
    pub(crate) unsafe fn swap_raw(p: *const Self, other: *mut T) {
        // SAFETY: exclusive access per the caller's contract; `swap_nonoverlapping`
        // goes through registers in small chunks.
        unsafe {
            (*p).value
                .with_mut(|v| ptr::swap_nonoverlapping((*v).as_mut_ptr(), other, 1))
        }
    }

    /// Whether the packet's party runs an extended rendezvous.
    ///
    /// # Safety
    /// `p` points to a live packet (the field is never written after construction).
    #[inline(always)]
    pub(crate) unsafe fn is_extended(p: *const Self) -> bool {
        // SAFETY: see above.
        unsafe { (*p).extended }
    }

    /// Records the second-phase waiter of a rendezvous sender. Same contract as
    /// [`read_raw`](Self::read_raw) (the packet may be empty).
    pub(crate) unsafe fn set_writer(p: *const Self, w: *const Waiter) {
        // SAFETY: exclusive access per the caller's contract.
        unsafe { (*p).writer.with_mut(|x| *x = w) }
    }

    /// The second-phase waiter recorded by a rendezvous sender, if any (the owner,
    /// after its wait ended).
    pub(crate) fn writer(&self) -> *const Waiter {
        // SAFETY: the owner reads after the claimer's `finish` (acquire in `wait`),
        // and nobody writes the field afterwards.
        self.writer.with(|x| unsafe { *x })
    }

    /// Consumes the packet, giving back its value.
    pub fn into_inner(mut self) -> Option<T> {
        self.take()
    }
}

/// Whether values of `T` are large enough to be moved only by pointer, through
/// packets and in place (see `RawChan::send`, `RawChan::recv`,
/// `Buffered::put`). Smaller ones go through registers, which is cheaper than a
/// store and a load through memory, and their copies cost no stack to speak of.
#[inline(always)]
pub(crate) const fn is_large<T>() -> bool {
    std::mem::size_of::<T>() > 256
}

/// A FIFO of waiting parties, behind its channel's lock.
#[derive(Debug, Default)]
pub(crate) struct WaitQueue {
    q: VecDeque<Entry>,
}

// SAFETY: the raw pointers in the entries are only dereferenced under the contract of
// the module (the owner stays in its wait, or the channel's lock is held), whichever
// thread holds the queue.
unsafe impl Send for WaitQueue {}

impl WaitQueue {
    pub(crate) const fn new() -> Self {
        Self { q: VecDeque::new() }
    }

    /// Appends an entry (FIFO).
    #[inline]
    pub(crate) fn push(&mut self, e: Entry) {
        self.q.push_back(e);
    }

    /// Pops entries from the front until one's waiter can be claimed, and returns it
    /// (claimed: the caller must `finish` it). Entries whose waiter is no longer
    /// waiting (a timed-out party, an alt that chose another guard) are dropped on
    /// the way: their owners tolerate finding them gone when they unregister.
    #[inline]
    pub(crate) fn claim(&mut self) -> Option<Entry> {
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

    /// Whether some entry's waiter is still waiting.
    pub(crate) fn has_waiting(&self) -> bool {
        // SAFETY: as in `claim`.
        self.q.iter().any(|e| unsafe { (*e.waiter).is_waiting() })
    }
}
