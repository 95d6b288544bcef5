//! The park/unpark seam between the core and whatever runs a party.
//!
//! The core never switches stacks. A party (a process on a worker, a plain OS thread,
//! or a loom thread in a model) that must wait publishes an [`Unparker`] and calls
//! [`Park::park`]. The runtime implements [`Park`] for processes with a coroutine
//! suspend and a run-queue push; [`ThreadParker`] implements it for plain threads
//! (and, under `--cfg loom`, for loom threads, so the same code is model-checked).
//!
//! # The contract
//! * `park` returns only after an unpark (no spurious returns), consuming it.
//! * An unpark that comes before `park` is remembered (one token) and makes the next
//!   `park` return at once.
//! * The core delivers **exactly one** unpark per wait that another party commits
//!   (see [`crate::waiter`]), and the waiting party consumes it before its wait ends.
//!   So an [`Unparker`] is only used while its party is still inside that wait,
//!   which is what makes it safe for the unparker to be a plain pointer without a
//!   reference count.
//!
//! # The cooperative budget
//! A process runs until it blocks or yields: nobody preempts it. A loop that
//! *polls* (`loop { if let Ok(v) = rx.try_recv() { .. } }`) never blocks, so it
//! would keep its worker for ever, and with it every process queued there and every
//! timer due there. So every operation that polls and comes back without effect
//! spends one unit of the running party's budget ([`spend_budget`]); a process whose
//! budget is spent yields (to the processes queued on its worker and to due timers)
//! before the operation returns, and starts again with a full budget. (Tokio gives
//! each task a budget for the same reason.)
//!
//! | spends budget (a poll that found nothing) | does not |
//! |---|---|
//! | `try_send`, `try_recv`, `try_recv_with` that fail (full, empty, poisoned) | every operation that succeeds at once |
//! | an alt that chooses `skip`, or a timeout guard that had expired when it began | an alt that finds a ready guard, or waits |
//! | a timed operation (`recv_timeout`, `send_deadline`, an alt's timeout, a sleep) whose deadline has passed before it waits | blocking `send`/`recv`, barriers, waits that block |
//!
//! Any yield refills the budget, so a polling loop that yields by itself never
//! yields twice. A loop that neither polls nor blocks (pure computation) spends no
//! budget: it must call `yield_now` now and then to let others run. On a plain OS
//! thread the budget does nothing (the OS preempts threads).

use crate::sync::{self, AtomicBool, AtomicUsize, Ordering};
use crate::waiter::Waiter;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::AtomicBool as AtomicBoolStd;
use std::time::Instant;

/// Wakes one parked party. `Copy` and without a reference count, so waking costs
/// no allocation and no refcount traffic on the hand-off path.
#[derive(Clone, Copy, Debug)]
pub struct Unparker {
    data: *const (),
    unpark: unsafe fn(*const ()),
}

// SAFETY: an `Unparker` is an address plus a function that is valid to call from any
// thread; the implementations (`ThreadParker`, the runtime's processes) synchronise
// internally with atomics.
unsafe impl Send for Unparker {}
// SAFETY: see `Send`; `unpark` takes `self` by value and touches no shared state here.
unsafe impl Sync for Unparker {}

impl Unparker {
    /// Makes an unparker from an address and the function that unparks it.
    ///
    /// # Safety
    /// `unpark(data)` must be sound to call from any thread while the party that
    /// handed out this unparker is inside the wait it was taken for, and must not
    /// touch `data` after the point where the woken party could observe the unpark.
    pub const unsafe fn from_raw(data: *const (), unpark: unsafe fn(*const ())) -> Self {
        Self { data, unpark }
    }

    /// Wakes the party.
    ///
    /// # Safety
    /// The party must still be inside the wait this unparker was taken for, and this
    /// must be the one unpark that wait receives (the core's waiters ensure both).
    #[inline]
    pub unsafe fn unpark(self) {
        // SAFETY: forwarded from the caller's contract and `from_raw`'s.
        unsafe { (self.unpark)(self.data) }
    }
}

