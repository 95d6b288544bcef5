//! [`RecvAny`]: a replicated receive guard built once and selected on many times:
//! the one alt engine ([`super::engine`]) with a [`Plan`] of its own.
//!
//! Its savings, which only a case set that outlives its alts can make:
//!
//! * **The lock order is computed once** (the cases sorted by channel address), not
//!   sorted again at every alt.
//! * **No unregister pass** ([`Plan::LINGER`]). The waiter and the packets live on
//!   the heap, in the set, so the entries of a finished wait may stay in the
//!   channels' queues: they point to a waiter that is no longer waiting, which
//!   every party that meets one treats as stale (a claimer drops it, poison skips
//!   it). The next wait removes them under the locks it takes anyway, then re-arms
//!   the waiter and registers afresh, all before it releases any lock, so a stale
//!   entry can never be claimed: nobody can look at the waiter (only ever under a
//!   channel's lock) while it goes back to waiting. [`Drop`] removes what is left.
//! * **The one-lock-at-a-time pass is skipped when it would not pay**: when the
//!   previous alt had to look at more than half of the guards (or had to wait),
//!   the alt locks every channel at once and tries under the locks, instead of
//!   paying every lock twice. Both passes choose the first ready guard in policy
//!   order, so the semantics do not depend on which one runs.
//! * **One yield before registering** on more than one channel: on one worker the
//!   writers this alt released cannot run until it stops; yielding lets them offer
//!   again before it pays `n` registrations (without it, an alt over 2^20 channels
//!   re-registers on all of them every other time: 84 ms per alt).

use super::case::{Case, RecvCase};
use super::engine::{self, Plan};
use super::Fair;
use crate::chan::{Receiver, RecvError, Sharing};
use crate::waiter::Waiter;
use std::fmt;
use std::ptr;

/// A replicated receive guard over a fixed set of ends, built once and selected
/// on again and again without allocating (for large sets: one reader over
/// thousands of channels).
///
/// Between selections the set may stay registered (inertly) in its channels; it
/// takes those entries out when it is dropped.
///
/// ```
/// use hoare_core::alt::{Fair, RecvAny};
/// use hoare_core::chan::Channel;
///
/// let (txs, rxs): (Vec<_>, Vec<_>) =
///     (0..100).map(|_| Channel::builder().bounded(1).one2one::<usize>()).unzip();
/// for (i, tx) in txs.iter().enumerate() {
///     tx.send(i).unwrap();
/// }
/// let mut set = RecvAny::new(&rxs);
/// let mut fair = Fair::new();
/// for _ in 0..100 {
///     let (i, v) = set.select_fair(&mut fair);
///     assert_eq!(v, Ok(i));
/// }
/// ```
pub struct RecvAny<'a, T> {
    cases: Vec<RecvCase<'a, T>>,
    /// The cases in lock order: `(channel address, index)`, sorted once.
    order: Vec<(usize, usize)>,
    plan: Kept,
}

/// [`RecvAny`]'s [`Plan`]: what it keeps from one alt to the next.
struct Kept {
    /// The waiter of the set's waits (from `Box::into_raw`; null until the first
    /// wait). Entries of finished waits may still point to it.
    waiter: *mut Waiter,
    /// Entries of an earlier wait may still be in the channels' queues.
    lingering: bool,
    /// Registered and not yet back from the wait (still set only if the wait was
    /// left by unwinding).
    armed: bool,
    /// How many guards the previous alt tried before it chose one (`len` if it
    /// waited).
    last_tries: usize,
    /// This alt has yielded once already.
    yielded: bool,
}

impl Plan for Kept {
    const LINGER: bool = true;

    #[inline]
    fn try_alone_first(&self, n: usize) -> bool {
        self.last_tries * 2 < n
    }

    #[inline]
    fn tried(&mut self, tries: usize) {
        self.last_tries = tries;
        self.yielded = false;
        self.armed = false;
    }

