//! One commit point per wait.
//!
//! A party that blocks (a send, a receive, an alt, a barrier sync, a join) owns one
//! [`Waiter`]: an atomic word that decides what woke it. Everything that can end the
//! wait (a partner completing a communication, poison, the party's own timeout, an alt
//! guard) must first win the compare-and-swap out of [`WAITING`](Waiter::is_waiting),
//! so two events can never both win.
//!
//! ```text
//!            try_claim(tok)             finish(poisoned)
//!  WAITING ───────────────► CLAIMED(tok) ───────────────► DONE(tok, poisoned) ─► unpark
//!     │   try_wake(tok, poisoned)                             ▲
//!     ├───────────────────────────────────────────────────────┘
//!     │  try_abort(tok)   (by the waiting party itself: timeout, alt cancellation)
//!     └───────────────► ABORTED(tok)                          (no unpark)
//! ```
//!
//! The winner of a claim may take its time between `try_claim` and `finish` (copy a
//! value out of the waiter's packet, run an extended rendezvous): the waiting party
//! stays blocked until `finish`, even if its timeout fires meanwhile, so the value it
//! offered is never both delivered and handed back.
//!
//! Exactly one unpark is delivered per committed wait, after the final store, and
//! [`Waiter::wait`] always consumes it; see [`crate::park`] for why that makes a
//! pointer-sized [`Unparker`] enough.

use crate::park::{self, Park, Unparker};
use crate::sync::{AtomicUsize, Ordering};
use crate::wait::WaitOn;
use std::time::Instant;

const KIND_MASK: usize = 0b11;
const WAITING: usize = 0;
const CLAIMED: usize = 1;
const DONE: usize = 2;
const ABORTED: usize = 3;
const POISON_BIT: usize = 0b100;
const TOKEN_SHIFT: usize = 3;

/// The largest token a waiter can carry.
pub const MAX_TOKEN: usize = usize::MAX >> TOKEN_SHIFT;

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Another party committed the wait with this token (e.g. the alt guard's index)
    /// and finished it; `poisoned` says whether it ended by poison.
    Done {
        /// The token given to [`Waiter::try_claim`] or [`Waiter::try_wake`].
        token: usize,
        /// Whether the wait was ended by poison rather than a communication.
        poisoned: bool,
    },
    /// The waiting party aborted the wait itself with this token (a timeout, or an
    /// alt that found a ready guard while registering).
    Aborted {
        /// The token given to [`Waiter::try_abort`] (or [`TIMED_OUT`] for a deadline).
        token: usize,
    },
}

/// The token [`Waiter::wait`] aborts with when its deadline passes.
pub const TIMED_OUT: usize = MAX_TOKEN;

/// The token a wait is aborted with when its party is cancelled (see
/// [`Park::cancelled`]): the runtime shut down and
/// is unwinding it, so it must not block.
pub const CANCELLED: usize = MAX_TOKEN - 1;

/// The commit word of one wait, with the unparker of the party that waits.
#[derive(Debug)]
pub struct Waiter {
    state: AtomicUsize,
    unparker: Unparker,
    /// The waiter of an alt with an alting-barrier guard: every transition out of
    /// `WAITING` by another party or by itself goes through [`alting_lock`], so the
    /// party completing an alting barrier (which holds that lock) can claim several
    /// such waiters and roll its claims back unobserved (see `crate::alt::barrier`).
    alting: bool,
    /// A private hand-off: the one party that will commit this wait holds the
    /// waiter's address (not a queue it could be withdrawn from), from before the
    /// wait starts until it wakes the party. See [`is_held`](Waiter::is_held).
    private: bool,
    /// What the wait is for, for reports (see [`crate::wait`]).
    on: std::cell::UnsafeCell<WaitOn>,
}

// SAFETY: `on` is written only by the waiting party before others can read it
// (at construction, or `set_on` on a re-armed waiter) and read only while the
// party is parked in the wait; every other field is atomic or immutable.
unsafe impl Sync for Waiter {}
// SAFETY: as above; the record's pointers are only read under `WaitOn`'s contract.
unsafe impl Send for Waiter {}

