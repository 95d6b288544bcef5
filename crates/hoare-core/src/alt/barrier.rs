//! Alting barriers (`docs/semantics.md#barriers`): a barrier whose sync can be a
//! guard of an alt.
//!
//! An [`AltingBarrier`] has enrolled ends ([`AltingBarrierEnd`]); its guard is
//! ready when every enrolled end is *offering* (is in an alt with that guard
//! enabled, or in [`AltingBarrierEnd::sync`]). Then the barrier completes: every
//! offering alt chooses its barrier guard, all at once, and nobody else sees any of
//! them choose anything else.
//!
//! ```
//! use hoare_core::alt;
//! use hoare_core::alt::AltingBarrier;
//! use hoare_core::chan::one2one;
//!
//! let (_b, mut ends) = AltingBarrier::with_enrolled(2);
//! let mut other = ends.pop().unwrap();
//! let mut mine = ends.pop().unwrap();
//! let (_tx, rx) = one2one::<u32>();
//! let t = std::thread::spawn(move || other.sync());
//! let r = alt! {
//!     recv(rx) -> _v => "channel",
//!     barrier(&mut mine) => "barrier",
//! };
//! assert_eq!(r, "barrier");
//! t.join().unwrap();
//! ```
//!
//! # How it works
//! Completing the barrier must commit several alts' waiters at once, while any of
//! them may concurrently be claimed by a channel partner, poisoned, or time out.
//! So the waiters of alts that include a barrier guard are *flagged*
//! (`Waiter::for_current_alting`): every transition of a flagged waiter out of
//! `WAITING` (a claim, a wake, the party's own abort) takes one global lock
//! (`waiter::alting_lock`; order: a channel's lock first, then the global one).
//! The party that completes a barrier holds that lock, claims every offering
//! waiter, and if one of them is already committed elsewhere (its offer is stale),
//! rolls its other claims back to `WAITING` and drops the stale offer. Nobody can
//! observe the rollback, because nobody else can touch a flagged waiter while the
//! completer holds the lock. The claimed waiters are finished after the lock is
//! released.
//!
//! An alt offers in its register phase (under the global lock, while it holds its
//! channels' locks); whoever makes the last offer (or the resignation that leaves
//! only offering ends) completes the barrier, claiming its own waiter too if it is
//! registering, so no completion is lost between trying and offering.

use super::case::{Case, Kind};
use crate::sync::{lock, Arc, Mutex};
use crate::waiter::{alting_lock, Waiter};
use std::fmt;

/// One offering alt: its (flagged) waiter and the token of its barrier guard.
#[derive(Clone, Copy)]
struct Offer {
    waiter: *const Waiter,
    token: usize,
}

struct State {
    enrolled: usize,
    offers: Vec<Offer>,
    rounds: u64,
}

// SAFETY: the waiter pointers in `offers` are only dereferenced under the global
// alting lock, while their owners are registered (they withdraw under that lock
// before their waiters go away).
unsafe impl Send for State {}

struct Inner {
    /// Taken only while holding the global alting lock.
    state: Mutex<State>,
}

/// Claimed waiters to finish once the locks are released.
#[derive(Default)]
struct Completion(Vec<*const Waiter>);

impl Completion {
    fn finish(self) {
        for w in self.0 {
            // SAFETY: claimed by us (under the global lock) and not finished; the
            // party stays in its wait until this.
            unsafe { Waiter::finish(w, false) };
        }
    }
}

impl Inner {
    /// Under the global lock: completes the barrier if every enrolled end is
    /// offering, except the caller's own end when `party` (an alt trying its guard,
    /// or offering now as `me`). Claims every offer (and `me`); on a stale offer
    /// drops it and rolls back. Returns the claimed waiters (`me` included).
    fn try_complete(&self, party: bool, me: Option<Offer>) -> Option<Completion> {
        let mut st = lock(&self.state);
        let need = st.enrolled.checked_sub(usize::from(party))?;
        if st.enrolled == 0 || st.offers.len() != need {
            return None;
        }
        let mut claimed = Vec::with_capacity(need + 1);
        let mut stale = false;
        for o in st.offers.iter() {
            // SAFETY: an offer's waiter is live while it is in `offers` (see `State`).
            if unsafe { (*o.waiter).claim_locked(o.token) } {
                claimed.push(*o);
            } else {
                stale = true;
            }
        }
        if !stale {
            if let Some(m) = me {
                // SAFETY: our own waiter.
                if unsafe { (*m.waiter).claim_locked(m.token) } {
                    claimed.push(m);
                } else {
                    stale = true;
                }
            }
        }
        if stale {
            for o in claimed {
                // SAFETY: claimed just above, under the lock we still hold.
                unsafe { (*o.waiter).unclaim_locked() };
            }
            // SAFETY: as above.
            st.offers.retain(|o| unsafe { (*o.waiter).is_waiting() });
            return None;
        }
        st.offers.clear();
        st.rounds += 1;
        Some(Completion(claimed.into_iter().map(|o| o.waiter).collect()))
    }
}

/// An alting barrier: a shared handle that parties enroll on (see the
/// [module documentation](self)). Cloning the handle enrolls nobody.
#[derive(Clone)]
pub struct AltingBarrier {
    inner: Arc<Inner>,
}

impl fmt::Debug for AltingBarrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AltingBarrier")
            .field("enrolled", &self.enrolled())
            .finish()
    }
}

impl Default for AltingBarrier {
    fn default() -> Self {
        Self::new()
    }
}

