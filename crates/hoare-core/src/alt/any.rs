//! [`RecvAny`]: a replicated receive guard built once and selected on many times,
//! with an engine of its own.
//!
//! It follows the recipe of [`super::engine`] (try, lock all in address order,
//! try again, register one waiter everywhere, wait) with three savings that only a
//! case set that outlives its alts can make:
//!
//! * **The lock order is computed once** (the distinct channels sorted by address),
//!   not sorted again at every alt.
//! * **No unregister pass.** The waiter and the packets live on the heap, in the
//!   set, so the entries of a finished wait may stay in the channels' queues: they
//!   point to a waiter that is no longer waiting, which every party that meets one
//!   treats as stale (a claimer drops it, poison skips it). The next wait removes
//!   them under the locks it takes anyway, then re-arms the waiter and registers
//!   afresh, all before it releases any lock, so a stale entry can never be
//!   claimed: nobody can look at the waiter (only ever under a channel's lock)
//!   while it goes back to waiting. [`Drop`] removes what is left.
//! * **The one-lock-at-a-time pass is skipped when it would not pay**: when the
//!   previous alt had to look at more than half of the guards (or had to wait),
//!   the alt locks every channel at once and tries under the locks, instead of
//!   paying every lock twice. Both passes choose the first ready guard in policy
//!   order, so the semantics do not depend on which one runs.

use super::case::{Case, RecvCase};
use super::Fair;
use crate::chan::select::{complete_recv, SelectLock, Selected};
use crate::chan::{Entry, RawChan, Receiver, RecvError, Sharing};
use crate::registration::{Registration, Withdraw};
use crate::waiter::{Outcome, Waiter, CANCELLED};
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
    /// The distinct channels of the cases, in increasing address order (the order
    /// an alt locks them in).
    chans: Vec<&'a RawChan<T>>,
    /// For each case, the index of its channel in `chans`.
    lock_of: Vec<usize>,
    /// The locks of `chans` while an alt holds them all; empty otherwise (kept for
    /// its allocation).
    locks: Vec<SelectLock<'a, T>>,
    /// The waiter of this set's waits (from `Box::into_raw`; null until the first
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
    /// This alt has yielded once already (see `locked`).
    yielded: bool,
}

impl<T> fmt::Debug for RecvAny<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvAny")
            .field("ends", &self.cases.len())
            .finish()
    }
}

