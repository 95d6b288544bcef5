//! A broadcast writer's `try_send` and timed sends, and a reader's timed
//! receive, from plain OS threads: each fails without effect (or, a rendezvous
//! broadcast's timed send, withdraws a value not every reader took) and hands the
//! value back with the reason.
//!
//! Shown to fail: `try_send` on a rendezvous broadcast without the "every reader
//! is waiting" check (`one_waiting_reader_of_two_does_not_get_a_try_send`: the
//! waiting reader gets 1); a timed send that gives the value back without
//! withdrawing it (`a_timed_out_value_is_withdrawn_from_the_readers_that_had_not_taken_it`:
//! the slow reader receives 1 afterwards).
#![cfg(not(loom))]

use hoare_core::chan::{
    broadcast, broadcast_bounded, broadcast_overwriting, RecvError, RecvTimeoutError,
    SendTimeoutError, TryRecvError, TrySendError,
};
use std::thread;
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Retries `try_send` until it succeeds (the readers are on their way to
/// waiting), giving up after a long time.
fn try_send_until_ok<T: Clone>(tx: &hoare_core::chan::BroadcastSender<T>, mut v: T) {
    let give_up = Instant::now() + Duration::from_secs(20);
    loop {
        match tx.try_send(v) {
            Ok(()) => return,
            Err(TrySendError::Full(back)) => v = back,
            Err(TrySendError::Poisoned(_)) => panic!("poisoned"),
        }
        assert!(Instant::now() < give_up, "the readers never all waited");
        thread::yield_now();
    }
}

#[test]
fn try_send_rendezvous_needs_every_reader_waiting() {
    let (tx, rx) = broadcast::<String>();
    // Nobody waits: nothing happens, the value comes back.
    assert_eq!(tx.try_send("x".into()), Err(TrySendError::Full("x".into())));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    // Three readers waiting: all take it at once.
    let rxs: Vec<_> = (0..2).map(|_| tx.subscribe()).chain([rx]).collect();
    let ts: Vec<_> = rxs
        .into_iter()
        .map(|rx| thread::spawn(move || rx.recv()))
        .collect();
    try_send_until_ok(&tx, "all".to_string());
    for t in ts {
        assert_eq!(t.join().unwrap().as_deref(), Ok("all"));
    }
}

#[test]
fn one_waiting_reader_of_two_does_not_get_a_try_send() {
    let (tx, a) = broadcast::<u32>();
    let b = tx.subscribe();
    let ta = thread::spawn(move || (a.recv(), a));
    thread::sleep(ms(20)); // `a` is (very likely) waiting; `b` is not
    assert_eq!(tx.try_send(1), Err(TrySendError::Full(1)));
    let tb = thread::spawn(move || b.recv());
    // (A time limit, so that the broken variant fails instead of hanging.)
    tx.send_timeout(2, Duration::from_secs(20)).unwrap();
    let (got, _a) = ta.join().unwrap();
    assert_eq!(got, Ok(2), "a try_send that failed reached no reader");
    assert_eq!(tb.join().unwrap(), Ok(2));
}

#[test]
fn try_send_buffered_lossy_and_poisoned() {
    let (tx, rx) = broadcast_bounded::<u32>(2);
    assert_eq!(tx.try_send(1), Ok(()));
    assert_eq!(tx.try_send(2), Ok(()));
    assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
    assert_eq!(rx.len(), 2);
    assert_eq!((rx.recv(), rx.recv()), (Ok(1), Ok(2)));

    let (tx, rx) = broadcast_overwriting::<u32>(1);
    for v in 0..5 {
        assert_eq!(tx.try_send(v), Ok(())); // never full
    }
    assert_eq!(rx.try_recv(), Ok(4));

    let (tx, rx) = broadcast::<u32>();
    rx.poison();
    assert_eq!(tx.try_send(9), Err(TrySendError::Poisoned(9)));
    assert_eq!(
        tx.send_timeout(9, ms(10)),
        Err(SendTimeoutError::Poisoned(9))
    );
}

#[test]
fn timed_send_buffered_times_out_without_effect() {
    let (tx, rx) = broadcast_bounded::<u32>(1);
    tx.send(1).unwrap();
    assert_eq!(tx.send_timeout(2, ms(5)), Err(SendTimeoutError::Timeout(2)));
    assert_eq!(rx.len(), 1);
    assert_eq!(rx.recv(), Ok(1));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    // With room made in time, it completes.
    tx.send(3).unwrap();
    let t = thread::spawn(move || {
        thread::sleep(ms(10));
        (rx.recv(), rx.recv())
    });
    assert_eq!(tx.send_timeout(4, Duration::from_secs(20)), Ok(()));
    assert_eq!(t.join().unwrap(), (Ok(3), Ok(4)));
}

#[test]
fn timed_send_rendezvous_completes_when_all_take_it_in_time() {
    let (tx, rx) = broadcast::<u32>();
    let rxs: Vec<_> = (0..3).map(|_| tx.subscribe()).chain([rx]).collect();
    let ts: Vec<_> = rxs
        .into_iter()
        .enumerate()
        .map(|(i, rx)| {
            thread::spawn(move || {
                thread::sleep(ms(i as u64 * 3));
                rx.recv()
            })
        })
        .collect();
    assert_eq!(
        tx.send_deadline(7, Instant::now() + Duration::from_secs(20)),
        Ok(())
    );
    for t in ts {
        assert_eq!(t.join().unwrap(), Ok(7));
    }
}

#[test]
fn a_timed_out_value_is_withdrawn_from_the_readers_that_had_not_taken_it() {
    // The fast reader must be waiting before the send times out; a loaded
    // machine may start its thread late, so a try whose fast reader came too
    // late (it then missed value 1 too, and gets 2 first) is made again, with
    // a longer timeout.
    let mut timeout = ms(30);
    loop {
        let (tx, fast) = broadcast::<u32>();
        let slow = tx.subscribe();
        let t = thread::spawn(move || (fast.recv(), fast.recv()));
        assert_eq!(
            tx.send_timeout(1, timeout),
            Err(SendTimeoutError::Timeout(1))
        );
        // The slow one never sees it: the next value is its next.
        assert_eq!(slow.try_recv(), Err(TryRecvError::Empty));
        let s = thread::spawn(move || slow.recv());
        tx.send(2).unwrap();
        assert_eq!(s.join().unwrap(), Ok(2));
        drop(tx);
        match t.join().unwrap() {
            // The fast reader took it and keeps it.
            (Ok(1), Ok(2)) => break,
            (Ok(2), Err(RecvError::Poisoned)) if timeout < Duration::from_secs(30) => timeout *= 10,
            got => panic!("the fast reader got {got:?} (timeout {timeout:?})"),
        }
    }
    // Nobody reading at all: withdrawn from everybody.
    let (tx, rx) = broadcast::<u32>();
    assert_eq!(tx.send_timeout(3, ms(5)), Err(SendTimeoutError::Timeout(3)));
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn poison_while_a_timed_send_waits_gives_the_value_back() {
    let (tx, rx) = broadcast::<String>();
    let slow = tx.subscribe();
    let t = thread::spawn(move || {
        let v = rx.recv();
        thread::sleep(ms(10));
        slow.poison(); // from the reading side, while the writer waits for `slow`
        v
    });
    let r = tx.send_timeout("v".into(), Duration::from_secs(20));
    assert_eq!(r, Err(SendTimeoutError::Poisoned("v".into())));
    assert_eq!(t.join().unwrap().as_deref(), Ok("v"));
}

#[test]
fn recv_deadline_and_timeout() {
    let (tx, rx) = broadcast_bounded::<u32>(1);
    let d = Instant::now() + ms(5);
    assert_eq!(rx.recv_deadline(d), Err(RecvTimeoutError::Timeout));
    tx.send(1).unwrap();
    assert_eq!(rx.recv_deadline(Instant::now() + ms(5)), Ok(1));
    let t = thread::spawn(move || rx.recv_deadline(Instant::now() + Duration::from_secs(20)));
    thread::sleep(ms(5));
    tx.send(2).unwrap();
    assert_eq!(t.join().unwrap(), Ok(2));
    drop(tx);
}

// Extended rendezvous on broadcast readers (`recv_with`): shown to fail with the
// reader taking the value outright instead of holding it (`take_held` as
// `take`, and a waiting held reader served as a plain one): the writer is
// released (rendezvous) or finds room (buffered) while the closure runs.

/// Runs `recv` (some form of extended receive whose closure is given) and
/// checks that the rendezvous writer stays blocked while the closure runs.
fn writer_held_while<F>(recv: F)
where
    F: FnOnce(&hoare_core::chan::BroadcastReceiver<u32>, &dyn Fn(u32) -> u32) -> u32,
{
    let (tx, rx) = broadcast::<u32>();
    let other = tx.subscribe();
    let (log_tx, log) = hoare_core::chan::Channel::builder()
        .unbounded()
        .any2one::<&str>();
    let log_w = log_tx.clone();
    let w = thread::spawn(move || {
        tx.send(5).unwrap();
        log_w.send("writer released").unwrap();
    });
    let o = thread::spawn(move || other.recv());
    let check = move |v: u32| {
        // Give the writer every chance to be (wrongly) released.
        assert_eq!(o_done_and(&log), None, "the writer was released early");
        v * 10
    };
    let got = recv(&rx, &check);
    assert_eq!(got, 50);
    w.join().unwrap();
    assert_eq!(o.join().unwrap(), Ok(5));
    drop(log_tx);
}

/// Waits a little, then whether anything was logged.
fn o_done_and(
    log: &hoare_core::chan::Receiver<&'static str, hoare_core::chan::One>,
) -> Option<&'static str> {
    thread::sleep(ms(20));
    log.try_recv().ok()
}

#[test]
fn recv_with_holds_a_rendezvous_writer() {
    writer_held_while(|rx, f| rx.recv_with(f).unwrap());
}

#[test]
fn recv_with_guard_in_alt_macro_holds_the_writer() {
    writer_held_while(|rx, f| {
        hoare_core::alt! {
            recv_with(rx, f) -> r => r.unwrap(),
            after(Duration::from_secs(20)) => panic!("no value"),
        }
    });
}

#[test]
fn recv_with_guard_in_alt_builder_holds_the_writer() {
    writer_held_while(|rx, f| {
        let mut alt = hoare_core::alt::Alt::new();
        alt.bcast_recv_with(rx, |v| v.map(f).unwrap());
        alt.timeout(Duration::from_secs(20), || panic!("no value"));
        alt.select().output
    });
}

#[test]
fn recv_with_keeps_a_buffered_values_place_and_releases_on_panic() {
    let (tx, rx) = broadcast_bounded::<u32>(1);
    tx.send(1).unwrap();
    let r = rx.recv_with(|v| {
        assert_eq!(
            tx.try_send(2),
            Err(TrySendError::Full(2)),
            "its place is held"
        );
        v
    });
    assert_eq!(r, Ok(1));
    assert_eq!(tx.try_send(2), Ok(()), "released");
    // A panicking closure releases too.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rx.recv_with(|_| panic!("boom")).ok();
    }));
    assert!(caught.is_err());
    assert_eq!(tx.try_send(3), Ok(()), "released by the unwinding");
    assert_eq!(rx.try_recv_with(|v| v), Ok(3));
    assert_eq!(rx.try_recv_with(|v| v), Err(TryRecvError::Empty));
    drop(tx);
    assert_eq!(
        rx.recv_with_deadline(Instant::now() + ms(5), |v| v),
        Err(RecvTimeoutError::Poisoned)
    );
}
