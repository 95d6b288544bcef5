//! Deadlock detection latency: the time from the last process blocking for good
//! to `try_run` returning the report, with `--procs` processes blocked in a
//! cycle-free chain behind the root (each waits on the next).
//!
//! `cargo run --release --example deadlock_latency -- --workers 2 --procs 1000 --runs 21`

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static BLOCKED_AT: AtomicU64 = AtomicU64::new(0);

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let workers = arg("--workers", 2);
    let procs = arg("--procs", 1000);
    let runs = arg("--runs", 21);
    let epoch = Instant::now();
    let mut lat = Vec::new();
    for _ in 0..runs {
        let r = hoare::Runtime::builder()
            .workers(workers)
            .build()
            .try_run(move || {
                let (_keep, mut rx) = hoare::one2one::<u32>();
                let mut hs = Vec::new();
                for _ in 0..procs {
                    let (tx, next) = hoare::one2one::<u32>();
                    let r = std::mem::replace(&mut rx, next);
                    hs.push(hoare::spawn(move || {
                        let v = r.recv();
                        drop(tx);
                        v
                    }));
                }
                // Let the chain block, then block the root too.
                hoare::sleep_for(Duration::from_millis(5));
                BLOCKED_AT.store(epoch.elapsed().as_nanos() as u64, Ordering::SeqCst);
                rx.recv().ok();
            });
        let done = epoch.elapsed().as_nanos() as u64;
        assert!(matches!(r, Err(hoare::ProcessError::Deadlock(_))));
        lat.push(done - BLOCKED_AT.load(Ordering::SeqCst));
    }
    lat.sort_unstable();
    let us = |n: u64| n as f64 / 1e3;
    println!(
        "deadlock_latency workers={workers} procs={procs} runs={runs}: median {:.0} us, min {:.0} us, max {:.0} us (report built, runtime shut down)",
        us(lat[lat.len() / 2]),
        us(lat[0]),
        us(lat[lat.len() - 1])
    );
}
