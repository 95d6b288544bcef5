//! Workers, run queues, timers and shutdown.

use crate::proc::{Proc, Req, TimerKey, BUDGET, PIN_NONE, PIN_PENDING};
use crate::signal;
use crate::stack::{Pool, SlotStack};
use crate::threads::ThreadProcs;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use hoare_core::park::{self, Park};
use hoare_core::sched::{Idle, ProcState};
use hoare_core::timer::add_clamped;
use std::cell::{Cell, UnsafeCell};
use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use std::panic::Location;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A progress counter of another worker as first seen at its value, and when.
type Sighting = Option<(u32, Instant)>;

/// Which progress counter of another worker `WorkerLocal::stalled` watches.
#[derive(Clone, Copy)]
enum Watch {
    Next = 0,
    Queue = 1,
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
}

const NO_TIMER: u64 = u64::MAX;
/// Steal rounds a searching worker makes before it sleeps.
const SPIN_ROUNDS: usize = 32;
/// A lone task queued on a busy worker is left to it unless that worker has run no
/// process for this long (it is stuck in a long one). Stealing sooner would split a
/// group of communicating processes across cores for every hand-off (Go waits ~3 µs
/// before stealing a running P's runnext for the same reason).
const GRACE: Duration = Duration::from_micros(5);
/// A busy worker takes the waiting work of a worker that has run no process for
/// this long (see `WorkerLocal::steal_stuck`). Much longer than `GRACE`: a busy
/// worker has work of its own, and taking a group's processes splits it.
const STUCK: Duration = Duration::from_micros(100);
/// First and longest nap of a worker that sleeps lightly, watching such a task.
const NAP_MIN: Duration = Duration::from_micros(50);
const NAP_MAX: Duration = Duration::from_micros(500);
/// After this many processes run in a row from the next slot while others wait
/// (in the queue, the pinned queue or yielded), the oldest waiting one goes
/// first and the next slot's process goes behind it: two processes handing off
/// to each other must not starve the rest, and each waiting process runs within
/// this many runs per process ahead of it. (On a lone worker a wake that finds
/// the slot taken ends the streak at once, see `WorkerLocal::push_next`.) With
/// other workers the streak is cut much sooner: what that queued process wakes
/// then lengthens the queue, which thieves take from at once, so a long pipeline
/// spreads over the workers (measured with the prime sieve, 2 workers, 1000
/// primes: 22.6 µs per prime against 30.0 with the long streak). A lone worker
/// keeps a long one (the same sieve on 1 worker: 29.6 against 37.8 with 32; 256
/// runs it in the same instructions as 1024, and keeps a fair alt over four live
/// writers within 6% over 10,000 alts, where 1024 lets one pair hand off for
/// 500 alts at a time).
const MAX_STREAK_SOLO: u32 = 256;
const MAX_STREAK_SHARED: u32 = 32;
/// Every this many dispatches (a yield that goes on counts as one) a worker looks
/// at due timers (its own and other workers'), the global queue, its yielded
/// processes and stuck workers first (its pinned queue waits its turn with the
/// local queue, see `MAX_STREAK_SOLO`): a due timer waits at most this many
/// dispatches (plus the running process's time slice) however busy the worker
/// is. Between two such looks the only timer cost is this countdown; at a look,
/// one load of each worker's earliest deadline, and the clock only if one is
/// set. (Tokio polls its timer driver every 61 ticks; Go checks timers on every
/// scheduling round.)
const GLOBAL_CHECK: u32 = 61;
/// Slots a worker keeps in its local stack cache.
const LOCAL_SLOTS: usize = 256;
/// Process ids a worker reserves at a time.
const ID_BLOCK: u64 = 1024;

struct TimerEntry {
    task: Task,
    gen: u64,
}

#[derive(Default)]
struct Timers {
    map: BTreeMap<(Instant, u64), TimerEntry>,
    seq: u64,
}

pub(crate) struct WorkerShared {
    stealer: Stealer<Task>,
    /// Go's runnext: the process just woken (or spawned) by the running one, run as
    /// soon as that one blocks. Thieves take it only when they find nothing else,
    /// so a worker whose process blocks its OS thread does not strand it.
    next: AtomicPtr<Proc>,
    pinned: Injector<Task>,
    timers: Mutex<Timers>,
    /// Earliest deadline of `timers` in ns since `Shared::epoch`, or `NO_TIMER`.
    earliest: AtomicU64,
    /// Processes spawned minus processes finished on this worker (only this worker
    /// writes it, so a plain load and store suffice; summed at shutdown).
    live: AtomicI64,
    /// Processes this worker has run (wrapping; only it writes): thieves read it to
    /// tell a busy worker from a stuck one (see `GRACE`).
    ticks: AtomicU32,
    /// Times this worker has emptied its queue (wrapping; only it writes): a queue
    /// that has not been emptied for `GRACE` holds more than its worker keeps up
    /// with, even if that worker is busy.
    drained: AtomicU32,
    /// The id and spawn site of the process this worker dispatched last (only it
    /// writes them; read by shutdown to name a process that keeps its worker).
    running_id: AtomicU64,
    running_site: AtomicPtr<Location<'static>>,
}

/// What every worker of a runtime shares.
pub(crate) struct Shared {
    injector: Injector<Task>,
    workers: Box<[WorkerShared]>,
    idle: Idle,
    shutdown: AtomicBool,
    pub(crate) pool: Pool,
    /// Pools of non-default stack sizes; boxed so processes can point at them.
    #[allow(clippy::vec_box)]
    pools: Mutex<Vec<Box<Pool>>>,
    epoch: Instant,
    pub(crate) thread_name: String,
    pub(crate) default_stack: usize,
    /// Like `WorkerShared::live`, for spawns and finishes off the workers.
    remote_live: AtomicI64,
    /// The thread processes that have not ended (shutdown waits for them).
    pub(crate) threads: ThreadProcs,
    /// How long shutdown waits for processes that keep their worker and for
    /// thread processes before it gives up (`None`: for ever).
    shutdown_timeout: Option<Duration>,
}

/// Global process id counter (ids are unique across runtimes).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) fn fresh_ids(n: u64) -> u64 {
    NEXT_ID.fetch_add(n, Ordering::Relaxed)
}

