//! The per-channel select handle: what alternation is built from.
//!
//! Every blocking send and receive in this module is written with this API, and an
//! alt uses it the way Go's `select` uses its channels:
//!
//! 1. **Try.** Lock every channel of the alt's guards in address order
//!    ([`RawChan::addr`], skipping duplicates), and for each enabled guard call
//!    [`SelectLock::try_select_send`] / [`SelectLock::try_select_recv`]. The first
//!    `Ready(commit)` wins (or the first `Poisoned`, reported as that guard's
//!    poison): release **every** lock, then call `commit.complete()`.
//!    A `Ready` commit has already claimed the other party (or taken the item from
//!    the buffer), so the choice is made; nothing else may be undone.
//! 2. **Register.** If nothing was ready (and there is no skip guard), make ONE
//!    [`Waiter`] for the alt, and while still holding all the locks call
//!    [`SelectLock::register_send`] / [`SelectLock::register_recv`] for each guard
//!    with an [`Entry`] carrying that guard's index as its token and that guard's
//!    [`Packet`] (a send guard's packet holds the value). Then release the locks
//!    and [`Waiter::wait`] (with the earliest timeout guard's deadline, if any).
//!    From now on the alt is purely passive: it is only ever claimed, by one party
//!    at a time, under one channel's lock.
//! 3. **Unregister.** When the wait ends, lock each channel again (one at a time
//!    is enough) and call [`SelectLock::unregister`] with the waiter, **always**,
//!    before the waiter and the packets go out of scope.
//!    `Outcome::Done { token, poisoned: false }`: guard `token` communicated; for a
//!    receive guard its packet now holds the value ([`Packet::take`]); for a send
//!    guard the value was taken. `poisoned: true`: guard `token`'s channel was
//!    poisoned (a send guard's packet still holds its value). `Aborted(TIMED_OUT)`:
//!    the timeout guard fired and no guard communicated.
//!
//! Alt-to-alt (both ends of one channel in alts of two processes) needs nothing
//! more: whichever alt locks the channel second finds the other's entry and claims
//! its waiter; if that waiter is no longer waiting (its alt chose another guard, or
//! timed out) the entry is stale and is dropped. Nobody spins and no lock is held
//! while anybody parks. Entries are served FIFO, so no waiting party starves.
//!
//! Details for the implementer:
//! * Several guards on one channel: lock it once and try/register each guard under
//!   that one lock. An alt on both ends of one channel is never matched with itself
//!   (it is not registered while it tries).
//! * Tokens are the guard indices (below [`CANCELLED`](crate::waiter::CANCELLED);
//!   [`TIMED_OUT`](crate::waiter::TIMED_OUT) is the deadline's, `CANCELLED` a
//!   cancelled party's).
//! * A `Ready` send commit may block in `complete` when the receiver runs an
//!   extended rendezvous: that is why it runs after the locks are released.
//! * A receive guard on a buffered channel poisoned by its writers is `Ready` while
//!   items remain; `Poisoned` only once the buffer is empty.
//! * Boolean preconditions and priority/fairness are the alt's business: it decides
//!   which guards to try and in which order (the try order need not be the lock
//!   order).
//! * A passive party is committed under one channel's lock; its other entries stay
//!   in their queues until it unregisters, and anyone who meets them meanwhile sees
//!   a waiter that is no longer waiting and drops the entry.

use super::buffered::{Buffered, State as BufState};
pub(crate) use super::rendezvous::take_into;
use super::rendezvous::{self, State as ZeroState, Try, Zero};
use super::waitq::{Entry, Packet};
use super::RawChan;
use crate::sync::SpinGuard;
use crate::waiter::Waiter;

pub(crate) enum Locked<'a, T> {
    Zero(SpinGuard<'a, ZeroState>),
    Buf(&'a Buffered<T>, SpinGuard<'a, BufState<T>>),
}

/// One channel, locked. Hold it only briefly: never across a park, never while
/// running user code. Dropping it releases the lock.
pub struct SelectLock<'a, T> {
    pub(crate) inner: Locked<'a, T>,
}

/// The result of trying a guard under its channel's lock.
#[derive(Debug)]
pub enum Selected<C> {
    /// The communication is decided: release every lock, then complete it.
    Ready(C),
    /// The other side is not ready (nothing taken, nothing changed).
    NotReady,
    /// The channel is poisoned (for a receive on a buffered channel: and the buffer
    /// is empty).
    Poisoned,
}

impl<C> From<Try<C>> for Selected<C> {
    fn from(t: Try<C>) -> Self {
        match t {
            Try::Ready(c) => Self::Ready(c),
            Try::NotReady => Self::NotReady,
            Try::Poisoned => Self::Poisoned,
        }
    }
}

/// A decided send. Call [`complete`](Self::complete) after releasing every lock.
#[must_use = "a decided send must be completed, or the other party never wakes"]
pub struct SendCommit<T> {
    inner: SendInner<T>,
}

enum SendInner<T> {
    /// A claimed rendezvous receiver and the value for it.
    Zero(Entry, T),
    /// Done under the lock; holds the item an overwriting buffer dropped, if any.
    Buf(Option<T>),
}

