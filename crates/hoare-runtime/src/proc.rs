//! A process: its header (at the top of its own stack slot), its coroutine, and its
//! implementation of the park/unpark seam.

use crate::rt::{self, Shared, Task};
use crate::stack::{Pool, SlotStack};
use corosensei::{Coroutine, Yielder};
use hoare_core::park::{Park, Unparker};
use hoare_core::registration::{Registration, Withdraw};
use hoare_core::sched::ProcState;
use hoare_core::waiter::Waiter;
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::panic::Location;
use std::ptr;
use std::time::Instant;

/// What a process asks of its worker when it suspends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Req {
    /// Requeue at the back of the run queue.
    Yield,
    /// Park until unparked.
    Park,
    /// Park until unparked or the deadline passes.
    ParkUntil(Instant),
    /// Park, then call the function with the data on the worker (see
    /// `Park::park_releasing`).
    ParkRelease(unsafe fn(*mut ()), *mut ()),
}

pub(crate) type Coro = Coroutine<(), Req, (), SlotStack>;

/// Not pinned.
pub(crate) const PIN_NONE: u32 = u32::MAX;
/// Pinned to whichever worker first runs it.
pub(crate) const PIN_PENDING: u32 = u32::MAX - 1;

/// Polls a process may make without effect before it yields (see
/// `hoare_core::park`'s cooperative budget). Tokio's budget is 128 too. A poll
/// costs 30–100 ns, so a polling process lets its worker's queue and due timers
/// in every few microseconds, and pays one yield (about 30 ns on its own) per 128
/// polls.
pub(crate) const BUDGET: u32 = 128;

/// Where a parked process's timer sits: worker index and map key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimerKey {
    pub(crate) worker: usize,
    pub(crate) deadline: Instant,
    pub(crate) seq: u64,
}

/// A process's header. Lives at the top of its stack slot; owned by whoever holds
/// the right to run it (a run queue entry, a worker, or the unparker that took it
/// out of `PARKED`).
pub(crate) struct Proc {
    pub(crate) state: ProcState,
    pub(crate) coro: UnsafeCell<MaybeUninit<Coro>>,
    pub(crate) yielder: Cell<*const Yielder<(), Req>>,
    pub(crate) shared: *const Shared,
    pub(crate) pool: *const Pool,
    pub(crate) id: u64,
    /// Depth in the spawn tree (a process spawned by a process is one deeper). The
    /// shutdown sweep unwinds deeper processes first, so a scoped child always goes
    /// before the ancestor whose stack it borrows from.
    pub(crate) depth: u32,
    pub(crate) name: Option<Box<str>>,
    /// Where it was spawned (for reports).
    pub(crate) site: &'static Location<'static>,
    /// Worker index it is pinned to, or `PIN_NONE` / `PIN_PENDING`.
    pub(crate) pin: Cell<u32>,
    /// Set by a timer that fired this process's `park_until`.
    pub(crate) timed_out: Cell<bool>,
    /// Set while the shutdown sweep unwinds this process: it is cancelled (see
    /// `Park::cancelled`), so none of its operations may suspend it.
    pub(crate) unwinding: Cell<bool>,
    /// The waiter of the wait the process parked in last (null: a plain sleep).
    /// Valid while it is parked; read by the shutdown sweep (see
    /// `Waiter::is_held`).
    pub(crate) waiting: Cell<*const Waiter>,
    /// Whether the slot holds a process that has not finished (shutdown sweep).
    pub(crate) live: Cell<bool>,
    pub(crate) timer: Cell<Option<TimerKey>>,
    /// Polls left before a yield (see `BUDGET`); every yield refills it.
    pub(crate) budget: Cell<u32>,
    /// Start of the slot (its guard page), for the overflow handler.
    pub(crate) slot: usize,
}

impl Proc {
    /// The name for diagnostics.
    pub(crate) fn name_str(&self) -> &str {
        self.name.as_deref().unwrap_or("<unnamed>")
    }

    #[inline(always)]
    fn suspend(&self, r: Req) {
        let y = self.yielder.get();
        // SAFETY: `yielder` was set when the coroutine started and points into this
        // process's own stack; we are running on that stack now.
        unsafe { (*y).suspend(r) }
    }

