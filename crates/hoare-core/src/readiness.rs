//! I/O readiness of one socket, as a poller reports it, and the parties waiting
//! for it.
//!
//! A readiness poller (the runtime's, built on mio) is *edge-triggered*: it
//! reports that a socket became readable or writable once, not for as long as it
//! stays so. A [`Readiness`] remembers those edges until an operation finds that
//! they no longer hold, and lets a party park until the next one:
//!
//! 1. take a [`snapshot`](Readiness::snapshot), then try the operation on the
//!    non-blocking socket;
//! 2. if it would block, [`clear`](Readiness::clear) the interest with that
//!    snapshot, then [`wait`](Readiness::wait) for it, and go back to 1.
//!
//! The poller calls [`set`](Readiness::set) for each event: it records the bits
//! and wakes the parties waiting for them. The word carries a *tick* that every
//! `set` advances, and `clear` only clears if the tick is still the one of the
//! snapshot: an edge that arrives between the failed operation and the clear
//! (data that came in just after `read` said it would block) is not lost
//! (tokio's `ScheduledIo` does the same; `loom_tests::io` checks it).
//!
//! A [`Guard`] turns "readable" (for a listener: "a connection is pending") into
//! an alt guard: a receiving end that holds a token whenever the readable bit is
//! set, so one process can wait for a socket and a channel together. Like any
//! readiness notification it may fire spuriously (a token left from an edge
//! whose data another operation already took): after it fires, try the
//! operation without blocking and go back to the alt if it would block.

use crate::chan::{Any, Channel, Receiver, Sender};
use crate::registration::{Registration, Withdraw};
use crate::sync::{lock, Arc, AtomicUsize, Mutex, Ordering};
use crate::waiter::{Outcome, Waiter, CANCELLED, TIMED_OUT};
use std::time::Instant;

/// A socket has data to read (or, a listener, a connection to accept).
pub const READABLE: usize = 0b0001;
/// A socket has room to write.
pub const WRITABLE: usize = 0b0010;
/// The peer closed its writing half: reads return end-of-file from now on.
pub const READ_CLOSED: usize = 0b0100;
/// The writing half is closed: writes fail from now on.
pub const WRITE_CLOSED: usize = 0b1000;
const BITS: usize = 0b1111;
const TICK_SHIFT: usize = 4;

/// What a party waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// Readable, or the reading half closed.
    Read,
    /// Writable, or the writing half closed.
    Write,
}

impl Interest {
    /// The bits that satisfy this interest.
    pub const fn mask(self) -> usize {
        match self {
            Interest::Read => READABLE | READ_CLOSED,
            Interest::Write => WRITABLE | WRITE_CLOSED,
        }
    }

    /// The bit an operation that would block clears (the closed bits stay).
    const fn clears(self) -> usize {
        match self {
            Interest::Read => READABLE,
            Interest::Write => WRITABLE,
        }
    }
}

/// The readiness word as an operation saw it before it tried (see
/// [`Readiness::clear`]).
#[derive(Clone, Copy, Debug)]
pub struct Snapshot(usize);

impl Snapshot {
    /// Whether the bits of `interest` were set.
    pub fn is_ready(self, interest: Interest) -> bool {
        self.0 & interest.mask() != 0
    }
}

/// How [`Readiness::wait`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The interest is (or was just) ready: try the operation again.
    Ready,
    /// The deadline passed first.
    TimedOut,
    /// The party is being cancelled (its runtime shuts down): it must not block.
    Cancelled,
}

/// An alt guard that holds a token while its socket is readable (see
/// [`Readiness::guard`]).
#[derive(Debug)]
pub struct Guard {
    tx: Sender<(), Any>,
    rx: Receiver<(), Any>,
}

impl Guard {
    /// The receiving end to put in an alt: a value is ready while the socket is
    /// readable (or, for a listener, a connection is pending).
    pub fn receiver(&self) -> &Receiver<(), Any> {
        &self.rx
    }
}

/// One socket's readiness and its waiting parties.
#[derive(Debug, Default)]
pub struct Readiness {
    /// tick (above `TICK_SHIFT`) | readiness bits.
    word: AtomicUsize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// The parked parties and what each waits for.
    waiters: Vec<(Interest, *const Waiter)>,
    guard: Option<Arc<Guard>>,
}

// SAFETY: the raw waiter pointers are only dereferenced under `inner`'s lock,
// while their parties cannot leave their waits (they withdraw under that lock).
unsafe impl Send for Inner {}

/// A waiting party's entry, withdrawn when its wait ends.
struct Site<'a> {
    r: &'a Readiness,
}

impl Withdraw for Site<'_> {
    fn withdraw(&mut self, waiter: Option<&Waiter>) -> bool {
        let me: *const Waiter = waiter.expect("a readiness registration has a waiter");
        let mut g = lock(&self.r.inner);
        g.waiters.retain(|&(_, w)| w != me);
        false
    }
}

