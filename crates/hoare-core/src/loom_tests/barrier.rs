//! Loom models of the two-tier barrier (crates/hoare-core/src/barrier.rs).
//!
//! Under loom the barrier has two worker groups plus the plain-thread group; the
//! models put parties in groups with `park::set_worker_index`, so the per-group tier
//! and the global tier are both exercised. Loom reports a deadlock when a party is
//! left blocked ("nobody left behind"); the assertions check that nobody is released
//! early.

use crate::barrier::Barrier;
use crate::park::set_worker_index;
use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;

/// Two parties on different workers, one round: neither is released before both have
/// arrived, and neither is left behind.
///
/// Catches (checked by breaking the code): a group leader that decrements the global
/// count before swapping out and filing its group's waiters: the completer takes the
/// filed chunks before that group's, so its parties are never woken (deadlock).
#[test]
fn two_parties_sync() {
    loom::model(|| {
        set_worker_index(0);
        let (_b, mut ends) = Barrier::with_enrolled(2);
        let mut other = ends.pop().unwrap();
        let mut mine = ends.pop().unwrap();
        let arrived = Arc::new(AtomicUsize::new(0));
        let a2 = arrived.clone();
        let t = loom::thread::spawn(move || {
            set_worker_index(1);
            a2.fetch_add(1, SeqCst);
            other.sync(); // moves home to group 1 first
            assert_eq!(
                a2.load(SeqCst),
                2,
                "released before the other party arrived"
            );
        });
        arrived.fetch_add(1, SeqCst);
        mine.sync();
        assert_eq!(
            arrived.load(SeqCst),
            2,
            "released before the other party arrived"
        );
        t.join().unwrap();
    });
}

/// A third end is enrolled (into the group of an already-syncing party) while the
/// round is under way. If the enroll returned before a party arrived, that party must
/// not be released before the new end has synced.
///
/// Catches (checked by breaking the code): an enroll that puts its group back into the
/// global count only when the group was empty, forgetting the case where the group's
/// leader had already passed the group's part on: the round completes without the
/// new end ("released before the end enrolled earlier synced").
#[test]
fn enroll_races_sync() {
    loom::model(|| {
        set_worker_index(0);
        let (b, mut ends) = Barrier::with_enrolled(1);
        let mut a = ends.pop().unwrap();
        set_worker_index(1);
        let mut bb = b.enroll();
        set_worker_index(0);
        let c_enrolled = Arc::new(AtomicBool::new(false));
        let c_arrived = Arc::new(AtomicBool::new(false));

        let (ce, ca) = (c_enrolled.clone(), c_arrived.clone());
        let b2 = b.clone();
        let tc = loom::thread::spawn(move || {
            set_worker_index(0);
            let mut c = b2.enroll();
            ce.store(true, SeqCst);
            ca.store(true, SeqCst);
            c.sync();
        });
        let (ce, ca) = (c_enrolled.clone(), c_arrived.clone());
        let tb = loom::thread::spawn(move || {
            set_worker_index(1);
            let seen = ce.load(SeqCst);
            bb.sync();
            if seen {
                assert!(
                    ca.load(SeqCst),
                    "B released before the end enrolled earlier synced"
                );
            }
            drop(bb); // resign, so a late C is not left waiting for B
        });
        let seen = c_enrolled.load(SeqCst);
        a.sync();
        if seen {
            assert!(
                c_arrived.load(SeqCst),
                "A released before the end enrolled earlier synced"
            );
        }
        drop(a);
        tb.join().unwrap();
        tc.join().unwrap();
    });
}

/// Three ends; one resigns while the other two sync. The resigning end is alone in
/// its group with one of the syncing parties, so when it resigns last it is that
/// group's leader: it must hand the group's blocked party on and, if it was the last
/// one awaited, complete the round.
///
/// Catches (checked by breaking the code): a resign that decrements its group's count
/// but, when that was the last end the group awaited, does not pass the group's part
/// on (file the blocked waiters, decrement the global count, complete the round):
/// the other parties are left behind (deadlock).
#[test]
fn resign_races_sync() {
    loom::model(|| {
        set_worker_index(0);
        let mut a = Barrier::with_enrolled(1).1.pop().unwrap();
        let b = a.barrier();
        set_worker_index(1);
        let mut bb = b.enroll();
        let c = b.enroll();
        set_worker_index(0);
        let arrived = Arc::new(AtomicUsize::new(0));
        let a2 = arrived.clone();
        let tb = loom::thread::spawn(move || {
            set_worker_index(1);
            a2.fetch_add(1, SeqCst);
            bb.sync();
            assert_eq!(a2.load(SeqCst), 2);
        });
        let tc = loom::thread::spawn(move || {
            c.resign();
        });
        arrived.fetch_add(1, SeqCst);
        a.sync();
        assert_eq!(arrived.load(SeqCst), 2);
        tb.join().unwrap();
        tc.join().unwrap();
    });
}

/// Two parties, two consecutive rounds; the second party moves from worker 1 to
/// worker 0 between the rounds. Nobody is released from round k before both arrived
/// in round k, so no arrival of round 2 is counted in round 1.
///
/// Catches (both checked by breaking the code): a completer that wakes the parties
/// before resetting the counts (a released party's round-2 arrival lands on the
/// round-1 counts, which the reset then overwrites: a party is left behind, deadlock),
/// and a move between groups that leaves the old group before joining the new one
/// (round 2 completes mid-move without the moving party: "released early").
#[test]
fn two_rounds() {
    loom::model(|| {
        set_worker_index(0);
        let (_b, mut ends) = Barrier::with_enrolled(2);
        let mut other = ends.pop().unwrap();
        let mut mine = ends.pop().unwrap();
        let rounds = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let r2 = rounds.clone();
        let t = loom::thread::spawn(move || {
            set_worker_index(1);
            for k in 0..2 {
                r2[k].fetch_add(1, SeqCst);
                other.sync();
                assert_eq!(r2[k].load(SeqCst), 2, "released early from round {k}");
                set_worker_index(0);
            }
        });
        for k in 0..2 {
            rounds[k].fetch_add(1, SeqCst);
            mine.sync();
            assert_eq!(rounds[k].load(SeqCst), 2, "released early from round {k}");
        }
        t.join().unwrap();
    });
}
