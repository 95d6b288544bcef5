//! The public API: runtimes, spawning, joining, per-process operations.

use crate::context;
use crate::lifecycle::Core;
use crate::proc;
use crate::shared::{Shared, ThreadRt};
use crate::spawn::{self, SpawnError, SpawnOpts};
use hoare_core::sched::JoinSlot;
use std::any::Any;
use std::fmt;
use std::io;
use std::panic::Location;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default usable stack size of a process: 128 KiB.
///
/// Only the pages a process touches cost memory: a blocked process that never
/// went deep costs one resident 4 KiB page whatever the size (its header shares
/// the top page of its stack), plus its share of the page tables that map its
/// slot, which grows with the size. Measured with `examples/spawn` (100,000 and
/// 1,000,000 blocked processes, 1 worker): 4,165 bytes resident per process at
/// 64 KiB and at 256 KiB alike; page tables 143 bytes per process at 64 KiB, 273 at
/// 128 KiB, 529 at 256 KiB (2,069 at 1 MiB); spawn and join CPU time the same
/// within noise up to 256 KiB (+15% system time at 1 MiB). Address space: 136 KiB
/// per process (guard page, stack, header page). Larger stacks spread a network's
/// stack tops over more page tables: the 503-process ring ran about 10% slower
/// with 256 KiB stacks than with 64 KiB (more misses in the TLB and the caches of
/// the page walk), 4% with 128 KiB.
///
/// # Large values
/// Channel operations move a value by pointer, once into the channel and once
/// out: a send keeps no copy on the stack besides the caller's value and the
/// `Result` it returns (which gives the value back on failure), a receive one
/// besides the caller's `Result`, and an alt's receive guard (or `recv_any`) one
/// more. So in an optimised build a process with the default stack can send and
/// receive values of up to **32 KiB** by every operation (`send`/`recv`, their
/// `try_`, `_timeout` and `_deadline` forms, `recv_with`,
/// [`alt!`](hoare_core::alt!) and [`Alt`](hoare_core::alt::Alt) guards,
/// `recv_any`) on every kind of channel, with room left for a few copies in its
/// own code (a value it holds, a pattern that binds it, a retry loop): the tests
/// send and receive 32 KiB values through each of them. A debug build copies a
/// value many times more (up to about 20 times through an alt): there, or for
/// larger values, give the process a larger stack ([`Builder::stack_size`],
/// [`RuntimeBuilder::stack_size`]) or send a `Box`.
pub const DEFAULT_STACK_SIZE: usize = 128 * 1024;

/// The largest usable stack size a process (or a runtime's default) may have:
/// 1 GiB, Go's limit for a goroutine. A larger [`Builder::stack_size`] makes
/// [`Builder::spawn`] fail, and a larger [`RuntimeBuilder::stack_size`] makes
/// [`RuntimeBuilder::build`] fail, with [`io::ErrorKind::InvalidInput`].
pub const MAX_STACK_SIZE: usize = 1 << 30;

/// The most workers a runtime can have: 65,534 (see
/// [`hoare_core::sched::MAX_WORKERS`]).
pub const MAX_WORKERS: usize = hoare_core::sched::MAX_WORKERS;

/// Why a process produced no result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessError {
    /// The process panicked; `message` is the panic message (or a placeholder when
    /// the payload was not a string).
    Panicked {
        /// The panic message.
        message: String,
    },
    /// The runtime shut down (its root process returned) before the process
    /// finished; it was unwound.
    Cancelled,
}

impl ProcessError {
    /// The panic message, if the process panicked.
    pub fn message(&self) -> Option<&str> {
        match self {
            ProcessError::Panicked { message } => Some(message),
            ProcessError::Cancelled => None,
        }
    }

    /// The error of a process whose body panicked with the payload `e` (its message
    /// if it is a string).
    pub fn from_panic(e: &(dyn Any + Send)) -> Self {
        let message = if let Some(s) = e.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = e.downcast_ref::<String>() {
            s.clone()
        } else {
            "<non-string panic payload>".to_owned()
        };
        ProcessError::Panicked { message }
    }

    /// Re-raises this error as a panic in the caller (used by `par` and `run`).
    fn resume(self) -> ! {
        match self {
            ProcessError::Panicked { message } => resume_unwind(Box::new(message)),
            ProcessError::Cancelled => panic!("hoare: process cancelled by runtime shutdown"),
        }
    }
}

