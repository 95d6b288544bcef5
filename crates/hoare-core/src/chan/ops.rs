//! The operations of the channel ends (send, receive, extended rendezvous; blocking,
//! timed or not at all), written once over the select handle for every buffering:
//! try under the lock; else register, wait, and let the registration take the entry
//! back on every way out.

use super::error::{RecvFail, Refuse, SendFail};
use super::packet::{is_large, Handback, Packet};
use super::raw::{RawChan, Reason, Side};
use super::rendezvous;
use super::select::{complete_recv, complete_send, Deal, FinishOnDrop, SelectLock, Selected};
use super::waitq::Entry;
use crate::park::{self, Park, Unparker};
use crate::registration::{Registration, Withdraw};
use crate::wait::{self, WaitOn};
use crate::waiter::{Outcome, Waiter, CANCELLED};
use std::time::Instant;

/// How long an operation may wait.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// Not at all (`try_*`).
    Try,
    /// Until the deadline (`None`: for ever).
    Until(Option<Instant>),
}

/// Wakes an extended rendezvous's writer, or frees its buffer place, when dropped.
pub(crate) struct ExtEnd<'a, T> {
    pub(crate) chan: &'a RawChan<T>,
    pub(crate) writer: *const Handback<T>,
}

impl<T> ExtEnd<'_, T> {
    /// Ends the rendezvous refusing `v`: poisons the channel with `reason` (from
    /// the reading side), then gives `v` back into the writer's packet and wakes
    /// it as poisoned (its send fails and hands `v` back). On a buffered channel
    /// the writer had already returned: `v` is dropped, as the items the reader's
    /// poison discards are.
    pub(crate) fn refuse(self, v: T, reason: Reason) {
        self.chan.poison_with(Side::Reader, Some(reason));
        if self.writer.is_null() {
            drop(v);
            // `drop(self)` frees the buffer place.
            return;
        }
        let w = self.writer;
        std::mem::forget(self);
        // SAFETY: the writer waits on this private waiter (see
        // `rendezvous::deliver`) until we wake it, with its packet (emptied by the
        // hand-off) untouched meanwhile; nobody else knows either.
        unsafe {
            let back = (*w).packet;
            if back.is_null() {
                drop(v); // a writer cancelled by a shutdown: nobody to take it
            } else {
                Packet::put_raw(back, v);
            }
            Waiter::try_wake(&(*w).waiter, 0, true);
        }
    }
}

impl<T> Drop for ExtEnd<'_, T> {
    fn drop(&mut self) {
        if !self.writer.is_null() {
            // SAFETY: the writer waits on this private waiter (see
            // `rendezvous::deliver`) until we wake it; nobody else knows it.
            unsafe { Waiter::try_wake(&(*self.writer).waiter, 0, false) };
        } else if !self.chan.is_rendezvous() {
            self.chan.release();
        }
    }
}

/// Frees a reserved buffer place when dropped (also when a closure panics).
pub(crate) struct ReleaseOnDrop<'a, T>(pub(crate) &'a RawChan<T>);

impl<T> Drop for ReleaseOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A plain send's or receive's registration on one channel: withdrawing it takes
/// the waiter's entry out of the channel's queue, unless a partner already took it
/// out (it pops the entry it claims, poison drains the queue).
struct ChanSite<'a, T> {
    chan: &'a RawChan<T>,
}

impl<T> Withdraw for ChanSite<'_, T> {
    #[inline]
    fn withdraw(&mut self, waiter: Option<&Waiter>) -> bool {
        let w = waiter.expect("a channel's registration has a waiter");
        if !w.is_done() {
            self.chan.lock().unregister(w);
        }
        false
    }
}

/// Which channel operation a party blocks in (for its wait record).
#[derive(Clone, Copy)]
enum ChanOp {
    Send,
    Recv,
    ExtRecv,
}

