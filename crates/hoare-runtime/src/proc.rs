//! A process: its header (at the top of its own stack slot), what it asks of its
//! worker when it suspends, and a task (the right to run it).
//!
//! The header's implementation of the park/unpark seam is in `worker/park.rs`:
//! parking and waking are where a process meets the scheduler.

use crate::context;
use crate::ctx;
use crate::stack::Pool;
use hoare_core::park::Party;
use hoare_core::sched::ProcState;
use hoare_core::waiter::Waiter;
use std::cell::Cell;
use std::panic::Location;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::time::Instant;

/// What a process asks of its worker when it suspends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Req {
    /// Requeue at the back of the run queue.
    Yield,
    /// Park until unparked.
    Park,
    /// Park until unparked or the deadline passes.
    ParkUntil(Instant),
    /// Park, then call the function with the data on the worker (see
    /// `Park::park_releasing`).
    ParkRelease(unsafe fn(*mut ()), *mut ()),
}

/// What a `switch` into a worker (or the shutdown sweep) carries: a `*const Req`
/// on the suspending process's stack, or this (the process returned).
pub(crate) const FINISHED: usize = 1;
/// What a `switch` into a process carries: nothing to do (0), this (the shutdown
/// sweep unwinds it), or a `*const Handoff` on the previous process's stack.
pub(crate) const UNWIND: usize = 2;
/// The tag of what a direct hand-off carries when the release is a lock's unlock
/// (`Park::park_unlocking`): the lock flag's (even) address with this bit set.
/// (`FINISHED`, which has it too, never goes into a process.)
pub(crate) const UNLOCK: usize = 1;

/// What the process a worker switched to directly must finish for the one it
/// came from, once that one's stack is left: the release of its park.
pub(crate) struct Handoff {
    pub(crate) release: unsafe fn(*mut ()),
    pub(crate) data: *mut (),
}

/// The payload of the shutdown sweep's forced unwinding.
pub(crate) struct ForcedUnwind;

/// Not pinned.
pub(crate) const PIN_NONE: u32 = u32::MAX;
/// Pinned to whichever worker first runs it.
pub(crate) const PIN_PENDING: u32 = u32::MAX - 1;

/// Polls a process may make without effect before it yields (see
/// `hoare_core::park`'s cooperative budget). Tokio's budget is 128 too. A poll
/// costs 30–100 ns, so a polling process lets its worker's queue and due timers
/// in every few microseconds, and pays one yield (about 30 ns on its own) per 128
/// polls.
pub(crate) const BUDGET: u32 = 128;

/// Where a parked process's timer sits: worker index and map key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimerKey {
    pub(crate) worker: usize,
    pub(crate) deadline: Instant,
    pub(crate) seq: u64,
}

