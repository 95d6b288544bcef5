//! Runtimes: [`RuntimeBuilder`], [`Runtime`], and [`run`]/[`try_run`], which run a
//! root process in a new runtime and shut it down when the root returns.

use super::builder::Failed;
use super::builder::DEFAULT_STACK_SIZE;
use super::error::{spawn_error, ProcessError};
use super::join::{run_body, Finish, JoinHandle, Process, SlotRef};
use crate::detect::{OnDeadlock, RootDone};
use crate::lifecycle::Core;
use crate::shared::Opts;
use crate::shared::Shared;
use crate::spawn::{self, SpawnOpts};
use std::fmt;
use std::io;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

/// The most workers a runtime can have: 65,534 (see
/// [`hoare_core::sched::MAX_WORKERS`]).
pub const MAX_WORKERS: usize = hoare_core::sched::MAX_WORKERS;

/// Configures a [`Runtime`].
///
/// ```
/// let rt = hoare_runtime::Runtime::builder().workers(2).stack_size(256 * 1024).try_build()?;
/// assert_eq!(rt.run(|| 1 + 1), 2);
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// Bad settings are refused by [`try_build`](Self::try_build) (and make
/// [`build`](Self::build) panic with the same message):
///
/// ```
/// use hoare_runtime::{Runtime, MAX_WORKERS};
/// assert!(Runtime::builder().workers(MAX_WORKERS + 1).try_build().is_err());
/// assert!(Runtime::builder().stack_size(usize::MAX).try_build().is_err());
/// ```
#[derive(Debug, Clone)]
pub struct RuntimeBuilder {
    workers: Option<usize>,
    stack_size: usize,
    thread_name: String,
    shutdown_timeout: Option<Duration>,
    opts: Opts,
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        Self {
            workers: None,
            stack_size: DEFAULT_STACK_SIZE,
            thread_name: "hoare-worker".into(),
            shutdown_timeout: None,
            opts: Opts::default(),
        }
    }
}

