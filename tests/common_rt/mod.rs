//! Helpers shared by the runtime tests.
#![allow(dead_code)]

use hoare::core::waiter::Waiter;
use std::sync::Mutex;

/// A one-shot gate: processes (or threads) block in `wait` until `open`.
#[derive(Default)]
pub struct Gate {
    state: Mutex<(bool, Vec<usize>)>,
}

impl Gate {
    pub fn wait(&self) {
        let w = Waiter::for_current();
        {
            let mut g = self.state.lock().unwrap();
            if g.0 {
                return;
            }
            g.1.push(&w as *const Waiter as usize);
        }
        w.wait(None);
    }

    pub fn open(&self) {
        let ws = {
            let mut g = self.state.lock().unwrap();
            g.0 = true;
            std::mem::take(&mut g.1)
        };
        for w in ws {
            // SAFETY: a registered waiter stays in its wait until this, its only wake.
            unsafe { Waiter::try_wake(w as *const Waiter, 0, false) };
        }
    }
}

/// A tiny deterministic PRNG (xorshift).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
