//! Broadcast (SPEC C10): a one-to-all channel. Every enrolled reader receives every
//! value the writer sends; readers join ([`subscribe`](BroadcastReceiver::subscribe))
//! and leave (drop their end) while it is in use.
//!
//! ```
//! use hoare_core::chan::broadcast;
//! use std::thread;
//!
//! let (tx, rx1) = broadcast::<String>();
//! let rx2 = rx1.subscribe(); // a second reader, from the next value on
//! let readers: Vec<_> = [rx1, rx2]
//!     .into_iter()
//!     .map(|rx| thread::spawn(move || rx.iter().collect::<Vec<_>>()))
//!     .collect();
//! tx.send("one".into()).unwrap(); // returns once both readers have it
//! tx.send("two".into()).unwrap();
//! drop(tx); // poisons from the writing side: the readers' loops end
//! for r in readers {
//!     assert_eq!(r.join().unwrap(), ["one", "two"]);
//! }
//! ```
//!
//! # Semantics (`docs/semantics.md#broadcast`)
//! * **Rendezvous** ([`broadcast`]): a `send` returns once every reader enrolled
//!   when the value was offered has taken it. **Buffered**
//!   ([`broadcast_bounded`]`(n)`): a `send` returns once the value is in the
//!   buffer, which holds the values not yet taken by every reader; it blocks while
//!   the slowest reader is `n` values behind ("room for all").
//! * **Joining** ([`subscribe`](BroadcastReceiver::subscribe), on either end): the
//!   new reader receives every value offered after it joined, and is not awaited
//!   for a value already offered (a rendezvous writer waiting for its readers does
//!   not wait for it).
//! * **Leaving** (dropping a reader end): the reader is no longer awaited; a
//!   writer waiting for it alone completes at once (the value counts as delivered
//!   to it), and the values it had not taken are released. Dropping the last
//!   reader poisons from the reading side.
//! * **Poison** as on every channel: the writer's poison (or its drop) leaves the
//!   buffered values for the readers, who see the poison once they have taken them;
//!   a reader's poison discards the buffer, and a rendezvous writer still waiting
//!   for its readers gets its value back.
//! * **Non-blocking and timed sends** ([`try_send`](BroadcastSender::try_send),
//!   [`send_timeout`](BroadcastSender::send_timeout),
//!   [`send_deadline`](BroadcastSender::send_deadline)) complete or hand the value
//!   back with the reason. Rendezvous: a `try_send` completes only when every
//!   reader is waiting; a timed send whose deadline passes after some readers
//!   took the value withdraws it from the others (they skip it) and fails with
//!   the value: "not every reader received it".
//! * **Lossy** ([`broadcast_overwriting`]`(n)`, a "latest value" cell with
//!   `n = 1`): a send never blocks; on a full buffer the oldest value is dropped
//!   and the readers that had not taken it skip it.
//! * **Alternation**: a reader end is a receive guard (ready when a value it has
//!   not taken is there, or on poison), the writer a send guard (ready when the
//!   broadcast has room: rendezvous, when the previous value has been taken by
//!   all). A chosen rendezvous send guard then waits, as `send` does, until every
//!   reader has taken the value: the alt commits when the value is *offered*.
//!   Both go in [`alt!`](crate::alt!) like channel ends, and in the
//!   [`Alt`](crate::alt::Alt) builder ([`bcast_recv`](crate::alt::Alt::bcast_recv),
//!   [`bcast_send`](crate::alt::Alt::bcast_send)).
//! * Values are cloned once per reader but the last, who gets the value itself
//!   (`T: Clone`). Clones are made by the readers, outside the broadcast's lock.
//!
//! # How it works
//! The same protocol as the channels (`chan/mod.rs`, "How it works"): one short
//! lock over the state (the values not yet taken by all, each with the count of
//! readers that still have to take it; each reader's position; the FIFO of
//! waiting readers and of writers waiting for room; the poison flag), waiters
//! committed by `try_claim` under the lock, values moved through packets. A value
//! is kept in an `Arc` so that a reader takes it under the lock with a reference
//! count, and clones it (or, as the last taker, unwraps it) after releasing the
//! lock. A rendezvous `send` is two waits: for room (committed by whoever frees the
//! slot and moves the waiting writer's value in), then, with a second waiter
//! hung on its value, for the last taker (or a leaving reader) to wake it.

use super::error::{
    RecvError, RecvTimeoutError, SendError, SendFail, SendTimeoutError, TryRecvError, TrySendError,
};
use crate::alt::{Case, Kind};
use crate::park;
use crate::registration::{Registration, Withdraw};
use crate::sync::{AtomicBool, Ordering, SpinGuard, SpinLock, UnsafeCell};
use crate::wait::{ObjInfo, Wait, WaitOn};
use crate::waiter::{Outcome, Waiter, CANCELLED};
use std::collections::VecDeque;
use std::fmt;
use std::ptr;
use std::sync::Arc as ValueArc;
use std::time::{Duration, Instant};

/// A value shared by the readers that have still to take it.
type Shared<T> = ValueArc<T>;

/// The value slot of one waiting party: a writer's value, or the place a reader's
/// lands; and, for a writer, the sequence number its value got.
struct BPacket<T> {
    value: UnsafeCell<Option<Shared<T>>>,
    seq: UnsafeCell<u64>,
}

impl<T> BPacket<T> {
    fn new(value: Option<Shared<T>>) -> Self {
        Self {
            value: UnsafeCell::new(value),
            seq: UnsafeCell::new(0),
        }
    }

    /// Takes the value (the owner, once no claimer can touch the packet; or a
    /// claimer, through a pointer, under its claim).
    ///
    /// # Safety
    /// Exclusive access to the packet, as for `chan::Packet::read_raw`.
    unsafe fn take_raw(p: *const Self) -> Option<Shared<T>> {
        // SAFETY: exclusive per the caller's contract.
        unsafe { (*p).value.with_mut(|v| (*v).take()) }
    }

    /// Stores a value. Same contract as [`take_raw`](Self::take_raw).
    unsafe fn put_raw(p: *const Self, v: Shared<T>) {
        // SAFETY: exclusive per the caller's contract.
        unsafe { (*p).value.with_mut(|x| *x = Some(v)) }
    }

    /// Records the sequence number of a writer's value. Same contract.
    unsafe fn set_seq(p: *const Self, seq: u64) {
        // SAFETY: exclusive per the caller's contract.
        unsafe { (*p).seq.with_mut(|x| *x = seq) }
    }

    fn take(&mut self) -> Option<Shared<T>> {
        // SAFETY: `&mut self`: the owner, nobody else.
        unsafe { Self::take_raw(self) }
    }

    fn seq(&mut self) -> u64 {
        // SAFETY: `&mut self`: the owner, after its wait.
        self.seq.with(|x| unsafe { *x })
    }
}

/// One waiting party: its waiter, the token it is claimed with, its packet, and
/// (a reader) its id.
struct BEntry<T> {
    waiter: *const Waiter,
    token: usize,
    packet: *const BPacket<T>,
    reader: usize,
    /// An extended reader: it *holds* the value it is handed (it is still
    /// awaited for it) until its closure returns ([`State::release`]).
    held: bool,
}

impl<T> Clone for BEntry<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for BEntry<T> {}

/// A value not yet taken by every reader.
struct Item<T> {
    /// `None` once the last taker has moved it out.
    value: Option<Shared<T>>,
    /// The readers that still have to take it.
    remaining: usize,
    /// A rendezvous writer waiting for the last taker: its waiter, the token it
    /// is woken with, and its packet (where a reader's poison puts the value
    /// back; null: the writer keeps a reference to the value itself).
    writer: Option<(*const Waiter, usize, *const BPacket<T>)>,
}

/// What the broadcast's lock guards.
struct State<T> {
    /// The values not yet taken by every reader; `items[0]` has number `head`.
    items: VecDeque<Item<T>>,
    head: u64,
    /// Each reader's position (the number of the next value it takes), by id.
    cursors: Vec<Option<u64>>,
    free_ids: Vec<usize>,
    nreaders: usize,
    /// Readers waiting for a value (each has taken every value there is).
    readers: VecDeque<BEntry<T>>,
    /// Writers waiting for room.
    writers: VecDeque<BEntry<T>>,
    poisoned: bool,
    /// The number of the first value a reader's poison discarded (`u64::MAX`:
    /// none): a value below `head` was taken by every reader if it is below this,
    /// discarded otherwise.
    lost_from: u64,
    /// The rendezvous value a reader's poison discarded before its writer hooked
    /// itself on it (between its push and its wait for the takers), with its
    /// number: left for that writer to take back.
    orphan: Option<(u64, Shared<T>)>,
    /// Lossy ([`broadcast_overwriting`]): a send to a full buffer drops the
    /// oldest value (readers that had not taken it skip it) instead of waiting.
    overwrite: bool,
}

/// The shared state of one broadcast channel (the alt guards take it).
pub struct RawBroadcast<T> {
    state: SpinLock<State<T>>,
    /// 0: rendezvous.
    cap: usize,
    poisoned: AtomicBool,
    /// Its identity in reports.
    info: ObjInfo,
}

// SAFETY: the raw pointers in the state (waiters and packets of waiting parties)
// are only dereferenced under the lock or a claim, whichever thread holds it (the
// same contract as a channel's queues); values cross threads, so `T: Send`, and
// readers share them (each clones its own), so `T: Sync`.
unsafe impl<T: Send + Sync> Send for RawBroadcast<T> {}
// SAFETY: as above; every access to the state goes through the lock.
unsafe impl<T: Send + Sync> Sync for RawBroadcast<T> {}