/// The thread-local state of one worker thread.
pub(crate) struct WorkerLocal {
    pub(crate) index: usize,
    pub(crate) shared: *const Shared,
    /// `&shared.workers[index]`, kept so the hand-off path indexes nothing.
    me: *const WorkerShared,
    queue: Worker<Task>,
    /// Processes that yielded while every other worker was busy: kept private (no
    /// atomic operation per yield), run after the queue is empty, when a streak
    /// ends (see `MAX_STREAK_SOLO`), or, at the latest, moved behind the queue
    /// by the next periodic look (see `GLOBAL_CHECK`).
    yielded: UnsafeCell<std::collections::VecDeque<Task>>,
    free: UnsafeCell<Vec<usize>>,
    ids: Cell<(u64, u64)>,
    tick: Cell<u32>,
    /// Processes run in a row from the next slot, and how many may (see
    /// `MAX_STREAK_*`).
    streak: Cell<u32>,
    max_streak: u32,
    /// Per other worker: its `ticks` (its `drained`) when this worker first saw
    /// a process in its next slot (a lone task in its queue), and when (see
    /// `stalled`).
    watch: UnsafeCell<Vec<[Sighting; 2]>>,
    /// The last search left a lone task on a busy worker alone (sleep lightly).
    saw_pending: Cell<bool>,
    /// How long the next light sleep lasts.
    nap: Cell<Duration>,
    /// The runtime has only this worker: nobody steals from its next slot.
    solo: bool,
}

std::thread_local! {
    /// The worker this thread is (null: not a worker).
    static WORKER: Cell<*const WorkerLocal> = const { Cell::new(ptr::null()) };
    /// The process running on this thread right now (null: none). Read by the
    /// overflow handler, so it must stay a plain const-initialised cell.
    pub(crate) static CURRENT: Cell<*const Proc> = const { Cell::new(ptr::null()) };
    /// For thread processes: the runtime they belong to.
    pub(crate) static THREAD_RT: std::cell::RefCell<Option<Arc<Shared>>> =
        const { std::cell::RefCell::new(None) };
}

// Never inlined: LLVM takes a thread-local's address to be constant within one
// function, so once inlined into a process's loop (`yield_now`, `id`, `spawn`) the
// address could be computed before a context switch and read after the process
// migrated to another worker (seen: the yield loop of benches/runtime.rs hoisted it).
#[inline(never)]
pub(crate) fn current_proc() -> *const Proc {
    CURRENT.with(|c| c.get())
}

/// This thread's worker (null: not a worker), read afresh on every call (never
/// inlined, for the reason given at `current_proc`).
#[inline(never)]
fn current_worker() -> *const WorkerLocal {
    WORKER.with(|c| c.get())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Size of the process header reserved at the top of each stack slot.
pub(crate) const HEADER: usize = std::mem::size_of::<Proc>();

impl Shared {
    /// `t` in ns since the epoch, saturated below `NO_TIMER` (an `as` cast would
    /// wrap a deadline ~585 years away to a small number: a worker would spin).
    fn nanos(&self, t: Instant) -> u64 {
        let ns = t.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(ns).map_or(NO_TIMER - 1, |n| n.min(NO_TIMER - 1))
    }

    fn update_earliest(&self, w: usize, t: &Timers) {
        let e = t
            .map
            .keys()
            .next()
            .map_or(NO_TIMER, |(d, _)| self.nanos(*d));
        self.workers[w].earliest.store(e, Ordering::Release);
    }

    pub(crate) fn cancel_timer(&self, key: TimerKey) {
        let mut t = lock(&self.workers[key.worker].timers);
        t.map.remove(&(key.deadline, key.seq));
        self.update_earliest(key.worker, &t);
    }

    /// Queues a task from outside this runtime's workers.
    fn push_remote(&self, t: Task) {
        let pin = t.proc().pin.get();
        if pin < PIN_PENDING {
            self.workers[pin as usize].pinned.push(t);
            self.idle.notify_worker(pin as usize);
        } else {
            self.injector.push(t);
            self.idle.notify_one();
        }
    }

    /// Fires the due timers of worker `w`; returns the processes now owned.
    fn fire_due(&self, w: usize, now: Instant, t: &mut Timers, out: &mut Vec<Task>) {
        while let Some(entry) = t.map.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let e = entry.remove();
            let p = e.task.proc();
            // Under the timer lock: a process that was unparked normally waits for
            // this lock to cancel its entry, so it is still alive here.
            if p.state.fire(e.gen) {
                p.timed_out.set(true);
                p.timer.set(None);
                out.push(e.task);
            }
        }
        self.update_earliest(w, t);
    }

    /// Earliest timer of any worker, in ns since the epoch.
    fn earliest_any(&self) -> u64 {
        self.workers
            .iter()
            .map(|w| w.earliest.load(Ordering::Acquire))
            .min()
            .unwrap_or(NO_TIMER)
    }
}

/// Makes a process that an unpark took out of `PARKED` runnable: into the waker's
/// "next" slot when the waker is a process on a worker of the same runtime, else
/// into the global (or, pinned, its worker's) queue.
///
/// # Safety
/// The caller owns `t` (it won the transition out of `PARKED`).
pub(crate) unsafe fn schedule_woken(t: Task) {
    let shared = t.proc().shared;
    let w = current_worker();
    if !w.is_null() {
        // SAFETY: a worker's local state lives as long as its thread's loop, and this
        // code runs inside that loop (in a process or the scheduler).
        let w = unsafe { &*w };
        if ptr::eq(w.shared, shared) {
            let _ = w.push_next(t);
            return;
        }
    }
    // From outside the runtime: keep it alive while we queue and notify (the process
    // may run, finish, and the runtime shut down right after the push).
    // SAFETY: the process is live and owned by us, so its runtime is too; the `Arc`
    // the runtime was built from has at least one strong count.
    let shared = unsafe {
        Arc::increment_strong_count(shared);
        Arc::from_raw(shared)
    };
    shared.push_remote(t);
}

/// Counts a spawn (+1) or a finish (-1) for the shutdown sweep.
fn count_live(shared: &Shared, w: Option<&WorkerLocal>, d: i64) {
    match w {
        Some(w) => {
            let c = &shared.workers[w.index].live;
            c.store(c.load(Ordering::Relaxed) + d, Ordering::Relaxed);
        }
        None => {
            shared.remote_live.fetch_add(d, Ordering::Relaxed);
        }
    }
}

impl WorkerLocal {
    #[inline]
    fn shared(&self) -> &Shared {
        // SAFETY: the worker thread holds an `Arc<Shared>` for its whole loop.
        unsafe { &*self.shared }
    }

    /// This worker's shared half.
    #[inline(always)]
    fn me(&self) -> &WorkerShared {
        // SAFETY: points into `shared.workers`, alive as long as `shared` (above).
        unsafe { &*self.me }
    }

