//! Stressed barrier (Chalmers 2018, §3.3): `G` groups of `M` processes synchronise,
//! round after round, together with one timing process; the time per sync round of
//! all `G·M + 1` processes is printed.
//!
//! Two shapes of the network:
//! * `--mode flat` (default): all `G·M + 1` processes are enrolled on **one**
//!   barrier; each group's processes are spawned by a controller process of their
//!   own, so they start out spread over the workers. The barrier's own two-tier
//!   combining (per worker, then across workers) does the work.
//! * `--mode tree`: the seed's network. Each group has a barrier shared by its `M`
//!   processes and a controller; the controllers and the timer share a top barrier.
//!   A controller syncs with its group, then with the other controllers.
//!
//! `cargo run --release --example stressed_barrier -- --workers 2 --groups 3 --procs 65536 --rounds 20`
//!
//! The last line is machine-readable:
//! `bench=barrier workers=N groups=G procs=M ms_per_sync=X`.

use hoare::{Barrier, BarrierEnd, Runtime};
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Flat,
    Tree,
}

struct Args {
    workers: usize,
    groups: usize,
    procs: usize,
    rounds: usize,
    mode: Mode,
}

fn args() -> Args {
    let mut a = Args {
        workers: hoare::default_workers(),
        groups: 3,
        procs: 65536,
        rounds: 20,
        mode: Mode::Flat,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().unwrap_or_else(|| panic!("{k} needs a value"));
        match k.as_str() {
            "--workers" => a.workers = v().parse().expect("--workers N"),
            "--groups" => a.groups = v().parse().expect("--groups G"),
            "--procs" => a.procs = v().parse().expect("--procs M"),
            "--rounds" => a.rounds = v().parse().expect("--rounds R"),
            "--mode" => {
                a.mode = match v().as_str() {
                    "flat" => Mode::Flat,
                    "tree" => Mode::Tree,
                    m => panic!("--mode flat|tree, not {m}"),
                }
            }
            "--bench" => {} // passed by `cargo bench`
            _ => panic!("usage: --workers N --groups G --procs M --rounds R [--mode flat|tree]"),
        }
    }
    a
}

/// A process that syncs `rounds + 1` times (one warm-up round) and resigns.
fn member(mut end: BarrierEnd, rounds: usize) {
    for _ in 0..=rounds {
        end.sync();
    }
}

/// Runs the network and returns the milliseconds per sync round (the warm-up round,
/// which includes spawning, is not counted).
fn stressed_barrier(a: &Args) -> f64 {
    let (groups, procs, rounds, mode) = (a.groups, a.procs, a.rounds, a.mode);
    let top = Barrier::new();
    let mut timer_end = top.enroll();
    let controllers: Vec<_> = (0..groups)
        .map(|_| {
            let top_end = top.enroll();
            hoare::spawn(move || match mode {
                Mode::Flat => {
                    // Enroll the group's ends while our own end keeps the first round
                    // open: every child's first sync meets ours.
                    let ends = top_end.barrier().enroll_many(procs);
                    let kids: Vec<_> = ends
                        .into_iter()
                        .map(|e| hoare::spawn(move || member(e, rounds)))
                        .collect();
                    member(top_end, rounds);
                    for k in kids {
                        k.join().unwrap();
                    }
                }
                Mode::Tree => {
                    let (_g, mut ends) = Barrier::with_enrolled(procs + 1);
                    let mut mine = ends.pop().unwrap();
                    let kids: Vec<_> = ends
                        .into_iter()
                        .map(|e| hoare::spawn(move || member(e, rounds)))
                        .collect();
                    let mut top_end = top_end;
                    for _ in 0..=rounds {
                        mine.sync();
                        top_end.sync();
                    }
                    drop(mine);
                    for k in kids {
                        k.join().unwrap();
                    }
                }
            })
        })
        .collect();
    // Warm-up round: everybody spawned and synced once.
    let t = Instant::now();
    timer_end.sync();
    let warm = t.elapsed();
    let t = Instant::now();
    let mut last = t;
    for r in 0..rounds {
        timer_end.sync();
        if r < 3 || r + 1 == rounds {
            let now = Instant::now();
            println!(
                "round {:>3}: {:.3} ms",
                r + 1,
                (now - last).as_secs_f64() * 1e3
            );
            last = now;
        } else {
            last = Instant::now();
        }
    }
    let ms = t.elapsed().as_secs_f64() * 1e3 / rounds.max(1) as f64;
    drop(timer_end);
    for c in controllers {
        c.join().unwrap();
    }
    println!(
        "warm-up (spawn + first sync): {:.1} ms",
        warm.as_secs_f64() * 1e3
    );
    ms
}

fn main() {
    let a = args();
    let rt = Runtime::builder()
        .workers(a.workers)
        .stack_size(16 * 1024)
        .build();
    let workers = rt.workers();
    println!(
        "stressed barrier: {} groups x {} processes (+{} controllers, +1 timer), {:?} mode, {} workers, {} rounds",
        a.groups,
        a.procs,
        a.groups,
        a.mode,
        workers,
        a.rounds
    );
    let (groups, procs) = (a.groups, a.procs);
    let ms = rt.run(move || stressed_barrier(&a));
    println!("bench=barrier workers={workers} groups={groups} procs={procs} ms_per_sync={ms:.3}");
}
