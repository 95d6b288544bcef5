//! Thread ring (Computer Language Benchmarks Game): P processes (503 by
//! default) linked in a ring of rendezvous channels pass a token N times.
//!
//! Process i (1-based) reads from channel i-1 and writes to channel i mod P.
//! The root process injects the token N into process 1; a process that
//! receives t > 0 passes t-1 on; the one that receives 0 reports its id, which
//! must be N mod P + 1. That is exactly N hand-offs between ring processes:
//! `ns_per_hop = elapsed / N`, the clock running from just before the
//! injection to the report (as in `benches/go/cmd/ring`).
//!
//! What it shows: the cost of one rendezvous plus one context switch, and a
//! ring that ends itself: the process holding 0 returns, which drops (and so
//! poisons) its output channel; its successor sees the poison and returns, and
//! so on round the ring.
//!
//! `cargo run --release --example ring -- --workers 1 --procs 503 --hops 10000000`
//!
//! Last line: `bench=ring workers=N procs=P hops=N last=I ns_per_hop=X`.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::any2one;
use std::time::Instant;

fn main() {
    let flags = common::Flags::parse(&["workers", "procs", "hops"], &[]);
    let workers = flags.workers();
    let procs: usize = flags.get("procs", 503);
    let hops: u64 = flags.get("hops", 10_000_000);
    flags.require(procs >= 2, "--procs must be at least 2");

    let (last, elapsed) = common::runtime(workers).run(move || {
        // Channel 0 has two writers (the root, to inject the token, and process
        // P), so it is any2one; the others have one writer each but share its
        // type, which keeps them in one vector.
        let (mut txs, rxs): (Vec<_>, Vec<_>) = (0..procs).map(|_| any2one::<u64>()).unzip();
        let inject = txs[0].clone();
        txs.rotate_left(1); // process i writes channel i mod P
        let (report, result) = any2one::<usize>();

        let ring: Vec<_> = rxs
            .into_iter()
            .zip(txs)
            .enumerate()
            .map(|(i, (input, output))| {
                let (id, report) = (i + 1, report.clone());
                hoare::spawn(move || {
                    // `recv` fails once the token has ended elsewhere: our
                    // predecessor returned, and its dropped end poisoned our input.
                    while let Ok(t) = input.recv() {
                        if t == 0 {
                            report.send(id).expect("root gone");
                            return;
                        }
                        if output.send(t - 1).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        drop(report);

        let start = Instant::now();
        inject.send(hops).expect("ring gone");
        let last = result.recv().expect("nobody reported the token");
        let elapsed = start.elapsed();

        drop(inject);
        for h in ring {
            h.join().expect("a ring process failed");
        }
        (last, elapsed)
    });

    let want = (hops % procs as u64) as usize + 1;
    assert_eq!(last, want, "token ended at process {last}, want {want}");
    let ns = common::per_op_ns(elapsed, hops);
    println!("{hops} hops round a ring of {procs} processes in {elapsed:?} on {workers} worker(s); token ended at process {last}");
    println!("{ns:.1} ns per hop");
    println!(
        "bench=ring workers={workers} procs={procs} hops={hops} last={last} ns_per_hop={ns:.3}"
    );
}
