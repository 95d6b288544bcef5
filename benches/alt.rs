//! Alternation benchmarks: an alt over 10 channels with one ready guard (the
//! macro and `recv_any`, on one thread: the cost of the alt itself), and an
//! alt-to-alt ping-pong between two processes (both ends of each channel in alts).
//!
//! `cargo bench --bench alt`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hoare::{alt, one2one, Channel, Receiver, Runtime, Sender};
use std::time::{Duration, Instant};

const READY: usize = 5;

/// Ten unbounded channels; `READY` holds `n` values.
fn ten(n: u64) -> (Vec<Sender<u64>>, Vec<Receiver<u64>>) {
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..10)
        .map(|_| Channel::builder().unbounded().one2one::<u64>())
        .unzip();
    for i in 0..n {
        txs[READY].send(i).unwrap();
    }
    (txs, rxs)
}

/// `n` macro alts over 10 receive guards, one of them ready.
fn macro_ready_among_10(n: u64) -> Duration {
    let (_txs, rxs) = ten(n);
    let [r0, r1, r2, r3, r4, r5, r6, r7, r8, r9] = [
        &rxs[0], &rxs[1], &rxs[2], &rxs[3], &rxs[4], &rxs[5], &rxs[6], &rxs[7], &rxs[8], &rxs[9],
    ];
    let t0 = Instant::now();
    let mut sum = 0;
    for _ in 0..n {
        sum += alt! {
            recv(r0) -> v => v.unwrap(),
            recv(r1) -> v => v.unwrap(),
            recv(r2) -> v => v.unwrap(),
            recv(r3) -> v => v.unwrap(),
            recv(r4) -> v => v.unwrap(),
            recv(r5) -> v => v.unwrap(),
            recv(r6) -> v => v.unwrap(),
            recv(r7) -> v => v.unwrap(),
            recv(r8) -> v => v.unwrap(),
            recv(r9) -> v => v.unwrap(),
        };
    }
    let e = t0.elapsed();
    std::hint::black_box(sum);
    e
}

/// `n` `recv_any` alts over 10 receive ends, one of them ready.
fn recv_any_ready_among_10(n: u64) -> Duration {
    let (_txs, rxs) = ten(n);
    let t0 = Instant::now();
    for _ in 0..n {
        let _ = std::hint::black_box(hoare::alt::recv_any(&rxs));
    }
    t0.elapsed()
}

/// `n` round trips between two processes, every communication alt-to-alt: each
/// side alts on the channel it uses plus an idle one.
fn alt_to_alt_ping_pong(n: u64) -> Duration {
    let rt = Runtime::builder().workers(1).build();
    rt.run(move || {
        let (ping_tx, ping_rx) = one2one::<u64>();
        let (pong_tx, pong_rx) = one2one::<u64>();
        let (idle_a_tx, idle_a) = one2one::<u64>();
        let (idle_b_tx, idle_b) = one2one::<u64>();
        let h = hoare::spawn(move || {
            let _keep = idle_b_tx;
            loop {
                let v = alt! {
                    recv(ping_rx) -> v => match v { Ok(v) => v, Err(_) => return },
                    recv(idle_b) => return,
                };
                alt! {
                    send(pong_tx, v) -> r => if r.is_err() { return },
                    recv(idle_b) => return,
                }
            }
        });
        let t0 = Instant::now();
        for i in 0..n {
            alt! {
                send(ping_tx, i) -> r => r.unwrap(),
                recv(idle_a) => unreachable!(),
            }
            alt! {
                recv(pong_rx) -> v => { v.unwrap(); },
                recv(idle_a) => unreachable!(),
            }
        }
        let e = t0.elapsed();
        drop(ping_tx);
        h.join().unwrap();
        drop(idle_a_tx);
        e
    })
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("alt");
    g.throughput(Throughput::Elements(1));
    g.bench_function("macro_ready_among_10", |b| {
        b.iter_custom(macro_ready_among_10)
    });
    g.bench_function("recv_any_ready_among_10", |b| {
        b.iter_custom(recv_any_ready_among_10)
    });
    g.throughput(Throughput::Elements(2));
    g.bench_function("alt_to_alt_ping_pong_round_trip", |b| {
        b.iter_custom(alt_to_alt_ping_pong)
    });
    g.finish();
}

criterion_group! {
    name = alt_benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(alt_benches);