impl<T> RawChan<T> {
    /// The checker's description of a send (`send`) or a receive on this channel
    /// waiting as `wait`: a plain blocking one on a rendezvous channel commutes
    /// with the other direction; anything else conflicts with every operation on
    /// the channel, and a timed one touches the clock too.
    #[cfg(feature = "check")]
    fn step_op(&self, send: bool, wait: Wait) -> crate::step::Op {
        use crate::step::{Access, Class, Op, OpKind, CLOCK};
        let (kind, access) = match (wait, send) {
            (Wait::Until(None), true) => (OpKind::Send, Access::Send),
            (Wait::Until(None), false) => (OpKind::Recv, Access::Recv),
            (Wait::Try, true) => (OpKind::TrySend, Access::Other),
            (Wait::Try, false) => (OpKind::TryRecv, Access::Other),
            (Wait::Until(Some(_)), true) => (OpKind::TimedSend, Access::Other),
            (Wait::Until(Some(_)), false) => (OpKind::TimedRecv, Access::Other),
        };
        let access = if self.is_rendezvous() {
            access
        } else {
            Access::Other
        };
        let mut op =
            Op::one(kind, self.info().id() as usize, Class::Chan, access).with_info(*self.info());
        if matches!(wait, Wait::Until(Some(_))) {
            op.objs.push(CLOCK);
        }
        op
    }

    /// The checker's description of an extended receive (`recv_with`) waiting
    /// as `wait`: it holds the writer until its function returns, so it
    /// conflicts with every operation on the channel; a timed one touches the
    /// clock too; a `try_` one is a try-receive.
    #[cfg(feature = "check")]
    fn step_op_ext(&self, wait: Wait) -> crate::step::Op {
        use crate::step::{Access, Class, Op, OpKind, CLOCK};
        let kind = match wait {
            Wait::Try => return self.step_op(false, Wait::Try),
            Wait::Until(None) => OpKind::ExtRecv,
            Wait::Until(Some(_)) => OpKind::TimedExtRecv,
        };
        let mut op = Op::one(kind, self.info().id() as usize, Class::Chan, Access::Other)
            .with_info(*self.info());
        if kind == OpKind::TimedExtRecv {
            op.objs.push(CLOCK);
        }
        op
    }

    /// The wait record of a party blocked in `op` on this channel.
    #[inline(always)]
    fn wait_on(&self, op: ChanOp) -> WaitOn {
        unsafe fn send<T>(c: *const ()) -> wait::Wait {
            // SAFETY: `WaitOn::new`'s contract: the blocked party holds the channel.
            let c = unsafe { &*(c as *const RawChan<T>) };
            wait::Wait::Chan {
                op: "send",
                chan: c.object(),
            }
        }
        unsafe fn recv<T>(c: *const ()) -> wait::Wait {
            // SAFETY: as in `send`.
            let c = unsafe { &*(c as *const RawChan<T>) };
            wait::Wait::Chan {
                op: "recv",
                chan: c.object(),
            }
        }
        unsafe fn ext<T>(c: *const ()) -> wait::Wait {
            // SAFETY: as in `send`.
            let c = unsafe { &*(c as *const RawChan<T>) };
            wait::Wait::Chan {
                op: "extended recv",
                chan: c.object(),
            }
        }
        let f = match op {
            ChanOp::Send => send::<T>,
            ChanOp::Recv => recv::<T>,
            ChanOp::ExtRecv => ext::<T>,
        };
        // SAFETY: the party blocked on this channel holds an end of it (the caller
        // of `block` borrows it), so it outlives the waiter.
        unsafe { WaitOn::new(self as *const Self as *const (), f) }
    }

    /// A waiter for the current party (unparked by `u`), blocking in `op` on this
    /// channel (the opening of [`block`](Self::block) and
    /// [`block_plain`](Self::block_plain)).
    #[inline(always)]
    fn waiter(&self, u: Unparker, op: ChanOp) -> Waiter {
        Waiter::new(u).on(self.wait_on(op))
    }

