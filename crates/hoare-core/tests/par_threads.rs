//! Parallel communication (`Par`, `par_send`, `par_recv`) from plain OS threads:
//! partners in any order, poison of one branch, deadlines.
#![cfg(not(loom))]

use hoare_core::alt::{par_recv, par_send, Par};
use hoare_core::chan::{one2one, Channel, RecvError, RecvTimeoutError, SendTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The readers take their values in the reverse order of the sends: a sequence
/// of sends would wait for ever (the readers time out and the test fails); a PAR
/// completes.
#[test]
fn par_send_completes_whatever_order_the_readers_take() {
    for round in 0..20 {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..6).map(|_| one2one::<u32>()).unzip();
        let t = thread::spawn(move || {
            let order: Vec<usize> = if round % 2 == 0 {
                (0..6).rev().collect()
            } else {
                vec![3, 0, 5, 1, 4, 2]
            };
            let mut got = [0; 6];
            for i in order {
                got[i] = rxs[i]
                    .recv_timeout(ms(2000))
                    .expect("the writer never came");
            }
            got
        });
        let r = par_send(txs.iter().zip((0..6).map(|i| i * 10)));
        assert!(r.iter().all(|r| r.is_ok()));
        assert_eq!(t.join().unwrap(), [0, 10, 20, 30, 40, 50]);
    }
}

/// Sends and receives in one PAR against a partner that does them in the
/// opposite order (it sends only after it has received): both complete.
#[test]
fn mixed_sends_and_receives() {
    let (a_tx, a_rx) = one2one::<u32>();
    let (b_tx, b_rx) = one2one::<u32>();
    let (c_tx, c_rx) = Channel::builder().bounded(1).one2one::<u32>();
    let t = thread::spawn(move || {
        let x = b_rx.recv_timeout(ms(2000)).unwrap();
        a_tx.send(x + 1).unwrap();
        c_rx.recv().unwrap() + x
    });
    let (mut got, mut ok) = (None, false);
    let mut par = Par::new();
    par.recv(&a_rx, |r| got = r.ok());
    par.send(&b_tx, 41, |r| ok = r.is_ok());
    par.send(&c_tx, 100, |r| r.unwrap());
    assert_eq!(par.len(), 3);
    assert!(par.run());
    assert_eq!((got, ok), (Some(42), true));
    assert_eq!(t.join().unwrap(), 141);
}

/// Poison on one channel ends that branch (its value comes back); the others
/// still complete.
#[test]
fn poison_ends_one_branch_the_others_complete() {
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(|_| one2one::<String>()).unzip();
    let mut rxs = rxs.into_iter();
    let (r0, r1, r2) = (
        rxs.next().unwrap(),
        rxs.next().unwrap(),
        rxs.next().unwrap(),
    );
    let t = thread::spawn(move || {
        drop(r1); // poisons channel 1 from the reading side
        thread::sleep(ms(20));
        (r2.recv().unwrap(), r0.recv().unwrap())
    });
    let r = par_send(txs.iter().zip(["a", "b", "c"].map(String::from)));
    assert_eq!(r[0], Ok(()));
    assert_eq!(r[1].clone().unwrap_err().into_inner(), "b");
    assert_eq!(r[2], Ok(()));
    assert_eq!(t.join().unwrap(), ("c".to_string(), "a".to_string()));

    let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(|_| one2one::<u32>()).unzip();
    let mut txs = txs.into_iter();
    let (t0, t1, t2) = (
        txs.next().unwrap(),
        txs.next().unwrap(),
        txs.next().unwrap(),
    );
    let t = thread::spawn(move || {
        t1.poison();
        thread::sleep(ms(20));
        t2.send(2).unwrap();
        t0.send(0).unwrap();
    });
    assert_eq!(par_recv(&rxs), [Ok(0), Err(RecvError::Poisoned), Ok(2)]);
    t.join().unwrap();
}

/// A deadline withdraws what has not completed (values come back); what
/// completed stays completed, and ready partners are served first.
#[test]
fn deadline_withdraws_the_rest() {
    // The reader must be waiting before the deadline; a loaded machine may
    // start its thread late, so a try whose reader came too late (its value
    // came back) is made again, with a longer timeout.
    let mut timeout = ms(50);
    loop {
        let (tx, rx) = one2one::<u32>();
        let (lazy_tx, _lazy) = one2one::<u32>();
        let (_in_tx, in_rx) = one2one::<u32>();
        let t = thread::spawn(move || rx.recv());
        let (mut sent, mut back, mut inp) = (None, None, None);
        let mut par = Par::new();
        par.send(&tx, 1, |r| sent = Some(r.is_ok()));
        par.send(&lazy_tx, 2, |r| back = r.err());
        par.recv(&in_rx, |r| inp = r.err());
        let t0 = Instant::now();
        assert!(!par.run_timeout(timeout));
        assert!(t0.elapsed() >= timeout - ms(10));
        assert_eq!(back, Some(SendTimeoutError::Timeout(2)));
        assert_eq!(inp, Some(RecvTimeoutError::Timeout));
        drop(tx); // ends a reader that came too late
        match (sent, t.join().unwrap()) {
            (Some(true), Ok(1)) => break,
            (Some(false), Err(RecvError::Poisoned)) if timeout < Duration::from_secs(5) => {
                timeout *= 10
            }
            got => panic!("sent, received: {got:?} (timeout {timeout:?})"),
        }
    }
    // A deadline already past still serves ready partners.
    let (btx, brx) = Channel::builder().bounded(1).one2one::<u32>();
    let mut ok = false;
    let mut par = Par::new();
    par.send(&btx, 5, |r| ok = r.is_ok());
    assert!(par.run_deadline(Instant::now() - ms(1)));
    assert!(ok);
    assert_eq!(brx.recv(), Ok(5));
    assert!(Par::new().run(), "an empty PAR completes at once");
}
