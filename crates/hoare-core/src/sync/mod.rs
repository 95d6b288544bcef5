//! The seam between the core and loom: the one module that looks at `cfg(loom)`.
//!
//! Every other module of the crate is written against what this one exports, which
//! is `std`'s in a normal build and loom's under `RUSTFLAGS="--cfg loom"`, so every
//! protocol in the crate is model-checked by the same code that runs in production
//! (tokio keeps its `loom` seam the same way). What changes under loom:
//!
//! | item | normal build | under loom |
//! |---|---|---|
//! | atomics, [`Arc`], [`Mutex`], [`Condvar`], [`thread`], [`UnsafeCell`] | `std`'s | loom's: it sees every access |
//! | [`SpinLock`] (a channel's lock) | a test-and-test-and-set spin lock | a loom [`Mutex`]: loom sees every acquisition |
//! | [`park_unlocking`] (park, then release a channel's lock) | the lock's flag handed to [`Park::park_unlocking`] | the guard dropped through [`Park::park_releasing`] |
//! | [`thread_local_static!`] | `std::thread_local!` | `loom::thread_local!` (per model thread) |
//! | [`global_lock!`], [`global_counter!`] | a `static` mutex, atomic | made afresh for each model execution |
//! | [`time::passed`] | the clock | always `true`: a deadline has passed as soon as it is asked about, so a model explores a timeout racing everything that happened before it |
//! | [`Condvar::wait_timeout`] | times out | never times out (loom has no clock): a model explores the wake-up |
//! | [`parallelism`] | the machine's | 2: enough to model structures kept per worker |
//! | [`on_thread_exit`] | runs at thread exit | never (models end their threads themselves) |

#[cfg(not(loom))]
mod spin;

use crate::park::Park;
use crate::waiter::Waiter;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;

#[cfg(not(loom))]
pub(crate) use spin::SpinLock;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

pub(crate) use std::sync::atomic::Ordering;

/// Locks `m`, ignoring poisoning: the core never panics while holding a lock, and a
/// user panic cannot reach one of its critical sections.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Waits on `cv` until `done(&*g)` or `timeout` has passed; returns the guard and
/// whether `done(&*g)`. Under loom the timeout never fires.
pub(crate) fn wait_until<'a, T>(
    cv: &Condvar,
    mut g: MutexGuard<'a, T>,
    timeout: Option<std::time::Duration>,
    done: impl Fn(&T) -> bool,
) -> (MutexGuard<'a, T>, bool) {
    let deadline = timeout.map(crate::timer::deadline_after);
    while !done(&g) {
        g = match deadline {
            None => match cv.wait(g) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            },
            Some(d) => {
                let left = d.saturating_duration_since(std::time::Instant::now());
                let (g, r) = match cv.wait_timeout(g, left) {
                    Ok(x) => x,
                    Err(p) => p.into_inner(),
                };
                if r.timed_out() && !done(&g) {
                    return (g, false);
                }
                g
            }
        };
    }
    (g, true)
}

/// The time as the core sees it.
pub(crate) mod time {
    use std::time::Instant;

    /// Whether `deadline` has passed. Under loom, always: time does not pass in a
    /// model, so a deadline is taken to have passed as soon as it is asked about,
    /// which lets a model explore a timeout racing whatever happened before.
    #[inline]
    pub(crate) fn passed(deadline: Instant) -> bool {
        #[cfg(loom)]
        {
            let _ = deadline;
            true
        }
        #[cfg(not(loom))]
        {
            crate::park::now() >= deadline
        }
    }
}

/// Parks this thread for at most `d` (it may return early, as `std`'s does). Under
/// loom, where [`time::passed`] is always true, nothing waits for a deadline, so this
/// only yields.
pub(crate) fn park_timeout(d: std::time::Duration) {
    #[cfg(loom)]
    {
        let _ = d;
        thread::yield_now();
    }
    #[cfg(not(loom))]
    std::thread::park_timeout(d);
}