impl fmt::Display for ProcessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessError::Panicked { message } => write!(f, "process panicked: {message}"),
            ProcessError::Cancelled => f.write_str("process cancelled by runtime shutdown"),
        }
    }
}

impl std::error::Error for ProcessError {}

type Slot<T> = JoinSlot<Result<T, ProcessError>>;

/// A join slot shared by exactly two owners (the process and its handle). Unlike
/// an `Arc` it is born with both references, and the last owner frees it without
/// an atomic read-modify-write: two fewer locked instructions per spawn.
struct SlotRef<T>(std::ptr::NonNull<SlotBox<T>>);

struct SlotBox<T> {
    refs: std::sync::atomic::AtomicUsize,
    slot: Slot<T>,
}

// SAFETY: the slot is `Sync` for `T: Send` and the count is atomic.
unsafe impl<T: Send> Send for SlotRef<T> {}
// SAFETY: see `Send`.
unsafe impl<T: Send> Sync for SlotRef<T> {}

impl<T> SlotRef<T> {
    /// The two references: the process's and the handle's.
    fn pair() -> (Self, Self) {
        let b = Box::new(SlotBox {
            refs: std::sync::atomic::AtomicUsize::new(2),
            slot: JoinSlot::new(),
        });
        let p = std::ptr::NonNull::from(Box::leak(b));
        (SlotRef(p), SlotRef(p))
    }
}

impl<T> std::ops::Deref for SlotRef<T> {
    type Target = Slot<T>;
    fn deref(&self) -> &Slot<T> {
        // SAFETY: alive while either reference is.
        unsafe { &self.0.as_ref().slot }
    }
}

impl<T> Drop for SlotRef<T> {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering;
        // SAFETY: alive until the last reference goes; a count of 1 seen with
        // Acquire means the other owner is gone for good, so nobody can race us.
        unsafe {
            let refs = &self.0.as_ref().refs;
            if refs.load(Ordering::Acquire) == 1 || refs.fetch_sub(1, Ordering::AcqRel) == 1 {
                drop(Box::from_raw(self.0.as_ptr()));
            }
        }
    }
}

/// A process's body as a value (SPEC P4). Closures `FnOnce() -> T + Send` are
/// processes too, so anything that takes a `Process` takes a closure.
///
/// ```
/// struct Square(u64);
/// impl hoare_runtime::Process for Square {
///     type Output = u64;
///     fn run(self) -> u64 { self.0 * self.0 }
/// }
/// let r = hoare_runtime::run(|| hoare_runtime::spawn(Square(7)).join().unwrap());
/// assert_eq!(r, 49);
/// ```
pub trait Process: Send {
    /// What the process returns.
    type Output: Send;
    /// The process's body.
    fn run(self) -> Self::Output;
}

impl<F, T> Process for F
where
    F: FnOnce() -> T + Send,
    T: Send,
{
    type Output = T;
    fn run(self) -> T {
        self()
    }
}

/// Waits for a process and gives its result.
#[must_use = "dropping a JoinHandle detaches the process"]
pub struct JoinHandle<T> {
    slot: SlotRef<T>,
    id: u64,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").field("id", &self.id).finish()
    }
}

impl<T> JoinHandle<T> {
    /// Blocks until the process ends and returns its result, or the error that
    /// ended it. From a process this blocks only the process; from a plain thread it
    /// blocks the thread.
    ///
    /// A process being unwound by its runtime's shutdown does not wait: it gets
    /// [`ProcessError::Cancelled`] unless the process has ended already.
    pub fn join(self) -> Result<T, ProcessError> {
        self.slot
            .join_or_cancel()
            .unwrap_or(Err(ProcessError::Cancelled))
    }

    /// Whether the process has ended.
    pub fn is_finished(&self) -> bool {
        self.slot.is_complete()
    }

    /// The process's id.
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// Completes a process's join slot (and counts down its scope) when dropped, so a
/// process that is unwound at shutdown, or dropped before it ever ran, still
/// reports `Cancelled` and releases its scope.
struct Finish<T> {
    slot: Option<SlotRef<T>>,
    scope: *const ScopeData,
}

// SAFETY: the scope pointer is only used to count down the scope's atomics, and
// the slot is an `Arc` of a `Sync` slot for `T: Send`.
unsafe impl<T: Send> Send for Finish<T> {}

impl<T> Finish<T> {
    fn complete(&mut self, r: Result<T, ProcessError>) {
        if let Some(s) = self.slot.take() {
            s.complete(r);
        }
    }
}

impl<T> Drop for Finish<T> {
    fn drop(&mut self) {
        // The slot goes first: its value may borrow from the scope's environment.
        if let Some(s) = self.slot.take() {
            s.complete(Err(ProcessError::Cancelled));
        }
        if !self.scope.is_null() {
            // SAFETY: the scope waits for this count-down before its data goes.
            unsafe { ScopeData::child_done(self.scope) };
        }
    }
}

fn no_runtime() -> ! {
    panic!("hoare: spawn called outside a runtime (use hoare::run)")
}

/// The error of a spawn into a runtime that has shut down.
#[derive(Debug)]
struct ShutDown;

impl fmt::Display for ShutDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("hoare: cannot spawn: the runtime has shut down")
    }
}

