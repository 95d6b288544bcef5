//! Channels used from plain OS threads: every kind and buffering, errors that give
//! values back, extended rendezvous, timeouts, iteration, the factory and the
//! request–reply bundle (poison: `poison_threads.rs`).
#![cfg(not(loom))]

use hoare_core::chan::{
    any2any, any2one, one2any, one2one, request_reply, Buffer, CallError, Channel, RecvError,
    RecvTimeoutError, SendTimeoutError, TryRecvError, TrySendError,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

const ALL: [Buffer; 5] = [
    Buffer::Rendezvous,
    Buffer::Bounded(1),
    Buffer::Bounded(4),
    Buffer::Overwriting(1000),
    Buffer::Unbounded,
];

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn every_kind_and_buffering_delivers_in_order() {
    for b in ALL {
        let c = Channel::builder().buffer(b);
        let (tx, rx) = c.one2one::<u32>();
        let t = thread::spawn(move || (0..100).for_each(|i| tx.send(i).unwrap()));
        assert_eq!(rx.iter().collect::<Vec<_>>(), (0..100).collect::<Vec<_>>());
        t.join().unwrap();

        let (tx, rx) = c.any2one::<u32>();
        let ts: Vec<_> = (0..4)
            .map(|k| {
                let tx = tx.clone();
                thread::spawn(move || (0..50).for_each(|i| tx.send(k * 1000 + i).unwrap()))
            })
            .collect();
        drop(tx);
        let mut got: Vec<u32> = rx.iter().collect();
        got.sort();
        let mut want: Vec<u32> = (0..4)
            .flat_map(|k| (0..50).map(move |i| k * 1000 + i))
            .collect();
        want.sort();
        assert_eq!(got, want, "{b:?}");
        ts.into_iter().for_each(|t| t.join().unwrap());

        let (tx, rx) = c.one2any::<u32>();
        let ts: Vec<_> = (0..4)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || rx.iter().collect::<Vec<_>>())
            })
            .collect();
        drop(rx);
        (0..200).for_each(|i| tx.send(i).unwrap());
        drop(tx);
        let mut got: Vec<u32> = ts.into_iter().flat_map(|t| t.join().unwrap()).collect();
        got.sort();
        assert_eq!(got, (0..200).collect::<Vec<_>>(), "{b:?}");

        let (tx, rx) = c.any2any::<u32>();
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || rx.iter().collect::<Vec<_>>())
            })
            .collect();
        let writers: Vec<_> = (0..3)
            .map(|k| {
                let tx = tx.clone();
                thread::spawn(move || (0..100).for_each(|i| tx.send(k * 1000 + i).unwrap()))
            })
            .collect();
        drop((tx, rx));
        writers.into_iter().for_each(|t| t.join().unwrap());
        let got: Vec<u32> = readers
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let set: HashSet<u32> = got.iter().copied().collect();
        assert_eq!(got.len(), 300, "{b:?}");
        assert_eq!(set.len(), 300, "{b:?}");
    }
}

#[test]
fn rendezvous_send_waits_for_the_reader() {
    let (tx, rx) = one2one::<u32>();
    let taken = Arc::new(AtomicBool::new(false));
    let t2 = taken.clone();
    let t = thread::spawn(move || {
        thread::sleep(ms(50));
        t2.store(true, Ordering::SeqCst);
        rx.recv().unwrap()
    });
    tx.send(7).unwrap();
    assert!(
        taken.load(Ordering::SeqCst),
        "send returned before a reader came"
    );
    assert_eq!(t.join().unwrap(), 7);
}

