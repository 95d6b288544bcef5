//! The alt engine: the recipe of the core's `chan/select.rs`, over [`Case`]s, with a
//! fast path in front. Every alt runs here: the macro's and the builder's (a slice of
//! type-erased cases), `recv_any`'s (receive cases on the stack) and
//! [`RecvAny`](super::RecvAny)'s (a set built once and selected on many times).
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
//! 3. **Wait** with the earliest timeout's deadline, then **withdraw** the
//!    registration (unregister from every channel, one lock at a time) and hand the
//!    outcome to the chosen case.
//!
//! A [`Plan`] adapts the recipe to a case set that outlives its alts
//! ([`RecvAny`](super::RecvAny)'s): its lock order is computed once and handed in
//! (instead of sorted at every alt), it may skip the fast path when that would not
//! pay, it may yield once before registering, and its waiter lives on the heap, so
//! its entries may *linger* in the channels' queues after a wait instead of being
//! unregistered (see [`Plan::LINGER`]).

use super::case::{Case, Kind};
use crate::registration::{Registration, Withdraw};
use crate::wait::{Wait, WaitOn};
use crate::waiter::{Outcome, Waiter, CANCELLED};
use std::marker::PhantomData;
use std::time::Instant;

/// The cases of one alt, as the engine indexes them: a slice of type-erased cases
/// (the macro, the builder) or of receive cases (`recv_any`, [`RecvAny`](super::RecvAny)).
pub(crate) trait CaseSet {
    /// The type of a case (`dyn Case` for a type-erased set).
    type Case: Case + ?Sized;
    /// Every case is an enabled channel guard (no timeout, skip or barrier guard,
    /// no false precondition): the engine need not ask each for its kind.
    const ALL_CHANNELS: bool = false;
    /// The number of cases.
    fn len(&self) -> usize;
    /// Case `i`.
    fn case(&mut self, i: usize) -> &mut Self::Case;
    /// Case `i`, to look at.
    fn case_ref(&self, i: usize) -> &Self::Case;
}

impl<'c> CaseSet for [&mut (dyn Case + 'c)] {
    type Case = dyn Case + 'c;
    #[inline]
    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    #[inline]
    fn case(&mut self, i: usize) -> &mut (dyn Case + 'c) {
        &mut *self[i]
    }
    #[inline]
    fn case_ref(&self, i: usize) -> &(dyn Case + 'c) {
        &*self[i]
    }
}

/// How an alt over one case set deviates from the per-alt recipe. [`PerAlt`] is the
/// recipe itself; [`RecvAny`](super::RecvAny) keeps its own (see `any.rs`).
pub(crate) trait Plan {
    /// The entries of a finished wait may stay in the channels' queues. The
    /// waiter then lives in the plan, on the heap, and [`rearm`](Plan::rearm) makes
    /// it wait again for the next alt (every channel locked, so nobody can look at
    /// it meanwhile: stale entries are only ever read under their channel's lock);
    /// the engine first takes the old entries out under the same locks. Left by
    /// unwinding, a wait is aborted instead of unregistered: its entries stay, inert.
    const LINGER: bool;

    /// Whether to try each guard under its own lock before locking them all.
    #[inline]
    fn try_alone_first(&self, _n: usize) -> bool {
        true
    }

    /// The alt chose after trying `tries` guards in policy order (all of them if
    /// it waited).
    #[inline]
    fn tried(&mut self, _tries: usize) {}

    /// Whether to yield once, with every lock released, before registering on
    /// `n` guards (and then run the alt afresh).
    #[inline]
    fn yield_first(&mut self, _n: usize) -> bool {
        false
    }

    /// With [`LINGER`](Plan::LINGER): the waiter of this wait, made to wait again
    /// for the party running now, and whether entries of an earlier wait may still
    /// point to it. Called with every channel of the set locked.
    fn rearm(&mut self) -> (*const Waiter, bool) {
        unreachable!("hoare: only a lingering plan has a waiter of its own")
    }
}

