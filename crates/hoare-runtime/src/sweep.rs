//! The shutdown sweep (docs/semantics.md#shutdown): once the workers have
//! stopped, every process that has not finished is unwound on the sweeping
//! thread, deepest in the spawn tree first, and one whose wait another party
//! holds after that party; what cannot be unwound is left as it is.

use crate::proc::Proc;
use crate::shared::Shared;
use crate::stack::Pool;
use crate::sync::lock;
use crate::worker::park::{set_not_running, set_running};
use crate::worker::release;
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering;

/// Every process of the runtime that has not finished, deepest in the spawn
/// tree first (see `Proc::depth`), newest first within a depth, each with
/// whether it was parked. The workers must be stopped; the sweep owns them from
/// here (parked ones are taken over, queued ones are never run again).
pub(crate) fn live_processes(sh: &Shared) -> Vec<(*mut Proc, bool)> {
    let live: i64 = sh.remote_live.load(Ordering::SeqCst)
        + sh.workers
            .iter()
            .map(|w| w.live.load(Ordering::SeqCst))
            .sum::<i64>();
    if live == 0 {
        return Vec::new();
    }
    let mut live = live_headers(sh);
    // SAFETY: the headers are written (see `live_headers`) and the workers stopped.
    live.sort_by_key(|&p| std::cmp::Reverse(unsafe { ((*p).depth, (*p).id) }));
    live.into_iter()
        // SAFETY: as above: the workers are gone, the sweep owns these processes.
        .map(|p| (p, unsafe { (*p).state.take_parked() }))
        .collect()
}

/// The header of every process of the runtime whose slot holds one that has not
/// finished, in slot order (the shutdown sweep and the deadlock detector walk
/// them, each with the workers stopped or held asleep).
pub(crate) fn live_headers(sh: &Shared) -> Vec<*mut Proc> {
    let mut pools: Vec<*const Pool> = vec![&sh.pool as *const Pool];
    pools.extend(lock(&sh.pools).iter().map(|p| &**p as *const Pool));
    let mut live: Vec<*mut Proc> = Vec::new();
    for &pool in &pools {
        // SAFETY: pools live as long as `sh`.
        let pool = unsafe { &*pool };
        for slot in pool.carved_slots() {
            let hp = pool.header_at(slot) as *mut Proc;
            // SAFETY: every carved slot's header was written by a spawn (slots
            // are carved only to be used) or zeroed by MADV_DONTNEED (live=false).
            if unsafe { (*hp).live.get() } {
                live.push(hp);
            }
        }
    }
    live
}

/// Unwinds every process of `pending` that nobody holds, pass after pass, and
/// leaves the others in `pending`. A process whose wait another party holds (an
/// extended rendezvous's reader that claimed it, a scope's children) is unwound
/// only after that party has let go of it: unwinding it first would free a waiter
/// the other party still writes to.
///
/// # Safety
/// The workers are stopped and the caller owns the processes.
pub(crate) unsafe fn sweep(pending: &mut Vec<(*mut Proc, bool)>) {
    loop {
        let before = pending.len();
        pending.retain(|&(p, parked)| {
            // SAFETY: a parked process's `waiting` points into its own stack, which
            // is intact (it has not been unwound).
            let held = parked
                && unsafe {
                    let w = (*p).waiting.get();
                    !w.is_null() && (*w).is_held()
                };
            if held {
                return true;
            }
            // SAFETY: the caller's contract.
            unsafe { unwind(p) };
            false
        });
        if pending.is_empty() || pending.len() == before {
            return;
        }
    }
}

/// Leaves processes as they are: neither unwound nor freed (their slots stay
/// allocated and their pools mapped, since something may still write to them).
pub(crate) fn leave(pending: &[(*mut Proc, bool)]) {
    for &(p, _) in pending {
        // SAFETY: the sweep owns these processes; the slot stays allocated.
        unsafe { leak(p) };
    }
}

/// Marks a process finished without freeing its slot, and keeps its pool mapped.
///
/// # Safety
/// The caller owns the process.
unsafe fn leak(p: *mut Proc) {
    // SAFETY: the caller's contract.
    unsafe {
        (*p).live.set(false);
        (*(*p).pool).keep_slot();
    }
}

/// Unwinds a process that has not finished, on the sweeping thread, and releases
/// its slot. The process is cancelled meanwhile (see `Park::cancelled`): none of
/// its operations may suspend it.
///
/// # Safety
/// The workers are stopped and the caller owns the process.
unsafe fn unwind(p: *mut Proc) {
    // SAFETY: the caller's contract.
    unsafe {
        let proc = &*p;
        if !proc.live.get() {
            return;
        }
        proc.unwinding.set(true);
        proc.worker.set(ptr::null());
        set_running(NonNull::new_unchecked(p));
        let a = crate::ctx::switch(proc.parent.as_ptr(), proc.sp.get(), crate::proc::UNWIND);
        set_not_running();
        if a != crate::proc::FINISHED {
            // It suspended again while being unwound (it must not): leak the
            // slot rather than touch it again (and keep its pool mapped).
            leak(p);
            return;
        }
        release(p, None);
    }
}
