//! A process's side of the park/unpark seam (`impl Park for Proc`): what each
//! wait asks of its worker, the unparker, and where a woken process goes. The
//! worker's side (the transition to `PARKED` after the switch, arming a timer)
//! is `WorkerLocal::run_one` (and `Timers::park_until`).

use super::WorkerLocal;
use crate::context;
use crate::proc::{Proc, Req, Task};
use hoare_core::park::{self, Park, Party, Unparker};
use hoare_core::registration::{Registration, Withdraw};
use hoare_core::waiter::Waiter;
use std::ptr::{self, NonNull};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Makes `p` the process running on this thread, for this crate and for
/// `hoare_core::park`, until `set_not_running`: around each resume.
///
/// # Safety
/// `p` stays valid and runs on this thread until then.
#[inline(always)]
pub(crate) unsafe fn set_running(p: NonNull<Proc>) {
    // SAFETY: the caller's contract; the party lives in `p`'s header.
    unsafe { park::set_current_party(&p.as_ref().party) };
}

/// No process runs on this thread any more (see `set_running`).
#[inline(always)]
pub(crate) fn set_not_running() {
    // SAFETY: unsetting is always sound.
    unsafe { park::set_current_party(ptr::null()) };
}

impl Proc {
    /// Hands this thread's worker from this (running) process to `next`
    /// directly: `next` runs on from where it switched away, with `handoff`
    /// (see `landed`) to complete first; we run on when someone switches back.
    ///
    /// # Safety
    /// We run on `wl`'s thread; the caller holds `next`'s task, and has put
    /// ours where nobody can resume it before our stack is left (only `handoff`
    /// may release it).
    #[inline(always)]
    pub(crate) unsafe fn hand_to(&self, wl: &WorkerLocal, next: Task, handoff: usize) {
        let np = next.header();
        // SAFETY: the caller's contract.
        unsafe {
            wl.enter(np);
            let n = np.as_ref();
            // Whoever resumed us waits in its switch; `next` returns there.
            n.parent.set(self.parent.get());
            let arg = crate::ctx::switch(self.sp.as_ptr(), n.sp.get(), handoff);
            crate::proc::landed(arg);
        }
    }

    /// Parks this process with `release(data)` called once nobody but its
    /// unparker can resume it (`Park::park_releasing`): handing the worker
    /// straight to the next process when there is one, which then finishes the
    /// release (`proc::landed`): with `unlock`, from `data` tagged `UNLOCK` (a
    /// lock flag's address, `release` being `park::unlock_raw`), else from a
    /// `Handoff` of `release` and `data` on this frame.
    ///
    /// # Safety
    /// As `Park::park_releasing`; with `unlock`, `data` is the (even) address
    /// of a lock flag and `release` unlocks it.
    #[inline(always)]
    unsafe fn park_then(
        &self,
        release: unsafe fn(*mut ()),
        data: *mut (),
        unlock: bool,
        w: &Waiter,
    ) -> bool {
        // Only the shutdown sweep unwinds a process, and it clears `worker`
        // first: a process on a worker needs no look at `unwinding`.
        let wl = self.worker.get().cast::<WorkerLocal>();
        if wl.is_null() && self.unwinding.get() {
            // SAFETY: the caller's contract; we do not park at all.
            unsafe { release(data) };
            return false;
        }
        debug_assert!(wl.is_null() || !self.unwinding.get());
        self.waiting.set(w);
        if !wl.is_null() {
            // SAFETY: the worker that entered us runs us (and so lives in its
            // loop) until we switch away; not used after the switch below.
            let wl = unsafe { &*wl };
            if let Some(next) = wl.next_direct() {
                // Nobody can unpark us before `release` (the caller holds a lock
                // every unparker takes): plain stores, as the worker would.
                if !self.state.park_sole_uncontended() {
                    // An unpark came first: we go on; `next` goes back.
                    let _ = wl.push_next(next);
                    // SAFETY: the caller's contract.
                    unsafe { release(data) };
                    return true;
                }
                let h = crate::proc::Handoff { release, data };
                let arg = if unlock {
                    data as usize | crate::proc::UNLOCK
                } else {
                    &h as *const crate::proc::Handoff as usize
                };
                // SAFETY: we hold `next`'s task; nobody can unpark us before
                // `next` releases (once our stack is left).
                unsafe { self.hand_to(wl, next, arg) };
                return true;
            }
        }
        // The worker parks us and then calls `release` (see `WorkerLocal::run_one`);
        // as with `park`, it resumes us only after our one unpark.
        self.suspend(Req::ParkRelease(release, data));
        true
    }