/// How the current party blocks. See the module documentation for the contract.
///
/// Every park names the [`Waiter`] of the wait it belongs to (`None` for a plain
/// sleep): a runtime records it, so that it can tell what a parked party waits for
/// (its shutdown sweep unwinds a process only once no other party holds a claim on
/// its wait, see [`Waiter::is_held`]).
pub trait Park {
    /// Blocks until an unpark arrives and consumes it. Never returns spuriously.
    fn park(&self, w: &Waiter);
    /// Like [`park`](Park::park) but gives up at `deadline`. Returns `true` when an
    /// unpark was consumed and `false` when the deadline passed first (the unpark, if
    /// one comes later, stays pending for the next `park`).
    fn park_until(&self, deadline: Instant, w: Option<&Waiter>) -> bool;
    /// The unparker that wakes this party.
    fn unparker(&self) -> Unparker;

    /// Lets other runnable parties run first (a process goes to the back of its
    /// worker's queue). Default: nothing (a thread has nobody to defer to). An alt
    /// over many channels yields once before it registers on all of them.
    fn yield_now(&self) {}

    /// Spends one unit of this party's cooperative budget: the core calls it (through
    /// [`spend_budget`]) when an operation polled and came back without effect. A
    /// process whose budget is spent yields, as [`yield_now`](Park::yield_now) does,
    /// before the operation returns (see [the module documentation](self)).
    /// Default: nothing (a thread is preempted by the OS).
    fn spend_budget(&self) {}

    /// Parks like [`park`](Park::park), calling `release(data)` once the party can
    /// no longer be resumed by anyone but its unparker: a process calls it on its
    /// worker after switching off its stack, a thread before it parks.
    ///
    /// This lets a party hold a lock across its switch (Go's `gopark` with an
    /// unlock function): whoever must take that lock before it can unpark the party
    /// finds it already parked, so the runtime parks it with plain stores instead
    /// of a compare-and-swap against a racing unpark.
    ///
    /// Returns `false`, without parking and without consuming an unpark, when the
    /// party is [`cancelled`](Park::cancelled); `release(data)` has been called
    /// either way. The caller must then take back what it registered (under the
    /// lock it released) before it may leave the wait.
    ///
    /// # Safety
    /// `release(data)` must be sound to call once, from another thread, while this
    /// party is suspended, and must not touch the party's stack after it returns
    /// (or after the store that lets others resume it). No unpark of this park may
    /// happen before `release` has begun: every party that can unpark it must first
    /// take what `release` lets go of.
    unsafe fn park_releasing(
        &self,
        release: unsafe fn(*mut ()),
        data: *mut (),
        w: &Waiter,
    ) -> bool {
        // SAFETY: the caller's contract; a thread's token keeps an unpark that comes
        // between the release and the park.
        unsafe { release(data) };
        if self.cancelled() {
            return false;
        }
        self.park(w);
        true
    }

    /// [`park_releasing`](Park::park_releasing) whose release is the unlock of
    /// `lock` (a release store of `false`): a runtime can carry the lock's
    /// address through its switch instead of a function and its data. A
    /// channel's wait without a deadline parks this way.
    ///
    /// # Safety
    /// As [`park_releasing`](Park::park_releasing), with `lock` held by the
    /// caller (unlocking it is the release); `lock`'s address is even.
    unsafe fn park_unlocking(&self, lock: &AtomicBoolStd, w: &Waiter) -> bool {
        // SAFETY: the caller's contract.
        unsafe { self.park_releasing(unlock_raw, lock as *const AtomicBoolStd as *mut (), w) }
    }

    /// Whether the runtime is cancelling this party: it shut down while the party
    /// was blocked and is now unwinding it (or a thread process's waits are being
    /// cancelled). A cancelled party must not start a new wait that could block:
    /// [`Waiter::wait`](crate::waiter::Waiter::wait) aborts such a wait at once
    /// (channel operations then fail as on a poisoned channel, a join reports the
    /// cancellation, a sleep or a barrier sync returns at once),
    /// [`park_until`](Park::park_until) returns `false` at once and
    /// [`park_releasing`](Park::park_releasing) refuses. [`park`](Park::park), which
    /// only ever consumes the unpark of a wait another party has already committed,
    /// still waits for it (that party is running and will deliver it).
    ///
    /// Default: never (a plain thread is never cancelled).
    fn cancelled(&self) -> bool {
        false
    }