#[test]
fn bounded_blocks_when_full_and_overwriting_drops_oldest() {
    let (tx, rx) = Channel::builder().bounded(2).one2one::<u32>();
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
    assert!(tx.send_timeout(3, ms(20)).unwrap_err().is_timeout());
    let t = thread::spawn(move || {
        tx.send(3).unwrap(); // blocks until a reader makes room
        tx
    });
    thread::sleep(ms(20));
    assert_eq!(rx.recv(), Ok(1));
    let _tx = t.join().unwrap();
    assert_eq!(rx.try_recv(), Ok(2));
    assert_eq!(rx.try_recv(), Ok(3));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));

    let (tx, rx) = Channel::builder().overwriting(3).one2one::<u32>();
    for i in 0..10 {
        tx.try_send(i).unwrap();
    }
    assert_eq!(rx.iter().take(3).collect::<Vec<_>>(), [7, 8, 9]);

    let (tx, rx) = Channel::builder().unbounded().one2one::<u32>();
    for i in 0..10_000 {
        tx.try_send(i).unwrap();
    }
    drop(tx);
    assert_eq!(rx.iter().count(), 10_000);
}

#[test]
fn try_ops_on_rendezvous() {
    let (tx, rx) = one2one::<u32>();
    assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    let t = thread::spawn(move || rx.recv());
    // Wait until the reader is parked, then a try_send succeeds.
    let mut v = 5;
    loop {
        match tx.try_send(v) {
            Ok(()) => break,
            Err(TrySendError::Full(back)) => v = back,
            Err(e) => panic!("{e}"),
        }
        thread::yield_now();
    }
    assert_eq!(t.join().unwrap(), Ok(5));
}

#[test]
fn timeouts_give_values_back_and_do_not_deliver() {
    for b in [Buffer::Rendezvous, Buffer::Bounded(1)] {
        let (tx, rx) = Channel::builder().buffer(b).one2one::<String>();
        if b != Buffer::Rendezvous {
            tx.send("fill".into()).unwrap();
        }
        let t0 = Instant::now();
        let e = tx.send_timeout("x".into(), ms(30)).unwrap_err();
        assert!(t0.elapsed() >= ms(30));
        assert_eq!(e, SendTimeoutError::Timeout("x".to_string()));
        assert!(tx
            .send_deadline("y".into(), Instant::now())
            .unwrap_err()
            .is_timeout());
        if b != Buffer::Rendezvous {
            assert_eq!(rx.recv().unwrap(), "fill");
        }
        assert_eq!(rx.recv_timeout(ms(20)), Err(RecvTimeoutError::Timeout));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    }
    // A timed receive that a writer completes in time.
    let (tx, rx) = one2one::<u32>();
    let t = thread::spawn(move || {
        thread::sleep(ms(10));
        tx.send(4)
    });
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(4));
    assert!(t.join().unwrap().is_ok());
}

#[test]
fn timed_sends_racing_a_reader_never_lose_or_duplicate() {
    let (tx, rx) = one2one::<u32>();
    let t = thread::spawn(move || {
        let mut delivered = 0;
        for i in 0..5000 {
            match tx.send_timeout(i, Duration::from_micros(5)) {
                Ok(()) => delivered += 1,
                Err(e) => assert_eq!(e.into_inner(), i),
            }
        }
        delivered
    });
    let mut got = 0;
    while rx.recv().is_ok() {
        got += 1;
    }
    assert_eq!(t.join().unwrap(), got);
}

#[test]
fn extended_rendezvous_holds_the_writer() {
    for b in [Buffer::Rendezvous, Buffer::Bounded(0)] {
        let (tx, rx) = Channel::builder().buffer(b).one2one::<u32>();
        let in_closure = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let (i2, d2) = (in_closure.clone(), done.clone());
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            // the reader's closure must have finished
            assert!(d2.load(Ordering::SeqCst));
        });
        let r = rx.recv_with(|v| {
            i2.store(true, Ordering::SeqCst);
            thread::sleep(ms(30));
            done.store(true, Ordering::SeqCst);
            v * 10
        });
        assert_eq!(r, Ok(10));
        assert!(in_closure.load(Ordering::SeqCst));
        t.join().unwrap();
    }
    // Reader first, writer second.
    let (tx, rx) = one2one::<u32>();
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let t = thread::spawn(move || {
        rx.recv_with(|v| {
            thread::sleep(ms(30));
            d2.store(true, Ordering::SeqCst);
            v
        })
    });
    thread::sleep(ms(20));
    tx.send(3).unwrap();
    assert!(done.load(Ordering::SeqCst));
    assert_eq!(t.join().unwrap(), Ok(3));
}

