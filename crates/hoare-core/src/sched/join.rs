//! A process's result and the one party that waits for it.
//!
//! ```text
//!  EMPTY ──join: CAS(EMPTY→&waiter)──► WAITER ──complete: swap(DONE)──► DONE + try_wake
//!    └───────────────complete: swap(DONE)──────────────────────────────► DONE
//! ```
//! The value is written before the `DONE` swap (release) and read after seeing `DONE`
//! (acquire). The joiner's waiter lives on its stack; the completer wakes it through
//! [`Waiter::try_wake`], which stops touching it once the wait is committed.

use crate::park;
use crate::registration::{Registration, Withdraw};
use crate::sync::{AtomicPtr, Ordering, UnsafeCell};
use crate::wait::{Wait, WaitOn};
use crate::waiter::{Outcome, Waiter};
use std::ptr;

/// Never the address of a real waiter (it lies in the unmapped first page).
const DONE: *mut Waiter = std::ptr::dangling_mut::<Waiter>();

/// Holds a result until its one joiner takes it.
#[derive(Debug)]
pub struct JoinSlot<T> {
    state: AtomicPtr<Waiter>,
    value: UnsafeCell<Option<T>>,
}

// SAFETY: the value is written once by the completer before the release swap to DONE
// and read only by the joiner after an acquire load of DONE: never concurrently.
unsafe impl<T: Send> Send for JoinSlot<T> {}
// SAFETY: see `Send`.
unsafe impl<T: Send> Sync for JoinSlot<T> {}

impl<T> Default for JoinSlot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> JoinSlot<T> {
    /// An empty slot.
    pub fn new() -> Self {
        Self {
            state: AtomicPtr::new(ptr::null_mut()),
            value: UnsafeCell::new(None),
        }
    }

    /// Whether [`complete`](Self::complete) has run.
    pub fn is_complete(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    /// Stores the result and wakes the joiner, if one waits. Call at most once.
    pub fn complete(&self, value: T) {
        // SAFETY: only the completer writes, once, before publishing DONE; the joiner
        // reads only after seeing DONE.
        self.value.with_mut(|p| unsafe { *p = Some(value) });
        // A compare-exchange loop rather than `swap` (loom 0.7 may let a swap read a
        // stale value, tokio-rs/loom#254).
        let mut prev = self.state.load(Ordering::Acquire);
        loop {
            match self
                .state
                .compare_exchange_weak(prev, DONE, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => prev = now,
            }
        }
        if !prev.is_null() {
            debug_assert_ne!(prev, DONE, "JoinSlot completed twice");
            // SAFETY: the joiner published `prev` and stays in its wait until woken
            // (its unwind guard waits for this commit too).
            unsafe { Waiter::try_wake(prev, 0, false) };
        }
    }

    /// Blocks the current party (process or thread) until the slot is complete and
    /// takes the value. Call at most once.
    ///
    /// # Panics
    /// If the party is [cancelled](crate::park::Park::cancelled) before the slot
    /// completes; use [`join_or_cancel`](Self::join_or_cancel) where that can
    /// happen.
    pub fn join(&self) -> T {
        self.join_or_cancel()
            .expect("hoare: a join was cancelled by the runtime's shutdown")
    }

    /// Like [`join`](Self::join), but a [cancelled](crate::park::Park::cancelled)
    /// party does not block: it gets `None` unless the slot is already complete.
    pub fn join_or_cancel(&self) -> Option<T> {
        self.join_or_cancel_for(0)
    }

    /// [`join_or_cancel`](Self::join_or_cancel), for the end of process `target`
    /// (its id, which reports name as what the party waits for; 0: unknown).
    pub fn join_or_cancel_for(&self, target: u64) -> Option<T> {
        crate::check_step!(|| crate::step::Op::one(
            crate::step::OpKind::Join,
            // The process joined (its id) where known: join slots are freed
            // and their addresses reused.
            if target != 0 {
                target as usize
            } else {
                self as *const Self as usize
            },
            crate::step::Class::Join,
            crate::step::Access::Other
        ));
        /// The wait record of a joiner.
        unsafe fn describe(target: *const ()) -> Wait {
            // SAFETY: `WaitOn::new`'s contract: `target` lives in the joiner's frame.
            let target = unsafe { *(target as *const u64) };
            Wait::Join { target }
        }
        if self.state.load(Ordering::Acquire) != DONE {
            let cancelled = park::with_current(|p| {
                if p.cancelled() {
                    return true;
                }
                // SAFETY: `target` lives in this frame while the party waits.
                let on = unsafe { WaitOn::new(&target as *const u64 as *const (), describe) };
                let waiter = Waiter::new(p.unparker()).on(on);
                let me = &waiter as *const Waiter as *mut Waiter;
                if self
                    .state
                    .compare_exchange(ptr::null_mut(), me, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    let _reg = Registration::new(JoinSite { slot: &self.state }, &waiter);
                    let out = waiter.wait_committed(p);
                    debug_assert!(matches!(out, Outcome::Done { .. }));
                }
                false
            });
            if cancelled && self.state.load(Ordering::Acquire) != DONE {
                return None;
            }
        }
        Some(self.take())
    }

    fn take(&self) -> T {
        // SAFETY: DONE was observed with acquire; the completer no longer writes.
        self.value
            .with_mut(|p| unsafe { (*p).take() })
            .expect("JoinSlot value taken twice")
    }
}

/// A joiner's registration: its waiter's address in the slot. Withdrawing it puts
/// the slot back to empty, unless the completer has swapped the address out
/// already; then the completer still holds it until its wake-up lands.
struct JoinSite<'a> {
    slot: &'a AtomicPtr<Waiter>,
}

impl Withdraw for JoinSite<'_> {
    #[inline]
    fn withdraw(&mut self, waiter: Option<&Waiter>) -> bool {
        let w = waiter.expect("a join's registration has a waiter");
        if w.is_done() {
            return false;
        }
        // Still waiting (the wait is being unwound): withdraw the address, unless
        // the completer has taken it; then it holds it until its wake-up lands.
        let me = w as *const Waiter as *mut Waiter;
        self.slot
            .compare_exchange(me, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire)
            .is_err()
            && w.is_waiting()
    }
}
