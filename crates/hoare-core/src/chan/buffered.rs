//! The buffered flavours: bounded FIFO(n), overwriting FIFO(n) and unbounded FIFO.
//!
//! They share one state (a `VecDeque`, the two queues of waiting parties, the poison
//! flag) and differ only in what a send does when the buffer is full: a bounded
//! channel blocks the sender, an overwriting one drops the oldest item, an
//! unbounded one is never full. Everything happens under the channel's short lock;
//! only user code (dropping values, an extended rendezvous's closure) runs outside.
//!
//! # Extended rendezvous
//! An item read with an extended rendezvous leaves the buffer when it is taken but
//! keeps its place (`reserved`) until the reader's closure returns: on a bounded
//! channel a writer blocked on a full buffer stays blocked until then. Overwriting
//! and unbounded channels never block writers, so there it only holds the reader.
//!
//! # Poison (C++CSP2's asymmetric semantics)
//! Writer-side poison leaves the buffer for the readers, who see poison only once
//! it is empty; reader-side poison discards the buffer. Writers see poison at once.

use super::rendezvous::Try;
use super::waitq::{is_large, Packet, WaitQueue};
use crate::sync::{AtomicBool, Ordering};
use crate::sync::{SpinGuard, SpinLock};
use crate::waiter::Waiter;
use std::collections::VecDeque;

/// What a send does on a full buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Policy {
    /// Blocks the sender (bounded FIFO of this capacity).
    Bounded(usize),
    /// Drops the oldest item (overwriting FIFO of this capacity).
    Overwriting(usize),
    /// Never full.
    Unbounded,
}

pub(crate) struct Buffered<T> {
    state: SpinLock<State<T>>,
    policy: Policy,
    poisoned: AtomicBool,
}

pub(crate) struct State<T> {
    pub(crate) queue: VecDeque<T>,
    /// Items taken by extended readers whose closures have not returned.
    pub(crate) reserved: usize,
    pub(crate) senders: WaitQueue,
    pub(crate) receivers: WaitQueue,
    pub(crate) poisoned: bool,
}

/// Which side poisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Writer,
    Reader,
}

impl<T> Buffered<T> {
    pub(crate) fn new(policy: Policy) -> Self {
        Self {
            state: SpinLock::new(State {
                queue: VecDeque::new(),
                reserved: 0,
                senders: WaitQueue::new(),
                receivers: WaitQueue::new(),
                poisoned: false,
            }),
            policy,
            poisoned: AtomicBool::new(false),
        }
    }

    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_, State<T>> {
        self.state.lock()
    }

    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    fn has_room(&self, g: &State<T>) -> bool {
        match self.policy {
            Policy::Bounded(c) => g.queue.len() + g.reserved < c,
            Policy::Overwriting(_) | Policy::Unbounded => true,
        }
    }

    /// Under the lock: sends the value in `packet` if the buffer takes it. On
    /// success the value has left the packet, which then holds the item an
    /// overwriting channel dropped, if any (drop it after releasing the lock).
    #[inline]
    pub(crate) fn try_send(&self, g: &mut State<T>, packet: &mut Packet<T>) -> Try<()> {
        if g.poisoned {
            return Try::Poisoned;
        }
        if !self.has_room(g) {
            return Try::NotReady;
        }
        assert!(packet.is_full(), "hoare: sending an empty packet");
        // SAFETY: the packet is ours and full.
        unsafe { self.put(g, packet) };
        Try::Ready(())
    }