impl<T> fmt::Debug for RawBroadcast<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawBroadcast")
            .field("capacity", &self.cap)
            .field("poisoned", &self.poisoned.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Values to drop once the lock is released (a value's drop is user code).
type Garbage<T> = Vec<Shared<T>>;

impl<T> State<T> {
    fn tail(&self) -> u64 {
        self.head + self.items.len() as u64
    }

    /// A lossy broadcast with a full buffer drops its oldest value, which the
    /// readers behind it skip.
    fn make_room(&mut self, cap: usize, garbage: &mut Garbage<T>) {
        if self.overwrite && !self.has_room(cap) {
            let item = self.items.pop_front().expect("a full buffer has items");
            self.head += 1;
            garbage.extend(item.value);
        }
    }

    fn has_room(&self, cap: usize) -> bool {
        if cap == 0 {
            self.items.is_empty()
        } else {
            self.items.len() < cap
        }
    }

    /// Appends a value (not poisoned, room checked), hands it to every waiting
    /// reader, and lets [`pop_done`](Self::pop_done) drop what is done and refill;
    /// returns its number.
    fn push(&mut self, cap: usize, v: Shared<T>, garbage: &mut Garbage<T>) -> u64 {
        let seq = self.push_only(v);
        self.pop_done(cap, garbage);
        seq
    }

    /// Appends a value and hands it to every waiting reader.
    fn push_only(&mut self, v: Shared<T>) -> u64 {
        let seq = self.tail();
        self.items.push_back(Item {
            value: Some(v),
            remaining: self.nreaders,
            writer: None,
        });
        let k = self.items.len() - 1;
        while let Some(e) = self.readers.pop_front() {
            // SAFETY: an entry in the queue points to a live waiter while we hold
            // the lock (its owner unregisters under the lock before leaving).
            if !unsafe { (*e.waiter).try_claim(e.token) } {
                continue;
            }
            let item = &mut self.items[k];
            let v = if e.held {
                item.value.clone()
            } else {
                item.remaining -= 1;
                if item.remaining == 0 {
                    item.value.take()
                } else {
                    item.value.clone()
                }
            };
            let c = self.cursors[e.reader].as_mut().expect("a waiting reader");
            debug_assert_eq!(*c, seq, "a waiting reader had a value to take");
            *c += 1;
            // SAFETY: we hold the claim: the reader stays in its wait and nobody
            // else touches its packet until `finish`.
            unsafe {
                BPacket::put_raw(e.packet, v.expect("a value for each reader"));
                BPacket::set_seq(e.packet, seq);
                Waiter::finish(e.waiter, false);
            }
        }
        seq
    }

    /// Drops the values every reader has taken from the front (waking a
    /// rendezvous writer waiting for its last taker), then moves waiting writers'
    /// values in while there is room.
    fn pop_done(&mut self, cap: usize, garbage: &mut Garbage<T>) {
        loop {
            while self.items.front().is_some_and(|i| i.remaining == 0) {
                let item = self.items.pop_front().expect("a front item");
                self.head += 1;
                garbage.extend(item.value);
                if let Some((w, token, _)) = item.writer {
                    // SAFETY: the writer unhooks itself under the lock before it
                    // leaves its wait, so the waiter is live; it is woken once.
                    unsafe { Waiter::try_wake(w, token, false) };
                }
            }
            if self.poisoned || !self.has_room(cap) {
                return;
            }
            let Some(e) = self.claim_writer() else { return };
            // SAFETY: we hold the claim on the writer: its packet is ours until
            // `finish`; a waiting writer's packet holds its value.
            let v = unsafe { BPacket::take_raw(e.packet) }.expect("a writer's value");
            let seq = self.push_only(v);
            // SAFETY: as above.
            unsafe {
                BPacket::set_seq(e.packet, seq);
                Waiter::finish(e.waiter, false);
            }
        }
    }

    fn claim_writer(&mut self) -> Option<BEntry<T>> {
        while let Some(e) = self.writers.pop_front() {
            // SAFETY: live while queued and we hold the lock.
            if unsafe { (*e.waiter).try_claim(e.token) } {
                return Some(e);
            }
        }
        None
    }

    /// Reader `id` takes its next value, if there is one.
    fn take(&mut self, cap: usize, id: usize, garbage: &mut Garbage<T>) -> Option<Shared<T>> {
        // Past the values a lossy broadcast dropped.
        let c = self.cursors[id].expect("an enrolled reader").max(self.head);
        if c >= self.tail() {
            return None;
        }
        let item = &mut self.items[(c - self.head) as usize];
        item.remaining -= 1;
        let v = if item.remaining == 0 {
            item.value.take()
        } else {
            item.value.clone()
        };
        self.cursors[id] = Some(c + 1);
        self.pop_done(cap, garbage);
        v
    }

    /// Extended reader `id` takes its next value, if there is one, and holds it:
    /// it stays awaited for it until [`release`](Self::release). Returns the
    /// value and its number.
    fn take_held(&mut self, id: usize) -> Option<(Shared<T>, u64)> {
        let c = self.cursors[id].expect("an enrolled reader").max(self.head);
        if c >= self.tail() {
            return None;
        }
        let v = self.items[(c - self.head) as usize]
            .value
            .clone()
            .expect("a held value is there");
        self.cursors[id] = Some(c + 1);
        Some((v, c))
    }

    /// An extended reader's closure returned: it has taken value `seq` (unless
    /// that is gone: withdrawn, dropped by a lossy send, or discarded by poison).
    fn release(&mut self, cap: usize, seq: u64, garbage: &mut Garbage<T>) {
        if seq < self.head || seq >= self.tail() {
            return;
        }
        let item = &mut self.items[(seq - self.head) as usize];
        item.remaining -= 1;
        if item.remaining == 0 {
            garbage.extend(item.value.take());
        }
        self.pop_done(cap, garbage);
    }

    /// Enrolls a reader at the tail.
    fn join(&mut self) -> usize {
        let tail = self.tail();
        self.nreaders += 1;
        match self.free_ids.pop() {
            Some(id) => {
                self.cursors[id] = Some(tail);
                id
            }
            None => {
                self.cursors.push(Some(tail));
                self.cursors.len() - 1
            }
        }
    }

    /// Reader `id` leaves: it is no longer awaited for the values it has not taken.
    /// Returns whether it was the last reader.
    fn leave(&mut self, cap: usize, id: usize, garbage: &mut Garbage<T>) -> bool {
        let c = self.cursors[id].take().expect("an enrolled reader");
        self.free_ids.push(id);
        self.nreaders -= 1;
        let from = c.saturating_sub(self.head) as usize;
        for item in self.items.iter_mut().skip(from) {
            item.remaining -= 1;
            if item.remaining == 0 {
                garbage.extend(item.value.take());
            }
        }
        self.pop_done(cap, garbage);
        self.nreaders == 0
    }

    /// Whether every enrolled reader is waiting for a value now (a try-send to a
    /// rendezvous broadcast completes only then).
    fn all_readers_waiting(&self) -> bool {
        if self.readers.len() < self.nreaders {
            return false;
        }
        let mut ids: Vec<usize> = self
            .readers
            .iter()
            // SAFETY: live while queued and we hold the lock.
            .filter(|e| unsafe { (*e.waiter).is_waiting() })
            .map(|e| e.reader)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len() == self.nreaders
    }

    /// Withdraws the rendezvous value `seq` that not every reader has taken: the
    /// readers that had not taken it skip it (as a lossy broadcast's dropped
    /// value), and the next writer may go. Returns the value; `None` if it is
    /// gone (every reader took it).
    fn withdraw(&mut self, cap: usize, seq: u64, garbage: &mut Garbage<T>) -> Option<Shared<T>> {
        if seq < self.head || seq >= self.tail() {
            return None;
        }
        debug_assert_eq!(seq, self.head, "a rendezvous broadcast holds one value");
        let item = self.items.pop_front().expect("the value");
        self.head += 1;
        self.pop_done(cap, garbage);
        item.value
    }

    /// Removes every entry of `waiter`.
    fn unregister(&mut self, waiter: *const Waiter) {
        self.readers.retain(|e| e.waiter != waiter);
        self.writers.retain(|e| e.waiter != waiter);
    }
}

impl<T> RawBroadcast<T> {
    fn new(cap: usize, overwrite: bool, info: ObjInfo) -> Self {
        let mut s = State {
            items: VecDeque::new(),
            head: 0,
            cursors: Vec::new(),
            free_ids: Vec::new(),
            nreaders: 0,
            readers: VecDeque::new(),
            writers: VecDeque::new(),
            poisoned: false,
            lost_from: u64::MAX,
            orphan: None,
            overwrite,
        };
        let id = s.join();
        debug_assert_eq!(id, 0);
        Self {
            state: SpinLock::new(s),
            cap,
            poisoned: AtomicBool::new(false),
            info,
        }
    }

    /// The channel's identity in reports (id, name, where it was made).
    pub fn info(&self) -> &ObjInfo {
        &self.info
    }

    /// This channel as a report names it.
    pub fn object(&self) -> crate::wait::Object {
        self.info.object_in_arc("broadcast channel", self)
    }

    /// The wait record of a party blocked on this channel (`send`: its writer).
    fn wait_on(&self, send: bool) -> WaitOn {
        unsafe fn w<T>(c: *const ()) -> Wait {
            // SAFETY: `WaitOn::new`'s contract: the blocked party holds an end.
            let c = unsafe { &*(c as *const RawBroadcast<T>) };
            Wait::Chan {
                op: "send",
                chan: c.object(),
            }
        }
        unsafe fn r<T>(c: *const ()) -> Wait {
            // SAFETY: as in `w`.
            let c = unsafe { &*(c as *const RawBroadcast<T>) };
            Wait::Chan {
                op: "recv",
                chan: c.object(),
            }
        }
        let f = if send { w::<T> } else { r::<T> };
        // SAFETY: the blocked party holds an end, which keeps this channel alive.
        unsafe { WaitOn::new(self as *const Self as *const (), f) }
    }

    fn lock(&self) -> SpinGuard<'_, State<T>> {
        self.state.lock()
    }

    fn addr(&self) -> usize {
        self as *const Self as *const () as usize
    }

    fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    /// The checker's description of an operation on this broadcast: it
    /// conflicts with every other operation on it (two readers' receives do
    /// too: which one takes a value first decides who may see a later poison
    /// or a rendezvous writer's return), and a timed one touches the clock.
    #[cfg(feature = "check")]
    fn step_op(&self, kind: crate::step::OpKind, timed: bool) -> crate::step::Op {
        use crate::step::{Access, Class, Op, CLOCK};
        let mut op =
            Op::one(kind, self.info.id() as usize, Class::Chan, Access::Other).with_info(self.info);
        if timed {
            op.objs.push(CLOCK);
        }
        op
    }

    /// An end's `poison`: poisons unless the end is not `poisonable`
    /// (`reader`: from the reading side).
    fn poison_end(&self, poisonable: bool, reader: bool) {
        if poisonable {
            crate::check_step!(|| self.step_op(crate::step::OpKind::Poison, false));
            self.poison(reader);
        }
    }

    /// Poisons; `reader`: from the reading side (discards the values).
    fn poison(&self, reader: bool) {
        let mut garbage = Vec::new();
        {
            let mut g = self.lock();
            g.poisoned = true;
            self.poisoned.store(true, Ordering::Release);
            if reader {
                let tail = g.tail();
                g.lost_from = g.lost_from.min(g.head);
                let mut seq = g.head;
                let cap = self.cap;
                for item in std::mem::take(&mut g.items) {
                    seq += 1;
                    match (item.writer, item.value) {
                        (Some((w, token, p)), v) => {
                            // SAFETY: the writer is live (it unhooks under the
                            // lock before it leaves); once claimed it does not
                            // touch its packet until `finish`. A failed claim: it
                            // left its wait (a deadline, a cancellation) and
                            // reads its packet only under this lock, after us:
                            // the value waits for it there.
                            unsafe {
                                let claimed = (*w).try_claim(token);
                                match v {
                                    Some(v) if !p.is_null() => BPacket::put_raw(p, v),
                                    v => garbage.extend(v),
                                }
                                if claimed {
                                    Waiter::finish(w, true);
                                }
                            }
                        }
                        (None, Some(v)) if cap == 0 => {
                            garbage.extend(g.orphan.take().map(|(_, v)| v));
                            g.orphan = Some((seq - 1, v));
                        }
                        (None, v) => garbage.extend(v),
                    }
                }
                // The values are gone: every reader's position moves to the end.
                g.head = tail;
                for c in g.cursors.iter_mut().flatten() {
                    *c = tail;
                }
            }
            for e in std::mem::take(&mut g.readers)
                .into_iter()
                .chain(std::mem::take(&mut g.writers))
            {
                // SAFETY: live while queued and we hold the lock.
                unsafe { Waiter::try_wake(e.waiter, e.token, true) };
            }
        }
        drop(garbage);
    }
}

/// Makes a rendezvous broadcast channel: its writer and a first reader. More
/// readers join with [`subscribe`](BroadcastReceiver::subscribe).
///
/// ```
/// let (tx, rx) = hoare_core::chan::broadcast::<u32>();
/// let t = std::thread::spawn(move || rx.recv());
/// tx.send(5).unwrap(); // returns once the (only) reader has taken it
/// assert_eq!(t.join().unwrap(), Ok(5));
/// ```
#[track_caller]
pub fn broadcast<T: Clone>() -> (BroadcastSender<T>, BroadcastReceiver<T>) {
    broadcast_bounded(0)
}

/// Makes a buffered broadcast channel that keeps up to `n` values not yet taken
/// by every reader (`0`: rendezvous, as [`broadcast`]). A send blocks while the
/// slowest reader is `n` values behind.
///
/// ```
/// let (tx, rx1) = hoare_core::chan::broadcast_bounded::<u32>(2);
/// let rx2 = rx1.subscribe();
/// tx.send(1).unwrap(); // returns at once: there is room for both readers
/// tx.send(2).unwrap();
/// assert_eq!((rx1.len(), rx1.capacity()), (2, Some(2)));
/// assert_eq!((rx1.recv(), rx1.recv()), (Ok(1), Ok(2)));
/// assert_eq!(rx2.recv(), Ok(1)); // rx2 is still behind
/// ```
#[track_caller]
pub fn broadcast_bounded<T: Clone>(n: usize) -> (BroadcastSender<T>, BroadcastReceiver<T>) {
    make(n, false)
}

/// Makes a lossy broadcast channel that keeps the `n` newest values (at least
/// 1): a send never blocks; on a full buffer it drops the oldest value, which a
/// reader that had not taken it skips. With `n = 1` it is a "latest value" cell
/// (a watch): every reader receives the newest value it has not seen, and a slow
/// reader misses the ones sent meanwhile.
///
/// ```
/// let (tx, rx) = hoare_core::chan::broadcast_overwriting::<u32>(1);
/// let other = rx.subscribe();
/// for v in 1..=3 {
///     tx.send(v).unwrap(); // never blocks
/// }
/// assert_eq!(rx.try_recv(), Ok(3)); // only the latest is left
/// tx.send(4).unwrap();
/// assert_eq!(rx.recv(), Ok(4));
/// assert_eq!(other.recv(), Ok(4)); // it missed 1 to 3
/// ```
///
/// # Panics
/// If `n` is 0.
#[track_caller]
pub fn broadcast_overwriting<T: Clone>(n: usize) -> (BroadcastSender<T>, BroadcastReceiver<T>) {
    assert!(
        n > 0,
        "hoare: an overwriting broadcast needs a capacity of at least 1"
    );
    make(n, true)
}

#[track_caller]
fn make<T>(n: usize, overwrite: bool) -> (BroadcastSender<T>, BroadcastReceiver<T>) {
    let raw = crate::sync::Arc::new(RawBroadcast::new(n, overwrite, ObjInfo::here(None)));
    (
        BroadcastSender {
            raw: raw.clone(),
            poisonable: true,
        },
        BroadcastReceiver {
            raw,
            id: 0,
            poisonable: true,
        },
    )
}

/// The writing end of a broadcast channel (exclusive: it cannot be cloned).
/// Dropping it poisons from the writing side (the readers take what is buffered
/// first).
pub struct BroadcastSender<T> {
    raw: crate::sync::Arc<RawBroadcast<T>>,
    poisonable: bool,
}

/// A reading end of a broadcast channel: one enrolled reader. Not `Clone` (a
/// reader has a position): a new reader joins with
/// [`subscribe`](Self::subscribe). Dropping it leaves; dropping the last one
/// poisons from the reading side.
pub struct BroadcastReceiver<T> {
    raw: crate::sync::Arc<RawBroadcast<T>>,
    id: usize,
    poisonable: bool,
}

impl<T> fmt::Debug for BroadcastSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastSender")
            .field("raw", &self.raw)
            .finish()
    }
}

