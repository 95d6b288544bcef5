//! Channel benchmarks on the runtime: CommsTime (SEQ delta), ping-pong over two
//! rendezvous channels, and buffered one2one throughput.
//!
//! `cargo bench --bench channels`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hoare::{one2one, Buffer, Channel, Runtime};
use std::time::{Duration, Instant};

fn runtime() -> Runtime {
    Runtime::builder().workers(1).build().expect("runtime")
}

/// `iters` CommsTime cycles (4 communications each); returns the elapsed time.
fn commstime(iters: u64) -> Duration {
    runtime().run(move || {
        let (a_tx, a_rx) = one2one::<u64>();
        let (b_tx, b_rx) = one2one::<u64>();
        let (c_tx, c_rx) = one2one::<u64>();
        let (d_tx, d_rx) = one2one::<u64>();
        let hs = [
            hoare::spawn(move || {
                if a_tx.send(0).is_err() {
                    return;
                }
                while let Ok(v) = c_rx.recv() {
                    if a_tx.send(v).is_err() {
                        return;
                    }
                }
            }),
            hoare::spawn(move || {
                while let Ok(v) = a_rx.recv() {
                    if b_tx.send(v).is_err() || d_tx.send(v).is_err() {
                        return;
                    }
                }
            }),
            hoare::spawn(move || {
                while let Ok(v) = b_rx.recv() {
                    if c_tx.send(v + 1).is_err() {
                        return;
                    }
                }
            }),
        ];
        let t0 = Instant::now();
        for _ in 0..iters {
            d_rx.recv().unwrap();
        }
        let e = t0.elapsed();
        d_rx.poison();
        for h in hs {
            h.join().unwrap();
        }
        e
    })
}

/// `iters` round trips between two processes.
fn ping_pong(iters: u64) -> Duration {
    runtime().run(move || {
        let (ping_tx, ping_rx) = one2one::<u64>();
        let (pong_tx, pong_rx) = one2one::<u64>();
        let h = hoare::spawn(move || {
            for v in &ping_rx {
                if pong_tx.send(v).is_err() {
                    return;
                }
            }
        });
        let t0 = Instant::now();
        for i in 0..iters {
            ping_tx.send(i).unwrap();
            pong_rx.recv().unwrap();
        }
        let e = t0.elapsed();
        drop(ping_tx);
        h.join().unwrap();
        e
    })
}

/// `iters` values through a buffered one2one channel.
fn buffered(buffer: Buffer, iters: u64) -> Duration {
    runtime().run(move || {
        let (tx, rx) = Channel::builder().buffer(buffer).one2one::<u64>();
        let h = hoare::spawn(move || {
            for i in 0..iters {
                tx.send(i).unwrap();
            }
        });
        let t0 = Instant::now();
        for _ in 0..iters {
            rx.recv().unwrap();
        }
        let e = t0.elapsed();
        h.join().unwrap();
        e
    })
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("channels");
    g.throughput(Throughput::Elements(4));
    g.bench_function("commstime_seq_per_cycle", |b| b.iter_custom(commstime));
    g.throughput(Throughput::Elements(2));
    g.bench_function("ping_pong_round_trip", |b| b.iter_custom(ping_pong));
    g.throughput(Throughput::Elements(1));
    for buf in [Buffer::Bounded(1), Buffer::Bounded(64), Buffer::Unbounded] {
        g.bench_with_input(
            BenchmarkId::new("buffered_one2one", format!("{buf:?}")),
            &buf,
            |b, &buf| b.iter_custom(|n| buffered(buf, n)),
        );
    }
    g.finish();
}

criterion_group! {
    name = channel_benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(channel_benches);
