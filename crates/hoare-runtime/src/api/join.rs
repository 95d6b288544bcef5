//! A process's body and its result: the [`Process`] trait, the join slot a
//! process and its [`JoinHandle`] share, and what completes it when the process
//! ends (`run_body` and `Finish`), also counting down a scope's children
//! (`ChildCount`).

use super::error::ProcessError;
use crate::proc;
use crate::slot_blocks;
use hoare_core::sched::JoinSlot;
use hoare_core::waiter::Waiter;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// A process's body as a value. Closures `FnOnce() -> T + Send` are processes
/// too, so anything that takes a `Process` takes a closure.
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

type Slot<T> = JoinSlot<Result<T, ProcessError>>;

/// A join slot shared by exactly two owners (the process and its handle). Unlike
/// an `Arc` it is born with both references, and the last owner frees it without
/// an atomic read-modify-write: two fewer locked instructions per spawn. A slot
/// that fits a cache line (a process returning up to ~16 bytes) lives in a
/// block of `slot_blocks`, not on the heap.
pub(crate) struct SlotRef<T>(NonNull<SlotBox<T>>);

struct SlotBox<T> {
    refs: AtomicUsize,
    slot: Slot<T>,
}

// SAFETY: the slot is `Sync` for `T: Send` and the count is atomic.
unsafe impl<T: Send> Send for SlotRef<T> {}
// SAFETY: see `Send`.
unsafe impl<T: Send> Sync for SlotRef<T> {}

impl<T> SlotRef<T> {
    /// The two references: the process's and the handle's.
    pub(crate) fn pair() -> (Self, Self) {
        let b = SlotBox {
            refs: AtomicUsize::new(2),
            slot: JoinSlot::new(),
        };
        let p = if slot_blocks::fits::<SlotBox<T>>() {
            let p = slot_blocks::alloc_block().cast::<SlotBox<T>>();
            // SAFETY: a block is large and aligned enough for a `SlotBox<T>`
            // (`fits`), and ours until `free_block`.
            unsafe { p.as_ptr().write(b) };
            p
        } else {
            NonNull::from(Box::leak(Box::new(b)))
        };
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
        // SAFETY: alive until the last reference goes; a count of 1 seen with
        // Acquire means the other owner is gone for good, so nobody can race us.
        // The memory goes back the way `pair` took it (`fits` is a constant).
        unsafe {
            let refs = &self.0.as_ref().refs;
            if refs.load(Ordering::Acquire) == 1 || refs.fetch_sub(1, Ordering::AcqRel) == 1 {
                if slot_blocks::fits::<SlotBox<T>>() {
                    // The block came from `alloc_block` (see `pair`).
                    ptr::drop_in_place(self.0.as_ptr());
                    slot_blocks::free_block(self.0.cast());
                } else {
                    drop(Box::from_raw(self.0.as_ptr()));
                }
            }
        }
    }
}

/// Waits for a process and gives its result.
#[must_use = "dropping a JoinHandle detaches the process"]
pub struct JoinHandle<T> {
    pub(crate) slot: SlotRef<T>,
    pub(crate) id: u64,
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
            .join_or_cancel_for(self.id)
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

/// The wait record of a scope waiting for its processes.
unsafe fn scope_wait(_: *const ()) -> hoare_core::wait::Wait {
    hoare_core::wait::Wait::Scope
}

/// Counts a scope's running children; the last one to finish wakes the scope's
/// owner.
pub(crate) struct ChildCount {
    /// The children still running, plus one for the owner until it waits.
    pending: AtomicUsize,
    waiter: AtomicPtr<Waiter>,
    /// The checker's key of the scope (see [`crate::check::scope_key`]).
    #[cfg(feature = "check")]
    pub(crate) check_key: usize,
}

impl ChildCount {
    pub(crate) fn new() -> Self {
        Self {
            pending: AtomicUsize::new(1),
            waiter: AtomicPtr::new(ptr::null_mut()),
            #[cfg(feature = "check")]
            check_key: crate::check::scope_key(),
        }
    }