/// A process's header. Lives at the top of its stack slot; owned by whoever holds
/// the right to run it (a run queue entry, a worker, or the unparker that took it
/// out of `PARKED`).
///
/// In a fixed order (`repr(C)`), by when the fields are used: a hand-off wakes a
/// process whose header is cold in the caches (a ring of a few hundred processes
/// visits each one once per round), and the wake (`state`, `shared`, `pin`) and
/// the resume (`sp`, `parent`) read the first cache line only; parking again reads the
/// second. The rest is for spawn, timers, reports and the shutdown sweep. Left to
/// the compiler, the wake alone read three lines.
#[repr(C)]
pub(crate) struct Proc {
    // First cache line: the wake and the resume.
    pub(crate) state: ProcState,
    /// The runtime it belongs to (a `Shared`, read through `Proc::shared`). Untyped
    /// here: the runtime's state is defined above this module, since its queues
    /// hold processes.
    pub(crate) shared: *const (),
    /// Its saved stack pointer while suspended (see `ctx`): also where a report
    /// starts looking for the ends a parked process holds (see `stack_mark`),
    /// since everything its switch saved lies above it.
    pub(crate) sp: Cell<usize>,
    /// While it runs: where whoever resumed it (its worker, or the sweep) saved
    /// itself; a process's suspend switches there.
    pub(crate) parent: Cell<usize>,
    /// While it runs on a worker: that worker's `WorkerLocal` (set by its
    /// `enter`; null under the shutdown sweep), read by a park instead of the
    /// worker thread-local. Untyped, as `shared`.
    pub(crate) worker: Cell<*const ()>,
    /// Worker index it is pinned to, or `PIN_NONE` / `PIN_PENDING`.
    pub(crate) pin: Cell<u32>,
    /// Set while the shutdown sweep unwinds this process: it is cancelled (see
    /// `Park::cancelled`), so none of its operations may suspend it. The sweep
    /// clears `worker` first: `park_releasing` looks here only when that is null.
    pub(crate) unwinding: Cell<bool>,
    /// Set by a timer that fired this process's `park_until`.
    pub(crate) timed_out: Cell<bool>,
    /// Whether the slot holds a process that has not finished (shutdown sweep).
    pub(crate) live: Cell<bool>,
    /// Polls left before a yield (see `BUDGET`); every yield refills it.
    pub(crate) budget: Cell<u32>,
    // Second cache line: running and parking.
    /// The waiter of the wait the process parked in last (null: a plain sleep).
    /// Valid while it is parked; read by the shutdown sweep (see
    /// `Waiter::is_held`).
    pub(crate) waiting: Cell<*const Waiter>,
    /// This process as the core's current party while it runs (see
    /// `set_running`): every blocking operation reads it.
    pub(crate) party: Party,
    pub(crate) id: u64,
    /// Where it was spawned (for reports).
    pub(crate) site: &'static Location<'static>,
    // Third: the rest.
    /// Depth in the spawn tree (a process spawned by a process is one deeper). The
    /// shutdown sweep unwinds deeper processes first, so a scoped child always goes
    /// before the ancestor whose stack it borrows from.
    pub(crate) depth: u32,
    pub(crate) pool: *const Pool,
    /// Start of the slot (its guard page), for the overflow handler.
    pub(crate) slot: usize,
    pub(crate) name: Option<Box<str>>,
    /// Heap memory its body owns until it returns (`start..end`; empty: none):
    /// a boxed `par` branch keeps the ends it captured there, not on its stack,
    /// so deadlock reports search it too for the ends the process holds.
    pub(crate) captures: (usize, usize),
    pub(crate) timer: Cell<Option<TimerKey>>,
}

// The wake and the resume read one cache line (headers are 64-byte aligned, see
// `stack::colour`): keep what they read in the first 64 bytes.
const _: () = assert!(std::mem::offset_of!(Proc, budget) < 64);
// A park reads the second line only.
const _: () = assert!(std::mem::offset_of!(Proc, waiting) >= 56);
const _: () = assert!(std::mem::offset_of!(Proc, site) + 8 <= 128);

/// Size of the process header reserved at the top of each stack slot: the
/// `Proc`, then its `ProcTag`.
pub(crate) const HEADER: usize = std::mem::size_of::<Proc>() + std::mem::size_of::<ProcTag>();

/// A process's id and spawn site again, right after its `Proc` in the slot, for
/// the one reader that may look at a header it does not own: shutdown naming the
/// process that keeps a worker, through `WorkerShared::running`, which may be
/// stale by then (the process may have finished and its slot been taken by
/// another). So this memory is only ever accessed atomically (spawn stores into
/// it; any bytes are a valid value), and a stale read names a wrong process, not
/// undefined behaviour. Kept out of the `Proc`, which is written whole.
#[repr(C)]
pub(crate) struct ProcTag {
    pub(crate) id: AtomicU64,
    pub(crate) site: AtomicPtr<Location<'static>>,
}

impl ProcTag {
    /// The tag of the process whose header is at `p` (no access).
    #[inline(always)]
    pub(crate) fn of(p: *const Proc) -> *const ProcTag {
        p.wrapping_add(1).cast()
    }
}

impl Proc {
    /// The name for diagnostics.
    pub(crate) fn name_str(&self) -> &str {
        self.name.as_deref().unwrap_or("<unnamed>")
    }

