//! Runtime micro-benchmarks: spawn+join, yield round trip, park/unpark hand-off,
//! all on one worker so they measure the scheduler path, not cross-core traffic.

use criterion::{criterion_group, criterion_main, Criterion};
use hoare::core::park::{self, Unparker};
use hoare::Runtime;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn one_worker() -> Runtime {
    Runtime::builder().workers(1).build().expect("runtime")
}

fn spawn_join(c: &mut Criterion) {
    c.bench_function("spawn_join_1w", |b| {
        b.iter_custom(|iters| {
            one_worker().run(move || {
                let t = Instant::now();
                for i in 0..iters {
                    let h = hoare::spawn(move || black_box(i));
                    black_box(h.join().unwrap());
                }
                t.elapsed()
            })
        })
    });
    c.bench_function("spawn_batch_join_1w", |b| {
        b.iter_custom(|iters| {
            one_worker().run(move || {
                let t = Instant::now();
                let mut left = iters;
                let mut hs = Vec::with_capacity(1024);
                while left > 0 {
                    let k = left.min(1024);
                    hs.extend((0..k).map(|i| hoare::spawn(move || black_box(i))));
                    for h in hs.drain(..) {
                        black_box(h.join().unwrap());
                    }
                    left -= k;
                }
                t.elapsed()
            })
        })
    });
}

fn yield_round_trip(c: &mut Criterion) {
    c.bench_function("yield_round_trip_1w", |b| {
        b.iter_custom(|iters| {
            one_worker().run(move || {
                let other = hoare::spawn(move || {
                    for _ in 0..iters {
                        hoare::yield_now();
                    }
                });
                // Let `other` start so both are in the run queue.
                hoare::yield_now();
                let t = Instant::now();
                for _ in 0..iters {
                    hoare::yield_now();
                }
                let d = t.elapsed();
                other.join().unwrap();
                d
            })
        })
    });
}

fn park_unpark_handoff(c: &mut Criterion) {
    c.bench_function("park_unpark_round_trip_1w", |b| {
        b.iter_custom(|iters| {
            one_worker().run(move || {
                let me: Unparker = park::with_current(|p| p.unparker());
                let slot: Arc<Mutex<Option<Unparker>>> = Arc::new(Mutex::new(None));
                let s2 = slot.clone();
                let other = hoare::spawn(move || {
                    *s2.lock().unwrap() = Some(park::with_current(|p| p.unparker()));
                    for _ in 0..iters {
                        park::with_current(|p| p.park());
                        // SAFETY: the root process outlives this loop and parks once
                        // per unpark it receives.
                        unsafe { me.unpark() };
                    }
                });
                let them = loop {
                    if let Some(u) = *slot.lock().unwrap() {
                        break u;
                    }
                    hoare::yield_now();
                };
                let t = Instant::now();
                for _ in 0..iters {
                    // SAFETY: `other` is alive until it has received all `iters`
                    // unparks, one per park.
                    unsafe { them.unpark() };
                    park::with_current(|p| p.park());
                }
                let d = t.elapsed();
                other.join().unwrap();
                d
            })
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = spawn_join, yield_round_trip, park_unpark_handoff
}
criterion_main!(benches);