    /// Requeues this (running) process at the back of its worker's queue.
    #[inline]
    pub(crate) fn yield_now(&self) {
        self.budget.set(BUDGET);
        self.suspend(Req::Yield);
    }

    /// One poll without effect: yields once `BUDGET` of them came without a yield.
    #[inline]
    fn spend(&self) {
        if self.unwinding.get() {
            // Being unwound by the shutdown sweep: it must not switch away.
            return;
        }
        let b = self.budget.get();
        if b > 1 {
            self.budget.set(b - 1);
        } else {
            self.yield_now();
        }
    }

    fn cancel_timer(&self) {
        if let Some(key) = self.timer.take() {
            // SAFETY: the runtime outlives its live processes.
            let shared = unsafe { &*self.shared };
            shared.cancel_timer(key);
        }
    }

    /// Consumes the one unpark of a committed wait without suspending (a process
    /// being unwound by the shutdown sweep runs on the sweeping thread, and must
    /// not switch away from it). The committer is running: it comes soon.
    #[cold]
    fn wait_token_unwinding(&self) {
        while !self.state.take_token() {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }

    /// The unpark function behind this process's [`Unparker`].
    unsafe fn unpark_raw(data: *const ()) {
        let p = data as *const Proc;
        // SAFETY: the unparker's contract keeps the process inside its wait, so the
        // header is valid until the transition in `unpark`; when that hands us
        // ownership (it was parked) nobody else may run or free it until we queue it.
        unsafe {
            if (*p).state.unpark() {
                rt::schedule_woken(Task::from_ptr(p));
            }
        }
    }
}

/// A process's timer entry, armed by its worker after the process suspended in
/// `park_until`: withdrawing it cancels the entry unless the timer fired (which
/// takes the key).
struct TimerSite<'a>(&'a Proc);

impl Withdraw for TimerSite<'_> {
    #[inline]
    fn withdraw(&mut self) -> bool {
        self.0.cancel_timer();
        false
    }
}

impl Park for Proc {
    fn yield_now(&self) {
        if !self.unwinding.get() {
            Proc::yield_now(self);
        }
    }

    fn spend_budget(&self) {
        self.spend();
    }

    #[inline]
    fn park(&self, w: &Waiter) {
        if self.state.take_token() {
            return;
        }
        if self.unwinding.get() {
            return self.wait_token_unwinding();
        }
        self.waiting.set(w);
        self.suspend(Req::Park);
        // The worker only resumes us after someone unparked us: no spurious return.
    }

    fn park_until(&self, deadline: Instant, w: Option<&Waiter>) -> bool {
        if self.state.take_token() {
            return true;
        }
        if self.unwinding.get() {
            return false;
        }
        if Instant::now() >= deadline {
            // A timed wait that expired before it began: a poll. A yield here is
            // harmless: an unpark that comes meanwhile finds the process running
            // and stays pending (the caller then finds its wait committed).
            self.spend();
            return false;
        }
        self.waiting
            .set(w.map_or(ptr::null(), |w| w as *const Waiter));
        // The worker arms the timer once we are suspended; this takes the entry
        // out again on every way out (unparked first, or the stack unwound).
        let _reg = Registration::without_waiter(TimerSite(self));
        self.suspend(Req::ParkUntil(deadline));
        !self.timed_out.replace(false)
    }

    #[inline]
    unsafe fn park_releasing(
        &self,
        release: unsafe fn(*mut ()),
        data: *mut (),
        w: &Waiter,
    ) -> bool {
        if self.unwinding.get() {
            // SAFETY: the caller's contract; we do not park at all.
            unsafe { release(data) };
            return false;
        }
        self.waiting.set(w);
        // The worker parks us and then calls `release` (see `WorkerLocal::run_one`);
        // as with `park`, it resumes us only after our one unpark.
        self.suspend(Req::ParkRelease(release, data));
        true
    }

    fn cancelled(&self) -> bool {
        self.unwinding.get()
    }

    fn unparker(&self) -> Unparker {
        // SAFETY: `unpark_raw` only touches the header until the CAS that lets the
        // process observe the unpark, and takes ownership otherwise.
        unsafe { Unparker::from_raw(self as *const Proc as *const (), Proc::unpark_raw) }
    }
}