    /// The registration of `waiter`, just put in one of this channel's queues:
    /// takes its entry out again on every way out that leaves it behind.
    #[inline(always)]
    fn registration<'w>(&'w self, waiter: &'w Waiter) -> Registration<'w, ChanSite<'w, T>> {
        Registration::new(ChanSite { chan: self }, waiter)
    }

    /// Blocks the current party on this channel: makes its waiter, lets `register`
    /// put it in a queue under `g`, waits (without a deadline, `g` is released only
    /// once the party is parked, see [`crate::sync::park_unlocking`], which saves the
    /// runtime a compare-and-swap per park), and hands the outcome to `done`. A
    /// [`Registration`] takes the entry out again on every way out that leaves it
    /// behind (a timeout, a cancellation, the stack being unwound). The current
    /// party is looked up once for all of it.
    ///
    /// # Safety
    /// `register` must register the waiter it is given under `g`, as an exclusive
    /// entry when `deadline` is `None` (every party that can end the wait then takes
    /// this channel's lock), with a packet that stays put until `done` returns.
    // Always inlined: each call level between the blocking operation and the
    // switch costs a mispredicted return after it.
    #[inline(always)]
    unsafe fn block<'a, R>(
        &'a self,
        mut g: SelectLock<'a, T>,
        deadline: Option<Instant>,
        op: ChanOp,
        register: impl FnOnce(&mut SelectLock<'a, T>, *const Waiter),
        done: impl FnOnce(Outcome) -> R,
    ) -> R {
        park::with_current_unparker(|p, u| {
            let waiter = self.waiter(u, op);
            register(&mut g, &waiter);
            let reg = self.registration(&waiter);
            let out = match deadline {
                None => {
                    // SAFETY: the caller's contract is the one `park_unlocking`
                    // needs; the waiter's one unpark comes from a party that took
                    // this channel's lock after `g` was released.
                    if unsafe { g.park_unlocking(p, &waiter) } {
                        waiter.outcome()
                    } else {
                        self.cancel_exclusive(p, &waiter)
                    }
                }
                Some(_) => {
                    drop(g);
                    waiter.wait_as(p, deadline)
                }
            };
            match out {
                // The committer popped the entry (or poison drained the queue).
                Outcome::Done { .. } => reg.finished(),
                Outcome::Aborted { .. } => drop(reg),
            }
            done(out)
        })
    }

    /// [`block`](Self::block) without a deadline, for the plain blocking
    /// operations: returns whether the wait ended in a communication (`false`:
    /// poison, or the party is cancelled). An exclusive entry's wait ends only by
    /// a claim and its finish, so the outcome is one comparison of the waiter's
    /// word, not an [`Outcome`] to decode.
    ///
    /// # Safety
    /// As [`block`](Self::block) with no deadline: `register` registers the waiter
    /// it is given under `g` as an exclusive entry, with a packet that stays put
    /// until this returns.
    #[inline(always)]
    unsafe fn block_plain<'a>(
        &'a self,
        mut g: SelectLock<'a, T>,
        op: ChanOp,
        register: impl FnOnce(&mut SelectLock<'a, T>, *const Waiter),
    ) -> bool {
        park::with_current_unparker(|p, u| {
            let waiter = self.waiter(u, op);
            register(&mut g, &waiter);
            let reg = self.registration(&waiter);
            // SAFETY: the caller's contract is the one `park_releasing` needs; the
            // waiter's one unpark comes from a party that took this channel's lock
            // after `g` was released.
            if unsafe { g.park_unlocking(p, &waiter) } {
                // The committer popped the entry (or poison drained the queue).
                reg.finished();
                return waiter.is_done_plain();
            }
            match self.cancel_exclusive(p, &waiter) {
                Outcome::Done { poisoned, .. } => {
                    reg.finished();
                    !poisoned
                }
                Outcome::Aborted { .. } => {
                    drop(reg);
                    false
                }
            }
        })
    }

    /// A cancelled party was refused its park after registering an exclusive
    /// entry: takes the entry back, or, if a partner claimed it meanwhile, waits
    /// for that partner to finish.
    #[cold]
    fn cancel_exclusive(&self, p: &dyn Park, waiter: &Waiter) -> Outcome {
        if self.lock().unregister(waiter) {
            // Nobody claimed it (a claimer pops the entry under the lock), and
            // nobody can now: abort it ourselves.
            let aborted = waiter.try_abort_quiet(CANCELLED);
            debug_assert!(aborted);
            return Outcome::Aborted { token: CANCELLED };
        }
        waiter.wait_committed(p)
    }

    /// Sends the value in `packet` (build it with `Packet::with_value` in the
    /// argument: `chan.send(Packet::with_value(v), ..)`); on failure `fail` builds
    /// the caller's error from the reason and the value given back.
    ///
    /// Large values: the packet is the argument itself, which the
    /// caller's frame holds, so this frame keeps no copy of the value; the value
    /// moves from the packet once, straight into the receiver's packet or the
    /// buffer (or, on failure, into the error). Building the caller's error here,
    /// rather than returning an internal one the caller converts, keeps further
    /// copies of it off the stack.
    #[inline]
    pub(crate) fn send<E>(
        &self,
        packet: Packet<T>,
        wait: Wait,
        fail: impl FnOnce(SendFail, T) -> E,
    ) -> Result<(), E> {
        // The scheduling point is in `send_inline`: here, between the caller
        // building the packet and the out-of-line call, it made LLVM build the
        // packet in a temporary and copy it (a third copy of a large value).
        if is_large::<T>() {
            // Out of line, so the caller builds the packet straight into the
            // argument (inlined, LLVM may build it elsewhere and copy it).
            self.send_outlined(packet, wait, fail)
        } else {
            self.send_inline(packet, wait, fail)
        }
    }

    #[inline(never)]
    fn send_outlined<E>(
        &self,
        packet: Packet<T>,
        wait: Wait,
        fail: impl FnOnce(SendFail, T) -> E,
    ) -> Result<(), E> {
        self.send_inline(packet, wait, fail)
    }

    #[inline(always)]
    fn send_inline<E>(
        &self,
        mut packet: Packet<T>,
        wait: Wait,
        fail: impl FnOnce(SendFail, T) -> E,
    ) -> Result<(), E> {
        crate::check_step!(|| self.step_op(true, wait));
        let mut g = self.lock();
        match g.try_send(&mut packet) {
            Selected::Ready(d) => {
                drop(g);
                // SAFETY: decided with this packet under the lock just released.
                if unsafe { complete_send(d, &mut packet) } {
                    return Ok(());
                }
                // Refused by an extended receiver: the value is back.
                return give_back(&mut packet, SendFail::Poisoned, fail);
            }
            Selected::Poisoned => {
                drop(g);
                return give_back(&mut packet, SendFail::Poisoned, fail);
            }
            Selected::NotReady => {}
        }
        let Wait::Until(deadline) = wait else {
            drop(g);
            return give_back(&mut packet, SendFail::Full, fail);
        };
        let pk: *const Packet<T> = &packet;
        // SAFETY: the waiter lives in `block` and `packet` on this frame until we
        // return, and the entry is taken out unless the party that ended the wait
        // removed it (a claimer pops it, poison drains the queue). Without a
        // deadline the entry is exclusive: this party never aborts, and every other
        // party that can end the wait does so under this channel's lock.
        unsafe {
            self.block(
                g,
                deadline,
                ChanOp::Send,
                |g, w| g.register_send(Entry::plain(w, pk, deadline.is_none())),
                |out| match out {
                    Outcome::Done {
                        poisoned: false, ..
                    } => Ok(()),
                    // A cancelled party sees the channel as poisoned.
                    Outcome::Done { poisoned: true, .. }
                    | Outcome::Aborted { token: CANCELLED } => {
                        give_back(&mut packet, SendFail::Poisoned, fail)
                    }
                    Outcome::Aborted { .. } => give_back(&mut packet, SendFail::Timeout, fail),
                },
            )
        }
    }

    /// Receives a value; on failure `fail` builds the caller's error. The value
    /// moves once into the packet on this frame (or is read straight from a
    /// rendezvous sender's packet) and once out, into the result (see `send`).
    #[inline]
    pub(crate) fn recv<E>(&self, wait: Wait, fail: impl FnOnce(RecvFail) -> E) -> Result<T, E> {
        crate::check_step!(|| self.step_op(false, wait));
        let mut packet = Packet::empty();
        let mut g = self.lock();
        match g.try_recv(false, &mut packet) {
            Selected::Ready(Deal::Partner(s)) => {
                drop(g);
                if is_large::<T>() {
                    // Through our packet: reading it straight into the result
                    // would keep a second copy on this frame across `finish`.
                    // SAFETY: claimed under the lock just released.
                    unsafe { complete_recv(Deal::Partner(s), &mut packet) };
                    return Ok(packet.take_full());
                }
                // SAFETY: claimed under the lock just released.
                return Ok(unsafe { rendezvous::take(s) });
            }
            Selected::Ready(Deal::Done) => {
                drop(g);
                return Ok(packet.take_full());
            }
            Selected::Poisoned => {
                // `fail` may yield (a `try_recv` spends the budget): not under the
                // lock.
                drop(g);
                return Err(fail(RecvFail::Poisoned));
            }
            Selected::NotReady => {}
        }
        let Wait::Until(deadline) = wait else {
            drop(g);
            return Err(fail(RecvFail::Empty));
        };
        let pk: *const Packet<T> = &packet;
        // SAFETY: as in `send`.
        unsafe {
            self.block(
                g,
                deadline,
                ChanOp::Recv,
                |g, w| g.register_recv(Entry::plain(w, pk, deadline.is_none())),
                |out| match out {
                    Outcome::Done {
                        poisoned: false, ..
                    } => Ok(packet.take_full()),
                    Outcome::Done { poisoned: true, .. }
                    | Outcome::Aborted { token: CANCELLED } => Err(fail(RecvFail::Poisoned)),
                    Outcome::Aborted { .. } => Err(fail(RecvFail::Timeout)),
                },
            )
        }
    }

    /// A plain blocking send (no deadline) of a value that is not
    /// [large](is_large): [`send`](Self::send) with `Wait::Until(None)`,
    /// specialised for a rendezvous channel. The try and the hand-off to a
    /// waiting receiver are inlined into the caller (no call, no frame, no
    /// packet: the value goes straight into the receiver's packet); registering
    /// and waiting are one call out of line, [`send_wait`](Self::send_wait).
    /// Other bufferings take the general path.
    #[inline(always)]
    pub(crate) fn send_blocking<E>(
        &self,
        value: T,
        fail: impl FnOnce(SendFail, T) -> E,
    ) -> Result<(), E> {
        if is_large::<T>() || !self.is_rendezvous() {
            return self.send(Packet::with_value(value), Wait::Until(None), fail);
        }
        crate::check_step!(|| self.step_op(true, Wait::Until(None)));
        let mut g = self.lock();
        let (w, pk) = g.claim_partner(Side::Writer);
        if w.is_null() {
            return self.send_wait(g, value, fail);
        }
        drop(g);
        // SAFETY: `claim_partner` claimed `w` under the lock just released, and
        // nobody else finishes it; a receiver registers an empty packet.
        unsafe {
            if Packet::is_extended(pk) {
                return self.send_extended(Entry::new(w, 0, pk), value, fail);
            }
            Packet::put_raw(pk, value);
            Waiter::finish(w, false);
        }
        Ok(())
    }

    /// The rest of [`send_blocking`](Self::send_blocking) when no receiver could
    /// be claimed under `g`: fails on poison, else waits for a receiver.
    #[inline(always)]
    fn send_wait<E>(
        &self,
        g: SelectLock<'_, T>,
        value: T,
        fail: impl FnOnce(SendFail, T) -> E,
    ) -> Result<(), E> {
        let mut packet = Packet::with_value(value);
        if g.is_poisoned() {
            drop(g);
            return give_back(&mut packet, SendFail::Poisoned, fail);
        }
        let pk: *const Packet<T> = &packet;
        // SAFETY: as in `send_inline`, without a deadline: the entry is exclusive.
        let sent = unsafe {
            self.block_plain(g, ChanOp::Send, move |g, w| {
                g.register_exclusive(Side::Writer, w, pk)
            })
        };
        if sent {
            return Ok(());
        }
        give_back(&mut packet, SendFail::Poisoned, fail)
    }

    /// [`send_blocking`](Self::send_blocking) to a claimed receiver that runs an
    /// extended rendezvous: through a packet on this frame, which
    /// [`rendezvous::deliver`] needs (the receiver may refuse the value back into
    /// it).
    ///
    /// # Safety
    /// The caller claimed `r` from this channel's receivers and has not finished it.
    #[cold]
    #[inline(never)]
    unsafe fn send_extended<E>(
        &self,
        r: Entry<T>,
        value: T,
        fail: impl FnOnce(SendFail, T) -> E,
    ) -> Result<(), E> {
        let mut packet = Packet::with_value(value);
        // SAFETY: the caller's contract; the packet holds the value.
        if unsafe { rendezvous::deliver(r, &mut packet) } {
            return Ok(());
        }
        give_back(&mut packet, SendFail::Poisoned, fail)
    }

    /// A plain blocking receive (no deadline): [`recv`](Self::recv) with
    /// `Wait::Until(None)`, specialised for a rendezvous channel and a value that
    /// is not [large](is_large), as [`send_blocking`](Self::send_blocking) is:
    /// taking a waiting sender's value is inlined into the caller, registering and
    /// waiting are [`recv_wait`](Self::recv_wait), out of line.
    #[inline(always)]
    pub(crate) fn recv_blocking<E>(&self, fail: impl FnOnce(RecvFail) -> E) -> Result<T, E> {
        if is_large::<T>() || !self.is_rendezvous() {
            return self.recv(Wait::Until(None), fail);
        }
        crate::check_step!(|| self.step_op(false, Wait::Until(None)));
        let mut g = self.lock();
        let (w, pk) = g.claim_partner(Side::Reader);
        if w.is_null() {
            return Self::recv_wait(g, fail);
        }
        drop(g);
        // SAFETY: claimed under the lock just released; a sender registers a full
        // packet.
        unsafe {
            let v = Packet::read_raw(pk);
            Waiter::finish(w, false);
            Ok(v)
        }
    }

    /// The rest of [`recv_blocking`](Self::recv_blocking) when no sender could be
    /// claimed under `g`: fails on poison, else waits for a sender.
    /// The channel is `g`'s (no `self`: one register less live in this frame).
    #[inline(never)]
    fn recv_wait<E>(g: SelectLock<'_, T>, fail: impl FnOnce(RecvFail) -> E) -> Result<T, E> {
        if g.is_poisoned() {
            drop(g);
            return Err(fail(RecvFail::Poisoned));
        }
        let packet = Packet::empty();
        let pk: *const Packet<T> = &packet;
        // SAFETY: as in `send_inline`, without a deadline: the entry is exclusive.
        let received = unsafe {
            g.chan().block_plain(g, ChanOp::Recv, move |g, w| {
                g.register_exclusive(Side::Reader, w, pk)
            })
        };
        if received {
            // SAFETY: the sender that finished our wait without poison filled
            // the packet first.
            return Ok(unsafe { Packet::read_raw(pk) });
        }
        Err(fail(RecvFail::Poisoned))
    }

    // `recv` and `recv_with` stay two functions on purpose: one generic body over
    // both (measured) let LLVM out-line `try_recv` and the wait closure, +50
    // instructions per CommsTime communication.
    pub(crate) fn recv_with<R, E>(
        &self,
        f: impl FnOnce(T) -> R,
        wait: Wait,
        fail: impl FnOnce(RecvFail) -> E,
    ) -> Result<R, E> {
        crate::check_step!(|| self.step_op_ext(wait));
        let mut packet = Packet::extended();
        let mut g = self.lock();
        match g.try_recv(true, &mut packet) {
            Selected::Ready(Deal::Partner(s)) => {
                drop(g);
                let _finish = FinishOnDrop(s.waiter);
                // SAFETY: claimed under the lock just released; the sender's packet
                // is full, and its waiter is finished when `f` returns (or panics).
                let v = unsafe { Packet::read_raw(s.packet) };
                return Ok(f(v));
            }
            Selected::Ready(Deal::Done) => {
                drop(g);
                let _release = ReleaseOnDrop(self);
                return Ok(f(packet.take_full()));
            }
            Selected::Poisoned => {
                // `fail` may yield (a `try_recv` spends the budget): not under the
                // lock.
                drop(g);
                return Err(fail(RecvFail::Poisoned));
            }
            Selected::NotReady => {}
        }
        let Wait::Until(deadline) = wait else {
            drop(g);
            return Err(fail(RecvFail::Empty));
        };
        let pk: *const Packet<T> = &packet;
        // SAFETY: as in `send`.
        unsafe {
            self.block(
                g,
                deadline,
                ChanOp::ExtRecv,
                |g, w| g.register_recv(Entry::plain(w, pk, deadline.is_none())),
                |out| match out {
                    Outcome::Done {
                        poisoned: false, ..
                    } => {
                        let _end = ExtEnd {
                            chan: self,
                            writer: packet.writer(),
                        };
                        Ok(f(packet.take_full()))
                    }
                    Outcome::Done { poisoned: true, .. }
                    | Outcome::Aborted { token: CANCELLED } => Err(fail(RecvFail::Poisoned)),
                    Outcome::Aborted { .. } => Err(fail(RecvFail::Timeout)),
                },
            )
        }
    }
}