impl<T> fmt::Debug for BroadcastReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastReceiver")
            .field("raw", &self.raw)
            .field("id", &self.id)
            .finish()
    }
}

/// Joins a new reader at the tail of `raw`.
fn subscribe<T>(raw: &crate::sync::Arc<RawBroadcast<T>>) -> BroadcastReceiver<T> {
    // A send before or after the new reader joined differs.
    crate::check_step!(|| raw.step_op(crate::step::OpKind::Enroll, false));
    let id = raw.lock().join();
    BroadcastReceiver {
        raw: raw.clone(),
        id,
        poisonable: true,
    }
}

/// Gets a reader's own value out of the shared one: the value itself if no other
/// reader holds it any more, else a clone.
fn own<T: Clone>(v: Shared<T>) -> T {
    ValueArc::try_unwrap(v).unwrap_or_else(|v| T::clone(&v))
}

/// A waiting party's registration: withdrawing takes its entry out, unless the
/// party that ended the wait did.
struct QueueSite<'a, T> {
    raw: &'a RawBroadcast<T>,
}

impl<T> Withdraw for QueueSite<'_, T> {
    fn withdraw(&mut self, waiter: Option<&Waiter>) -> bool {
        let w = waiter.expect("a broadcast registration has a waiter");
        if !w.is_done() {
            self.raw.lock().unregister(w);
        }
        false
    }
}

/// A rendezvous writer's second wait: hooked on its value until the last taker
/// wakes it. Withdrawing unhooks it.
struct HookSite<'a, T> {
    raw: &'a RawBroadcast<T>,
    seq: u64,
}

impl<T> Withdraw for HookSite<'_, T> {
    fn withdraw(&mut self, waiter: Option<&Waiter>) -> bool {
        let me: *const Waiter = waiter.expect("a broadcast registration has a waiter");
        let mut g = self.raw.lock();
        if self.seq >= g.head && self.seq < g.tail() {
            let k = (self.seq - g.head) as usize;
            if g.items[k].writer.is_some_and(|(w, _, _)| w == me) {
                g.items[k].writer = None;
            }
        }
        false
    }
}

/// How a rendezvous writer's wait for its readers ended.
enum Taken<T> {
    /// Every reader took the value (or left).
    All,
    /// Poisoned from the reading side (or the party was cancelled): the value back.
    Poisoned(T),
    /// The deadline passed first: the value was withdrawn, and comes back.
    Timeout(T),
}