    /// A scheduling point: the party is about to perform `op` (see
    /// [`crate::step`]). A checking runtime suspends its process here until it
    /// chooses it; everybody else does nothing (the default).
    ///
    /// ```
    /// use hoare_core::park::{Park, ThreadParker};
    /// use hoare_core::step::{Access, Class, Op, OpKind};
    /// ThreadParker::current().step(Op::one(OpKind::Send, 1, Class::Chan, Access::Send));
    /// ```
    #[cfg(feature = "check")]
    fn step(&self, _op: crate::step::Op) {}

    /// A scheduling point whose operation the checker does not need described
    /// (see [`Steps::Bare`](crate::step::Steps::Bare)): as [`step`](Park::step)
    /// otherwise.
    ///
    /// ```
    /// use hoare_core::park::{Park, ThreadParker};
    /// ThreadParker::current().step_bare();
    /// ```
    #[cfg(feature = "check")]
    fn step_bare(&self) {}

    /// The party made a channel or barrier whose [`ObjInfo`](crate::wait::ObjInfo)
    /// id is `id`. A checking runtime names the object by who made it and in what
    /// order (stable across executions, unlike the id or the address); everybody
    /// else does nothing (the default).
    ///
    /// ```
    /// use hoare_core::park::{Park, ThreadParker};
    /// ThreadParker::current().created(7);
    /// ```
    #[cfg(feature = "check")]
    fn created(&self, _id: u64) {}
}

/// The time now: `Instant::now()`, or, with the `check` feature, a checking
/// runtime's virtual time when one runs on this thread. Every deadline the core
/// forms and every "has it passed" it asks goes through this.
///
/// ```
/// let t = hoare_core::park::now();
/// assert!(hoare_core::park::now() >= t);
/// ```
#[inline(always)]
pub fn now() -> Instant {
    #[cfg(feature = "check")]
    if let Some(t) = crate::step::virtual_now() {
        return t;
    }
    Instant::now()
}

/// A party as a runtime installs it on a thread (see [`set_current_party`]): the
/// party and the unparker of its waits, so that a blocking operation finds both
/// through one thread-local word, without a virtual call for the unparker. A
/// runtime keeps one where it stays put while the party runs (a process in its
/// header).
///
/// ```
/// use hoare_core::park::{self, Park, Party, ThreadParker};
/// use std::ptr::NonNull;
/// let t = ThreadParker::current();
/// // SAFETY: `t` outlives the party's installation, which ends below.
/// let party = unsafe { Party::new(NonNull::from(&*t as &dyn Park)) };
/// // SAFETY: `party` and `t` stay valid until the reset, and run on this thread.
/// unsafe { park::set_current_party(&party) };
/// assert!(park::in_process());
/// // SAFETY: unsetting is always sound.
/// unsafe { park::set_current_party(std::ptr::null()) };
/// assert!(!park::in_process());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Party {
    park: NonNull<dyn Park>,
    unparker: Unparker,
    owner: *const (),
}

impl Party {
    /// The party `park`, with its own [`unparker`](Park::unparker) and no owner.
    ///
    /// # Safety
    /// `park` points to a valid party.
    pub unsafe fn new(park: NonNull<dyn Park>) -> Self {
        // SAFETY: the caller's contract.
        let unparker = unsafe { park.as_ref() }.unparker();
        Self {
            park,
            unparker,
            owner: std::ptr::null(),
        }
    }

    /// The party `park` with `unparker`, and `owner`: whatever the runtime
    /// that installs it wants [`current_owner`] to return while it runs (a
    /// runtime's record of its process). Does not read `park` (for a party
    /// whose memory is not initialised yet).
    ///
    /// # Safety
    /// `unparker` is what `park`'s [`Park::unparker`] returns.
    pub const unsafe fn from_parts(
        park: NonNull<dyn Park>,
        unparker: Unparker,
        owner: *const (),
    ) -> Self {
        Self {
            park,
            unparker,
            owner,
        }
    }

    /// The party's unparker.
    pub fn unparker(&self) -> Unparker {
        self.unparker
    }
}

