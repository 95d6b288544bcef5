//! The shared state of one channel and its blocking operations, written once over
//! the select handle for every flavour.

use super::buffered::{Buffered, Policy, Side};
use super::error::{RecvFail, SendFail};
use super::rendezvous::Zero;
use super::select::Selected;
use super::waitq::{Entry, Packet};
use crate::sync::{AtomicUsize, Ordering};
use crate::waiter::{Outcome, Waiter};
use std::time::Instant;

/// How long an operation may wait.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// Not at all (`try_*`).
    Try,
    /// Until the deadline (`None`: for ever).
    Until(Option<Instant>),
}

pub(crate) enum Flavor<T> {
    Zero(Zero<T>),
    Buf(Buffered<T>),
}

/// The shared state of one channel, whatever its flavour. Its ends hold it by
/// `Arc`; [`Sender::raw`](super::Sender::raw) and
/// [`Receiver::raw`](super::Receiver::raw) give it to the alt implementation, which
/// uses [`lock`](Self::lock) and the [`select`](super::select) API.
pub struct RawChan<T> {
    flavor: Flavor<T>,
    pub(crate) senders: AtomicUsize,
    pub(crate) receivers: AtomicUsize,
}

impl<T> std::fmt::Debug for RawChan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawChan")
            .field("poisoned", &self.is_poisoned())
            .finish_non_exhaustive()
    }
}

/// Wakes an extended rendezvous's writer, or frees its buffer place, when dropped.
struct ExtEnd<'a, T> {
    chan: &'a RawChan<T>,
    writer: *const Waiter,
}

impl<T> Drop for ExtEnd<'_, T> {
    fn drop(&mut self) {
        if !self.writer.is_null() {
            // SAFETY: the writer waits on this private waiter (see
            // `rendezvous::deliver`) until we wake it; nobody else knows it.
            unsafe { Waiter::try_wake(self.writer, 0, false) };
        } else if let Flavor::Buf(b) = &self.chan.flavor {
            b.release();
        }
    }
}

/// Unregisters a waiter if its wait is left by unwinding (the runtime unwinds
/// processes still blocked when it shuts down): the channel must not keep an entry
/// pointing into a frame that is gone. Forgotten on every normal return.
struct UnregisterOnUnwind<'a, T> {
    chan: &'a RawChan<T>,
    waiter: *const Waiter,
}

impl<T> Drop for UnregisterOnUnwind<'_, T> {
    fn drop(&mut self) {
        self.chan.lock().unregister(self.waiter);
    }
}

impl<T> RawChan<T> {
    /// Waits on `waiter`, registered in this channel under `g`; if the wait unwinds,
    /// takes the entry out first. Without a deadline the guard is released only
    /// once the party is parked (see [`Waiter::wait_releasing`]), which saves the
    /// runtime a compare-and-swap per park.
    ///
    /// # Safety
    /// `waiter` was registered under `g`, as an exclusive entry when `deadline` is
    /// `None` (every party that can end the wait then takes this channel's lock).
    // Always inlined: each call level between the blocking operation and the
    // switch costs a mispredicted return after it.
    #[inline(always)]
    unsafe fn wait_registered<G>(
        &self,
        waiter: &Waiter,
        g: G,
        deadline: Option<Instant>,
    ) -> Outcome {
        let guard = UnregisterOnUnwind { chan: self, waiter };
        let out = match deadline {
            // SAFETY: the caller's contract is the one `wait_releasing` needs.
            None => unsafe { waiter.wait_releasing(g) },
            Some(_) => {
                drop(g);
                waiter.wait(deadline)
            }
        };
        std::mem::forget(guard);
        out
    }

    pub(crate) fn new(policy: Option<Policy>) -> Self {
        Self {
            flavor: match policy {
                None => Flavor::Zero(Zero::new()),
                Some(p) => Flavor::Buf(Buffered::new(p)),
            },
            senders: AtomicUsize::new(1),
            receivers: AtomicUsize::new(1),
        }
    }

    pub(crate) fn flavor(&self) -> &Flavor<T> {
        &self.flavor
    }

    /// Whether the channel is poisoned (a poisoned buffered channel may still hold
    /// items for its readers).
    pub fn is_poisoned(&self) -> bool {
        match &self.flavor {
            Flavor::Zero(z) => z.is_poisoned(),
            Flavor::Buf(b) => b.is_poisoned(),
        }
    }

