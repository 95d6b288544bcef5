//! Where a parked process's stack ends, for the reports that look for the
//! channel ends it holds (`detect::holds`).
//!
//! A blocked process keeps the ends it holds somewhere on its stack: in its
//! frames' slots, or in registers that the switch away saved. With the blocking
//! operation inlined into the caller's frame (a plain `send`), those may lie
//! *below* the waiter (the compiler orders a frame's slots as it likes, and the
//! switch pushes registers below the frame), so the scan starts at the stack
//! pointer of the parked process (a worker's process: the one its switch saved;
//! a checking runtime's: the one recorded when it parked), a little below it,
//! not at the waiter.

/// How far below the recorded stack pointer the scan starts: the registers the
/// switch pushes, and the frames of the calls between the record and the switch.
/// Words there that are stale can only make a report show an extra holder (a
/// false match shows at worst a wrong cycle, never causes a report).
pub(crate) const SCAN_BELOW: usize = 512;

/// The current stack pointer (an address at or below every slot of the
/// caller's frame, once inlined into it): what a checking runtime's process
/// records when it parks (a worker's process needs none: its switch saves its
/// stack pointer anyway).
#[cfg(any(test, feature = "check"))]
#[inline(always)]
pub(crate) fn here() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let sp: usize;
        // SAFETY: reads the stack pointer into a register; no memory, no stack,
        // no flags touched.
        unsafe {
            std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(target_arch = "aarch64")]
    {
        let sp: usize;
        // SAFETY: as above.
        unsafe {
            std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        below()
    }
}

/// An address in a frame below the caller's (the fallback of [`here`]).
#[cfg(all(
    any(test, feature = "check"),
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
))]
#[inline(never)]
fn below() -> usize {
    let x = 0u8;
    std::hint::black_box(&x) as *const u8 as usize
}

/// Where the scan of a parked process's stack for the ends it holds starts:
/// [`SCAN_BELOW`] under the stack pointer it parked at (`sp`, 0 if unknown), or
/// at its waiter (`waiter`, 0 if none), whichever is lower, never below `limit`
/// (the lowest mapped address of its stack) nor above `top`.
pub(crate) fn scan_from(sp: usize, waiter: usize, limit: usize, top: usize) -> usize {
    let mut from = top;
    if waiter != 0 && waiter < from {
        from = waiter;
    }
    if sp != 0 && sp < top {
        from = from.min(sp.saturating_sub(SCAN_BELOW));
    }
    from.max(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_starts_below_the_stack_pointer_within_the_stack() {
        assert_eq!(scan_from(10_000, 12_000, 0, 20_000), 10_000 - SCAN_BELOW);
        assert_eq!(scan_from(0, 12_000, 0, 20_000), 12_000);
        assert_eq!(scan_from(0, 0, 0, 20_000), 20_000);
        // Never below the stack's lowest mapped address.
        assert_eq!(scan_from(9_800, 12_000, 9_700, 20_000), 9_700);
        // A recorded pointer above the top (not this stack's) is ignored.
        assert_eq!(scan_from(30_000, 12_000, 0, 20_000), 12_000);
    }

    #[test]
    fn here_is_on_this_threads_stack() {
        let x = 0u8;
        let a = &x as *const u8 as usize;
        let sp = here();
        assert!(sp <= a && a - sp < 1 << 20, "sp {sp:#x}, local {a:#x}");
    }
}
