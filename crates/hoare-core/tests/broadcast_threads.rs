//! Broadcast channels used from plain OS threads: every reader gets every value,
//! rendezvous and buffered completion, joining and leaving while in use, poison,
//! and both alt guards.
#![cfg(not(loom))]

use hoare_core::alt;
use hoare_core::alt::Alt;
use hoare_core::chan::{
    broadcast, broadcast_bounded, one2one, BroadcastReceiver, RecvError, RecvTimeoutError,
    TryRecvError,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn reader(rx: BroadcastReceiver<u64>) -> thread::JoinHandle<Vec<u64>> {
    thread::spawn(move || rx.iter().collect())
}

#[test]
fn every_reader_gets_every_value_in_order() {
    for cap in [0, 1, 3] {
        let (tx, rx) = broadcast_bounded::<u64>(cap);
        let rxs: Vec<_> = (0..3).map(|_| tx.subscribe()).chain([rx]).collect();
        let ts: Vec<_> = rxs.into_iter().map(reader).collect();
        for i in 0..500 {
            tx.send(i).unwrap();
        }
        drop(tx);
        for t in ts {
            assert_eq!(t.join().unwrap(), (0..500).collect::<Vec<_>>(), "cap {cap}");
        }
    }
}

#[test]
fn rendezvous_send_waits_for_the_slowest_reader() {
    let (tx, fast) = broadcast::<u64>();
    let slow = tx.subscribe();
    let taken = Arc::new(AtomicUsize::new(0));
    let t1 = thread::spawn(move || fast.recv());
    let tk = taken.clone();
    // Taken before the slow reader starts its sleep: a main thread descheduled
    // after the spawn cannot shorten what it measures.
    let t0 = Instant::now();
    let t2 = thread::spawn(move || {
        thread::sleep(ms(60));
        tk.store(1, Ordering::SeqCst);
        slow.recv()
    });
    tx.send(7).unwrap();
    assert!(
        t0.elapsed() >= ms(50),
        "the send did not wait for the slow reader"
    );
    assert_eq!(taken.load(Ordering::SeqCst), 1);
    assert_eq!(t1.join().unwrap(), Ok(7));
    assert_eq!(t2.join().unwrap(), Ok(7));
}

#[test]
fn buffered_send_waits_for_room_for_all() {
    let (tx, fast) = broadcast_bounded::<u64>(2);
    let slow = tx.subscribe();
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    assert_eq!((fast.recv(), fast.recv()), (Ok(1), Ok(2)));
    assert_eq!((tx.len(), fast.len(), slow.len()), (2, 0, 2));
    // The slow reader is two behind: the third send waits for it. (`t0` before
    // the spawn, as above.)
    let t0 = Instant::now();
    let t = thread::spawn(move || {
        thread::sleep(ms(60));
        let v = slow.recv();
        (v, slow)
    });
    tx.send(3).unwrap();
    assert!(t0.elapsed() >= ms(50), "the send did not wait for room");
    let (v, slow) = t.join().unwrap();
    assert_eq!(v, Ok(1));
    assert_eq!((slow.recv(), slow.recv()), (Ok(2), Ok(3)));
    assert_eq!(fast.recv(), Ok(3));
}

#[test]
fn a_reader_that_joins_gets_the_values_sent_after() {
    let (tx, rx) = broadcast_bounded::<u64>(4);
    tx.send(1).unwrap();
    let late = rx.subscribe();
    assert_eq!(late.try_recv(), Err(TryRecvError::Empty));
    tx.send(2).unwrap();
    assert_eq!((rx.recv(), rx.recv()), (Ok(1), Ok(2)));
    assert_eq!(late.recv(), Ok(2));
    assert_eq!(tx.readers(), 2);

    // Rendezvous: a reader that joins while the writer waits is not awaited.
    let (tx, rx) = broadcast::<u64>();
    let w = thread::spawn(move || {
        let r = tx.send(5);
        (r, tx)
    });
    // Until the writer has offered its value (it then waits for `rx`): a
    // reader that joined before the send would be awaited too.
    while rx.is_empty() {
        thread::yield_now();
    }
    let newcomer = rx.subscribe();
    assert_eq!(rx.recv(), Ok(5)); // the writer completes without the newcomer
    let (r, tx) = w.join().unwrap();
    assert!(r.is_ok());
    assert_eq!(newcomer.try_recv(), Err(TryRecvError::Empty));
    drop(tx);
    assert_eq!(newcomer.recv(), Err(RecvError::Poisoned));
}

#[test]
fn a_reader_that_leaves_is_no_longer_awaited() {
    let (tx, rx) = broadcast::<u64>();
    let quitter = tx.subscribe();
    let t = thread::spawn(move || (rx.recv(), rx));
    // `t0` before the spawn, as above.
    let t0 = Instant::now();
    let q = thread::spawn(move || {
        thread::sleep(ms(40));
        drop(quitter); // leaves while the writer waits for it
    });
    tx.send(1).unwrap();
    assert!(t0.elapsed() >= ms(30));
    q.join().unwrap();
    let (r, _rx) = t.join().unwrap();
    assert_eq!(r, Ok(1));
    assert_eq!(tx.readers(), 1);

    // Buffered: a leaving reader's backlog no longer holds the writer.
    let (tx, rx) = broadcast_bounded::<u64>(1);
    let lagging = tx.subscribe();
    tx.send(1).unwrap();
    assert_eq!(rx.recv(), Ok(1));
    drop(lagging);
    tx.send(2).unwrap(); // room again at once
    assert_eq!(rx.recv(), Ok(2));
}

#[test]
fn poison_from_either_side() {
    // Writer side: the readers drain first.
    let (tx, rx) = broadcast_bounded::<u64>(4);
    let rx2 = rx.subscribe();
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    tx.poison();
    assert_eq!(tx.send(3).unwrap_err().into_inner(), 3);
    assert!(rx.is_open() && rx.is_poisoned());
    assert_eq!(
        (rx.recv(), rx.recv(), rx.recv()),
        (Ok(1), Ok(2), Err(RecvError::Poisoned))
    );
    assert!(!rx.is_open());
    assert_eq!(rx2.recv(), Ok(1));

    // Reader side: discards, and the writer gets its value back.
    let (tx, rx) = broadcast_bounded::<u64>(4);
    tx.send(1).unwrap();
    rx.poison();
    assert_eq!(rx.try_recv(), Err(TryRecvError::Poisoned));
    assert_eq!(tx.send(2).unwrap_err().into_inner(), 2);

    // A rendezvous writer waiting for its readers gets its value back.
    let (tx, rx) = broadcast::<String>();
    let other = rx.subscribe();
    let w = thread::spawn(move || tx.send("v".to_string()));
    assert_eq!(rx.recv().as_deref(), Ok("v"));
    thread::sleep(ms(20));
    other.poison();
    assert_eq!(w.join().unwrap().unwrap_err().into_inner(), "v");

    // The last reader leaving poisons; a timed receive times out.
    let (tx, rx) = broadcast::<u64>();
    assert_eq!(rx.recv_timeout(ms(5)), Err(RecvTimeoutError::Timeout));
    drop(rx);
    assert!(tx.is_poisoned());
}

#[test]
fn alt_guards_on_both_sides() {
    // Receive guard beside a channel and a timeout.
    let (tx, rx) = broadcast::<u64>();
    let (_ctx, crx) = one2one::<u64>();
    let w = thread::spawn(move || {
        tx.send(4).unwrap();
        tx
    });
    let got = alt! {
        recv(crx) -> _v => None,
        recv(rx) -> v => Some(v),
        after(ms(2000)) => None,
    };
    assert_eq!(got, Some(Ok(4)));
    let tx = w.join().unwrap();

    // Send guard: not ready while the rendezvous value is still being taken,
    // and its value comes back from the builder when another guard is chosen.
    let r2 = tx.subscribe();
    let wt = thread::spawn(move || {
        let r = tx.send(1);
        (r, tx)
    });
    assert_eq!(rx.recv(), Ok(1)); // r2 has not taken it: the writer waits
    let (r, tx) = {
        thread::sleep(ms(10));
        assert_eq!(r2.recv(), Ok(1));
        wt.join().unwrap()
    };
    r.unwrap();
    // Alt-to-alt: the writer's send guard against two readers' alts.
    let readers: Vec<_> = [rx, r2]
        .into_iter()
        .map(|rx| {
            thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    alt! {
                        recv(rx) -> v => match v {
                            Ok(v) => got.push(v),
                            Err(_) => break,
                        },
                        after(ms(5000)) => panic!("no value"),
                    }
                }
                got
            })
        })
        .collect();
    for i in 0..200u64 {
        let sent = alt! {
            send(tx, i) -> r => r.is_ok(),
            after(ms(5000)) => false,
        };
        assert!(sent);
    }
    // The builder form, with the unsent value given back.
    let mut alt = Alt::new();
    let key = alt.bcast_send(&tx, 1000, |r| r.is_ok());
    alt.skip(|| false);
    let fired = alt.select();
    let unsent = alt.take_unsent(key, 0);
    drop(alt);
    if fired.guard == 1 {
        assert_eq!(unsent, Some(1000));
        tx.send(1000).unwrap();
    } else {
        assert_eq!(unsent, None);
    }
    drop(tx);
    for r in readers {
        let got = r.join().unwrap();
        assert_eq!(got, (0..200).chain([1000]).collect::<Vec<_>>());
    }
}