    /// Counts one more child.
    pub(crate) fn add(&self) {
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a child down.
    ///
    /// # Safety
    /// `this` is alive: its owner waits for every child's count-down.
    unsafe fn child_done(this: *const ChildCount) {
        // SAFETY: caller's contract; after our decrement we touch `this` only if we
        // were last, and then the owner is still waiting for our wake-up.
        unsafe {
            if (*this).pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                let w = (*this).waiter.load(Ordering::Acquire);
                Waiter::try_wake(w, 0, false);
            }
        }
    }

    /// The owner's part: waits until every child has counted down. Not even a
    /// shutdown ends this wait early: the children borrow from the owner's frame
    /// (the sweep unwinds them first, see `Core::shutdown`).
    pub(crate) fn wait_all(&self) {
        #[cfg(feature = "check")]
        hoare_core::step::step(|| {
            hoare_core::step::Op::one(
                hoare_core::step::OpKind::Join,
                self.check_key,
                hoare_core::step::Class::Join,
                hoare_core::step::Access::Other,
            )
        });
        // A private hand-off: the last child to finish wakes this waiter through
        // `waiter`.
        let waiter = hoare_core::park::with_current(|p| {
            Waiter::private(p.unparker()).on(hoare_core::wait::WaitOn::fixed(scope_wait))
        });
        self.waiter
            .store(&waiter as *const _ as *mut _, Ordering::Release);
        if self.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
            waiter.wait_uncancellable();
        }
    }
}

/// Completes a process's join slot (and counts down its scope) when dropped, so a
/// process that is unwound at shutdown, or dropped before it ever ran, still
/// reports `Cancelled` and releases its scope.
pub(crate) struct Finish<T> {
    pub(crate) slot: Option<SlotRef<T>>,
    pub(crate) scope: *const ChildCount,
}

// SAFETY: the scope pointer is only used to count down the scope's atomics, and
// the slot is `Send` for `T: Send`.
unsafe impl<T: Send> Send for Finish<T> {}

impl<T> Finish<T> {
    pub(crate) fn complete(&mut self, r: Result<T, ProcessError>) {
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
            unsafe { ChildCount::child_done(self.scope) };
        }
    }
}

/// The body of every process (a coroutine's, a thread process's, the root of
/// `Runtime::run`): runs `p` and completes its join slot with the result, or with
/// the panic that ended it. A process that the shutdown sweep unwinds reports
/// `Cancelled`, and its unwinding goes on to the base of its stack (where the
/// sweep's `force_unwind` waits for it).
pub(crate) fn run_body<P: Process>(p: P, mut fin: Finish<P::Output>) {
    let r = catch_unwind(AssertUnwindSafe(|| p.run()));
    #[cfg(feature = "check")]
    check_exit(&fin, &r);
    match r {
        Ok(v) => fin.complete(Ok(v)),
        Err(e) if proc::current_is_unwinding() => {
            fin.complete(Err(ProcessError::Cancelled));
            drop(fin);
            resume_unwind(e);
        }
        Err(e) => fin.complete(Err(ProcessError::from_panic(&*e))),
    }
}

/// The checking runtime's view of a process's end (see `check::exit`).
#[cfg(feature = "check")]
#[cold]
fn check_exit<T, R>(fin: &Finish<T>, r: &Result<R, Box<dyn std::any::Any + Send>>) {
    if !crate::check::active() {
        return;
    }
    let slot = fin
        .slot
        .as_ref()
        .map_or(0, |s| &**s as *const Slot<T> as usize);
    let e = r.as_ref().err().map(|e| ProcessError::from_panic(&**e));
    // SAFETY: the scope waits for this child's count-down, which comes later.
    let scope = unsafe { fin.scope.as_ref() }.map_or(0, |c| c.check_key);
    crate::check::exit(slot, scope, e.as_ref());
}
