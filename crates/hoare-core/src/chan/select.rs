//! One channel, locked: what every channel operation and alternation are written
//! with.
//!
//! Under the lock a party *tries* its communication ([`SelectLock::try_send`],
//! [`SelectLock::try_recv`], dispatching on the buffering), and either gets a
//! [`Deal`] to complete once every lock is released ([`complete_send`],
//! [`complete_recv`]), or *registers* an [`Entry`] and waits. An alt uses it the way
//! Go's `select` uses its channels:
//!
//! 1. **Try.** Lock every channel of the alt's guards in address order
//!    ([`RawChan::addr`], each channel once), and try each enabled guard. The first
//!    `Ready(deal)` wins (or the first `Poisoned`, reported as that guard's
//!    poison): release **every** lock, then complete the deal. A `Ready` deal has
//!    already claimed the other party (or moved the item in or out of the buffer),
//!    so the choice is made; nothing else may be undone.
//! 2. **Register.** If nothing was ready (and there is no skip guard), make ONE
//!    [`Waiter`] for the alt, and while still holding all the locks register an
//!    [`Entry`] for each guard, carrying that guard's index as its token and that
//!    guard's [`Packet`] (a send guard's packet holds the value). Then release the
//!    locks and [`Waiter::wait`] (with the earliest timeout guard's deadline, if
//!    any). From now on the alt is purely passive: it is only ever claimed, by one
//!    party at a time, under one channel's lock.
//! 3. **Unregister.** When the wait ends, lock each channel again (one at a time
//!    is enough) and [`unregister`](SelectLock::unregister) the waiter, **always**,
//!    before the waiter and the packets go out of scope (a set of guards whose
//!    waiter lives on the heap may leave its entries behind instead: see
//!    `alt::engine::Plan::LINGER`). `Outcome::Done { token, poisoned: false }`:
//!    guard `token` communicated; for a receive guard its packet now holds the
//!    value; for a send guard the value was taken. `poisoned: true`: guard
//!    `token`'s channel was poisoned (a send guard's packet still holds its value).
//!    `Aborted(TIMED_OUT)`: the timeout guard fired and no guard communicated.
//!
//! Alt-to-alt (both ends of one channel in alts of two processes) needs nothing
//! more: whichever alt locks the channel second finds the other's entry and claims
//! its waiter; if that waiter is no longer waiting (its alt chose another guard, or
//! timed out) the entry is stale and is dropped. Nobody spins and no lock is held
//! while anybody parks. Entries are served FIFO, so no waiting party starves.
//!
//! Details:
//! * Several guards on one channel: lock it once and try/register each guard under
//!   that one lock. An alt on both ends of one channel is never matched with itself
//!   (it is not registered while it tries).
//! * Tokens are the guard indices (below [`CANCELLED`](crate::waiter::CANCELLED);
//!   [`TIMED_OUT`](crate::waiter::TIMED_OUT) is the deadline's, `CANCELLED` a
//!   cancelled party's).
//! * A `Ready` send to a rendezvous receiver may block in [`complete_send`] when
//!   the receiver runs an extended rendezvous: that is why it runs after the locks
//!   are released.
//! * A receive on a buffered channel poisoned by its writers is `Ready` while items
//!   remain; `Poisoned` only once the buffer is empty.
//! * Boolean preconditions and priority/fairness are the alt's business: it decides
//!   which guards to try and in which order (the try order need not be the lock
//!   order).

use super::factory::Buffer;
use super::packet::{hand_off, Packet};
use super::raw::{RawChan, Side, State};
use super::waitq::Entry;
use super::{buffered, rendezvous};
use crate::park::Park;
use crate::sync::SpinGuard;
use crate::waiter::Waiter;

/// One channel, locked. Hold it only briefly: never across a park, never while
/// running user code. Dropping it releases the lock.
pub(crate) struct SelectLock<'a, T> {
    chan: &'a RawChan<T>,
    g: SpinGuard<'a, State<T>>,
}