impl std::error::Error for ShutDown {}

/// A failed spawn: the error, and a handle that reports the process `Cancelled`
/// (its body was dropped without running).
struct Failed<T> {
    error: io::Error,
    shut_down: bool,
    handle: JoinHandle<T>,
}

impl<T> Failed<T> {
    fn new(e: SpawnError, handle: JoinHandle<T>) -> Self {
        let (error, shut_down) = match e {
            SpawnError::ShutDown => (io::Error::other(ShutDown), true),
            SpawnError::Io(e) => (e, false),
        };
        Self {
            error,
            shut_down,
            handle,
        }
    }

    /// What the free functions (`spawn`, `spawn_blocking`, `Scope::spawn`) make of
    /// a failure: after shutdown, a handle whose `join` reports `Cancelled` (as
    /// tokio's `spawn` after shutdown: a destructor that spawns while the shutdown
    /// sweep unwinds its process must not panic); else a panic with the error, as
    /// `std::thread::spawn` panics when the OS refuses a thread.
    #[track_caller]
    fn handle_or_panic(self) -> JoinHandle<T> {
        if self.shut_down {
            return self.handle;
        }
        panic!("hoare: cannot spawn a process: {}", self.error)
    }
}

/// Builds a process with options.
///
/// ```
/// use hoare_runtime::{run, Builder};
/// let n = run(|| {
///     Builder::new().name("worker").stack_size(128 * 1024)
///         .spawn(|| hoare_runtime::name().unwrap())
///         .join().unwrap()
/// });
/// assert_eq!(n, "worker");
/// ```
///
/// Bad options are errors from [`try_spawn`](Builder::try_spawn) (and a panic
/// with the same message from [`spawn`](Builder::spawn)):
///
/// ```
/// use hoare_runtime::{run, Builder};
/// let e = run(|| Builder::new().stack_size(usize::MAX).try_spawn(|| ()).unwrap_err());
/// assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
/// ```
#[derive(Debug, Default, Clone)]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
    pinned: bool,
    thread: bool,
    /// Where the process was spawned, for reports (default: the caller of the
    /// spawn function; `par` and friends pass their own caller's).
    site: Option<&'static Location<'static>>,
}

impl Builder {
    /// Default options: unnamed, the runtime's stack size, not pinned, a coroutine.
    pub fn new() -> Self {
        Self::default()
    }
    /// Names the process (shown by [`name`] and in overflow reports).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Usable stack size in bytes (rounded up to pages, at least 16 KiB; at most
    /// [`MAX_STACK_SIZE`], else [`spawn`](Self::spawn) fails with
    /// [`InvalidInput`](io::ErrorKind::InvalidInput)). Only the pages a process
    /// touches cost memory. For a thread process ([`thread`](Self::thread)) it is
    /// the thread's stack size.
    ///
    /// With the default ([`DEFAULT_STACK_SIZE`], 128 KiB) a process can send
    /// and receive values of up to 32 KiB by every channel operation (in an
    /// optimised build; see there); one that moves larger values, or recurses
    /// deeply, needs more.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }
    /// Pins the process to the worker it first runs on (for thread-local state).
    pub fn pinned(mut self, pinned: bool) -> Self {
        self.pinned = pinned;
        self
    }
    /// Records `site` as where the process was spawned (for `par` and friends,
    /// which spawn on their caller's behalf).
    pub(crate) fn at(mut self, site: &'static Location<'static>) -> Self {
        self.site = Some(site);
        self
    }
    /// Runs the process on its own OS thread (for blocking system calls); channel
    /// operations there block the thread.
    pub fn thread(mut self, thread: bool) -> Self {
        self.thread = thread;
        self
    }

