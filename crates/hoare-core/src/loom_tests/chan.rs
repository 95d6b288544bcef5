//! Loom models of the channel hand-off. Each test names the bug it catches; each
//! was checked to fail with that bug put into the code.

use crate::chan::select::{complete_recv, complete_send, SelectLock, Selected};
use crate::chan::{
    any2any, any2one, one2one, Channel, Entry, Packet, RawChan, Receiver, RecvError,
    RecvTimeoutError, SendTimeoutError,
};
use crate::waiter::{Outcome, Waiter};
use loom::thread;
use std::time::Instant;

/// Hand-off with the writer in another thread (loom runs it both writer-first and
/// reader-first). Catches: a party that registers after releasing the lock it
/// checked the other queue under (lost wake-up: both park, loom reports the
/// deadlock); a sender that `finish`es the receiver before moving the value in
/// (the receiver wakes to an empty packet).
#[test]
fn handoff_writer_in_thread() {
    loom::model(|| {
        let (tx, rx) = one2one::<u32>();
        let t = thread::spawn(move || tx.send(1).is_ok());
        assert_eq!(rx.recv(), Ok(1));
        assert!(t.join().unwrap());
    });
}

/// The same with the reader in another thread. Catches the same two bugs.
#[test]
fn handoff_reader_in_thread() {
    loom::model(|| {
        let (tx, rx) = one2one::<u32>();
        let t = thread::spawn(move || rx.recv());
        tx.send(2).unwrap();
        assert_eq!(t.join().unwrap(), Ok(2));
    });
}

/// Sputh's case: a second writer poisons while the first one's communication
/// completes. A completed communication must be a success for both sides (no data
/// lost, no false poison): the send succeeded exactly when the receive did.
/// Catches: a woken receiver that checks the channel's poison flag before its own
/// waiter's outcome (it reports poison for a value the writer saw delivered).
#[test]
fn poison_racing_completion() {
    loom::model(|| writer_and_poisoner(7, |rx| rx.recv(), 7));
}

/// A writer sends `value` and a second writer poisons while the main thread
/// receives with `recv`: the send succeeded exactly when the receive did, and then
/// the receive gives `expect`.
fn writer_and_poisoner(
    value: u32,
    recv: impl FnOnce(&Receiver<u32>) -> Result<u32, RecvError>,
    expect: u32,
) {
    let (tx, rx) = any2one::<u32>();
    let tx2 = tx.clone();
    let writer = thread::spawn(move || tx.send(value).is_ok());
    let poisoner = thread::spawn(move || tx2.poison());
    let got = recv(&rx);
    let sent = writer.join().unwrap();
    poisoner.join().unwrap();
    assert_eq!(sent, got.is_ok(), "sent {sent}, received {got:?}");
    if sent {
        assert_eq!(got, Ok(expect));
    }
}

/// A send whose deadline passes while a receiver completes it. A timed-out send
/// has not delivered its value and gets it back; a successful one delivered it
/// exactly once. Catches: a receiver that takes a waiting sender's value after
/// checking `is_waiting` instead of winning the `try_claim` CAS (the sender's
/// timeout aborts at the same time and keeps the value too).
#[test]
fn timeout_racing_completion() {
    loom::model(|| {
        let (tx, rx) = one2one::<u32>();
        let t = thread::spawn(move || match tx.send_deadline(5, Instant::now()) {
            Ok(()) => None,
            Err(SendTimeoutError::Timeout(v)) => Some(v),
            Err(SendTimeoutError::Poisoned(_)) => panic!("nobody poisons"),
        });
        let got = rx.recv_deadline(Instant::now());
        let back = t.join().unwrap();
        match (got, back) {
            (Ok(5), None) => {}
            (Err(RecvTimeoutError::Timeout | RecvTimeoutError::Poisoned), Some(5)) => {}
            other => panic!("value lost or duplicated: {other:?}"),
        }
    });
}