#[test]
fn extended_rendezvous_on_bounded_keeps_the_place() {
    let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
    tx.send(1).unwrap();
    let r = rx.recv_with(|v| {
        // The item's place is still taken: the buffer is full.
        assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
        v
    });
    assert_eq!(r, Ok(1));
    tx.try_send(2).unwrap();
    assert_eq!(rx.recv(), Ok(2));

    // A writer blocked on the full buffer stays blocked during the closure.
    let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
    tx.send(1).unwrap();
    let released = Arc::new(AtomicBool::new(false));
    let r2 = released.clone();
    let t = thread::spawn(move || {
        tx.send(2).unwrap();
        assert!(
            r2.load(Ordering::SeqCst),
            "writer released during the closure"
        );
    });
    thread::sleep(ms(10));
    rx.recv_with(|_| {
        thread::sleep(ms(30));
        released.store(true, Ordering::SeqCst);
    })
    .unwrap();
    t.join().unwrap();
    assert_eq!(rx.recv(), Ok(2));
}

#[test]
fn extended_rendezvous_closure_panic_releases_writer() {
    let (tx, rx) = one2one::<u32>();
    let t = thread::spawn(move || tx.send(1));
    let rx = std::panic::AssertUnwindSafe(rx);
    let r = std::panic::catch_unwind(move || rx.recv_with(|_| panic!("boom")));
    assert!(r.is_err());
    assert!(t.join().unwrap().is_ok());
}

#[test]
fn ends_can_be_sent_over_channels() {
    let (ctx, crx) = one2one::<hoare_core::chan::Sender<u32>>();
    let t = thread::spawn(move || {
        let reply = crx.recv().unwrap();
        reply.send(99).unwrap();
    });
    let (rtx, rrx) = one2one();
    ctx.send(rtx).unwrap();
    assert_eq!(rrx.recv(), Ok(99));
    t.join().unwrap();
}

#[test]
fn request_reply_bundle() {
    let (client, server) = request_reply::<u32, u64>();
    let servers: Vec<_> = (0..2)
        .map(|_| {
            let s = server.clone();
            thread::spawn(move || s.serve(|x| x as u64 * 3))
        })
        .collect();
    drop(server);
    let clients: Vec<_> = (0..4)
        .map(|k| {
            let c = client.clone();
            thread::spawn(move || {
                for i in 0..100 {
                    assert_eq!(c.call(k * 100 + i), Ok((k * 100 + i) as u64 * 3));
                }
            })
        })
        .collect();
    clients.into_iter().for_each(|c| c.join().unwrap());
    client.poison();
    let served: u64 = servers.into_iter().map(|s| s.join().unwrap()).sum();
    assert_eq!(served, 400);
    assert!(matches!(client.call(1), Err(CallError::Poisoned(1))));

    // A server that drops the request without replying.
    let (client, server) = request_reply::<u32, u32>();
    let s = thread::spawn(move || drop(server.recv()));
    assert_eq!(client.call(1), Err(CallError::NoReply));
    s.join().unwrap();
}

#[test]
fn factory_generic_kinds() {
    fn make<S: hoare_core::chan::Sharing, R: hoare_core::chan::Sharing>(b: Buffer) {
        let (tx, rx) = Channel::builder().buffer(b).make::<u8, S, R>();
        let t = thread::spawn(move || tx.send(1));
        assert_eq!(rx.recv(), Ok(1));
        t.join().unwrap().unwrap();
    }
    for b in ALL {
        make::<hoare_core::chan::One, hoare_core::chan::Any>(b);
        make::<hoare_core::chan::Any, hoare_core::chan::One>(b);
    }
    assert_eq!(
        Channel::builder().bounded(0).buffering(),
        Buffer::Bounded(0)
    );
}

