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

/// A lossy broadcast ("latest value", capacity 1): the writer sends 1 and 2
/// (never blocking) and leaves, while the reader receives until the poison,
/// waiting or arriving late. The reader sees a strictly increasing sequence
/// that ends with the latest value. Catches: a reader whose position is not
/// moved past the values a lossy send dropped (`State::take` without
/// `max(head)`: a late reader indexes before the buffer's start and panics, or
/// reads a value twice).
#[test]
fn lossy_reader_sees_the_latest_value() {
    loom::model(|| {
        let (tx, rx) = crate::chan::broadcast_overwriting::<u32>(1);
        let w = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        let got: Vec<u32> = rx.iter().collect();
        w.join().unwrap();
        assert_eq!(
            got.last(),
            Some(&2),
            "the latest value is never lost: {got:?}"
        );
        assert!(
            got.windows(2).all(|p| p[0] < p[1]),
            "in order, once: {got:?}"
        );
    });
}

/// A lossy broadcast whose reader holds a value (`recv_with`) while the writer
/// overwrites it: the value the reader holds may be dropped from the buffer
/// meanwhile; releasing it then must not touch another value. The reader takes
/// the next value after it. Catches: a release that does not check that its
/// value is still in the buffer (`State::release` without the `seq < head`
/// test: it indexes before the buffer's start and panics, or takes a later
/// value in the other reader's stead).
#[test]
fn lossy_value_dropped_while_a_reader_holds_it() {
    loom::model(|| {
        let (tx, rx) = crate::chan::broadcast_overwriting::<u32>(1);
        let other = rx.subscribe();
        let w = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        let first = rx.recv_with(|v| v).unwrap();
        w.join().unwrap();
        let rest: Vec<u32> = rx.iter().collect();
        let mut seen = vec![first];
        seen.extend(rest);
        assert_eq!(seen.last(), Some(&2), "{seen:?}");
        assert!(seen.windows(2).all(|p| p[0] < p[1]), "{seen:?}");
        let others: Vec<u32> = other.iter().collect();
        assert_eq!(others.last(), Some(&2), "{others:?}");
    });
}

/// A rendezvous broadcast's timed send (under loom every deadline has passed, so
/// the writer's wait for its takers times out unless a wake is pending) races a
/// reader that takes the value and another that poisons: the writer always gets
/// its value back (timeout or poison: the poisoning reader never takes it), and
/// never reports success. Catches: a reader's poison that drops the value of a
/// writer that has just left its wait (its claim fails: the poison code before
/// it left the value in the writer's packet); and one that discards the value
/// between the writer's push and its hooking itself on it (before
/// `State::orphan`). Either way the writer found the value gone and reported
/// `Ok` for a value one reader never received.
#[test]
fn timed_send_against_take_and_poison() {
    loom::model(|| {
        let (tx, rx) = broadcast::<u32>();
        let quitter = tx.subscribe();
        let t = thread::spawn(move || rx.recv());
        let q = thread::spawn(move || quitter.poison());
        let r = tx.send_deadline(1, std::time::Instant::now());
        match r {
            Err(crate::chan::SendTimeoutError::Timeout(1))
            | Err(crate::chan::SendTimeoutError::Poisoned(1)) => {}
            other => panic!("the value must come back: {other:?}"),
        }
        let _ = t.join().unwrap();
        q.join().unwrap();
    });
}

/// A `Par` that receives from a channel and sends to a rendezvous broadcast
/// whose reader takes the value, then sends on that channel: the PAR waits for
/// the broadcast's takers in a later round, beside the receive, where the
/// takers' guard is the second (its token is 1). Catches: the last taker waking
/// the hooked waiter with token 0 instead of the token it registered with (the
/// PAR takes the receive guard for chosen and reads its empty packet).
#[test]
fn par_awaits_broadcast_takers_in_a_later_round() {
    loom::model(|| {
        let (tx, rx) = broadcast::<u32>();
        let (c_tx, c_rx) = crate::chan::one2one::<u32>();
        let t = thread::spawn(move || {
            let v = rx.recv();
            c_tx.send(5).unwrap();
            v
        });
        let (mut got, mut sent) = (None, None);
        let mut par = crate::alt::Par::new();
        par.recv(&c_rx, |r| got = Some(r));
        par.bcast_send(&tx, 1, |r| sent = Some(r));
        assert!(par.run());
        assert_eq!(got, Some(Ok(5)));
        assert_eq!(sent, Some(Ok(())));
        assert_eq!(t.join().unwrap(), Ok(1));
    });
}
