//! The short lock around one channel's state (a normal build; under loom it is a
//! loom mutex, see [`super`]).
//!
//! Critical sections under it are a handful of loads and stores (never a park, never
//! user code), and are contended by at most the parties of one channel, so a
//! test-and-test-and-set spin lock beats an OS mutex (C++CSP2 measured the same for
//! its channel mutexes): taking it is one atomic read-modify-write and releasing it
//! a plain release store. A holder that the OS preempts makes the others spin a
//! while and then yield their thread.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A test-and-test-and-set spin lock over a `T`, with a byte beside the lock
/// word fixed when the lock is made (its [`tag`](Self::tag)).
///
/// `repr(C)`: the lock word first, then the tag, then the value, so whoever lays
/// out a value knows what shares the lock word's cache line. Aligned to 2 at
/// least: the lock word's address is even, so a runtime may tag it
/// (`Park::park_unlocking`).
#[repr(C, align(2))]
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    /// Never written after `with_tag`: readable without the lock. It fills
    /// padding the value's alignment leaves anyway.
    tag: u8,
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives one holder at a time exclusive access to `value`.
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: moving the lock moves the value.
unsafe impl<T: Send> Send for SpinLock<T> {}

/// Holds a [`SpinLock`]; dropping it releases the lock.
pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> SpinLock<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self::with_tag(value, 0)
    }

    /// A lock over `value` whose [`tag`](Self::tag) is `tag`.
    pub(crate) const fn with_tag(value: T, tag: u8) -> Self {
        Self {
            locked: AtomicBool::new(false),
            tag,
            value: UnsafeCell::new(value),
        }
    }

    /// The byte given to [`with_tag`](Self::with_tag) (0 for `new`), read
    /// without the lock: it lies in the lock word's cache line, which taking
    /// the lock reads next.
    #[inline(always)]
    pub(crate) fn tag(&self) -> u8 {
        self.tag
    }

    #[inline]
    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow();
        }
        SpinGuard { lock: self }
    }

    #[cold]
    fn lock_slow(&self) {
        let mut spins = 0u32;
        loop {
            while self.locked.load(Ordering::Relaxed) {
                if spins < 100 {
                    std::hint::spin_loop();
                    spins += 1;
                } else {
                    std::thread::yield_now();
                }
            }
            if self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

impl<'a, T> SpinGuard<'a, T> {
    /// Gives up the guard without releasing the lock: the holder releases it by
    /// a release store of `false` to the flag returned.
    #[inline(always)]
    pub(crate) fn into_flag(self) -> &'a AtomicBool {
        let flag = &self.lock.locked;
        std::mem::forget(self);
        flag
    }
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: we hold the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: we hold the lock, and `&mut self` makes this the only borrow.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
