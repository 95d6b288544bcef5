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

use crate::sync::{AtomicU64, Ordering};

const KIND: u64 = 0b11;
const RUNNING: u64 = 0;
const NOTIFIED: u64 = 1;
const PARKED: u64 = 2;
const GEN_SHIFT: u32 = 2;

/// The park/notify state of one process: `RUNNING`, `NOTIFIED` (an unpark is
/// pending) or `PARKED`, tagged with a park generation.
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

    /// Resets a recycled state word to running, generation 0.
    ///
    /// Only for a state word nobody else can reach.
    pub fn reset(&self) {
        self.0.store(RUNNING, Ordering::Relaxed);
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
        let s = self.0.load(Ordering::Relaxed);
        if s & KIND == RUNNING {
            let gen = (s >> GEN_SHIFT) + 1;
            match self.0.compare_exchange(
                s,
                (gen << GEN_SHIFT) | PARKED,
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
    #[inline]
    pub fn unpark(&self) -> bool {
        let mut s = self.0.load(Ordering::Relaxed);
        loop {
            let (new, owned) = match s & KIND {
                RUNNING => (s | NOTIFIED, false),
                PARKED => (s & !KIND, true),
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

    /// Whether the process is parked (diagnostics only).
    pub fn is_parked(&self) -> bool {
        self.0.load(Ordering::Relaxed) & KIND == PARKED
    }
}
