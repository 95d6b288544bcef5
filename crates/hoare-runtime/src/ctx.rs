//! Stack switching of our own: one symmetric [`switch`] between two saved
//! contexts, so that a process that blocks can hand its worker straight to the
//! next process, without the trip through the worker's stack. (corosensei, which
//! the checking runtime still uses, is asymmetric by design: a coroutine only
//! yields to whoever resumed it.)
//!
//! A context is a stack pointer. A suspended context's stack holds, from that
//! pointer up, the address to resume it at and what that code pops itself (its
//! frame and base registers). `switch` is inline assembly that declares every
//! other register clobbered, as corosensei's does: the compiler saves only what
//! is live across it, once per function, instead of six pushes and pops per
//! switch. It resumes the other context with an indirect jump rather than a
//! `ret`: a hand-off lands at the same place each time (the `switch` inlined in
//! the park of the process it resumes), which the branch target buffer learns,
//! while a `ret` would be predicted from the return stack of the context left.

/// Defines `hoare_ctx_trampoline_v1`, the base of every new context's stack,
/// with the given instructions (inside its CFI frame), as an ELF or Mach-O
/// symbol private to the binary, and declares it.
macro_rules! trampoline {
    ($($line:literal),* $(,)?) => {
        #[cfg(not(target_vendor = "apple"))]
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            ".globl hoare_ctx_trampoline_v1",
            ".hidden hoare_ctx_trampoline_v1",
            ".type hoare_ctx_trampoline_v1, %function",
            "hoare_ctx_trampoline_v1:",
            ".cfi_startproc",
            $($line,)*
            ".cfi_endproc",
            ".size hoare_ctx_trampoline_v1, . - hoare_ctx_trampoline_v1",
        );
        #[cfg(target_vendor = "apple")]
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            ".globl _hoare_ctx_trampoline_v1",
            ".private_extern _hoare_ctx_trampoline_v1",
            "_hoare_ctx_trampoline_v1:",
            ".cfi_startproc",
            $($line,)*
            ".cfi_endproc",
        );
        unsafe extern "C" {
            pub(super) fn hoare_ctx_trampoline_v1();
        }
    };
}

#[cfg(all(target_arch = "x86_64", unix))]
mod arch {
    use std::arch::asm;

    /// See [`super::switch`].
    #[inline(always)]
    pub(crate) unsafe fn switch(from: *mut usize, to: usize, arg: usize) -> usize {
        let ret: usize;
        // SAFETY: the caller's contract. rbx and rbp cannot be declared clobbered
        // (LLVM reserves them), so they are saved on the stack left; the rest is
        // declared clobbered.
        unsafe {
            asm!(
                "push rbp",
                "push rbx",
                "lea rax, [rip + 2f]",
                "push rax",
                "mov [rdi], rsp",
                "mov rsp, rsi",
                "pop rax",
                "jmp rax",
                "2:",
                "pop rbx",
                "pop rbp",
                inout("rdi") from => _,
                inout("rsi") to => _,
                inout("rdx") arg => ret,
                lateout("r12") _, lateout("r13") _, lateout("r14") _, lateout("r15") _,
                clobber_abi("sysv64"),
            );
        }
        ret
    }

    // The first switch into a new context lands here, with its entry and object
    // on the stack and the switch's `arg` in rdx. The return address is marked
    // undefined so that unwinders and backtraces stop at the base of the stack.
    trampoline!(
        ".cfi_undefined rip",
        "pop rbx",
        "pop rdi",
        "mov rsi, rdx",
        "xor ebp, ebp",
        "call rbx",
        "ud2",
    );

