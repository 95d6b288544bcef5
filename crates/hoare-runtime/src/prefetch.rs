//! Software prefetch of the processes about to run from a long queue.
//!
//! A process that waited behind thousands of others (one of many released at
//! once: a barrier, a gate, a fan-out of wakes) has its header and the top of
//! its stack out of every cache and its page out of the TLB: resuming it, and
//! returning through its frames, waits for a page walk and a miss per line.
//! Asking for the next ones' lines while the current one runs hides that wait:
//! on a lone worker, the spawn benchmark's join went from 48 to 18 ms for
//! 100,000 processes and a stressed barrier of 2 × 65,536 from 45 to 26 ms a
//! sync (BENCHMARKS.md, "Prefetching a long queue"). A short queue's processes
//! are still in the caches, and asking costs a few instructions per line for
//! nothing (CommsTime PAR and StressedAlt lost 12–20% when every pop asked):
//! only a queue of [`COLD_QUEUE`] or more asks.

use crate::proc::Proc;

/// The queue length from which the next processes are taken to be cold: 2,048
/// processes whose resumes each touch ~1–2 KiB of stack and header are more
/// than a core's L2 cache (1–2 MiB) holds.
pub(crate) const COLD_QUEUE: usize = 2048;
// A lone worker's pop looks at the two processes behind the one it takes.
const _: () = assert!(COLD_QUEUE >= 2);

/// The most lines of a stack [`stack`] asks for (2 KiB: a process blocked a
/// few calls deep in a channel operation or a wait).
const STACK_LINES: usize = 32;

/// Asks the CPU to bring the first two lines of the header at `p` (and so its
/// page's translation) into the cache: a hint, no access is made.
#[inline(always)]
pub(crate) fn header(p: *const Proc) {
    line(p.cast());
    line(p.cast::<u8>().wrapping_add(64));
}

/// Asks for the lines between the saved stack pointer of the suspended process
/// whose header is at `p` and that header (its saved registers, and the frames
/// it resumes and returns through), at most [`STACK_LINES`]. Reads the header's
/// saved stack pointer: a miss, unless the header was asked for earlier with
/// [`header`] (a lone worker does that a pop ahead; with several workers the
/// one miss is taken so that the stack's lines are asked for all at once).
///
/// # Safety
/// `p` is a queued process's header: live and suspended (queued processes do
/// not finish, and the saved stack pointer changes only while one runs).
#[inline(always)]
pub(crate) unsafe fn stack(p: *const Proc) {
    // SAFETY: the caller's contract; `sp` is a plain field nobody writes while
    // the process is queued.
    let sp = unsafe { (*p).sp.get() };
    let lines = ((p as usize).saturating_sub(sp) / 64).min(STACK_LINES);
    for k in 0..=lines {
        line((sp + 64 * k) as *const u8);
    }
}

/// One prefetch of the line at `a` into all cache levels.
#[inline(always)]
fn line(a: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults and makes no architectural
    // access, whatever the address; SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(a.cast())
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above (`prfm` is a hint that never faults).
    unsafe {
        std::arch::asm!("prfm pldl1keep, [{0}]", in(reg) a, options(nostack, preserves_flags, readonly))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = a;
}