impl<T: Clone> RawBroadcast<T> {
    /// A rendezvous writer whose value got number `seq` waits until every reader
    /// has taken it (or left), at most until `deadline`: then it withdraws the
    /// value from the readers that had not taken it.
    fn await_takers(&self, seq: u64, deadline: Option<Instant>) -> Taken<T> {
        if self.cap != 0 {
            return Taken::All;
        }
        park::with_current(|p| {
            let waiter = Waiter::new(p.unparker()).on(self.wait_on(true));
            let mut packet = BPacket::new(None);
            {
                let mut g = self.lock();
                if seq < g.head || seq >= g.tail() {
                    // Taken by all; or discarded by a reader's poison before we
                    // hooked ourselves on it, which left it for us.
                    return match g.orphan.take_if(|(s, _)| *s == seq) {
                        Some((_, v)) => Taken::Poisoned(own(v)),
                        None => Taken::All,
                    };
                }
                let k = (seq - g.head) as usize;
                g.items[k].writer = Some((&waiter, 0, &packet));
            }
            let reg = Registration::new(HookSite { raw: self, seq }, &waiter);
            let out = waiter.wait_as(p, deadline);
            let taken = match out {
                Outcome::Done {
                    poisoned: false, ..
                } => Taken::All,
                Outcome::Done { poisoned: true, .. } => {
                    Taken::Poisoned(own(packet.take().expect("a poisoned writer's value")))
                }
                Outcome::Aborted { token } => {
                    // Still hooked (the registration is dropped below): a reader's
                    // poison since the abort left the value in our packet.
                    let mut garbage = Vec::new();
                    let mut g = self.lock();
                    let taken = if let Some(v) = packet.take() {
                        Taken::Poisoned(own(v))
                    } else if token == CANCELLED {
                        // A shutdown: the value back if it is still there.
                        let v = (seq >= g.head && seq < g.tail())
                            .then(|| g.items[(seq - g.head) as usize].value.clone())
                            .flatten();
                        v.map_or(Taken::All, |v| Taken::Poisoned(own(v)))
                    } else {
                        // The deadline: not every reader took it; withdrawn.
                        match g.withdraw(self.cap, seq, &mut garbage) {
                            Some(v) => Taken::Timeout(own(v)),
                            None => Taken::All,
                        }
                    };
                    drop(g);
                    drop(garbage);
                    taken
                }
            };
            drop(reg);
            taken
        })
    }

    /// Sends `value`: `deadline` `None`: only if that needs no waiting (a
    /// rendezvous broadcast: every reader is waiting now); `Some(d)`: waiting at
    /// most until `d` (`None`: for ever).
    fn send(&self, value: T, deadline: Option<Option<Instant>>) -> Result<(), (SendFail, T)> {
        crate::check_step!(|| {
            use crate::step::OpKind;
            match deadline {
                None => self.step_op(OpKind::TrySend, false),
                Some(None) => self.step_op(OpKind::Send, false),
                Some(Some(_)) => self.step_op(OpKind::TimedSend, true),
            }
        });
        let v = ValueArc::new(value);
        let mut garbage = Vec::new();
        let mut g = self.lock();
        if g.poisoned {
            drop(g);
            return Err((SendFail::Poisoned, own(v)));
        }
        g.make_room(self.cap, &mut garbage);
        let seq = if g.has_room(self.cap) {
            if deadline.is_none() && self.cap == 0 {
                // A try: all or (but for a reader leaving its wait this instant)
                // nothing.
                if !g.all_readers_waiting() {
                    drop(g);
                    park::spend_budget();
                    return Err((SendFail::Full, own(v)));
                }
                let seq = g.push(self.cap, v, &mut garbage);
                let back = g.withdraw(self.cap, seq, &mut garbage);
                drop(g);
                drop(garbage);
                return match back {
                    None => Ok(()),
                    Some(v) => Err((SendFail::Full, own(v))),
                };
            }
            let seq = g.push(self.cap, v, &mut garbage);
            drop(g);
            seq
        } else {
            let Some(deadline) = deadline else {
                drop(g);
                park::spend_budget();
                return Err((SendFail::Full, own(v)));
            };
            let (out, back, seq) = self.wait_queued(g, None, Some(v), deadline);
            let why = match out {
                Outcome::Done {
                    poisoned: false, ..
                } => None,
                Outcome::Aborted { token } if token != CANCELLED => Some(SendFail::Timeout),
                _ => Some(SendFail::Poisoned),
            };
            if let Some(why) = why {
                return Err((why, own(back.expect("an unsent value"))));
            }
            seq
        };
        drop(garbage);
        match self.await_takers(seq, deadline.flatten()) {
            Taken::All => Ok(()),
            Taken::Poisoned(v) => Err((SendFail::Poisoned, v)),
            Taken::Timeout(v) => Err((SendFail::Timeout, v)),
        }
    }

    fn recv(&self, id: usize, deadline: Option<Option<Instant>>) -> Result<T, RecvFailure> {
        self.recv_raw(id, deadline, false).map(|(v, _)| own(v))
    }

    /// Receives (`held`: for an extended reader, see [`State::take_held`]): the
    /// value and its number.
    fn recv_raw(
        &self,
        id: usize,
        deadline: Option<Option<Instant>>,
        held: bool,
    ) -> Result<(Shared<T>, u64), RecvFailure> {
        crate::check_step!(|| {
            use crate::step::OpKind;
            // A held (extended) receive names itself as one in reports; a
            // `try_` one is a try-receive either way (as on a channel).
            match (deadline, held) {
                (None, _) => self.step_op(OpKind::TryRecv, false),
                (Some(None), false) => self.step_op(OpKind::Recv, false),
                (Some(None), true) => self.step_op(OpKind::ExtRecv, false),
                (Some(Some(_)), false) => self.step_op(OpKind::TimedRecv, true),
                (Some(Some(_)), true) => self.step_op(OpKind::TimedExtRecv, true),
            }
        });
        let mut garbage = Vec::new();
        let mut g = self.lock();
        let got = if held {
            g.take_held(id)
        } else {
            let seq = g.cursors[id].expect("an enrolled reader").max(g.head);
            g.take(self.cap, id, &mut garbage).map(|v| (v, seq))
        };
        if let Some(got) = got {
            drop(g);
            drop(garbage);
            return Ok(got);
        }
        if g.poisoned {
            drop(g);
            return Err(RecvFailure::Poisoned);
        }
        let Some(deadline) = deadline else {
            drop(g);
            park::spend_budget();
            return Err(RecvFailure::Empty);
        };
        let (out, got, seq) = self.wait_queued(g, Some((id, held)), None, deadline);
        match out {
            Outcome::Done {
                poisoned: false, ..
            } => Ok((got.expect("a received value"), seq)),
            Outcome::Done { poisoned: true, .. } | Outcome::Aborted { token: CANCELLED } => {
                Err(RecvFailure::Poisoned)
            }
            Outcome::Aborted { .. } => Err(RecvFailure::Timeout),
        }
    }

    /// Waits in a queue of `g` (whose lock the caller holds; released once
    /// registered) until the wait is committed or `deadline` passes: a writer's
    /// (`reader` `None`) with `value` to be moved in, or reader `id`'s
    /// (`reader` `Some((id, held))`). Returns how the wait ended, what the
    /// packet holds then (the unsent value, or the received one) and the number
    /// of the value sent or received.
    fn wait_queued(
        &self,
        mut g: SpinGuard<'_, State<T>>,
        reader: Option<(usize, bool)>,
        value: Option<Shared<T>>,
        deadline: Option<Instant>,
    ) -> (Outcome, Option<Shared<T>>, u64) {
        park::with_current(|p| {
            let waiter = Waiter::new(p.unparker()).on(self.wait_on(reader.is_none()));
            let mut packet = BPacket::new(value);
            let entry = BEntry {
                waiter: &waiter,
                token: 0,
                packet: &packet,
                reader: reader.map_or(usize::MAX, |(id, _)| id),
                held: reader.is_some_and(|(_, held)| held),
            };
            if reader.is_some() {
                g.readers.push_back(entry);
            } else {
                g.writers.push_back(entry);
            }
            drop(g);
            let reg = Registration::new(QueueSite { raw: self }, &waiter);
            let out = waiter.wait_as(p, deadline);
            drop(reg);
            let seq = packet.seq();
            (out, packet.take(), seq)
        })
    }

    /// Receives and runs `f` on the value while this reader holds it (see
    /// [`BroadcastReceiver::recv_with`]).
    fn recv_with<R>(
        &self,
        id: usize,
        deadline: Option<Option<Instant>>,
        f: impl FnOnce(T) -> R,
    ) -> Result<R, RecvFailure> {
        let (v, seq) = self.recv_raw(id, deadline, true)?;
        let _release = Release { raw: self, seq };
        Ok(f(own(v)))
    }
}

/// Releases an extended reader's value when its closure returns or panics.
struct Release<'a, T> {
    raw: &'a RawBroadcast<T>,
    seq: u64,
}

impl<T> Drop for Release<'_, T> {
    fn drop(&mut self) {
        let mut garbage = Vec::new();
        self.raw
            .lock()
            .release(self.raw.cap, self.seq, &mut garbage);
        drop(garbage);
    }
}

/// Why a broadcast receive failed.
enum RecvFailure {
    Poisoned,
    Empty,
    Timeout,
}

