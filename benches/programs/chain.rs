//! Extended CommsTime (ProXC++ thesis §8.2.1): a chain of P copy processes in
//! the feedback loop of CommsTime.
//!
//! ```text
//! prefix --> delta --> chain[P-1] --> ... --> chain[0] --> prefix
//!            delta --> consumer
//! ```
//!
//! `prefix` outputs 0, then each value it receives plus one; `delta` sends each
//! value to the consumer and then into the chain; each chain process copies
//! its input to its output. The consumer (the root process) checks that it
//! sees 0, 1, 2, ... Every channel is a one2one rendezvous.
//!
//! What it shows: building a network of hundreds of processes from a vector of
//! channels, `Receiver::pipe_to` as an identity process, and shutting a cyclic
//! network down with poison: the consumer drops its end, `delta` sees the
//! poison on its next send and returns, dropping its own ends, and the poison
//! travels round the ring until every process has returned.
//!
//! As in the Go version (`benches/go/cmd/chain`) the clock covers spawning the
//! P+2 processes and the K numbers, and
//! `ns_per_elem = elapsed / (K * P)`.
//!
//! `cargo run --release --example chain -- --workers 1 --procs 100 --iters 1000`
//!
//! Last line: `bench=chain workers=N procs=P iters=K ns_per_elem=X`.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::one2one;
use std::time::Instant;

fn main() {
    let flags = common::Flags::parse(&["workers", "procs", "iters"], &[]);
    let workers = flags.workers();
    let procs: usize = flags.get("procs", 100);
    let iters: u64 = flags.get("iters", 1000);
    flags.require(
        procs >= 1 && iters >= 1,
        "--procs and --iters must be positive",
    );

    let elapsed = common::runtime(workers).run(move || {
        let start = Instant::now();
        // Channel i (0..=P) is written by chain process i (by delta, for i = P)
        // and read by chain process i-1 (by prefix, for i = 0).
        let (mut txs, mut rxs): (Vec<_>, Vec<_>) = (0..=procs).map(|_| one2one::<u64>()).unzip();
        let (to_delta, from_prefix) = one2one::<u64>();
        let (to_consumer, from_delta) = one2one::<u64>();
        let into_chain = txs.pop().expect("P+1 channels");
        let into_prefix = rxs.remove(0);

        let mut network = Vec::with_capacity(procs + 2);
        network.push(hoare::spawn(move || {
            // prefix: 0, then every value back from the chain, plus one
            let mut v = 0;
            while to_delta.send(v).is_ok() {
                match into_prefix.recv() {
                    Ok(x) => v = x + 1,
                    Err(_) => break,
                }
            }
        }));
        network.push(hoare::spawn(move || {
            // delta: first to the consumer, then into the chain
            for v in from_prefix.iter() {
                if to_consumer.send(v).is_err() || into_chain.send(v).is_err() {
                    break;
                }
            }
        }));
        for (rx, tx) in rxs.into_iter().zip(txs) {
            // chain process: copy input to output until either side is poisoned
            network.push(hoare::spawn(move || {
                rx.pipe_to(&tx);
            }));
        }

        for want in 0..iters {
            let got = from_delta.recv().expect("consumer: network died");
            assert_eq!(got, want, "consumer: got {got}, want {want}");
        }
        let elapsed = start.elapsed();

        // Poison the network from the consumer's end and wait for it to drain.
        drop(from_delta);
        for h in network {
            h.join().expect("a chain process failed");
        }
        elapsed
    });

    let ns = common::per_op_ns(elapsed, iters * procs as u64);
    println!("{iters} numbers through a chain of {procs} processes in {elapsed:?} on {workers} worker(s)");
    println!("{ns:.1} ns per number per chain process");
    println!("bench=chain workers={workers} procs={procs} iters={iters} ns_per_elem={ns:.3}");
}