#[inline]
fn wrap(i: usize, n: usize) -> usize {
    if i >= n {
        i - n
    } else {
        i
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
        let mut by_addr: Vec<(usize, usize)> = cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.raw().addr(), i))
            .collect();
        by_addr.sort_unstable();
        let mut chans: Vec<&'a RawChan<T>> = Vec::new();
        let mut lock_of = vec![0; cases.len()];
        for &(a, i) in &by_addr {
            if chans.last().map(|c| c.addr()) != Some(a) {
                chans.push(cases[i].raw());
            }
            lock_of[i] = chans.len() - 1;
        }
        Self {
            cases,
            chans,
            lock_of,
            locks: Vec::new(),
            waiter: ptr::null_mut(),
            lingering: false,
            armed: false,
            last_tries: 0,
            yielded: false,
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
    pub fn select(&mut self) -> (usize, Result<T, RecvError>) {
        let i = self.run(0);
        (i, self.cases[i].take_result())
    }

    /// Selects with the **fair** policy.
    ///
    /// # Panics
    /// If there are no ends.
    pub fn select_fair(&mut self, fair: &mut Fair) -> (usize, Result<T, RecvError>) {
        let i = self.run(fair.next_start());
        fair.chosen(i);
        (i, self.cases[i].take_result())
    }

    /// One alt, trying the guards in order from `start`; returns the chosen case,
    /// whose result is set.
    fn run(&mut self, start: usize) -> usize {
        let n = self.cases.len();
        assert!(
            n > 0,
            "hoare: an alt with no enabled guard would wait for ever"
        );
        let start = start % n;
        if self.last_tries * 2 < n {
            // Each channel under its own lock alone: the alt is not registered
            // anywhere (its stale entries are inert), so a claim is a decision.
            for j in 0..n {
                let i = wrap(start + j, n);
                if self.cases[i].try_alone() {
                    self.last_tries = j + 1;
                    return i;
                }
            }
        }
        self.locked(start)
    }

    /// Locks every channel, tries again, and if nothing is ready registers and
    /// waits.
    fn locked(&mut self, start: usize) -> usize {
        let n = self.cases.len();
        debug_assert!(self.locks.is_empty());
        for &c in &self.chans {
            self.locks.push(c.lock());
        }
        for j in 0..n {
            let i = wrap(start + j, n);
            let packet = self.cases[i].packet_mut();
            let poisoned = match self.locks[self.lock_of[i]].try_recv(false, packet) {
                Selected::Ready(d) => {
                    self.locks.clear();
                    // SAFETY: decided with this packet under the locks just released.
                    unsafe { complete_recv(d, packet) };
                    false
                }
                Selected::Poisoned => {
                    self.locks.clear();
                    true
                }
                Selected::NotReady => continue,
            };
            self.cases[i].passive(poisoned);
            self.last_tries = j + 1;
            return i;
        }
        if !self.yielded && n > 1 {
            // On one worker the writers this alt released cannot run until it
            // stops: let them offer again before paying n registrations (without
            // this, an alt over 2^20 channels re-registers on all of them every
            // other time: 84 ms per alt). A fresh attempt: the choice is made at
            // the later commit, so the policy holds.
            self.locks.clear();
            self.yielded = true;
            crate::park::with_current(|p| p.yield_now());
            let r = self.run(start);
            self.yielded = false;
            return r;
        }
        // Nothing ready: every channel is locked, so nobody can look at the waiter
        // (stale entries are only ever read under their channel's lock).
        let fresh = Waiter::for_current();
        let w = if self.waiter.is_null() {
            self.waiter = Box::into_raw(Box::new(fresh));
            self.waiter
        } else {
            // SAFETY: `waiter` came from `Box::into_raw` and is ours; the last wait
            // is over (its committer's `finish` stored before it unparked us, and
            // touches nothing afterwards), and every entry that points to it sits
            // in a queue whose lock we hold.
            let _old = unsafe { ptr::replace(self.waiter, fresh) };
            self.waiter
        };
        if self.lingering {
            for l in self.locks.iter_mut() {
                l.unregister(w);
            }
        }
        for i in 0..n {
            let entry = Entry::new(w, i, self.cases[i].packet_ptr());
            // SAFETY: the waiter and the packets are on the heap, owned by this set,
            // and stay put until `Drop` has unregistered everywhere (or are leaked);
            // the packets are empty (a chosen case's value was taken out).
            unsafe { self.locks[self.lock_of[i]].register_recv(entry) };
        }
        self.armed = true;
        self.lingering = true;
        self.locks.clear();
        // SAFETY: see above; nobody frees the waiter while we wait (`Drop` leaks
        // it while `armed`).
        let waiter = unsafe { &*w };
        let reg = Registration::new(AnySite(waiter), waiter);
        let out = waiter.wait(None);
        drop(reg);
        self.armed = false;
        self.last_tries = n;
        match out {
            Outcome::Done { token, poisoned } => {
                self.cases[token].passive(poisoned);
                token
            }
            // Cancelled: nothing was ready; the first guard in policy order
            // reports its channel as poisoned (see `super::engine`).
            Outcome::Aborted { .. } => {
                let i = wrap(start, n);
                self.cases[i].passive(true);
                i
            }
        }
    }
}

/// A [`RecvAny`] wait's registration: the set's waiter in every channel's queue.
/// The waiter lives on the heap, so its entries may stay behind as long as it is
/// not waiting (every party that meets them drops them as stale); withdrawing the
/// registration just aborts the wait if it is still open, which makes them all
/// inert at once, and leaves taking them out to the next wait or to `Drop`.
struct AnySite<'a>(&'a Waiter);

impl Withdraw for AnySite<'_> {
    #[inline]
    fn withdraw(&mut self) -> bool {
        if self.0.is_waiting() {
            // Left by unwinding: nobody committed the wait. If somebody claims it
            // before the abort lands, `Registration` waits for its finish (or, in
            // a shutdown, keeps the stack; the heap waiter is leaked by `Drop`).
            let _ = self.0.try_abort_quiet(CANCELLED);
        }
        false
    }
}

impl<T> Drop for RecvAny<'_, T> {
    fn drop(&mut self) {
        // A panic while the locks were held leaves them here: release them first.
        self.locks.clear();
        if self.waiter.is_null() {
            return;
        }
        if self.lingering {
            for c in &self.chans {
                c.lock().unregister(self.waiter);
            }
        }
        if self.armed {
            // The wait was left by unwinding: a party may have claimed the waiter
            // and still be about to write to a packet and finish it. Leak both.
            std::mem::forget(std::mem::take(&mut self.cases));
            return;
        }
        // SAFETY: from `Box::into_raw`; no entry points to it any more and the last
        // wait is over.
        drop(unsafe { Box::from_raw(self.waiter) });
    }
}