impl<T> RawChan<T> {
    /// A blocking extended rendezvous whose closure may refuse the value: see
    /// [`Receiver::recv_or_refuse`](super::Receiver::recv_or_refuse). `Ok(None)`:
    /// refused (the channel is poisoned with the reason, the value went back to
    /// its sender).
    pub(crate) fn recv_or_refuse<R>(
        &self,
        f: impl FnOnce(T) -> Result<R, Refuse<T>>,
    ) -> Result<Option<R>, RecvFail> {
        crate::check_step!(|| self.step_op_ext(Wait::Until(None)));
        let mut packet = Packet::extended();
        let mut g = self.lock();
        match g.try_recv(true, &mut packet) {
            Selected::Ready(Deal::Partner(s)) => {
                drop(g);
                let finish = FinishOnDrop(s.waiter);
                // SAFETY: claimed under the lock just released; the sender's packet
                // is full, and its waiter is finished when `f` returns (or panics).
                let v = unsafe { Packet::read_raw(s.packet) };
                return match f(v) {
                    Ok(r) => Ok(Some(r)),
                    Err(Refuse { value, reason }) => {
                        self.poison_with(Side::Reader, Some(reason));
                        std::mem::forget(finish);
                        // SAFETY: we still hold the claim on the sender, whose
                        // packet we emptied: the value goes back, then its wait
                        // ends as poisoned (its send hands the value back).
                        unsafe {
                            Packet::put_raw(s.packet, value);
                            Waiter::finish(s.waiter, true);
                        }
                        Ok(None)
                    }
                };
            }
            Selected::Ready(Deal::Done) => {
                drop(g);
                let _release = ReleaseOnDrop(self);
                return match f(packet.take_full()) {
                    Ok(r) => Ok(Some(r)),
                    Err(Refuse { value, reason }) => {
                        // The sender returned already: the value is dropped, as a
                        // reader's poison drops the buffer.
                        self.poison_with(Side::Reader, Some(reason));
                        drop(value);
                        Ok(None)
                    }
                };
            }
            Selected::Poisoned => {
                drop(g);
                return Err(RecvFail::Poisoned);
            }
            Selected::NotReady => {}
        }
        let pk: *const Packet<T> = &packet;
        // SAFETY: as in `send`.
        unsafe {
            self.block(
                g,
                None,
                ChanOp::ExtRecv,
                |g, w| g.register_recv(Entry::plain(w, pk, true)),
                |out| match out {
                    Outcome::Done {
                        poisoned: false, ..
                    } => {
                        let end = ExtEnd {
                            chan: self,
                            writer: packet.writer(),
                        };
                        match f(packet.take_full()) {
                            Ok(r) => Ok(Some(r)),
                            Err(Refuse { value, reason }) => {
                                end.refuse(value, reason);
                                Ok(None)
                            }
                        }
                    }
                    _ => Err(RecvFail::Poisoned),
                },
            )
        }
    }
}

/// A failed send's error, with the value from its packet. Out of line: its
/// temporaries stay off the frame of the send itself.
#[cold]
#[inline(never)]
fn give_back<T, E>(
    p: &mut Packet<T>,
    why: SendFail,
    fail: impl FnOnce(SendFail, T) -> E,
) -> Result<(), E> {
    Err(fail(why, p.take_full()))
}
