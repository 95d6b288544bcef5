//! Channel poison from plain OS threads: every rule of `docs/semantics.md#poison`
//! (who sees it, what it wakes, what a buffer keeps, values given back, completed
//! communications stay successes, propagation through pipes).
#![cfg(not(loom))]

use hoare_core::chan::{
    one2one, Buffer, Channel, RecvError, RecvTimeoutError, SendTimeoutError, TryRecvError,
    TrySendError,
};
use std::thread;
use std::time::Duration;

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
fn poison_by_either_end_is_seen_by_every_later_operation() {
    for b in ALL {
        for writer_poisons in [true, false] {
            let (tx, rx) = Channel::builder().buffer(b).one2one::<u32>();
            if writer_poisons {
                tx.poison();
            } else {
                rx.poison();
            }
            assert!(tx.is_poisoned() && rx.is_poisoned());
            assert_eq!(tx.send(1).unwrap_err().into_inner(), 1);
            assert_eq!(tx.try_send(2), Err(TrySendError::Poisoned(2)));
            assert_eq!(
                tx.send_timeout(3, ms(1)),
                Err(SendTimeoutError::Poisoned(3))
            );
            assert_eq!(rx.recv(), Err(RecvError::Poisoned));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Poisoned));
            assert_eq!(rx.recv_timeout(ms(1)), Err(RecvTimeoutError::Poisoned));
            assert_eq!(rx.recv_with(|v| v), Err(RecvError::Poisoned));
        }
    }
}

#[test]
fn poison_wakes_blocked_parties_and_gives_values_back() {
    for b in [Buffer::Rendezvous, Buffer::Bounded(1)] {
        let (tx, rx) = Channel::builder().buffer(b).any2any::<u32>();
        if b != Buffer::Rendezvous {
            tx.send(0).unwrap(); // fill the buffer
        }
        let senders: Vec<_> = (1..4)
            .map(|i| {
                let tx = tx.clone();
                thread::spawn(move || tx.send(i))
            })
            .collect();
        thread::sleep(ms(30));
        rx.poison(); // reader-side: also discards the buffer
        for (i, s) in senders.into_iter().enumerate() {
            assert_eq!(s.join().unwrap().unwrap_err().into_inner(), i as u32 + 1);
        }
        assert_eq!(rx.recv(), Err(RecvError::Poisoned));

        let (tx, rx) = Channel::builder().buffer(b).one2any::<u32>();
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let rx = rx.clone();
                thread::spawn(move || rx.recv())
            })
            .collect();
        thread::sleep(ms(30));
        tx.poison();
        for r in readers {
            assert_eq!(r.join().unwrap(), Err(RecvError::Poisoned));
        }
    }
}

#[test]
fn writer_poison_leaves_buffer_reader_poison_discards_it() {
    for b in [
        Buffer::Bounded(4),
        Buffer::Overwriting(4),
        Buffer::Unbounded,
    ] {
        let (tx, rx) = Channel::builder().buffer(b).one2one::<u32>();
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        tx.poison();
        assert!(tx.send(3).is_err());
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.try_recv(), Ok(2));
        assert_eq!(rx.recv(), Err(RecvError::Poisoned));

        let (tx, rx) = Channel::builder().buffer(b).one2one::<u32>();
        tx.send(1).unwrap();
        rx.poison();
        assert_eq!(rx.try_recv(), Err(TryRecvError::Poisoned));
        assert!(tx.send(2).is_err());
    }
}

#[test]
fn dropping_every_end_of_one_side_poisons() {
    for b in ALL {
        let (tx, rx) = Channel::builder().buffer(b).any2any::<u32>();
        let tx2 = tx.clone();
        tx.send_timeout(1, ms(1)).ok();
        drop(tx);
        assert!(!rx.is_poisoned());
        drop(tx2);
        assert!(rx.is_poisoned());
        let _ = rx.try_recv(); // maybe the buffered item
        assert_eq!(rx.recv(), Err(RecvError::Poisoned));

        let (tx, rx) = Channel::builder().buffer(b).one2any::<u32>();
        let rx2 = rx.clone();
        drop(rx);
        assert!(!tx.is_poisoned());
        drop(rx2);
        assert_eq!(tx.send(5), Err(hoare_core::chan::SendError(5)));
    }
}

#[test]
fn a_blocked_receiver_is_woken_when_the_last_sender_drops() {
    let (tx, rx) = one2one::<u32>();
    let t = thread::spawn(move || rx.recv());
    thread::sleep(ms(20));
    drop(tx);
    assert_eq!(t.join().unwrap(), Err(RecvError::Poisoned));
}

