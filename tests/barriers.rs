//! Barriers with processes of the runtime: thousands of processes on every worker,
//! many rounds, enroll and resign while rounds are under way, and processes mixed
//! with plain threads on one barrier.

use hoare::{Barrier, BarrierEnd, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

fn rt(workers: usize) -> Runtime {
    Runtime::builder()
        .workers(workers)
        .stack_size(32 * 1024)
        .build()
}

/// `n` processes × `rounds`: nobody passes round k before all arrived in round k, and
/// nobody arrives in round k+1 before its own release from round k.
fn many_rounds(workers: usize, n: usize, rounds: usize) {
    rt(workers).run(move || {
        let (b, ends) = Barrier::with_enrolled(n);
        let arrived = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = ends
            .into_iter()
            .map(|mut end| {
                let arrived = arrived.clone();
                hoare::spawn(move || {
                    for k in 1..=rounds {
                        let before = arrived.fetch_add(1, SeqCst);
                        assert!(before < n * k, "a process ran ahead into round {}", k + 1);
                        end.sync();
                        let now = arrived.load(SeqCst);
                        assert!(now >= n * k, "released from round {k} with {now} arrivals");
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(b.rounds(), rounds as u64);
        assert_eq!(b.enrolled(), 0);
    });
}

#[test]
fn thousands_of_processes_all_workers() {
    let workers = hoare::default_workers().max(2);
    many_rounds(workers, 4000, 50);
}

#[test]
fn more_workers_than_cores() {
    many_rounds(6, 1000, 50);
}

#[test]
fn one_worker() {
    many_rounds(1, 2000, 20);
}

/// Parents enroll ends for children while the barrier is in use: a parent that is
/// enrolled and has not synced yet enrolls a child's end, so the child's first sync
/// meets the parent's next one. Children sync a few rounds and resign.
#[test]
fn enroll_and_resign_while_in_use() {
    const CORE: usize = 64;
    const ROUNDS: usize = 200;
    rt(hoare::default_workers().max(2)).run(|| {
        let (b, ends) = Barrier::with_enrolled(CORE);
        let progress: Arc<Vec<AtomicUsize>> =
            Arc::new((0..CORE).map(|_| AtomicUsize::new(0)).collect());
        let children_synced = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = ends
            .into_iter()
            .enumerate()
            .map(|(i, mut end)| {
                let progress = progress.clone();
                let children_synced = children_synced.clone();
                hoare::spawn(move || {
                    let mut kids = Vec::new();
                    for k in 1..=ROUNDS {
                        if k % 10 == i % 10 {
                            // Enroll a child before our own sync of round k: the
                            // child's first sync belongs to our round k.
                            let mut child: BarrierEnd = end.barrier().enroll();
                            let cs = children_synced.clone();
                            let progress = progress.clone();
                            kids.push(hoare::spawn(move || {
                                for j in 0..(k % 4) {
                                    child.sync();
                                    cs.fetch_add(1, SeqCst);
                                    // Our sync j belongs to round k + j, which needs
                                    // the parent's arrival in it (or its resignation
                                    // after its last round).
                                    let p = progress[i].load(SeqCst);
                                    assert!(
                                        p >= (k + j).min(ROUNDS),
                                        "child of {i} passed round {} with its parent at {p}",
                                        k + j
                                    );
                                }
                                child.resign();
                            }));
                        }
                        progress[i].store(k, SeqCst);
                        end.sync();
                        for (j, p) in progress.iter().enumerate() {
                            let pj = p.load(SeqCst);
                            assert!(pj >= k, "party {j} at {pj} when {i} passed round {k}");
                        }
                    }
                    drop(end);
                    for kid in kids {
                        kid.join().unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(b.enrolled(), 0);
        assert!(children_synced.load(SeqCst) > 0);
    });
}

/// Processes and a plain OS thread sync on the same barrier.
#[test]
fn processes_and_a_thread() {
    const ROUNDS: usize = 100;
    rt(2).run(|| {
        let (_b, mut ends) = Barrier::with_enrolled(101);
        let arrived = Arc::new(AtomicUsize::new(0));
        let mut thread_end = ends.pop().unwrap();
        let a = arrived.clone();
        let t = std::thread::spawn(move || {
            for k in 1..=ROUNDS {
                a.fetch_add(1, SeqCst);
                thread_end.sync();
                assert!(a.load(SeqCst) >= 101 * k);
            }
        });
        let hs: Vec<_> = ends
            .into_iter()
            .map(|mut end| {
                let a = arrived.clone();
                hoare::spawn(move || {
                    for k in 1..=ROUNDS {
                        a.fetch_add(1, SeqCst);
                        end.sync();
                        assert!(a.load(SeqCst) >= 101 * k);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        hoare::spawn_blocking(move || t.join().unwrap())
            .join()
            .unwrap();
    });
}

/// Timers inside processes: a Repeat paces a process without drift.
#[test]
fn timers_in_processes() {
    use hoare::Repeat;
    use std::time::{Duration, Instant};
    rt(2).run(|| {
        let hs: Vec<_> = (0..100)
            .map(|_| {
                hoare::spawn(|| {
                    let t0 = Instant::now();
                    let mut r = Repeat::starting_at(t0, Duration::from_millis(5));
                    for _ in 0..4 {
                        r.sleep();
                    }
                    assert!(t0.elapsed() >= Duration::from_millis(20));
                    assert_eq!(r.next_tick(), t0 + Duration::from_millis(25));
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
}

/// A runtime that shuts down with processes blocked in a sync unwinds them: nothing
/// crashes, nobody walks the freed waiter nodes, and the barrier reports itself
/// broken instead of hanging.
#[test]
fn shutdown_with_parties_blocked_in_sync() {
    let b = Barrier::new();
    let mut keep = b.enroll(); // never arrives: the round cannot complete
    let b2 = b.clone();
    let started = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    rt(2).run(move || {
        for mut end in b2.enroll_many(10) {
            let started = started.clone();
            let _detached = hoare::spawn(move || {
                started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                end.sync();
            });
        }
        // Let them all start and block in `sync` (a wait for the count, not
        // a guess of how long a loaded machine takes to start them), then
        // return without joining them.
        while started.load(std::sync::atomic::Ordering::SeqCst) < 10 {
            hoare::sleep_for(std::time::Duration::from_millis(1));
        }
        hoare::sleep_for(std::time::Duration::from_millis(20));
    });
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| keep.sync()));
    assert!(r.is_err(), "sync on a broken barrier must panic, not hang");
    drop(keep);
}