    /// Spawns `p` in the caller's runtime.
    ///
    /// # Panics
    /// Outside a runtime, and where [`try_spawn`](Self::try_spawn) fails (an
    /// absurd stack size, no memory for the stack), with the error's message.
    /// After the runtime has shut down it does not panic: the handle reports
    /// [`ProcessError::Cancelled`] (a destructor that spawns while the shutdown
    /// sweep unwinds its process must not panic).
    #[track_caller]
    pub fn spawn<P>(self, p: P) -> JoinHandle<P::Output>
    where
        P: Process + 'static,
    {
        // SAFETY: 'static: nothing borrowed can dangle.
        match unsafe { self.spawn_unchecked(p, std::ptr::null()) } {
            Ok(h) => h,
            Err(f) => f.handle_or_panic(),
        }
    }

    /// Spawns `p` in the caller's runtime, like `std::thread::Builder::spawn`: an
    /// error, and `p` dropped without running, if
    /// * the stack size is above [`MAX_STACK_SIZE`], or, for a thread process, the
    ///   name holds a NUL byte ([`InvalidInput`](io::ErrorKind::InvalidInput));
    /// * the OS refuses the memory for its stack, or the thread of a thread
    ///   process (the OS error: [`OutOfMemory`](io::ErrorKind::OutOfMemory), …);
    /// * the runtime has shut down (its root returned) and the caller is not one
    ///   of its processes still running on a worker
    ///   ([`Other`](io::ErrorKind::Other)): a thread process that outlived
    ///   [`Runtime::run`], or a destructor running during the shutdown sweep.
    ///
    /// # Panics
    /// Outside a runtime.
    #[track_caller]
    pub fn try_spawn<P>(self, p: P) -> io::Result<JoinHandle<P::Output>>
    where
        P: Process + 'static,
    {
        // SAFETY: 'static: nothing borrowed can dangle.
        unsafe { self.spawn_unchecked(p, std::ptr::null()) }.map_err(|f| f.error)
    }

    /// # Safety
    /// Everything `p` borrows outlives the process (the scope joins it first).
    #[track_caller]
    unsafe fn spawn_unchecked<P: Process>(
        self,
        p: P,
        scope: *const ScopeData,
    ) -> Result<JoinHandle<P::Output>, Failed<P::Output>> {
        // Not `unwrap_or_else(Location::caller)`: that would report the closure
        // call inside `unwrap_or_else`.
        let site = match self.site {
            Some(site) => site,
            None => Location::caller(),
        };
        let (slot, mine) = SlotRef::pair();
        let mut fin = Finish {
            slot: Some(mine),
            scope,
        };
        if self.thread {
            let sh = Shared::current().unwrap_or_else(|| no_runtime());
            let id = proc::fresh_ids(1);
            let handle = JoinHandle { slot, id };
            if sh.refuses_spawns(false) {
                drop((p, fin));
                return Err(Failed::new(SpawnError::ShutDown, handle));
            }
            let mut b = std::thread::Builder::new();
            if let Some(n) = &self.name {
                if n.contains('\0') {
                    drop((p, fin));
                    let e = io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "hoare: a thread process's name may not contain a NUL byte",
                    );
                    return Err(Failed::new(SpawnError::Io(e), handle));
                }
                b = b.name(n.clone());
            }
            if let Some(s) = self.stack_size {
                if s > MAX_STACK_SIZE {
                    drop((p, fin));
                    let e = io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "hoare: a stack of {s} bytes is larger than the largest allowed, \
                             {MAX_STACK_SIZE} bytes (1 GiB)"
                        ),
                    );
                    return Err(Failed::new(SpawnError::Io(e), handle));
                }
                b = b.stack_size(s);
            }
            // Counted before its thread exists: a shutdown that begins meanwhile
            // waits for it too.
            sh.threads.register(id, self.name.clone(), site);
            let registry = sh.clone();
            let body = move || {
                let rt = ThreadRt::enter(sh);
                context::set_thread_id(id);
                registry.threads.started(id);
                let r = catch_unwind(AssertUnwindSafe(|| p.run()));
                fin.complete(r.map_err(|e| ProcessError::from_panic(&*e)));
                drop(fin);
                drop(rt);
                registry.threads.ended(id);
            };
            let body: Box<dyn FnOnce() + Send + '_> = Box::new(body);
            // SAFETY: lifetime erased; the caller's contract keeps borrows alive
            // until the process finishes (the scope waits for `fin`).
            let body: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(body) };
            // On failure `spawn` drops `body` (so `fin`: the handle reports
            // `Cancelled` and a scope is counted down).
            return match b.spawn(body) {
                Ok(_) => Ok(handle),
                Err(e) => {
                    if let Some(sh) = Shared::current() {
                        sh.threads.ended(id);
                    }
                    let e = io::Error::new(
                        e.kind(),
                        format!("hoare: cannot start a thread process: {e}"),
                    );
                    Err(Failed::new(SpawnError::Io(e), handle))
                }
            };
        }
        let Builder {
            name,
            stack_size,
            pinned,
            ..
        } = self;
        let r = Shared::with_current(|sh| {
            let opts = SpawnOpts {
                name: name.map(String::into_boxed_str),
                stack_size,
                pinned,
                site,
                shared: sh,
            };
            // SAFETY: forwarded from our caller.
            unsafe {
                spawn::spawn_raw(opts, move || {
                    let r = catch_unwind(AssertUnwindSafe(|| p.run()));
                    match r {
                        Ok(v) => fin.complete(Ok(v)),
                        Err(e) => {
                            let p = proc::current();
                            if !p.is_null() && (*p).unwinding.get() {
                                fin.complete(Err(ProcessError::Cancelled));
                                drop(fin);
                                resume_unwind(e);
                            }
                            fin.complete(Err(ProcessError::from_panic(&*e)));
                        }
                    }
                })
            }
        })
        .unwrap_or_else(|| no_runtime());
        match r {
            Ok(id) => Ok(JoinHandle { slot, id }),
            Err(e) => Err(Failed::new(e, JoinHandle { slot, id: 0 })),
        }
    }
}

