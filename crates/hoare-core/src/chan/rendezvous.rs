//! The rendezvous flavour: no buffer, a send completes only when a receiver has
//! the value.
//!
//! State behind one short lock: the FIFO of waiting senders, the FIFO of waiting
//! receivers and the poison flag. At most one of the two queues holds live waiters
//! (whoever arrives second claims the first instead of queueing), stale entries
//! aside. The value moves after the lock is released, under the claim.

use super::waitq::{Entry, Packet, WaitQueue};
use crate::park;
use crate::registration::{Registration, Withdraw};
use crate::sync::{AtomicBool, Ordering};
use crate::sync::{SpinGuard, SpinLock};
use crate::waiter::Waiter;
use std::marker::PhantomData;
use std::ptr;

pub(crate) struct Zero<T> {
    state: SpinLock<State>,
    poisoned: AtomicBool,
    _t: PhantomData<fn(T) -> T>,
}

pub(crate) struct State {
    pub(crate) senders: WaitQueue,
    pub(crate) receivers: WaitQueue,
    pub(crate) poisoned: bool,
}

/// Outcome of a non-blocking attempt under the lock.
pub(crate) enum Try<C> {
    Ready(C),
    NotReady,
    Poisoned,
}

impl<T> Zero<T> {
    pub(crate) fn new() -> Self {
        Self {
            state: SpinLock::new(State {
                senders: WaitQueue::new(),
                receivers: WaitQueue::new(),
                poisoned: false,
            }),
            poisoned: AtomicBool::new(false),
            _t: PhantomData,
        }
    }

    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_, State> {
        self.state.lock()
    }

    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// Under the lock: claims a waiting receiver for a send.
    #[inline]
    pub(crate) fn try_send(g: &mut State) -> Try<Entry> {
        if g.poisoned {
            return Try::Poisoned;
        }
        match g.receivers.claim() {
            Some(e) => Try::Ready(e),
            None => Try::NotReady,
        }
    }

    /// Under the lock: claims a waiting sender for a receive.
    #[inline]
    pub(crate) fn try_recv(g: &mut State) -> Try<Entry> {
        if g.poisoned {
            return Try::Poisoned;
        }
        match g.senders.claim() {
            Some(e) => Try::Ready(e),
            None => Try::NotReady,
        }
    }

    /// Poisons the channel: wakes every waiting party with poison.
    pub(crate) fn poison(&self) {
        let mut g = self.lock();
        g.poisoned = true;
        self.poisoned.store(true, Ordering::Release);
        g.senders.poison_all();
        g.receivers.poison_all();
    }
}

/// Completes a send to the receiver `r` that the caller claimed, after releasing the
/// lock: moves `value` into its packet and finishes it. If the receiver runs an
/// extended rendezvous, blocks until its closure has returned.
///
/// # Safety
/// The caller claimed `r` (from a rendezvous receivers queue) and has not finished
/// it.
#[inline]
pub(crate) unsafe fn deliver<T>(r: Entry, value: T) {
    let mut packet = Packet::with_value(value);
    // SAFETY: forwarded.
    unsafe { deliver_packet(r, &mut packet) }
}

/// [`deliver`] of the value in the sender's (full) `packet`, which moves straight
/// into the receiver's packet.
///
/// # Safety
/// As [`deliver`].
#[inline]
pub(crate) unsafe fn deliver_packet<T>(r: Entry, packet: &mut Packet<T>) {
    let p = r.packet as *const Packet<T>;
    // SAFETY: we hold the claim on `r.waiter`, so its party and packet stay put and
    // nobody else touches the packet until `finish`.
    unsafe {
        if Packet::is_extended(p) {
            // Second phase: the reader wakes `w2` once its closure returned. Nobody
            // else can see `w2`, so no timeout or poison can end this wait.
            park::with_current(|party| {
                if party.cancelled() {
                    // A party the runtime is unwinding cannot wait for the reader
                    // (it may be a process the shutdown has stopped), and its frame
                    // will be gone when the reader wakes it: hand the reader a
                    // waiter of its own on the heap, left to leak (a few bytes, only
                    // in a shutdown). The value is delivered either way.
                    let w2: &'static Waiter = Box::leak(Box::new(Waiter::private(
                        // SAFETY: `nobody` touches nothing; the address is unused.
                        park::Unparker::from_raw(ptr::null(), nobody),
                    )));
                    Packet::set_writer(p, w2);
                    Packet::move_raw(packet, p);
                    Waiter::finish(r.waiter, false);
                    return;
                }
                let w2 = Waiter::private(party.unparker());
                Packet::set_writer(p, &w2);
                Packet::move_raw(packet, p);
                Waiter::finish(r.waiter, false);
                let _reg = Registration::new(HandOff(&w2), &w2);
                let out = w2.wait_committed(party);
                // The reader releases us with success whatever happened meanwhile
                // (poison included): the value was delivered.
                assert_eq!(
                    out,
                    crate::waiter::Outcome::Done {
                        token: 0,
                        poisoned: false
                    },
                    "hoare: an extended rendezvous released its writer with {out:?}"
                );
            });
        } else {
            Packet::move_raw(packet, p);
            Waiter::finish(r.waiter, false);
        }
    }
}

/// The unpark function of a waiter nobody waits on.
unsafe fn nobody(_: *const ()) {}

/// The writer's side of an extended rendezvous: the reader holds the address of
/// the writer's private waiter until its closure returns and it wakes the writer.
/// Nothing to take back; the waiter stays reachable until it is woken.
struct HandOff<'a>(&'a Waiter);

impl Withdraw for HandOff<'_> {
    #[inline]
    fn withdraw(&mut self) -> bool {
        self.0.is_waiting()
    }
}

/// Completes a receive from the sender `s` that the caller claimed, after releasing
/// the lock: takes its value and finishes it.
///
/// # Safety
/// The caller claimed `s` (from a rendezvous senders queue) and has not finished it.
#[inline]
pub(crate) unsafe fn take_from<T>(s: Entry) -> T {
    // SAFETY: we hold the claim; the sender registered a full packet.
    unsafe {
        let v = Packet::<T>::read_raw(s.packet as *const Packet<T>);
        Waiter::finish(s.waiter, false);
        v
    }
}

/// [`take_from`] into the receiver's (empty) packet `to`, with one copy.
///
/// # Safety
/// As [`take_from`]; the caller owns `to`.
#[inline]
pub(crate) unsafe fn take_into<T>(s: Entry, to: &mut Packet<T>) {
    // SAFETY: we hold the claim; the sender registered a full packet.
    unsafe {
        Packet::move_raw(s.packet as *const Packet<T>, to);
        Waiter::finish(s.waiter, false);
    }
}
