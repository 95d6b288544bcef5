//! Networks that several test files and the checker's figures
//! (benches/programs/check.rs, example `check_figures`) all run: the dining
//! philosophers' college, the seated philosophers' deadlock, the retrying
//! client. One copy each, so that the figures are measured on the networks the
//! tests check.
#![allow(dead_code)]

use std::time::Duration;

/// Dining philosophers: `n` philosophers, `n` forks as processes (a pick-up and
/// a put-down channel each), `meals` meals each; with `butler`, a butler
/// seats at most `n - 1` at a time. Each philosopher and fork is a branch of
/// one `par`.
pub fn college(n: usize, meals: usize, butler: bool) {
    let forks: Vec<_> = (0..n)
        .map(|_| (hoare::any2one::<()>(), hoare::any2one::<()>()))
        .collect();
    let (sit_tx, sit_rx) = hoare::any2one::<()>();
    let (leave_tx, leave_rx) = hoare::any2one::<()>();
    let mut fs: Vec<hoare::ParFn<()>> = Vec::new();
    for i in 0..n {
        let (left, right) = seat(&forks, i);
        let (sit, leave) = (sit_tx.clone(), leave_tx.clone());
        fs.push(Box::new(move || {
            for _ in 0..meals {
                if butler {
                    sit.send(()).unwrap();
                }
                left.0.send(()).unwrap();
                right.0.send(()).unwrap();
                // eat
                left.1.send(()).unwrap();
                right.1.send(()).unwrap();
                if butler {
                    leave.send(()).unwrap();
                }
            }
        }));
    }
    drop((sit_tx, leave_tx));
    for (up, down) in forks {
        let (up, down) = (up.1, down.1);
        fs.push(Box::new(move || {
            for _ in 0..2 * meals {
                up.recv().unwrap();
                down.recv().unwrap();
            }
        }));
    }
    if butler {
        fs.push(Box::new(move || {
            let (mut seated, mut served) = (0, 0);
            while served < n * meals {
                hoare::alt! {
                    recv(sit_rx) if seated < n - 1 -> _v => seated += 1,
                    recv(leave_rx) -> _v => { seated -= 1; served += 1; },
                }
            }
        }));
    }
    hoare::par(fs);
}

/// `n` philosophers as branches of one `par`, each picking up its left fork
/// and then waiting at a barrier until all are seated: every execution
/// deadlocks, each philosopher waiting for its right fork (whose ends its boxed
/// closure holds). The forks' channels are named `up{i}` and `down{i}`.
pub fn seated_college(n: usize) {
    use hoare::{Barrier, Channel};
    let forks: Vec<_> = (0..n)
        .map(|i| {
            (
                Channel::builder().name(format!("up{i}")).any2one::<()>(),
                Channel::builder().name(format!("down{i}")).any2one::<()>(),
            )
        })
        .collect();
    let (_seats, mut seated) = Barrier::with_enrolled(n);
    let mut fs: Vec<hoare::ParFn<()>> = Vec::new();
    for i in 0..n {
        let (left, right) = seat(&forks, i);
        let mut seated = seated.pop().expect("an end each");
        fs.push(Box::new(move || {
            left.0.send(()).ok();
            seated.sync();
            right.0.send(()).ok();
            left.1.send(()).ok();
            right.1.send(()).ok();
        }));
    }
    for (up, down) in forks {
        let (up, down) = (up.1, down.1);
        fs.push(Box::new(move || loop {
            if up.recv().is_err() || down.recv().is_err() {
                return;
            }
        }));
    }
    hoare::par(fs);
}

/// A fork's pick-up and put-down channels, each as (sender, receiver).
type Fork<S, R> = ((S, R), (S, R));
/// A philosopher's pick-up and put-down senders of one fork.
type Hold<S> = (S, S);

/// Philosopher `i`'s ends of its left and right forks (each a pick-up and a
/// put-down sender), out of every fork's two channels.
fn seat<S: Clone, R>(forks: &[Fork<S, R>], i: usize) -> (Hold<S>, Hold<S>) {
    let end = |k: usize| (forks[k].0 .0.clone(), forks[k].1 .0.clone());
    (end(i), end((i + 1) % forks.len()))
}

/// A client that retries on a timeout while the server's reply is in flight,
/// `rounds` requests: the server blocks sending the late reply while the
/// client blocks sending its retry (racing time finds it deadlock; quiescent
/// time does not).
pub fn retry(rounds: u32) {
    let (req_tx, req_rx) = hoare::one2one::<u32>();
    let (rep_tx, rep_rx) = hoare::one2one::<u32>();
    let server = hoare::spawn(move || {
        for r in req_rx.iter() {
            if rep_tx.send(r).is_err() {
                break;
            }
        }
    });
    for i in 0..rounds {
        req_tx.send(i).unwrap();
        while rep_rx.recv_timeout(Duration::from_millis(100)).is_err() {
            req_tx.send(i).unwrap();
        }
    }
    drop(req_tx);
    server.join().unwrap();
}
