//! The value slot of one party in a communication, and the hand-off between two
//! of them.
//!
//! A party that blocks on a channel owns, on its own stack, a [`Waiter`] and a
//! [`Packet`]. The channel's queue holds an `Entry` with the address of both.
//! Whoever completes the communication with that party first wins
//! [`Waiter::try_claim`], then moves the value through the packet and calls
//! [`Waiter::finish`]: [`hand_off`].

use crate::sync::UnsafeCell;
use crate::waiter::Waiter;
use std::fmt;
use std::mem::MaybeUninit;
use std::ptr;

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
pub(crate) struct Packet<T> {
    value: UnsafeCell<MaybeUninit<T>>,
    /// Whether `value` holds a value.
    full: UnsafeCell<bool>,
    /// A receiver that runs an extended rendezvous: a sender that hands it a value
    /// on a rendezvous channel stays blocked until the reader's closure returns.
    extended: bool,
    /// Set by a rendezvous sender that handed a value to an extended receiver: the
    /// sender's second phase (its waiter, which the receiver wakes at the end, and
    /// its packet, where a refused value goes back).
    writer: UnsafeCell<*const Handback<T>>,
}

/// The second phase of a rendezvous sender that handed its value to an extended
/// receiver: the sender waits on `waiter` until the receiver's closure returned;
/// a receiver that refuses the value puts it back into `packet` first (see
/// `ExtEnd::refuse`).
pub(crate) struct Handback<T> {
    pub(crate) waiter: Waiter,
    /// The sender's packet (null: nobody to give a value back to).
    pub(crate) packet: *const Packet<T>,
}

impl<T> fmt::Debug for Packet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packet")
            .field("full", &self.is_full())
            .field("extended", &self.extended)
            .finish_non_exhaustive()
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
    pub(crate) fn empty() -> Self {
        Self::make(MaybeUninit::uninit(), false, false)
    }

    /// A packet holding `value`: what a sender registers.
    #[inline]
    pub(crate) fn with_value(value: T) -> Self {
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
    pub(crate) fn take(&mut self) -> Option<T> {
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

    /// Whether the packet holds a value.
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
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

    /// Records the second phase of a rendezvous sender. Same contract as
    /// [`read_raw`](Self::read_raw) (the packet may be empty).
    pub(crate) unsafe fn set_writer(p: *const Self, w: *const Handback<T>) {
        // SAFETY: exclusive access per the caller's contract.
        unsafe { (*p).writer.with_mut(|x| *x = w) }
    }

    /// The second phase recorded by a rendezvous sender, if any (the owner, after
    /// its wait ended).
    pub(crate) fn writer(&self) -> *const Handback<T> {
        // SAFETY: the owner reads after the claimer's `finish` (acquire in `wait`),
        // and nobody writes the field afterwards.
        self.writer.with(|x| unsafe { *x })
    }
}

/// Moves the value of the full packet `from` into the empty packet `to` (one copy,
/// no temporary), then finishes `claimed`, the waiter of the party at the other end:
/// the hand-over of every communication with a waiting party.
///
/// # Safety
/// The caller holds the claim on `claimed` (from its channel's queue, under the
/// lock) and has not finished it; `from` and `to` are the packets of the two
/// parties (one of them `claimed`'s), each accessible as
/// [`Packet::move_raw`] requires.
#[inline(always)]
pub(crate) unsafe fn hand_off<T>(
    from: *const Packet<T>,
    to: *const Packet<T>,
    claimed: *const Waiter,
) {
    // SAFETY: the caller's contract; the claimed party stays in its wait (so its
    // packet stays put) until `finish`.
    unsafe {
        Packet::move_raw(from, to);
        Waiter::finish(claimed, false);
    }
}

/// Whether values of `T` are large enough to be moved only by pointer, through
/// packets and in place (see `RawChan::send`, `RawChan::recv`, `buffered::put`).
/// Smaller ones go through registers, which is cheaper than a store and a load
/// through memory, and their copies cost no stack to speak of.
#[inline(always)]
pub(crate) const fn is_large<T>() -> bool {
    std::mem::size_of::<T>() > 256
}