#[test]
fn non_poisonable_ends_ignore_poison() {
    let (tx, rx) = one2one::<u32>();
    let tx = tx.non_poisonable();
    let rx = rx.non_poisonable();
    assert!(!tx.is_poisonable());
    tx.poison();
    rx.poison();
    assert!(!tx.is_poisoned());
    let t = thread::spawn(move || rx.recv());
    tx.send(3).unwrap();
    assert_eq!(t.join().unwrap(), Ok(3));
}

#[test]
fn completed_communication_is_success_even_if_poisoned_right_after() {
    // Sputh's case, many times: the writer poisons right after its send returned.
    for _ in 0..2000 {
        let (tx, rx) = one2one::<u32>();
        let t = thread::spawn(move || rx.recv());
        let sent = tx.send(9).is_ok();
        tx.poison();
        let got = t.join().unwrap();
        assert_eq!(sent, got.is_ok());
        if sent {
            assert_eq!(got, Ok(9));
        }
    }
}

#[test]
fn poison_during_extended_rendezvous_writer_sees_success() {
    let (tx, rx) = one2one::<u32>();
    let t = thread::spawn(move || tx.send(8));
    let r = rx.recv_with(|v| {
        rx.poison();
        v
    });
    assert_eq!(r, Ok(8));
    assert!(t.join().unwrap().is_ok());
    assert_eq!(rx.recv(), Err(RecvError::Poisoned));
}

#[test]
fn pipe_propagates_poison_both_ways() {
    let (atx, arx) = one2one::<u32>();
    let (btx, brx) = one2one::<u32>();
    let p = thread::spawn(move || arx.pipe_to(&btx));
    let w = thread::spawn(move || {
        for i in 0..10 {
            atx.send(i).unwrap();
        }
    });
    assert_eq!(brx.iter().collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    assert_eq!(p.join().unwrap(), 10);
    w.join().unwrap();

    // Backward: the downstream reader poisons; the upstream writer sees it.
    let (atx, arx) = one2one::<u32>();
    let (btx, brx) = one2one::<u32>();
    let p = thread::spawn(move || arx.pipe_to(&btx));
    atx.send(1).unwrap();
    brx.poison();
    let mut i = 0;
    while atx.send(i).is_ok() {
        i += 1;
    }
    p.join().unwrap();
}

#[test]
fn poison_spreads_through_a_pipeline() {
    const N: usize = 100;
    let (first_tx, mut prev_rx) = one2one::<u32>();
    let mut stages = Vec::new();
    for _ in 0..N {
        let (tx, rx) = one2one::<u32>();
        let input = std::mem::replace(&mut prev_rx, rx);
        stages.push(thread::spawn(move || input.pipe_to(&tx)));
    }
    for i in 0..10 {
        first_tx.send(i).unwrap();
        assert_eq!(prev_rx.recv(), Ok(i));
    }
    first_tx.poison();
    assert_eq!(prev_rx.recv(), Err(RecvError::Poisoned));
    for s in stages {
        assert_eq!(s.join().unwrap(), 10);
    }
}

/// A reader that refuses a value (`recv_or_refuse`) hands it back to the writer,
/// whether the writer blocked in a plain send (reader first or writer first) or
/// in an alt's send guard, and the reason stays with the channel. Fails with the
/// refusal finishing the writer as a success (the sends return `Ok`).
#[test]
fn refused_values_go_back_to_their_writers() {
    use hoare_core::chan::{one2one, Refuse};
    for writer_first in [false, true] {
        for in_alt in [false, true] {
            let (tx, rx) = one2one::<String>();
            let t = std::thread::spawn(move || {
                if !writer_first {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                let r = if in_alt {
                    hoare_core::alt! { send(tx, "v".to_owned()) -> r => r }
                } else {
                    tx.send("v".to_owned())
                };
                (r.map_err(|e| e.into_inner()), tx.poison_reason())
            });
            if writer_first {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let got = rx.recv_or_refuse(|v| Err::<(), _>(Refuse::new(v, "no thanks")));
            assert_eq!(got, Ok(None));
            let (r, why) = t.join().unwrap();
            assert_eq!(
                r,
                Err("v".to_owned()),
                "writer_first {writer_first} alt {in_alt}"
            );
            assert_eq!(why.as_deref(), Some("no thanks"));
            assert_eq!(rx.poison_reason().as_deref(), Some("no thanks"));
        }
    }
    // Taking the value instead: the send succeeds.
    let (tx, rx) = one2one::<u8>();
    let t = std::thread::spawn(move || tx.send(3));
    assert_eq!(
        rx.recv_or_refuse(|v| Ok::<_, Refuse<u8>>(v + 1)),
        Ok(Some(4))
    );
    assert!(t.join().unwrap().is_ok());
}
