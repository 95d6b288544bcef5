//! A runtime's life (`Core`): starting its worker threads, and shutting it down
//! (docs/semantics.md#shutdown): stopping the workers, the sweep, waiting for
//! the thread processes.

use crate::detect::{self, Gate, OnDeadlock};
use crate::proc::{Task, HEADER};
use crate::shared::{Opts, Shared, WorkerShared};
use crate::signal;
use crate::stack::Pool;
use crate::sweep::{leave, live_processes, sweep};
use crate::threads::ThreadProcs;
use crate::worker::main_loop::worker_thread;
use crossbeam_deque::{Injector, Worker};
use hoare_core::sched::Idle;
use hoare_core::timer::add_clamped;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long shutdown waits before it names what it is waiting for.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// A runtime's threads and shared state.
pub(crate) struct Core {
    pub(crate) shared: Arc<Shared>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// The deadlock detector's thread (unless detection is off).
    detector: Option<std::thread::JoinHandle<()>>,
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
        opts: Opts,
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
        let epoch = Instant::now();
        let queues: Vec<Worker<Task>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let shared = Arc::new(Shared {
            injector: Injector::new(),
            workers: queues
                .iter()
                .map(|q| WorkerShared::new(q.stealer(), epoch))
                .collect(),
            idle: Idle::new(workers),
            shutdown: AtomicBool::new(false),
            default_stack: pool.usable(),
            pool,
            pools: Mutex::new(Vec::new()),
            epoch,
            thread_name: name,
            remote_live: AtomicI64::new(0),
            threads: ThreadProcs::default(),
            shutdown_timeout,
            opts,
            gate: Gate::default(),
            #[cfg(feature = "io")]
            io: std::sync::OnceLock::new(),
        });
        let mut core = Core {
            shared,
            threads: Vec::with_capacity(workers),
            detector: None,
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
        if core.shared.opts.on_deadlock != OnDeadlock::Ignore || core.shared.opts.stall.is_some() {
            match detect::start(&core.shared) {
                Ok(t) => core.detector = Some(t),
                Err(e) => {
                    drop(core);
                    return Err(Error::new(
                        e.kind(),
                        format!("hoare: cannot start the deadlock detector thread: {e}"),
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
        sh.idle.stop_watch();
        if let Some(d) = self.detector.take() {
            let _ = d.join();
        }
        sh.idle.notify_all();
        let started = Instant::now();
        let grace = started + SHUTDOWN_GRACE;
        let until = sh.shutdown_timeout.map(|t| add_clamped(started, t));
        if !self.join_workers(grace, until) {
            return;
        }
        let mut pending = live_processes(&sh);
        if sh.opts.leak_report {
            if let Some(r) = detect::leak_report(&pending) {
                eprintln!("{r}");
            }
        }
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
            // Join the finished ones rather than drop their handles: a dropped
            // handle detaches a thread that may still be exiting, so it would
            // outlive the shutdown (seen as a thread count one too high).
            let (done, live): (Vec<_>, Vec<_>) = std::mem::take(&mut self.threads)
                .into_iter()
                .partition(|t| t.is_finished());
            self.threads = live;
            for t in done {
                let _ = t.join();
            }
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
                    let tag = w.running.load(Ordering::Relaxed);
                    let (id, site) = if tag.is_null() {
                        (0, ptr::null_mut())
                    } else {
                        // SAFETY: a tag in a stack slot of one of this runtime's
                        // pools, which stay mapped while it lives (`sh`), only
                        // ever accessed atomically (see `ProcTag`).
                        let t = unsafe { &*tag };
                        (t.id.load(Ordering::Relaxed), t.site.load(Ordering::Relaxed))
                    };
                    // SAFETY: null or a `&'static Location` (see `spawn`).
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
}

impl Drop for Core {
    fn drop(&mut self) {
        if !self.threads.is_empty() || self.detector.is_some() {
            self.shutdown();
        }
    }
}