/// A writer and readers that join and leave at random while it sends: each reader
/// gets a contiguous run of the values, in order, and nothing blocks for ever.
#[test]
fn stress_join_and_leave_while_sending() {
    for cap in [0, 2] {
        let (tx, rx) = broadcast_bounded::<u64>(cap);
        let tx = Arc::new(tx);
        let n = 3000u64;
        let joiners: Vec<_> = (0..3u64)
            .map(|k| {
                let tx = tx.clone();
                thread::spawn(move || {
                    let mut runs = 0;
                    for round in 0..30u64 {
                        let rx = tx.subscribe();
                        let mut last: Option<u64> = None;
                        for _ in 0..((round * 7 + k * 13) % 40 + 1) {
                            match rx.recv_timeout(ms(500)) {
                                Ok(v) => {
                                    if let Some(l) = last {
                                        assert_eq!(v, l + 1, "a reader missed a value");
                                    }
                                    last = Some(v);
                                }
                                Err(_) => break,
                            }
                        }
                        runs += 1;
                        // Dropping `rx` leaves, maybe while the writer waits.
                    }
                    runs
                })
            })
            .collect();
        let main = thread::spawn(move || rx.iter().collect::<Vec<_>>());
        for i in 0..n {
            tx.send(i).unwrap();
        }
        for j in joiners {
            assert_eq!(j.join().unwrap(), 30);
        }
        drop(tx);
        assert_eq!(main.join().unwrap(), (0..n).collect::<Vec<_>>());
    }
}