    /// A new context's initial stack, lowest address first, ending at its top:
    /// where the first switch resumes (the trampoline), which pops the entry
    /// and its object, leaving rsp 16-aligned for its `call`.
    pub(crate) fn frame(trampoline: usize, entry: usize, obj: usize) -> [usize; 5] {
        [trampoline, entry, obj, 0, 0]
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    use std::arch::asm;

    /// See [`super::switch`].
    #[inline(always)]
    pub(crate) unsafe fn switch(from: *mut usize, to: usize, arg: usize) -> usize {
        let ret: usize;
        // SAFETY: the caller's contract. x19 and x29 cannot be declared
        // clobbered (LLVM reserves them), so they are saved on the stack left,
        // with the resume address (a 32-byte record keeps sp 16-aligned); x18 is
        // the platform's and is not touched; the rest is declared clobbered.
        unsafe {
            asm!(
                "adr x9, 2f",
                "stp x29, x19, [sp, #-32]!",
                "str x9, [sp, #16]",
                "mov x9, sp",
                "str x9, [x0]",
                "mov sp, x1",
                "ldr x9, [sp, #16]",
                "br x9",
                "2:",
                "ldp x29, x19, [sp], #32",
                inout("x0") from => _,
                inout("x1") to => _,
                inout("x2") arg => ret,
                lateout("x20") _, lateout("x21") _, lateout("x22") _, lateout("x23") _,
                lateout("x24") _, lateout("x25") _, lateout("x26") _, lateout("x27") _,
                lateout("x28") _,
                clobber_abi("C"),
            );
        }
        ret
    }

    // The first switch into a new context lands here, with sp at its initial
    // record (entry and object above the 32 bytes a switch pops) and the
    // switch's `arg` in x2. The return address is marked undefined so that
    // unwinders and backtraces stop at the base of the stack.
    trampoline!(
        ".cfi_undefined x30",
        "ldp x9, x0, [sp, #32]",
        "mov x1, x2",
        "add sp, sp, #48",
        "mov x29, xzr",
        "blr x9",
        "brk #1",
    );

    /// A new context's initial stack, lowest address first, ending at its top:
    /// a switch's record (x29, x19, where to resume: the trampoline, padding),
    /// then the entry and its object, which the trampoline loads before it
    /// leaves sp at the top.
    pub(crate) fn frame(trampoline: usize, entry: usize, obj: usize) -> [usize; 6] {
        [0, 0, trampoline, 0, entry, obj]
    }
}

#[cfg(not(any(all(target_arch = "x86_64", unix), target_arch = "aarch64")))]
compile_error!("hoare switches stacks on x86_64 (Unix) and aarch64 only");

/// Switches from the running context to the one suspended at `to`, after
/// saving the running one's stack pointer into `*from`. Returns (in this
/// context, once something switches back to it) the `arg` that switch passed.
///
/// # Safety
/// `to` is a suspended context (made by [`init`], or saved by a `switch`) that
/// nothing else resumes meanwhile; `*from` is where whoever resumes this
/// context will look for it, and stays valid until then.
#[inline(always)]
pub(crate) unsafe fn switch(from: *mut usize, to: usize, arg: usize) -> usize {
    // SAFETY: forwarded.
    unsafe { arch::switch(from, to, arg) }
}

/// The entry of a new context: called with the object [`init`] was given and
/// the `arg` of the first switch into it; never returns (it switches away for
/// good).
pub(crate) type Entry = unsafe extern "C" fn(obj: usize, arg: usize) -> !;

/// Prepares a new context on the stack whose top (highest address, exclusive)
/// is `top`: the first switch to the returned stack pointer calls
/// `entry(obj, arg)`.
///
/// # Safety
/// `top` is 16-byte aligned, with at least 64 writable bytes below it, all of
/// them the new context's stack from here on.
pub(crate) unsafe fn init(top: usize, entry: Entry, obj: usize) -> usize {
    debug_assert_eq!(top % 16, 0);
    let f = arch::frame(
        arch::hoare_ctx_trampoline_v1 as *const () as usize,
        entry as usize,
        obj,
    );
    let sp = top - std::mem::size_of_val(&f);
    // SAFETY: the caller's contract: the frame's (at most 48) bytes below the
    // 16-aligned `top` are ours to write, and `sp` is word-aligned.
    unsafe { std::ptr::copy_nonoverlapping(f.as_ptr(), sp as *mut usize, f.len()) };
    sp
}
