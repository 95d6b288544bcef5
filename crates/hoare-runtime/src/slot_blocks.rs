//! Memory for small join slots: cache-line blocks kept in free lists, a few
//! hundred per thread and the rest in a global list, instead of a `malloc` and a
//! `free` per spawn.
//!
//! Every spawn allocates the slot its process and its `JoinHandle` share (see
//! `api::join::SlotRef`). From glibc that cost ~400 instructions per spawn when
//! processes come and go in bursts (its per-thread cache holds 7 blocks of a
//! size; the rest go through the arena's bins and, freed on another worker,
//! through the arena's lock), and the arena grew its heap with `mprotect`,
//! which waits for the address space's lock while the stack pool's thread
//! advises stack memory (BENCHMARKS.md, "Spawn: join slots without malloc").
//!
//! Blocks are carved from chunks of [`CHUNK`] bytes that are never given back
//! (as Go keeps its goroutine descriptors): what stays allocated is the most
//! join slots ever alive at once, 64 bytes each. A thread keeps up to
//! [`LOCAL_MAX`] free blocks and moves [`BATCH`] at a time to or from the
//! global list, so the global lock is taken once per `BATCH` spawns. A
//! thread's blocks go to the global list when it exits.

use crate::sync::lock;
use std::alloc::{alloc, handle_alloc_error, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Bytes per block: a cache line, so that the slots of two processes never
/// share one (each slot's count and state are written from other threads).
pub(crate) const BLOCK: usize = 64;
/// Free blocks a thread keeps.
const LOCAL_MAX: usize = 512;
/// Blocks moved between a thread's list and the global one at a time.
const BATCH: usize = LOCAL_MAX / 2;
/// Bytes per chunk of new blocks (carved a batch at a time, so only the pages
/// of blocks handed out are touched).
const CHUNK: usize = 1 << 20;

/// A free block's address.
#[derive(Clone, Copy)]
struct Free(NonNull<u8>);

// SAFETY: a free block is plain memory owned by whichever list holds it.
unsafe impl Send for Free {}

struct Global {
    /// Batches of free blocks (each `BATCH` long), given back by threads.
    batches: Vec<Vec<Free>>,
    /// The part of the newest chunk not carved yet: `[next, end)`.
    next: usize,
    end: usize,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    batches: Vec::new(),
    next: 0,
    end: 0,
});

/// A thread's free blocks; given to the global list when the thread exits.
struct Local(Vec<Free>);

impl Drop for Local {
    fn drop(&mut self) {
        give_back(std::mem::take(&mut self.0));
    }
}

thread_local! {
    static LOCAL: RefCell<Local> = const { RefCell::new(Local(Vec::new())) };
}

/// Whether a value of type `T` fits a block.
pub(crate) const fn fits<T>() -> bool {
    std::mem::size_of::<T>() <= BLOCK && std::mem::align_of::<T>() <= BLOCK
}

/// A block of [`BLOCK`] bytes aligned to `BLOCK`, uninitialised (it may hold
/// what a freed slot left).
pub(crate) fn alloc_block() -> NonNull<u8> {
    let hit = LOCAL.try_with(|l| {
        let mut l = l.borrow_mut();
        if l.0.is_empty() {
            refill(&mut l.0);
        }
        l.0.pop()
    });
    match hit {
        Ok(Some(b)) => b.0,
        // The thread's list is gone (a thread-local destructor spawns): one
        // from the global list or a new chunk.
        _ => {
            let mut v = Vec::new();
            refill(&mut v);
            let b = v.pop().expect("a refill gives blocks");
            give_back(v);
            b.0
        }
    }
}

/// Gives back a block from [`alloc_block`].
///
/// # Safety
/// `b` came from `alloc_block`, is not used after this, and is given back once.
pub(crate) unsafe fn free_block(b: NonNull<u8>) {
    let kept = LOCAL.try_with(|l| {
        let mut l = l.borrow_mut();
        l.0.push(Free(b));
        if l.0.len() > LOCAL_MAX {
            let at = l.0.len() - BATCH;
            let batch = l.0.split_off(at);
            drop(l);
            give_back(batch);
        }
    });
    if kept.is_err() {
        // During the thread's exit, after its list went.
        give_back(vec![Free(b)]);
    }
}

/// Moves a batch of free blocks into `v` (empty): one given back by a thread,
/// or `BATCH` new ones carved from a chunk.
fn refill(v: &mut Vec<Free>) {
    let mut g = lock(&GLOBAL);
    if let Some(batch) = g.batches.pop() {
        *v = batch;
        return;
    }
    if g.end - g.next < BATCH * BLOCK {
        let layout = Layout::from_size_align(CHUNK, BLOCK).expect("chunk layout");
        // SAFETY: a non-zero size.
        let p = unsafe { alloc(layout) };
        if p.is_null() {
            handle_alloc_error(layout);
        }
        g.next = p as usize;
        g.end = g.next + CHUNK;
    }
    v.reserve(LOCAL_MAX + 1);
    for k in 0..BATCH {
        let a = g.next + k * BLOCK;
        // Not null: inside a chunk.
        v.push(Free(NonNull::new(a as *mut u8).expect("chunk address")));
    }
    g.next += BATCH * BLOCK;
}

/// Puts free blocks on the global list.
fn give_back(v: Vec<Free>) {
    if !v.is_empty() {
        lock(&GLOBAL).batches.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Blocks are aligned, distinct while held, and reused once freed, also
    /// across threads (freed on one, allocated on another) and after a
    /// thread exits with blocks in its list. Fails if two held blocks
    /// overlap (a batch handed out twice) or a freed block is never reused.
    #[test]
    fn blocks_are_distinct_aligned_and_reused_across_threads() {
        let held: Vec<usize> = (0..3 * LOCAL_MAX)
            .map(|_| alloc_block().as_ptr() as usize)
            .collect();
        let set: HashSet<usize> = held.iter().copied().collect();
        assert_eq!(set.len(), held.len(), "a block handed out twice");
        for &a in &held {
            assert_eq!(a % BLOCK, 0, "aligned");
            // SAFETY: a whole block we hold.
            unsafe { std::ptr::write_bytes(a as *mut u8, 0xa5, BLOCK) };
        }
        let sorted: Vec<usize> = {
            let mut s = held.clone();
            s.sort_unstable();
            s
        };
        for w in sorted.windows(2) {
            assert!(w[1] - w[0] >= BLOCK, "blocks overlap");
        }
        // Free them all on another thread, which then exits.
        let moved = held.clone();
        std::thread::spawn(move || {
            for a in moved {
                // SAFETY: allocated above, freed once.
                unsafe { free_block(NonNull::new(a as *mut u8).unwrap()) };
            }
        })
        .join()
        .unwrap();
        // Other tests of this process use the global list too: what this
        // thread gets back must include blocks it freed.
        let again: Vec<usize> = (0..3 * LOCAL_MAX)
            .map(|_| alloc_block().as_ptr() as usize)
            .collect();
        assert!(
            again.iter().any(|a| set.contains(a)),
            "freed blocks never came back"
        );
        for a in again {
            // SAFETY: allocated above, freed once.
            unsafe { free_block(NonNull::new(a as *mut u8).unwrap()) };
        }
    }
}