impl Readiness {
    /// Nothing ready yet (a poller reports the current state when a socket is
    /// registered).
    pub fn new() -> Self {
        Self::default()
    }

    /// The word as it is now, to hand to [`clear`](Self::clear) if the operation
    /// tried after this would block.
    #[inline]
    pub fn snapshot(&self) -> Snapshot {
        Snapshot(self.word.load(Ordering::Acquire))
    }

    /// The poller saw the bits `ready` (an edge): records them, wakes the parties
    /// waiting for them, and fills the guard's token if readable.
    pub fn set(&self, ready: usize) {
        let ready = ready & BITS;
        let mut cur = self.word.load(Ordering::Relaxed);
        loop {
            let tick = (cur >> TICK_SHIFT).wrapping_add(1);
            let new = (tick << TICK_SHIFT) | (cur & BITS) | ready;
            match self
                .word
                .compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(c) => cur = c,
            }
        }
        let mut g = lock(&self.inner);
        g.waiters.retain(|&(interest, w)| {
            if interest.mask() & ready == 0 {
                return true;
            }
            // SAFETY: the party is in its wait until it withdraws, which takes the
            // lock we hold. It may have aborted (timed out) meanwhile: then the
            // wake fails and it withdraws nothing.
            unsafe { Waiter::try_wake(w, 0, false) };
            false
        });
        let guard = g.guard.clone();
        drop(g);
        if ready & Interest::Read.mask() != 0 {
            if let Some(guard) = guard {
                let _ = guard.tx.try_send(());
            }
        }
    }

    /// An operation found `interest` not ready after all (it would block): clears
    /// its bit unless an edge came after `snap` was taken. Empties the guard's
    /// token with it (and refills it if an edge came meanwhile).
    pub fn clear(&self, snap: Snapshot, interest: Interest) {
        let bit = interest.clears();
        if snap.0 & bit == 0 {
            return;
        }
        if self
            .word
            .compare_exchange(snap.0, snap.0 & !bit, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            // An edge came since: it stays.
            return;
        }
        if interest == Interest::Read {
            let guard = lock(&self.inner).guard.clone();
            if let Some(guard) = guard {
                // Drain, then look again: a `set` that raced with the drain either
                // sent after it (the token is there) or is seen here.
                while guard.rx.try_recv().is_ok() {}
                if self.snapshot().is_ready(Interest::Read) {
                    let _ = guard.tx.try_send(());
                }
            }
        }
    }

    /// Parks the current party until `interest` is ready, `deadline` passes, or the
    /// party is cancelled. Returns at once if the interest's bits are set.
    pub fn wait(&self, interest: Interest, deadline: Option<Instant>) -> Wait {
        /// The wait record: an event from outside hoare.
        unsafe fn external(_: *const ()) -> crate::wait::Wait {
            crate::wait::Wait::External("socket readiness".into())
        }
        let w = Waiter::for_current().on(crate::wait::WaitOn::fixed(external));
        {
            let mut g = lock(&self.inner);
            if self.snapshot().is_ready(interest) {
                return Wait::Ready;
            }
            g.waiters.push((interest, &w as *const Waiter));
        }
        let reg = Registration::new(Site { r: self }, &w);
        match w.wait(deadline) {
            Outcome::Done { .. } => {
                // `set` took the entry out before it woke us.
                reg.finished();
                Wait::Ready
            }
            Outcome::Aborted { token } => {
                drop(reg);
                if token == CANCELLED {
                    Wait::Cancelled
                } else {
                    debug_assert_eq!(token, TIMED_OUT);
                    Wait::TimedOut
                }
            }
        }
    }

    /// A read operation succeeded: if the socket may still be readable (its bit
    /// is set: no operation has found otherwise), puts a token back in the guard,
    /// which the alt that fired had taken. So a process that does one operation
    /// per firing of the guard is not left waiting for an edge that already came
    /// (two connections pending, one accepted); the next firing may be spurious.
    pub fn rearm(&self) {
        if !self.snapshot().is_ready(Interest::Read) {
            return;
        }
        let guard = lock(&self.inner).guard.clone();
        if let Some(guard) = guard {
            let _ = guard.tx.try_send(());
        }
    }

    /// The readable guard of this socket (made on first use): its receiving end
    /// holds a token while the socket is readable.
    pub fn guard(&self) -> Arc<Guard> {
        let mut g = lock(&self.inner);
        if let Some(guard) = &g.guard {
            return guard.clone();
        }
        // Fed by readiness events: a wait on it is a wait on the outside world.
        let (tx, rx) = Channel::builder()
            .name("socket readiness")
            .outside()
            .bounded(1)
            .any2any::<()>();
        let guard = Arc::new(Guard { tx, rx });
        g.guard = Some(guard.clone());
        drop(g);
        if self.snapshot().is_ready(Interest::Read) {
            let _ = guard.tx.try_send(());
        }
        guard
    }
}
