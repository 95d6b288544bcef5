//! Spawn benchmark: spawn P processes that all block on a gate, measure the spawn
//! cost and the resident memory per blocked process, then open the gate and join.
//!
//! `cargo run --release --example spawn -- --workers 1 --procs 1000000`
//!
//! The last line is machine-readable:
//! `bench=spawn workers=N procs=P ns_per_spawn=X bytes_per_proc=Y`.

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

fn rss_bytes() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers = arg(&args, "--workers", hoare::default_workers());
    let procs = arg(&args, "--procs", 100_000);
    let rt = hoare::Runtime::builder().workers(workers).build();
    let (ns, bytes) = rt.run(move || {
        let gate = Arc::new(Gate::default());
        let blocked = Arc::new(AtomicUsize::new(0));
        let before = rss_bytes();
        let t0 = Instant::now();
        let mut hs = Vec::with_capacity(procs);
        for _ in 0..procs {
            let gate = gate.clone();
            let blocked = blocked.clone();
            hs.push(hoare::spawn(move || {
                blocked.fetch_add(1, Ordering::Relaxed);
                gate.wait();
            }));
        }
        let spawn_time = t0.elapsed();
        while blocked.load(Ordering::Relaxed) < procs {
            hoare::sleep_for(Duration::from_millis(1));
        }
        let during = rss_bytes();
        let all_blocked = t0.elapsed();
        gate.open();
        for h in hs {
            h.join().unwrap();
        }
        let total = t0.elapsed();
        let ns = spawn_time.as_nanos() as f64 / procs as f64;
        let bytes = during.saturating_sub(before) as f64 / procs as f64;
        println!(
            "spawned {procs} in {spawn_time:?} ({ns:.1} ns/spawn); all blocked after {all_blocked:?}; \
             released and joined after {total:?}"
        );
        println!("resident: {before} B before, {during} B while blocked ({bytes:.0} B/process)");
        (ns, bytes)
    });
    println!("bench=spawn workers={workers} procs={procs} ns_per_spawn={ns:.1} bytes_per_proc={bytes:.0}");
}