#[test]
fn errors_display() {
    let e: Box<dyn std::error::Error> = Box::new(TrySendError::Full(1));
    assert!(e.to_string().contains("full"));
    assert_eq!(
        RecvError::Poisoned.to_string(),
        "receiving on a poisoned channel"
    );
    assert!(format!("{:?}", SendTimeoutError::Timeout(1)).contains("Timeout"));
}

#[test]
fn stress_many_writers_one_reader() {
    const W: usize = 100;
    const N: usize = 1000;
    let (tx, rx) = any2one::<usize>();
    let ts: Vec<_> = (0..W)
        .map(|k| {
            let tx = tx.clone();
            thread::spawn(move || (0..N).for_each(|i| tx.send(k * N + i).unwrap()))
        })
        .collect();
    drop(tx);
    let mut seen = vec![false; W * N];
    for v in &rx {
        assert!(!seen[v], "{v} received twice");
        seen[v] = true;
    }
    assert!(seen.iter().all(|&s| s));
    ts.into_iter().for_each(|t| t.join().unwrap());
}

#[test]
fn stress_one_writer_many_readers() {
    const R: usize = 100;
    let (tx, rx) = one2any::<usize>();
    let count = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(R + 1));
    let ts: Vec<_> = (0..R)
        .map(|_| {
            let (rx, count, start) = (rx.clone(), count.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                let mut mine = Vec::new();
                for v in &rx {
                    count.fetch_add(1, Ordering::Relaxed);
                    mine.push(v);
                }
                mine
            })
        })
        .collect();
    drop(rx);
    start.wait();
    for i in 0..20_000 {
        tx.send(i).unwrap();
    }
    drop(tx);
    let mut all: Vec<usize> = ts.into_iter().flat_map(|t| t.join().unwrap()).collect();
    all.sort();
    assert_eq!(all, (0..20_000).collect::<Vec<_>>());
}

#[test]
fn stress_any2any_with_timeouts() {
    let (tx, rx) = any2any::<u64>();
    let writers: Vec<_> = (0..8)
        .map(|k| {
            let tx = tx.clone();
            thread::spawn(move || {
                let mut sent = 0u64;
                for i in 0..2000u64 {
                    let v = k * 1_000_000 + i;
                    match tx.send_timeout(v, Duration::from_micros(20)) {
                        Ok(()) => sent += v,
                        Err(e) => assert_eq!(e.into_inner(), v),
                    }
                }
                sent
            })
        })
        .collect();
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let rx = rx.clone();
            thread::spawn(move || {
                let mut sum = 0u64;
                loop {
                    match rx.recv_timeout(Duration::from_micros(50)) {
                        Ok(v) => sum += v,
                        Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Poisoned) => return sum,
                    }
                }
            })
        })
        .collect();
    drop((tx, rx));
    let sent: u64 = writers.into_iter().map(|t| t.join().unwrap()).sum();
    let got: u64 = readers.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(sent, got);
}

#[test]
fn ends_are_send_and_sync() {
    fn send_sync<X: Send + Sync>() {}
    send_sync::<hoare_core::chan::Sender<String>>();
    send_sync::<hoare_core::chan::Receiver<String>>();
    send_sync::<hoare_core::chan::Sender<Vec<u8>, hoare_core::chan::Any>>();
    send_sync::<hoare_core::chan::Receiver<Vec<u8>, hoare_core::chan::Any>>();
    send_sync::<hoare_core::chan::ClientEnd<u32, String>>();
    send_sync::<hoare_core::chan::ServerEnd<u32, String>>();
}