    /// A woken or newly spawned process goes to the "next" slot; the one it displaces
    /// goes to the queue, and then another worker may be needed.
    /// Returns whether it notified other workers (it displaced a task).
    #[inline]
    pub(crate) fn push_next(&self, t: Task) -> bool {
        let pin = t.proc().pin.get();
        if pin < PIN_PENDING && pin as usize != self.index {
            let sh = self.shared();
            sh.workers[pin as usize].pinned.push(t);
            sh.idle.notify_worker(pin as usize);
            return true;
        }
        let next = &self.me().next;
        // Only this worker stores non-null values (thieves only take), so an empty
        // slot stays empty until our store: no read-modify-write needed then.
        let cur = next.load(Ordering::Relaxed);
        let old = if cur.is_null() {
            next.store(t.0.as_ptr(), Ordering::Release);
            ptr::null_mut()
        } else if self.solo {
            // No thief can take `cur` meanwhile (see `take_next`).
            next.store(t.0.as_ptr(), Ordering::Relaxed);
            cur
        } else {
            next.swap(t.0.as_ptr(), Ordering::AcqRel)
        };
        if old.is_null() {
            return false;
        }
        // SAFETY: a non-null next slot holds a task we just took over.
        self.push_back(unsafe { Task::from_ptr(old) });
        self.notify_queued();
        if self.solo {
            // Woken while another waits in the slot (an alt claiming one ready
            // partner after another, a fan-out): on a lone worker the streak
            // ends, so the displaced one and the queue go first. Else the one
            // woken last runs first and, with the process that woke it, hands
            // off on the next slot for a whole (long) streak while the others
            // wait (seen: a fair alt over four live writers chose one of them
            // 90% of the time). With other workers the streak is short anyway,
            // and ending it here too made a pipeline (the prime sieve) a
            // quarter slower, and CommsTime a third.
            self.streak.set(self.max_streak);
        }
        true
    }

    /// After queueing a task: a lone one wakes only a deep sleeper (a light one
    /// watches already, see `GRACE`); more wake anyone.
    #[inline]
    fn notify_queued(&self) {
        if self.solo {
            // Nobody to wake (and the notifiers' fence is the costly part).
            return;
        }
        let idle = &self.shared().idle;
        if self.queue.len() >= 2 {
            idle.notify_one();
        } else {
            idle.notify_weak();
        }
    }

    #[inline]
    fn take_next(&self, w: usize) -> Option<Task> {
        let next = if w == self.index {
            &self.me().next
        } else {
            &self.shared().workers[w].next
        };
        let p = next.load(Ordering::Relaxed);
        if p.is_null() {
            return None;
        }
        if self.solo {
            // The only worker: no thief exists, and only this worker stores into its
            // own slot, so nobody can take `p` between the load and the store.
            next.store(ptr::null_mut(), Ordering::Relaxed);
            // SAFETY: as below; we are the slot's only reader and writer.
            return Some(unsafe { Task::from_ptr(p) });
        }
        let p = next.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: whoever swaps a task out of a next slot holds it.
        (!p.is_null()).then(|| unsafe { Task::from_ptr(p) })
    }

