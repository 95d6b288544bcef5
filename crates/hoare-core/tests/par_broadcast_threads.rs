//! `Par` with broadcast ends, from plain OS threads: a send to a broadcast and
//! receives from channels in one PAR, where a reader takes the broadcast value
//! only after another communication of the same PAR; deadlines and poison.
//!
//! Shown to fail: with the `Par`'s broadcast send waiting for its takers inside
//! its round (`BcastSendCase::defer` ignored, as a plain alt's send guard does),
//! `a_reader_that_needs_another_branch_first` deadlocks (reported by the
//! watchdog below) and `deadline_withdraws_a_value_not_every_reader_took`
//! never returns (its slow reader never reads).
#![cfg(not(loom))]

use hoare_core::alt::Par;
use hoare_core::chan::{
    broadcast, broadcast_bounded, one2one, Channel, RecvError, RecvTimeoutError, SendTimeoutError,
    TryRecvError,
};
use std::thread;
use std::time::Duration;

/// Runs `f` on a thread and fails (instead of hanging) if it takes too long.
fn watchdog<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = Channel::builder().bounded(1).one2one();
    thread::spawn(move || tx.send(f()).ok());
    rx.recv_timeout(Duration::from_secs(20))
        .expect("deadlocked (or far too slow)")
}

#[test]
fn a_reader_that_needs_another_branch_first() {
    watchdog(|| {
        let (tx, rx) = broadcast::<u32>();
        let rx2 = tx.subscribe();
        let (c_tx, c_rx) = one2one::<u32>();
        // Reader 1 sends on `c` before it takes the broadcast value; reader 2
        // takes it at once.
        let r1 = thread::spawn(move || {
            c_tx.send(10).unwrap();
            rx.recv()
        });
        let r2 = thread::spawn(move || rx2.recv());
        let (mut sent, mut got) = (None, None);
        let mut par = Par::new();
        par.bcast_send(&tx, 7, |r| sent = Some(r));
        par.recv(&c_rx, |r| got = Some(r));
        assert!(par.run());
        assert_eq!(sent, Some(Ok(())));
        assert_eq!(got, Some(Ok(10)));
        assert_eq!(r1.join().unwrap(), Ok(7));
        assert_eq!(r2.join().unwrap(), Ok(7));
    });
}

#[test]
fn deadline_withdraws_a_value_not_every_reader_took() {
    watchdog(|| {
        // The fast reader must be waiting before the deadline; a loaded machine
        // may start its thread late, so a try whose fast reader came too late
        // (it then missed the value too) is made again, with a longer timeout.
        let mut timeout = Duration::from_millis(50);
        loop {
            let (tx, rx) = broadcast::<String>();
            let slow = tx.subscribe(); // never reads during the PAR
            let t = thread::spawn(move || rx.recv());
            let (b_tx, _nobody) = one2one::<u32>();
            let (mut sent, mut other) = (None, None);
            let mut par = Par::new();
            par.bcast_send(&tx, "v".into(), |r| sent = Some(r));
            par.send(&b_tx, 1, |r| other = Some(r));
            assert!(!par.run_timeout(timeout));
            assert_eq!(sent, Some(Err(SendTimeoutError::Timeout("v".to_string()))));
            assert_eq!(other, Some(Err(SendTimeoutError::Timeout(1))));
            assert_eq!(slow.try_recv(), Err(TryRecvError::Empty), "withdrawn");
            drop(tx); // ends a fast reader that came too late
            match t.join().unwrap() {
                // The fast reader keeps it.
                Ok(got) => {
                    assert_eq!(got, "v");
                    break;
                }
                Err(RecvError::Poisoned) if timeout < Duration::from_secs(5) => timeout *= 10,
                Err(e) => panic!("the fast reader got {e:?} (timeout {timeout:?})"),
            }
        }
    });
}

#[test]
fn poison_while_the_par_waits_for_the_takers() {
    watchdog(|| {
        let (tx, rx) = broadcast::<String>();
        let quitter = tx.subscribe();
        let t = thread::spawn(move || {
            let v = rx.recv();
            thread::sleep(Duration::from_millis(10));
            quitter.poison();
            v
        });
        let mut sent = None;
        let mut par = Par::new();
        par.bcast_send(&tx, "p".into(), |r| sent = Some(r));
        assert!(!par.run());
        assert_eq!(sent, Some(Err(SendTimeoutError::Poisoned("p".to_string()))));
        assert_eq!(t.join().unwrap().as_deref(), Ok("p"));
    });
}

#[test]
fn broadcast_receives_and_buffered_sends_in_one_par() {
    watchdog(|| {
        let (a_tx, a_rx) = broadcast::<u32>();
        let (b_tx, b_rx) = broadcast_bounded::<u32>(1);
        let (c_tx, c_rx) = broadcast_bounded::<u32>(1);
        c_tx.send(0).unwrap(); // full: the PAR's send waits for room
        let t = thread::spawn(move || {
            a_tx.send(1).unwrap();
            let v = b_rx.recv().unwrap();
            (v, c_rx.recv().unwrap(), c_rx.recv().unwrap())
        });
        let mut got = None;
        let mut par = Par::new();
        par.bcast_recv(&a_rx, |r| got = Some(r));
        par.bcast_send(&b_tx, 2, |r| r.unwrap());
        par.bcast_send(&c_tx, 3, |r| r.unwrap());
        assert!(par.run());
        assert_eq!(got, Some(Ok(1)));
        assert_eq!(t.join().unwrap(), (2, 0, 3));
        // A broadcast receive that times out.
        let mut r = None;
        let mut par = Par::new();
        par.bcast_recv(&a_rx, |x| r = Some(x));
        assert!(!par.run_timeout(Duration::from_millis(5)));
        // The writer thread has ended (its end dropped): poisoned.
        assert_eq!(r, Some(Err(RecvTimeoutError::Poisoned)));
    });
}
