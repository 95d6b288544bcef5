//! The checking runtime on the dining philosophers (run with
//! `cargo run --features check --example check_college`).
//!
//! Five philosophers who each pick up their left fork, then their right, can
//! deadlock: the checker finds the interleaving in a few milliseconds and prints
//! what every process waits on, the wait-for cycle, the trace and the schedule
//! that replays it. With a butler who seats at most four of them at a time the
//! college cannot deadlock: the checker explores every interleaving of two
//! philosophers exhaustively, and samples five with random and PCT search.

use hoare::check::Builder;
use hoare::{any2one, Channel};

/// The college: `n` philosophers, `n` forks (processes with a pick-up and a
/// put-down channel each), `meals` meals each, and, with `butler`, a butler.
fn college(n: usize, meals: usize, butler: bool) {
    let forks: Vec<_> = (0..n)
        .map(|i| {
            let up = Channel::builder()
                .name(format!("fork{i}.up"))
                .any2one::<()>();
            let down = Channel::builder()
                .name(format!("fork{i}.down"))
                .any2one::<()>();
            (up, down)
        })
        .collect();
    let (sit_tx, sit_rx) = any2one::<()>();
    let (leave_tx, leave_rx) = any2one::<()>();
    let mut body: Vec<hoare::ParFn<()>> = Vec::new();
    for i in 0..n {
        let (lu, ld) = (forks[i].0 .0.clone(), forks[i].1 .0.clone());
        let (ru, rd) = (
            forks[(i + 1) % n].0 .0.clone(),
            forks[(i + 1) % n].1 .0.clone(),
        );
        let (sit, leave) = (sit_tx.clone(), leave_tx.clone());
        body.push(Box::new(move || {
            for _ in 0..meals {
                if butler {
                    sit.send(()).unwrap();
                }
                lu.send(()).unwrap(); // pick up the left fork
                ru.send(()).unwrap(); // and the right one
                ld.send(()).unwrap(); // eat, put them down
                rd.send(()).unwrap();
                if butler {
                    leave.send(()).unwrap();
                }
            }
        }));
    }
    drop((sit_tx, leave_tx));
    for (up, down) in forks {
        let (up, down) = (up.1, down.1);
        body.push(Box::new(move || {
            for _ in 0..2 * meals {
                up.recv().unwrap();
                down.recv().unwrap();
            }
        }));
    }
    if butler {
        body.push(Box::new(move || {
            let (mut seated, mut served) = (0, 0);
            while served < n * meals {
                hoare::alt! {
                    recv(sit_rx) if seated < n - 1 -> _v => seated += 1,
                    recv(leave_rx) -> _v => { seated -= 1; served += 1; },
                }
            }
        }));
    }
    hoare::par(body);
}

fn main() {
    let report = Builder::new()
        .random(10_000)
        .seed(1)
        .try_run(|| college(5, 1, false))
        .expect_err("five philosophers without a butler can deadlock");
    println!("{report}\n");

    let s = Builder::new().exhaustive().run(|| college(2, 1, true));
    assert!(s.complete());
    println!(
        "the college of 2 philosophers with a butler: every interleaving explored \
         ({} executions in {:.2?})",
        s.executions(),
        s.elapsed()
    );
    let s = Builder::new().pct(3, 2_000).run(|| college(5, 1, true));
    println!(
        "the college of 5 with a butler: {} PCT executions, no failure",
        s.executions()
    );
}
