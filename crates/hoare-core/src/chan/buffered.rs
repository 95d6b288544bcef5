//! The buffered flavours: bounded FIFO(n), overwriting FIFO(n) and unbounded FIFO.
//!
//! They differ only in what a send does when the buffer is full: a bounded channel
//! blocks the sender, an overwriting one drops the oldest item, an unbounded one is
//! never full. Everything happens under the channel's short lock; only user code
//! (dropping values, an extended rendezvous's closure) runs outside.
//!
//! # Extended rendezvous
//! An item read with an extended rendezvous leaves the buffer when it is taken but
//! keeps its place (`reserved`) until the reader's closure returns
//! ([`RawChan::release`](super::raw::RawChan::release)): on a bounded channel a
//! writer blocked on a full buffer stays blocked until then. Overwriting and
//! unbounded channels never block writers, so there it only holds the reader.
//!
//! # Poison
//! Writer-side poison leaves the buffer for the readers, who see poison only once
//! it is empty; reader-side poison discards the buffer; writers see poison at once
//! (`docs/semantics.md#poison`, after C++CSP2).

use super::factory::Buffer;
use super::packet::{hand_off, is_large, Packet};
use super::raw::State;
use super::select::{Deal, Selected};
use crate::waiter::Waiter;

/// Whether the buffer takes one more item.
#[inline]
fn has_room<T>(b: Buffer, g: &State<T>) -> bool {
    match b {
        Buffer::Bounded(c) => g.items.len() + g.reserved < c,
        Buffer::Overwriting(_) | Buffer::Unbounded => true,
        Buffer::Rendezvous => false,
    }
}

/// Under the lock (not poisoned): sends the value in `packet` if the buffer takes
/// it. On success the value has left the packet, which then holds the item an
/// overwriting channel dropped, if any (drop it after releasing the lock).
#[inline]
pub(super) fn try_send<T>(
    b: Buffer,
    g: &mut State<T>,
    packet: &mut Packet<T>,
) -> Selected<Deal<T>> {
    if !has_room(b, g) {
        return Selected::NotReady;
    }
    assert!(packet.is_full(), "hoare: sending an empty packet");
    // SAFETY: the packet is ours and full.
    unsafe { put(b, g, packet) };
    Selected::Ready(Deal::Done)
}

/// Under the lock: moves the value in the full packet `from` into the buffer, or
/// hands it to a waiting receiver. On an overwriting channel whose buffer is full,
/// the oldest item is exchanged for it: `from` ends up holding that item.
///
/// # Safety
/// The caller has exclusive access to `from` (its own packet, or a sender's it
/// holds the claim on), which is full.
#[inline]
unsafe fn put<T>(b: Buffer, g: &mut State<T>, from: *const Packet<T>) {
    if let Some(r) = g.receivers().claim() {
        // A receiver waits only while the buffer is empty: hand it over directly.
        // SAFETY: we hold the claim on `r`; `from` per our contract.
        unsafe {
            if Packet::is_extended(r.packet) {
                g.reserved += 1;
            }
            hand_off(from, r.packet, r.waiter);
        }
        return;
    }
    if let Buffer::Overwriting(c) = b {
        if g.items.len() >= c {
            // Drop the oldest: exchange it for the new item, which then becomes
            // the newest. No copy of either lands on the stack.
            let oldest = g.items.front_mut().expect("a full buffer has items");
            // SAFETY: `from` per our contract; `oldest` is in the heap buffer.
            unsafe { Packet::swap_raw(from, oldest) };
            g.items.rotate_left(1);
            return;
        }
    }
    if is_large::<T>() {
        // `extend` reserves room before it reads the value, which it then
        // writes straight into the buffer: `push_back` would read it first
        // (onto the stack), then maybe grow the buffer, then copy it.
        // SAFETY: per our contract.
        g.items
            .extend(std::iter::once_with(|| unsafe { Packet::read_raw(from) }));
    } else {
        // SAFETY: per our contract.
        g.items.push_back(unsafe { Packet::read_raw(from) });
    }
}

/// Under the lock: moves the oldest buffered item into the (empty) packet `to`.
/// With `extended`, the item keeps its place in the buffer until
/// [`RawChan::release`](super::raw::RawChan::release).
#[inline]
pub(super) fn try_recv<T>(
    b: Buffer,
    g: &mut State<T>,
    extended: bool,
    to: &mut Packet<T>,
) -> Selected<Deal<T>> {
    if let Some(v) = g.items.pop_front() {
        // SAFETY: our own empty packet.
        unsafe { Packet::put_raw(to, v) };
        if extended {
            g.reserved += 1;
        } else {
            refill(b, g);
        }
        return Selected::Ready(Deal::Done);
    }
    if g.poisoned {
        return Selected::Poisoned;
    }
    Selected::NotReady
}

/// Under the lock: moves blocked senders' values into the buffer (or straight to
/// waiting receivers) while there is room.
pub(super) fn refill<T>(b: Buffer, g: &mut State<T>) {
    while has_room(b, g) {
        let Some(s) = g.senders().claim() else { break };
        // SAFETY: we hold the claim on `s`; a sender registers a full packet,
        // which moves straight into the buffer (bounded only: the others never
        // block senders, so nothing is exchanged) before we finish it.
        unsafe {
            put(b, g, s.packet);
            Waiter::finish(s.waiter, false);
        }
    }
}