impl<T> std::fmt::Debug for SendCommit<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SendCommit")
    }
}

impl<T> SendCommit<T> {
    /// Finishes the send. On a rendezvous channel whose receiver runs an extended
    /// rendezvous this blocks until the receiver's closure has returned (the send is
    /// decided and successful either way).
    #[inline]
    pub fn complete(self) {
        match self.inner {
            // SAFETY: `try_select_send` claimed `r` and nobody finished it.
            SendInner::Zero(r, v) => unsafe { rendezvous::deliver(r, v) },
            SendInner::Buf(dropped) => drop(dropped),
        }
    }
}

/// A send decided under the lock, by pointer: the value is still in the sender's
/// packet (rendezvous) or has gone into the buffer (buffered). Finished with
/// [`complete_send`] once every lock is released. The channel's own operations and
/// the alt use this form, so a value is moved once, from its packet straight to the
/// receiver's packet or the buffer.
#[derive(Debug)]
pub(crate) enum SendReady {
    /// A claimed rendezvous receiver.
    Zero(Entry),
    /// Done under the lock; the packet holds the item an overwriting buffer dropped,
    /// if any.
    Buf,
}

/// Finishes a send decided by [`SelectLock::try_send_packet`] with `packet`: moves
/// the value to the claimed receiver, or drops what the buffer gave back.
///
/// # Safety
/// `r` came from `try_send_packet` with this `packet`, and every lock is released.
#[inline(always)]
pub(crate) unsafe fn complete_send<T>(r: SendReady, packet: &mut Packet<T>) {
    match r {
        // SAFETY: `try_send_packet` claimed `e` and nobody finished it; the packet
        // still holds the value.
        SendReady::Zero(e) => unsafe { rendezvous::deliver_packet(e, packet) },
        SendReady::Buf => {
            if packet.is_full() {
                drop(packet.take());
            }
        }
    }
}

/// A receive decided under the lock, by pointer (see [`SendReady`]).
pub(crate) enum RecvReady<'a, T> {
    /// A claimed rendezvous sender: its packet holds the value.
    Zero(Entry),
    /// The item is in the receiver's packet already; with `Some`, its buffer place
    /// stays reserved until the extended rendezvous ends.
    Buf(Option<&'a Buffered<T>>),
}

/// A decided receive. Call [`complete`](Self::complete) after releasing every lock.
#[must_use = "a decided receive must be completed, or the other party never wakes"]
pub struct RecvCommit<'a, T> {
    inner: RecvInner<'a, T>,
}

enum RecvInner<'a, T> {
    /// A claimed rendezvous sender whose packet holds the value.
    Zero(Entry),
    /// An item taken from the buffer; with `Some`, its place is reserved until the
    /// extended rendezvous ends.
    Buf(T, Option<&'a Buffered<T>>),
}

impl<T> std::fmt::Debug for RecvCommit<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecvCommit")
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

/// Frees a reserved buffer place when dropped (also when a closure panics).
pub(crate) struct ReleaseOnDrop<'a, T>(pub(crate) &'a Buffered<T>);

impl<T> Drop for ReleaseOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl<T> RecvCommit<'_, T> {
    /// Finishes the receive and returns the value.
    #[inline]
    pub fn complete(self) -> T {
        match self.inner {
            // SAFETY: `try_select_recv` claimed `s` and nobody finished it.
            RecvInner::Zero(s) => unsafe { rendezvous::take_from(s) },
            RecvInner::Buf(v, reserved) => {
                if let Some(b) = reserved {
                    b.release();
                }
                v
            }
        }
    }

    /// Finishes the receive as an extended rendezvous: runs `f` on the value while
    /// the writer (rendezvous) or the item's buffer place (bounded) stays held, then
    /// releases it, even if `f` panics.
    pub fn complete_with<R>(self, f: impl FnOnce(T) -> R) -> R {
        match self.inner {
            RecvInner::Zero(s) => {
                let _finish = FinishOnDrop(s.waiter);
                // SAFETY: we hold the claim on `s`; the sender's packet is full.
                let v = unsafe { Packet::<T>::read_raw(s.packet as *const Packet<T>) };
                f(v)
            }
            RecvInner::Buf(v, reserved) => {
                let _release = reserved.map(ReleaseOnDrop);
                f(v)
            }
        }
    }
}

impl<'a, T> SelectLock<'a, T> {
    /// Tries to send the value in `packet` now. On `Ready` the value has left the
    /// packet; otherwise the packet is unchanged.
    #[inline]
    pub fn try_select_send(&mut self, packet: &mut Packet<T>) -> Selected<SendCommit<T>> {
        self.try_send_packet(packet).map(|r| SendCommit {
            inner: match r {
                SendReady::Zero(e) => SendInner::Zero(e, packet.take_full()),
                SendReady::Buf => SendInner::Buf(packet.take()),
            },
        })
    }

