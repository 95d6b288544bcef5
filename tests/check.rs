//! The checking runtime (`hoare::check`), built with `--features check`.
#![cfg(feature = "check")]

use hoare::check::{Builder, ReportKind};

fn pair(k: u32) {
    let (tx, rx) = hoare::one2one::<u32>();
    hoare::par2(
        move || {
            for i in 0..k {
                tx.send(i).unwrap();
            }
        },
        move || {
            for i in 0..k {
                assert_eq!(rx.recv(), Ok(i));
            }
        },
    );
}

#[test]
fn pair_explores_two_executions_for_any_k() {
    for k in 1..=5 {
        let s = Builder::new().exhaustive().run(|| pair(k));
        eprintln!("k={k}: {s:?}");
        assert!(s.complete());
    }
}

#[test]
fn lone_receiver_is_a_deadlock() {
    let r = Builder::new()
        .try_run(|| {
            let (_tx, rx) = hoare::one2one::<u32>();
            let _ = rx.recv();
        })
        .unwrap_err();
    eprintln!("{r}");
    assert_eq!(r.kind(), ReportKind::Deadlock);
}