impl RuntimeBuilder {
    /// Number of worker threads: 1 to [`MAX_WORKERS`] (else [`build`](Self::build)
    /// fails). Default: [`default_workers`] (`HOARE_WORKERS`, else the available
    /// cores).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n);
        self
    }
    /// Default usable stack size of its processes (default
    /// [`DEFAULT_STACK_SIZE`]; at most [`MAX_STACK_SIZE`], else
    /// [`build`](Self::build) fails). See [`Builder::stack_size`].
    ///
    /// [`MAX_STACK_SIZE`]: crate::MAX_STACK_SIZE
    /// [`Builder::stack_size`]: crate::Builder::stack_size
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }
    /// Worker threads are named `<name>-<index>` (no NUL byte, else
    /// [`build`](Self::build) fails).
    pub fn thread_name(mut self, name: impl Into<String>) -> Self {
        self.thread_name = name.into();
        self
    }
    /// How long the shutdown (when the root process has returned) waits for
    /// processes that keep their worker (a computation that never blocks or
    /// yields: a cooperative runtime cannot preempt it) and for thread processes
    /// (whose waits it cancels) before it gives up on them: then it reports them,
    /// leaves them running, and returns without unwinding the other processes
    /// (whose stacks stay allocated). Default: it waits for ever, and names them on
    /// stderr after a second.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = hoare_runtime::Runtime::builder()
    ///     .workers(1)
    ///     .shutdown_timeout(Duration::from_millis(100))
    ///     .build();
    /// rt.run(|| {
    ///     let _ = hoare_runtime::spawn_blocking(|| loop {
    ///         std::thread::sleep(Duration::from_secs(1)); // never ends
    ///     });
    /// });
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = Some(timeout);
        self
    }
    /// What the runtime does when every live process is blocked and nothing can
    /// wake any of them (see [`run`](crate::run) for when hoare can be sure).
    /// Default [`OnDeadlock::Fail`]: `try_run` returns
    /// [`ProcessError::Deadlock`] with a report naming each blocked process, where
    /// it was spawned and what it waits on; `run` panics with the report.
    /// [`OnDeadlock::Warn`] prints the report and keeps waiting (for programs fed
    /// by threads the runtime cannot see); [`OnDeadlock::Ignore`] does not look
    /// (and starts no detector thread). A runtime used through its
    /// [`Handle`] without `run` has no `run` to end: it prints the report, as
    /// `Warn` does.
    ///
    /// ```
    /// use hoare_runtime::{OnDeadlock, ProcessError, Runtime};
    /// let r = Runtime::builder().workers(1).on_deadlock(OnDeadlock::Fail).build().try_run(|| {
    ///     let (a_tx, a_rx) = hoare_core::chan::Channel::builder().name("a").one2one::<u8>();
    ///     let (b_tx, b_rx) = hoare_core::chan::Channel::builder().name("b").one2one::<u8>();
    ///     let p = hoare_runtime::Builder::new().name("p2").spawn(move || {
    ///         b_tx.send(1).ok();
    ///         a_rx.recv().ok();
    ///     });
    ///     a_tx.send(1).ok(); // p2 sends on b first: neither can go on
    ///     b_rx.recv().ok();
    ///     p.join().ok();
    /// });
    /// let Err(ProcessError::Deadlock(report)) = r else { panic!("no deadlock: {r:?}") };
    /// let text = report.to_string();
    /// assert!(text.contains("process 'p2'") && text.contains("send on channel 'b'"), "{text}");
    /// ```
    pub fn on_deadlock(mut self, what: OnDeadlock) -> Self {
        self.opts.on_deadlock = what;
        self
    }

    /// Prints a *leak report* on standard error at shutdown: the processes still
    /// blocked when the root process returned (which the shutdown then unwinds),
    /// each with where it was spawned and what it waits on. Default: off.
    pub fn leak_report(mut self, on: bool) -> Self {
        self.opts.leak_report = on;
        self
    }

    /// Turns on the *stall report*: processes blocked in one wait for longer than
    /// `threshold` are reported on standard error (once per wait) while the
    /// program keeps running, in the deadlock report's form. It finds partial
    /// deadlocks (a few processes stuck while others go on) that the global
    /// deadlock check cannot. The runtime looks four times per threshold, at
    /// moments when every worker is idle (so it never stops a busy worker; a
    /// runtime whose workers are never all idle at once is not looked at).
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = hoare_runtime::Runtime::builder()
    ///     .stall_report(Duration::from_secs(10))
    ///     .build();
    /// rt.run(|| {});
    /// ```
    pub fn stall_report(mut self, threshold: Duration) -> Self {
        self.opts.stall = Some((threshold, None));
        self
    }

    /// [`stall_report`](Self::stall_report) handing each report to `f` (called on
    /// the runtime's detector thread) instead of printing it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let s = seen.clone();
    /// let rt = hoare_runtime::Runtime::builder()
    ///     .workers(1)
    ///     .stall_report_with(Duration::from_millis(20), move |r| {
    ///         s.lock().unwrap().push(r.to_string())
    ///     })
    ///     .build();
    /// let reported = || seen.lock().unwrap().iter().any(|r| r.contains("recv on channel 'stuck'"));
    /// rt.run(|| {
    ///     let (tx, rx) = hoare_core::chan::Channel::builder().name("stuck").one2one::<u8>();
    ///     let _h = hoare_runtime::spawn(move || rx.recv());
    ///     while !reported() {
    ///         hoare_runtime::sleep_for(Duration::from_millis(5)); // the root goes on
    ///     }
    ///     drop(tx);
    /// });
    /// assert!(reported());
    /// ```
    pub fn stall_report_with(
        mut self,
        threshold: Duration,
        f: impl Fn(&crate::Report) + Send + Sync + 'static,
    ) -> Self {
        self.opts.stall = Some((threshold, Some(Arc::new(f))));
        self
    }

    /// Starts the workers.
    ///
    /// # Panics
    /// Where [`try_build`](Self::try_build) fails, with the error's message.
    #[track_caller]
    pub fn build(self) -> Runtime {
        match self.try_build() {
            Ok(rt) => rt,
            Err(e) => panic!("hoare: cannot start the runtime: {e}"),
        }
    }

    /// Starts the workers. Fails with [`InvalidInput`](io::ErrorKind::InvalidInput)
    /// for 0 or more than [`MAX_WORKERS`] workers, a stack size above
    /// [`MAX_STACK_SIZE`] or a thread name with a NUL byte, and with the OS error
    /// if a worker thread cannot be started (the workers already started are then
    /// stopped and joined first).
    ///
    /// [`MAX_STACK_SIZE`]: crate::MAX_STACK_SIZE
    pub fn try_build(self) -> io::Result<Runtime> {
        let workers = self.workers.unwrap_or_else(default_workers);
        Ok(Runtime {
            core: Core::start(
                workers,
                self.stack_size,
                self.thread_name,
                self.shutdown_timeout,
                self.opts,
            )?,
        })
    }
}

