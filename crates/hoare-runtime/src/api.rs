//! The public API: runtimes, spawning, joining, per-process operations.

use crate::rt::{self, Core, Shared, SpawnOpts};
use hoare_core::sched::JoinSlot;
use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default usable stack size of a process: 64 KiB.
pub const DEFAULT_STACK_SIZE: usize = 64 * 1024;

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

    fn from_panic(e: &(dyn Any + Send)) -> Self {
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
    pub fn join(self) -> Result<T, ProcessError> {
        self.slot.join()
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
#[derive(Debug, Default, Clone)]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
    pinned: bool,
    thread: bool,
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
    /// Usable stack size in bytes (rounded up to pages).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }
    /// Pins the process to the worker it first runs on (for thread-local state).
    pub fn pinned(mut self, pinned: bool) -> Self {
        self.pinned = pinned;
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
    /// Outside a runtime.
    pub fn spawn<P>(self, p: P) -> JoinHandle<P::Output>
    where
        P: Process + 'static,
    {
        // SAFETY: 'static: nothing borrowed can dangle.
        unsafe { self.spawn_unchecked(p, std::ptr::null()) }
    }

    /// # Safety
    /// Everything `p` borrows outlives the process (the scope joins it first).
    unsafe fn spawn_unchecked<P: Process>(
        self,
        p: P,
        scope: *const ScopeData,
    ) -> JoinHandle<P::Output> {
        let (slot, mine) = SlotRef::pair();
        let mut fin = Finish {
            slot: Some(mine),
            scope,
        };
        if self.thread {
            let sh = rt::current_shared().unwrap_or_else(|| no_runtime());
            let id = rt::fresh_ids(1);
            let body = move || {
                rt::THREAD_RT.with(|r| *r.borrow_mut() = Some(sh));
                THREAD_ID.with(|c| c.set(id));
                let r = catch_unwind(AssertUnwindSafe(|| p.run()));
                fin.complete(r.map_err(|e| ProcessError::from_panic(&*e)));
                drop(fin);
                rt::THREAD_RT.with(|r| r.borrow_mut().take());
            };
            let body: Box<dyn FnOnce() + Send + '_> = Box::new(body);
            // SAFETY: lifetime erased; the caller's contract keeps borrows alive
            // until the process finishes (the scope waits for `fin`).
            let body: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(body) };
            let mut b = std::thread::Builder::new();
            if let Some(n) = &self.name {
                b = b.name(n.clone());
            }
            if let Some(s) = self.stack_size {
                b = b.stack_size(s);
            }
            b.spawn(body).expect("hoare: cannot start a thread process");
            return JoinHandle { slot, id };
        }
        let Builder {
            name,
            stack_size,
            pinned,
            ..
        } = self;
        let id = rt::with_shared(|sh| {
            let opts = SpawnOpts {
                name: name.map(String::into_boxed_str),
                stack_size,
                pinned,
                shared: sh,
            };
            // SAFETY: forwarded from our caller.
            unsafe {
                rt::spawn_raw(opts, move || {
                    let r = catch_unwind(AssertUnwindSafe(|| p.run()));
                    match r {
                        Ok(v) => fin.complete(Ok(v)),
                        Err(e) => {
                            let p = rt::current_proc();
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
        JoinHandle { slot, id }
    }
}

/// Spawns a process (a closure or a [`Process`]) in the caller's runtime.
///
/// ```
/// let v = hoare_runtime::run(|| hoare_runtime::spawn(|| 6 * 7).join().unwrap());
/// assert_eq!(v, 42);
/// ```
///
/// # Panics
/// Outside a runtime.
pub fn spawn<P>(p: P) -> JoinHandle<P::Output>
where
    P: Process + 'static,
{
    Builder::new().spawn(p)
}

/// Runs `f` on its own OS thread as a process of the caller's runtime (for
/// blocking system calls); joined like any process.
pub fn spawn_blocking<P>(p: P) -> JoinHandle<P::Output>
where
    P: Process + 'static,
{
    Builder::new().thread(true).spawn(p)
}

std::thread_local! {
    static THREAD_ID: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The id of the calling process (a plain thread gets an id of its own on first
/// use).
pub fn id() -> u64 {
    let p = rt::current_proc();
    if !p.is_null() {
        // SAFETY: the running process's header is valid while it runs.
        return unsafe { (*p).id };
    }
    THREAD_ID.with(|c| {
        if c.get() == 0 {
            c.set(rt::fresh_ids(1));
        }
        c.get()
    })
}

/// The name of the calling process (for a thread: the thread's name).
pub fn name() -> Option<String> {
    let p = rt::current_proc();
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
    let p = rt::current_proc();
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

/// Sleeps the calling process (or thread) for `d`.
pub fn sleep_for(d: Duration) {
    sleep_until(Instant::now() + d);
}

/// Configures a [`Runtime`].
#[derive(Debug, Clone)]
pub struct RuntimeBuilder {
    workers: Option<usize>,
    stack_size: usize,
    thread_name: String,
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        Self {
            workers: None,
            stack_size: DEFAULT_STACK_SIZE,
            thread_name: "hoare-worker".into(),
        }
    }
}

impl RuntimeBuilder {
    /// Number of worker threads (default: `HOARE_WORKERS`, else available cores).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = Some(n.max(1));
        self
    }
    /// Default usable stack size of its processes.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }
    /// Worker threads are named `<name>-<index>`.
    pub fn thread_name(mut self, name: impl Into<String>) -> Self {
        self.thread_name = name.into();
        self
    }
    /// Starts the workers.
    pub fn build(self) -> Runtime {
        let workers = self.workers.unwrap_or_else(default_workers);
        Runtime {
            core: Core::start(workers, self.stack_size, self.thread_name),
        }
    }
}

/// The number of workers a runtime gets by default: `HOARE_WORKERS` if set to a
/// positive number, else the available cores.
pub fn default_workers() -> usize {
    std::env::var("HOARE_WORKERS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
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
    pub fn try_run<P>(mut self, f: P) -> Result<P::Output, ProcessError>
    where
        P: Process,
    {
        let shared: Arc<Shared> = self.core.shared.clone();
        let opts = SpawnOpts {
            name: Some("main".into()),
            stack_size: None,
            pinned: false,
            shared: &shared,
        };
        let (slot, mine) = SlotRef::<P::Output>::pair();
        let mut fin = Finish {
            slot: Some(mine),
            scope: std::ptr::null(),
        };
        // SAFETY: `f` may borrow from the caller: we join the root and, at shutdown,
        // unwind every other process before returning.
        unsafe {
            rt::spawn_raw(opts, move || {
                let r = catch_unwind(AssertUnwindSafe(|| f.run()));
                if let Err(e) = &r {
                    let p = rt::current_proc();
                    if !p.is_null() && (*p).unwinding.get() {
                        let e = r.err().expect("err");
                        fin.complete(Err(ProcessError::Cancelled));
                        drop(fin);
                        resume_unwind(e);
                    }
                    let _ = e;
                }
                fin.complete(r.map_err(|e| ProcessError::from_panic(&*e)));
            });
        }
        let r = slot.join();
        self.core.shutdown();
        r
    }

    /// Like [`try_run`](Self::try_run) but re-raises a panic of the root process.
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
pub fn run<P: Process>(f: P) -> P::Output {
    Runtime::new().run(f)
}

/// [`run`] without re-raising: the root's panic comes back as an error.
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
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.spawn_with(Builder::new(), f)
    }

    /// [`spawn`](Self::spawn) with [`Builder`] options.
    pub fn spawn_with<F, T>(&'scope self, b: Builder, f: F) -> ScopedJoinHandle<'scope, T>
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
        // down before anything the child borrows can go.
        let inner = unsafe { b.spawn_unchecked(body, data) };
        ScopedJoinHandle {
            inner,
            scope: &self.data,
        }
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
    let waiter = hoare_core::waiter::Waiter::for_current();
    scope
        .data
        .waiter
        .store(&waiter as *const _ as *mut _, Ordering::Release);
    if scope.data.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
        waiter.wait(None);
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
pub fn par2<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    scope(|s| {
        let hb = s.spawn(b);
        let ra = catch_unwind(AssertUnwindSafe(a));
        let rb = hb.join();
        let ra = ra.unwrap_or_else(|e| resume_unwind(e));
        (ra, unwrap_par(rb))
    })
}

/// Three closures in parallel; see [`par2`].
pub fn par3<A, B, C, RA, RB, RC>(a: A, b: B, c: C) -> (RA, RB, RC)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    C: FnOnce() -> RC + Send,
    RA: Send,
    RB: Send,
    RC: Send,
{
    scope(|s| {
        let hb = s.spawn(b);
        let hc = s.spawn(c);
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
pub fn par<'a, T: Send + 'a>(fs: Vec<ParFn<'a, T>>) -> Vec<T> {
    scope(|s| {
        let mut it = fs.into_iter();
        let Some(first) = it.next() else {
            return Vec::new();
        };
        let hs: Vec<_> = it.map(|f| s.spawn(f)).collect();
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
pub fn par_for<I, F, R>(items: I, f: F) -> Vec<R>
where
    I: IntoIterator,
    I::Item: Send,
    F: Fn(I::Item) -> R + Sync,
    R: Send,
{
    let f = &f;
    scope(|s| {
        let hs: Vec<_> = items.into_iter().map(|x| s.spawn(move || f(x))).collect();
        let rs: Vec<_> = hs.into_iter().map(|h| h.join()).collect();
        rs.into_iter().map(unwrap_par).collect()
    })
}
