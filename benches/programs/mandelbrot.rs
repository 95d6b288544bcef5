//! Concurrent Mandelbrot set (ProXC++ thesis §8.2.2, seed 000 §3.2.2): D lines
//! of D points computed by processes and gathered by a consumer.
//!
//! * `--mode workers`: a farm. A producer sends the line numbers 0..D-1 on a
//!   one2any channel, `--nworkers` worker processes (default: one per worker
//!   thread) each take a line, compute it and send it to the consumer over an
//!   any2one channel. When the producer is done it drops its end, which
//!   poisons the channel and ends the workers' loops.
//! * `--mode lines`: one process per line, all D spawned at once; each sends
//!   its line to the consumer and ends.
//!
//! What it shows: the two classic ways to split data-parallel work between
//! processes, a fixed farm fed by a channel versus a process per piece of
//! work, and that spawning a thousand processes is cheap enough for the second.
//!
//! The numbers are those of `benches/go/cmd/mandelbrot`: x in [-2.1, 1.0],
//! y in [-1.3, 1.3], line l at y = -1.3 + l*(2.6/D), x accumulated in steps of
//! 3.1/D; a point's value is count/maxiter. As in the Go port, a line's points
//! are iterated two at a time (see `escape_pair`). `checksum` (the sum of all
//! iteration counts) must match the Go port: D = 1024, maxiter = 255 gives
//! 55208732. `ms` is the time from building the network until the consumer
//! has all D lines, averaged over `--rounds`.
//!
//! `cargo run --release --example mandelbrot -- --mode lines --size 1024 --maxiter 255`
//!
//! Last line: `bench=mandelbrot workers=N mode=M size=D maxiter=I checksum=C ms=X`.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::{any2one, one2any};
use std::time::{Duration, Instant};

const X_MIN: f64 = -2.1;
const Y_MIN: f64 = -1.3;
// x_max - x_min and y_max - y_min, written out as Go's constant arithmetic
// computes them (exactly, then rounded once).
const X_SPAN: f64 = 3.1;
const Y_SPAN: f64 = 2.6;

/// One computed line: its index and a value in [0, 1] per point.
type Line = (usize, Vec<f64>);

/// Iterates z = z² + c for c = x + iy from z = x1 + iy1, `count` iterations
/// already done, while |z|² < 4, up to `max_iter` iterations in all; returns
/// the count. From z = 0 and count 0 it is the escape time of c. (Rust never
/// fuses a multiply and an add into one FMA unless asked to, so this counts
/// exactly as the Go port does.)
#[inline(always)]
fn escape_from(mut x1: f64, mut y1: f64, x: f64, y: f64, mut count: u32, max_iter: u32) -> u32 {
    while count < max_iter && x1 * x1 + y1 * y1 < 4.0 {
        count += 1;
        let x1n = x1 * x1 - y1 * y1 + x;
        y1 = 2.0 * x1 * y1 + y;
        x1 = x1n;
    }
    count
}

/// The escape times of two points of one line, c = xa + iy and c = xb + iy,
/// each exactly as [`escape_from`] computes it from z = 0. One point's
/// iteration is a chain of dependent multiplies and adds that keeps the CPU
/// waiting on their latency; the two points' chains are independent, so
/// stepping both in one loop overlaps them. When either point escapes (or
/// `max_iter` is reached) the loop ends and each point finishes on its own.
/// The Go port has the same structure. (LLVM's SLP vectorizer keeps the two
/// points in one register with SSE2, part of baseline x86-64; Go's compiler
/// keeps them apart. Either way each point's operations and roundings are
/// those of `escape_from`.)
#[inline(never)] // keeps the points and the state in registers in the hot loop
fn escape_pair(xa: f64, xb: f64, y: f64, max_iter: u32) -> (u32, u32) {
    let (mut ax, mut ay, mut bx, mut by) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut count = 0;
    while count < max_iter {
        let (ax2, ay2, bx2, by2) = (ax * ax, ay * ay, bx * bx, by * by);
        if !(ax2 + ay2 < 4.0 && bx2 + by2 < 4.0) {
            break;
        }
        count += 1;
        let axn = ax2 - ay2 + xa;
        ay = 2.0 * ax * ay + y;
        ax = axn;
        let bxn = bx2 - by2 + xb;
        by = 2.0 * bx * by + y;
        bx = bxn;
    }
    (
        escape_from(ax, ay, xa, y, count, max_iter),
        escape_from(bx, by, xb, y, count, max_iter),
    )
}

