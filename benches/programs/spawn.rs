//! Spawn benchmark, the same measure as `benches/go/cmd/spawn`: spawn P processes
//! that each signal "started" and block on a shared gate, wait until all have
//! started, then open the gate and wait until all are done.
//!
//! 1. `rss0` = resident memory before.
//! 2. Clock starts. Spawn P processes; each counts itself started (the last one
//!    to start opens the root's `started` gate) and blocks on the `release` gate.
//!    The root waits until all P have started.
//! 3. Clock pauses. `rss1` = resident memory while all P are blocked.
//! 4. Clock resumes. The root opens `release`, waking all P; each counts itself
//!    done (the last one opens the root's `done` gate), which the root waits on
//!    (the join). Clock stops.
//!
//! `ns_per_spawn` = (time of step 2 + time of step 4) / P and
//! `bytes_per_proc` = (rss1 - rss0) / P, as in Go. Resident memory (`VmRSS`) counts
//! the pages each process touched (its stack's top page, which holds its header)
//! and its heap, but not the page tables that map them (`VmPTE`), which the kernel
//! also charges to the program and which grow with the stack size (a 4 KiB page
//! table maps 2 MiB, so each ≥ 2 MiB stack needs one of its own for its guard
//! page and one for its top): `pte_bytes_per_proc` reports them.
//!
//! `cargo run --release --example spawn -- --workers 1 --procs 1000000 [--stack BYTES] [--threads]`
//!
//! `--threads` also prints, after each phase, every thread's CPU time and minor
//! page faults so far (from `/proc/self/task`): which thread paid for what (the
//! workers, the stack pool's thread). `--idle SECS` then sleeps that
//! long with nothing to do and prints the resident memory and the threads again
//! (what an idle runtime keeps after a burst, and whether its threads sleep).
//!
//! The last line is machine-readable:
//! `bench=spawn workers=N procs=P spawn_ms=S join_ms=J ns_per_spawn=X bytes_per_proc=Y pte_bytes_per_proc=Z`.

use hoare::core::waiter::Waiter;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A one-shot gate processes block on until it opens.
#[derive(Default)]
struct Gate {
    state: Mutex<(bool, Vec<usize>)>,
}

impl Gate {
    fn wait(&self) {
        let w = Waiter::for_current();
        {
            let mut g = self.state.lock().unwrap();
            if g.0 {
                return;
            }
            g.1.push(&w as *const Waiter as usize);
        }
        w.wait(None);
    }

    fn open(&self) {
        let ws = {
            let mut g = self.state.lock().unwrap();
            g.0 = true;
            std::mem::take(&mut g.1)
        };
        for w in ws {
            // SAFETY: each waiter stays in its wait until this wake (nothing else
            // commits it), and was registered under the lock.
            unsafe { Waiter::try_wake(w as *const Waiter, 0, false) };
        }
    }
}

/// Counts `n` arrivals; the last one opens the gate (a Go `sync.WaitGroup`).
struct Countdown {
    left: AtomicUsize,
    gate: Gate,
}

impl Countdown {
    fn new(n: usize) -> Self {
        Self {
            left: AtomicUsize::new(n),
            gate: Gate::default(),
        }
    }

    fn done(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.gate.open();
        }
    }

    fn wait(&self) {
        self.gate.wait();
    }
}

struct Shared {
    started: Countdown,
    release: Gate,
    done: Countdown,
}

/// A `/proc/self/status` field in bytes (`VmRSS`, `VmPTE`).
fn status_bytes(field: &str) -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn rss_bytes() -> usize {
    status_bytes("VmRSS:")
}

fn pte_bytes() -> usize {
    status_bytes("VmPTE:")
}

/// Per thread of this OS process: its name, CPU time (user + system, in clock
/// ticks) and minor page faults so far.
fn thread_stats() -> Vec<(String, u64, u64)> {
    let mut v = Vec::new();
    for t in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        // The fields after the command (in parentheses): minflt is the 8th,
        // utime and stime the 12th and 13th.
        let f: Vec<u64> = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        if f.len() > 12 {
            v.push((comm.trim().to_owned(), f[11] + f[12], f[7]));
        }
    }
    v
}

fn print_threads(phase: &str) {
    for (name, ticks, faults) in thread_stats() {
        println!("threads after {phase}: {name} cpu_ticks={ticks} minflt={faults}");
    }
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers = arg(&args, "--workers", hoare::default_workers());
    let procs = arg(&args, "--procs", 100_000).max(1);
    let stack = arg(&args, "--stack", hoare::DEFAULT_STACK_SIZE);
    let threads = args.iter().any(|a| a == "--threads");
    let idle = arg(&args, "--idle", 0);
    let rt = hoare::Runtime::builder()
        .workers(workers)
        .stack_size(stack)
        .build();
    let (spawn_t, join_t, rss0, rss1, rss2, pte0, pte1) = rt.run(move || {
        let sh = Arc::new(Shared {
            started: Countdown::new(procs),
            release: Gate::default(),
            done: Countdown::new(procs),
        });
        let rss0 = rss_bytes();
        let pte0 = pte_bytes();

        let t0 = Instant::now();
        for _ in 0..procs {
            let sh = sh.clone();
            // Detached: the `done` countdown is the join, as in Go.
            drop(hoare::spawn(move || {
                sh.started.done();
                sh.release.wait();
                sh.done.done();
            }));
        }
        sh.started.wait();
        let spawn_t = t0.elapsed();
        if threads {
            print_threads("spawn");
        }

        let rss1 = rss_bytes();
        let pte1 = pte_bytes();

        let t1 = Instant::now();
        sh.release.open();
        sh.done.wait();
        let join_t = t1.elapsed();
        if threads {
            print_threads("join");
        }

        // Outside the clock: resident memory once all have finished (finished
        // processes' stacks beyond the pool's resident cache go back to the OS).
        hoare::yield_now();
        let rss2 = rss_bytes();
        if idle > 0 {
            hoare::sleep_for(Duration::from_secs(idle as u64));
            println!("resident after {idle} s idle: {} B", rss_bytes());
            print_threads("idle");
        }
        (spawn_t, join_t, rss0, rss1, rss2, pte0, pte1)
    });
    let ns = (spawn_t + join_t).as_nanos() as f64 / procs as f64;
    let bytes = rss1.saturating_sub(rss0) as f64 / procs as f64;
    let pte = pte1.saturating_sub(pte0) as f64 / procs as f64;
    println!(
        "spawned {procs}, all started and blocked after {spawn_t:?}; released and done after \
         {join_t:?}"
    );
    println!(
        "resident: {rss0} B before, {rss1} B while blocked ({bytes:.0} B/process), {rss2} B after \
         all finished"
    );
    println!("page tables: {pte0} B before, {pte1} B while blocked ({pte:.0} B/process); stack {stack} B");
    println!(
        "bench=spawn workers={workers} procs={procs} spawn_ms={:.3} join_ms={:.3} \
         ns_per_spawn={ns:.1} bytes_per_proc={bytes:.0} pte_bytes_per_proc={pte:.0}",
        ms(spawn_t),
        ms(join_t)
    );
}
