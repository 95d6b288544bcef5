//! Every registration of a waiting party is undone on every exit.
//!
//! A party that blocks makes itself findable: its waiter goes into a channel's
//! queue (one entry, or one per alt guard), an alting barrier's offers, a barrier
//! group's stack, a join slot, a timer map. Whatever way the wait is left — a
//! normal return, a timeout, a cancellation, or the stack being unwound when the
//! runtime shuts down — that registration must be taken back before the frame that
//! holds the waiter goes away, or somebody later writes through a pointer into a
//! dead stack.
//!
//! [`Registration`] is the one type that does it: it is made right after the
//! party registers, and its `Drop` withdraws the registration (through the site's
//! [`Withdraw`]) and then settles the waiter: if another party has claimed the wait
//! and not finished it yet, that party is still going to write to the waiter (and to
//! the packet next to it), so the frame must not go before it has: the party waits
//! for that finish. (A runtime that unwinds parked processes unwinds one only once
//! no other party holds its wait, see [`Waiter::is_held`], so whoever it waits for
//! here is running.)

use crate::waiter::Waiter;

/// A place a waiting party registered with, that can take the registration back.
pub trait Withdraw {
    /// Takes the registration of `waiter` (the registration's, `None` for one
    /// made [`without_waiter`](Registration::without_waiter)) back: afterwards
    /// nobody can *start* to commit the wait or touch the party's memory through
    /// this site (a party that already claimed the wait may still finish it).
    /// Returns `true` if the waiter may still be committed by another party all
    /// the same (a private hand-off whose partner holds the waiter's address and
    /// cannot be told to forget it). The site need not keep the waiter itself:
    /// the registration hands it over (one copy of it on the waiting frame).
    fn withdraw(&mut self, waiter: Option<&Waiter>) -> bool;
}

/// A registration of a waiting party with a site, undone when dropped (see the
/// [module documentation](self)).
#[must_use = "dropping a registration withdraws it at once"]
pub struct Registration<'w, S: Withdraw> {
    site: S,
    waiter: Option<&'w Waiter>,
}

impl<'w, S: Withdraw> Registration<'w, S> {
    /// Records that `waiter` is registered with `site`.
    #[inline]
    pub fn new(site: S, waiter: &'w Waiter) -> Self {
        Self {
            site,
            waiter: Some(waiter),
        }
    }

    /// A registration without a waiter of the core (a runtime's timer entry).
    #[inline]
    pub fn without_waiter(site: S) -> Self {
        Self { site, waiter: None }
    }

    /// The site, to use while the registration stands.
    #[inline]
    pub fn site(&mut self) -> &mut S {
        &mut self.site
    }

    /// Ends a registration that the party that committed the wait took out
    /// itself: nothing is left to withdraw and nobody touches the waiter any more
    /// (a plain channel entry, which its claimer pops from the queue, or poison
    /// drains). Saves the withdrawal's checks on the hot path; any other way out
    /// drops the registration.
    #[inline(always)]
    pub fn finished(self) {
        debug_assert!(self.waiter.is_none_or(|w| w.is_done()));
        std::mem::forget(self);
    }

    /// Withdraws the registration now (what dropping it does) and gives the site
    /// back, for a caller that needs what the site borrowed afterwards.
    #[inline]
    pub fn release(self) -> S {
        let mut me = std::mem::ManuallyDrop::new(self);
        me.undo();
        // SAFETY: `me` is never dropped, so the site is moved out exactly once.
        unsafe { std::ptr::read(&me.site) }
    }

    #[inline]
    fn undo(&mut self) {
        let reachable = self.site.withdraw(self.waiter);
        if let Some(w) = self.waiter {
            if reachable || w.is_claimed() {
                settle(w, reachable);
            }
        }
    }
}

impl<S: Withdraw> Drop for Registration<'_, S> {
    #[inline]
    fn drop(&mut self) {
        self.undo();
    }
}

/// Another party may still write to `w` (it claimed the wait, or can still
/// commit it): wait until it has. That party is running (a process being unwound by
/// a shutdown was unwound only once nobody held its wait, see
/// [`Waiter::is_held`]), so this ends: within a few instructions, or when an
/// extended rendezvous's closure returns.
#[cold]
fn settle(w: &Waiter, reachable: bool) {
    while w.is_claimed() || (reachable && w.is_waiting()) {
        std::hint::spin_loop();
        crate::sync::thread::yield_now();
    }
}