impl AltingBarrier {
    /// An alting barrier with no end enrolled.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    enrolled: 0,
                    offers: Vec::new(),
                    rounds: 0,
                }),
            }),
        }
    }

    /// An alting barrier with `n` ends enrolled.
    pub fn with_enrolled(n: usize) -> (Self, Vec<AltingBarrierEnd>) {
        let b = Self::new();
        let ends = (0..n).map(|_| b.enroll()).collect();
        (b, ends)
    }

    /// Enrolls a new end: from now on the barrier completes only when it offers too.
    pub fn enroll(&self) -> AltingBarrierEnd {
        let _g = alting_lock();
        lock(&self.inner.state).enrolled += 1;
        AltingBarrierEnd {
            inner: self.inner.clone(),
        }
    }

    /// The number of enrolled ends (a snapshot).
    pub fn enrolled(&self) -> usize {
        let _g = alting_lock();
        lock(&self.inner.state).enrolled
    }

    /// The number of times the barrier has completed (a snapshot).
    pub fn rounds(&self) -> u64 {
        let _g = alting_lock();
        lock(&self.inner.state).rounds
    }
}

/// One enrolled party of an [`AltingBarrier`]: use it as an alt guard
/// (`barrier(&mut end)` in [`alt!`](crate::alt!), [`Alt::barrier`](super::Alt::barrier))
/// or [`sync`](Self::sync) on it. Dropping it resigns.
pub struct AltingBarrierEnd {
    inner: Arc<Inner>,
}

impl fmt::Debug for AltingBarrierEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AltingBarrierEnd").finish_non_exhaustive()
    }
}

impl AltingBarrierEnd {
    /// Offers to synchronise and waits until every enrolled end does (an alt with
    /// only this guard).
    pub fn sync(&mut self) {
        let mut c = BarrierCase::new(Some(self));
        super::engine::select(&mut [&mut c as &mut dyn Case], 0);
    }

    /// A handle to the barrier (to enroll more ends).
    pub fn barrier(&self) -> AltingBarrier {
        AltingBarrier {
            inner: self.inner.clone(),
        }
    }

    /// Leaves the barrier (the same as dropping the end). If every other end is
    /// offering, the barrier completes for them.
    pub fn resign(self) {}
}

impl Drop for AltingBarrierEnd {
    fn drop(&mut self) {
        let done = {
            let _g = alting_lock();
            lock(&self.inner.state).enrolled -= 1;
            self.inner.try_complete(false, None)
        };
        if let Some(c) = done {
            c.finish();
        }
    }
}

/// An alting-barrier guard.
#[doc(hidden)]
pub struct BarrierCase<'a> {
    end: Option<&'a mut AltingBarrierEnd>,
    offered: *const Waiter,
    chosen: bool,
    pending: Option<Completion>,
}

impl<'a> BarrierCase<'a> {
    /// A barrier guard on `end` (`None`: precondition false).
    #[inline]
    pub fn new(end: Option<&'a mut AltingBarrierEnd>) -> Self {
        Self {
            end,
            offered: std::ptr::null(),
            chosen: false,
            pending: None,
        }
    }

    /// `Some(())` if this guard was chosen.
    #[inline]
    pub fn into_chosen(self) -> Option<()> {
        self.chosen.then_some(())
    }

    pub(crate) fn take_chosen(&mut self) -> bool {
        std::mem::replace(&mut self.chosen, false)
    }

    fn inner(&self) -> &Inner {
        &self
            .end
            .as_ref()
            .expect("hoare: a disabled guard was used")
            .inner
    }

    fn try_now(&mut self) -> bool {
        let done = {
            let _g = alting_lock();
            self.inner().try_complete(true, None)
        };
        match done {
            Some(c) => {
                self.pending = Some(c);
                self.chosen = true;
                true
            }
            None => false,
        }
    }
}

// SAFETY: not a channel guard.
unsafe impl Case for BarrierCase<'_> {
    #[inline]
    fn kind(&self) -> Kind {
        if self.end.is_some() {
            Kind::Barrier
        } else {
            Kind::Off
        }
    }

    fn try_alone(&mut self) -> bool {
        if self.try_now() {
            self.complete();
            true
        } else {
            false
        }
    }

    fn try_locked(&mut self) -> bool {
        self.try_now()
    }

    unsafe fn register(&mut self, waiter: *const Waiter, token: usize) {
        // SAFETY: the caller's waiter is live.
        debug_assert!(unsafe { (*waiter).is_alting() });
        let me = Offer { waiter, token };
        let done = {
            let _g = alting_lock();
            match self.inner().try_complete(true, Some(me)) {
                Some(c) => Some(c),
                None => {
                    // SAFETY: our own waiter.
                    if unsafe { (*waiter).is_waiting() } {
                        lock(&self.inner().state).offers.push(me);
                        self.offered = waiter;
                    }
                    None
                }
            }
        };
        // Our own waiter is among the claimed ones: finishing it now makes the
        // coming `wait` return at once with this guard's token.
        if let Some(c) = done {
            c.finish();
        }
    }

    fn unregister(&mut self, waiter: *const Waiter) {
        if self.offered.is_null() {
            return;
        }
        let _g = alting_lock();
        lock(&self.inner().state)
            .offers
            .retain(|o| o.waiter != waiter);
        self.offered = std::ptr::null();
    }

    fn complete(&mut self) {
        if let Some(c) = self.pending.take() {
            c.finish();
        }
    }

    fn passive(&mut self, _poisoned: bool) {
        self.chosen = true;
    }
}
