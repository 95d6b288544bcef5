//! CommsTime: prefix → delta → succ → prefix, with delta also feeding a consumer,
//! over rendezvous channels. Four communications per cycle. `--delta seq`: delta
//! writes its two outputs one after the other, `--delta par`: in parallel (two
//! new processes per cycle), as Go's `benches/go/cmd/commstime -delta`; each
//! runs `--iters` cycles. Without `--delta`: PAR for a tenth of the cycles, then
//! SEQ.
//!
//! `cargo run --release --example commstime -- --workers 1 --iters 1000000 [--delta seq|par]`
//!
//! The last line is machine-readable (the last delta run):
//! `bench=commstime delta=seq workers=N ns_per_comm=X`.

use hoare::{one2one, Receiver, Sender};
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Delta {
    Seq,
    Par,
}

fn prefix(init: u64, input: Receiver<u64>, output: Sender<u64>) {
    if output.send(init).is_err() {
        return;
    }
    // Dropping the ends on the way out poisons both channels: the network shuts down.
    while let Ok(v) = input.recv() {
        if output.send(v).is_err() {
            return;
        }
    }
}

fn delta(kind: Delta, input: Receiver<u64>, a: Sender<u64>, b: Sender<u64>) {
    while let Ok(v) = input.recv() {
        let ok = match kind {
            Delta::Seq => a.send(v).is_ok() && b.send(v).is_ok(),
            Delta::Par => {
                let (x, y) = hoare::par2(|| a.send(v), || b.send(v));
                x.is_ok() && y.is_ok()
            }
        };
        if !ok {
            return;
        }
    }
}

fn succ(input: Receiver<u64>, output: Sender<u64>) {
    while let Ok(v) = input.recv() {
        if output.send(v + 1).is_err() {
            return;
        }
    }
}

/// Runs `iters` cycles and returns the nanoseconds per communication.
fn commstime(kind: Delta, iters: u64) -> f64 {
    let (a_tx, a_rx) = one2one(); // prefix → delta
    let (b_tx, b_rx) = one2one(); // delta → succ
    let (c_tx, c_rx) = one2one(); // succ → prefix
    let (d_tx, d_rx) = one2one(); // delta → consumer
    let hs = [
        hoare::spawn(move || prefix(0, c_rx, a_tx)),
        hoare::spawn(move || delta(kind, a_rx, b_tx, d_tx)),
        hoare::spawn(move || succ(b_rx, c_tx)),
    ];
    // Warm up, then time.
    for _ in 0..1000.min(iters) {
        d_rx.recv().unwrap();
    }
    let t0 = Instant::now();
    for _ in 0..iters {
        d_rx.recv().unwrap();
    }
    let elapsed = t0.elapsed();
    d_rx.poison();
    for h in hs {
        h.join().unwrap();
    }
    elapsed.as_nanos() as f64 / (iters.max(1) * 4) as f64
}

fn arg(args: &[String], name: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers = arg(&args, "--workers").unwrap_or(1) as usize;
    let iters = arg(&args, "--iters").unwrap_or(1_000_000);
    // Before, `--delta` was ignored and both ran, so `compare.sh`'s PAR row read
    // the SEQ figure (the last line) and callgrind's SEQ counts included the PAR
    // run's spawns.
    let runs: &[(Delta, u64)] = match args.iter().position(|a| a == "--delta") {
        None => &[(Delta::Par, iters / 10), (Delta::Seq, iters)],
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("seq") => &[(Delta::Seq, iters)],
            Some("par") => &[(Delta::Par, iters)],
            other => {
                eprintln!("commstime: --delta must be seq or par, not {other:?}");
                std::process::exit(2);
            }
        },
    };
    let rt = || hoare::Runtime::builder().workers(workers).build();
    for &(kind, n) in runs {
        let ns = rt().run(move || commstime(kind, n));
        let (name, key) = match kind {
            Delta::Seq => ("SEQ", "seq"),
            Delta::Par => ("PAR", "par"),
        };
        println!(
            "commstime {name} delta: {workers} worker(s), {n} cycles: {ns:.1} ns per communication"
        );
        println!("bench=commstime delta={key} workers={workers} ns_per_comm={ns:.1}");
    }
}
