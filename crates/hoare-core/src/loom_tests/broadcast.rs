//! Loom models of the broadcast channel (`chan/broadcast.rs`). Each test names the
//! bug it catches; each was checked to fail with that bug put into the code.

use crate::alt::Case;
use crate::chan::{broadcast, broadcast_bounded, RecvError};
use loom::thread;

/// A rendezvous send to two readers, one taking the value while the other leaves
/// (its end is dropped) concurrently: the send completes, and the reader that
/// stayed has the value. Catches: a leaving reader that is not subtracted from
/// the value in flight (the writer waits for it for ever: loom reports the
/// deadlock); a last taker or leaver that drops the value without waking the
/// writer hooked on it (the same); a writer that hooks itself after releasing
/// the lock it checked the value under (a lost wake-up).
#[test]
fn leave_while_the_writer_waits() {
    loom::model(|| {
        let (tx, rx) = broadcast::<u32>();
        let quitter = tx.subscribe();
        let t = thread::spawn(move || rx.recv());
        let q = thread::spawn(move || drop(quitter));
        assert!(tx.send(1).is_ok());
        assert_eq!(t.join().unwrap(), Ok(1));
        q.join().unwrap();
    });
}

/// A reader waiting in an alt (a receive guard on the broadcast, registered)
/// while the writer sends and then poisons: the reader gets the value exactly
/// when the send succeeded, and otherwise the poison. Catches: a writer that
/// hands a value to a waiting reader without claiming its waiter (the alt could
/// also be woken by the poison: two commits, loom sees the double unpark or a
/// lost value); a push that leaves a claimed reader's position behind (it takes
/// the same value twice, or reads past the end).
#[test]
fn alt_reader_against_send_and_poison() {
    loom::model(|| {
        let (tx, rx) = broadcast_bounded::<u32>(1);
        let w = thread::spawn(move || {
            let ok = tx.send(5).is_ok();
            tx.poison();
            ok
        });
        let mut case = rx.__alt_recv_case(true);
        let cases: &mut [&mut dyn Case] = &mut [&mut case];
        assert_eq!(crate::alt::__select(cases, 0), 0);
        let got = case.into_chosen().expect("chosen");
        let sent = w.join().unwrap();
        assert!(sent);
        match got {
            Ok(v) => {
                assert_eq!(v, 5);
                assert_eq!(rx.recv(), Err(RecvError::Poisoned));
            }
            Err(RecvError::Poisoned) => panic!("the value was sent before the poison"),
        }
    });
}

/// A writer blocked for room (buffer of one, the reader one value behind) while
/// the reader takes: the reader's take must move the waiting writer's value in
/// and wake it. Catches: a take that frees the slot without refilling from the
/// waiting writers (the writer sleeps for ever with room free: deadlock).
#[test]
fn take_refills_from_a_waiting_writer() {
    loom::model(|| {
        let (tx, rx) = broadcast_bounded::<u32>(1);
        tx.send(1).unwrap();
        let w = thread::spawn(move || tx.send(2).is_ok());
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.recv(), Ok(2));
        assert!(w.join().unwrap());
    });
}