/// Spawns a process (a closure or a [`Process`]) in the caller's runtime.
///
/// ```
/// let v = hoare_runtime::run(|| hoare_runtime::spawn(|| 6 * 7).join().unwrap());
/// assert_eq!(v, 42);
/// ```
///
/// After the runtime has shut down (from a thread process that outlived it, or a
/// destructor running in the shutdown sweep), `p` is dropped without running and
/// the handle's [`join`](JoinHandle::join) reports [`ProcessError::Cancelled`], as
/// tokio's `spawn` does; [`Builder::spawn`] reports it as an error.
///
/// # Panics
/// Outside a runtime, or if the OS refuses the memory for the process's stack (as
/// `std::thread::spawn` panics when it cannot start a thread; [`Builder::spawn`]
/// returns the error instead).
#[track_caller]
pub fn spawn<P>(p: P) -> JoinHandle<P::Output>
where
    P: Process + 'static,
{
    // SAFETY: 'static: nothing borrowed can dangle.
    unsafe { Builder::new().spawn_unchecked(p, std::ptr::null()) }
        .unwrap_or_else(Failed::handle_or_panic)
}

/// Runs `f` on its own OS thread as a process of the caller's runtime (for
/// blocking system calls); joined like any process.
///
/// # Panics
/// As [`spawn`] (here: if the OS cannot start the thread).
#[track_caller]
pub fn spawn_blocking<P>(p: P) -> JoinHandle<P::Output>
where
    P: Process + 'static,
{
    // SAFETY: 'static: nothing borrowed can dangle.
    unsafe {
        Builder::new()
            .thread(true)
            .spawn_unchecked(p, std::ptr::null())
    }
    .unwrap_or_else(Failed::handle_or_panic)
}

/// The id of the calling process (a plain thread gets an id of its own on first
/// use).
pub fn id() -> u64 {
    let p = proc::current();
    if !p.is_null() {
        // SAFETY: the running process's header is valid while it runs.
        return unsafe { (*p).id };
    }
    match context::thread_id() {
        0 => {
            let id = proc::fresh_ids(1);
            context::set_thread_id(id);
            id
        }
        id => id,
    }
}

/// Whether the caller runs as a process of a runtime: a process on a worker, or a
/// process on an OS thread of its own ([`spawn_blocking`], [`Builder::thread`]).
/// `false` on a plain OS thread. Where it is `true`, [`spawn`] has a runtime to
/// spawn into.
///
/// [`hoare_core::park::in_process`] answers a narrower question, whether blocking
/// parks a process on a worker: it is `false` in a thread process too, whose
/// operations block its OS thread.
///
/// ```
/// use hoare_runtime::{in_process, run, spawn_blocking};
/// assert!(!in_process());
/// run(|| {
///     assert!(in_process());
///     assert!(spawn_blocking(in_process).join().unwrap());
/// });
/// ```
// Never inlined: it reads thread-locals (see `context`).
#[inline(never)]
pub fn in_process() -> bool {
    !proc::current().is_null() || !context::thread_rt().is_null()
}

