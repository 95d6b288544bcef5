//! Alternation between processes on the runtime: dining philosophers on all
//! workers, fairness under sustained load, 100,000 alts whose timeouts fire,
//! alt-to-alt on shared ends, and poison reaching alts.

use hoare::{alt, any2any, fair_alt, one2one, Alt, Fair, Receiver, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn rt() -> Runtime {
    // Every core, and at least two workers so processes really run in parallel.
    Runtime::builder()
        .workers(hoare::default_workers().max(2))
        .build()
}

// The college of the example itself (its `main` and flag parsing go unused here).
#[allow(dead_code)]
#[path = "../examples/dining_philosophers.rs"]
mod dining_philosophers;

/// Checks the college while it runs: a philosopher eats holding both its forks (no
/// neighbour holds them), and the butler never seats all the philosophers at once.
#[derive(Clone, Default)]
struct CollegeChecks {
    max_seated: Arc<AtomicUsize>,
    forks_held: Arc<[AtomicUsize; dining_philosophers::N]>,
}

impl dining_philosophers::Watch for CollegeChecks {
    fn eat(&self, p: usize) {
        let forks = [p, (p + 1) % dining_philosophers::N];
        for f in forks {
            assert_eq!(
                self.forks_held[f].swap(1, Ordering::SeqCst),
                0,
                "fork {f} shared"
            );
        }
        for f in forks {
            self.forks_held[f].store(0, Ordering::SeqCst);
        }
    }

    fn seated(&self, seated: usize) {
        self.max_seated.fetch_max(seated, Ordering::Relaxed);
    }
}

#[test]
fn dining_philosophers_all_workers() {
    use dining_philosophers::{college, N};
    const MEALS: u64 = 4000;
    let checks = CollegeChecks::default();
    let watch = checks.clone();
    let eaten = rt().run(move || college(MEALS, watch));
    assert_eq!(eaten, MEALS * N as u64);
    assert!(checks.max_seated.load(Ordering::Relaxed) < N);
}

/// Four writers, each always ready on its own channel: a fair alt serves them all
/// about equally; a pri alt serves the first almost always. One worker, and the
/// reader yields after every alt so the writer it released re-sends: then every
/// guard is ready at every alt, whatever the OS does with other threads (a reader
/// that never blocks on a busy machine otherwise decides who is ready, not the
/// policy).
#[test]
fn fair_alt_does_not_starve_under_sustained_load() {
    const W: usize = 4;
    const ALTS: usize = 40_000;
    let rt = Runtime::builder().workers(1).build();
    let (fair_counts, pri_first) = rt.run(|| {
        let mut rxs = Vec::new();
        let mut hs = Vec::new();
        for i in 0..W {
            let (tx, rx) = one2one::<usize>();
            rxs.push(rx);
            hs.push(hoare::spawn(move || while tx.send(i).is_ok() {}));
        }
        let [a, b, c, d] = [&rxs[0], &rxs[1], &rxs[2], &rxs[3]];
        let mut fair = Fair::new();
        let mut counts = [0usize; W];
        for _ in 0..ALTS {
            hoare::yield_now();
            let i = fair_alt! { fair;
                recv(a) -> v => v.unwrap(),
                recv(b) -> v => v.unwrap(),
                recv(c) -> v => v.unwrap(),
                recv(d) -> v => v.unwrap(),
            };
            counts[i] += 1;
        }
        let mut first = 0;
        for _ in 0..ALTS {
            hoare::yield_now();
            let i = alt! {
                recv(a) -> v => v.unwrap(),
                recv(b) -> v => v.unwrap(),
                recv(c) -> v => v.unwrap(),
                recv(d) -> v => v.unwrap(),
            };
            first += usize::from(i == 0);
        }
        drop(rxs);
        for h in hs {
            h.join().unwrap();
        }
        (counts, first)
    });
    for c in fair_counts {
        assert!(
            c >= ALTS / W / 2,
            "fair alt starved a writer: {fair_counts:?}"
        );
    }
    assert!(
        pri_first > ALTS / 2,
        "pri served the first writer only {pri_first} times of {ALTS}"
    );
}

/// 100,000 alts whose timeout fires (100 processes × 1,000 alts, all pending at
/// once on the timer heap): every one reports its timeout, no value appears.
#[test]
fn hundred_thousand_timeouts_fire() {
    const P: usize = 100;
    const K: usize = 1000;
    let fired = rt().run(|| {
        let fired = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = any2any::<u32>();
        let hs: Vec<_> = (0..P)
            .map(|p| {
                let rx = rx.clone();
                let fired = fired.clone();
                hoare::spawn(move || {
                    let mut egg = hoare::Egg::new(Duration::from_micros(20 + p as u64));
                    for _ in 0..K {
                        alt! {
                            recv(rx) -> v => panic!("nobody sends: {v:?}"),
                            after(&mut egg) => { fired.fetch_add(1, Ordering::Relaxed); },
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        drop(tx);
        fired.load(Ordering::Relaxed)
    });
    assert_eq!(fired, P * K);
}

/// Alt-to-alt between processes: pairs of processes alting on both ends of two
/// channels in opposite orders, many rounds; every round exactly one
/// communication.
#[test]
fn alt_to_alt_processes() {
    const ROUNDS: usize = 20_000;
    rt().run(|| {
        let (a_tx, a_rx) = one2one::<usize>();
        let (b_tx, b_rx) = one2one::<usize>();
        let t = hoare::spawn(move || {
            let mut sent = 0;
            for i in 0..ROUNDS {
                alt! {
                    send(a_tx, i) -> r => { r.unwrap(); sent += 1; },
                    recv(b_rx) -> v => { v.unwrap(); },
                }
            }
            sent
        });
        let mut got = 0;
        for i in 0..ROUNDS {
            alt! {
                recv(a_rx) -> v => { v.unwrap(); got += 1; },
                send(b_tx, i) -> r => { r.unwrap(); },
            }
        }
        assert_eq!(t.join().unwrap(), got);
    });
}

/// A reader alting over many channels with the builder and `recv_any`, writers
/// on every worker, until poison ends it.
#[test]
fn builder_and_recv_any_until_poison() {
    const C: usize = 50;
    const PER: usize = 200;
    let total = rt().run(|| {
        let mut rxs = Vec::new();
        let mut hs = Vec::new();
        for c in 0..C {
            let (tx, rx) = one2one::<usize>();
            rxs.push(rx);
            hs.push(hoare::spawn(move || {
                for _ in 0..PER {
                    tx.send(c).unwrap();
                }
                // Dropping `tx` poisons the channel.
            }));
        }
        let mut live = [true; C];
        let mut total = 0;
        let mut fair = Fair::new();
        while live.iter().any(|&l| l) {
            let mut alt = Alt::new();
            for (i, rx) in rxs.iter().enumerate() {
                alt.when(live[i]).recv(rx, move |v| (i, v));
            }
            let (i, v) = alt.select_fair(&mut fair).output;
            match v {
                Ok(c) => {
                    assert_eq!(c, i);
                    total += 1;
                }
                Err(_) => live[i] = false,
            }
        }
        let (i, v) = hoare::alt::recv_any(&rxs);
        assert!(v.is_err() && i == 0, "all channels are poisoned");
        for h in hs {
            h.join().unwrap();
        }
        total
    });
    assert_eq!(total, C * PER);
}

/// Alting barriers between processes: eight processes alt on one alting barrier,
/// their own channel and a timeout while a feeder keeps sending; every completion
/// takes all eight at once (equal counts), and no value is lost.
#[test]
fn alting_barrier_between_processes() {
    use hoare::alt::AltingBarrier;
    const P: usize = 8;
    const ROUNDS: usize = 500;
    let (rounds, got, sent, completed) = rt().run(|| {
        let (bar, ends) = AltingBarrier::with_enrolled(P);
        let got = Arc::new(AtomicUsize::new(0));
        let mut txs = Vec::new();
        let mut hs = Vec::new();
        for mut end in ends {
            let (tx, rx) = one2one::<u32>();
            txs.push(tx);
            let got = got.clone();
            hs.push(hoare::spawn(move || {
                let mut rounds = 0;
                while rounds < ROUNDS {
                    alt! {
                        barrier(&mut end) => rounds += 1,
                        recv(rx) -> v => { v.unwrap(); got.fetch_add(1, Ordering::Relaxed); },
                        after(Duration::from_millis(100)) => {},
                    }
                }
                rounds
            }));
        }
        let stop = Arc::new(AtomicUsize::new(0));
        let stop2 = stop.clone();
        let feeder = hoare::spawn(move || {
            let mut sent = 0;
            let mut i = 0usize;
            while stop2.load(Ordering::Relaxed) == 0 {
                if txs[i % P]
                    .send_timeout(1, Duration::from_micros(200))
                    .is_ok()
                {
                    sent += 1;
                }
                i += 1;
            }
            sent
        });
        let rounds: Vec<usize> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        stop.store(1, Ordering::Relaxed);
        let sent = feeder.join().unwrap();
        (rounds, got.load(Ordering::Relaxed), sent, bar.rounds())
    });
    assert_eq!(rounds, vec![ROUNDS; P]);
    assert_eq!(completed, ROUNDS as u64);
    assert_eq!(got, sent);
}

/// `RecvAny` reused across many alts that wait (its entries of earlier waits stay
/// in the channels' queues until the next wait or the drop): on one worker (where
/// the reader waits at almost every other alt) and on two, with the same channel
/// twice in the set, rendezvous and buffered channels, writers that time out and
/// so meet the set's stale entries, and poison at the end. Every value arrives
/// once, from the end it was sent on; afterwards the channels can still be used
/// (the dropped set left nothing behind that a sender could claim).
#[test]
fn recv_any_reused_across_waits() {
    use hoare::{Channel, RecvAny};
    for workers in [1, 2] {
        const C: usize = 6;
        const PER: u64 = 2_000;
        let rt = Runtime::builder().workers(workers).build();
        rt.run(|| {
            let mut txs = Vec::new();
            let mut rxs = Vec::new();
            for c in 0..C {
                let (tx, rx) = if c % 2 == 0 {
                    Channel::builder().any2one::<u64>()
                } else {
                    Channel::builder().bounded(2).any2one::<u64>()
                };
                txs.push(tx);
                rxs.push(rx);
            }
            let mut hs = Vec::new();
            for (c, tx) in txs.iter().enumerate() {
                let tx = tx.clone();
                hs.push(hoare::spawn(move || {
                    let mut sent = 0;
                    let mut v = 0;
                    while v < PER {
                        // Some sends give up and retry: their entries leave while
                        // the set's stale ones are around.
                        match tx.send_timeout(c as u64 * PER + v, Duration::from_micros(20)) {
                            Ok(()) => {
                                v += 1;
                                sent += 1;
                            }
                            Err(hoare::SendTimeoutError::Timeout(_)) => {}
                            Err(e) => panic!("{e:?}"),
                        }
                    }
                    sent
                }));
            }
            // Ends 0..C, then end 1 again (one channel twice in the set).
            let ends: Vec<&Receiver<u64>> = rxs.iter().chain(std::iter::once(&rxs[1])).collect();
            let mut next = [0u64; C];
            {
                let mut set = RecvAny::from_ends(ends.iter().copied());
                let mut fair = Fair::new();
                for k in 0..(C as u64 * PER) {
                    let (i, v) = if k % 3 == 0 {
                        set.select()
                    } else {
                        set.select_fair(&mut fair)
                    };
                    let c = if i == C { 1 } else { i };
                    let v = v.unwrap();
                    assert_eq!(v, c as u64 * PER + next[c], "end {i}");
                    next[c] += 1;
                }
            }
            assert!(next.iter().all(|&n| n == PER));
            for h in hs {
                assert_eq!(h.join().unwrap(), PER);
            }
            // The set is gone: a sender must wait for a plain receive now.
            let tx = txs[0].clone();
            let h = hoare::spawn(move || tx.send(7).unwrap());
            assert_eq!(rxs[0].recv(), Ok(7));
            h.join().unwrap();
            drop(txs);
            let mut set = RecvAny::new(&rxs);
            let (_, v) = set.select();
            assert!(v.is_err(), "poisoned by the dropped writers");
        });
    }
}

/// A pri `RecvAny` that waited and was woken keeps pri semantics on its next alt:
/// with every end ready, the first is chosen.
#[test]
fn recv_any_pri_after_wait() {
    use hoare::RecvAny;
    let rt = Runtime::builder().workers(1).build();
    rt.run(|| {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..4).map(|_| one2one::<usize>()).unzip();
        let mut set = RecvAny::new(&rxs);
        let txs = Arc::new(txs);
        let t2 = txs.clone();
        // The set waits first (nothing is ready), then end 2 wakes it.
        let h = hoare::spawn(move || t2[2].send(2).unwrap());
        assert_eq!(set.select(), (2, Ok(2)));
        h.join().unwrap();
        // Now every end gets a waiting writer before the alt looks.
        let hs: Vec<_> = (0..4)
            .rev()
            .map(|i| {
                let t = txs.clone();
                hoare::spawn(move || t[i].send(i).unwrap())
            })
            .collect();
        // One worker: a few yields let every writer reach its send and wait.
        for _ in 0..8 {
            hoare::yield_now();
        }
        for want in 0..4 {
            assert_eq!(set.select(), (want, Ok(want)));
        }
        for h in hs {
            h.join().unwrap();
        }
    });
}