/// The number of workers a runtime gets by default: `HOARE_WORKERS` if it is set
/// to a number from 1 to [`MAX_WORKERS`], else the available cores.
///
/// Any other value of `HOARE_WORKERS` (`0`, `-1`, `abc`, `100000`) is ignored with
/// one warning on standard error (once per OS process) and the available cores
/// are used: a typo in the environment should not stop a program, nor start a
/// hundred thousand threads. An empty value counts as unset.
pub fn default_workers() -> usize {
    let cores = || {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_WORKERS)
    };
    let Ok(v) = std::env::var("HOARE_WORKERS") else {
        return cores();
    };
    let t = v.trim();
    if t.is_empty() {
        return cores();
    }
    match t.parse::<usize>() {
        Ok(n) if (1..=MAX_WORKERS).contains(&n) => n,
        r => {
            let n = cores();
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                let why = match r {
                    Ok(0) => "a runtime needs at least 1 worker".to_owned(),
                    Ok(_) => format!("a runtime can have at most {MAX_WORKERS} workers"),
                    Err(_) => "not a number of workers".to_owned(),
                };
                eprintln!(
                    "hoare: warning: ignoring HOARE_WORKERS={v:?} ({why}); using the {n} \
                     available core(s)"
                );
            });
            n
        }
    }
}

/// An M:N runtime: worker threads running processes.
///
/// ```
/// let rt = hoare_runtime::Runtime::builder().workers(2).build();
/// assert_eq!(rt.run(|| 1 + 1), 2);
/// ```
pub struct Runtime {
    core: Core,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("workers", &self.workers())
            .finish()
    }
}

impl Default for Runtime {
    fn default() -> Self {
        Self::new()
    }
}

impl Runtime {
    /// A runtime with default settings.
    ///
    /// # Panics
    /// If it cannot start (the OS refuses a worker thread); use
    /// [`Runtime::builder`] to get the error instead.
    pub fn new() -> Runtime {
        RuntimeBuilder::default().build()
    }
    /// A builder.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }
    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.core.workers()
    }

    /// Runs `f` as the root process, waits for it, then shuts down: processes still
    /// blocked are unwound (their destructors run). Returns `f`'s result or the
    /// error that ended it: its panic, or [`ProcessError::Deadlock`] if every
    /// process blocked with nothing left to wake any (see [`crate::run`]).
    #[track_caller]
    pub fn try_run<P>(mut self, f: P) -> Result<P::Output, ProcessError>
    where
        P: Process,
    {
        let shared: Arc<Shared> = self.core.shared.clone();
        let opts = SpawnOpts {
            name: Some("main".into()),
            stack_size: None,
            pinned: false,
            site: Location::caller(),
            captures: (0, 0),
            shared: &shared,
        };
        let (slot, mine) = SlotRef::<P::Output>::pair();
        let fin = Finish {
            slot: Some(mine),
            scope: std::ptr::null(),
        };
        let done = RootDone(shared.clone());
        // SAFETY: `f` may borrow from the caller: we join the root (or, after a
        // deadlock, unwind it) and, at shutdown, unwind every other process before
        // returning.
        let spawned = unsafe {
            spawn::spawn_raw(opts, move || {
                let _done = done;
                run_body(f, fin)
            })
        };
        if let Err(e) = spawned {
            // A fresh runtime's default stack was checked when it started: only
            // the OS can refuse the memory here.
            panic!("hoare: cannot start the root process: {}", spawn_error(e));
        }
        // Not counted as a thread that may wake a process while it waits here
        // (only the root's end or the detector end this wait).
        if let Some(report) = hoare_core::park::uncounted(|| shared.gate.wait()) {
            self.core.shutdown();
            drop(slot);
            return Err(ProcessError::Deadlock(Box::new(report)));
        }
        let r = slot.join();
        self.core.shutdown();
        r
    }

    /// Like [`try_run`](Self::try_run) but re-raises a panic of the root process.
    #[track_caller]
    pub fn run<P>(self, f: P) -> P::Output
    where
        P: Process,
    {
        match self.try_run(f) {
            Ok(v) => v,
            Err(e) => e.resume(),
        }
    }
}