/// The result of trying a communication under its channel's lock.
#[derive(Debug)]
pub(crate) enum Selected<C> {
    /// The communication is decided: release every lock, then complete it.
    Ready(C),
    /// The other side is not ready (nothing taken, nothing changed).
    NotReady,
    /// The channel is poisoned (for a receive on a buffered channel: and the buffer
    /// is empty).
    Poisoned,
}

/// A communication decided under the lock, to complete once every lock is
/// released. It carries no value: values stay in the packets (the caller's, and a
/// rendezvous partner's), so a large value is moved once.
pub(crate) enum Deal<T> {
    /// A claimed rendezvous partner: the value moves between its packet and the
    /// caller's ([`complete_send`], [`complete_recv`]).
    Partner(Entry<T>),
    /// Done under the lock (a buffered channel): a sent value is in the buffer (the
    /// caller's packet holds the item an overwriting buffer dropped, if any), a
    /// received one in the caller's packet.
    Done,
}

impl<'a, T> SelectLock<'a, T> {
    #[inline(always)]
    pub(super) fn new(chan: &'a RawChan<T>, g: SpinGuard<'a, State<T>>) -> Self {
        Self { chan, g }
    }

    /// Parks `p` releasing this lock once it is parked (see
    /// [`crate::sync::park_unlocking`]).
    ///
    /// # Safety
    /// As [`crate::sync::park_unlocking`].
    #[inline(always)]
    pub(crate) unsafe fn park_unlocking(self, p: &dyn Park, w: &Waiter) -> bool {
        // SAFETY: the caller's contract.
        unsafe { crate::sync::park_unlocking(self.g, p, w) }
    }

    /// Tries to send the value in `packet` now. On `Ready` the value is still in
    /// `packet` for a rendezvous partner (finish with [`complete_send`]) or has gone
    /// into the buffer; otherwise the packet is unchanged.
    #[inline(always)]
    pub(crate) fn try_send(&mut self, packet: &mut Packet<T>) -> Selected<Deal<T>> {
        if self.g.poisoned {
            return Selected::Poisoned;
        }
        if self.chan.is_rendezvous() {
            rendezvous::try_send(&mut self.g)
        } else {
            buffered::try_send(self.chan.buffer, &mut self.g, packet)
        }
    }

    /// Tries to receive into the (empty) `packet` now: on `Ready` a buffered item
    /// is in it already (with `extended`, its place stays reserved until
    /// [`RawChan::release`]); a rendezvous partner is claimed and its value still in
    /// its own packet (finish with [`complete_recv`]).
    #[inline(always)]
    pub(crate) fn try_recv(&mut self, extended: bool, packet: &mut Packet<T>) -> Selected<Deal<T>> {
        if self.chan.is_rendezvous() {
            rendezvous::try_recv(&mut self.g)
        } else {
            buffered::try_recv(self.chan.buffer, &mut self.g, extended, packet)
        }
    }

    /// For a plain blocking operation on a rendezvous channel (its caller checked
    /// the buffering, so there is nothing to dispatch on) by a party on side
    /// `me`: claims the first waiting partner that can be claimed (a receiver for
    /// a writer, a sender for a reader): its waiter (claimed) and packet. A null
    /// waiter: nobody; the caller looks at [`is_poisoned`](Self::is_poisoned) and
    /// registers.
    ///
    /// No test for poison: poison drains both queues under the lock, and nobody
    /// registers on a poisoned channel (every registration follows a try that
    /// reports the poison), so a poisoned channel has nobody to claim.
    #[inline(always)]
    pub(crate) fn claim_partner(&mut self, me: Side) -> (*const Waiter, *const Packet<T>) {
        debug_assert_eq!(self.chan.buffer, Buffer::Rendezvous);
        let g = &mut *self.g;
        let poisoned = g.poisoned;
        let mut q = match me {
            Side::Writer => g.receivers(),
            Side::Reader => g.senders(),
        };
        debug_assert!(!poisoned || q.is_empty());
        q.claim_plain()
    }