    fn cancel_timer(&self) {
        if let Some(key) = self.timer.take() {
            self.shared().workers[key.worker].timers.cancel(key);
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

    /// The unpark function behind this process's [`Unparker`]. Never inlined,
    /// and never switches: it reads the worker's thread-local inline (see
    /// `schedule_woken`).
    #[inline(never)]
    unsafe fn unpark_raw(data: *const ()) {
        let p = data as *const Proc;
        // SAFETY: the unparker's contract keeps the process inside its wait, so the
        // header is valid until the transition in `unpark`; when that hands us
        // ownership (it was parked) nobody else may run or free it until we queue it.
        unsafe {
            if (*p).state.unpark() {
                schedule_woken(Task::from_ptr(p));
            }
        }
    }
}

/// Makes a process that an unpark took out of `PARKED` runnable: into the waker's
/// "next" slot when the waker is a process on a worker of the same runtime, else
/// into the global (or, pinned, its worker's) queue.
///
/// # Safety
/// The caller owns `t` (it won the transition out of `PARKED`), and is
/// `Proc::unpark_raw` (see the thread-local read below).
// Inlined into `Proc::unpark_raw`: one call level less on every wake.
#[inline(always)]
unsafe fn schedule_woken(t: Task) {
    let shared = t.proc().shared;
    // SAFETY: inlined only into `Proc::unpark_raw`, which is never inlined, and
    // nothing here switches stacks (a push to a queue, a notify, an out-of-line
    // push from outside): the thread-local's address is used on this thread only.
    let w: *const WorkerLocal = unsafe { context::current_worker_no_switch() }.cast();
    if !w.is_null() {
        // SAFETY: a worker's local state lives as long as its thread's loop, and this
        // code runs inside that loop (in a process or the scheduler).
        let w = unsafe { &*w };
        if ptr::eq(w.shared.cast(), shared) {
            let _ = w.push_next(t);
            return;
        }
    }
    // SAFETY: the caller's contract.
    unsafe { schedule_remote(t) }
}

/// `schedule_woken` from outside the runtime's workers.
///
/// # Safety
/// As `schedule_woken`.
#[cold]
#[inline(never)]
unsafe fn schedule_remote(t: Task) {
    let shared = t.proc().shared;
    // From outside the runtime: keep it alive while we queue and notify (the process
    // may run, finish, and the runtime shut down right after the push).
    // SAFETY: the process is live and owned by us, so its runtime is too; the `Arc`
    // the runtime was built from has at least one strong count.
    let shared = unsafe {
        let shared = shared.cast::<crate::shared::Shared>();
        Arc::increment_strong_count(shared);
        Arc::from_raw(shared)
    };
    shared.push_remote(t);
}

/// A process's timer entry, armed by its worker after the process suspended in
/// `park_until`: withdrawing it cancels the entry unless the timer fired (which
/// takes the key).
struct TimerSite<'a>(&'a Proc);

impl Withdraw for TimerSite<'_> {
    #[inline]
    fn withdraw(&mut self, _: Option<&Waiter>) -> bool {
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
        // SAFETY: the caller's contract.
        unsafe { self.park_then(release, data, false, w) }
    }

    #[inline]
    unsafe fn park_unlocking(&self, lock: &AtomicBool, w: &Waiter) -> bool {
        let flag = (lock as *const AtomicBool).cast_mut().cast();
        // SAFETY: the caller's contract (the flag's address is even, so the
        // tagged address says "unlock" to `landed`).
        unsafe { self.park_then(park::unlock_raw, flag, true, w) }
    }

    fn cancelled(&self) -> bool {
        self.unwinding.get()
    }

    fn unparker(&self) -> Unparker {
        self.party.unparker()
    }
}

impl Proc {
    /// The core's view of the process whose header is (to be) at `p` (its
    /// `party` field): the party, its unparker, and itself as the owner (what
    /// `proc::current` reads back). Does not read `p`.
    pub(crate) fn party_at(p: *const Proc) -> Party {
        let dynp: NonNull<dyn Park> = NonNull::new(p.cast_mut()).expect("a header");
        // SAFETY: `unpark_raw` only touches the header until the transition that
        // lets the process observe the unpark, and takes ownership otherwise; it
        // is the unparker `Park::unparker` returns (the one made here).
        unsafe {
            Party::from_parts(
                dynp,
                Unparker::from_raw(p.cast::<()>(), Proc::unpark_raw),
                p.cast::<()>(),
            )
        }
    }
}
