//! What every worker of a runtime shares (`Shared`): the global queue, each
//! worker's shared half (its stealer, next slot, pinned queue, timers and
//! counters), the idle workers, the stack pools and the thread processes; and
//! how a task gets to a worker from outside it.

use crate::context;
use crate::detect::{Gate, OnDeadlock, StallSink};
use crate::proc::{self, Proc, ProcTag, Task, PIN_PENDING};
use crate::stack::Pool;
use crate::threads::ThreadProcs;
use crate::timers::{Timers, NO_TIMER};
use crossbeam_deque::{Injector, Stealer};
use hoare_core::sched::Idle;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The half of a worker that the others see.
pub(crate) struct WorkerShared {
    pub(crate) stealer: Stealer<Task>,
    /// Go's runnext: the process just woken (or spawned) by the running one, run as
    /// soon as that one blocks. Thieves take it only when they find nothing else,
    /// so a worker whose process blocks its OS thread does not strand it.
    pub(crate) next: AtomicPtr<Proc>,
    /// Processes pinned to this worker, waiting for it: others queue them here,
    /// and so does the worker itself unless it is the only one (see
    /// `WorkerLocal::push_back`). Nobody steals from it.
    pub(crate) pinned: Injector<Task>,
    pub(crate) timers: Timers,
    /// Processes spawned minus processes finished on this worker (only this worker
    /// writes it, so a plain load and store suffice; summed at shutdown).
    pub(crate) live: AtomicI64,
    /// This worker's dispatches (each look for local work, so each process run;
    /// wrapping; only it writes): thieves read it to tell a busy worker from a
    /// stuck one (see `GRACE`); the worker itself counts its periodic look and its
    /// streaks by it (see `GLOBAL_CHECK`).
    pub(crate) ticks: AtomicU32,
    /// Times this worker has emptied its queue (wrapping; only it writes): a queue
    /// that has not been emptied for `GRACE` holds more than its worker keeps up
    /// with, even if that worker is busy.
    pub(crate) drained: AtomicU32,
    /// The tag of the process this worker dispatched last (only it writes it;
    /// read by shutdown to name a process that keeps its worker; null: none yet).
    pub(crate) running: AtomicPtr<ProcTag>,
}

impl WorkerShared {
    pub(crate) fn new(stealer: Stealer<Task>, epoch: Instant) -> Self {
        Self {
            stealer,
            next: AtomicPtr::new(ptr::null_mut()),
            pinned: Injector::new(),
            timers: Timers::new(epoch),
            live: AtomicI64::new(0),
            ticks: AtomicU32::new(0),
            drained: AtomicU32::new(0),
            running: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

/// What every worker of a runtime shares.
pub(crate) struct Shared {
    pub(crate) injector: Injector<Task>,
    pub(crate) workers: Box<[WorkerShared]>,
    pub(crate) idle: Idle,
    pub(crate) shutdown: AtomicBool,
    pub(crate) pool: Pool,
    /// Pools of non-default stack sizes; boxed so processes can point at them.
    #[allow(clippy::vec_box)]
    pub(crate) pools: Mutex<Vec<Box<Pool>>>,
    pub(crate) epoch: Instant,
    pub(crate) thread_name: String,
    pub(crate) default_stack: usize,
    /// Like `WorkerShared::live`, for spawns and finishes off the workers.
    pub(crate) remote_live: AtomicI64,
    /// The thread processes that have not ended (shutdown waits for them).
    pub(crate) threads: ThreadProcs,
    /// How long shutdown waits for processes that keep their worker and for
    /// thread processes before it gives up (`None`: for ever).
    pub(crate) shutdown_timeout: Option<Duration>,
    /// The I/O poller, made when the first socket registers (see `io`).
    #[cfg(feature = "io")]
    pub(crate) io: std::sync::OnceLock<crate::io::Driver>,
    /// The options that shape reports and detection.
    pub(crate) opts: Opts,
    /// Where `run` waits for its root (or a deadlock report).
    pub(crate) gate: Gate,
}

/// Options of a runtime beyond its size (see `RuntimeBuilder`).
#[derive(Clone, Default)]
pub(crate) struct Opts {
    pub(crate) on_deadlock: OnDeadlock,
    pub(crate) leak_report: bool,
    /// The stall report's threshold, and where it goes (`None`: stderr).
    pub(crate) stall: Option<(Duration, StallSink)>,
}

impl std::fmt::Debug for Opts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opts")
            .field("on_deadlock", &self.on_deadlock)
            .field("leak_report", &self.leak_report)
            .field("stall", &self.stall.as_ref().map(|s| s.0))
            .finish()
    }
}

impl Proc {
    /// The runtime this process belongs to.
    #[inline(always)]
    pub(crate) fn shared(&self) -> &Shared {
        // SAFETY: set at spawn from the runtime's `Arc<Shared>`, which outlives its
        // live processes.
        unsafe { &*self.shared.cast::<Shared>() }
    }
}

impl Shared {
    /// Pin routing: if `t` is pinned to a worker other than `me` (`usize::MAX`:
    /// none), queues it on that worker's pinned queue, wakes that worker and
    /// returns `None`; else gives `t` back. A pinned process only ever runs on its
    /// worker.
    #[inline(always)]
    pub(crate) fn route_pinned(&self, t: Task, me: usize) -> Option<Task> {
        let pin = t.proc().pin.get();
        if pin < PIN_PENDING && pin as usize != me {
            self.workers[pin as usize].pinned.push(t);
            self.idle.notify_worker(pin as usize);
            return None;
        }
        Some(t)
    }