impl<T: Clone> BroadcastSender<T> {
    /// Sends `value` to every enrolled reader: returns once each of them has taken
    /// it (rendezvous) or once the buffer has taken it (buffered: it blocks while
    /// the slowest reader is `capacity` values behind). A reader that leaves is no
    /// longer awaited. On poison the value comes back (also, on a rendezvous
    /// broadcast, when a reader poisons while the writer waits for its readers:
    /// some of them may have taken it).
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::broadcast::<u32>();
    /// drop(rx); // the last reader leaves: poisoned from the reading side
    /// assert_eq!(tx.send(1).unwrap_err().into_inner(), 1);
    /// ```
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.raw
            .send(value, Some(None))
            .map_err(|(_, v)| SendError(v))
    }

    /// Sends `value` only if that needs no waiting, else gives it back:
    /// buffered, if there is room for all (lossy: always, unless poisoned);
    /// rendezvous, if every enrolled reader is waiting for a value now, when they
    /// all take it at once. `Full(value)`: the send would have to wait (some
    /// reader is not waiting, or the buffer is full); `Poisoned(value)`.
    ///
    /// On a rendezvous broadcast it is all or nothing, but for one race: a reader
    /// whose wait ends (its timeout, or its alt chose another guard) at the very
    /// moment the value is handed out cannot take it; the value is then withdrawn
    /// (the readers that did not take it never see it) and comes back as `Full`,
    /// while the readers that were handed it keep it (see
    /// `docs/semantics.md#broadcast`). A failure spends the process's
    /// [cooperative budget](crate::park#the-cooperative-budget).
    ///
    /// ```
    /// use hoare_core::chan::{broadcast, broadcast_bounded, TrySendError};
    ///
    /// let (tx, rx) = broadcast::<u32>();
    /// // Rendezvous, and the reader is not waiting: nothing happens.
    /// assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
    /// assert!(rx.try_recv().is_err());
    ///
    /// let (tx, rx) = broadcast_bounded::<u32>(1);
    /// assert_eq!(tx.try_send(2), Ok(())); // room for all
    /// assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
    /// drop(rx); // the last reader leaves: poisoned
    /// assert_eq!(tx.try_send(4), Err(TrySendError::Poisoned(4)));
    /// ```
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.raw.send(value, None).map_err(|(why, v)| match why {
            SendFail::Poisoned => TrySendError::Poisoned(v),
            SendFail::Full | SendFail::Timeout => TrySendError::Full(v),
        })
    }

    /// Like [`send`](Self::send), giving up after `timeout` (see
    /// [`send_deadline`](Self::send_deadline)).
    ///
    /// ```
    /// use hoare_core::chan::{broadcast, SendTimeoutError};
    /// use std::time::Duration;
    ///
    /// let (tx, _rx) = broadcast::<u32>(); // its reader never reads
    /// let r = tx.send_timeout(7, Duration::from_millis(5));
    /// assert_eq!(r, Err(SendTimeoutError::Timeout(7)));
    /// ```
    pub fn send_timeout(&self, value: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        self.send_until(value, Some(crate::timer::deadline_after(timeout)))
    }

    /// Like [`send`](Self::send), giving up at `deadline`: `Timeout(value)` if
    /// the send has not completed by then.
    ///
    /// Buffered: the value did not get into the buffer; nothing happened.
    /// Rendezvous: the deadline covers both the wait for room and the wait for
    /// every reader to take the value. If it passes while some readers have not
    /// taken it, the value is **withdrawn**: the readers that had not taken it
    /// never will (they skip it, as a lossy broadcast's dropped value), the
    /// readers that took it keep it (a reader cannot un-take a value), and the
    /// writer gets the value back. So `Timeout` tells the writer exactly that not
    /// every reader received the value (any number of them, from none to all but
    /// one, may have); a writer that must know who did needs replies from them.
    /// `Ok` means every reader enrolled when it was offered took it.
    ///
    /// ```
    /// use hoare_core::chan::{broadcast, SendTimeoutError};
    /// use std::time::{Duration, Instant};
    ///
    /// let (tx, rx) = broadcast::<u32>();
    /// let slow = tx.subscribe(); // never reads
    /// let t = std::thread::spawn(move || rx.recv());
    /// // Time for the thread to start and take it, even on a busy machine.
    /// let r = tx.send_deadline(1, Instant::now() + Duration::from_millis(500));
    /// assert_eq!(r, Err(SendTimeoutError::Timeout(1))); // `slow` never took it
    /// assert_eq!(t.join().unwrap(), Ok(1)); // the first reader did, and keeps it
    /// assert!(slow.try_recv().is_err()); // withdrawn: `slow` skips it
    /// ```
    pub fn send_deadline(&self, value: T, deadline: Instant) -> Result<(), SendTimeoutError<T>> {
        self.send_until(value, Some(deadline))
    }

    fn send_until(&self, value: T, deadline: Option<Instant>) -> Result<(), SendTimeoutError<T>> {
        self.raw
            .send(value, Some(deadline))
            .map_err(|(why, v)| match why {
                SendFail::Poisoned => SendTimeoutError::Poisoned(v),
                SendFail::Full | SendFail::Timeout => SendTimeoutError::Timeout(v),
            })
    }
}

impl<T> BroadcastSender<T> {
    /// A new reader, which receives every value sent after it joined.
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::broadcast_bounded::<u32>(4);
    /// tx.send(1).unwrap();
    /// let late = tx.subscribe();
    /// tx.send(2).unwrap();
    /// assert_eq!(rx.recv(), Ok(1));
    /// assert_eq!(late.recv(), Ok(2)); // it joined after 1 was sent
    /// ```
    pub fn subscribe(&self) -> BroadcastReceiver<T> {
        subscribe(&self.raw)
    }

    /// Poisons from the writing side (unless non-poisonable): the readers take the
    /// buffered values, then see the poison.
    pub fn poison(&self) {
        self.raw.poison_end(self.poisonable, false);
    }

    /// This end, made non-poisonable: its [`poison`](Self::poison) does nothing
    /// (dropping it still poisons).
    pub fn non_poisonable(mut self) -> Self {
        self.poisonable = false;
        self
    }

    /// Whether the broadcast is poisoned.
    pub fn is_poisoned(&self) -> bool {
        self.raw.is_poisoned()
    }

    /// Whether a send may still deliver: not poisoned (see
    /// [`Sender::is_open`](super::Sender::is_open)).
    pub fn is_open(&self) -> bool {
        !self.is_poisoned()
    }

    /// The number of enrolled readers.
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::broadcast::<u8>();
    /// let rx2 = tx.subscribe();
    /// assert_eq!(tx.readers(), 2);
    /// drop(rx2);
    /// assert_eq!(tx.readers(), 1);
    /// # drop(rx);
    /// ```
    pub fn readers(&self) -> usize {
        self.raw.lock().nreaders
    }

    /// The number of values not yet taken by every reader.
    pub fn len(&self) -> usize {
        self.raw.lock().items.len()
    }

    /// Whether every reader has taken every value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer's capacity (`Some(0)`: rendezvous).
    pub fn capacity(&self) -> Option<usize> {
        Some(self.raw.cap)
    }

    /// The shared state, which the alt guards take.
    pub fn raw(&self) -> &RawBroadcast<T> {
        &self.raw
    }

    #[doc(hidden)]
    #[inline]
    pub fn __alt_send_case(&self, value: Option<T>) -> BcastSendCase<'_, T>
    where
        T: Clone,
    {
        BcastSendCase::new(value.map(|v| (&*self.raw, v)))
    }
}

impl<T: Clone> BroadcastReceiver<T> {
    /// Receives the next value, blocking until the writer sends one. Reports
    /// poison once the broadcast is poisoned and this reader has taken every value
    /// left for it.
    pub fn recv(&self) -> Result<T, RecvError> {
        self.raw
            .recv(self.id, Some(None))
            .map_err(|_| RecvError::Poisoned)
    }

