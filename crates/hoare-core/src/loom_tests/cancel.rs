//! Loom models of cancellation: a party the runtime is unwinding at shutdown
//! (`Park::cancelled`) must not block, and its wait must end exactly once even when
//! a partner commits it at the same moment. Each test names the bug it catches;
//! each was checked to fail with that bug put into the code.

use crate::alt::RecvAny;
use crate::chan::{one2one, Channel, RecvError, TrySendError};
use loom::thread;

/// Runs `f` as a cancelled party.
fn cancelled<R>(f: impl FnOnce() -> R) -> R {
    super::as_process(true, f)
}

/// A cancelled receiver registers its exclusive entry, is refused its park, and
/// takes the entry back while a sender may claim it (with a plain store: exclusive
/// entries are claimed without a compare-and-swap). Exactly one of the two
/// happened: the value arrived, or the send failed with it.
/// Catches: `RawChan::cancel_exclusive` aborting the wait without checking that
/// the entry was still there (the receiver reports a failure for a value the
/// sender saw delivered: a lost value).
#[test]
fn cancelled_recv_racing_a_send() {
    loom::model(|| {
        let (tx, rx) = one2one::<u32>();
        // The sender is kept alive: dropping it would poison the channel.
        let t = thread::spawn(move || (tx.try_send(5), tx));
        let got = cancelled(|| rx.recv());
        let (sent, _tx) = t.join().unwrap();
        match (got, sent) {
            (Ok(5), Ok(())) => {}
            (Err(RecvError::Poisoned), Err(TrySendError::Full(5))) => {}
            other => panic!("value lost or duplicated: {other:?}"),
        }
    });
}

/// A cancelled alt over two channels, one of which a sender tries at the same
/// moment: the alt's single waiter is aborted with `CANCELLED` or claimed by the
/// sender, never both. Catches: a cancelled alt that reports poison on its first
/// guard though a partner committed another guard (a lost value).
#[test]
fn cancelled_alt_racing_a_send() {
    loom::model(|| {
        let (_tx1, rx1) = Channel::builder().one2one::<u32>();
        let (tx2, rx2) = one2one::<u32>();
        let t = thread::spawn(move || (tx2.try_send(9), tx2));
        let got = cancelled(|| {
            crate::alt! {
                recv(rx1) -> v => (1, v),
                recv(rx2) -> v => (2, v),
            }
        });
        let (sent, _tx) = t.join().unwrap();
        match (got, sent) {
            ((2, Ok(9)), Ok(())) => {}
            ((1, Err(RecvError::Poisoned)), Err(TrySendError::Full(9))) => {}
            other => panic!("value lost or duplicated: {other:?}"),
        }
    });
}

/// The same for a `RecvAny`, whose waiter lives on the heap and whose entries
/// stay in the queues after a wait: a cancelled wait aborts the waiter, making
/// them inert. Catches: an abort that does not check for a concurrent claim.
#[test]
fn cancelled_recv_any_racing_a_send() {
    loom::model(|| {
        let (_tx1, rx1) = one2one::<u32>();
        let (tx2, rx2) = one2one::<u32>();
        let t = thread::spawn(move || (tx2.try_send(4), tx2));
        let rxs = [rx1, rx2];
        let got = cancelled(|| {
            let mut set = RecvAny::new(&rxs);
            set.select()
        });
        let (sent, _tx) = t.join().unwrap();
        match (got, sent) {
            ((1, Ok(4)), Ok(())) => {}
            ((0, Err(RecvError::Poisoned)), Err(TrySendError::Full(4))) => {}
            other => panic!("value lost or duplicated: {other:?}"),
        }
    });
}
