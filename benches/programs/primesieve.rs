//! The concurrent prime sieve (ProXC++ thesis §8.2.3; the classic example of
//! the Go tour): a daisy chain of filter processes that grows as primes are
//! found.
//!
//! ```text
//! generate --2,3,4,...--> filter(2) --> filter(3) --> ... --> filter(p) --> root
//! ```
//!
//! A generator sends 2, 3, 4, ... on a rendezvous channel. The root process
//! takes N primes: each number reaching it is the next prime p, and it appends
//! a filter for p that passes on only the numbers not divisible by p.
//!
//! What it shows: a network that rewires itself while it runs (the root hands
//! its input channel to the new filter and reads the filter's output
//! instead), and backward poison: when the root drops its end, the last
//! filter's next send fails, it returns and so drops its own input, and the
//! poison walks back up the chain to the generator.
//!
//! Timed as in `benches/go/cmd/primesieve`: from spawning the generator to
//! receiving the N-th prime, `us_per_prime = elapsed / N`. The N-th prime is
//! checked against a sequential sieve (the 1000th is 7919).
//!
//! `cargo run --release --example primesieve -- --workers 1 --primes 1000`
//!
//! Last line: `bench=primesieve workers=N primes=P last=L us_per_prime=X`.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::{one2one, Receiver};
use std::time::Instant;

/// Passes on the numbers from `input` that `prime` does not divide.
fn filter(input: Receiver<u64>, prime: u64) -> Receiver<u64> {
    let (tx, output) = one2one();
    drop(hoare::spawn(move || {
        for n in input.iter() {
            if n % prime != 0 && tx.send(n).is_err() {
                break; // downstream is gone: dropping `input` tells upstream
            }
        }
    }));
    output
}

/// The n-th prime (1-based) by a sequential sieve of Eratosthenes.
fn nth_prime(n: usize) -> u64 {
    let mut limit = 32;
    loop {
        let mut composite = vec![false; limit];
        let mut count = 0;
        for i in 2..limit {
            if composite[i] {
                continue;
            }
            count += 1;
            if count == n {
                return i as u64;
            }
            for j in (i * i..limit).step_by(i) {
                composite[j] = true;
            }
        }
        limit *= 2;
    }
}

fn main() {
    let flags = common::Flags::parse(&["workers", "primes"], &["debug"]);
    let workers = flags.workers();
    let n: usize = flags.get("primes", 1000);
    let debug = flags.bool("debug", false);
    flags.require(n >= 1, "--primes must be positive");

    let (primes, elapsed) = common::runtime(workers).run(move || {
        let start = Instant::now();
        let (tx, mut numbers) = one2one::<u64>();
        let generator = hoare::spawn(move || {
            let mut i = 2;
            while tx.send(i).is_ok() {
                i += 1;
            }
        });
        let mut primes = Vec::with_capacity(n);
        for _ in 0..n {
            let p = numbers.recv().expect("the sieve broke");
            primes.push(p);
            numbers = filter(numbers, p);
        }
        let elapsed = start.elapsed();

        // Poison the chain from its end; it dies back to the generator.
        drop(numbers);
        generator.join().expect("generator failed");
        (primes, elapsed)
    });

    if debug {
        let all: Vec<String> = primes.iter().map(u64::to_string).collect();
        eprintln!("{}", all.join(" "));
    }
    let last = primes[n - 1];
    let want = nth_prime(n);
    assert_eq!(last, want, "prime {n} is {last}, want {want}");
    let us = elapsed.as_secs_f64() * 1e6 / n as f64;
    println!("{n} primes through a chain of {n} filters in {elapsed:?} on {workers} worker(s); prime {n} is {last}");
    println!("bench=primesieve workers={workers} primes={n} last={last} us_per_prime={us:.3}");
}