/// Poison during an extended rendezvous: the writer handed its value over, the
/// reader's closure runs, another end poisons; the writer must still see success.
/// Catches: a reader that releases the writer with the channel's poison state
/// instead of success (the writer reports poison for a delivered value).
#[test]
fn poison_during_extended_rendezvous() {
    loom::model(|| writer_and_poisoner(3, |rx| rx.recv_with(|v| v + 1), 4));
}

/// Two writers on an any2any channel, the main thread reading twice: each value is
/// delivered exactly once. Catches: the lost wake-up of a registration made
/// outside the lock (deadlock) and a `finish` before the value is moved (a read of
/// an empty packet); the any2any queues hold two parties at once here.
#[test]
fn any2any_two_writers() {
    loom::model(|| {
        let (tx, rx) = any2any::<u32>();
        let tx2 = tx.clone();
        let a = thread::spawn(move || tx.send(1).unwrap());
        let b = thread::spawn(move || tx2.send(2).unwrap());
        let mut got = [rx.recv().unwrap(), rx.recv().unwrap()];
        got.sort();
        assert_eq!(got, [1, 2]);
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// Two readers on an any2any channel, the main thread writing twice: each value is
/// received exactly once. Catches the same bugs with two receivers queued.
#[test]
fn any2any_two_readers() {
    loom::model(|| {
        let (tx, rx) = any2any::<u32>();
        let rx2 = rx.clone();
        let a = thread::spawn(move || rx.recv().unwrap());
        let b = thread::spawn(move || rx2.recv().unwrap());
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        let mut got = [a.join().unwrap(), b.join().unwrap()];
        got.sort();
        assert_eq!(got, [1, 2]);
    });
}

/// A bounded(1) channel: the writer sends twice (the second blocks on the full
/// buffer) and drops its end, which poisons from the writing side. The reader must
/// get both values before it sees poison. Catches: writer-side poison that
/// discards the buffer (only reader-side poison may).
#[test]
fn bounded_writer_poison_drains() {
    loom::model(|| {
        let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.recv(), Ok(2));
        assert_eq!(rx.recv(), Err(RecvError::Poisoned));
        t.join().unwrap();
    });
}

/// A sender blocked on a full bounded(1) buffer whose deadline passes while a
/// reader makes room (the reader's refill claims the blocked sender and moves its
/// value into the buffer). The value is in the channel exactly when the send
/// succeeded. Catches: a refill that moves a blocked sender's value without winning
/// the claim (the timed-out sender gets it back and it is buffered too).
#[test]
fn bounded_timeout_racing_refill() {
    loom::model(|| {
        let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            let r = tx.send_deadline(2, Instant::now());
            (r, tx)
        });
        assert_eq!(rx.recv(), Ok(1));
        let early = rx.recv_deadline(Instant::now()).ok();
        let (r, _tx) = t.join().unwrap();
        let late = rx.try_recv().ok();
        let got: Vec<u32> = early.into_iter().chain(late).collect();
        match r {
            Ok(()) => assert_eq!(got, [2]),
            Err(e) => {
                assert_eq!(e, SendTimeoutError::Timeout(2));
                assert!(got.is_empty(), "timed-out value delivered: {got:?}");
            }
        }
    });
}

/// One guard of the minimal alt below.
enum Guard<'a> {
    Send(&'a RawChan<u32>, u32),
    Recv(&'a RawChan<u32>),
}

impl Guard<'_> {
    fn chan(&self) -> &RawChan<u32> {
        match self {
            Guard::Send(c, _) | Guard::Recv(c) => c,
        }
    }
}