/// The name of the calling process (for a thread: the thread's name).
pub fn name() -> Option<String> {
    let p = proc::current();
    if !p.is_null() {
        // SAFETY: as in `id`.
        return unsafe { (*p).name.as_deref().map(str::to_owned) };
    }
    std::thread::current().name().map(str::to_owned)
}

/// Lets other processes run: requeues the caller at the back of its worker's queue.
/// On a plain thread: `std::thread::yield_now`.
///
/// A loop that polls channels needs no explicit yield (failed polls spend a
/// [cooperative budget](hoare_core::park#the-cooperative-budget) and yield when it
/// runs out), but a long computation that neither blocks nor polls does: call this
/// now and then, or the processes queued on its worker, and its due timers, wait.
// Inlined into the caller: a context switch from inside an extra (non-inlined)
// call level costs several times more (return-address mispredictions).
#[inline]
pub fn yield_now() {
    let p = proc::current();
    if p.is_null() {
        thread_yield();
    } else {
        // SAFETY: as in `id`; the reference is not kept after the switch.
        unsafe { (*p).yield_now() }
    }
}

#[cold]
fn thread_yield() {
    std::thread::yield_now();
}

/// Sleeps the calling process (or thread) until `t`: the core's
/// [`sleep_until`](hoare_core::timer::sleep_until), which parks a process on its
/// worker's timers and a plain thread on the OS.
pub fn sleep_until(t: Instant) {
    hoare_core::timer::sleep_until(t)
}