    pub(crate) fn poison(&self, side: Side) {
        match &self.flavor {
            Flavor::Zero(z) => z.poison(),
            Flavor::Buf(b) => b.poison(side),
        }
    }

    pub(crate) fn send(&self, value: T, wait: Wait) -> Result<(), SendFail<T>> {
        let mut packet = Packet::with_value(value);
        let mut g = self.lock();
        match g.try_select_send(&mut packet) {
            Selected::Ready(c) => {
                drop(g);
                c.complete();
                return Ok(());
            }
            Selected::Poisoned => {
                drop(g);
                return Err(SendFail::Poisoned(take(packet)));
            }
            Selected::NotReady => {}
        }
        let Wait::Until(deadline) = wait else {
            drop(g);
            return Err(SendFail::Full(take(packet)));
        };
        let waiter = Waiter::for_current();
        // SAFETY: `waiter` and `packet` live on this frame until we return, and we
        // unregister below unless the party that ended the wait removed the entry
        // (a claimer pops it, poison drains the queue). Without a deadline the entry
        // is exclusive: this party never aborts, and every other party that can end
        // the wait does so under this channel's lock.
        unsafe { g.register_send(Entry::plain(&waiter, &packet, deadline.is_none())) };
        // SAFETY: registered just above under `g`, exclusive without a deadline.
        match unsafe { self.wait_registered(&waiter, g, deadline) } {
            Outcome::Done {
                poisoned: false, ..
            } => Ok(()),
            Outcome::Done { poisoned: true, .. } => Err(SendFail::Poisoned(take(packet))),
            Outcome::Aborted { .. } => {
                self.lock().unregister(&waiter);
                Err(SendFail::Timeout(take(packet)))
            }
        }
    }

    pub(crate) fn recv(&self, wait: Wait) -> Result<T, RecvFail> {
        let mut g = self.lock();
        match g.try_recv(false) {
            Selected::Ready(c) => {
                drop(g);
                return Ok(c.complete());
            }
            Selected::Poisoned => return Err(RecvFail::Poisoned),
            Selected::NotReady => {}
        }
        let Wait::Until(deadline) = wait else {
            return Err(RecvFail::Empty);
        };
        let mut packet = Packet::empty();
        let waiter = Waiter::for_current();
        // SAFETY: as in `send`.
        unsafe { g.register_recv(Entry::plain(&waiter, &packet, deadline.is_none())) };
        // SAFETY: registered just above under `g`, exclusive without a deadline.
        match unsafe { self.wait_registered(&waiter, g, deadline) } {
            Outcome::Done {
                poisoned: false, ..
            } => Ok(packet
                .take()
                .expect("hoare: a receive completed without a value")),
            Outcome::Done { poisoned: true, .. } => Err(RecvFail::Poisoned),
            Outcome::Aborted { .. } => {
                self.lock().unregister(&waiter);
                Err(RecvFail::Timeout)
            }
        }
    }

    pub(crate) fn recv_with<R>(&self, f: impl FnOnce(T) -> R, wait: Wait) -> Result<R, RecvFail> {
        let mut g = self.lock();
        match g.try_recv(true) {
            Selected::Ready(c) => {
                drop(g);
                return Ok(c.complete_with(f));
            }
            Selected::Poisoned => return Err(RecvFail::Poisoned),
            Selected::NotReady => {}
        }
        let Wait::Until(deadline) = wait else {
            return Err(RecvFail::Empty);
        };
        let mut packet = Packet::extended();
        let waiter = Waiter::for_current();
        // SAFETY: as in `send`.
        unsafe { g.register_recv(Entry::plain(&waiter, &packet, deadline.is_none())) };
        // SAFETY: as in `recv`.
        match unsafe { self.wait_registered(&waiter, g, deadline) } {
            Outcome::Done {
                poisoned: false, ..
            } => {
                let _end = ExtEnd {
                    chan: self,
                    writer: packet.writer(),
                };
                let v = packet
                    .take()
                    .expect("hoare: a receive completed without a value");
                Ok(f(v))
            }
            Outcome::Done { poisoned: true, .. } => Err(RecvFail::Poisoned),
            Outcome::Aborted { .. } => {
                self.lock().unregister(&waiter);
                Err(RecvFail::Timeout)
            }
        }
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

fn take<T>(p: Packet<T>) -> T {
    p.into_inner().expect("hoare: a failed send lost its value")
}