/// A minimal alt over the select handle, written exactly as the `select` module
/// documents it (channels assumed distinct): lock all in address order, try each
/// guard, else register ONE waiter with a token per guard, release, wait, and
/// unregister everywhere. Returns the chosen guard and the value it received, or
/// `None` when the deadline won.
fn alt(guards: &[Guard<'_>], deadline: Option<Instant>) -> Option<(usize, Option<u32>)> {
    let mut order: Vec<usize> = (0..guards.len()).collect();
    order.sort_by_key(|&i| guards[i].chan().addr());
    let mut packets: Vec<Packet<u32>> = guards
        .iter()
        .map(|g| match g {
            Guard::Send(_, v) => Packet::with_value(*v),
            Guard::Recv(_) => Packet::empty(),
        })
        .collect();
    let mut locks: Vec<(usize, SelectLock<'_, u32>)> = order
        .iter()
        .map(|&i| (i, guards[i].chan().lock()))
        .collect();
    for (i, l) in locks.iter_mut() {
        let i = *i;
        match &guards[i] {
            Guard::Send(..) => match l.try_send(&mut packets[i]) {
                Selected::Ready(d) => {
                    drop(locks);
                    // SAFETY: decided with this packet; every lock is released.
                    assert!(unsafe { complete_send(d, &mut packets[i]) });
                    return Some((i, None));
                }
                Selected::Poisoned => panic!("nobody poisons"),
                Selected::NotReady => {}
            },
            Guard::Recv(..) => match l.try_recv(false, &mut packets[i]) {
                Selected::Ready(d) => {
                    drop(locks);
                    // SAFETY: as above.
                    unsafe { complete_recv(d, &mut packets[i]) };
                    return Some((i, packets[i].take()));
                }
                Selected::Poisoned => panic!("nobody poisons"),
                Selected::NotReady => {}
            },
        }
    }
    let w = Waiter::for_current();
    for (i, l) in locks.iter_mut() {
        let e = Entry::new(&w, *i, &packets[*i]);
        // SAFETY: `w` and `packets` outlive the unregistration below.
        unsafe {
            match guards[*i] {
                Guard::Send(..) => l.register_send(e),
                Guard::Recv(..) => l.register_recv(e),
            }
        }
    }
    drop(locks);
    let out = w.wait(deadline);
    for g in guards {
        g.chan().lock().unregister(&w);
    }
    match out {
        Outcome::Done {
            token,
            poisoned: false,
        } => Some((token, packets[token].take())),
        Outcome::Done { poisoned: true, .. } => panic!("nobody poisons"),
        Outcome::Aborted { .. } => None,
    }
}

/// An alt with two input guards (one waiter registered in two channels) racing two
/// timed writers and its own timeout: at most one guard fires, and the writer of
/// the other channel gets its value back (an alt leaves no trace on the guards it did not choose). Checks
/// the select handle's register/claim/unregister protocol. Catches: claiming a
/// registered alt by checking `is_waiting` instead of winning the CAS (both
/// writers win it), an `unregister` that leaves an entry behind (a writer claims a
/// waiter that has gone: loom aborts on the access).
#[test]
fn alt_two_guards_one_waiter() {
    loom::model(|| {
        let (tx1, rx1) = one2one::<u32>();
        let (tx2, rx2) = one2one::<u32>();
        let w1 = thread::spawn(move || (tx1.send_deadline(1, Instant::now()), tx1));
        let w2 = thread::spawn(move || (tx2.send_deadline(2, Instant::now()), tx2));
        let got = alt(
            &[Guard::Recv(rx1.raw()), Guard::Recv(rx2.raw())],
            Some(Instant::now()),
        );
        let (r1, _t1) = w1.join().unwrap();
        let (r2, _t2) = w2.join().unwrap();
        match got {
            Some((0, Some(1))) => {
                assert!(r1.is_ok());
                assert_eq!(r2, Err(SendTimeoutError::Timeout(2)));
            }
            Some((1, Some(2))) => {
                assert!(r2.is_ok());
                assert_eq!(r1, Err(SendTimeoutError::Timeout(1)));
            }
            None => {
                assert_eq!(r1, Err(SendTimeoutError::Timeout(1)));
                assert_eq!(r2, Err(SendTimeoutError::Timeout(2)));
            }
            other => panic!("unexpected {other:?}"),
        }
    });
}

/// Alt-to-alt with output guards, the cyclic case of ProXC++ fig. 5.3: process A
/// alts over (send on c1, receive on c2), process B over (receive on c1, send on
/// c2), neither with a timeout. Exactly one of the two channels communicates and
/// both alts agree which; nobody deadlocks or spins. Catches: an `unregister`
/// that leaves an entry behind (the other alt later touches a waiter that has gone:
/// loom aborts on the access).
#[test]
fn alt_to_alt_output_guards() {
    loom::model(|| {
        let (c1_tx, c1_rx) = any2any::<u32>();
        let (c2_tx, c2_rx) = any2any::<u32>();
        let (a_c1, a_c2) = (c1_tx.clone(), c2_rx.clone());
        let a = thread::spawn(move || {
            let r = alt(
                &[Guard::Send(a_c1.raw(), 10), Guard::Recv(a_c2.raw())],
                None,
            );
            (r, a_c1, a_c2)
        });
        let b = alt(
            &[Guard::Recv(c1_rx.raw()), Guard::Send(c2_tx.raw(), 20)],
            None,
        );
        let (a, _k1, _k2) = a.join().unwrap();
        match (a, b) {
            (Some((0, None)), Some((0, Some(10)))) | (Some((1, Some(20))), Some((1, None))) => {}
            other => panic!("alts disagree: {other:?}"),
        }
    });
}

/// An extended reader refuses the value (`recv_or_refuse`) while the writer's
/// deadline passes and a second writer poisons: whatever the order, the writer's
/// send fails and hands its value back, exactly once (the value is dropped once,
/// by the writer: a double drop or a leak shows in the `Arc`'s count), and the
/// reader never keeps it. Catches: a refusing reader that wakes the writer
/// before it put the value back into the writer's packet (the writer finds its
/// packet empty, or loom reports the race on it); a refusal that finishes the
/// writer's wait as a success (the writer's send returns `Ok` and the value is
/// lost).
#[test]
fn refuse_racing_timeout_and_poison() {
    use std::sync::Arc as StdArc;
    loom::model(|| {
        let token = StdArc::new(());
        let (tx, rx) = any2one::<StdArc<()>>();
        let tx2 = tx.clone();
        let v = token.clone();
        let writer = thread::spawn(move || match tx.send_deadline(v, Instant::now()) {
            Ok(()) => None,
            Err(e) => Some(e.into_inner()),
        });
        let poisoner = thread::spawn(move || tx2.poison());
        let got = rx.recv_or_refuse(|v| Err::<(), _>(crate::chan::Refuse::new(v, "no")));
        assert!(matches!(got, Ok(None) | Err(_)), "{got:?}");
        let back = writer.join().unwrap();
        poisoner.join().unwrap();
        assert!(back.is_some(), "a refused value was lost");
        drop(back);
        assert_eq!(StdArc::strong_count(&token), 1);
    });
}

/// The same with a plain blocking send (the writer cannot time out): the writer
/// registers first or the reader does (the extended hand-off's second phase).
/// Catches the same bugs on the path where the writer waits on its private
/// second-phase waiter (`rendezvous::deliver_extended`).
#[test]
fn refuse_blocking_send() {
    loom::model(|| {
        let (tx, rx) = one2one::<u32>();
        let writer = thread::spawn(move || {
            let r = tx.send(9);
            (r.map_err(|e| e.into_inner()), tx.poison_reason())
        });
        let got = rx.recv_or_refuse(|v| Err::<(), _>(crate::chan::Refuse::new(v, "full")));
        assert_eq!(got, Ok(None));
        let (r, why) = writer.join().unwrap();
        assert_eq!(r, Err(9));
        assert_eq!(why.as_deref(), Some("full"));
    });
}
