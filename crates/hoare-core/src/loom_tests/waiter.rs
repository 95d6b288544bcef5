//! Loom models of the waiter protocol (crates/hoare-core/src/waiter.rs). Each test
//! names the bug it catches.

use crate::waiter::{Outcome, Waiter, TIMED_OUT};
use loom::sync::Arc;
use loom::thread;
use std::time::Instant;

/// A claim racing the waiting party's own abort: exactly one wins, and a claimer's
/// outcome is reported only after its `finish`. Catches: a claim that is not a
/// compare-and-swap out of WAITING (both win), an abort that returns before the
/// claimer's finish.
#[test]
fn claim_races_self_abort() {
    loom::model(|| {
        let w = Arc::new(Waiter::for_current());
        let w2 = w.clone();
        let t = thread::spawn(move || {
            if w2.try_claim(3) {
                // SAFETY: we claimed it; the Arc keeps it alive.
                unsafe { Waiter::finish(&*w2, false) };
                true
            } else {
                false
            }
        });
        let r = w.try_abort(TIMED_OUT);
        let claimed = t.join().unwrap();
        match r {
            Ok(()) => assert!(!claimed),
            Err(Outcome::Done {
                token: 3,
                poisoned: false,
            }) => assert!(claimed),
            Err(o) => panic!("unexpected {o:?}"),
        }
    });
}

/// A wait whose deadline passes while another party wakes it: exactly one wins.
/// Catches: a timed-out wait that does not abort through the commit word (both
/// the waker and the timeout win), a lost or extra unpark.
#[test]
fn timeout_races_wake() {
    loom::model(|| {
        let w = Arc::new(Waiter::for_current());
        let w2 = w.clone();
        // SAFETY: the Arc keeps the waiter alive.
        let t = thread::spawn(move || unsafe { Waiter::try_wake(&*w2, 1, false) });
        let out = w.wait(Some(Instant::now()));
        let woke = t.join().unwrap();
        match out {
            Outcome::Aborted { token } => {
                assert_eq!(token, TIMED_OUT);
                assert!(!woke);
            }
            Outcome::Done { token, .. } => {
                assert_eq!(token, 1);
                assert!(woke);
            }
        }
    });
}

/// Two wakers race: exactly one wins, and the waiter reports the winner's token.
/// Catches: a wake that is not a compare-and-swap (two winners, two unparks).
#[test]
fn one_of_two_wakes_wins() {
    loom::model(|| {
        let w = Arc::new(Waiter::for_current());
        let (a, b) = (w.clone(), w.clone());
        // SAFETY: the Arc keeps the waiter alive.
        let ta = thread::spawn(move || unsafe { Waiter::try_wake(&*a, 1, false) });
        // SAFETY: as above.
        let tb = thread::spawn(move || unsafe { Waiter::try_wake(&*b, 2, true) });
        let out = w.wait(None);
        let (wa, wb) = (ta.join().unwrap(), tb.join().unwrap());
        assert!(wa ^ wb, "winners: {wa} {wb}");
        let want = if wa {
            Outcome::Done {
                token: 1,
                poisoned: false,
            }
        } else {
            Outcome::Done {
                token: 2,
                poisoned: true,
            }
        };
        assert_eq!(out, want);
    });
}