/// The recipe as it is: everything an alt registers it takes back before it
/// returns, and its waiter lives on its stack.
pub(crate) struct PerAlt;

impl Plan for PerAlt {
    const LINGER: bool = false;
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
    run(cases, start, None, &mut PerAlt)
}

/// The engine: one alt over `cases` from `start`, with `plan`. `order` is the lock
/// order of the cases, `(channel address, index)` sorted, if the set keeps one
/// (then every case is a channel guard); `None`: it is computed for this alt.
#[inline]
pub(crate) fn run<S: CaseSet + ?Sized, P: Plan>(
    cases: &mut S,
    start: usize,
    order: Option<&[(usize, usize)]>,
    plan: &mut P,
) -> usize {
    crate::check_step!(|| step_op(&mut *cases));
    let n = cases.len();
    let start = if n == 0 { 0 } else { start % n };
    match fast(cases, start, plan) {
        Fast::Chosen(i) => i,
        Fast::Found(found) => slow(cases, start, order, found, plan),
    }
}

/// The checker's description of an alt: every enabled channel guard's channel
/// (conflicting with everything on it), the clock for a timeout guard, the one
/// alting-barrier object (all alting barriers share one lock) for a barrier guard.
#[cfg(feature = "check")]
fn step_op<S: CaseSet + ?Sized>(cases: &mut S) -> crate::step::Op {
    use crate::step::{Access, Class, Obj, Objs, Op, OpKind, CLOCK};
    let mut objs = Objs::new();
    for i in 0..cases.len() {
        let c = cases.case(i);
        match c.kind() {
            Kind::Chan => objs.push(Obj {
                addr: match c.guard() {
                    Some(crate::wait::Guard::Chan { chan, .. }) => chan.id as usize,
                    _ => c.addr(),
                },
                class: Class::Chan,
                access: Access::Other,
                info: None,
            }),
            Kind::Timeout => objs.push(CLOCK),
            Kind::Barrier => objs.push(Obj {
                addr: usize::MAX,
                class: Class::Barrier,
                access: Access::Other,
                info: None,
            }),
            Kind::Off | Kind::Skip => {}
        }
    }
    Op {
        kind: OpKind::Alt,
        objs,
    }
}

/// Phases 2 and 3, out of line: the fast path stays small enough to inline.
#[inline(never)]
fn slow<S: CaseSet + ?Sized, P: Plan>(
    cases: &mut S,
    start: usize,
    order: Option<&[(usize, usize)]>,
    mut found: Found,
    plan: &mut P,
) -> usize {
    loop {
        if let Some(i) = locked(cases, start, order, found, plan) {
            return i;
        }
        // The plan yielded before registering: the alt starts afresh.
        match fast(cases, start, plan) {
            Fast::Chosen(i) => return i,
            Fast::Found(f) => found = f,
        }
    }
}

/// What the fast path found, for the locked phase.
#[derive(Clone, Copy)]
struct Found {
    /// Enabled channel guards.
    nchan: usize,
    /// Some barrier guard is enabled.
    barrier: bool,
}

enum Fast {
    /// A guard was chosen (and completed).
    Chosen(usize),
    /// Nothing was ready: lock all.
    Found(Found),
}