/// Releases the lock whose flag is at `data` (see [`Park::park_unlocking`]).
///
/// # Safety
/// `data` points to a held lock's flag (an [`AtomicBoolStd`]), valid for the call.
#[inline]
pub unsafe fn unlock_raw(data: *mut ()) {
    // SAFETY: the caller's contract.
    unsafe { (*(data as *const AtomicBoolStd)).store(false, std::sync::atomic::Ordering::Release) };
}

sync::thread_local_static! {
    static CURRENT_PARTY: Cell<*const Party> = const { Cell::new(std::ptr::null()) };
}

/// Tells the core which party runs on this OS thread from now on (null: the
/// thread itself). The runtime calls this each time it resumes or suspends a
/// process.
///
/// # Safety
/// While set, the `Party` and the party it names must stay valid and that party
/// must be the one that runs on this thread; the caller resets it before the
/// party is suspended on another thread or freed.
#[inline]
pub unsafe fn set_current_party(p: *const Party) {
    CURRENT_PARTY.with(|c| c.set(p));
}

/// Runs `f` with the party that is running now: the current process, or else this OS
/// thread's [`ThreadParker`].
///
/// The thread-local is read once, before `f` runs, and only the pointer value is
/// kept: `f` may park and resume on another OS thread, and it never touches this
/// thread's thread-local storage again.
// Always inlined: a process's park happens inside `f`, and every call level between
// the blocking operation and the context switch costs a mispredicted return. The
// thread-local itself is read by a function that is never inlined: LLVM takes the
// address of a thread-local to be constant within one function, so once inlined into
// a caller's loop the address could be computed before a context switch and used
// after the process migrated to another worker.
#[inline(always)]
pub fn with_current<R>(f: impl FnOnce(&dyn Park) -> R) -> R {
    // The unparker is not read when `f` does not use it.
    with_current_unparker(|p, _| f(p))
}

/// [`with_current`], with the party's unparker (read from the installed
/// [`Party`], not asked of the party: the blocking operations' path).
#[inline(always)]
pub fn with_current_unparker<R>(f: impl FnOnce(&dyn Park, Unparker) -> R) -> R {
    let p = current_party();
    if p.is_null() {
        return ThreadParker::with_current(|t| f(t, t.unparker()));
    }
    // SAFETY: `set_current_party`'s contract keeps the party valid while it
    // runs, and it is the caller, so it runs for the whole of `f`.
    let p = unsafe { &*p };
    // SAFETY: as above.
    f(unsafe { p.park.as_ref() }, p.unparker)
}

/// Spends one unit of the running process's cooperative budget: called by every
/// operation that polled and came back without effect (a failed `try_send` or
/// `try_recv`, an alt that chose `skip` or an expired timeout, a timed operation
/// whose deadline had passed). When the budget is spent the process yields before
/// this returns. On a plain thread it does nothing. See
/// [the module documentation](self) for the rule.
///
/// Called on failure paths only: the operations that succeed (or block) never pay
/// for it.
#[inline]
pub fn spend_budget() {
    let p = current_party();
    if !p.is_null() {
        // SAFETY: as in `with_current`: the installed party is the caller, valid
        // while it runs. Only the pointer was read from the thread-local, so the
        // yield this may make (and a move to another worker) is harmless.
        unsafe { (*p).park.as_ref() }.spend_budget();
    }
}

/// The party installed on this OS thread, read afresh on every call (never
/// inlined: see [`with_current`]).
#[inline(never)]
fn current_party() -> *const Party {
    CURRENT_PARTY.with(|c| c.get())
}

/// The owner of the party installed on this OS thread (see
/// [`Party::from_parts`]; null: none installed, or it has none): how a runtime
/// finds its own record of the running process through the core's one
/// thread-local. Read afresh on every call (never inlined: see
/// [`with_current`]); async-signal-safe (a plain thread-local read).
///
/// ```
/// assert!(hoare_core::park::current_owner().is_null());
/// ```
#[inline(never)]
pub fn current_owner() -> *const () {
    let p = CURRENT_PARTY.with(|c| c.get());
    if p.is_null() {
        return std::ptr::null();
    }
    // SAFETY: `set_current_party`'s contract keeps the installed party valid.
    unsafe { (*p).owner }
}

