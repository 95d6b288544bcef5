//! The dining philosophers' college, the network the checker's tests
//! (tests/check.rs) and figures (benches/programs/check.rs, example
//! `check_figures`) both explore: one copy, so that the figures are measured
//! on the network the tests check.
#![allow(dead_code)]

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
        let left = (forks[i].0 .0.clone(), forks[i].1 .0.clone());
        let right = (
            forks[(i + 1) % n].0 .0.clone(),
            forks[(i + 1) % n].1 .0.clone(),
        );
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
        let left = (forks[i].0 .0.clone(), forks[i].1 .0.clone());
        let right = (
            forks[(i + 1) % n].0 .0.clone(),
            forks[(i + 1) % n].1 .0.clone(),
        );
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
