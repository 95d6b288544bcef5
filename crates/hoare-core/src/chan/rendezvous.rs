//! The rendezvous flavour: no buffer; a send completes only when a receiver has the
//! value.
//!
//! At most one of the channel's two queues holds live waiters (whoever arrives
//! second claims the first instead of queueing), stale entries aside. Under the
//! lock a party only claims its partner; the value moves after the lock is
//! released, under the claim ([`deliver`], or [`super::select::complete_recv`]).

use super::packet::{hand_off, Handback, Packet};
use super::raw::State;
use super::select::{Deal, Selected};
use super::waitq::Entry;
use crate::park::{self, Unparker};
use crate::registration::{Registration, Withdraw};
use crate::wait::{Wait, WaitOn};
use crate::waiter::{Outcome, Waiter};
use std::ptr;

/// Under the lock (not poisoned): claims a waiting receiver for a send.
#[inline(always)]
pub(super) fn try_send<T>(g: &mut State<T>) -> Selected<Deal<T>> {
    match g.receivers().claim() {
        Some(r) => Selected::Ready(Deal::Partner(r)),
        None => Selected::NotReady,
    }
}

/// Under the lock: claims a waiting sender for a receive.
#[inline(always)]
pub(super) fn try_recv<T>(g: &mut State<T>) -> Selected<Deal<T>> {
    if g.poisoned {
        return Selected::Poisoned;
    }
    match g.senders().claim() {
        Some(s) => Selected::Ready(Deal::Partner(s)),
        None => Selected::NotReady,
    }
}

/// Completes a send to the receiver `r` that the caller claimed, after releasing the
/// lock: moves the value of the sender's (full) `packet` straight into the
/// receiver's packet and finishes it. If the receiver runs an extended rendezvous,
/// blocks until its closure has returned. Returns whether the value was taken:
/// `false` when an extended receiver refused it (see
/// [`Receiver::recv_or_refuse`](super::Receiver::recv_or_refuse)), which put it
/// back into `packet` and poisoned the channel.
///
/// # Safety
/// The caller claimed `r` (from a rendezvous receivers queue) and has not finished
/// it.
#[inline]
pub(crate) unsafe fn deliver<T>(r: Entry<T>, packet: &mut Packet<T>) -> bool {
    // SAFETY: we hold the claim on `r.waiter`, so its party and packet stay put and
    // nobody else touches the packet until `finish`.
    unsafe {
        if Packet::is_extended(r.packet) {
            deliver_extended(r, packet)
        } else {
            hand_off(packet, r.packet, r.waiter);
            true
        }
    }
}

/// [`deliver`] to a receiver that runs an extended rendezvous: the second phase.
/// The sender hands the reader a private waiter (with the address of its packet)
/// and waits on it; the reader wakes it once its closure returned, or, refusing
/// the value, puts it back into the sender's packet and wakes it as poisoned.
/// Nobody else can see that waiter, so no timeout or poison can end this wait.
///
/// # Safety
/// As [`deliver`].
#[cold]
unsafe fn deliver_extended<T>(r: Entry<T>, packet: &mut Packet<T>) -> bool {
    let p = r.packet;
    park::with_current(|party| {
        // SAFETY: as in `deliver`: we hold the claim on `r`.
        unsafe {
            if party.cancelled() {
                // A party the runtime is unwinding cannot wait for the reader (it
                // may be a process the shutdown has stopped), and its frame will be
                // gone when the reader wakes it: hand the reader a waiter of its own
                // on the heap, left to leak (a few bytes, only in a shutdown), and
                // no packet (a refused value is dropped). The value is delivered
                // either way.
                let w2: *const Handback<T> = Box::into_raw(Box::new(Handback {
                    waiter: Waiter::private(
                        // SAFETY: `nobody` touches nothing; the address is unused.
                        Unparker::from_raw(ptr::null(), nobody),
                    ),
                    packet: ptr::null(),
                }));
                Packet::set_writer(p, w2);
                hand_off(packet, p, r.waiter);
                return true;
            }
            let w2 = Handback {
                waiter: Waiter::private(party.unparker()).on(WaitOn::fixed(hand_off_wait)),
                packet: packet as *const Packet<T>,
            };
            Packet::set_writer(p, &w2);
            hand_off(packet, p, r.waiter);
            let _reg = Registration::new(HandOff, &w2.waiter);
            let out = w2.waiter.wait_committed(party);
            // The reader releases us with success whatever happened meanwhile
            // (poison included): the value was delivered; or, refusing it, as
            // poisoned, with the value back in our packet.
            match out {
                Outcome::Done { token: 0, poisoned } => !poisoned,
                _ => panic!("hoare: an extended rendezvous released its writer with {out:?}"),
            }
        }
    })
}

/// The wait record of an extended rendezvous's writer.
unsafe fn hand_off_wait(_: *const ()) -> Wait {
    Wait::HandOff
}

/// The unpark function of a waiter nobody waits on.
unsafe fn nobody(_: *const ()) {}

/// The writer's side of an extended rendezvous: the reader holds the address of
/// the writer's private waiter until its closure returns and it wakes the writer.
/// Nothing to take back; the waiter stays reachable until it is woken.
struct HandOff;

impl Withdraw for HandOff {
    #[inline]
    fn withdraw(&mut self, waiter: Option<&Waiter>) -> bool {
        waiter.is_some_and(|w| w.is_waiting())
    }
}

/// Completes a receive from the sender `s` that the caller claimed, after releasing
/// the lock: takes its value (through registers: for a value that is not
/// [large](super::packet::is_large)) and finishes it.
///
/// # Safety
/// The caller claimed `s` (from a rendezvous senders queue) and has not finished it.
#[inline]
pub(crate) unsafe fn take<T>(s: Entry<T>) -> T {
    // SAFETY: we hold the claim; the sender registered a full packet.
    unsafe {
        let v = Packet::read_raw(s.packet);
        Waiter::finish(s.waiter, false);
        v
    }
}