    /// [`try_select_send`](Self::try_select_send) by pointer: on `Ready` the value
    /// is still in `packet` for a rendezvous (finish with [`complete_send`]) or has
    /// gone into the buffer; otherwise the packet is unchanged.
    #[inline(always)]
    pub(crate) fn try_send_packet(&mut self, packet: &mut Packet<T>) -> Selected<SendReady> {
        match &mut self.inner {
            Locked::Zero(g) => Selected::from(Zero::<T>::try_send(g)).map(SendReady::Zero),
            Locked::Buf(b, g) => Selected::from(b.try_send(g, packet)).map(|()| SendReady::Buf),
        }
    }

    /// Tries to receive into the (empty) `packet`: on `Ready` a buffered item is in
    /// it already; a rendezvous sender is claimed and its value still in its own
    /// packet (see [`RecvReady`]).
    #[inline(always)]
    pub(crate) fn try_recv_packet(
        &mut self,
        extended: bool,
        packet: &mut Packet<T>,
    ) -> Selected<RecvReady<'a, T>> {
        match &mut self.inner {
            Locked::Zero(g) => Selected::from(Zero::<T>::try_recv(g)).map(RecvReady::Zero),
            Locked::Buf(b, g) => {
                let b: &'a Buffered<T> = b;
                Selected::from(b.try_recv_into(g, extended, packet))
                    .map(|()| RecvReady::Buf(extended.then_some(b)))
            }
        }
    }

    /// Tries to receive now.
    #[inline]
    pub fn try_select_recv(&mut self) -> Selected<RecvCommit<'a, T>> {
        self.try_recv(false)
    }

    #[inline]
    pub(crate) fn try_recv(&mut self, extended: bool) -> Selected<RecvCommit<'a, T>> {
        match &mut self.inner {
            Locked::Zero(g) => Selected::from(Zero::<T>::try_recv(g)).map(|s| RecvCommit {
                inner: RecvInner::Zero(s),
            }),
            Locked::Buf(b, g) => {
                let b: &'a Buffered<T> = b;
                Selected::from(b.try_recv(g, extended)).map(|v| RecvCommit {
                    inner: RecvInner::Buf(v, extended.then_some(b)),
                })
            }
        }
    }

    /// Registers a waiting sender.
    ///
    /// # Safety
    /// `entry`'s waiter and packet (which holds the value) must stay valid and
    /// unmoved until the owner, after its wait ended, has called
    /// [`unregister`](Self::unregister) on this channel; the owner must be the party
    /// that waits on the waiter. Call this only after `try_select_send` said
    /// `NotReady` under this same lock.
    pub unsafe fn register_send(&mut self, entry: Entry) {
        match &mut self.inner {
            Locked::Zero(g) => g.senders.push(entry),
            Locked::Buf(_, g) => g.senders.push(entry),
        }
    }

    /// Registers a waiting receiver; its packet must be empty.
    ///
    /// # Safety
    /// As [`register_send`](Self::register_send).
    pub unsafe fn register_recv(&mut self, entry: Entry) {
        match &mut self.inner {
            Locked::Zero(g) => g.receivers.push(entry),
            Locked::Buf(_, g) => g.receivers.push(entry),
        }
    }

    /// Removes every entry of `waiter` (if still there); returns whether there was
    /// one.
    pub fn unregister(&mut self, waiter: *const Waiter) -> bool {
        match &mut self.inner {
            Locked::Zero(g) => g.senders.remove(waiter) | g.receivers.remove(waiter),
            Locked::Buf(_, g) => g.senders.remove(waiter) | g.receivers.remove(waiter),
        }
    }

    /// Whether the channel is poisoned (a buffered channel may still hold items a
    /// receiver can take; `try_select_recv` tells).
    pub fn is_poisoned(&self) -> bool {
        match &self.inner {
            Locked::Zero(g) => g.poisoned,
            Locked::Buf(_, g) => g.poisoned,
        }
    }

    /// Whether a receiver (or a sender, with `senders`) is waiting here now.
    pub fn has_waiting(&self, senders: bool) -> bool {
        match &self.inner {
            Locked::Zero(g) => {
                if senders {
                    g.senders.has_waiting()
                } else {
                    g.receivers.has_waiting()
                }
            }
            Locked::Buf(_, g) => {
                if senders {
                    g.senders.has_waiting()
                } else {
                    g.receivers.has_waiting()
                }
            }
        }
    }
}

impl<C> Selected<C> {
    #[inline]
    pub(crate) fn map<D>(self, f: impl FnOnce(C) -> D) -> Selected<D> {
        match self {
            Self::Ready(c) => Selected::Ready(f(c)),
            Self::NotReady => Selected::NotReady,
            Self::Poisoned => Selected::Poisoned,
        }
    }
}

impl<T> RawChan<T> {
    /// Locks this channel for an alt (see the module documentation).
    #[inline]
    pub fn lock(&self) -> SelectLock<'_, T> {
        SelectLock {
            inner: match self.flavor() {
                super::Flavor::Zero(z) => Locked::Zero(z.lock()),
                super::Flavor::Buf(b) => Locked::Buf(b, b.lock()),
            },
        }
    }

    /// This channel's address: alts lock their channels in increasing order of it.
    pub fn addr(&self) -> usize {
        self as *const Self as *const () as usize
    }
}
