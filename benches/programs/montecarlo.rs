//! Monte Carlo pi (seed 000 §3.2.1): S samples are farmed out to T worker
//! processes (64 by default); each counts the samples that land inside the
//! quarter circle and sends its count over one shared any2one channel to the
//! collector (the root process), which computes pi = 4 * hits / S.
//!
//! What it shows: a CPU-bound farm, where the runtime's job is to keep every
//! worker thread busy (run it with `--workers 1` and `--workers 2` and compare
//! `ms`), and a fan-in channel that every worker holds a clone of.
//!
//! The random numbers are those of `benches/go/cmd/montecarlo`, bit for bit:
//! task t seeds xorshift64 (shifts 13, 7, 17) with splitmix64(t + 1), takes
//! S/T samples (one more if t < S mod T), each sample is two 31-bit integers
//! x = next() >> 33, y = next() >> 33, and a hit is x² + y² < 2^62. So both
//! ports count the same hits: S = 2^26, T = 64 gives hits = 52713243.
//!
//! `cargo run --release --example montecarlo -- --workers 2 --samples 67108864 --tasks 64`
//!
//! Last line: `bench=montecarlo workers=N samples=S tasks=T hits=H ms=X pi=Y`.

#[path = "../../examples/common/mod.rs"]
mod common;

use std::time::Instant;

/// splitmix64 of `v`: a well-mixed, non-zero xorshift seed.
fn splitmix64(v: u64) -> u64 {
    let mut z = v.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    if z == 0 {
        1
    } else {
        z
    }
}

/// Marsaglia's xorshift64 step.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// The hits among `n` samples drawn by task `t`'s generator.
fn task(t: u64, n: u64) -> u64 {
    let mut x = splitmix64(t + 1);
    let mut hits = 0;
    for _ in 0..n {
        let a = next(&mut x) >> 33;
        let b = next(&mut x) >> 33;
        if a * a + b * b < 1 << 62 {
            hits += 1;
        }
    }
    hits
}

fn main() {
    let flags = common::Flags::parse(&["workers", "samples", "tasks"], &["check"]);
    let workers = flags.workers();
    let samples: u64 = flags.get("samples", 1 << 26);
    let tasks: u64 = flags.get("tasks", 64);
    let check = flags.bool("check", true);
    flags.require(
        samples >= 1 && tasks >= 1,
        "--samples and --tasks must be positive",
    );

    let (hits, elapsed) = common::runtime(workers).run(move || {
        let start = Instant::now();
        let (results, collector) = hoare::any2one::<u64>();
        for t in 0..tasks {
            let n = samples / tasks + u64::from(t < samples % tasks);
            let results = results.clone();
            // Detached: the collector learns the result over the channel.
            drop(hoare::spawn(move || {
                results.send(task(t, n)).expect("collector gone")
            }));
        }
        drop(results);
        // Every worker's clone is dropped when it ends, so this loop ends when
        // the last count is in: the channel is poisoned only then.
        let hits: u64 = collector.iter().sum();
        (hits, start.elapsed())
    });

    let pi = 4.0 * hits as f64 / samples as f64;
    let tolerance = f64::max(1e-3, 8.0 / (samples as f64).sqrt());
    if check {
        assert!(
            (pi - std::f64::consts::PI).abs() <= tolerance,
            "pi = {pi:.6}, too far from {:.6}",
            std::f64::consts::PI
        );
    }
    // The test vectors of the Go port.
    match (samples, tasks) {
        // 2^26 samples
        (0x400_0000, 64) => assert_eq!(hits, 52_713_243, "hits differ from the Go port's"),
        (1000, 3) => assert_eq!(hits, 781, "hits differ from the Go port's"),
        _ => {}
    }
    let ms = common::ms(elapsed);
    println!("{samples} samples in {tasks} tasks on {workers} worker(s): {hits} hits, pi ~ {pi:.9}, {ms:.1} ms");
    println!(
        "bench=montecarlo workers={workers} samples={samples} tasks={tasks} hits={hits} \
         ms={ms:.3} pi={pi:.9}"
    );
}
