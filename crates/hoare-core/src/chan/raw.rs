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
use super::waitq::{Entry, WaitQueue};
use crate::sync::{AtomicBool, AtomicUsize, Ordering, SpinLock};
use crate::wait::{ObjInfo, Object};
use std::collections::VecDeque;

/// The shared state of one channel, whatever its buffering. Its ends hold it by
/// `Arc`; [`Sender::raw`](super::Sender::raw) and
/// [`Receiver::raw`](super::Receiver::raw) hand it to the guards of an alt.
///
/// Laid out for a rendezvous (`repr(C)`, cache-line aligned): its first cache
/// line holds the lock word, whether the channel is a rendezvous (the lock's
/// tag) and the start of its locked state, with everything a plain rendezvous send or
/// receive reads, so a hand-off between processes whose channels have left the
/// cache misses one line per channel, not three (ring 503 per hop: see
/// BENCHMARKS.md, "A channel's first cache line").
///
/// Not aligned under loom, where the lock is a loom mutex and the layout means
/// nothing: over-aligned allocations came back in an address order that varied
/// between the executions of one model, and alts lock channels in address order,
/// so loom saw a model that was not deterministic.
#[cfg_attr(not(loom), repr(C, align(64)))]
#[cfg_attr(loom, repr(C))]
pub struct RawChan<T> {
    /// Tagged [`RENDEZVOUS`] when `buffer` is `Rendezvous`.
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

/// The tag of a rendezvous channel's lock (see [`SpinLock::tag`]).
const RENDEZVOUS: u8 = 1;

/// What one channel's lock guards: the same for every buffering.
///
/// `repr(C)`: the fields a plain rendezvous reads come first, so that they share
/// the lock word's cache line (checked below). Each side's [`WaitQueue`] is
/// kept in three fields: its lone entry and whether it has more (first line),
/// and the deque of the rest.
#[repr(C)]
pub(crate) struct State<T> {
    senders_one: Entry<T>,
    receivers_one: Entry<T>,
    pub(crate) poisoned: bool,
    senders_more: bool,
    receivers_more: bool,
    senders_many: VecDeque<Entry<T>>,
    receivers_many: VecDeque<Entry<T>>,
    /// Why the channel was poisoned, if whoever poisoned it said so (the first
    /// reason given while poisoning stays).
    pub(crate) reason: Option<Reason>,
    /// The buffered items (always empty on a rendezvous channel).
    pub(crate) items: VecDeque<T>,
    /// Items taken by extended readers whose closures have not returned: on a
    /// bounded channel they keep their places in the buffer until then.
    pub(crate) reserved: usize,
}

// The lock word (a `SpinLock` starts with it and its tag, then the value at the
// value's alignment, 8) and everything up to the flags fit in the first 64 bytes.
#[cfg(not(loom))]
const _: () = assert!(8 + std::mem::offset_of!(State<u64>, senders_many) <= 64);

// SAFETY: the raw pointers in the entries are only dereferenced under the contract of
// `super::waitq` (the owner stays in its wait, or the channel's lock is held),
// whichever thread holds the state.
unsafe impl<T: Send> Send for State<T> {}

impl<T> State<T> {
    /// Senders waiting for a receiver (rendezvous) or for room (bounded).
    #[inline(always)]
    pub(crate) fn senders(&mut self) -> WaitQueue<'_, T> {
        WaitQueue::new(
            &mut self.senders_one,
            &mut self.senders_more,
            &mut self.senders_many,
        )
    }

    /// Receivers waiting for a value (only while the buffer is empty).
    #[inline(always)]
    pub(crate) fn receivers(&mut self) -> WaitQueue<'_, T> {
        WaitQueue::new(
            &mut self.receivers_one,
            &mut self.receivers_more,
            &mut self.receivers_many,
        )
    }
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
            state: SpinLock::with_tag(
                State {
                    senders_one: Entry::NONE,
                    receivers_one: Entry::NONE,
                    poisoned: false,
                    senders_more: false,
                    receivers_more: false,
                    senders_many: VecDeque::new(),
                    receivers_many: VecDeque::new(),
                    reason: None,
                    items: VecDeque::new(),
                    reserved: 0,
                },
                if buffer == Buffer::Rendezvous {
                    RENDEZVOUS
                } else {
                    0
                },
            ),
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

    /// Whether this is a rendezvous channel (`buffer` is `Rendezvous`), read from
    /// the lock word's cache line.
    #[inline(always)]
    pub(crate) fn is_rendezvous(&self) -> bool {
        self.state.tag() == RENDEZVOUS
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
        g.senders().poison_all();
        g.receivers().poison_all();
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
