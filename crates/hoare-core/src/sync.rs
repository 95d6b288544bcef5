//! The synchronisation primitives the core is written against: `std`'s in a normal
//! build, loom's under `--cfg loom`, so every protocol in this crate is model-checked
//! by the same code that runs in production.

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
#[cfg(loom)]
pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread;

#[cfg(not(loom))]
pub use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
#[cfg(not(loom))]
pub use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread;

pub use std::sync::atomic::Ordering;

/// Locks `m`, ignoring poisoning: the core never panics while holding a lock, and a
/// user panic cannot reach one of its critical sections.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// An `UnsafeCell` whose accesses loom can check for data races.
#[derive(Debug, Default)]
pub struct UnsafeCell<T>(
    #[cfg(loom)] loom::cell::UnsafeCell<T>,
    #[cfg(not(loom))] std::cell::UnsafeCell<T>,
);

impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    #[cfg(not(loom))]
    pub const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }
    /// Wraps `value`.
    #[cfg(loom)]
    pub fn new(value: T) -> Self {
        Self(loom::cell::UnsafeCell::new(value))
    }
    /// Runs `f` with a shared raw pointer to the contents.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with(f);
        #[cfg(not(loom))]
        f(self.0.get())
    }
    /// Runs `f` with an exclusive raw pointer to the contents.
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with_mut(f);
        #[cfg(not(loom))]
        f(self.0.get())
    }
}
