//! Locking that ignores poison.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, even if a thread panicked while it held the lock: no code that
/// can panic halfway through an update runs under the runtime's locks (stack
/// pools, timers, the registry of thread processes), so what they guard is
/// always consistent, and the shutdown that follows a panic still needs them.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
