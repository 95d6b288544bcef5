//! Test hooks (feature `cxx-test-hooks`, which hoare's own C++ tests and examples
//! build with; users linking hoare do not get it): the Rust processes of the
//! mixed Rust/C++ network demo (`cpp/examples/mixed.cpp`, `hoare::rust_procs` in
//! `cpp/include/hoare/test_hooks.hpp`), a CommsTime written in Rust for the C++
//! CommsTime to compare with, and failure-path hooks for `cpp/tests`.
//!
//! A second cxx bridge: cxx cannot leave out single items of one bridge, so these
//! items have a bridge (and a generated header, `hoare/src/ffi/test_hooks.rs.h`) of
//! their own, compiled only with the feature. It names the main bridge's types
//! (`ChanTx`, `ChanRx`, `ProcHandle`) as aliases, as a user's own bridge would.

use super::backend::{self, Buf, Wait};
use super::bridge::Task;
use super::guard;
use super::rust_side::NativeElem;
use super::{ChanRx, ChanTx, ProcHandle};
use std::time::Instant;

#[cxx::bridge(namespace = "hoare::ffi")]
#[allow(missing_docs)]
mod hooks {
    unsafe extern "C++" {
        include!("hoare/src/ffi/mod.rs.h");

        type ChanTx = crate::ffi::ChanTx;
        type ChanRx = crate::ffi::ChanRx;
        type ProcHandle = crate::ffi::ProcHandle;
    }

    extern "Rust" {
        // Rust processes for the mixed Rust/C++ example and tests.
        fn rust_doubler(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<()>;
        fn rust_upper(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<()>;
        fn rust_reverse_bytes(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<()>;
        fn rust_counter(n: i64) -> Result<Box<ChanRx>>;
        fn rust_sum(rx: Box<ChanRx>) -> Result<i64>;
        fn rust_commstime(iters: i64) -> Result<f64>;

        // Failure-path hooks for the C++ tests.
        fn test_panic(msg: &str) -> Result<()>;
        fn test_spawn_panicking() -> Result<Box<ProcHandle>>;
    }
}

// ---------------------------------------------------------------- mixed-network demo

fn wrong_type(what: &str) -> String {
    format!("hoare: channel end has the wrong element type (expected {what})")
}

/// A Rust process that doubles every integer from `rx` onto `tx` until poison, then
/// poisons `tx`.
fn rust_doubler(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<(), String> {
    guard(move || {
        let rx = i64::rx_from(*rx).map_err(|_| wrong_type("i64"))?;
        let tx = i64::tx_from(*tx).map_err(|_| wrong_type("i64"))?;
        let _detached = backend::spawn(false, 0, move || {
            while let Ok(v) = rx.recv(Wait::Block) {
                if tx.send(v * 2, Wait::Block).is_err() {
                    break;
                }
            }
            rx.poison();
            tx.poison();
        })?;
        Ok(())
    })
}

/// A Rust process that upper-cases every string from `rx` onto `tx`.
fn rust_upper(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<(), String> {
    guard(move || {
        let rx = String::rx_from(*rx).map_err(|_| wrong_type("String"))?;
        let tx = String::tx_from(*tx).map_err(|_| wrong_type("String"))?;
        let _detached = backend::spawn(false, 0, move || {
            while let Ok(s) = rx.recv(Wait::Block) {
                if tx.send(s.to_uppercase(), Wait::Block).is_err() {
                    break;
                }
            }
            rx.poison();
            tx.poison();
        })?;
        Ok(())
    })
}

/// A Rust process that reverses every byte buffer from `rx` onto `tx`.
fn rust_reverse_bytes(rx: Box<ChanRx>, tx: Box<ChanTx>) -> Result<(), String> {
    guard(move || {
        let rx = <Vec<u8>>::rx_from(*rx).map_err(|_| wrong_type("Vec<u8>"))?;
        let tx = <Vec<u8>>::tx_from(*tx).map_err(|_| wrong_type("Vec<u8>"))?;
        let _detached = backend::spawn(false, 0, move || {
            while let Ok(mut b) = rx.recv(Wait::Block) {
                b.reverse();
                if tx.send(b, Wait::Block).is_err() {
                    break;
                }
            }
            rx.poison();
            tx.poison();
        })?;
        Ok(())
    })
}

/// A Rust process that sends `0..n` on a channel it made, then poisons it; returns
/// the reading end to C++.
fn rust_counter(n: i64) -> Result<Box<ChanRx>, String> {
    guard(move || {
        let (tx, rx) = backend::channel::<i64>(false, false, Buf::Rendezvous);
        let _detached = backend::spawn(false, 0, move || {
            for i in 0..n {
                if tx.send(i, Wait::Block).is_err() {
                    return;
                }
            }
            tx.poison();
        })?;
        Ok(Box::new(i64::rx_into(rx)))
    })
}

/// Sums the integers from `rx` until poison, in the calling process.
fn rust_sum(rx: Box<ChanRx>) -> Result<i64, String> {
    guard(move || {
        let rx = i64::rx_from(*rx).map_err(|_| wrong_type("i64"))?;
        let mut s = 0;
        while let Ok(v) = rx.recv(Wait::Block) {
            s += v;
        }
        Ok(s)
    })
}

/// CommsTime written in Rust against the Rust API (prefix, delta (seq), succ, with
/// the consumer in the calling process), for comparing with the C++ version in
/// one binary and one runtime: returns ns per communication.
fn rust_commstime(iters: i64) -> Result<f64, String> {
    use hoare_core::chan::one2one;
    guard(move || {
        backend::need_runtime()?;
        let (a_tx, a_rx) = one2one::<i64>();
        let (b_tx, b_rx) = one2one::<i64>();
        let (c_tx, c_rx) = one2one::<i64>();
        let (d_tx, d_rx) = one2one::<i64>();
        let prefix = hoare_runtime::spawn(move || {
            if a_tx.send(0).is_err() {
                return;
            }
            while let Ok(v) = c_rx.recv() {
                if a_tx.send(v).is_err() {
                    break;
                }
            }
        });
        let delta = hoare_runtime::spawn(move || {
            while let Ok(v) = a_rx.recv() {
                if b_tx.send(v).is_err() || d_tx.send(v).is_err() {
                    break;
                }
            }
        });
        let succ = hoare_runtime::spawn(move || {
            while let Ok(v) = b_rx.recv() {
                if c_tx.send(v + 1).is_err() {
                    break;
                }
            }
        });
        let _ = d_rx.recv();
        let t0 = Instant::now();
        for i in 1..=iters {
            match d_rx.recv() {
                Ok(v) if v == i => {}
                other => return Err(format!("rust commstime: expected {i}, got {other:?}")),
            }
        }
        let ns = t0.elapsed().as_nanos() as f64 / (4.0 * iters.max(1) as f64);
        drop(d_rx); // poisons the ring
        for h in [prefix, delta, succ] {
            h.join().map_err(backend::process_error)?;
        }
        Ok(ns)
    })
}

// ---------------------------------------------------------------- test hooks

fn test_panic(msg: &str) -> Result<(), String> {
    guard(|| panic!("{msg}"))
}

fn test_spawn_panicking() -> Result<Box<ProcHandle>, String> {
    guard(|| {
        let p = backend::spawn(false, 0, || -> cxx::UniquePtr<Task> {
            panic!("a Rust process panicked")
        })?;
        Ok(Box::new(ProcHandle(p)))
    })
}
