//! Stressed alt (after JCSP's and C++CSP2's StressedAlt): `C` channels, `W` writer
//! processes per channel, each writing for ever; one reader alts over all `C`
//! channels (a replicated receive guard) `K` times. Prints the time per alt.
//!
//! `cargo run --release --example stressedalt -- --workers 4 --chans 10 --writers 100 --iters 1000000`
//!
//! `--chans` also takes a power of two as `2^k` (with `--writers 1`: one reader
//! over 2^k channels, one writer each). `--policy pri|fair` (default `fair`).
//!
//! The last line is machine-readable:
//! `bench=stressedalt workers=N chans=C writers=W ns_per_alt=X`.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::{alt, Channel, Fair, RecvAny};
use std::time::Instant;

fn parse_chans(s: &str) -> Option<usize> {
    match s.split_once('^') {
        Some((b, e)) => {
            let b: usize = b.trim().parse().ok()?;
            let e: u32 = e.trim().parse().ok()?;
            b.checked_pow(e)
        }
        None => s.trim().parse().ok(),
    }
}

fn main() {
    let flags = common::Flags::parse(&["workers", "chans", "writers", "iters", "policy"], &[]);
    let workers = flags.workers();
    let chans_s: String = flags.get("chans", "10".to_string());
    let chans = parse_chans(&chans_s).unwrap_or(0);
    flags.require(chans >= 1, "--chans must be at least 1 (or 2^k)");
    let writers: usize = flags.get("writers", 100);
    flags.require(writers >= 1, "--writers must be at least 1");
    let iters: u64 = flags.get("iters", 1_000_000);
    let policy: String = flags.get("policy", "fair".to_string());
    flags.require(
        policy == "fair" || policy == "pri",
        "--policy is pri or fair",
    );
    let fair_policy = policy == "fair";

    let ns = common::runtime(workers).run(move || {
        let mut rxs = Vec::with_capacity(chans);
        let mut hs = Vec::with_capacity(chans * writers);
        for c in 0..chans {
            let (tx, rx) = Channel::builder().any2one::<u64>();
            rxs.push(rx);
            for _ in 0..writers {
                let tx = tx.clone();
                hs.push(hoare::spawn(move || {
                    // Write for ever: until the reader poisons the channel.
                    while tx.send(c as u64).is_ok() {}
                }));
            }
        }
        let mut fair = Fair::new();
        let mut counts = vec![0u64; chans];
        // The replicated receive guard over all channels, built once.
        let mut set = RecvAny::new(&rxs);
        let mut one = |counts: &mut [u64]| {
            let (i, v) = if fair_policy {
                set.select_fair(&mut fair)
            } else {
                set.select()
            };
            debug_assert_eq!(v, Ok(i as u64));
            counts[i] += 1;
        };
        for _ in 0..(iters / 10).clamp(1, 10_000) {
            one(&mut counts);
        }
        let t0 = Instant::now();
        for _ in 0..iters {
            one(&mut counts);
        }
        let elapsed = t0.elapsed();
        // One more alt with the macro form and a timeout, so the example shows both.
        let _ = alt! {
            recv(rxs[0]) -> v => v.is_ok(),
            after(std::time::Duration::from_millis(100)) => false,
        };
        for rx in &rxs {
            rx.poison();
        }
        for h in hs {
            h.join().unwrap();
        }
        let min = counts.iter().min().copied().unwrap_or(0);
        let max = counts.iter().max().copied().unwrap_or(0);
        println!("per channel: min {min} max {max} alts ({policy})");
        common::per_op_ns(elapsed, iters)
    });
    println!(
        "stressed alt: {workers} worker(s), {chans} channel(s) x {writers} writer(s), {iters} alts: {ns:.1} ns per alt"
    );
    println!(
        "bench=stressedalt workers={workers} chans={chans} writers={writers} ns_per_alt={ns:.1}"
    );
}