/// Sleeps the calling process (or thread) for `d`. A `d` too long to add to an
/// `Instant` (`Duration::MAX`) sleeps for [`FAR_FUTURE`](hoare_core::timer::FAR_FUTURE),
/// about a century: for ever, in practice.
pub fn sleep_for(d: Duration) {
    hoare_core::timer::sleep_for(d);
}

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
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        Self {
            workers: None,
            stack_size: DEFAULT_STACK_SIZE,
            thread_name: "hoare-worker".into(),
            shutdown_timeout: None,
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
    pub fn try_build(self) -> io::Result<Runtime> {
        let workers = self.workers.unwrap_or_else(default_workers);
        Ok(Runtime {
            core: Core::start(
                workers,
                self.stack_size,
                self.thread_name,
                self.shutdown_timeout,
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
    /// error that ended it.
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
            shared: &shared,
        };
        let (slot, mine) = SlotRef::<P::Output>::pair();
        let mut fin = Finish {
            slot: Some(mine),
            scope: std::ptr::null(),
        };
        // SAFETY: `f` may borrow from the caller: we join the root and, at shutdown,
        // unwind every other process before returning.
        let spawned = unsafe {
            spawn::spawn_raw(opts, move || {
                let r = catch_unwind(AssertUnwindSafe(|| f.run()));
                if let Err(e) = &r {
                    let p = proc::current();
                    if !p.is_null() && (*p).unwinding.get() {
                        let e = r.err().expect("err");
                        fin.complete(Err(ProcessError::Cancelled));
                        drop(fin);
                        resume_unwind(e);
                    }
                    let _ = e;
                }
                fin.complete(r.map_err(|e| ProcessError::from_panic(&*e)));
            })
        };
        if let Err(e) = spawned {
            // A fresh runtime's default stack was checked when it started: only
            // the OS can refuse the memory here.
            let e = Failed::new(e, JoinHandle { slot, id: 0 }).error;
            panic!("hoare: cannot start the root process: {e}");
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

/// Runs `f` as the root process of a new default runtime ([`default_workers`]
/// workers) and returns its result; a panic in `f` is re-raised here after the
/// runtime has shut down.
///
/// ```
/// assert_eq!(hoare_runtime::run(|| "done"), "done");
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

// ---------------------------------------------------------------- scopes and PAR

/// Counts a scope's running children; the last one wakes the scope's owner.
struct ScopeData {
    pending: std::sync::atomic::AtomicUsize,
    waiter: std::sync::atomic::AtomicPtr<hoare_core::waiter::Waiter>,
    panics: std::sync::atomic::AtomicUsize,
}

impl ScopeData {
    /// # Safety
    /// `this` is alive: its owner waits for every child's count-down.
    unsafe fn child_done(this: *const ScopeData) {
        use std::sync::atomic::Ordering;
        // SAFETY: caller's contract; after our decrement we touch `this` only if we
        // were last, and then the owner is still waiting for our wake-up.
        unsafe {
            if (*this).pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                let w = (*this).waiter.load(Ordering::Acquire);
                hoare_core::waiter::Waiter::try_wake(w, 0, false);
            }
        }
    }
}

/// A scope in which processes may borrow from the enclosing stack frame; see
/// [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    data: ScopeData,
    _scope: std::marker::PhantomData<&'scope mut &'scope ()>,
    _env: std::marker::PhantomData<&'env mut &'env ()>,
}

/// A handle to a process of a [`Scope`].
#[must_use = "an unjoined scoped process is joined at the end of its scope"]
pub struct ScopedJoinHandle<'scope, T> {
    inner: JoinHandle<T>,
    scope: &'scope ScopeData,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the process and returns its result (a panic joined here no longer
    /// makes the scope panic).
    pub fn join(self) -> Result<T, ProcessError> {
        let r = self.inner.join();
        if matches!(r, Err(ProcessError::Panicked { .. })) {
            self.scope
                .panics
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
        r
    }
    /// The process's id.
    pub fn id(&self) -> u64 {
        self.inner.id
    }
    /// Whether the process has ended.
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns a process that may borrow anything that outlives the scope.
    ///
    /// # Panics
    /// As [`spawn`](crate::spawn).
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let inner = self
            .spawn_inner(Builder::new(), f)
            .unwrap_or_else(Failed::handle_or_panic);
        ScopedJoinHandle {
            inner,
            scope: &self.data,
        }
    }

    /// [`spawn`](Self::spawn) with [`Builder`] options.
    ///
    /// # Panics
    /// As [`Builder::spawn`].
    #[track_caller]
    pub fn spawn_with<F, T>(&'scope self, b: Builder, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let inner = match self.spawn_inner(b, f) {
            Ok(h) => h,
            Err(f) => f.handle_or_panic(),
        };
        ScopedJoinHandle {
            inner,
            scope: &self.data,
        }
    }

    /// [`spawn_with`](Self::spawn_with) that fails as [`Builder::try_spawn`]
    /// does (then `f` was dropped without running).
    #[track_caller]
    pub fn try_spawn_with<F, T>(
        &'scope self,
        b: Builder,
        f: F,
    ) -> io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let inner = self.spawn_inner(b, f).map_err(|f| f.error)?;
        Ok(ScopedJoinHandle {
            inner,
            scope: &self.data,
        })
    }

    #[track_caller]
    fn spawn_inner<F, T>(&'scope self, b: Builder, f: F) -> Result<JoinHandle<T>, Failed<T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        use std::sync::atomic::Ordering;
        self.data.pending.fetch_add(1, Ordering::Relaxed);
        let data: *const ScopeData = &self.data;
        let g = PanicCounter(data);
        let body = move || {
            let g = g;
            match catch_unwind(AssertUnwindSafe(f)) {
                Ok(v) => v,
                Err(e) => {
                    // SAFETY: the scope outlives its children.
                    unsafe { (*g.0).panics.fetch_add(1, Ordering::Relaxed) };
                    resume_unwind(e)
                }
            }
        };
        // SAFETY: the scope waits (in `scope`) for every child's `Finish` to count
        // down before anything the child borrows can go (a failed spawn drops it,
        // which counts down too).
        unsafe { b.spawn_unchecked(body, data) }
    }
}

struct PanicCounter(*const ScopeData);
// SAFETY: only used to reach the scope's atomics, which are Sync.
unsafe impl Send for PanicCounter {}

/// Runs `f` with a [`Scope`] whose processes may borrow from the caller; returns
/// after every one of them has ended, also when `f` panics (the panic is then
/// re-raised). If a child panicked and nobody joined it, `scope` panics.
///
/// ```
/// let mut v = vec![1, 2, 3];
/// hoare_runtime::run(|| {
///     hoare_runtime::scope(|s| {
///         for x in v.iter_mut() {
///             s.spawn(move || *x *= 10);
///         }
///     });
/// });
/// assert_eq!(v, [10, 20, 30]);
/// ```
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    let scope = Scope {
        data: ScopeData {
            pending: AtomicUsize::new(1),
            waiter: AtomicPtr::new(std::ptr::null_mut()),
            panics: AtomicUsize::new(0),
        },
        _scope: std::marker::PhantomData,
        _env: std::marker::PhantomData,
    };
    let r = catch_unwind(AssertUnwindSafe(|| f(&scope)));
    // A private hand-off: the last child to finish wakes this waiter through
    // `ScopeData::waiter`.
    let waiter =
        hoare_core::park::with_current(|p| hoare_core::waiter::Waiter::private(p.unparker()));
    scope
        .data
        .waiter
        .store(&waiter as *const _ as *mut _, Ordering::Release);
    if scope.data.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
        // Not even a shutdown may end this wait early: the children borrow from
        // this frame (the sweep unwinds them first, see `Core::shutdown`).
        waiter.wait_uncancellable();
    }
    match r {
        Err(e) => resume_unwind(e),
        Ok(v) => {
            if scope.data.panics.load(Ordering::Relaxed) > 0 {
                panic!("hoare: a scoped process panicked");
            }
            v
        }
    }
}