crate::sync::global_lock! {
    /// Takes the one global lock of alting barriers (lock order: a channel's lock
    /// first, then this one).
    pub(crate) fn alting_lock();
}

impl Waiter {
    /// A waiter for the party that is running now.
    #[inline]
    pub fn for_current() -> Self {
        park::with_current(|p| Self::new(p.unparker()))
    }

    /// A waiter that wakes `unparker` when committed.
    pub fn new(unparker: Unparker) -> Self {
        Self {
            state: AtomicUsize::new(WAITING),
            unparker,
            alting: false,
            private: false,
            on: std::cell::UnsafeCell::new(WaitOn::UNKNOWN),
        }
    }

    /// This waiter, recording that its wait is for `on` (see [`crate::wait`]).
    #[inline(always)]
    pub fn on(mut self, on: WaitOn) -> Self {
        *self.on.get_mut() = on;
        self
    }

    /// Re-records what a re-armed waiter waits for.
    ///
    /// # Safety
    /// No other party may read the record meanwhile (the waiter is not parked in).
    pub(crate) unsafe fn set_on(&self, on: WaitOn) {
        // SAFETY: the caller's contract: nobody reads `on` concurrently.
        unsafe { *self.on.get() = on };
    }

    /// What the wait is for.
    #[inline]
    pub fn wait_on(&self) -> WaitOn {
        // SAFETY: written only before the wait is visible or while nobody reads it.
        unsafe { *self.on.get() }
    }

    /// A waiter for a private hand-off (see [`is_held`](Waiter::is_held)): the
    /// party that will commit it already knows its address and cannot be made to
    /// forget it (the writer of an extended rendezvous waiting for the reader's
    /// closure, a scope waiting for its processes).
    pub fn private(unparker: Unparker) -> Self {
        Self {
            private: true,
            ..Self::new(unparker)
        }
    }

    /// A waiter for the party running now, for an alt that has an alting-barrier
    /// guard: its transitions are serialised by the global alting-barrier lock.
    pub(crate) fn for_current_alting() -> Self {
        let mut w = Self::for_current();
        w.alting = true;
        w
    }

    /// Whether this is the waiter of an alt with an alting-barrier guard.
    pub(crate) fn is_alting(&self) -> bool {
        self.alting
    }

    /// The one way out of `WAITING`, to `to` (a claim, or the party's own abort):
    /// a compare-and-swap, so that exactly one event wins. The caller takes the
    /// alting lock where the waiter needs it.
    #[inline]
    fn leave_waiting(&self, to: usize) -> bool {
        self.state
            .compare_exchange(WAITING, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// `try_claim` for the holder of [`alting_lock`] (does not take it again).
    pub(crate) fn claim_locked(&self, token: usize) -> bool {
        self.leave_waiting(CLAIMED | (token << TOKEN_SHIFT))
    }

    /// Undoes a [`claim_locked`](Self::claim_locked) that has not been finished. Only
    /// under [`alting_lock`], for an alting waiter: no other party can have seen the
    /// claim, since every transition of such a waiter takes that lock.
    pub(crate) fn unclaim_locked(&self) {
        debug_assert!(self.alting);
        let s = self.state.load(Ordering::Relaxed);
        debug_assert_eq!(s & KIND_MASK, CLAIMED);
        self.state.store(WAITING, Ordering::Release);
    }

    /// Whether nobody has committed this wait yet.
    #[inline]
    pub fn is_waiting(&self) -> bool {
        self.state.load(Ordering::Acquire) == WAITING
    }

    /// Whether another party has claimed this wait and not finished it yet (it
    /// is still going to write to the waiter and the data it guards).
    #[inline]
    pub(crate) fn is_claimed(&self) -> bool {
        self.state.load(Ordering::Acquire) & KIND_MASK == CLAIMED
    }

    /// Whether another party holds this wait: it claimed it and has not finished
    /// (an extended rendezvous's reader runs its closure while holding the writer),
    /// or the wait is a [private](Waiter::private) hand-off still open. Such a
    /// party will still write to the waiter, so the frame that holds it must not go
    /// away before; a runtime that unwinds parked processes (a shutdown) unwinds
    /// the holder first.
    pub fn is_held(&self) -> bool {
        let s = self.state.load(Ordering::Acquire) & KIND_MASK;
        s == CLAIMED || (self.private && s == WAITING)
    }

    /// Whether the wait was committed and finished by another party (as opposed
    /// to still open, claimed, or aborted by its own party).
    #[inline]
    pub(crate) fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) & KIND_MASK == DONE
    }