impl Runtime {
    /// A [`Handle`] to this runtime, for plain threads (or callbacks from a C
    /// library) that spawn processes into it while it runs.
    ///
    /// ```
    /// let rt = hoare_runtime::Runtime::builder().workers(2).build();
    /// let h = rt.handle();
    /// let t = std::thread::spawn(move || h.spawn(|| 6 * 7).join());
    /// assert_eq!(t.join().unwrap().unwrap(), 42);
    /// rt.shutdown();
    /// ```
    pub fn handle(&self) -> Handle {
        Handle {
            shared: self.core.shared.clone(),
        }
    }

    /// Spawns `p` into this runtime from any thread: [`Handle::spawn`].
    #[track_caller]
    pub fn spawn<P>(&self, p: P) -> JoinHandle<P::Output>
    where
        P: Process + 'static,
    {
        self.handle().spawn(p)
    }

    /// Shuts the runtime down now, as [`run`](Self::run) does when its root
    /// returns (`docs/semantics.md#shutdown`): the workers stop, and every process
    /// that has not finished is cancelled and unwound (its destructors run); the
    /// join handles of those report [`ProcessError::Cancelled`], and a spawn
    /// through a [`Handle`] afterwards gives a handle that reports it too.
    /// Dropping a `Runtime` does the same.
    ///
    /// ```
    /// let rt = hoare_runtime::Runtime::builder().workers(1).build();
    /// let (tx, rx) = hoare_core::chan::one2one::<u32>();
    /// let stuck = rt.spawn(move || rx.recv()); // nobody ever sends
    /// let done = rt.spawn(|| 1);
    /// assert_eq!(done.join().unwrap(), 1);
    /// rt.shutdown(); // unwinds the blocked receiver
    /// assert!(matches!(stuck.join(), Err(hoare_runtime::ProcessError::Cancelled)));
    /// drop(tx);
    /// ```
    pub fn shutdown(mut self) {
        self.core.shutdown();
    }
}

/// A handle to a running [`Runtime`] (tokio's `Handle`): cheap to clone, `Send`
/// and `Sync`, so plain threads and callbacks from C code can keep one (in a
/// `static`, say) and spawn processes into the runtime and join them, while the
/// thread that owns the `Runtime` uses it too, and shuts it down explicitly
/// ([`Runtime::shutdown`]) or by dropping it.
///
/// ```
/// use hoare_runtime::{Handle, Runtime};
/// use std::sync::OnceLock;
///
/// static RT: OnceLock<Handle> = OnceLock::new();
///
/// // A callback a C library calls on its own threads.
/// extern "C" fn on_event(x: u32) -> u32 {
///     let h = RT.get().expect("the runtime is running");
///     h.spawn(move || x * 2).join().unwrap_or(0)
/// }
///
/// let rt = Runtime::builder().workers(2).build();
/// RT.set(rt.handle()).unwrap();
/// let threads: Vec<_> = (0..4).map(|i| std::thread::spawn(move || on_event(i))).collect();
/// let sum: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
/// assert_eq!(sum, 12);
/// rt.shutdown();
/// ```
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("workers", &self.shared.workers.len())
            .field("shut_down", &self.is_shut_down())
            .finish()
    }
}

impl Handle {
    /// The handle of the runtime the caller runs in (a process, or a thread
    /// process), if any.
    ///
    /// ```
    /// let h = hoare_runtime::run(|| hoare_runtime::Handle::current().unwrap());
    /// assert!(h.is_shut_down()); // `run` shut it down when its root returned
    /// assert!(hoare_runtime::Handle::current().is_none()); // not in a runtime here
    /// ```
    pub fn current() -> Option<Handle> {
        Shared::with_current(|sh| Handle { shared: sh.clone() })
    }