    /// Under the lock: moves the value in the full packet `from` into the buffer, or
    /// hands it to a waiting receiver. On an overwriting channel whose buffer is
    /// full, the oldest item is exchanged for it: `from` ends up holding that item.
    ///
    /// # Safety
    /// The caller has exclusive access to `from` (its own packet, or a sender's it
    /// holds the claim on), which is full.
    #[inline]
    unsafe fn put(&self, g: &mut State<T>, from: *const Packet<T>) {
        if let Some(r) = g.receivers.claim() {
            // A receiver waits only while the buffer is empty: hand it over directly.
            let p = r.packet as *const Packet<T>;
            // SAFETY: we hold the claim on `r`; `from` per our contract.
            unsafe {
                if Packet::is_extended(p) {
                    g.reserved += 1;
                }
                Packet::move_raw(from, p);
                Waiter::finish(r.waiter, false);
            }
            return;
        }
        if let Policy::Overwriting(c) = self.policy {
            if g.queue.len() >= c {
                // Drop the oldest: exchange it for the new item, which then becomes
                // the newest. No copy of either lands on the stack.
                let oldest = g.queue.front_mut().expect("a full buffer has items");
                // SAFETY: `from` per our contract; `oldest` is in the heap buffer.
                unsafe { Packet::swap_raw(from, oldest) };
                g.queue.rotate_left(1);
                return;
            }
        }
        if is_large::<T>() {
            // `extend` reserves room before it reads the value, which it then
            // writes straight into the buffer: `push_back` would read it first
            // (onto the stack), then maybe grow the buffer, then copy it.
            // SAFETY: per our contract.
            g.queue
                .extend(std::iter::once_with(|| unsafe { Packet::read_raw(from) }));
        } else {
            // SAFETY: per our contract.
            g.queue.push_back(unsafe { Packet::read_raw(from) });
        }
    }

    /// Under the lock: moves the oldest buffered item into the (empty) packet `to`.
    /// With `extended`, the item keeps its place in the buffer until
    /// [`release`](Self::release) is called.
    #[inline]
    pub(crate) fn try_recv_into(
        &self,
        g: &mut State<T>,
        extended: bool,
        to: &mut Packet<T>,
    ) -> Try<()> {
        if let Some(v) = g.queue.pop_front() {
            // SAFETY: our own empty packet.
            unsafe { Packet::put_raw(to, v) };
            if extended {
                g.reserved += 1;
            } else {
                self.refill(g);
            }
            return Try::Ready(());
        }
        if g.poisoned {
            return Try::Poisoned;
        }
        Try::NotReady
    }

    /// Under the lock: takes the oldest buffered item. With `extended`, the item
    /// keeps its place in the buffer until [`release`](Self::release) is called.
    pub(crate) fn try_recv(&self, g: &mut State<T>, extended: bool) -> Try<T> {
        if let Some(v) = g.queue.pop_front() {
            if extended {
                g.reserved += 1;
            } else {
                self.refill(g);
            }
            return Try::Ready(v);
        }
        if g.poisoned {
            return Try::Poisoned;
        }
        Try::NotReady
    }

    /// Under the lock: moves blocked senders' values into the buffer (or straight to
    /// waiting receivers) while there is room.
    fn refill(&self, g: &mut State<T>) {
        while self.has_room(g) {
            let Some(s) = g.senders.claim() else { break };
            // SAFETY: we hold the claim on `s`; a sender registers a full packet,
            // which moves straight into the buffer (bounded only: the others never
            // block senders, so nothing is exchanged) before we finish it.
            unsafe {
                self.put(g, s.packet as *const Packet<T>);
                Waiter::finish(s.waiter, false);
            }
        }
    }

    /// Ends an extended rendezvous: frees the item's place in the buffer.
    pub(crate) fn release(&self) {
        let mut g = self.lock();
        g.reserved -= 1;
        self.refill(&mut g);
    }

    /// Poisons the channel from `side`; returns the discarded buffer (drop it after
    /// the lock is released, which this does).
    pub(crate) fn poison(&self, side: Side) {
        let mut g = self.lock();
        g.poisoned = true;
        self.poisoned.store(true, Ordering::Release);
        let discarded = if side == Side::Reader {
            std::mem::take(&mut g.queue)
        } else {
            VecDeque::new()
        };
        g.senders.poison_all();
        g.receivers.poison_all();
        drop(g);
        drop(discarded);
    }
}
