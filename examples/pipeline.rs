//! A first CSP network: a producer, a farm of squaring workers and a collector,
//! connected by channels and shut down by poison.
//!
//! ```text
//!                        ┌──> square ──┐
//!   produce 1..=N ──────>├──> square ──┤──────> collect (sum)
//!                        └──> square ──┘
//!            one2any channel       any2one channel
//! ```
//!
//! Every channel is a rendezvous: a send waits until a receiver takes the value.
//! No process is told to stop. The producer simply returns, which drops its end
//! and so poisons the channel; each worker's loop ends when it sees the poison,
//! and when the last worker is gone the collector's loop ends too.
//!
//! `cargo run --release --example pipeline`

use hoare::{any2one, one2any, Any, Receiver, Sender};
use std::time::Instant;

const N: u64 = 100_000;
const WORKERS: usize = 4;

/// A worker process: squares numbers until its input is poisoned, then returns
/// how many it took. Its ends are clones of shared ([`Any`]) ends.
fn square(jobs: Receiver<u64, Any>, results: Sender<u64, Any>) -> usize {
    let mut taken = 0;
    for n in jobs.iter() {
        results.send(n * n).expect("the collector is gone");
        taken += 1;
    }
    taken
}

fn main() {
    let start = Instant::now();
    // `hoare::run` starts a runtime (one worker thread per core), runs the closure
    // as its first process and returns the closure's result.
    let (sum, taken) = hoare::run(|| {
        let (numbers, jobs) = one2any::<u64>(); // one writer, shared readers
        let (results, squares) = any2one::<u64>(); // shared writers, one reader

        // The producer: sends 1..=N, then returns, dropping (poisoning) `numbers`.
        let producer = hoare::spawn(move || {
            for n in 1..=N {
                numbers.send(n).expect("every worker is gone");
            }
        });
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let (jobs, results) = (jobs.clone(), results.clone());
                hoare::spawn(move || square(jobs, results))
            })
            .collect();
        drop((jobs, results)); // now only the workers hold these ends

        // The collector (this process) reads until the last worker has ended.
        let sum: u64 = squares.iter().sum();

        producer.join().expect("the producer failed");
        let taken: Vec<usize> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        (sum, taken)
    });

    assert_eq!(
        sum,
        N * (N + 1) * (2 * N + 1) / 6,
        "the squares went astray"
    );
    println!("sum of the squares of 1..={N} = {sum}");
    println!(
        "{WORKERS} workers took {taken:?} numbers each; {:.1?} in all",
        start.elapsed()
    );
}