    /// Back of this worker's queue (pinned processes to its private pinned queue,
    /// unless this is the only worker: nobody steals then, and one queue keeps
    /// them in order with the others).
    #[inline]
    fn push_back(&self, t: Task) {
        if t.proc().pin.get() < PIN_PENDING && !self.solo {
            self.me().pinned.push(t);
        } else {
            self.queue.push(t);
        }
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

    #[inline]
    pub(crate) fn next_id(&self) -> u64 {
        let (n, end) = self.ids.get();
        if n < end {
            self.ids.set((n + 1, end));
            return n;
        }
        let n = fresh_ids(ID_BLOCK);
        self.ids.set((n + 1, n + ID_BLOCK));
        n
    }

    fn steal_global(&self) -> Option<Task> {
        let sh = self.shared();
        loop {
            match sh.injector.steal_batch_and_pop(&self.queue) {
                Steal::Success(t) => return Some(t),
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }

    fn pop_pinned(&self) -> Option<Task> {
        let q = &self.me().pinned;
        loop {
            match q.steal() {
                Steal::Success(t) => return Some(t),
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }

    /// Fires this worker's due timers (or another's, with `try_lock`).
    fn run_timers(&self, w: usize, blocking: bool) -> Option<Task> {
        let sh = self.shared();
        let e = sh.workers[w].earliest.load(Ordering::Acquire);
        if e == NO_TIMER {
            return None;
        }
        let now = Instant::now();
        if sh.nanos(now) < e {
            return None;
        }
        let mut fired = Vec::new();
        {
            let mut t = if blocking {
                lock(&sh.workers[w].timers)
            } else {
                match sh.workers[w].timers.try_lock() {
                    Ok(t) => t,
                    Err(_) => return None,
                }
            };
            sh.fire_due(w, now, &mut t, &mut fired);
        }
        let first = fired.pop();
        let more = !fired.is_empty();
        for t in fired {
            if t.proc().pin.get() < PIN_PENDING && t.proc().pin.get() as usize != self.index {
                let pin = t.proc().pin.get() as usize;
                sh.workers[pin].pinned.push(t);
                sh.idle.notify_worker(pin);
            } else {
                self.push_back(t);
            }
        }
        if more {
            sh.idle.notify_one();
        }
        match first {
            Some(t)
                if t.proc().pin.get() < PIN_PENDING
                    && t.proc().pin.get() as usize != self.index =>
            {
                let pin = t.proc().pin.get() as usize;
                sh.workers[pin].pinned.push(t);
                sh.idle.notify_worker(pin);
                None
            }
            f => f,
        }
    }

    /// Work this worker can get without searching others.
    #[inline(always)]
    fn find_local(&self) -> Option<Task> {
        // A countdown rather than a modulo: no multiply on the hand-off path.
        let tick = self.tick.get();
        if tick == 0 {
            self.tick.set(GLOBAL_CHECK - 1);
            // The streak goes on: only serving the queue ends it.
            if let Some(t) = self.periodic() {
                return Some(t);
            }
        } else {
            self.tick.set(tick - 1);
        }
        let mut streak = self.streak.get();
        if streak >= self.max_streak {
            // The streak is spent: what waits goes first, in order, and the next
            // slot's process goes behind it (tokio caps its LIFO slot the same
            // way). Two processes handing off to each other so never keep a
            // queued one waiting for more than `max_streak` runs.
            let t = self.pop_waiting();
            if let Some(t) = t {
                self.streak.set(0);
                if let Some(n) = self.take_next(self.index) {
                    self.push_back(n);
                }
                return Some(t);
            }
            // Nothing waits: a new streak (and no look at the queue for as long).
            streak = 0;
        }
        if let Some(t) = self.take_next(self.index) {
            self.streak.set(streak + 1);
            return Some(t);
        }
        if let Some(t) = self.pop_waiting() {
            self.streak.set(0);
            return Some(t);
        }
        self.run_timers(self.index, true)
            .or_else(|| self.steal_global())
    }

    /// The oldest process waiting on this worker: the queue's, then the pinned
    /// queue's (with other workers; on a lone one pinned processes queue with
    /// the others, see `push_back`), then the yielded ones.
    #[inline(always)]
    fn pop_waiting(&self) -> Option<Task> {
        self.pop_queue()
            .or_else(|| self.pop_pinned())
            // SAFETY: `yielded` is only touched by this worker's thread, never
            // reentrantly.
            .or_else(|| unsafe { (*self.yielded.get()).pop_front() })
    }

    /// Pops the front of this worker's queue (and counts it emptied, for thieves).
    #[inline(always)]
    fn pop_queue(&self) -> Option<Task> {
        let t = self.queue.pop()?;
        if !self.solo && self.queue.is_empty() {
            let d = &self.me().drained;
            d.store(d.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        }
        Some(t)
    }

    /// What a busy worker looks at every `GLOBAL_CHECK` dispatches, before its
    /// next slot and queue: due timers (its own, and those of workers stuck in a
    /// long process), the global queue, its yielded processes (which a queue that
    /// never empties would otherwise starve), and the work of stuck workers. Not
    /// its pinned queue: that is served with the local queue when a streak ends
    /// (taking it here, out of turn, made a fair alt over pinned writers choose
    /// one of them 95% of the time).
    #[cold]
    #[inline(never)]
    fn periodic(&self) -> Option<Task> {
        let n = self.shared().workers.len();
        // Each worker's `earliest` first (one load; the clock only if one is set).
        (0..n)
            .find_map(|k| {
                let v = if k == 0 {
                    self.index
                } else {
                    (self.index + k) % n
                };
                self.run_timers(v, v == self.index)
            })
            .or_else(|| self.steal_global())
            .or_else(|| {
                // Yielded processes go behind the queue as it stands: they wait for
                // what is queued now (a yield lets others go first), but no longer
                // for a queue that never empties.
                // SAFETY: as in `find_local`.
                let y = unsafe { &mut *self.yielded.get() };
                for t in y.drain(..) {
                    self.push_back(t);
                }
                self.steal_stuck()
            })
    }

    /// Work waiting on a worker that has dispatched nothing for `STUCK`: its
    /// thread runs one long process, or the OS does not run it. Only idle workers
    /// steal otherwise, so with every other worker busy that work would wait for
    /// its worker however long; a busy worker takes it at its periodic look.
    fn steal_stuck(&self) -> Option<Task> {
        let sh = self.shared();
        let n = sh.workers.len();
        for k in 1..n {
            let v = (self.index + k) % n;
            let ws = &sh.workers[v];
            if ws.stealer.is_empty() && ws.next.load(Ordering::Relaxed).is_null() {
                continue;
            }
            if !self.stalled_for(v, Watch::Next, STUCK) {
                continue;
            }
            loop {
                match ws.stealer.steal_batch_and_pop(&self.queue) {
                    Steal::Success(t) => return Some(t),
                    Steal::Empty => break,
                    Steal::Retry => continue,
                }
            }
            if let Some(t) = self.take_next(v) {
                let pin = t.proc().pin.get();
                if pin < PIN_PENDING && pin as usize != self.index {
                    // Pinned there: it can only wait for its worker.
                    sh.workers[pin as usize].pinned.push(t);
                    sh.idle.notify_worker(pin as usize);
                    continue;
                }
                return Some(t);
            }
        }
        None
    }

    /// Work from other workers: their queues, and their due timers if they are busy.
    fn steal_others(&self) -> Option<Task> {
        let sh = self.shared();
        let n = sh.workers.len();
        let start = self.tick.get() as usize;
        for k in 1..n {
            let v = (self.index + start + k) % n;
            if v == self.index {
                continue;
            }
            match sh.workers[v].stealer.len() {
                0 => continue,
                1 if !self.stalled(v, Watch::Queue) => {
                    self.saw_pending.set(true);
                    continue;
                }
                _ => {}
            }
            loop {
                match sh.workers[v].stealer.steal_batch_and_pop(&self.queue) {
                    Steal::Success(t) => return Some(t),
                    Steal::Empty => break,
                    Steal::Retry => continue,
                }
            }
        }
        if let Some(t) = self.steal_global() {
            return Some(t);
        }
        for k in 1..n {
            let v = (self.index + start + k) % n;
            if v == self.index || sh.workers[v].next.load(Ordering::Relaxed).is_null() {
                continue;
            }
            if !self.stalled(v, Watch::Next) {
                self.saw_pending.set(true);
                continue;
            }
            if let Some(t) = self.take_next(v) {
                if t.proc().pin.get() < PIN_PENDING && t.proc().pin.get() as usize != self.index {
                    // Pinned elsewhere: hand it to its worker's pinned queue.
                    let pin = t.proc().pin.get() as usize;
                    sh.workers[pin].pinned.push(t);
                    sh.idle.notify_worker(pin);
                    continue;
                }
                return Some(t);
            }
        }
        for k in 1..n {
            let v = (self.index + k) % n;
            if let Some(t) = self.run_timers(v, false) {
                return Some(t);
            }
        }
        None
    }

    /// Whether worker `v`'s lone waiting task is worth stealing: for its next slot,
    /// `v` has run no process for `GRACE` (it is stuck in a long one); for its
    /// queue, `v` has not emptied it for `GRACE` (stuck, or more work than it keeps
    /// up with), counted from when this worker first saw the counter at its value.
    fn stalled(&self, v: usize, what: Watch) -> bool {
        self.stalled_for(v, what, GRACE)
    }

    /// Whether worker `v`'s counter has not moved for `d` since this worker first
    /// saw it at its value (see `stalled`).
    fn stalled_for(&self, v: usize, what: Watch, d: Duration) -> bool {
        let ws = &self.shared().workers[v];
        let now = match what {
            Watch::Next => ws.ticks.load(Ordering::Relaxed),
            Watch::Queue => ws.drained.load(Ordering::Relaxed),
        };
        // SAFETY: `watch` is only touched by this worker's thread, never reentrantly.
        let w = unsafe { &mut (&mut *self.watch.get())[v][what as usize] };
        match *w {
            Some((seen, since)) if seen == now => since.elapsed() >= d,
            _ => {
                *w = Some((now, Instant::now()));
                false
            }
        }
    }

    fn find_any(&self) -> Option<Task> {
        self.find_local().or_else(|| self.steal_others())
    }

    fn sleep_timeout(&self) -> Option<Duration> {
        let sh = self.shared();
        let e = sh.earliest_any();
        if e == NO_TIMER {
            return None;
        }
        let now = sh.nanos(Instant::now());
        Some(Duration::from_nanos(e.saturating_sub(now)))
    }

    fn main_loop(&self) {
        let sh = self.shared();
        let mut searching = false;
        // The last sleep was a light one that timed out: look once, without the
        // search's spinning, and nap again if there is still nothing.
        let mut napped = false;
        'outer: loop {
            if sh.shutdown.load(Ordering::Relaxed) {
                break;
            }
            if let Some(t) = self.find_local() {
                if searching {
                    searching = false;
                    if sh.idle.end_search() {
                        sh.idle.notify_one();
                    }
                }
                // SAFETY: we hold the task.
                unsafe { self.run(t) };
                continue;
            }
            if !searching && !napped {
                searching = sh.idle.try_begin_search();
            }
            napped = false;
            if searching {
                for round in 0..SPIN_ROUNDS {
                    if let Some(t) = self.steal_others().or_else(|| self.find_local()) {
                        searching = false;
                        if sh.idle.end_search() {
                            sh.idle.notify_one();
                        }
                        // SAFETY: we hold the task.
                        unsafe { self.run(t) };
                        continue 'outer;
                    }
                    if sh.shutdown.load(Ordering::Relaxed) {
                        break;
                    }
                    if round < SPIN_ROUNDS / 2 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
            }
            sh.idle.prepare_sleep(self.index, searching);
            self.saw_pending.set(false);
            if let Some(t) = self.find_any() {
                self.nap.set(NAP_MIN);
                searching = sh.idle.cancel_sleep(self.index);
                if searching {
                    searching = false;
                    if sh.idle.end_search() {
                        sh.idle.notify_one();
                    }
                }
                // SAFETY: we hold the task.
                unsafe { self.run(t) };
                continue;
            }
            if sh.shutdown.load(Ordering::Relaxed) {
                sh.idle.cancel_sleep(self.index);
                break;
            }
            let mut timeout = self.sleep_timeout();
            let light = if self.saw_pending.get() {
                // Work is waiting on a busy worker: look again after a nap (longer
                // each time that worker keeps up by itself).
                let nap = self.nap.get();
                self.nap.set((nap * 2).min(NAP_MAX));
                Some(nap)
            } else if sh.idle.others_awake() {
                // Another worker runs: it may leave a woken process in its next
                // slot while it computes (hand-offs do not notify), so look again
                // now and then.
                Some(NAP_MAX)
            } else {
                self.nap.set(NAP_MIN);
                None
            };
            if let Some(nap) = light {
                sh.idle.make_light(self.index);
                timeout = Some(timeout.map_or(nap, |t| t.min(nap)));
            }
            searching = sh.idle.sleep(self.index, timeout);
            napped = light.is_some() && !searching;
        }
        // Give our stack cache back so the shutdown sweep sees one pool.
        // SAFETY: as in `take_slot`.
        let free = unsafe { &mut *self.free.get() };
        sh.pool.free_batch(free.drain(..));
    }

    /// Runs a process until it parks, yields or finishes.
    /// Then runs whatever local work there is next, without returning to the main
    /// loop between two processes: a hand-off costs two context switches and no
    /// further (return-mispredicted) call levels.
    ///
    /// # Safety
    /// The caller holds `t`.
    unsafe fn run(&self, mut t: Task) {
        let sh = self.shared();
        let ticks = &self.me().ticks;
        loop {
            if !self.solo {
                ticks.store(
                    ticks.load(Ordering::Relaxed).wrapping_add(1),
                    Ordering::Relaxed,
                );
            }
            // SAFETY: we hold `t` (the caller's, or one `find_local` gave us).
            unsafe { self.run_one(t) };
            if sh.shutdown.load(Ordering::Relaxed) {
                return;
            }
            match self.find_local() {
                Some(n) => t = n,
                None => return,
            }
        }
    }

    /// Runs a process until it parks, yields or finishes.
    ///
    /// # Safety
    /// The caller holds `t`.
    #[inline(always)]
    unsafe fn run_one(&self, t: Task) {
        let p = t.0.as_ptr();
        // SAFETY: we own the process until we hand it on (queue, PARKED, finish).
        let proc = unsafe { &*p };
        if proc.pin.get() == PIN_PENDING {
            proc.pin.set(self.index as u32);
        }
        // For shutdown's report of a process that never gives its worker back.
        let me = self.me();
        me.running_id.store(proc.id, Ordering::Relaxed);
        me.running_site.store(
            proc.site as *const Location<'static> as *mut _,
            Ordering::Relaxed,
        );
        loop {
            CURRENT.with(|c| c.set(p));
            let dynp: NonNull<dyn Park> = t.0;
            // SAFETY: the process is valid while it runs here; reset right after.
            unsafe { park::set_current_process(Some(dynp)) };
            // SAFETY: the coroutine was initialised at spawn and is not finished.
            let r = unsafe { (*proc.coro.get()).assume_init_mut().resume(()) };
            // SAFETY: see above.
            unsafe { park::set_current_process(None) };
            CURRENT.with(|c| c.set(ptr::null()));
            match r {
                CoroutineResult::Return(()) => {
                    // SAFETY: the process finished on this worker; we own it.
                    unsafe { self.finish(p) };
                    return;
                }
                CoroutineResult::Yield(Req::Yield) => {
                    if self.queue.is_empty() && !self.has_other_work() {
                        // Alone: go on, but count the yield as a dispatch, so due
                        // timers and the global queue are still looked at every
                        // `GLOBAL_CHECK` (through `find_local`, which runs the
                        // yielder again if they hold nothing).
                        let tick = self.tick.get();
                        if tick != 0 {
                            self.tick.set(tick - 1);
                            continue;
                        }
                        // SAFETY: as in `find_local`.
                        unsafe { (*self.yielded.get()).push_back(t) };
                        return;
                    }
                    let sh = self.shared();
                    if sh.idle.others_idle() {
                        self.push_back(t);
                        self.notify_queued();
                    } else {
                        // SAFETY: as in `find_local`.
                        unsafe { (*self.yielded.get()).push_back(t) };
                    }
                    return;
                }
                // No timer for this park: its one unpark takes it over with a plain
                // store (see `ProcState::try_park_sole`).
                CoroutineResult::Yield(Req::Park) => match proc.state.try_park_sole() {
                    // From here on someone else owns it: do not touch it.
                    true => return,
                    false => continue,
                },
                // The process holds a lock every unparker must take, so nobody can
                // race this park: plain stores, then the release publishes them.
                CoroutineResult::Yield(Req::ParkRelease(release, data)) => {
                    let parked = proc.state.park_sole_uncontended();
                    // SAFETY: `Park::park_releasing`'s contract: called once, while
                    // the process is suspended; it does not touch the process's
                    // stack after the store that lets others resume it.
                    unsafe { release(data) };
                    match parked {
                        // From the release on someone else owns it: do not touch it.
                        true => return,
                        false => continue,
                    }
                }
                CoroutineResult::Yield(Req::ParkUntil(d)) => {
                    let sh = self.shared();
                    let mut timers = lock(&sh.workers[self.index].timers);
                    timers.seq += 1;
                    let seq = timers.seq;
                    let gen = proc.state.next_gen();
                    timers.map.insert((d, seq), TimerEntry { task: t, gen });
                    proc.timer.set(Some(TimerKey {
                        worker: self.index,
                        deadline: d,
                        seq,
                    }));
                    // The timer lock is held across the park so no timer can fire
                    // (and no cancel can run) before the process is really parked.
                    match proc.state.try_park() {
                        Some(g) => {
                            debug_assert_eq!(g, gen);
                            sh.update_earliest(self.index, &timers);
                            return;
                        }
                        None => {
                            timers.map.remove(&(d, seq));
                            proc.timer.set(None);
                            drop(timers);
                            continue;
                        }
                    }
                }
            }
        }
    }

    /// Whether anything but the current queue could run (next slot, pinned queue,
    /// global queue): a lone yielder with nothing else to do just continues.
    #[inline]
    fn has_other_work(&self) -> bool {
        let sh = self.shared();
        // SAFETY: as in `find_local`.
        !unsafe { (*self.yielded.get()).is_empty() }
            || !self.me().next.load(Ordering::Relaxed).is_null()
            || !sh.injector.is_empty()
            || !self.me().pinned.is_empty()
            || sh.shutdown.load(Ordering::Relaxed)
    }

    /// Releases a finished process's slot.
    ///
    /// # Safety
    /// `p` finished on this worker and nobody else references it.
    unsafe fn finish(&self, p: *mut Proc) {
        // SAFETY: per the contract the header is ours to tear down.
        unsafe { release(p, Some(self)) }
    }
}

/// Tears down a finished (or unwound) process and returns its slot to its pool.
///
/// # Safety
/// The coroutine has completed and nobody else references the process.
unsafe fn release(p: *mut Proc, w: Option<&WorkerLocal>) {
    // SAFETY: caller's contract.
    unsafe {
        let proc = &mut *p;
        proc.coro.get_mut().assume_init_drop();
        proc.name = None;
        proc.live.set(false);
        let pool = proc.pool;
        let slot = proc.slot;
        let shared = proc.shared;
        count_live(&*shared, w, -1);
        match w {
            Some(w) if ptr::eq(pool, &(*shared).pool) => w.give_slot(slot),
            _ => (*pool).free_batch(std::iter::once(slot)),
        }
    }
}

/// What a new process needs besides its body.
pub(crate) struct SpawnOpts<'a> {
    pub(crate) name: Option<Box<str>>,
    pub(crate) stack_size: Option<usize>,
    pub(crate) pinned: bool,
    /// Where it was spawned (for reports).
    pub(crate) site: &'static Location<'static>,
    pub(crate) shared: &'a Arc<Shared>,
}

/// Why a spawn failed: the runtime has shut down, or the spawn itself failed (a
/// stack size out of range, the OS refused memory).
#[derive(Debug)]
pub(crate) enum SpawnError {
    ShutDown,
    Io(std::io::Error),
}

impl From<std::io::Error> for SpawnError {
    fn from(e: std::io::Error) -> Self {
        SpawnError::Io(e)
    }
}

/// Whether the caller may no longer spawn into `shared`: it has begun to shut
/// down, and the caller is not a process running on one of its workers (whose
/// spawns the shutdown sweep still finds and cancels). A thread process, or a
/// process the sweep unwinds, would queue a process nobody ever runs or cancels.
pub(crate) fn refuses_spawns(shared: &Shared, on_worker: bool) -> bool {
    shared.shutdown.load(Ordering::Acquire) && !on_worker
}

/// Takes one stack slot of size `size` (`None`: the runtime's default).
fn take_slot(
    shared: &Shared,
    local: Option<&WorkerLocal>,
    size: Option<usize>,
) -> std::io::Result<(*const Pool, usize)> {
    let custom = size.filter(|&s| {
        s.div_ceil(crate::stack::PAGE) != shared.default_stack.div_ceil(crate::stack::PAGE)
    });
    match (custom, local) {
        (None, Some(l)) => Ok((&shared.pool, l.take_slot()?)),
        (None, None) => {
            let mut v = Vec::with_capacity(1);
            shared.pool.alloc_batch(&mut v, 1)?;
            Ok((&shared.pool, v[0]))
        }
        (Some(size), _) => {
            let mut pools = lock(&shared.pools);
            let pool = match pools
                .iter()
                .find(|p| p.usable() >= size && p.usable() - size < crate::stack::PAGE * 2)
            {
                Some(p) => &**p as *const Pool,
                None => {
                    // Checks the size (`InvalidInput` when absurd) before any
                    // memory is mapped.
                    pools.push(Box::new(Pool::new(size, HEADER)?));
                    &**pools.last().expect("pool") as *const Pool
                }
            };
            drop(pools);
            let mut v = Vec::with_capacity(1);
            // SAFETY: pools are boxed and live as long as the runtime.
            unsafe { (*pool).alloc_batch(&mut v, 1)? };
            Ok((pool, v[0]))
        }
    }
}

/// Creates a process running `body` and queues it. On failure `body` is dropped
/// (without running).
///
/// # Safety
/// Everything `body` borrows must outlive the process (the scope joins it first).
pub(crate) unsafe fn spawn_raw<F>(opts: SpawnOpts<'_>, body: F) -> Result<u64, SpawnError>
where
    F: FnOnce(),
{
    let shared: &Shared = opts.shared;
    let w = current_worker();
    // SAFETY: a non-null worker pointer is this thread's live worker.
    let local = (!w.is_null())
        .then(|| unsafe { &*w })
        .filter(|w| ptr::eq(w.shared, shared));
    if refuses_spawns(shared, local.is_some() && !current_proc().is_null()) {
        return Err(SpawnError::ShutDown);
    }
    let (pool, slot) = take_slot(shared, local, opts.stack_size)?;
    count_live(shared, local, 1);
    let cur = current_proc();
    let depth = if cur.is_null() {
        0
    } else {
        // SAFETY: the running process's header is valid while it runs.
        unsafe { (*cur).depth.saturating_add(1) }
    };
    let id = match local {
        Some(l) => l.next_id(),
        None => fresh_ids(1),
    };
    // SAFETY: pools outlive the runtime's processes.
    let header_offset = unsafe { (*pool).header_offset() };
    let hp = (slot + header_offset) as *mut Proc;
    // SAFETY: the slot is ours (just taken from the pool); the header range is
    // inside it, aligned to 64 and unused.
    unsafe {
        ptr::write(
            hp,
            Proc {
                state: ProcState::new(),
                coro: UnsafeCell::new(MaybeUninit::uninit()),
                yielder: Cell::new(ptr::null()),
                shared: Arc::as_ptr(opts.shared),
                pool,
                id,
                depth,
                name: opts.name,
                site: opts.site,
                pin: Cell::new(if opts.pinned { PIN_PENDING } else { PIN_NONE }),
                timed_out: Cell::new(false),
                unwinding: Cell::new(false),
                waiting: Cell::new(ptr::null()),
                live: Cell::new(true),
                timer: Cell::new(None),
                budget: Cell::new(BUDGET),
                slot,
            },
        );
        let hpu = hp as usize;
        let coro = Coroutine::with_stack_unchecked(
            SlotStack::new(slot, header_offset),
            move |y: &Yielder<(), Req>, ()| {
                (*(hpu as *const Proc)).yielder.set(y);
                body();
            },
        );
        (*(*hp).coro.get()).write(coro);
    }
    // SAFETY: fully initialised above; we hold the only reference.
    let t = unsafe { Task::from_ptr(hp) };
    match local {
        Some(l) if !current_proc().is_null() => {
            if !l.push_next(t) && !l.solo {
                // Its spawner may go on computing: a worker that sleeps for want of
                // work should come and look (after `GRACE` it takes the process).
                shared.idle.notify_weak();
            }
        }
        _ => shared.push_remote(t),
    }
    Ok(id)
}

/// A runtime's threads and shared state.
pub(crate) struct Core {
    pub(crate) shared: Arc<Shared>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Core {
    pub(crate) fn workers(&self) -> usize {
        self.shared.workers.len()
    }

    /// Starts `workers` workers whose processes get `stack` bytes of stack by
    /// default. Refuses (`InvalidInput`) a worker count of 0 or above
    /// [`MAX_WORKERS`](hoare_core::sched::MAX_WORKERS), an absurd stack size, or a
    /// thread name with a NUL byte; if a worker thread cannot be started, the
    /// workers already started are stopped and joined, and the OS error returned.
    pub(crate) fn start(
        workers: usize,
        stack: usize,
        name: String,
        shutdown_timeout: Option<Duration>,
    ) -> std::io::Result<Core> {
        use std::io::{Error, ErrorKind};
        let max = hoare_core::sched::MAX_WORKERS;
        if workers == 0 || workers > max {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("hoare: a runtime needs 1 to {max} workers, not {workers}"),
            ));
        }
        if name.contains('\0') {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "hoare: a thread name may not contain a NUL byte",
            ));
        }
        let pool = Pool::new(stack, HEADER)?;
        signal::install();
        let queues: Vec<Worker<Task>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let shared = Arc::new(Shared {
            injector: Injector::new(),
            workers: queues
                .iter()
                .map(|q| WorkerShared {
                    stealer: q.stealer(),
                    next: AtomicPtr::new(ptr::null_mut()),
                    pinned: Injector::new(),
                    timers: Mutex::new(Timers::default()),
                    earliest: AtomicU64::new(NO_TIMER),
                    live: AtomicI64::new(0),
                    ticks: AtomicU32::new(0),
                    drained: AtomicU32::new(0),
                    running_id: AtomicU64::new(0),
                    running_site: AtomicPtr::new(ptr::null_mut()),
                })
                .collect(),
            idle: Idle::new(workers),
            shutdown: AtomicBool::new(false),
            default_stack: pool.usable(),
            pool,
            pools: Mutex::new(Vec::new()),
            epoch: Instant::now(),
            thread_name: name,
            remote_live: AtomicI64::new(0),
            threads: ThreadProcs::default(),
            shutdown_timeout,
        });
        let mut core = Core {
            shared,
            threads: Vec::with_capacity(workers),
        };
        for (i, q) in queues.into_iter().enumerate() {
            let sh = core.shared.clone();
            match std::thread::Builder::new()
                .name(format!("{}-{i}", sh.thread_name))
                .spawn(move || worker_thread(sh, i, q))
            {
                Ok(t) => core.threads.push(t),
                Err(e) => {
                    // Stop and join the workers already started (dropping `core`
                    // shuts it down): they must not spin until the program exits.
                    drop(core);
                    return Err(Error::new(
                        e.kind(),
                        format!("hoare: cannot start worker thread {i} of {workers}: {e}"),
                    ));
                }
            }
        }
        Ok(core)
    }

    /// Shuts the runtime down (see docs/semantics.md#shutdown): stops the workers,
    /// unwinds every process that has not finished (deepest in the spawn tree
    /// first, so a scope's children go before the parent whose stack they borrow;
    /// a process whose wait another party holds after that party), cancels the
    /// waits of the thread processes and waits for them, and releases the stacks.
    /// With a shutdown timeout, gives up on workers and thread processes that
    /// have not stopped by then (and unwinds nothing: everything is left running
    /// or allocated).
    pub(crate) fn shutdown(&mut self) {
        let sh = self.shared.clone();
        sh.shutdown.store(true, Ordering::SeqCst);
        sh.idle.notify_all();
        let started = Instant::now();
        let grace = started + SHUTDOWN_GRACE;
        let until = sh.shutdown_timeout.map(|t| add_clamped(started, t));
        if !self.join_workers(grace, until) {
            return;
        }
        let mut pending = self.live_processes();
        // SAFETY: the workers are stopped; the sweep owns these processes.
        unsafe { sweep(&mut pending) };
        sh.threads.cancel_all();
        let ended = sh.threads.wait(grace, until, |live| {
            for t in live {
                eprintln!(
                    "hoare: shutdown is waiting for {} to end (its hoare operations \
                     are cancelled; a thread blocked outside hoare ends on its own)",
                    t.describe()
                );
            }
        });
        if !ended {
            eprintln!(
                "hoare: shutdown gave up after {:?}: {} left running; {} process(es) \
                 left as they were",
                sh.shutdown_timeout.unwrap_or_default(),
                sh.threads.describe().join(", "),
                pending.len()
            );
            leave(&pending);
            return;
        }
        // Thread processes may have let go of waits they held (a scope's children).
        // SAFETY: as above.
        unsafe { sweep(&mut pending) };
        if !pending.is_empty() {
            // Each waits for another that waits for it.
            eprintln!(
                "hoare: shutdown left {} process(es) as they were (each waits for a \
                 partner that waits for it); their destructors do not run",
                pending.len()
            );
            leave(&pending);
        }
    }

    /// Joins the worker threads. A worker that a process keeps (it never blocks
    /// or yields) is named on stderr once `grace` has passed; at `until`, returns
    /// `false` and leaves such workers running.
    fn join_workers(&mut self, grace: Instant, until: Option<Instant>) -> bool {
        let sh = self.shared.clone();
        let mut reported = false;
        let mut nap = Duration::from_micros(50);
        loop {
            self.threads.retain(|t| !t.is_finished());
            if self.threads.is_empty() {
                return true;
            }
            let now = Instant::now();
            if now >= grace && !reported {
                reported = true;
                for (i, w) in sh.workers.iter().enumerate() {
                    let name = format!("{}-{i}", sh.thread_name);
                    if !self
                        .threads
                        .iter()
                        .any(|t| t.thread().name() == Some(&name))
                    {
                        continue;
                    }
                    let id = w.running_id.load(Ordering::Relaxed);
                    let site = w.running_site.load(Ordering::Relaxed);
                    // SAFETY: null or a `&'static Location` (see `run_one`).
                    let site =
                        unsafe { site.as_ref() }.map_or_else(|| "?".to_owned(), |l| l.to_string());
                    eprintln!(
                        "hoare: shutdown is waiting for worker {i}: process {id} (spawned \
                         at {site}) has kept it for {:?} without blocking or yielding; \
                         a process cannot be preempted (call hoare::yield_now in long \
                         computations)",
                        now - (grace - SHUTDOWN_GRACE)
                    );
                }
            }
            if until.is_some_and(|u| now >= u) {
                eprintln!(
                    "hoare: shutdown gave up on {} worker(s) still running a process; \
                     the runtime is left as it is",
                    self.threads.len()
                );
                // Detached: they hold the runtime's shared state alive.
                self.threads.clear();
                return false;
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(10));
        }
    }

    /// Every process of the runtime that has not finished, deepest in the spawn
    /// tree first (see `Proc::depth`), newest first within a depth, each with
    /// whether it was parked. The workers must be stopped; the sweep owns them from
    /// here (parked ones are taken over, queued ones are never run again).
    fn live_processes(&self) -> Vec<(*mut Proc, bool)> {
        let sh = &self.shared;
        let live: i64 = sh.remote_live.load(Ordering::SeqCst)
            + sh.workers
                .iter()
                .map(|w| w.live.load(Ordering::SeqCst))
                .sum::<i64>();
        if live == 0 {
            return Vec::new();
        }
        let mut pools: Vec<*const Pool> = vec![&sh.pool as *const Pool];
        pools.extend(lock(&sh.pools).iter().map(|p| &**p as *const Pool));
        let mut live: Vec<*mut Proc> = Vec::new();
        for &pool in &pools {
            // SAFETY: pools live as long as `sh`.
            let pool = unsafe { &*pool };
            for slot in pool.carved_slots() {
                let hp = (slot + pool.header_offset()) as *mut Proc;
                // SAFETY: every carved slot's header was written by a spawn (slots
                // are carved only to be used) or zeroed by MADV_DONTNEED (live=false).
                if unsafe { (*hp).live.get() } {
                    live.push(hp);
                }
            }
        }
        // SAFETY: as above.
        live.sort_by_key(|&p| std::cmp::Reverse(unsafe { ((*p).depth, (*p).id) }));
        live.into_iter()
            // SAFETY: as above; the workers are gone.
            .map(|p| (p, unsafe { (*p).state.take_parked() }))
            .collect()
    }
}

/// How long shutdown waits before it names what it is waiting for.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Unwinds every process of `pending` that nobody holds, pass after pass, and
/// leaves the others in `pending`. A process whose wait another party holds (an
/// extended rendezvous's reader that claimed it, a scope's children) is unwound
/// only after that party has let go of it: unwinding it first would free a waiter
/// the other party still writes to.
///
/// # Safety
/// The workers are stopped and the caller owns the processes.
unsafe fn sweep(pending: &mut Vec<(*mut Proc, bool)>) {
    loop {
        let before = pending.len();
        pending.retain(|&(p, parked)| {
            // SAFETY: a parked process's `waiting` points into its own stack, which
            // is intact (it has not been unwound).
            let held = parked
                && unsafe {
                    let w = (*p).waiting.get();
                    !w.is_null() && (*w).is_held()
                };
            if held {
                return true;
            }
            // SAFETY: the caller's contract.
            unsafe { unwind(p) };
            false
        });
        if pending.is_empty() || pending.len() == before {
            return;
        }
    }
}

/// Leaves processes as they are: neither unwound nor freed (their slots stay
/// allocated and their pools mapped, since something may still write to them).
fn leave(pending: &[(*mut Proc, bool)]) {
    for &(p, _) in pending {
        // SAFETY: the sweep owns these processes; the slot stays allocated.
        unsafe {
            (*p).live.set(false);
            (*(*p).pool).keep_slot();
        }
    }
}

/// Unwinds a process that has not finished, on the sweeping thread, and releases
/// its slot. The process is cancelled meanwhile (see `Park::cancelled`): none of
/// its operations may suspend it.
///
/// # Safety
/// The workers are stopped and the caller owns the process.
unsafe fn unwind(p: *mut Proc) {
    // SAFETY: the caller's contract.
    unsafe {
        let proc = &*p;
        if !proc.live.get() {
            return;
        }
        proc.unwinding.set(true);
        CURRENT.with(|c| c.set(p));
        let dynp: NonNull<dyn Park> = NonNull::new_unchecked(p);
        park::set_current_process(Some(dynp));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (*proc.coro.get()).assume_init_mut().force_unwind()
        }));
        park::set_current_process(None);
        CURRENT.with(|c| c.set(ptr::null()));
        if r.is_err() {
            // The coroutine state is unknown: leak the slot rather than touch it
            // again (and keep its pool mapped).
            proc.live.set(false);
            (*proc.pool).keep_slot();
            return;
        }
        release(p, None);
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown();
        }
    }
}

