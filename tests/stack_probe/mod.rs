//! A stack-depth probe: how deep the stack of the calling process gets while a
//! closure runs (its high-water mark), measured by painting the unused stack below
//! the caller with a pattern and looking afterwards for the lowest word that
//! changed. Used to count how many copies of a large value a channel operation
//! keeps on the stack (issue 17 §2).
#![allow(dead_code)]

const PATTERN: u64 = 0x5AFE_C0DE_DEAD_BEEF;
/// Bytes left alone below the painter's own frame.
const MARGIN: usize = 1024;

/// The address of a local of a frame that is not inlined: about the stack pointer
/// of the caller at the call.
#[inline(never)]
fn stack_pointer() -> usize {
    let x = 0u8;
    std::hint::black_box(&x) as *const u8 as usize
}

/// Paints `len` bytes of the unused stack below the caller (below a margin under
/// this frame); returns the lowest painted address.
#[inline(never)]
fn paint(len: usize) -> usize {
    let top = (stack_pointer() - MARGIN) & !7;
    let low = top - len;
    let mut a = low;
    while a < top {
        // SAFETY: the range lies below every live frame of this process's stack
        // (the caller guarantees `len` bytes more are mapped below it), so nothing
        // reads it until the next call writes its own frames there.
        unsafe { std::ptr::write_volatile(a as *mut u64, PATTERN) };
        a += 8;
    }
    low
}

/// The deepest point (in bytes below the caller's frame) that the stack reached
/// while `f` ran. The process must have `len` bytes more of stack below the caller.
#[inline(never)]
pub fn depth<R>(len: usize, f: impl FnOnce() -> R) -> (usize, R) {
    let base = stack_pointer();
    let low = paint(len);
    let r = std::hint::black_box(f());
    let mut a = low;
    // SAFETY: as in `paint`: the range is this process's mapped stack.
    while unsafe { std::ptr::read_volatile(a as *const u64) } == PATTERN {
        a += 8;
    }
    assert!(a > low + 4096, "the probe's painted range was exhausted");
    (base - a, r)
}