    /// Whether another party finished this wait with token 0 and without poison
    /// (a plain send's or receive's communication): [`is_done`](Self::is_done)
    /// and the outcome in one comparison.
    #[inline]
    pub(crate) fn is_done_plain(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    /// The unparker of the waiting party (to tell two waiters of one party apart).
    pub fn unparker(&self) -> Unparker {
        self.unparker
    }

    /// Commits the wait with `token`. On success the caller must later call
    /// [`finish`](Waiter::finish) exactly once; until then the waiting party stays
    /// blocked, so any data it offered stays valid.
    #[inline]
    pub fn try_claim(&self, token: usize) -> bool {
        debug_assert!(token <= MAX_TOKEN);
        let _alting = self.alting.then(alting_lock);
        self.leave_waiting(CLAIMED | (token << TOKEN_SHIFT))
    }

    /// Commits the wait with `token` by a plain store instead of a compare-and-swap,
    /// for a wait that nobody can race to commit: afterwards exactly as
    /// [`try_claim`](Waiter::try_claim) returning `true`. (Channels use it for a
    /// plain blocking send or receive without a deadline: saves one atomic
    /// read-modify-write on the rendezvous hot path.)
    ///
    /// # Safety
    /// The wait is still open, and no other party may commit or abort it
    /// concurrently: every party that may commit it holds one lock, which the caller
    /// holds, and the waiting party neither has a deadline nor calls
    /// [`try_abort`](Waiter::try_abort).
    #[inline]
    pub(crate) unsafe fn claim_exclusive(&self, token: usize) {
        debug_assert!(token <= MAX_TOKEN);
        debug_assert_eq!(self.state.load(Ordering::Relaxed), WAITING);
        self.state
            .store(CLAIMED | (token << TOKEN_SHIFT), Ordering::Relaxed);
    }

    /// Publishes the end of a claimed wait and wakes the party.
    ///
    /// # Safety
    /// `this` must point to a waiter the caller claimed with
    /// [`try_claim`](Waiter::try_claim) and has not finished. The waiter may be gone
    /// as soon as the final store is made, which is why this takes a raw pointer.
    #[inline]
    pub unsafe fn finish(this: *const Waiter, poisoned: bool) {
        // SAFETY: the party stays in its wait until the store below.
        let me = unsafe { &*this };
        let unparker = me.unparker;
        let s = me.state.load(Ordering::Relaxed);
        debug_assert_eq!(s & KIND_MASK, CLAIMED);
        let done = (s & !KIND_MASK) | DONE | if poisoned { POISON_BIT } else { 0 };
        me.state.store(done, Ordering::Release);
        // SAFETY: this is the one unpark of a wait we committed; the party cannot have
        // left its wait without consuming it.
        unsafe { unparker.unpark() };
    }

    /// Commits and finishes in one step (nothing to hand over but the outcome).
    /// Returns whether this call won the wait.
    ///
    /// # Safety
    /// `this` must point to a live waiter: one whose party cannot leave the wait
    /// without a lock or a claim the caller holds.
    #[inline]
    pub unsafe fn try_wake(this: *const Waiter, token: usize, poisoned: bool) -> bool {
        // SAFETY: live per the caller's contract until our store succeeds.
        let me = unsafe { &*this };
        let unparker = me.unparker;
        let done = DONE | (token << TOKEN_SHIFT) | if poisoned { POISON_BIT } else { 0 };
        let alting = me.alting.then(alting_lock);
        let won = me.leave_waiting(done);
        // Released before the unpark, which may free the waiter.
        drop(alting);
        if won {
            // SAFETY: the one unpark of a wait we committed.
            unsafe { unparker.unpark() };
        }
        won
    }

    /// Aborts the wait from the waiting party itself. If another party committed it
    /// first, waits for that party to finish and returns its outcome as `Err`.
    pub fn try_abort(&self, token: usize) -> Result<(), Outcome> {
        if self.try_abort_quiet(token) {
            Ok(())
        } else {
            Err(park::with_current(|p| self.wait_committed(p)))
        }
    }

    /// Blocks the current party until the wait is committed and finished, or until
    /// `deadline` passes and the party aborts it itself with [`TIMED_OUT`].
    ///
    /// Must be called by the party whose unparker this waiter holds, after the waiter
    /// has been made visible to the parties that may commit it.
    // Inlined so a process's context switch happens one call level closer to the
    // blocking operation (each level costs a mispredicted return after the switch).
    #[inline]
    pub fn wait(&self, deadline: Option<Instant>) -> Outcome {
        park::with_current(|p| self.wait_as(p, deadline))
    }

    /// [`wait`](Self::wait) for a caller that already has the current party `p`
    /// (saves looking it up again).
    ///
    /// A [cancelled](crate::park::Park::cancelled) party does not block: a wait
    /// with a deadline times out at once, one without is aborted with
    /// [`CANCELLED`] (unless another party committed it first).
    #[inline]
    pub(crate) fn wait_as(&self, p: &dyn Park, deadline: Option<Instant>) -> Outcome {
        if let Some(d) = deadline {
            if !p.park_until(d, Some(self)) {
                if self.try_abort_quiet(TIMED_OUT) {
                    return Outcome::Aborted { token: TIMED_OUT };
                }
                return self.wait_committed(p);
            }
            return self.outcome();
        }
        if p.cancelled() && self.try_abort_quiet(CANCELLED) {
            return Outcome::Aborted { token: CANCELLED };
        }
        self.wait_committed(p)
    }

    /// Blocks until another party has committed and finished this wait, whether or
    /// not the party is cancelled (for a wait that must not be left early: a scope
    /// waiting for the processes that borrow from its frame).
    pub fn wait_uncancellable(&self) -> Outcome {
        park::with_current(|p| self.wait_committed(p))
    }

    /// [`try_abort`](Self::try_abort) without waiting: whether this party aborted
    /// the wait itself (`false`: another party committed it first).
    pub(crate) fn try_abort_quiet(&self, token: usize) -> bool {
        let _alting = self.alting.then(alting_lock);
        self.leave_waiting(ABORTED | (token << TOKEN_SHIFT))
    }

    /// Consumes the one unpark of a committed wait and returns its outcome.
    #[inline]
    pub(crate) fn wait_committed(&self, p: &dyn Park) -> Outcome {
        p.park(self);
        self.outcome()
    }

    /// The outcome of a finished or aborted wait.
    ///
    /// # Panics
    /// If the wait is still open or claimed but not finished: that means an unpark
    /// arrived that the protocol did not send, a bug in the runtime or the core.
    #[inline]
    pub fn outcome(&self) -> Outcome {
        let s = self.state.load(Ordering::Acquire);
        let token = s >> TOKEN_SHIFT;
        match s & KIND_MASK {
            DONE => Outcome::Done {
                token,
                poisoned: s & POISON_BIT != 0,
            },
            ABORTED => Outcome::Aborted { token },
            _ => panic!("hoare: a waiter woke before its wait was finished (state {s:#x})"),
        }
    }
}
