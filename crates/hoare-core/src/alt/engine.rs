//! The alt engine: the recipe of [`crate::chan::select`], over type-erased
//! [`Case`]s, with a fast path in front.
//!
//! 1. **Fast path.** In policy order, each enabled channel guard is tried under
//!    its own channel's lock alone (lock, try, unlock); an expired timeout is
//!    chosen at its place in the order. An alt that has not registered anywhere is
//!    invisible to everybody else, so claiming a passive partner under one lock is
//!    already a decision: the first success ends the alt. When every writer is
//!    ready this costs one lock per alt. If nothing is ready, a skip guard is
//!    chosen.
//! 2. **Lock all.** The channels of the enabled channel guards are locked in
//!    address order (a channel shared by several guards once), every guard is
//!    tried again in policy order, and, if none is ready, the alt's single
//!    [`Waiter`] is registered on every guard (token = the guard's index) before
//!    any lock is released. From then on the alt is passive: it is only ever
//!    claimed, by one party at a time, under one channel's lock, and nobody spins.
//! 3. **Wait** with the earliest timeout's deadline, then **unregister** from
//!    every channel (one lock at a time) and hand the outcome to the chosen case.

use super::case::{Case, Kind};
use crate::registration::{Registration, Withdraw};
use crate::waiter::{Outcome, Waiter, CANCELLED};
use std::time::Instant;

/// The cases of one alt, as the engine indexes them: a slice of type-erased cases
/// (the macro, the builder) or a homogeneous set (`recv_any`, [`RecvAny`](super::RecvAny)).
#[doc(hidden)]
pub trait CaseSet {
    /// The number of cases.
    fn len(&self) -> usize;
    /// Case `i`.
    fn case(&mut self, i: usize) -> &mut dyn Case;
}

impl<'c> CaseSet for [&mut (dyn Case + 'c)] {
    #[inline]
    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    #[inline]
    fn case(&mut self, i: usize) -> &mut dyn Case {
        &mut *self[i]
    }
}

/// Guards up to this many channel cases are sorted on the stack.
const STACK_CASES: usize = 32;

#[inline]
fn wrap(i: usize, n: usize) -> usize {
    if i >= n {
        i - n
    } else {
        i
    }
}

/// Runs one alt over `cases`, trying them in order starting at `start` (pri:
/// `start == 0`), and returns the index of the chosen case, whose result is set.
///
/// # Panics
/// If no guard is enabled (the alt could never end).
#[doc(hidden)]
#[inline]
pub fn select<'c>(cases: &mut [&mut (dyn Case + 'c)], start: usize) -> usize {
    select_set(cases, start)
}

/// [`select`] over any [`CaseSet`].
pub(crate) fn select_set<S: CaseSet + ?Sized>(cases: &mut S, start: usize) -> usize {
    let n = cases.len();
    let start = if n == 0 { 0 } else { start % n };
    let mut skip = None;
    let mut nchan = 0;
    let mut nbar = 0;
    let mut ntime = 0;
    for j in 0..n {
        let i = wrap(start + j, n);
        let c = cases.case(i);
        match c.kind() {
            Kind::Off => {}
            Kind::Chan => {
                if c.try_alone() {
                    return i;
                }
                nchan += 1;
            }
            Kind::Barrier => {
                if c.try_alone() {
                    return i;
                }
                nbar += 1;
            }
            Kind::Timeout => {
                if c.expired() {
                    // Expired before the alt began: a poll (see `skip`).
                    c.set_chosen();
                    crate::park::spend_budget();
                    return i;
                }
                ntime += 1;
            }
            Kind::Skip => {
                if skip.is_none() {
                    skip = Some(i);
                }
            }
        }
    }
    if let Some(i) = skip {
        cases.case(i).set_chosen();
        // A poll that found nothing: spends the cooperative budget (a loop over
        // an alt with `skip` yields now and then, see `park::spend_budget`).
        crate::park::spend_budget();
        return i;
    }
    if nchan == 0 && nbar == 0 {
        assert!(
            ntime > 0,
            "hoare: an alt with no enabled guard would wait for ever"
        );
        let (i, d) = earliest(cases, start).expect("a timeout guard");
        crate::timer::sleep_until(d);
        cases.case(i).set_chosen();
        return i;
    }
    if nchan <= STACK_CASES {
        let mut buf = [(0usize, 0usize); STACK_CASES];
        slow(cases, start, &mut buf[..nchan], nbar > 0)
    } else {
        let mut buf = vec![(0usize, 0usize); nchan];
        slow(cases, start, &mut buf, nbar > 0)
    }
}

/// The timeout case with the earliest deadline (first in policy order on ties).
fn earliest<S: CaseSet + ?Sized>(cases: &mut S, start: usize) -> Option<(usize, Instant)> {
    let n = cases.len();
    let mut best: Option<(usize, Instant)> = None;
    for j in 0..n {
        let i = wrap(start + j, n);
        if cases.case(i).kind() == Kind::Timeout {
            let d = cases
                .case(i)
                .deadline()
                .expect("a timeout guard has a deadline");
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((i, d));
            }
        }
    }
    best
}