/// How many workers a structure kept per worker should plan for (the two-tier
/// barrier's groups): the machine's parallelism, or 2 under loom (enough to model
/// the two tiers).
pub(crate) fn parallelism() -> usize {
    #[cfg(loom)]
    {
        2
    }
    #[cfg(not(loom))]
    {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// A thread-local (loom's per model thread under loom). Takes one declaration,
/// `static NAME: Type = const { init };` or `static NAME: Type = init;`; a `const`
/// one is const-initialised in a normal build (no lazy-init check on access).
macro_rules! thread_local_static {
    ($(#[$m:meta])* static $name:ident: $t:ty = const $init:block;) => {
        #[cfg(not(loom))]
        std::thread_local!($(#[$m])* static $name: $t = const $init;);
        #[cfg(loom)]
        loom::thread_local!($(#[$m])* static $name: $t = $init;);
    };
    ($(#[$m:meta])* static $name:ident: $t:ty = $init:expr;) => {
        #[cfg(not(loom))]
        std::thread_local!($(#[$m])* static $name: $t = $init;);
        #[cfg(loom)]
        loom::thread_local!($(#[$m])* static $name: $t = $init;);
    };
}
pub(crate) use thread_local_static;

/// Defines `fn $name() -> MutexGuard<'static, ()>`, which takes one process-wide
/// lock (made afresh for each model execution under loom).
macro_rules! global_lock {
    ($(#[$m:meta])* $vis:vis fn $name:ident();) => {
        $(#[$m])*
        $vis fn $name() -> $crate::sync::MutexGuard<'static, ()> {
            #[cfg(not(loom))]
            static LOCK: $crate::sync::Mutex<()> = $crate::sync::Mutex::new(());
            #[cfg(loom)]
            loom::lazy_static! {
                static ref LOCK: $crate::sync::Mutex<()> = $crate::sync::Mutex::new(());
            }
            $crate::sync::lock(&LOCK)
        }
    };
}
pub(crate) use global_lock;

/// Defines `fn $name() -> &'static AtomicUsize`: one process-wide counter (made
/// afresh for each model execution under loom).
macro_rules! global_counter {
    ($(#[$m:meta])* $vis:vis fn $name:ident();) => {
        $(#[$m])*
        $vis fn $name() -> &'static $crate::sync::AtomicUsize {
            #[cfg(not(loom))]
            static COUNT: $crate::sync::AtomicUsize = $crate::sync::AtomicUsize::new(0);
            #[cfg(loom)]
            loom::lazy_static! {
                static ref COUNT: $crate::sync::AtomicUsize = $crate::sync::AtomicUsize::new(0);
            }
            &COUNT
        }
    };
}
pub(crate) use global_counter;

/// Calls `f` when the calling thread exits. Never under loom: a model ends its
/// threads itself (and loom forbids its statics in thread-exit destructors).
#[cfg(not(loom))]
pub(crate) fn on_thread_exit(f: fn()) {
    struct Exit(fn());
    impl Drop for Exit {
        fn drop(&mut self) {
            (self.0)()
        }
    }
    std::thread_local! {
        static EXIT: std::cell::RefCell<Vec<Exit>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    EXIT.with(|e| e.borrow_mut().push(Exit(f)));
}

/// See the normal build's `on_thread_exit`.
#[cfg(loom)]
pub(crate) fn on_thread_exit(_f: fn()) {}

/// Under loom a channel's short lock is a loom mutex, so loom sees every
/// acquisition (the spin lock of a normal build would make loom explore its spins).
#[cfg(loom)]
pub(crate) struct SpinLock<T>(Mutex<T>, u8);

#[cfg(loom)]
impl<T> SpinLock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self::with_tag(value, 0)
    }
    pub(crate) fn with_tag(value: T, tag: u8) -> Self {
        Self(Mutex::new(value), tag)
    }
    pub(crate) fn tag(&self) -> u8 {
        self.1
    }
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        lock(&self.0)
    }
}

/// A guard of a [`SpinLock`].
#[cfg(loom)]
pub(crate) type SpinGuard<'a, T> = MutexGuard<'a, T>;
#[cfg(not(loom))]
pub(crate) use spin::SpinGuard;

/// Parks the current party `p` while holding `g`, whose lock is released once
/// the party is parked (see [`Park::park_unlocking`]): a normal build hands the
/// party the lock's flag, which a runtime carries through its switch; under
/// loom the lock is a loom mutex, whose guard is dropped through
/// [`Park::park_releasing`] (the same order: parked, then released).
///
/// # Safety
/// No unpark of this park may happen before the lock is released: every party
/// that can unpark the caller must first take it. Returns `false` when the
/// party is cancelled (see [`Park::park_releasing`]): the lock is released and
/// the party did not park.
#[cfg(not(loom))]
#[inline(always)]
pub(crate) unsafe fn park_unlocking<T>(g: SpinGuard<'_, T>, p: &dyn Park, w: &Waiter) -> bool {
    // SAFETY: the caller's contract; the flag is the held lock's, whose address
    // is even (`SpinLock` is aligned to 2 at least).
    unsafe { p.park_unlocking(g.into_flag(), w) }
}

/// See the normal build's `park_unlocking`.
#[cfg(loom)]
pub(crate) unsafe fn park_unlocking<T>(g: SpinGuard<'_, T>, p: &dyn Park, w: &Waiter) -> bool {
    unsafe fn drop_guard<G>(data: *mut ()) {
        // SAFETY: `data` is the `ManuallyDrop<G>` below, on the parked party's
        // stack, which stays put while it is parked, and `release` is called
        // exactly once (`Park::park_releasing`'s contract), so the guard is read
        // out once. The read moves it into this frame before it is dropped, so
        // the release store that lets the party be resumed is the last access to
        // the party's stack.
        drop(unsafe {
            std::mem::ManuallyDrop::take(&mut *(data as *mut std::mem::ManuallyDrop<G>))
        });
    }
    // Not an `Option`: `release` always runs, so there is nothing to test (a
    // guard left behind by a broken `Park` leaks, holding its lock, rather than
    // being dropped twice).
    let mut slot = std::mem::ManuallyDrop::new(g);
    // SAFETY: `drop_guard` matches `slot`'s type; the caller guarantees that no
    // unpark comes before the guard is dropped.
    unsafe {
        p.park_releasing(
            drop_guard::<SpinGuard<'_, T>>,
            &mut slot as *mut std::mem::ManuallyDrop<SpinGuard<'_, T>> as *mut (),
            w,
        )
    }
}

/// An `UnsafeCell` whose accesses loom can check for data races.
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T>(
    #[cfg(loom)] loom::cell::UnsafeCell<T>,
    #[cfg(not(loom))] std::cell::UnsafeCell<T>,
);

impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    #[cfg(not(loom))]
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }
    /// Wraps `value`.
    #[cfg(loom)]
    pub(crate) fn new(value: T) -> Self {
        Self(loom::cell::UnsafeCell::new(value))
    }
    /// Runs `f` with a shared raw pointer to the contents.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with(f);
        #[cfg(not(loom))]
        f(self.0.get())
    }
    /// Runs `f` with an exclusive raw pointer to the contents.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with_mut(f);
        #[cfg(not(loom))]
        f(self.0.get())
    }
}