    #[inline(always)]
    pub(crate) fn suspend(&self, r: Req) {
        // SAFETY: we run on our own stack; `parent` is the context that resumed
        // us, suspended in its `switch`; `r` stays on our stack, which nobody
        // touches until the worker has read it.
        let arg = unsafe {
            ctx::switch(
                self.sp.as_ptr(),
                self.parent.get(),
                &r as *const Req as usize,
            )
        };
        // SAFETY: whoever switched to us passed a valid `arg`.
        unsafe { landed(arg) };
    }

    /// Requeues this (running) process behind the others of its worker (see
    /// `WorkerLocal::after_yield`). Through the worker, not handed straight to
    /// the next process as a park is: measured, the direct yield took fewer
    /// instructions (110 against 132) but more time (55 against 42 ns per
    /// yield, two processes yielding in turn; BENCHMARKS.md).
    #[inline]
    pub(crate) fn yield_now(&self) {
        self.budget.set(BUDGET);
        self.suspend(Req::Yield);
    }

    /// One poll without effect: yields once `BUDGET` of them came without a yield.
    #[inline]
    pub(crate) fn spend(&self) {
        if self.unwinding.get() {
            // Being unwound by the shutdown sweep: it must not switch away.
            return;
        }
        let b = self.budget.get();
        if b > 1 {
            self.budget.set(b - 1);
        } else {
            self.yield_now();
        }
    }
}

/// Completes what the context that switched to this process left to it (see
/// `UNWIND`, `Handoff`).
///
/// # Safety
/// `arg` is what that switch passed.
#[inline(always)]
pub(crate) unsafe fn landed(arg: usize) {
    if arg & UNLOCK != 0 {
        // SAFETY: the flag of a lock the previous process held, whose release
        // this is (see `Proc::park_then`).
        unsafe { hoare_core::park::unlock_raw((arg & !UNLOCK) as *mut ()) };
        return;
    }
    // Every `Handoff` address is above the small constants.
    if arg > UNWIND {
        // SAFETY: a handoff on the previous process's stack, which is suspended and
        // resumable by nobody until its release below.
        unsafe {
            let h = &*(arg as *const Handoff);
            (h.release)(h.data);
        }
    } else if arg == UNWIND {
        forced_unwind();
    }
}

/// Starts the shutdown sweep's forced unwinding of the running process.
#[cold]
#[inline(never)]
fn forced_unwind() -> ! {
    std::panic::resume_unwind(Box::new(ForcedUnwind));
}

/// The process running on this thread (null: none). Its header is valid while it
/// runs; do not keep the reference across a switch.
#[inline(always)]
pub(crate) fn current() -> *const Proc {
    context::current_proc().cast()
}

/// Whether the shutdown sweep is unwinding the process running on this thread.
pub(crate) fn current_is_unwinding() -> bool {
    let p = current();
    // SAFETY: the running process's header is valid while it runs.
    !p.is_null() && unsafe { (*p).unwinding.get() }
}

/// Global process id counter (ids are unique across runtimes).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Reserves `n` consecutive process ids and returns the first.
pub(crate) fn fresh_ids(n: u64) -> u64 {
    NEXT_ID.fetch_add(n, Ordering::Relaxed)
}

/// A run-queue entry: the right to run one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Task(NonNull<Proc>);

// SAFETY: a task is a unique right to run a process; whoever holds it may run it on
// any worker (processes migrate; pinned ones are only queued for their worker).
unsafe impl Send for Task {}

impl Task {
    /// # Safety
    /// `p` must be a live process header the caller has the right to run.
    pub(crate) unsafe fn from_ptr(p: *const Proc) -> Self {
        // SAFETY: caller's contract; headers are never null.
        Task(unsafe { NonNull::new_unchecked(p as *mut Proc) })
    }
    pub(crate) fn proc(&self) -> &Proc {
        // SAFETY: a task's holder owns the process, which is live until it finishes.
        unsafe { self.0.as_ref() }
    }
    /// The header, for the next slot (which holds tasks as pointers) and the
    /// worker that runs it.
    pub(crate) fn header(self) -> NonNull<Proc> {
        self.0
    }
}
