//! Yield round trip, the same measure as the criterion bench `yield_round_trip_1w`
//! (benches/runtime.rs), as a program to profile: two processes on one worker
//! (by default) yield to each other `--iters` times each.
//!
//! `cargo run --release --example yields -- --workers 1 --iters 1000000`
//!
//! The last line is machine-readable:
//! `bench=yields workers=N iters=I ns_per_yield=X`.

use std::time::Instant;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers = arg(&args, "--workers", 1);
    let iters = arg(&args, "--iters", 1_000_000);
    let rt = hoare::Runtime::builder().workers(workers).build();
    let ns = rt.run(move || {
        let other = hoare::spawn(move || {
            for _ in 0..iters {
                hoare::yield_now();
            }
        });
        // Let `other` start so both are runnable.
        hoare::yield_now();
        let t = Instant::now();
        for _ in 0..iters {
            hoare::yield_now();
        }
        let d = t.elapsed();
        other.join().unwrap();
        d.as_nanos() as f64 / iters as f64
    });
    println!("bench=yields workers={workers} iters={iters} ns_per_yield={ns:.1}");
}