/// Phase 1 (and the alts that never lock all: skip, an expired timeout, timeouts
/// only).
#[inline(always)]
fn fast<S: CaseSet + ?Sized, P: Plan>(cases: &mut S, start: usize, plan: &mut P) -> Fast {
    let n = cases.len();
    if S::ALL_CHANNELS {
        assert!(
            n > 0,
            "hoare: an alt with no enabled guard would wait for ever"
        );
        if plan.try_alone_first(n) {
            for j in 0..n {
                let i = wrap(start + j, n);
                if cases.case(i).try_alone() {
                    plan.tried(j + 1);
                    return Fast::Chosen(i);
                }
            }
        }
        return Fast::Found(Found {
            nchan: n,
            barrier: false,
        });
    }
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
                    return Fast::Chosen(i);
                }
                nchan += 1;
            }
            Kind::Barrier => {
                if c.try_alone() {
                    return Fast::Chosen(i);
                }
                nbar += 1;
            }
            Kind::Timeout => {
                if c.expired() {
                    // Expired before the alt began: a poll (see `skip`).
                    c.set_chosen();
                    crate::park::spend_budget();
                    return Fast::Chosen(i);
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
        return Fast::Chosen(i);
    }
    if nchan == 0 && nbar == 0 {
        assert!(
            ntime > 0,
            "hoare: an alt with no enabled guard would wait for ever"
        );
        let (i, d) = earliest(cases, start).expect("a timeout guard");
        crate::timer::sleep_until(d);
        cases.case(i).set_chosen();
        return Fast::Chosen(i);
    }
    Fast::Found(Found {
        nchan,
        barrier: nbar > 0,
    })
}