    fn yield_first(&mut self, _n: usize) -> bool {
        !std::mem::replace(&mut self.yielded, true)
    }

    fn rearm(&mut self) -> (*const Waiter, bool) {
        let fresh = Waiter::for_current();
        if self.waiter.is_null() {
            self.waiter = Box::into_raw(Box::new(fresh));
        } else {
            // SAFETY: `waiter` came from `Box::into_raw` and is ours; the last wait
            // is over (its committer's `finish` stored before it unparked us, and
            // touches nothing afterwards), and every entry that points to it sits
            // in a queue whose lock the engine holds.
            let _old = unsafe { ptr::replace(self.waiter, fresh) };
        }
        let lingering = std::mem::replace(&mut self.lingering, true);
        self.armed = true;
        (self.waiter, lingering)
    }
}

impl<T> fmt::Debug for RecvAny<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvAny")
            .field("ends", &self.cases.len())
            .finish()
    }
}

impl<'a, T> RecvAny<'a, T> {
    /// A receive guard per end of `rxs`.
    pub fn new<S: Sharing>(rxs: &'a [Receiver<T, S>]) -> Self {
        Self::from_ends(rxs)
    }

    /// A receive guard per end the iterator yields.
    pub fn from_ends<S: Sharing + 'a>(rxs: impl IntoIterator<Item = &'a Receiver<T, S>>) -> Self {
        let cases: Vec<RecvCase<'a, T>> = rxs
            .into_iter()
            .map(|rx| RecvCase::new(Some(rx.raw())))
            .collect();
        let mut order: Vec<(usize, usize)> = cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.addr(), i))
            .collect();
        order.sort_unstable();
        Self {
            cases,
            order,
            plan: Kept {
                waiter: ptr::null_mut(),
                lingering: false,
                armed: false,
                last_tries: 0,
                yielded: false,
            },
        }
    }

    /// The number of ends.
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// Whether there are no ends.
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// Selects with the **pri** policy: the index of the chosen end and what it
    /// received (or its poison).
    ///
    /// # Panics
    /// If there are no ends.
    #[inline]
    pub fn select(&mut self) -> (usize, Result<T, RecvError>) {
        let i = self.run(0);
        (i, self.cases[i].take_result())
    }

    /// Selects with the **fair** policy.
    ///
    /// # Panics
    /// If there are no ends.
    #[inline]
    pub fn select_fair(&mut self, fair: &mut Fair) -> (usize, Result<T, RecvError>) {
        let i = self.run(fair.next_start());
        fair.chosen(i);
        (i, self.cases[i].take_result())
    }

    /// One alt, trying the guards in order from `start`; returns the chosen case,
    /// whose result is set. Out of line, with the engine's fast path inlined into
    /// it: `select` and `select_fair` stay small enough to inline into the caller's
    /// loop (measured on StressedAlt).
    #[inline(never)]
    fn run(&mut self, start: usize) -> usize {
        engine::run(
            &mut self.cases[..],
            start,
            Some(&self.order),
            &mut self.plan,
        )
    }
}

impl<T> Drop for RecvAny<'_, T> {
    fn drop(&mut self) {
        // A panic while the locks were held leaves them in the cases: release them
        // first.
        for c in &mut self.cases {
            c.unlock();
        }
        let w = self.plan.waiter;
        if w.is_null() {
            return;
        }
        if self.plan.lingering {
            for (k, &(a, i)) in self.order.iter().enumerate() {
                if k == 0 || self.order[k - 1].0 != a {
                    self.cases[i].unregister(w);
                }
            }
        }
        if self.plan.armed {
            // The wait was left by unwinding: a party may have claimed the waiter
            // and still be about to write to a packet and finish it. Leak both.
            std::mem::forget(std::mem::take(&mut self.cases));
            return;
        }
        // SAFETY: from `Box::into_raw`; no entry points to it any more and the last
        // wait is over.
        drop(unsafe { Box::from_raw(w) });
    }
}