    /// Receives a value if one is there for this reader now.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.raw.recv(self.id, None).map_err(|e| match e {
            RecvFailure::Poisoned => TryRecvError::Poisoned,
            _ => TryRecvError::Empty,
        })
    }

    /// Like [`recv`](Self::recv), giving up after `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.raw
            .recv(self.id, Some(Some(crate::timer::deadline_after(timeout))))
            .map_err(|e| match e {
                RecvFailure::Poisoned => RecvTimeoutError::Poisoned,
                _ => RecvTimeoutError::Timeout,
            })
    }

    /// Like [`recv`](Self::recv), giving up at `deadline`.
    ///
    /// ```
    /// use hoare_core::chan::{broadcast, RecvTimeoutError};
    /// use std::time::{Duration, Instant};
    ///
    /// let (_tx, rx) = broadcast::<u32>();
    /// let r = rx.recv_deadline(Instant::now() + Duration::from_millis(1));
    /// assert_eq!(r, Err(RecvTimeoutError::Timeout));
    /// ```
    pub fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        self.raw
            .recv(self.id, Some(Some(deadline)))
            .map_err(|e| match e {
                RecvFailure::Poisoned => RecvTimeoutError::Poisoned,
                _ => RecvTimeoutError::Timeout,
            })
    }

    /// Extended rendezvous: receives the next value and runs `f` on it while
    /// this reader *holds* it: the value counts as not yet taken by this reader
    /// until `f` returns (or panics), so a rendezvous writer stays blocked and a
    /// buffered value keeps its place (a writer waiting for room waits) until
    /// then. Poison from another reader meanwhile still ends the writer's wait
    /// (see `docs/semantics.md#broadcast`).
    ///
    /// ```
    /// use hoare_core::chan::broadcast;
    ///
    /// let (tx, rx) = broadcast::<u32>();
    /// let (log_tx, log) = hoare_core::chan::Channel::builder().unbounded().one2one();
    /// let w = std::thread::spawn(move || {
    ///     tx.send(20).unwrap();
    ///     log_tx.send("writer released").unwrap();
    /// });
    /// let r = rx.recv_with(|v| {
    ///     assert!(log.try_recv().is_err()); // the writer is still blocked
    ///     v + 1
    /// });
    /// assert_eq!(r, Ok(21));
    /// w.join().unwrap();
    /// assert_eq!(log.recv(), Ok("writer released"));
    /// ```
    pub fn recv_with<R>(&self, f: impl FnOnce(T) -> R) -> Result<R, RecvError> {
        self.raw
            .recv_with(self.id, Some(None), f)
            .map_err(|_| RecvError::Poisoned)
    }

    /// [`recv_with`](Self::recv_with) only if a value is there now.
    ///
    /// ```
    /// use hoare_core::chan::{broadcast_bounded, TryRecvError};
    ///
    /// let (tx, rx) = broadcast_bounded::<u32>(1);
    /// assert_eq!(rx.try_recv_with(|v| v * 2), Err(TryRecvError::Empty));
    /// tx.send(4).unwrap();
    /// assert_eq!(rx.try_recv_with(|v| v * 2), Ok(8));
    /// ```
    pub fn try_recv_with<R>(&self, f: impl FnOnce(T) -> R) -> Result<R, TryRecvError> {
        self.raw.recv_with(self.id, None, f).map_err(|e| match e {
            RecvFailure::Poisoned => TryRecvError::Poisoned,
            _ => TryRecvError::Empty,
        })
    }

    /// [`recv_with`](Self::recv_with), waiting for a value at most until
    /// `deadline` (once the value is there, `f` runs to completion).
    ///
    /// ```
    /// use hoare_core::chan::{broadcast, RecvTimeoutError};
    /// use std::time::{Duration, Instant};
    ///
    /// let (_tx, rx) = broadcast::<u32>();
    /// let d = Instant::now() + Duration::from_millis(1);
    /// assert_eq!(rx.recv_with_deadline(d, |v| v), Err(RecvTimeoutError::Timeout));
    /// ```
    pub fn recv_with_deadline<R>(
        &self,
        deadline: Instant,
        f: impl FnOnce(T) -> R,
    ) -> Result<R, RecvTimeoutError> {
        self.raw
            .recv_with(self.id, Some(Some(deadline)), f)
            .map_err(|e| match e {
                RecvFailure::Poisoned => RecvTimeoutError::Poisoned,
                _ => RecvTimeoutError::Timeout,
            })
    }

    /// Receives until poison.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.recv().ok())
    }
}

impl<T> BroadcastReceiver<T> {
    /// A new reader, which receives every value sent after it joined (not the
    /// values this one has still to take).
    pub fn subscribe(&self) -> BroadcastReceiver<T> {
        subscribe(&self.raw)
    }

    /// Poisons from the reading side (unless non-poisonable): discards the buffered
    /// values; a rendezvous writer waiting for its readers gets its value back.
    pub fn poison(&self) {
        self.raw.poison_end(self.poisonable, true);
    }

    /// This end, made non-poisonable.
    pub fn non_poisonable(mut self) -> Self {
        self.poisonable = false;
        self
    }

    /// Whether the broadcast is poisoned.
    pub fn is_poisoned(&self) -> bool {
        self.raw.is_poisoned()
    }

    /// Whether a receive may still deliver a value: not poisoned, or values are
    /// left for this reader (see [`Receiver::is_open`](super::Receiver::is_open)).
    pub fn is_open(&self) -> bool {
        !self.is_poisoned() || !self.is_empty()
    }

    /// The number of values there for this reader to take now.
    pub fn len(&self) -> usize {
        let g = self.raw.lock();
        let c = g.cursors[self.id].expect("an enrolled reader").max(g.head);
        (g.tail() - c) as usize
    }

    /// Whether no value is there for this reader now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer's capacity (`Some(0)`: rendezvous).
    pub fn capacity(&self) -> Option<usize> {
        Some(self.raw.cap)
    }

    /// The shared state, which the alt guards take.
    pub fn raw(&self) -> &RawBroadcast<T> {
        &self.raw
    }

    #[doc(hidden)]
    #[inline]
    pub fn __alt_recv_case(&self, on: bool) -> BcastRecvCase<'_, T>
    where
        T: Clone,
    {
        BcastRecvCase::new(on.then(|| (&*self.raw, self.id)))
    }

    /// An extended receive guard (the builder's).
    pub(crate) fn __alt_held_recv_case(&self, on: bool) -> BcastRecvCase<'_, T>
    where
        T: Clone,
    {
        let mut c = BcastRecvCase::new(on.then(|| (&*self.raw, self.id)));
        c.held = true;
        c
    }

    #[doc(hidden)]
    #[inline]
    pub fn __alt_recv_with_case<R, F: FnOnce(T) -> R>(
        &self,
        on: bool,
        f: F,
    ) -> BcastRecvWithCase<'_, T, F>
    where
        T: Clone,
    {
        let mut inner = BcastRecvCase::new(on.then(|| (&*self.raw, self.id)));
        inner.held = true;
        BcastRecvWithCase { inner, f: Some(f) }
    }
}

impl<T> Drop for BroadcastSender<T> {
    fn drop(&mut self) {
        crate::check_step!(|| self.raw.step_op(crate::step::OpKind::DropEnd, false));
        self.raw.poison(false);
    }
}

impl<T> Drop for BroadcastReceiver<T> {
    fn drop(&mut self) {
        crate::check_step!(|| self.raw.step_op(crate::step::OpKind::DropEnd, false));
        let mut garbage = Vec::new();
        let last = self.raw.lock().leave(self.raw.cap, self.id, &mut garbage);
        drop(garbage);
        if last {
            self.raw.poison(true);
        }
    }
}

/// The lock a broadcast case uses: its own, or another case's (same broadcast).
struct BLock<'a, T> {
    own: Option<SpinGuard<'a, State<T>>>,
    shared: *mut Option<SpinGuard<'a, State<T>>>,
}

impl<'a, T> BLock<'a, T> {
    fn new() -> Self {
        Self {
            own: None,
            shared: ptr::null_mut(),
        }
    }

    /// `Case::lock_own`: takes `raw`'s lock itself.
    fn lock_own(&mut self, raw: &'a RawBroadcast<T>) {
        self.own = Some(raw.lock());
        self.shared = ptr::null_mut();
    }

    /// `Case::lock_slot`: where the lock it holds is, for other cases of the
    /// same broadcast.
    fn slot(&mut self) -> *mut () {
        &mut self.own as *mut Option<SpinGuard<'a, State<T>>> as *mut ()
    }

    /// `Case::lock_shared`: uses the lock in another case's `slot`.
    fn share(&mut self, slot: *mut ()) {
        self.shared = slot as *mut Option<SpinGuard<'a, State<T>>>;
    }

    /// `Case::unlock`.
    fn unlock(&mut self) {
        self.own = None;
        self.shared = ptr::null_mut();
    }

    fn get(&mut self) -> &mut State<T> {
        let l = if self.shared.is_null() {
            &mut self.own
        } else {
            // SAFETY: `lock_shared`'s contract: the owner's slot is valid and locked
            // (a case of the same broadcast, so of the same type) until `unlock`.
            unsafe { &mut *self.shared }
        };
        l.as_mut().expect("hoare: alt guard used without its lock")
    }
}

/// Where a broadcast case stands in its alt.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CaseState {
    Open,
    /// Chosen under the locks (a send: its value got this number); completed
    /// once they are released.
    Decided(u64),
    Chosen {
        poisoned: bool,
    },
    Taken,
}

/// A receive guard on a broadcast reader end.
#[doc(hidden)]
pub struct BcastRecvCase<'a, T> {
    raw: Option<(&'a RawBroadcast<T>, usize)>,
    lock: BLock<'a, T>,
    state: CaseState,
    got: Option<Shared<T>>,
    packet: BPacket<T>,
    garbage: Garbage<T>,
    /// An extended receive guard: the value it takes is held until released.
    held: bool,
    /// The number of the value it holds, to release.
    held_seq: Option<u64>,
}

impl<'a, T: Clone> BcastRecvCase<'a, T> {
    fn new(raw: Option<(&'a RawBroadcast<T>, usize)>) -> Self {
        Self {
            raw,
            lock: BLock::new(),
            state: CaseState::Open,
            got: None,
            packet: BPacket::new(None),
            garbage: Vec::new(),
            held: false,
            held_seq: None,
        }
    }

    /// The value of a chosen extended guard, run through `f` while this reader
    /// holds it, then released (also if `f` panics); or the poison. `None` if
    /// not chosen.
    pub(crate) fn run_with<R>(&mut self, f: impl FnOnce(T) -> R) -> Option<Result<R, RecvError>> {
        let CaseState::Chosen { poisoned } = self.state else {
            return None;
        };
        self.state = CaseState::Taken;
        if poisoned {
            return Some(Err(RecvError::Poisoned));
        }
        let v = self
            .got
            .take()
            .or_else(|| self.packet.take())
            .expect("a received value");
        let _release = self.held_seq.take().map(|seq| Release {
            raw: self.raw().0,
            seq,
        });
        Some(Ok(f(own(v))))
    }

    /// The result, if this guard was chosen.
    pub fn into_chosen(mut self) -> Option<Result<T, RecvError>> {
        self.take_chosen()
    }

    pub(crate) fn take_chosen(&mut self) -> Option<Result<T, RecvError>> {
        match self.state {
            CaseState::Chosen { poisoned } => {
                self.state = CaseState::Taken;
                if poisoned {
                    return Some(Err(RecvError::Poisoned));
                }
                let v = self
                    .got
                    .take()
                    .or_else(|| self.packet.take())
                    .expect("a received value");
                Some(Ok(own(v)))
            }
            _ => None,
        }
    }
}

impl<'a, T> BcastRecvCase<'a, T> {
    fn raw(&self) -> (&'a RawBroadcast<T>, usize) {
        self.raw.expect("hoare: a disabled guard was used")
    }