/// The timeout case with the earliest deadline (first in policy order on ties).
fn earliest<S: CaseSet + ?Sized>(cases: &mut S, start: usize) -> Option<(usize, Instant)> {
    if S::ALL_CHANNELS {
        return None;
    }
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

/// Whether case `i` takes part in the locked phase (a channel or barrier guard).
#[inline]
fn locks<S: CaseSet + ?Sized>(cases: &mut S, i: usize) -> bool {
    S::ALL_CHANNELS || matches!(cases.case(i).kind(), Kind::Chan | Kind::Barrier)
}

/// Phases 2 and 3, with the lock order computed here unless the set keeps one.
/// `None`: the plan yielded before registering.
fn locked<S: CaseSet + ?Sized, P: Plan>(
    cases: &mut S,
    start: usize,
    order: Option<&[(usize, usize)]>,
    found: Found,
    plan: &mut P,
) -> Option<usize> {
    if let Some(order) = order {
        debug_assert!(
            S::ALL_CHANNELS,
            "a kept lock order needs channel cases only"
        );
        return wait(cases, start, order, found.barrier, plan);
    }
    let n = cases.len();
    let nchan = found.nchan;
    let mut stack = [(0usize, 0usize); STACK_CASES];
    let mut heap = Vec::new();
    let order: &mut [(usize, usize)] = if nchan <= STACK_CASES {
        &mut stack[..nchan]
    } else {
        heap.resize(nchan, (0, 0));
        &mut heap
    };
    let mut k = 0;
    for i in 0..n {
        let c = cases.case(i);
        if S::ALL_CHANNELS || c.kind() == Kind::Chan {
            order[k] = (c.addr(), i);
            k += 1;
        }
    }
    debug_assert_eq!(k, order.len());
    order.sort_unstable();
    wait(cases, start, order, found.barrier, plan)
}

fn unlock_all<S: CaseSet + ?Sized>(cases: &mut S, order: &[(usize, usize)]) {
    for &(_, i) in order {
        cases.case(i).unlock();
    }
}

/// Phases 2 and 3 over the channel cases in lock `order`.
fn wait<S: CaseSet + ?Sized, P: Plan>(
    cases: &mut S,
    start: usize,
    order: &[(usize, usize)],
    barrier: bool,
    plan: &mut P,
) -> Option<usize> {
    let n = cases.len();
    // Ask the timers for their deadlines now, before any lock is taken.
    let timeout = earliest(cases, start);
    // Lock in address order, each channel once.
    let mut owner = usize::MAX;
    let mut prev = 0;
    for &(a, i) in order {
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
        if locks(cases, i) && cases.case(i).try_locked() {
            unlock_all(cases, order);
            cases.case(i).complete();
            plan.tried(j + 1);
            return Some(i);
        }
    }
    if n > 1 && plan.yield_first(n) {
        // On one worker the partners this alt released cannot run until it stops:
        // let them offer again before paying n registrations. A fresh attempt: the
        // choice is made at the later commit, so the policy holds.
        unlock_all(cases, order);
        crate::park::with_current(|p| p.yield_now());
        return None;
    }
    // Register one waiter on every guard, then let go.
    // The wait record reads the cases through this pointer while the party is
    // parked (nothing else touches them then).
    let set: *const S = &*cases;
    // SAFETY: `set` lives in this frame, the cases behind it too, for as long as
    // the waiter is parked in this wait.
    let on = unsafe { WaitOn::new(&set as *const *const S as *const (), describe_alt::<S>) };
    let local;
    let waiter: *const Waiter = if P::LINGER {
        let (w, lingering) = plan.rearm();
        // SAFETY: a re-armed waiter is open and nobody else reads its record.
        unsafe { (*w).set_on(on) };
        if lingering {
            // The entries of the last wait: out, under the locks we hold, before
            // any of them could be claimed through the re-armed waiter.
            for (k, &(a, i)) in order.iter().enumerate() {
                if k == 0 || order[k - 1].0 != a {
                    cases.case(i).unregister_locked(w);
                }
            }
        }
        w
    } else {
        // An alt with a barrier guard has a flagged waiter (see `super::barrier`).
        local = if barrier {
            Waiter::for_current_alting()
        } else {
            Waiter::for_current()
        }
        .on(on);
        &local
    };
    // SAFETY: the stack waiter lives in this frame; a lingering plan's waiter lives
    // on the heap until its set is dropped (which unregisters it, or leaks it).
    let waiter_ref = unsafe { &*waiter };
    let mut reg = Registration::new(
        AltSite::<S, P> {
            cases,
            order,
            waiter,
            barrier,
            plan: PhantomData,
        },
        waiter_ref,
    );
    let site = reg.site();
    for j in 0..n {
        let i = wrap(start + j, n);
        if locks(site.cases, i) {
            // SAFETY: the waiter and every case stay where they are until `reg` is
            // released (or dropped), which unregisters every guard (or, for a
            // lingering plan, aborts the wait and leaves the entries to the next
            // wait or the set's drop).
            unsafe { site.cases.case(i).register(waiter, i) };
        }
    }
    unlock_all(site.cases, site.order);
    let out = waiter_ref.wait(timeout.map(|(_, d)| d));
    let AltSite { cases, .. } = reg.release();
    plan.tried(n);
    Some(match out {
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
    })
}

/// The wait record of an alt: its enabled guards.
///
/// # Safety
/// `data` points to a `*const S` to the alt's live cases, and the alt is parked.
unsafe fn describe_alt<S: CaseSet + ?Sized>(data: *const ()) -> Wait {
    // SAFETY: the caller's contract.
    let set: &S = unsafe { &**(data as *const *const S) };
    Wait::Alt {
        guards: (0..set.len())
            .filter_map(|i| set.case_ref(i).guard())
            .collect(),
    }
}

/// An alt's registration: its waiter on every channel guard's queue (and, with
/// barrier guards, in their barriers' offers). Withdrawing it takes every entry
/// out, one channel lock at a time; for a lingering plan it aborts a wait still
/// open instead, which makes every entry inert at once (see [`Plan::LINGER`]).
struct AltSite<'a, S: CaseSet + ?Sized, P> {
    cases: &'a mut S,
    /// The channel cases, in lock order.
    order: &'a [(usize, usize)],
    waiter: *const Waiter,
    barrier: bool,
    plan: PhantomData<P>,
}

impl<S: CaseSet + ?Sized, P: Plan> Withdraw for AltSite<'_, S, P> {
    // The waiter is `self.waiter` (the site registers it on each case).
    fn withdraw(&mut self, _: Option<&Waiter>) -> bool {
        if P::LINGER {
            // SAFETY: the plan's waiter lives on the heap until its set is dropped.
            let w = unsafe { &*self.waiter };
            if w.is_waiting() {
                // Left by unwinding: nobody committed the wait. If somebody claims
                // it before the abort lands, `Registration` waits for its finish
                // (or, in a shutdown, keeps the stack; the set leaks the waiter).
                let _ = w.try_abort_quiet(CANCELLED);
            }
            return false;
        }
        for &(_, i) in self.order {
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
