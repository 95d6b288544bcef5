//! Figures of the checking runtime (`hoare::check`), recorded in BENCHMARKS.md:
//! `cargo run --release --features check --example check_figures`.
//!
//! * the 5-philosopher deadlock: time to find it (random mode; and exhaustive);
//! * the fixed college of 2 philosophers × 1 meal: exhaustive, executions, time,
//!   executions per second;
//! * time per step on a ring of `n` processes passing a token (random mode), for
//!   n = 10 … 10,000: flat when the checker keeps a ready set;
//! * random and PCT runs on networks of 10,000 processes.

#[path = "../../tests/common_nets/mod.rs"]
mod common_nets;

use common_nets::{college, retry};
use hoare::check::Builder;
use std::time::{Duration, Instant};

/// A ring of `n` processes passing a token `hops` times around.
fn ring(n: usize, hops: u32) {
    let chans: Vec<_> = (0..n).map(|_| hoare::one2one::<u32>()).collect();
    let mut txs = Vec::new();
    let mut rxs = Vec::new();
    for (t, r) in chans {
        txs.push(t);
        rxs.push(r);
    }
    rxs.rotate_left(1);
    let mut hs = Vec::new();
    let mut first = None;
    for (i, (tx, rx)) in txs.into_iter().zip(rxs).enumerate() {
        if i == 0 {
            first = Some((tx, rx));
            continue;
        }
        hs.push(hoare::spawn(move || {
            for v in rx.iter() {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }));
    }
    let (tx, rx) = first.unwrap();
    for h in 0..hops {
        tx.send(h).unwrap();
        rx.recv().unwrap();
    }
    drop((tx, rx));
    for h in hs {
        h.join().unwrap();
    }
}

/// `idle` processes blocked for good (each on a channel of its own), and a pair
/// that hands `msgs` messages over: the time per step should not depend on
/// `idle` (the checker keeps a ready set and never scans the processes).
fn crowd(idle: usize, msgs: u32) {
    let mut keep = Vec::with_capacity(idle);
    let mut hs = Vec::with_capacity(idle);
    for _ in 0..idle {
        let (tx, rx) = hoare::one2one::<u32>();
        keep.push(tx);
        hs.push(hoare::spawn(move || {
            let _ = rx.recv();
        }));
    }
    let (tx, rx) = hoare::one2one::<u32>();
    let h = hoare::spawn(move || {
        for i in 0..msgs {
            tx.send(i).unwrap();
        }
    });
    for _ in 0..msgs {
        rx.recv().unwrap();
    }
    h.join().unwrap();
    drop(keep); // poisons the idle processes' channels: they end
    for h in hs {
        h.join().unwrap();
    }
}

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    if arg.is_empty() || arg == "deadlock" {
        for (name, b) in [
            ("random", Builder::new().random(100_000).seed(1)),
            ("pct(3)", Builder::new().pct(3, 100_000).seed(1)),
            ("exhaustive", Builder::new()),
        ] {
            let t = Instant::now();
            let r = b.shrink(false).try_run(|| college(5, 1, false));
            let e = t.elapsed();
            assert!(r.is_err());
            println!("5-philosopher deadlock, {name}: found in {e:.2?}");
        }
    }
    if arg == "ring-one" {
        // For callgrind: one random execution of a ring of N processes, HOPS
        // hops around (instructions per step = the difference of two HOPS over
        // the difference of their steps).
        let mut a = std::env::args()
            .skip(2)
            .map(|x| x.parse::<u64>().expect("a number"));
        let (n, hops) = (
            a.next().unwrap_or(10) as usize,
            a.next().unwrap_or(100) as u32,
        );
        let s = Builder::new()
            .random(1)
            .max_steps(u64::MAX)
            .stack_size(16 * 1024)
            .watchdog(None)
            .run(|| ring(n, hops));
        println!("ring-one {n} {hops}: {} steps", s.steps());
    }
    if arg == "counts" {
        // What exhaustive search explores (executions, pruned, steps) on a few
        // networks: a change to the checker's speed must leave these alone.
        let sleepers = || {
            hoare::par_for([30u64, 10, 20, 10], |ms| {
                hoare::sleep_for(Duration::from_millis(ms))
            });
        };
        type Net = (&'static str, bool, Box<dyn Fn()>);
        let nets: [Net; 9] = [
            ("college 2x1", false, Box::new(|| college(2, 1, true))),
            ("college 2x2", false, Box::new(|| college(2, 2, true))),
            ("college 3x1", false, Box::new(|| college(3, 1, true))),
            (
                "deadlocking college 3x1",
                false,
                Box::new(|| college(3, 1, false)),
            ),
            ("ring 3x2", false, Box::new(|| ring(3, 2))),
            ("crowd 2x3", false, Box::new(|| crowd(2, 3))),
            ("sleepers", false, Box::new(sleepers)),
            ("retry client, racing time", false, Box::new(|| retry(2))),
            ("retry client, quiescent time", true, Box::new(|| retry(2))),
        ];
        for (name, quiescent, f) in nets {
            let mut b = Builder::new()
                .exhaustive()
                .shrink(false)
                .max_time(Duration::from_secs(60));
            if quiescent {
                b = b.quiescent_time();
            }
            match b.try_run(f) {
                Ok(s) => println!(
                    "{name}: {} executions, {} pruned, {} steps, complete {}",
                    s.executions(),
                    s.pruned(),
                    s.steps(),
                    s.complete()
                ),
                Err(r) => println!(
                    "{name}: fails: {}",
                    r.to_string().lines().next().unwrap_or("")
                ),
            }
        }
    }
    if arg == "college-loop" {
        for _ in 0..200 {
            Builder::new().exhaustive().run(|| college(2, 1, true));
        }
    }
    if arg.is_empty() || arg == "college" {
        // Seven runs: the machine is shared, so the fastest and the median.
        let mut runs: Vec<_> = (0..7)
            .map(|_| {
                let s = Builder::new().exhaustive().run(|| college(2, 1, true));
                assert!(s.complete());
                s
            })
            .collect();
        runs.sort_by_key(|s| s.elapsed());
        let (best, median) = (&runs[0], &runs[3]);
        println!(
            "fixed college 2x1, exhaustive: {} executions (+{} pruned), {} steps; fastest of 7 {:.2?} \
             ({:.0} executions/s, {:.0} ns/step), median {:.2?} ({:.0} executions/s)",
            best.executions(),
            best.pruned(),
            best.steps(),
            best.elapsed(),
            best.executions() as f64 / best.elapsed().as_secs_f64(),
            best.elapsed().as_nanos() as f64 / best.steps() as f64,
            median.elapsed(),
            median.executions() as f64 / median.elapsed().as_secs_f64(),
        );
    }
    if arg.is_empty() || arg == "crowd" {
        // The marginal cost of a step: the same network with and without the
        // 200,000 messages (so the idle processes' start and end cancel out).
        for idle in [0, 100, 1000, 10_000] {
            let run = |msgs: u32| {
                Builder::new()
                    .random(3)
                    .max_steps(u64::MAX)
                    .stack_size(16 * 1024)
                    .run(|| crowd(idle, msgs))
            };
            let (base, full) = (run(0), run(200_000));
            let steps = full.steps() - base.steps();
            let t = full.elapsed().saturating_sub(base.elapsed());
            println!(
                "a pair handing over 200000 messages beside {idle} blocked processes, random x3: \
                 {steps} more steps in {t:.2?}: {:.0} ns/step",
                t.as_nanos() as f64 / steps as f64
            );
        }
    }
    if arg.is_empty() || arg == "ring" {
        for n in [10, 100, 1000, 10_000] {
            let hops = (200_000 / n as u32).max(3);
            let runs = 3;
            let s = Builder::new()
                .random(runs)
                .max_steps(u64::MAX)
                .stack_size(16 * 1024)
                .max_time(Duration::from_secs(60))
                .run(|| ring(n, hops));
            println!(
                "ring of {n} processes, {hops} hops around, random x{runs}: {} steps, {:.2?}: {:.0} ns/step",
                s.steps(),
                s.elapsed(),
                s.elapsed().as_nanos() as f64 / s.steps() as f64
            );
        }
        let s = Builder::new()
            .pct(3, 3)
            .max_steps(u64::MAX)
            .stack_size(16 * 1024)
            .run(|| ring(10_000, 3));
        println!(
            "ring of 10000 processes, 3 hops around, pct(3) x3: {} steps, {:.2?}: {:.0} ns/step",
            s.steps(),
            s.elapsed(),
            s.elapsed().as_nanos() as f64 / s.steps() as f64
        );
    }
}