fn unwrap_par<T>(r: Result<T, ProcessError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => e.resume(),
    }
}

/// Runs `a` and `b` in parallel (occam `PAR`) and returns both results. A panic in
/// either is re-raised after both ended.
///
/// ```
/// let (x, y) = hoare_runtime::run(|| hoare_runtime::par2(|| 1, || "two"));
/// assert_eq!((x, y), (1, "two"));
/// ```
#[track_caller]
pub fn par2<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let site = Location::caller();
    scope(|s| {
        let hb = s.spawn_with(Builder::new().at(site), b);
        let ra = catch_unwind(AssertUnwindSafe(a));
        let rb = hb.join();
        let ra = ra.unwrap_or_else(|e| resume_unwind(e));
        (ra, unwrap_par(rb))
    })
}

/// Three closures in parallel; see [`par2`].
#[track_caller]
pub fn par3<A, B, C, RA, RB, RC>(a: A, b: B, c: C) -> (RA, RB, RC)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    C: FnOnce() -> RC + Send,
    RA: Send,
    RB: Send,
    RC: Send,
{
    let site = Location::caller();
    scope(|s| {
        let hb = s.spawn_with(Builder::new().at(site), b);
        let hc = s.spawn_with(Builder::new().at(site), c);
        let ra = catch_unwind(AssertUnwindSafe(a));
        let rb = hb.join();
        let rc = hc.join();
        let ra = ra.unwrap_or_else(|e| resume_unwind(e));
        (ra, unwrap_par(rb), unwrap_par(rc))
    })
}

/// A boxed branch of a [`par`].
pub type ParFn<'a, T> = Box<dyn FnOnce() -> T + Send + 'a>;

/// Runs every closure in parallel and returns their results in order.
///
/// ```
/// use hoare_runtime::{par, ParFn};
/// let v = hoare_runtime::run(|| {
///     let fs: Vec<ParFn<u32>> = vec![Box::new(|| 1), Box::new(|| 2)];
///     par(fs)
/// });
/// assert_eq!(v, [1, 2]);
/// ```
#[track_caller]
pub fn par<'a, T: Send + 'a>(fs: Vec<ParFn<'a, T>>) -> Vec<T> {
    let site = Location::caller();
    scope(|s| {
        let mut it = fs.into_iter();
        let Some(first) = it.next() else {
            return Vec::new();
        };
        let hs: Vec<_> = it
            .map(|f| s.spawn_with(Builder::new().at(site), f))
            .collect();
        let r0 = catch_unwind(AssertUnwindSafe(first));
        let rest: Vec<_> = hs.into_iter().map(|h| h.join()).collect();
        let mut out = Vec::with_capacity(rest.len() + 1);
        out.push(r0.unwrap_or_else(|e| resume_unwind(e)));
        out.extend(rest.into_iter().map(unwrap_par));
        out
    })
}

/// Replicated `PAR`: runs `f` on every item in parallel (one process per item)
/// and returns the results in order.
///
/// ```
/// let v = hoare_runtime::run(|| hoare_runtime::par_for(0..4u32, |i| i * i));
/// assert_eq!(v, [0, 1, 4, 9]);
/// ```
#[track_caller]
pub fn par_for<I, F, R>(items: I, f: F) -> Vec<R>
where
    I: IntoIterator,
    I::Item: Send,
    F: Fn(I::Item) -> R + Sync,
    R: Send,
{
    let f = &f;
    let site = Location::caller();
    scope(|s| {
        let hs: Vec<_> = items
            .into_iter()
            .map(|x| s.spawn_with(Builder::new().at(site), move || f(x)))
            .collect();
        let rs: Vec<_> = hs.into_iter().map(|h| h.join()).collect();
        rs.into_iter().map(unwrap_par).collect()
    })
}
