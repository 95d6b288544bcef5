//! Barrier stress with plain OS threads (and fake worker indices, so the two tiers
//! and moves between groups are exercised without the runtime).
#![cfg(not(loom))]

use hoare_core::barrier::{Barrier, BarrierEnd};
use hoare_core::park::set_worker_index;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;

/// `n` threads × `rounds`: after sync k, every party has arrived in round k, and no
/// party has arrived in round k+2 before everybody left round k.
fn run_fixed(n: usize, rounds: usize, workers: usize) {
    let (b, ends) = Barrier::with_enrolled(n);
    let arrived = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = ends
        .into_iter()
        .enumerate()
        .map(|(i, mut end)| {
            let arrived = arrived.clone();
            thread::spawn(move || {
                for k in 1..=rounds {
                    // Move between "workers" now and then: counting is per end.
                    if workers > 0 {
                        set_worker_index((i + k / 3) % workers);
                    }
                    let before = arrived.fetch_add(1, SeqCst);
                    // Nobody can be in round k+1 while we have not arrived in round k.
                    assert!(before < n * k, "a party ran ahead into the next round");
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
    assert_eq!(arrived.load(SeqCst), n * rounds);
    assert_eq!(b.rounds(), rounds as u64);
}

#[test]
fn threads_same_group() {
    run_fixed(8, 500, 0);
}

#[test]
fn threads_across_fake_workers() {
    run_fixed(8, 500, 3);
}

#[test]
fn single_party_never_blocks() {
    let (b, mut ends) = Barrier::with_enrolled(1);
    for _ in 0..100 {
        ends[0].sync();
    }
    assert_eq!(b.rounds(), 100);
}

#[test]
fn resign_of_last_awaited_completes_round() {
    let (_b, mut ends) = Barrier::with_enrolled(3);
    let c = ends.pop().unwrap();
    let mut bb = ends.pop().unwrap();
    let mut a = ends.pop().unwrap();
    let t = thread::spawn(move || bb.sync());
    let t2 = thread::spawn(move || {
        thread::sleep(std::time::Duration::from_millis(20));
        c.resign();
    });
    a.sync(); // completes once B synced and C resigned
    t.join().unwrap();
    t2.join().unwrap();
}

/// A fixed core of parties syncs many rounds while helper threads keep enrolling
/// short-lived ends (that sync a few rounds and resign). Checks with per-party round
/// counters that nobody passes round k of the core before every core party arrived
/// in it, and that everything terminates (no lost or doubly counted end).
#[test]
fn enroll_resign_during_rounds() {
    const CORE: usize = 4;
    const ROUNDS: usize = 400;
    let (b, ends) = Barrier::with_enrolled(CORE);
    let progress: Arc<Vec<AtomicUsize>> =
        Arc::new((0..CORE).map(|_| AtomicUsize::new(0)).collect());
    let done = Arc::new(AtomicUsize::new(0));
    let core: Vec<_> = ends
        .into_iter()
        .enumerate()
        .map(|(i, mut end)| {
            let progress = progress.clone();
            let done = done.clone();
            thread::spawn(move || {
                set_worker_index(i % 2);
                for k in 1..=ROUNDS {
                    progress[i].store(k, SeqCst);
                    end.sync();
                    for (j, p) in progress.iter().enumerate() {
                        let pj = p.load(SeqCst);
                        assert!(pj >= k, "core party {j} at {pj} when {i} passed round {k}");
                    }
                }
                done.fetch_add(1, SeqCst);
            })
        })
        .collect();
    let helpers: Vec<_> = (0..2)
        .map(|h| {
            let b = b.clone();
            let done = done.clone();
            thread::spawn(move || {
                let mut n = 0usize;
                while done.load(SeqCst) == 0 {
                    set_worker_index(if h == 0 { usize::MAX } else { n % 3 });
                    let mut e: BarrierEnd = b.enroll();
                    for _ in 0..(n % 3) {
                        if done.load(SeqCst) != 0 {
                            break;
                        }
                        e.sync();
                    }
                    drop(e);
                    n += 1;
                }
            })
        })
        .collect();
    for t in core {
        t.join().unwrap();
    }
    for t in helpers {
        t.join().unwrap();
    }
    assert_eq!(b.enrolled(), 0);
}