/// A lossy broadcast (a "latest value" cell with capacity 1): the writer never
/// blocks, even with a reader that never reads; readers see strictly increasing
/// values and always end with the last one.
#[test]
fn overwriting_broadcast_never_blocks_and_readers_see_the_latest() {
    use hoare_core::chan::broadcast_overwriting;
    for cap in [1, 3] {
        let (tx, rx) = broadcast_overwriting::<u64>(cap);
        let stalled = tx.subscribe(); // never reads until the end
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let rx = tx.subscribe();
                thread::spawn(move || {
                    let mut last = None;
                    for v in rx.iter() {
                        assert!(last.is_none_or(|l| v > l), "a value repeated or went back");
                        last = Some(v);
                    }
                    last
                })
            })
            .collect();
        let t0 = Instant::now();
        for i in 0..20_000u64 {
            tx.send(i).unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(5));
        // The alt send guard is always ready.
        let sent = alt! { send(tx, 20_000) -> r => r.is_ok(), skip => false };
        assert!(sent);
        assert_eq!(stalled.len(), cap);
        let kept: Vec<u64> = (0..cap).map(|_| stalled.try_recv().unwrap()).collect();
        assert_eq!(kept, ((20_001 - cap as u64)..=20_000).collect::<Vec<_>>());
        drop(tx);
        for r in readers {
            assert_eq!(
                r.join().unwrap(),
                Some(20_000),
                "a reader missed the last value"
            );
        }
        assert_eq!(rx.iter().last(), Some(20_000));
    }
}