    /// Under the lock `g`: tries to take a value.
    fn try_with(&mut self, g: &mut State<T>, cap: usize, id: usize) -> bool {
        let got = if self.held {
            g.take_held(id).map(|(v, seq)| {
                self.held_seq = Some(seq);
                v
            })
        } else {
            g.take(cap, id, &mut self.garbage)
        };
        if let Some(v) = got {
            self.got = Some(v);
            self.state = CaseState::Chosen { poisoned: false };
            return true;
        }
        if g.poisoned {
            self.state = CaseState::Chosen { poisoned: true };
            return true;
        }
        false
    }
}

// SAFETY: `addr` is the address of the broadcast whose lock `lock_own` takes;
// `lock_slot` is an `Option<SpinGuard<State<T>>>`, as in every broadcast case.
unsafe impl<'a, T: Clone> Case for BcastRecvCase<'a, T> {
    fn kind(&self) -> Kind {
        if self.raw.is_some() {
            Kind::Chan
        } else {
            Kind::Off
        }
    }

    fn addr(&self) -> usize {
        self.raw().0.addr()
    }

    fn guard(&self) -> Option<crate::wait::Guard> {
        self.raw.map(|(r, _)| crate::wait::Guard::Chan {
            op: "recv",
            chan: r.object(),
        })
    }

    fn try_alone(&mut self) -> bool {
        let (raw, id) = self.raw();
        let mut g = raw.lock();
        self.try_with(&mut g, raw.cap, id)
    }

    fn lock_own(&mut self) {
        self.lock.lock_own(self.raw().0);
    }

    fn lock_slot(&mut self) -> *mut () {
        self.lock.slot()
    }

    unsafe fn lock_shared(&mut self, slot: *mut ()) {
        self.lock.share(slot);
    }

    fn unlock(&mut self) {
        self.lock.unlock();
    }

    fn try_locked(&mut self) -> bool {
        let (raw, id) = self.raw();
        let g: *mut State<T> = self.lock.get();
        // SAFETY: the lock is held (by this case or another of the same
        // broadcast) until `unlock`; `try_with` does not touch `self.lock`.
        self.try_with(unsafe { &mut *g }, raw.cap, id)
    }

    unsafe fn register(&mut self, waiter: *const Waiter, token: usize) {
        let (_, id) = self.raw();
        let packet: *const BPacket<T> = &self.packet;
        self.lock.get().readers.push_back(BEntry {
            waiter,
            token,
            packet,
            reader: id,
            held: self.held,
        });
    }

    fn unregister(&mut self, waiter: *const Waiter) {
        self.raw().0.lock().unregister(waiter);
    }

    fn unregister_locked(&mut self, waiter: *const Waiter) {
        self.lock.get().unregister(waiter);
    }

    fn passive(&mut self, poisoned: bool) {
        if self.held && !poisoned {
            self.held_seq = Some(self.packet.seq());
        }
        self.state = CaseState::Chosen { poisoned };
    }
}

impl<T> Drop for BcastRecvCase<'_, T> {
    fn drop(&mut self) {
        // A chosen extended guard whose value was never run through its closure
        // (a panic between the alt and its arm): release it.
        if let (Some(seq), Some((raw, _))) = (self.held_seq.take(), self.raw) {
            drop(Release { raw, seq });
        }
    }
}

/// An extended receive guard on a broadcast reader end (`alt!`'s
/// `recv_with(rx, f)`): when it is chosen, `f` runs on the value while the
/// reader holds it (a rendezvous writer stays blocked until `f` returns, a
/// buffered value keeps its place), as
/// [`BroadcastReceiver::recv_with`] does.
#[doc(hidden)]
pub struct BcastRecvWithCase<'a, T, F> {
    inner: BcastRecvCase<'a, T>,
    f: Option<F>,
}

impl<'a, T: Clone, R, F: FnOnce(T) -> R> BcastRecvWithCase<'a, T, F> {
    /// `f`'s result if this guard was chosen, or the poison.
    pub fn into_chosen(mut self) -> Option<Result<R, RecvError>> {
        let f = self.f.take().expect("hoare: an alt guard fired twice");
        self.inner.run_with(f)
    }
}

crate::alt::delegate_case!(['a, T: Clone, F] BcastRecvWithCase<'a, T, F>);

/// A send guard on a broadcast's writer end. Its value lives in the case until
/// it is sent (see [`into_unsent`](Self::into_unsent)).
#[doc(hidden)]
pub struct BcastSendCase<'a, T> {
    raw: Option<&'a RawBroadcast<T>>,
    lock: BLock<'a, T>,
    state: CaseState,
    packet: BPacket<T>,
    garbage: Garbage<T>,
    /// A `Par`'s: once chosen on a rendezvous broadcast, it does not wait for
    /// the takers (the `Par` waits for them in its later rounds, see
    /// [`ParSend`]).
    defer: bool,
    /// A deferred guard's reference to its value (see [`ParSend`]).
    kept_value: Option<Shared<T>>,
}

impl<'a, T: Clone> BcastSendCase<'a, T> {
    fn new(arg: Option<(&'a RawBroadcast<T>, T)>) -> Self {
        let (raw, v) = match arg {
            Some((r, v)) => (Some(r), Some(ValueArc::new(v))),
            None => (None, None),
        };
        Self {
            raw,
            lock: BLock::new(),
            state: CaseState::Open,
            packet: BPacket::new(v),
            garbage: Vec::new(),
            defer: false,
            kept_value: None,
        }
    }

    /// A send guard whose precondition is false: never chosen, the broadcast never
    /// touched, but it keeps `value` for [`take_unsent`](Self::take_unsent).
    pub(crate) fn disabled(value: T) -> Self {
        let mut c = Self::new(None);
        c.packet = BPacket::new(Some(ValueArc::new(value)));
        c
    }

    /// The result, if this guard was chosen.
    pub fn into_chosen(mut self) -> Option<Result<(), SendError<T>>> {
        self.take_chosen()
    }

    pub(crate) fn take_chosen(&mut self) -> Option<Result<(), SendError<T>>> {
        match self.state {
            CaseState::Chosen { poisoned } => {
                self.state = CaseState::Taken;
                if poisoned {
                    let v = self.packet.take().expect("an unsent value");
                    return Some(Err(SendError(own(v))));
                }
                Some(Ok(()))
            }
            _ => None,
        }
    }

    /// The value, if it was not sent.
    pub fn into_unsent(mut self) -> Option<T> {
        self.take_unsent()
    }

    pub(crate) fn take_unsent(&mut self) -> Option<T> {
        if self.state != CaseState::Open {
            return None;
        }
        self.packet.take().map(own)
    }

    /// The value got number `seq`: on a rendezvous broadcast, waits for its takers.
    fn after_push(&mut self, seq: u64) {
        let raw = self.raw.expect("an enabled guard");
        self.state = match raw.await_takers(seq, None) {
            Taken::All => CaseState::Chosen { poisoned: false },
            Taken::Poisoned(v) | Taken::Timeout(v) => {
                // SAFETY: our own packet, emptied by the push.
                unsafe { BPacket::put_raw(&self.packet, ValueArc::new(v)) };
                CaseState::Chosen { poisoned: true }
            }
        };
    }

    /// Under the lock `g`: tries to push the value.
    fn try_with(&mut self, g: &mut State<T>, cap: usize) -> Option<u64> {
        if g.poisoned {
            self.state = CaseState::Chosen { poisoned: true };
            return Some(u64::MAX);
        }
        g.make_room(cap, &mut self.garbage);
        if !g.has_room(cap) {
            return None;
        }
        let v = self.packet.take().expect("a send guard's value");
        let seq = g.push(cap, v, &mut self.garbage);
        self.state = CaseState::Decided(seq);
        Some(seq)
    }
}

impl<'a, T: Clone> crate::alt::SendGuardCase<T> for BcastSendCase<'a, T> {
    fn take_chosen_send(&mut self) -> Option<Result<(), SendError<T>>> {
        self.take_chosen()
    }
    fn take_unsent_value(&mut self) -> Option<T> {
        self.take_unsent()
    }
}

// SAFETY: as for `BcastRecvCase`.
unsafe impl<'a, T: Clone> Case for BcastSendCase<'a, T> {
    fn kind(&self) -> Kind {
        if self.raw.is_some() {
            Kind::Chan
        } else {
            Kind::Off
        }
    }

    fn addr(&self) -> usize {
        self.raw.expect("an enabled guard").addr()
    }

    fn guard(&self) -> Option<crate::wait::Guard> {
        self.raw.map(|r| crate::wait::Guard::Chan {
            op: "send",
            chan: r.object(),
        })
    }

    fn try_alone(&mut self) -> bool {
        let raw = self.raw.expect("an enabled guard");
        let mut g = raw.lock();
        let r = self.try_with(&mut g, raw.cap);
        drop(g);
        if r.is_some() {
            self.complete();
        }
        r.is_some()
    }

    fn lock_own(&mut self) {
        self.lock.lock_own(self.raw.expect("an enabled guard"));
    }

    fn lock_slot(&mut self) -> *mut () {
        self.lock.slot()
    }

    unsafe fn lock_shared(&mut self, slot: *mut ()) {
        self.lock.share(slot);
    }

    fn unlock(&mut self) {
        self.lock.unlock();
    }

