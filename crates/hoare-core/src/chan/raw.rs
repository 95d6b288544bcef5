//! The shared state of one channel, the same for every buffering.
//!
//! One short lock ([`SpinLock`]) over one [`State`]: the FIFO of waiting senders,
//! the FIFO of waiting receivers, the poison flag and the buffer (always empty on a
//! rendezvous channel). What the buffering changes is only what a send or a receive
//! does under that lock ([`super::select`] dispatches to [`super::rendezvous`] or
//! [`super::buffered`]); registering, unregistering and poisoning are written once,
//! here and in [`super::select`].

use super::buffered;
use super::factory::Buffer;
use super::select::SelectLock;
use super::waitq::WaitQueue;
use crate::sync::{AtomicBool, AtomicUsize, Ordering, SpinLock};
use crate::wait::{ObjInfo, Object};
use std::collections::VecDeque;

/// The shared state of one channel, whatever its buffering. Its ends hold it by
/// `Arc`; [`Sender::raw`](super::Sender::raw) and
/// [`Receiver::raw`](super::Receiver::raw) hand it to the guards of an alt.
pub struct RawChan<T> {
    state: SpinLock<State<T>>,
    /// The buffering (`Bounded(0)` is stored as `Rendezvous`).
    pub(crate) buffer: Buffer,
    /// `State::poisoned`, readable without the lock.
    poisoned: AtomicBool,
    senders: AtomicUsize,
    receivers: AtomicUsize,
    /// Its identity in reports.
    pub(crate) info: ObjInfo,
}

/// What one channel's lock guards: the same for every buffering.
pub(crate) struct State<T> {
    /// Senders waiting for a receiver (rendezvous) or for room (bounded).
    pub(crate) senders: WaitQueue<T>,
    /// Receivers waiting for a value (only while the buffer is empty).
    pub(crate) receivers: WaitQueue<T>,
    pub(crate) poisoned: bool,
    /// Why the channel was poisoned, if whoever poisoned it said so (the first
    /// reason given while poisoning stays).
    pub(crate) reason: Option<Reason>,
    /// The buffered items (always empty on a rendezvous channel).
    pub(crate) items: VecDeque<T>,
    /// Items taken by extended readers whose closures have not returned: on a
    /// bounded channel they keep their places in the buffer until then.
    pub(crate) reserved: usize,
}

/// Why a channel was poisoned (see [`Sender::poison_with`](super::Sender::poison_with)).
pub type Reason = std::sync::Arc<str>;

/// Which side poisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Writer,
    Reader,
}

impl<T> std::fmt::Debug for RawChan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawChan")
            .field("buffer", &self.buffer)
            .field("poisoned", &self.is_poisoned())
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl<T> RawChan<T> {
    /// A channel with one end of each side.
    ///
    /// # Panics
    /// On an overwriting buffer of capacity 0.
    pub(crate) fn new(buffer: Buffer, info: ObjInfo) -> Self {
        let buffer = match buffer {
            Buffer::Bounded(0) => Buffer::Rendezvous,
            Buffer::Overwriting(0) => {
                panic!("hoare: an overwriting channel needs a capacity of at least 1")
            }
            b => b,
        };
        Self {
            state: SpinLock::new(State {
                senders: WaitQueue::new(),
                receivers: WaitQueue::new(),
                poisoned: false,
                reason: None,
                items: VecDeque::new(),
                reserved: 0,
            }),
            buffer,
            poisoned: AtomicBool::new(false),
            senders: AtomicUsize::new(1),
            receivers: AtomicUsize::new(1),
            info,
        }
    }

    /// This channel's identity (id, name, where it was made).
    pub fn info(&self) -> &ObjInfo {
        &self.info
    }

    /// This channel as a report names it.
    pub fn object(&self) -> Object {
        self.info.object_in_arc("channel", self)
    }

    /// Locks this channel (see [`super::select`]).
    #[inline]
    pub(crate) fn lock(&self) -> SelectLock<'_, T> {
        SelectLock::new(self, self.state.lock())
    }

    /// This channel's address: alts lock their channels in increasing order of it.
    #[inline]
    pub(crate) fn addr(&self) -> usize {
        self as *const Self as *const () as usize
    }

    /// Whether the channel is poisoned (a poisoned buffered channel may still hold
    /// items for its readers).
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// Poisons the channel from `side`: wakes every waiting party with poison; a
    /// reader's poison also discards the buffer (dropped once the lock is released).
    /// See `docs/semantics.md#poison`.
    pub(crate) fn poison(&self, side: Side) {
        self.poison_with(side, None);
    }

    /// [`poison`](Self::poison), saying why: the reason stays with the channel
    /// unless it was poisoned already (the first poison's reason, if it gave one,
    /// stays).
    pub(crate) fn poison_with(&self, side: Side, reason: Option<Reason>) {
        let mut g = self.state.lock();
        if !g.poisoned && g.reason.is_none() {
            g.reason = reason;
        }
        g.poisoned = true;
        self.poisoned.store(true, Ordering::Release);
        let discarded = if side == Side::Reader {
            std::mem::take(&mut g.items)
        } else {
            VecDeque::new()
        };
        g.senders.poison_all();
        g.receivers.poison_all();
        drop(g);
        drop(discarded);
    }

    /// Why the channel was poisoned, if it is and its poisoner said so.
    pub(crate) fn poison_reason(&self) -> Option<Reason> {
        if !self.is_poisoned() {
            return None;
        }
        self.state.lock().reason.clone()
    }

    /// The number of items in the buffer now (always 0 on a rendezvous channel).
    /// Items taken by an extended reader whose closure has not returned are no
    /// longer counted, though on a bounded channel they keep their places.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// The buffer's capacity: `Some(0)` for a rendezvous channel, `None` for an
    /// unbounded one.
    pub(crate) fn capacity(&self) -> Option<usize> {
        match self.buffer {
            Buffer::Rendezvous => Some(0),
            Buffer::Bounded(c) | Buffer::Overwriting(c) => Some(c),
            Buffer::Unbounded => None,
        }
    }

    /// Ends an extended rendezvous on a buffered channel: frees the item's place in
    /// the buffer, which a blocked sender may now take.
    pub(crate) fn release(&self) {
        let mut g = self.state.lock();
        g.reserved -= 1;
        buffered::refill(self.buffer, &mut g);
    }

    /// Counts one more end of one side.
    pub(crate) fn add_end(&self, sender: bool) {
        let c = if sender {
            &self.senders
        } else {
            &self.receivers
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one end of one side gone; the last one poisons from its side.
    pub(crate) fn drop_end(&self, sender: bool) {
        // A scheduling point only for the last end of a side (which poisons):
        // dropping any other end changes nothing another party can see. (Under a
        // checker nobody else runs between this look and the decrement below.)
        #[cfg(feature = "check")]
        if (if sender {
            &self.senders
        } else {
            &self.receivers
        })
        .load(Ordering::Relaxed)
            == 1
        {
            crate::step::step(|| {
                crate::step::Op::one(
                    crate::step::OpKind::DropEnd,
                    self.info().id() as usize,
                    crate::step::Class::Chan,
                    crate::step::Access::Drop,
                )
                .with_info(*self.info())
            });
        }
        let c = if sender {
            &self.senders
        } else {
            &self.receivers
        };
        if c.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.poison(if sender { Side::Writer } else { Side::Reader });
        }
    }
}
