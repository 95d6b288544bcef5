//! The dining philosophers (occam style): five philosophers, five forks and a
//! security guard (the butler), each a process. Every fork alts on the channels of
//! its two philosophers; the butler alts on "sit down" (only while fewer than four
//! sit, a precondition) and "stand up". Poison shuts the college down: when a
//! philosopher has eaten enough and leaves, its channels are poisoned, and the
//! forks and the butler stop listening to it (preconditions again) until nobody is
//! left.
//!
//! `tests/alt.rs` runs this same college (it includes this file) and watches it
//! (see [`Watch`]): no fork is ever held by two philosophers, and at most `N - 1`
//! sit at once.
//!
//! `cargo run --release --example dining_philosophers -- --workers 4 --meals 10000`
//!
//! The last line is machine-readable:
//! `bench=dining_philosophers workers=N meals=M ns_per_meal=X`.

#[path = "common/mod.rs"]
mod common;

use hoare::{alt, any2one, one2one, Receiver, Sender};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The number of philosophers (and of forks).
pub const N: usize = 5;

/// What the college reports while it runs: `main` watches nothing (`()`), the
/// test checks what it is told.
pub trait Watch: Clone + Send + 'static {
    /// Philosopher `p` eats: it holds forks `p` and `(p + 1) % N`.
    fn eat(&self, _p: usize) {}
    /// The butler has let one more philosopher sit: `seated` sit now.
    fn seated(&self, _seated: usize) {}
}

/// Watches nothing.
impl Watch for () {}

/// A fork: picked up and put down by either neighbour, one at a time.
fn fork(left: Receiver<()>, right: Receiver<()>) {
    let (mut l, mut r) = (true, true);
    while l || r {
        alt! {
            recv(left) if l -> v => match v {
                // Picked up by the left philosopher: wait for it to put us down.
                Ok(()) => l = left.recv().is_ok(),
                Err(_) => l = false,
            },
            recv(right) if r -> v => match v {
                Ok(()) => r = right.recv().is_ok(),
                Err(_) => r = false,
            },
        }
    }
}

/// The butler: lets at most `N - 1` philosophers sit at once, so they cannot
/// deadlock.
fn butler(down: Receiver<(), hoare::One>, up: Receiver<(), hoare::One>, watch: impl Watch) {
    let (mut seated, mut d, mut u) = (0usize, true, true);
    while d || u {
        alt! {
            recv(up) if u -> v => match v {
                Ok(()) => seated -= 1,
                Err(_) => u = false,
            },
            recv(down) if d && seated < N - 1 -> v => match v {
                Ok(()) => {
                    seated += 1;
                    watch.seated(seated);
                }
                Err(_) => d = false,
            },
        }
    }
}

fn philosopher(
    meals: u64,
    down: Sender<(), hoare::Any>,
    up: Sender<(), hoare::Any>,
    left: Sender<()>,
    right: Sender<()>,
    eat: impl Fn(),
) {
    for _ in 0..meals {
        // Think (not for long), then sit, pick up both forks, eat, put them down.
        down.send(()).unwrap();
        left.send(()).unwrap();
        right.send(()).unwrap();
        eat();
        left.send(()).unwrap();
        right.send(()).unwrap();
        up.send(()).unwrap();
    }
}

/// Runs the college until every philosopher has eaten `meals` times, telling
/// `watch` what happens; returns the number of meals eaten.
pub fn college(meals: u64, watch: impl Watch) -> u64 {
    let eaten = Arc::new(AtomicU64::new(0));
    let (down_tx, down_rx) = any2one::<()>();
    let (up_tx, up_rx) = any2one::<()>();
    let butler_watch = watch.clone();
    let mut hs = vec![hoare::spawn(move || butler(down_rx, up_rx, butler_watch))];
    // Philosopher i's left fork is fork i, its right fork is fork (i + 1) % N.
    let mut to_left = Vec::new(); // philosopher i -> fork i (fork's right side)
    let mut to_right = Vec::new(); // philosopher i -> fork (i+1)%N (fork's left side)
    let mut fork_rights = Vec::new();
    let mut fork_lefts = Vec::new();
    for _ in 0..N {
        let (tx, rx) = one2one::<()>();
        to_left.push(Some(tx));
        fork_rights.push(Some(rx));
        let (tx, rx) = one2one::<()>();
        to_right.push(Some(tx));
        fork_lefts.push(Some(rx));
    }
    for f in 0..N {
        // Fork f: its right side is philosopher f, its left side philosopher f-1.
        let right = fork_rights[f].take().unwrap();
        let left = fork_lefts[(f + N - 1) % N].take().unwrap();
        hs.push(hoare::spawn(move || fork(left, right)));
    }
    for p in 0..N {
        let (down, up) = (down_tx.clone(), up_tx.clone());
        let left = to_left[p].take().unwrap();
        let right = to_right[p].take().unwrap();
        let (eaten, watch) = (eaten.clone(), watch.clone());
        let eat = move || {
            watch.eat(p);
            eaten.fetch_add(1, Ordering::Relaxed);
        };
        hs.push(hoare::spawn(move || {
            philosopher(meals, down, up, left, right, eat)
        }));
    }
    drop((down_tx, up_tx));
    for h in hs {
        h.join().unwrap();
    }
    eaten.load(Ordering::Relaxed)
}

fn main() {
    let flags = common::Flags::parse(&["workers", "meals"], &[]);
    let workers = flags.workers();
    let meals: u64 = flags.get("meals", 10_000);
    let (eaten, ns) = common::runtime(workers).run(move || {
        let t0 = Instant::now();
        let eaten = college(meals, ());
        (eaten, common::per_op_ns(t0.elapsed(), eaten))
    });
    assert_eq!(eaten, meals * N as u64, "meals lost");
    println!("dining philosophers: {workers} worker(s), {eaten} meals, {ns:.1} ns per meal");
    println!("bench=dining_philosophers workers={workers} meals={meals} ns_per_meal={ns:.1}");
}