/// Whether a runtime installed a process on this thread (see [`set_current_party`]),
/// i.e. whether blocking parks a process instead of the OS thread. A runtime's
/// process on an OS thread of its own (`hoare_runtime::spawn_blocking`) parks its
/// thread, so this is `false` there; `hoare_runtime::in_process` says whether the
/// caller is a process of either kind.
#[inline(never)]
pub fn in_process() -> bool {
    !CURRENT_PARTY.with(|c| c.get()).is_null()
}

/// Parks a plain OS thread (or a loom thread): a one-token latch over the thread's
/// own park/unpark.
#[derive(Debug)]
pub struct ThreadParker {
    /// `EMPTY`, `NOTIFIED` (a token to consume) or `SLEEPING` (parked without a
    /// deadline and counted asleep in [`threads_awake`]).
    token: AtomicUsize,
    thread: sync::thread::Thread,
    cancelled: AtomicBool,
    /// Counted in [`threads_awake`] while not asleep (see [`register_thread`]).
    registered: AtomicBool,
}

const EMPTY: usize = 0;
const NOTIFIED: usize = 1;
const SLEEPING: usize = 2;

sync::thread_local_static! {
    static THREAD_PARKER: std::sync::Arc<ThreadParker> = std::sync::Arc::new(ThreadParker::new());
}

sync::global_counter! {
    /// Plain OS threads (not workers) that blocked in or woke through hoare and are
    /// not parked in it without a deadline now (see [`threads_awake`]).
    fn awake_count();
}

/// How many registered plain OS threads are awake: they have blocked in or woken
/// something through hoare (or a runtime registered them, like its thread
/// processes), have not exited, and are not parked in a hoare wait without a
/// deadline. While one is, it may still wake a process, so a deadlock detector
/// must not report. The count changes only on slow paths: registration, exit, and
/// a park without a deadline (the party that wakes such a thread counts it awake
/// before it wakes it, so the count never reads low while a wake is under way).
pub fn threads_awake() -> usize {
    awake_count().load(Ordering::SeqCst)
}

/// Counts the calling thread in [`threads_awake`] from now until it exits (once;
/// a worker thread of a runtime is never counted). A runtime calls it for threads
/// that wake its processes or run them (thread processes), so that a thread which
/// may still wake a process holds off the deadlock detector.
pub fn register_thread() {
    if worker_index() != usize::MAX {
        return;
    }
    THREAD_PARKER.with(|p| p.register());
}

