//! The short lock around one channel's state.
//!
//! Critical sections here are a handful of loads and stores (never a park, never
//! user code), and are contended by at most the parties of one channel, so a
//! test-and-test-and-set spin lock beats an OS mutex (C++CSP2 measured the same for
//! its channel mutexes): taking it is one atomic read-modify-write and releasing it
//! a plain release store. A holder that the OS preempts makes the others spin a
//! while and then yield their thread. Under `--cfg loom` it is `crate::sync::Mutex`,
//! so loom sees every acquisition.

#[cfg(not(loom))]
mod imp {
    use std::cell::UnsafeCell;
    use std::ops::{Deref, DerefMut};
    use std::sync::atomic::{AtomicBool, Ordering};

    pub(crate) struct ChanLock<T> {
        locked: AtomicBool,
        value: UnsafeCell<T>,
    }

    // SAFETY: the lock gives one holder at a time exclusive access to `value`.
    unsafe impl<T: Send> Sync for ChanLock<T> {}
    // SAFETY: moving the lock moves the value.
    unsafe impl<T: Send> Send for ChanLock<T> {}

    pub(crate) struct ChanGuard<'a, T> {
        lock: &'a ChanLock<T>,
    }

    impl<T> ChanLock<T> {
        pub(crate) fn new(value: T) -> Self {
            Self {
                locked: AtomicBool::new(false),
                value: UnsafeCell::new(value),
            }
        }

        #[inline]
        pub(crate) fn lock(&self) -> ChanGuard<'_, T> {
            if self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                self.lock_slow();
            }
            ChanGuard { lock: self }
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

    impl<T> Deref for ChanGuard<'_, T> {
        type Target = T;
        #[inline]
        fn deref(&self) -> &T {
            // SAFETY: we hold the lock.
            unsafe { &*self.lock.value.get() }
        }
    }

    impl<T> DerefMut for ChanGuard<'_, T> {
        #[inline]
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: we hold the lock, and `&mut self` makes this the only borrow.
            unsafe { &mut *self.lock.value.get() }
        }
    }

    impl<T> Drop for ChanGuard<'_, T> {
        #[inline]
        fn drop(&mut self) {
            self.lock.locked.store(false, Ordering::Release);
        }
    }
}

#[cfg(loom)]
mod imp {
    use crate::sync::{lock, Mutex, MutexGuard};

    pub(crate) struct ChanLock<T>(Mutex<T>);
    pub(crate) type ChanGuard<'a, T> = MutexGuard<'a, T>;

    impl<T> ChanLock<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(Mutex::new(value))
        }
        pub(crate) fn lock(&self) -> ChanGuard<'_, T> {
            lock(&self.0)
        }
    }
}

pub(crate) use imp::{ChanGuard, ChanLock};