fn unlock_all<S: CaseSet + ?Sized>(cases: &mut S, order: &[(usize, usize)]) {
    for &(_, i) in order {
        cases.case(i).unlock();
    }
}

/// Phases 2 and 3. `order` has room for exactly the enabled channel cases.
fn slow<S: CaseSet + ?Sized>(
    cases: &mut S,
    start: usize,
    order: &mut [(usize, usize)],
    barrier: bool,
) -> usize {
    let n = cases.len();
    // Ask the timers for their deadlines now, before any lock is taken.
    let timeout = earliest(cases, start);
    let mut k = 0;
    for i in 0..n {
        let c = cases.case(i);
        if c.kind() == Kind::Chan {
            order[k] = (c.addr(), i);
            k += 1;
        }
    }
    debug_assert_eq!(k, order.len());
    order.sort_unstable();
    // Lock in address order, each channel once.
    let mut owner = usize::MAX;
    let mut prev = 0;
    for &(a, i) in order.iter() {
        if owner != usize::MAX && a == prev {
            let slot = cases.case(owner).lock_slot();
            // SAFETY: `owner` holds the lock of the same channel until `unlock_all`.
            unsafe { cases.case(i).lock_shared(slot) };
        } else {
            cases.case(i).lock_own();
            owner = i;
            prev = a;
        }
    }
    // Try again, now that nothing can change under us.
    for j in 0..n {
        let i = wrap(start + j, n);
        if matches!(cases.case(i).kind(), Kind::Chan | Kind::Barrier) && cases.case(i).try_locked()
        {
            unlock_all(cases, order);
            cases.case(i).complete();
            return i;
        }
    }
    // Register one waiter on every guard, then let go.
    // An alt with a barrier guard has a flagged waiter (see `super::barrier`).
    let waiter = if barrier {
        Waiter::for_current_alting()
    } else {
        Waiter::for_current()
    };
    let mut reg = Registration::new(
        AltSite {
            cases,
            order,
            waiter: &waiter,
            barrier,
        },
        &waiter,
    );
    let site = reg.site();
    for j in 0..n {
        let i = wrap(start + j, n);
        if matches!(site.cases.case(i).kind(), Kind::Chan | Kind::Barrier) {
            // SAFETY: `waiter` lives on this frame and every case stays where it is
            // until `reg` is released (or dropped), which unregisters every guard.
            unsafe { site.cases.case(i).register(&waiter, i) };
        }
    }
    unlock_all(site.cases, site.order);
    let out = waiter.wait(timeout.map(|(_, d)| d));
    let AltSite { cases, .. } = reg.release();
    match out {
        Outcome::Done { token, poisoned } => {
            cases.case(token).passive(poisoned);
            token
        }
        Outcome::Aborted { token: CANCELLED } => cancelled(cases, start),
        Outcome::Aborted { .. } => {
            let (i, _) = timeout.expect("hoare: an alt without a timeout timed out");
            cases.case(i).set_chosen();
            i
        }
    }
}

/// An alt's registration: its waiter on every channel guard's queue (and, with
/// barrier guards, in their barriers' offers). Withdrawing it takes every entry
/// out, one channel lock at a time.
struct AltSite<'a, S: CaseSet + ?Sized> {
    cases: &'a mut S,
    /// The channel cases, in lock order.
    order: &'a [(usize, usize)],
    waiter: *const Waiter,
    barrier: bool,
}

impl<S: CaseSet + ?Sized> Withdraw for AltSite<'_, S> {
    fn withdraw(&mut self) -> bool {
        for &(_, i) in self.order.iter() {
            self.cases.case(i).unregister(self.waiter);
        }
        if self.barrier {
            for i in 0..self.cases.len() {
                let c = self.cases.case(i);
                if c.kind() == Kind::Barrier {
                    c.unregister(self.waiter);
                }
            }
        }
        false
    }
}

/// The alt's party is cancelled (see [`Park::cancelled`](crate::park::Park::cancelled))
/// and nothing was ready: it must not block. The first channel guard in policy
/// order reports its channel as poisoned (a cancelled party sees every channel
/// so); an alt with only barrier guards chooses the first of them (without a
/// barrier round: the party is being unwound).
#[cold]
fn cancelled<S: CaseSet + ?Sized>(cases: &mut S, start: usize) -> usize {
    let n = cases.len();
    let pick = |cases: &mut S, kind: Kind| {
        (0..n)
            .map(|j| wrap(start + j, n))
            .find(|&i| cases.case(i).kind() == kind)
    };
    let i = pick(cases, Kind::Chan)
        .or_else(|| pick(cases, Kind::Barrier))
        .expect("hoare: a cancelled alt has no guard to report on");
    cases.case(i).passive(true);
    i
}
