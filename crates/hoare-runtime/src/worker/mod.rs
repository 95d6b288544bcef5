//! A worker: the state a worker thread keeps for itself (`WorkerLocal`) and its
//! caches of stacks and ids. Its behaviour is in the submodules, each using only
//! the ones listed before it:
//!
//! | module | what it holds |
//! |---|---|
//! | `queue` | where runnable processes wait on a worker: the next slot, the queue, the pinned queue, the yielded list |
//! | `steal` | work from elsewhere: due timers, the global queue, other workers |
//! | `park` | a process's side of the park/unpark seam, and where a woken process goes |
//! | `run` | dispatch: which process runs next, running it until it suspends |
//! | `main_loop` | the worker thread: its loop, searching for work and sleeping |
//!
//! Scheduling policy: DEVELOPERS.md, "Scheduler policy".

pub(crate) mod main_loop;
pub mod park;
mod queue;
mod run;
mod steal;

use crate::context;
use crate::proc::{self, Proc, Task};
use crate::shared::{Shared, WorkerShared};
use crossbeam_deque::Worker;
use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::ptr;
use std::time::Duration;

/// Slots a worker keeps in its local stack cache.
const LOCAL_SLOTS: usize = 256;
/// Process ids a worker reserves at a time.
const ID_BLOCK: u64 = 1024;

/// A progress counter of another worker as first seen at its value, and when.
type Sighting = Option<(u32, std::time::Instant)>;

/// The thread-local state of one worker thread.
pub(crate) struct WorkerLocal {
    pub(crate) index: usize,
    pub(crate) shared: *const Shared,
    /// `&shared.workers[index]`, kept so the hand-off path indexes nothing.
    me: *const WorkerShared,
    queue: Worker<Task>,
    /// The queue of a lone worker (`solo`), instead of `queue`: nobody steals
    /// there, so a private list does, without the atomic read-modify-write of
    /// every pop from a FIFO `crossbeam_deque::Worker`.
    solo_queue: UnsafeCell<VecDeque<Task>>,
    /// Processes that yielded while every other worker was busy: kept private (no
    /// atomic operation per yield), run after the queue is empty, when a streak
    /// ends (see `MAX_STREAK_SOLO`), or, at the latest, moved behind the queue
    /// by the next periodic look (see `GLOBAL_CHECK`).
    yielded: UnsafeCell<VecDeque<Task>>,
    /// Free stack slots of the default pool (see `take_slot`).
    free: UnsafeCell<Vec<usize>>,
    /// Process ids reserved by this worker: the next one, and the end.
    ids: Cell<(u64, u64)>,
    /// The dispatch count (`WorkerShared::ticks`) when the current streak of
    /// processes run from the next slot began, and how long a streak may be (see
    /// `MAX_STREAK_*`).
    streak_start: Cell<u32>,
    max_streak: u32,
    /// Per other worker: its `ticks` mixed with its next slot's process (its
    /// `drained`) when this worker first saw a process in its next slot (tasks
    /// in its queue), and when (see `stalled`).
    watch: UnsafeCell<Vec<[Sighting; 2]>>,
    /// The last search left work waiting on a busy worker alone, within its
    /// `GRACE` (sleep lightly, and look again).
    saw_pending: Cell<bool>,
    /// How long the next light sleep lasts.
    nap: Cell<Duration>,
    /// The runtime has only this worker: nobody steals from its next slot.
    pub(crate) solo: bool,
    /// The process this worker runs now (set by `enter`, also when a process
    /// hands the worker straight to the next): what `run_one` finds there when
    /// a process switches back, without reading the thread-local.
    running: Cell<*const Proc>,
}

impl WorkerLocal {
    /// This thread's worker (null: not a worker), read afresh on every call (see
    /// the TLS rule in `context`).
    #[inline(always)]
    pub(crate) fn current() -> *const WorkerLocal {
        context::current_worker().cast()
    }

    #[inline]
    pub(crate) fn shared(&self) -> &Shared {
        // SAFETY: the worker thread holds an `Arc<Shared>` for its whole loop.
        unsafe { &*self.shared }
    }

    /// This worker's shared half.
    #[inline(always)]
    fn me(&self) -> &WorkerShared {
        // SAFETY: points into `shared.workers`, alive as long as `shared` (above).
        unsafe { &*self.me }
    }

    /// Takes a free stack slot of the default pool.
    #[inline]
    pub(crate) fn take_slot(&self) -> std::io::Result<usize> {
        // SAFETY: `free` is only touched by this worker's thread, never reentrantly.
        let free = unsafe { &mut *self.free.get() };
        if let Some(s) = free.pop() {
            return Ok(s);
        }
        self.refill_slots(free)
    }

    #[cold]
    fn refill_slots(&self, free: &mut Vec<usize>) -> std::io::Result<usize> {
        // Slots the pool handed over before failing are kept: they are good.
        let r = self.shared().pool.alloc_batch(free, LOCAL_SLOTS / 2);
        // Handed out (popped) in ascending address order: the processes of a
        // burst then lie in memory in the order they were spawned, and a walk
        // over them in that order (a join) measured ~10% faster than over the
        // pool's order (batches taken newest first).
        free.sort_unstable_by(|a, b| b.cmp(a));
        match free.pop() {
            Some(s) => Ok(s),
            None => Err(r.expect_err("hoare: a stack pool gave no slot and no error")),
        }
    }

    fn give_slot(&self, slot: usize) {
        // SAFETY: as in `take_slot`.
        let free = unsafe { &mut *self.free.get() };
        free.push(slot);
        if free.len() > LOCAL_SLOTS {
            let at = free.len() - LOCAL_SLOTS / 2;
            self.shared().pool.free_batch(free.drain(at..));
        }
    }

    /// Gives the stack cache back to the pool (when the worker stops, so that the
    /// shutdown sweep sees one pool).
    fn return_slots(&self) {
        // SAFETY: as in `take_slot`.
        let free = unsafe { &mut *self.free.get() };
        self.shared().pool.free_batch(free.drain(..));
    }

    #[inline]
    pub(crate) fn next_id(&self) -> u64 {
        let (n, end) = self.ids.get();
        if n < end {
            self.ids.set((n + 1, end));
            return n;
        }
        let n = proc::fresh_ids(ID_BLOCK);
        self.ids.set((n + 1, n + ID_BLOCK));
        n
    }
}

/// Tears down a finished (or unwound) process and returns its slot to its pool
/// (through `w`'s cache when the caller is the worker `w`).
///
/// # Safety
/// The process has finished (or was unwound) and nobody else references the process.
// Inlined into the worker's loop, where processes finish.
#[inline]
pub(crate) unsafe fn release(p: *mut Proc, w: Option<&WorkerLocal>) {
    // SAFETY: caller's contract.
    unsafe {
        let proc = &mut *p;
        proc.name = None;
        proc.live.set(false);
        let pool = proc.pool;
        let slot = proc.slot;
        let shared = proc.shared();
        shared.count_live(w.map(|w| w.index), -1);
        match w {
            Some(w) if ptr::eq(pool, &shared.pool) => w.give_slot(slot),
            _ => (*pool).free_batch(std::iter::once(slot)),
        }
    }
}
