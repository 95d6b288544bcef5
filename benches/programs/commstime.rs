//! CommsTime: prefix → delta → succ → prefix, with delta also feeding a consumer,
//! over rendezvous channels. Four communications per cycle. Runs the PAR delta
//! (delta's two outputs in parallel) and the SEQ delta (one after the other).
//!
//! `cargo run --release --example commstime -- --workers 1 --iters 1000000`
//!
//! The last line is machine-readable:
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
    let rt = || hoare::Runtime::builder().workers(workers).build();
    let par = rt().run(move || commstime(Delta::Par, iters / 10));
    println!(
        "commstime PAR delta: {workers} worker(s), {} cycles: {:.1} ns per communication",
        iters / 10,
        par
    );
    println!("bench=commstime delta=par workers={workers} ns_per_comm={par:.1}");
    let seq = rt().run(move || commstime(Delta::Seq, iters));
    println!(
        "commstime SEQ delta: {workers} worker(s), {iters} cycles: {:.1} ns per communication",
        seq
    );
    println!("bench=commstime delta=seq workers={workers} ns_per_comm={seq:.1}");
}