    fn try_locked(&mut self) -> bool {
        let cap = self.raw.expect("an enabled guard").cap;
        let g: *mut State<T> = self.lock.get();
        // SAFETY: the lock is held until `unlock`; `try_with` does not touch
        // `self.lock`.
        self.try_with(unsafe { &mut *g }, cap).is_some()
    }

    unsafe fn register(&mut self, waiter: *const Waiter, token: usize) {
        let packet: *const BPacket<T> = &self.packet;
        self.lock.get().writers.push_back(BEntry {
            waiter,
            token,
            packet,
            reader: usize::MAX,
            held: false,
        });
    }

    fn unregister(&mut self, waiter: *const Waiter) {
        self.raw
            .expect("an enabled guard")
            .lock()
            .unregister(waiter);
    }

    fn unregister_locked(&mut self, waiter: *const Waiter) {
        self.lock.get().unregister(waiter);
    }

    fn complete(&mut self) {
        if let CaseState::Decided(seq) = self.state {
            if !self.deferred() {
                self.after_push(seq);
            }
        }
    }

    fn passive(&mut self, poisoned: bool) {
        if poisoned {
            self.state = CaseState::Chosen { poisoned: true };
            return;
        }
        let seq = self.packet.seq();
        if self.deferred() {
            self.state = CaseState::Decided(seq);
        } else {
            self.after_push(seq);
        }
    }
}

impl<T> BcastSendCase<'_, T> {
    /// Whether a chosen guard leaves the wait for the takers to its `Par`.
    fn deferred(&self) -> bool {
        self.defer && self.raw.is_some_and(|r| r.cap == 0)
    }
}

/// A `Par`'s send to a broadcast ([`Par::bcast_send`](crate::alt::Par::bcast_send)):
/// first a send guard, which offers the value; then, on a rendezvous broadcast,
/// a guard that is ready once every reader has taken it, so that the `Par`'s
/// other communications go on meanwhile (a reader may wait for one of them
/// before it takes the value).
pub(crate) struct ParSend<'a, T> {
    raw: &'a RawBroadcast<T>,
    phase: ParPhase<'a, T>,
}

enum ParPhase<'a, T> {
    Offer(BcastSendCase<'a, T>),
    /// Offered as number `seq`; `kept` keeps the value, to give it back.
    Await(TakersCase<'a, T>),
    Done(Result<(), (SendFail, T)>),
}

impl<'a, T: Clone> ParSend<'a, T> {
    pub(crate) fn new(tx: &'a BroadcastSender<T>, value: T) -> Self {
        let raw = &*tx.raw;
        Self {
            raw,
            phase: ParPhase::Offer(Self::offer(raw, ValueArc::new(value))),
        }
    }

    fn offer(raw: &'a RawBroadcast<T>, v: Shared<T>) -> BcastSendCase<'a, T> {
        let mut c = BcastSendCase::new(None);
        c.raw = Some(raw);
        c.defer = true;
        c.kept_value = Some(v.clone());
        c.packet = BPacket::new(Some(v));
        c
    }

    /// A fresh case for the next round.
    pub(crate) fn renew(&mut self) {
        match &mut self.phase {
            ParPhase::Offer(c) => {
                debug_assert!(c.state == CaseState::Open);
                let v = c
                    .packet
                    .take()
                    .expect("hoare: a pending send keeps its value");
                *c = Self::offer(self.raw, v);
            }
            ParPhase::Await(c) => {
                c.lock = BLock::new();
                c.state = CaseState::Open;
            }
            ParPhase::Done(_) => {}
        }
    }

    pub(crate) fn case(&mut self) -> &mut (dyn Case + 'a) {
        match &mut self.phase {
            ParPhase::Offer(c) => c,
            ParPhase::Await(c) => c,
            ParPhase::Done(_) => panic!("hoare: a finished par branch has no case"),
        }
    }

    /// Its case was chosen: whether the send has ended (else it now awaits its
    /// takers).
    pub(crate) fn chosen(&mut self) -> bool {
        self.phase = match std::mem::replace(&mut self.phase, ParPhase::Done(Ok(()))) {
            ParPhase::Offer(mut c) => match c.state {
                CaseState::Decided(seq) => {
                    let kept = c.kept();
                    ParPhase::Await(TakersCase {
                        raw: self.raw,
                        seq,
                        kept,
                        lock: BLock::new(),
                        state: CaseState::Open,
                    })
                }
                _ => ParPhase::Done({
                    c.kept_value = None;
                    c.take_chosen()
                        .expect("hoare: a chosen par send has a result")
                        .map_err(|SendError(v)| (SendFail::Poisoned, v))
                }),
            },
            ParPhase::Await(c) => {
                let CaseState::Chosen { poisoned } = c.state else {
                    panic!("hoare: a chosen par send has a result");
                };
                ParPhase::Done(if poisoned {
                    Err((SendFail::Poisoned, c.value_back()))
                } else {
                    Ok(())
                })
            }
            done => done,
        };
        matches!(self.phase, ParPhase::Done(_))
    }

    /// The deadline passed: a value not yet offered comes back; one offered and
    /// not taken by every reader is withdrawn (see
    /// [`BroadcastSender::send_deadline`]).
    pub(crate) fn abandon(&mut self) {
        self.phase = match std::mem::replace(&mut self.phase, ParPhase::Done(Ok(()))) {
            ParPhase::Offer(mut c) => ParPhase::Done(Err((SendFail::Timeout, {
                c.kept_value = None;
                c.take_unsent()
                    .expect("hoare: an abandoned send keeps its value")
            }))),
            ParPhase::Await(c) => {
                let mut garbage = Vec::new();
                let mut g = self.raw.lock();
                let withdrawn = g.withdraw(self.raw.cap, c.seq, &mut garbage).is_some();
                let lost = c.seq < g.head && c.seq >= g.lost_from;
                drop(g);
                drop(garbage);
                ParPhase::Done(if withdrawn {
                    Err((SendFail::Timeout, c.value_back()))
                } else if lost {
                    Err((SendFail::Poisoned, c.value_back()))
                } else {
                    Ok(())
                })
            }
            done => done,
        };
    }

    pub(crate) fn is_ok(&self) -> bool {
        matches!(self.phase, ParPhase::Done(Ok(())))
    }

    pub(crate) fn result(self) -> Result<(), (SendFail, T)> {
        match self.phase {
            ParPhase::Done(r) => r,
            _ => panic!("hoare: a par branch without a result"),
        }
    }
}

impl<T: Clone> BcastSendCase<'_, T> {
    /// A deferred guard that pushed its value: a reference to it, to give it back
    /// if the takers do not all take it.
    fn kept(&mut self) -> Shared<T> {
        self.state = CaseState::Taken;
        self.kept_value
            .take()
            .expect("a deferred guard keeps its value")
    }
}

/// The second half of a [`ParSend`] on a rendezvous broadcast: ready once value
/// `seq` has been taken by every reader, or discarded by a reader's poison.
struct TakersCase<'a, T> {
    raw: &'a RawBroadcast<T>,
    seq: u64,
    kept: Shared<T>,
    lock: BLock<'a, T>,
    state: CaseState,
}

impl<T: Clone> TakersCase<'_, T> {
    fn value_back(self) -> T {
        own(self.kept)
    }

    fn check(&mut self, g: &State<T>) -> bool {
        if self.seq >= g.head {
            return false;
        }
        self.state = CaseState::Chosen {
            poisoned: self.seq >= g.lost_from,
        };
        true
    }
}

// SAFETY: as for `BcastRecvCase`.
unsafe impl<'a, T: Clone> Case for TakersCase<'a, T> {
    fn kind(&self) -> Kind {
        Kind::Chan
    }

    fn addr(&self) -> usize {
        self.raw.addr()
    }

    fn guard(&self) -> Option<crate::wait::Guard> {
        Some(crate::wait::Guard::Chan {
            op: "send",
            chan: self.raw.object(),
        })
    }

    fn try_alone(&mut self) -> bool {
        let g = self.raw.lock();
        self.check(&g)
    }

    fn lock_own(&mut self) {
        self.lock.lock_own(self.raw);
    }

    fn lock_slot(&mut self) -> *mut () {
        self.lock.slot()
    }

    unsafe fn lock_shared(&mut self, slot: *mut ()) {
        self.lock.share(slot);
    }

    fn unlock(&mut self) {
        self.lock.unlock();
    }

    fn try_locked(&mut self) -> bool {
        let g: *const State<T> = self.lock.get();
        // SAFETY: the lock is held until `unlock`; `check` does not touch
        // `self.lock`.
        self.check(unsafe { &*g })
    }

    unsafe fn register(&mut self, waiter: *const Waiter, token: usize) {
        let seq = self.seq;
        let g = self.lock.get();
        // `try_locked` found the value there under this same lock.
        let k = (seq - g.head) as usize;
        g.items[k].writer = Some((waiter, token, ptr::null()));
    }

    fn unregister(&mut self, waiter: *const Waiter) {
        let mut g = self.raw.lock();
        unhook(&mut g, self.seq, waiter);
    }

    fn unregister_locked(&mut self, waiter: *const Waiter) {
        let seq = self.seq;
        unhook(self.lock.get(), seq, waiter);
    }

    fn passive(&mut self, poisoned: bool) {
        self.state = CaseState::Chosen { poisoned };
    }
}

/// Unhooks `waiter` from value `seq`, if it is still hooked there.
fn unhook<T>(g: &mut State<T>, seq: u64, waiter: *const Waiter) {
    if seq >= g.head && seq < g.tail() {
        let k = (seq - g.head) as usize;
        if g.items[k].writer.is_some_and(|(w, _, _)| w == waiter) {
            g.items[k].writer = None;
        }
    }
}