fn compute_line(line: usize, dim: usize, max_iter: u32) -> Line {
    let dx = X_SPAN / dim as f64;
    let dy = Y_SPAN / dim as f64;
    let y = Y_MIN + line as f64 * dy;
    let iters = f64::from(max_iter);
    let mut x = X_MIN;
    let mut values = vec![0.0; dim];
    // Points two at a time (x still accumulated one step at a time).
    let mut pairs = values.chunks_exact_mut(2);
    for pair in &mut pairs {
        let xb = x + dx;
        let (a, b) = escape_pair(x, xb, y, max_iter);
        pair[0] = f64::from(a) / iters;
        pair[1] = f64::from(b) / iters;
        x = xb + dx;
    }
    for v in pairs.into_remainder() {
        *v = f64::from(escape_from(0.0, 0.0, x, y, 0, max_iter)) / iters;
    }
    (line, values)
}

/// Computes the image once with the chosen network; returns it and the time.
fn image(mode: &str, dim: usize, max_iter: u32, nworkers: usize) -> (Vec<Vec<f64>>, Duration) {
    let start = Instant::now();
    let (to_consumer, data) = any2one::<Line>();
    let mut procs = Vec::new();
    if mode == "workers" {
        let (to_workers, lines) = one2any::<usize>();
        procs.push(hoare::spawn(move || {
            for l in 0..dim {
                to_workers.send(l).expect("workers gone");
            }
            // `to_workers` is dropped here: the workers' loops end.
        }));
        for _ in 0..nworkers {
            let (lines, to_consumer) = (lines.clone(), to_consumer.clone());
            procs.push(hoare::spawn(move || {
                for l in lines.iter() {
                    to_consumer
                        .send(compute_line(l, dim, max_iter))
                        .expect("consumer gone");
                }
            }));
        }
    } else {
        for l in 0..dim {
            let to_consumer = to_consumer.clone();
            procs.push(hoare::spawn(move || {
                to_consumer
                    .send(compute_line(l, dim, max_iter))
                    .expect("consumer gone");
            }));
        }
    }
    drop(to_consumer);

    let mut img = vec![Vec::new(); dim];
    for _ in 0..dim {
        let (l, values) = data.recv().expect("a line is missing");
        img[l] = values;
    }
    let elapsed = start.elapsed();
    for p in procs {
        p.join().expect("a mandelbrot process failed");
    }
    (img, elapsed)
}

fn main() {
    let flags = common::Flags::parse(
        &["workers", "mode", "size", "maxiter", "nworkers", "rounds"],
        &[],
    );
    let workers = flags.workers();
    let mode: String = flags.get("mode", "workers".to_owned());
    let dim: usize = flags.get("size", 1024);
    let max_iter: u32 = flags.get("maxiter", 255);
    let nworkers = match flags.get::<usize>("nworkers", 0) {
        0 => workers,
        n => n,
    };
    let rounds: u32 = flags.get("rounds", 1);
    flags.require(
        mode == "workers" || mode == "lines",
        "--mode must be workers or lines",
    );
    flags.require(
        dim >= 1 && max_iter >= 1 && rounds >= 1,
        "--size, --maxiter and --rounds must be positive",
    );

    let mode2 = mode.clone();
    let (img, total) = common::runtime(workers).run(move || {
        let mut total = Duration::ZERO;
        let mut img = Vec::new();
        for _ in 0..rounds {
            let (i, t) = image(&mode2, dim, max_iter, nworkers);
            img = i;
            total += t;
        }
        (img, total)
    });

    let checksum: u64 = img
        .iter()
        .flatten()
        .map(|v| (v * f64::from(max_iter)).round() as u64)
        .sum();
    // Checksums of the Go port, for the sizes benches/compare.sh runs.
    let known = match (dim, max_iter) {
        (1024, 255) => Some(55_208_732),
        (1000, 1000) => Some(192_720_909),
        (256, 255) => Some(3_458_782),
        _ => None,
    };
    if let Some(want) = known {
        assert_eq!(
            checksum, want,
            "checksum {checksum} differs from the Go port's {want}"
        );
    }
    let ms = common::ms(total) / f64::from(rounds);
    let shape = if mode == "workers" {
        format!("{nworkers} worker processes")
    } else {
        format!("one process per line ({dim})")
    };
    println!("{dim}x{dim} points, maxiter {max_iter}, {shape}, {workers} worker thread(s): {ms:.2} ms, checksum {checksum}");
    // The machine-readable last line (nworkers only for the farm, as in Go).
    let nw = if mode == "workers" {
        format!(" nworkers={nworkers}")
    } else {
        String::new()
    };
    println!(
        "bench=mandelbrot workers={workers} mode={mode} size={dim} maxiter={max_iter}{nw} \
         checksum={checksum} ms={ms:.3}"
    );
}