/// Runs `f` (a wait outside hoare that only the end of the runtime can end, like
/// `run` waiting for its root process) with the calling thread not counted in
/// [`threads_awake`].
pub fn uncounted<R>(f: impl FnOnce() -> R) -> R {
    struct Recount(bool);
    impl Drop for Recount {
        fn drop(&mut self) {
            if self.0 {
                awake_count().fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let counted = THREAD_PARKER.with(|p| p.registered.load(Ordering::Relaxed));
    if counted {
        awake_count().fetch_sub(1, Ordering::SeqCst);
    }
    let _recount = Recount(counted);
    f()
}

impl ThreadParker {
    fn new() -> Self {
        Self {
            token: AtomicUsize::new(EMPTY),
            thread: sync::thread::current(),
            cancelled: AtomicBool::new(false),
            registered: AtomicBool::new(false),
        }
    }

    /// This thread's parker (for a runtime that may have to
    /// [`cancel`](Self::cancel) the waits of its thread processes).
    pub fn current() -> std::sync::Arc<ThreadParker> {
        THREAD_PARKER.with(|p| p.clone())
    }

    /// Cancels this thread's waits from now on (see [`Park::cancelled`]): a wait it
    /// starts, or a timed wait it is in, ends at once; a wait it is parked in
    /// without a deadline still waits for the party that ends it. A runtime that
    /// shuts down does this to its thread processes.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.thread.unpark();
    }

    /// Runs `f` with this thread's parker.
    #[inline(never)]
    pub(crate) fn with_current<R>(f: impl FnOnce(&ThreadParker) -> R) -> R {
        // The `Arc` is cloned out so `f` may block without holding a TLS borrow.
        let p = THREAD_PARKER.with(|p| p.clone());
        f(&p)
    }

    /// Counts this (the calling) thread awake in [`threads_awake`] until it exits.
    fn register(&self) {
        if worker_index() != usize::MAX {
            return;
        }
        if !self.registered.load(Ordering::Relaxed) {
            self.registered.store(true, Ordering::Relaxed);
            awake_count().fetch_add(1, Ordering::SeqCst);
            // A registered thread stops counting when it exits.
            sync::on_thread_exit(|| {
                awake_count().fetch_sub(1, Ordering::SeqCst);
            });
        }
    }

    /// Consumes the pending unpark, if any. A compare-exchange rather than a `swap`:
    /// loom 0.7 can let a `swap` read a stale value (tokio-rs/loom#254), which made
    /// every cross-thread wake-up look lost under `--cfg loom`.
    #[inline]
    fn take_token(&self) -> bool {
        self.token
            .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    unsafe fn unpark_raw(data: *const ()) {
        // SAFETY: `data` came from `unparker()` on a parker that is alive: its thread
        // is inside a wait (contract of `Unparker::unpark`), and the thread-local
        // `Arc` outlives every wait of that thread.
        let me = unsafe { &*(data as *const ThreadParker) };
        // Clone the handle before publishing the token: once the token is visible the
        // thread may leave its wait, exit, and drop this parker.
        let thread = me.thread.clone();
        // A compare-exchange loop, not a `swap` (see `take_token`).
        let mut cur = me.token.load(Ordering::Acquire);
        while let Err(now) =
            me.token
                .compare_exchange(cur, NOTIFIED, Ordering::AcqRel, Ordering::Acquire)
        {
            cur = now;
        }
        if cur == SLEEPING {
            // The waker counts the sleeper awake, before the sleeper can run: the
            // count must not read low after the waker has moved on (it may be the
            // last awake party) and before the woken thread runs.
            awake_count().fetch_add(1, Ordering::SeqCst);
        }
        thread.unpark();
    }
}

/// Stops counting the calling thread in [`threads_awake`] (as its exit would).
#[cfg(all(test, loom))]
pub(crate) fn unregister_thread() {
    THREAD_PARKER.with(|p| {
        if p.registered.swap(false, Ordering::Relaxed) {
            awake_count().fetch_sub(1, Ordering::SeqCst);
        }
    });
}

impl Park for ThreadParker {
    fn park(&self, w: &Waiter) {
        self.register();
        let mut asleep = false;
        while !self.take_token() {
            if !asleep {
                // A wait on an object made outside every process may be ended by
                // a thread hoare cannot see: stay counted awake then.
                // SAFETY: we are the waiting party, parked in this wait.
                if unsafe { w.wait_on().outside() } {
                    asleep = true; // (not counted: never uncount below)
                } else if self
                    .token
                    .compare_exchange(EMPTY, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    asleep = true;
                    awake_count().fetch_sub(1, Ordering::SeqCst);
                } else {
                    continue; // notified meanwhile
                }
            }
            sync::thread::park();
        }
    }

    // Under loom every deadline has passed (`sync::time::passed`): this returns
    // whether an unpark was already pending.
    fn park_until(&self, deadline: Instant, _w: Option<&Waiter>) -> bool {
        self.register();
        loop {
            if self.take_token() {
                return true;
            }
            if sync::time::passed(deadline) || self.cancelled() {
                return false;
            }
            sync::park_timeout(deadline.saturating_duration_since(Instant::now()));
        }
    }

    fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    fn unparker(&self) -> Unparker {
        // SAFETY: `unpark_raw` matches `from_raw`'s contract (see its comments).
        unsafe { Unparker::from_raw(self as *const Self as *const (), Self::unpark_raw) }
    }
}

sync::thread_local_static! {
    static WORKER_INDEX: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Tells the core which worker of its runtime this OS thread is (`usize::MAX`: not a
/// worker). Structures that combine per worker first (the two-tier barrier) use it.
pub fn set_worker_index(i: usize) {
    WORKER_INDEX.with(|c| c.set(i));
}

/// The index of the worker this OS thread is, or `usize::MAX` for a plain thread.
/// Only a hint: a process may migrate right after reading it.
// Never inlined: a thread-local's address must not be reused across a context switch.
#[inline(never)]
pub fn worker_index() -> usize {
    WORKER_INDEX.with(|c| c.get())
}
