//! The park/notify word of one process.
//!
//! ```text
//!            unpark                      try_park (worker, after the switch)
//!  NOTIFIED ◄──────── RUNNING(g) ─────────────────────────► PARKED(g+1)
//!     │  take_token /       ▲                                  │
//!     │  try_park fails     └──────────────────────────────────┘
//!     └──────► RUNNING(g)        unpark or fire(g+1): the caller now owns the
//!                                process and must make it runnable
//! ```
//!
//! The generation `g` counts parks, so a timer armed for one park can never wake a
//! later one.
//!
//! A park without a timer may use [`try_park_sole`](ProcState::try_park_sole), which
//! parks as `PARKED_SOLE(g+1)`: then the one unpark of that park is the only party
//! that can end it (no timer can fire it, the process does not run, and the park
//! contract allows one unpark per park), so [`unpark`](ProcState::unpark) takes it
//! out with an acquire load and a plain store instead of a compare-and-swap.

use crate::sync::{AtomicU64, Ordering};

const KIND: u64 = 0b11;
const RUNNING: u64 = 0;
const NOTIFIED: u64 = 1;
const PARKED: u64 = 2;
/// Parked with no timer: only its one unparker can end the park.
const PARKED_SOLE: u64 = 3;
const GEN_SHIFT: u32 = 2;

/// The park/notify state of one process: `RUNNING`, `NOTIFIED` (an unpark is
/// pending), `PARKED` or `PARKED_SOLE`, tagged with a park generation.
#[derive(Debug)]
pub struct ProcState(AtomicU64);

impl Default for ProcState {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcState {
    /// A running process with no pending unpark.
    pub fn new() -> Self {
        Self(AtomicU64::new(RUNNING))
    }

    /// Called by the running process: consumes a pending unpark, if any.
    #[inline]
    pub fn take_token(&self) -> bool {
        let s = self.0.load(Ordering::Acquire);
        s & KIND == NOTIFIED
            && self
                .0
                .compare_exchange(s, s & !KIND, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// The generation the next successful [`try_park`](Self::try_park) will carry
    /// (to tag a timer armed before parking).
    #[inline]
    pub fn next_gen(&self) -> u64 {
        (self.0.load(Ordering::Relaxed) >> GEN_SHIFT) + 1
    }

    /// Called by the worker after the process suspended to park. `Some(gen)`: the
    /// process is parked and belongs to whoever unparks it or fires its timer;
    /// `None`: an unpark was already pending, it is consumed and the process stays
    /// the worker's to run again.
    #[inline]
    pub fn try_park(&self) -> Option<u64> {
        self.park_as(PARKED)
    }

    /// Like [`try_park`](Self::try_park), for a park that no timer can end: the
    /// process is parked as `PARKED_SOLE`, which its one unpark ends without a
    /// read-modify-write. Returns whether the process is parked (on `false` the
    /// pending unpark is consumed and the process stays the worker's to run).
    ///
    /// The caller must not arm a timer (or anything else that calls
    /// [`fire`](Self::fire) or [`unpark`](Self::unpark)) for this park: at most one
    /// unpark may arrive per park, which is the contract of
    /// [`crate::park::Park`] and [`crate::waiter`].
    #[inline]
    pub fn try_park_sole(&self) -> bool {
        self.park_as(PARKED_SOLE).is_some()
    }

    /// Parks as `PARKED_SOLE` with plain stores, for a park that no unpark can race
    /// with (see [`crate::park::Park::park_releasing`]: every unparker must first
    /// take a lock the parking party holds until after this call, whose release
    /// publishes the store). Returns whether the process is parked; `false` means an
    /// unpark was pending after all, which is consumed, and the process stays the
    /// worker's to run.
    ///
    /// The caller must guarantee that nothing calls [`unpark`](Self::unpark) or
    /// [`fire`](Self::fire) on this word until the store is published (a racing
    /// unpark would be lost).
    #[inline]
    pub fn park_sole_uncontended(&self) -> bool {
        let s = self.0.load(Ordering::Acquire);
        if s & KIND == RUNNING {
            let gen = (s >> GEN_SHIFT) + 1;
            self.0
                .store((gen << GEN_SHIFT) | PARKED_SOLE, Ordering::Relaxed);
            return true;
        }
        debug_assert_eq!(s & KIND, NOTIFIED);
        self.0.store(s & !KIND, Ordering::Relaxed);
        false
    }

    #[inline]
    fn park_as(&self, parked: u64) -> Option<u64> {
        let s = self.0.load(Ordering::Relaxed);
        if s & KIND == RUNNING {
            let gen = (s >> GEN_SHIFT) + 1;
            match self.0.compare_exchange(
                s,
                (gen << GEN_SHIFT) | parked,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(gen),
                Err(now) => debug_assert_eq!(now & KIND, NOTIFIED),
            }
        }
        // NOTIFIED: only the process side leaves this state.
        let s = self.0.load(Ordering::Acquire);
        debug_assert_eq!(s & KIND, NOTIFIED);
        self.0.store(s & !KIND, Ordering::Relaxed);
        None
    }

    /// Wakes the process. Returns `true` when it was parked: the caller now owns it
    /// and must make it runnable. On `false` the process will see the unpark itself,
    /// and the caller must not touch the process again (it may already be gone).
    ///
    /// At most one unpark may be made per park (the park/unpark contract): a
    /// process parked with [`try_park_sole`](Self::try_park_sole) is taken over by
    /// a plain store, which two racing unparks would both win.
    #[inline]
    pub fn unpark(&self) -> bool {
        // Acquire: the new owner must see everything the parking worker did before
        // its `try_park_sole` (the process's stack, its header).
        let mut s = self.0.load(Ordering::Acquire);
        if s & KIND == PARKED_SOLE {
            // Nobody else writes this word while the process is parked as
            // PARKED_SOLE: no timer, the process is not running, and we are its
            // one unpark.
            self.0.store(s & !KIND, Ordering::Relaxed);
            return true;
        }
        loop {
            let (new, owned) = match s & KIND {
                RUNNING => (s | NOTIFIED, false),
                PARKED | PARKED_SOLE => (s & !KIND, true),
                _ => return false,
            };
            match self
                .0
                .compare_exchange_weak(s, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return owned,
                Err(now) => s = now,
            }
        }
    }

    /// A timer armed for park `gen` fires. Returns `true` when the process was still
    /// parked in that park: the caller owns it and must make it runnable.
    #[inline]
    pub fn fire(&self, gen: u64) -> bool {
        let parked = (gen << GEN_SHIFT) | PARKED;
        self.0
            .compare_exchange(
                parked,
                gen << GEN_SHIFT,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Takes a parked process over as if unparking it, but leaves a running one
    /// alone (unlike [`unpark`](Self::unpark), which would leave a token): for a
    /// shutdown sweep that runs every process that has not finished, parked or
    /// queued. Returns whether it was parked. An unpark that races with this (a
    /// plain thread committing a wait of the process) may also believe it owns the
    /// process; the sweep's caller must make sure nothing runs a process it queues.
    pub fn take_parked(&self) -> bool {
        let mut s = self.0.load(Ordering::Acquire);
        loop {
            if s & KIND != PARKED && s & KIND != PARKED_SOLE {
                return false;
            }
            match self
                .0
                .compare_exchange_weak(s, s & !KIND, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// Whether the process is parked (diagnostics only).
    pub fn is_parked(&self) -> bool {
        let k = self.0.load(Ordering::Relaxed) & KIND;
        k == PARKED || k == PARKED_SOLE
    }
}