fn worker_thread(shared: Arc<Shared>, index: usize, queue: Worker<Task>) {
    park::set_worker_index(index);
    let _alt = signal::ensure_altstack();
    let local = WorkerLocal {
        index,
        shared: Arc::as_ptr(&shared),
        me: &shared.workers[index],
        queue,
        yielded: UnsafeCell::new(std::collections::VecDeque::new()),
        free: UnsafeCell::new(Vec::with_capacity(LOCAL_SLOTS + 1)),
        ids: Cell::new((0, 0)),
        tick: Cell::new(0),
        streak: Cell::new(0),
        max_streak: if shared.workers.len() == 1 {
            MAX_STREAK_SOLO
        } else {
            MAX_STREAK_SHARED
        },
        watch: UnsafeCell::new(vec![[None; 2]; shared.workers.len()]),
        saw_pending: Cell::new(false),
        nap: Cell::new(NAP_MIN),
        solo: shared.workers.len() == 1,
    };
    WORKER.with(|c| c.set(&local));
    local.main_loop();
    WORKER.with(|c| c.set(ptr::null()));
    park::set_worker_index(usize::MAX);
}

/// The runtime the caller belongs to: its process's, or its thread process's.
pub(crate) fn current_shared() -> Option<Arc<Shared>> {
    let p = current_proc();
    if !p.is_null() {
        // SAFETY: the running process's runtime is alive while it runs.
        unsafe {
            let sh = (*p).shared;
            Arc::increment_strong_count(sh);
            return Some(Arc::from_raw(sh));
        }
    }
    THREAD_RT.with(|r| r.borrow().clone())
}

/// Calls `f` with the runtime the caller belongs to, without touching its refcount
/// when the caller is a process.
#[inline]
pub(crate) fn with_shared<R>(f: impl FnOnce(&Arc<Shared>) -> R) -> Option<R> {
    let p = current_proc();
    if !p.is_null() {
        // SAFETY: the running process's runtime is alive while it runs, and
        // `shared` came from `Arc::as_ptr`; ManuallyDrop leaves the count alone.
        let arc = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw((*p).shared) });
        return Some(f(&arc));
    }
    THREAD_RT.with(|r| r.borrow().as_ref().map(f))
}
