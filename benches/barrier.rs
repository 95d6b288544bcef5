//! Barrier benchmarks: one sync round of N processes (per process and per round),
//! on one worker and on all workers, plus plain threads; and timer overhead.
//!
//! `cargo bench --bench barrier`. The large stressed figure (3 × 65,536 processes)
//! comes from `examples/stressed_barrier.rs`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hoare::{Barrier, Runtime};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn runtime(workers: usize) -> Runtime {
    Runtime::builder()
        .workers(workers)
        .stack_size(16 * 1024)
        .build()
}

/// `iters` rounds of `n` processes plus the measuring one; returns the time of the
/// rounds after a warm-up round.
fn rounds(workers: usize, n: usize, iters: u64) -> Duration {
    runtime(workers).run(move || {
        let (_b, mut ends) = Barrier::with_enrolled(n + 1);
        let mut mine = ends.pop().unwrap();
        let hs: Vec<_> = ends
            .into_iter()
            .map(|mut e| {
                hoare::spawn(move || {
                    for _ in 0..=iters {
                        e.sync();
                    }
                })
            })
            .collect();
        mine.sync(); // warm-up: everybody spawned
        let t = Instant::now();
        for _ in 0..iters {
            mine.sync();
        }
        let d = t.elapsed();
        for h in hs {
            h.join().unwrap();
        }
        d
    })
}

fn sync_round(c: &mut Criterion) {
    let all = hoare::default_workers();
    let mut g = c.benchmark_group("barrier_round");
    g.sample_size(10);
    for &n in &[1usize, 16, 1024, 16384] {
        g.throughput(Throughput::Elements(n as u64 + 1));
        g.bench_with_input(BenchmarkId::new("1w", n), &n, |b, &n| {
            b.iter_custom(|iters| rounds(1, n, iters))
        });
        if all > 1 {
            g.bench_with_input(BenchmarkId::new(format!("{all}w"), n), &n, |b, &n| {
                b.iter_custom(|iters| rounds(all, n, iters))
            });
        }
    }
    g.finish();
}

fn threads_round(c: &mut Criterion) {
    let mut g = c.benchmark_group("barrier_threads");
    g.sample_size(10);
    for &n in &[2usize, 4] {
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_custom(|iters| {
                let (_b, mut ends) = Barrier::with_enrolled(n);
                let mut mine = ends.pop().unwrap();
                let ts: Vec<_> = ends
                    .into_iter()
                    .map(|mut e| {
                        std::thread::spawn(move || {
                            for _ in 0..=iters {
                                e.sync();
                            }
                        })
                    })
                    .collect();
                mine.sync();
                let t = Instant::now();
                for _ in 0..iters {
                    mine.sync();
                }
                let d = t.elapsed();
                for t in ts {
                    t.join().unwrap();
                }
                d
            })
        });
    }
    g.finish();
}

fn timers(c: &mut Criterion) {
    let mut g = c.benchmark_group("timer");
    g.bench_function("egg_deadline", |b| {
        let mut egg = hoare::Egg::new(Duration::from_millis(1));
        b.iter(|| black_box(egg.deadline()))
    });
    g.bench_function("repeat_deadline_fired", |b| {
        let mut r = hoare::Repeat::new(Duration::from_millis(1));
        b.iter(|| {
            black_box(r.deadline());
            r.fired();
        })
    });
    g.finish();
}

criterion_group!(benches, sync_round, threads_round, timers);
criterion_main!(benches);