    /// The channel this lock is of.
    #[inline(always)]
    pub(crate) fn chan(&self) -> &'a RawChan<T> {
        self.chan
    }

    /// Whether the channel is poisoned.
    #[inline(always)]
    pub(crate) fn is_poisoned(&self) -> bool {
        self.g.poisoned
    }

    /// Registers a waiting sender.
    ///
    /// # Safety
    /// `entry`'s waiter and packet (which holds the value) must stay valid and
    /// unmoved until the entry is [unregistered](Self::unregister) from this
    /// channel: by the owner once its wait ended (a set whose waiter lives on the
    /// heap may do it at its next wait or when it is dropped instead, see
    /// `alt::engine::Plan::LINGER`). The owner must be the party that waits on the
    /// waiter. Call this only after [`try_send`](Self::try_send) said `NotReady`
    /// under this same lock.
    #[inline]
    pub(crate) unsafe fn register_send(&mut self, entry: Entry<T>) {
        self.g.senders().push(entry);
    }

    /// Registers a waiting receiver; its packet must be empty.
    ///
    /// # Safety
    /// As [`register_send`](Self::register_send).
    #[inline]
    pub(crate) unsafe fn register_recv(&mut self, entry: Entry<T>) {
        self.g.receivers().push(entry);
    }

    /// Registers a plain blocking operation's exclusive entry (no deadline, token
    /// 0) on side `me`'s queue: [`register_send`](Self::register_send) or
    /// [`register_recv`](Self::register_recv) of `Entry::plain(waiter, packet,
    /// true)`.
    ///
    /// # Safety
    /// As [`register_send`](Self::register_send) (for a reader: its packet must
    /// be empty), after [`claim_partner`](Self::claim_partner) found nobody and the
    /// channel is not poisoned.
    #[inline(always)]
    pub(crate) unsafe fn register_exclusive(
        &mut self,
        me: Side,
        waiter: *const Waiter,
        packet: *const Packet<T>,
    ) {
        debug_assert!(!self.g.poisoned);
        let g = &mut *self.g;
        match me {
            Side::Writer => g.senders().push_exclusive(waiter, packet),
            Side::Reader => g.receivers().push_exclusive(waiter, packet),
        }
    }

    /// Removes every entry of `waiter` (if still there); returns whether there was
    /// one.
    #[inline]
    pub(crate) fn unregister(&mut self, waiter: *const Waiter) -> bool {
        self.g.senders().remove(waiter) | self.g.receivers().remove(waiter)
    }
}

/// Completes a send decided by [`SelectLock::try_send`] with `packet`: hands the
/// value to the claimed receiver, or drops what an overwriting buffer gave back.
/// Returns whether the value was taken: `false` when an extended receiver refused
/// it (it is back in `packet`, and the channel is poisoned).
///
/// # Safety
/// `d` came from `try_send` with this `packet`, and every lock is released.
#[inline(always)]
pub(crate) unsafe fn complete_send<T>(d: Deal<T>, packet: &mut Packet<T>) -> bool {
    match d {
        // SAFETY: `try_send` claimed `r` and nobody finished it; the packet still
        // holds the value.
        Deal::Partner(r) => unsafe { rendezvous::deliver(r, packet) },
        Deal::Done => {
            drop(packet.take());
            true
        }
    }
}

/// Completes a receive decided by [`SelectLock::try_recv`] into `packet`: moves
/// the claimed sender's value into it and finishes the sender. Afterwards the
/// packet holds the value.
///
/// # Safety
/// `d` came from `try_recv` with this `packet`, and every lock is released.
#[inline(always)]
pub(crate) unsafe fn complete_recv<T>(d: Deal<T>, packet: &mut Packet<T>) {
    if let Deal::Partner(s) = d {
        // SAFETY: `try_recv` claimed `s` and nobody finished it; a sender registers
        // a full packet, and ours is empty.
        unsafe { hand_off(s.packet, packet, s.waiter) }
    }
}

/// Finishes a claimed waiter when dropped (also when a closure panics).
pub(crate) struct FinishOnDrop(pub(crate) *const Waiter);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        // SAFETY: built only right after a successful claim that nothing else finishes.
        unsafe { Waiter::finish(self.0, false) }
    }
}