    /// Queues a task from outside this runtime's workers.
    pub(crate) fn push_remote(&self, t: Task) {
        // A thread that wakes a process may wake more: it holds off the deadlock
        // detector from now on (see `hoare_core::park::threads_awake`).
        hoare_core::park::register_thread();
        if let Some(t) = self.route_pinned(t, usize::MAX) {
            self.injector.push(t);
            self.idle.notify_one();
        }
    }

    /// Counts a spawn (+1) or a finish (-1) for the shutdown sweep, on `worker`
    /// (the caller is that worker's thread) or off the workers (`None`).
    #[inline]
    pub(crate) fn count_live(&self, worker: Option<usize>, d: i64) {
        match worker {
            Some(w) => {
                let c = &self.workers[w].live;
                c.store(c.load(Ordering::Relaxed) + d, Ordering::Relaxed);
            }
            None => {
                self.remote_live.fetch_add(d, Ordering::Relaxed);
            }
        }
    }

    /// Whether the caller may no longer spawn into this runtime: it has begun to
    /// shut down, and the caller is not a process running on one of its workers
    /// (whose spawns the shutdown sweep still finds and cancels). A thread process,
    /// or a process the sweep unwinds, would queue a process nobody ever runs or
    /// cancels.
    pub(crate) fn refuses_spawns(&self, on_worker: bool) -> bool {
        self.shutdown.load(Ordering::Acquire) && !on_worker
    }

    /// How long a worker with nothing to do may sleep: until the earliest timer of
    /// any worker (`None`: no timer is set).
    pub(crate) fn sleep_timeout(&self) -> Option<Duration> {
        let e = self
            .workers
            .iter()
            .map(|w| w.timers.earliest())
            .min()
            .unwrap_or(NO_TIMER);
        if e == NO_TIMER {
            return None;
        }
        let now = crate::timers::nanos(self.epoch, Instant::now());
        Some(Duration::from_nanos(e.saturating_sub(now)))
    }

    /// Calls `f` with the runtime the caller belongs to (its process's, or its
    /// thread process's), without touching its refcount.
    #[inline]
    pub(crate) fn with_current<R>(f: impl FnOnce(&Arc<Shared>) -> R) -> Option<R> {
        let p = proc::current();
        if p.is_null() {
            return Self::with_thread_rt(f);
        }
        // SAFETY: the running process's header is valid while it runs, and its
        // runtime too; the pointer came from `Arc::as_ptr`, and `ManuallyDrop`
        // leaves the count alone.
        let arc = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw((*p).shared()) });
        Some(f(&arc))
    }

    /// [`with_current`](Self::with_current) off the workers: the runtime of the
    /// thread process on this thread.
    #[cold]
    fn with_thread_rt<R>(f: impl FnOnce(&Arc<Shared>) -> R) -> Option<R> {
        let sh = context::thread_rt().cast::<Shared>();
        if sh.is_null() {
            return None;
        }
        // SAFETY: the thread process keeps a count while it is set (see
        // `ThreadRt`); as above otherwise.
        let arc = std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(sh) });
        Some(f(&arc))
    }

    /// The runtime the caller belongs to (see [`with_current`](Self::with_current)).
    pub(crate) fn current() -> Option<Arc<Shared>> {
        Self::with_current(Arc::clone)
    }
}

/// Makes a runtime the one of the thread process on this thread (see
/// `Shared::with_current`) while it lives, and keeps it alive meanwhile.
pub(crate) struct ThreadRt {
    _keep: Arc<Shared>,
}

impl ThreadRt {
    pub(crate) fn enter(sh: Arc<Shared>) -> Self {
        context::set_thread_rt(Arc::as_ptr(&sh).cast());
        ThreadRt { _keep: sh }
    }
}

impl Drop for ThreadRt {
    fn drop(&mut self) {
        context::set_thread_rt(ptr::null());
    }
}
