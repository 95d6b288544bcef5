//! Alting barriers on plain OS threads: barrier guards racing channel guards and
//! timeouts, `sync`, resignation, the builder's barrier guard, preconditions.
#![cfg(not(loom))]

use hoare_core::alt;
use hoare_core::alt::{Alt, AltingBarrier};
use hoare_core::chan::one2one;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Alting barriers: three threads alt between the barrier, their own channel and a
/// timeout, while a feeder sends to their channels. Every completion commits all
/// three at once (their barrier counts stay equal), and no value is lost.
#[test]
fn alting_barrier_with_channels() {
    const P: usize = 3;
    const ROUNDS: usize = 300;
    let (bar, ends) = AltingBarrier::with_enrolled(P);
    let got = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicUsize::new(0));
    let mut txs = Vec::new();
    let mut ts = Vec::new();
    for mut end in ends {
        let (tx, rx) = one2one::<u32>();
        txs.push(tx);
        let got = got.clone();
        ts.push(thread::spawn(move || {
            let mut rounds = 0;
            while rounds < ROUNDS {
                alt! {
                    barrier(&mut end) => rounds += 1,
                    recv(rx) -> v => { v.unwrap(); got.fetch_add(1, Ordering::Relaxed); },
                    after(ms(50)) => {},
                }
            }
            // Dropping the end resigns; dropping `rx` makes the feeder's later sends
            // to it fail (not counted).
            rounds
        }));
    }
    let stop2 = stop.clone();
    let feeder = thread::spawn(move || {
        let mut sent = 0;
        let mut i = 0usize;
        while stop2.load(Ordering::Relaxed) == 0 {
            if txs[i % P].send_timeout(1, ms(1)).is_ok() {
                sent += 1;
            }
            i += 1;
        }
        sent
    });
    let rounds: Vec<usize> = ts.into_iter().map(|t| t.join().unwrap()).collect();
    stop.store(1, Ordering::Relaxed);
    let sent = feeder.join().unwrap();
    assert_eq!(rounds, vec![ROUNDS; P]);
    assert_eq!(bar.rounds(), ROUNDS as u64);
    assert_eq!(got.load(Ordering::Relaxed), sent);
}

/// `sync` on an alting barrier, resignation completing a round, and the builder's
/// barrier guard.
#[test]
fn alting_barrier_sync_resign_builder() {
    let (bar, mut ends) = AltingBarrier::with_enrolled(3);
    let mut a = ends.pop().unwrap();
    let b = ends.pop().unwrap();
    let mut c = ends.pop().unwrap();
    let t = thread::spawn(move || {
        a.sync();
        a
    });
    let t2 = thread::spawn(move || {
        thread::sleep(ms(20));
        drop(b); // the round completes with a and c
    });
    let mut alt = Alt::new();
    alt.barrier(&mut c, || "barrier");
    alt.timeout(Duration::from_secs(10), || "timeout");
    assert_eq!(alt.select().output, "barrier");
    drop(alt);
    let mut a = t.join().unwrap();
    t2.join().unwrap();
    assert_eq!(bar.rounds(), 1);
    assert_eq!(bar.enrolled(), 2);
    // A precondition-false barrier guard is never chosen.
    let t = thread::spawn(move || {
        let r = alt! { barrier(&mut a) => true, after(ms(30)) => false };
        (a, r)
    });
    let r = alt! { barrier(&mut c) if false => true, after(ms(60)) => false };
    let (_a, ra) = t.join().unwrap();
    assert!(!r && !ra);
    assert_eq!(bar.rounds(), 1);
}