    /// Spawns `p` into the runtime, from any thread (a process of this or another
    /// runtime, a plain thread, a callback from C); the handle joins it from any
    /// thread too. After the runtime has shut down, `p` is dropped without running
    /// and the handle reports [`ProcessError::Cancelled`].
    ///
    /// # Panics
    /// If the OS refuses the memory for the process's stack (see
    /// [`try_spawn`](Self::try_spawn)).
    #[track_caller]
    pub fn spawn<P>(&self, p: P) -> JoinHandle<P::Output>
    where
        P: Process + 'static,
    {
        match self.spawn_inner(p) {
            Ok(h) => h,
            Err(f) => f.handle_or_panic(),
        }
    }

    /// [`spawn`](Self::spawn), with the failure as an error (the runtime has shut
    /// down: [`Other`](io::ErrorKind::Other); no memory for the stack).
    ///
    /// ```
    /// let rt = hoare_runtime::Runtime::new();
    /// let h = rt.handle();
    /// rt.shutdown();
    /// assert!(h.try_spawn(|| ()).is_err());
    /// ```
    #[track_caller]
    pub fn try_spawn<P>(&self, p: P) -> io::Result<JoinHandle<P::Output>>
    where
        P: Process + 'static,
    {
        self.spawn_inner(p).map_err(|f| f.error)
    }

    #[track_caller]
    fn spawn_inner<P>(&self, p: P) -> Result<JoinHandle<P::Output>, Failed<P::Output>>
    where
        P: Process + 'static,
    {
        let opts = SpawnOpts {
            name: None,
            stack_size: None,
            pinned: false,
            site: Location::caller(),
            captures: (0, 0),
            shared: &self.shared,
        };
        let (slot, mine) = SlotRef::<P::Output>::pair();
        let fin = Finish {
            slot: Some(mine),
            scope: std::ptr::null(),
        };
        // SAFETY: 'static: nothing borrowed can dangle.
        match unsafe { spawn::spawn_raw(opts, move || run_body(p, fin)) } {
            Ok(id) => Ok(JoinHandle { slot, id }),
            Err(e) => Err(Failed::new(e, JoinHandle { slot, id: 0 })),
        }
    }

    /// Whether the runtime has begun to shut down.
    pub fn is_shut_down(&self) -> bool {
        self.shared
            .shutdown
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// The runtime's number of workers.
    pub fn workers(&self) -> usize {
        self.shared.workers.len()
    }
}

/// Runs `f` as the root process of a new default runtime ([`default_workers`]
/// workers) and returns its result; a panic in `f` is re-raised here after the
/// runtime has shut down.
///
/// ```
/// assert_eq!(hoare_runtime::run(|| "done"), "done");
/// ```
///
/// # Deadlock
/// If every live process blocks and nothing can wake any of them, `run` panics
/// with a report (and [`try_run`] returns [`ProcessError::Deadlock`]) within a few
/// milliseconds, instead of hanging: see
/// [`RuntimeBuilder::on_deadlock`]. hoare can be sure when nothing outside its
/// processes can end their waits: no timer is pending, every thread process and
/// every plain OS thread that has used hoare is parked in a hoare wait without a
/// deadline (or has exited), and no process waits on a channel or barrier made
/// outside every process (a plain thread may feed those, so they never count as
/// deadlocked). Its blind spot: a plain OS thread that was handed an end of a
/// channel made inside a process and has not used hoare yet; run such code with
/// [`spawn_blocking`](crate::spawn_blocking), make the channel outside, or use
/// [`OnDeadlock::Warn`](crate::OnDeadlock::Warn).
///
/// ```should_panic
/// hoare_runtime::run(|| {
///     let (_tx, rx) = hoare_core::chan::one2one::<u32>();
///     rx.recv() // nobody will ever send: "hoare: deadlock: ..."
/// });
/// ```
#[track_caller]
pub fn run<P: Process>(f: P) -> P::Output {
    Runtime::new().run(f)
}

/// [`run`] without re-raising: the root's panic comes back as an error.
#[track_caller]
pub fn try_run<P: Process>(f: P) -> Result<P::Output, ProcessError> {
    Runtime::new().try_run(f)
}
