//! Loom models of alternation. Each test names the bug it catches; each was
//! checked to fail with that bug put into the engine (crates/hoare-core/src/alt).

use crate::alt;
use crate::alt::Alt;
use crate::chan::{one2one, SendTimeoutError};
use crate::timer::Timer;
use loom::thread;
use std::time::Instant;

/// A timeout that is never expired when the alt starts (so the alt registers and
/// waits) and whose deadline is "now" (so under loom the wait times out unless a
/// wake-up is already pending): the timeout races the writers for the alt.
struct Racing;

impl Timer for Racing {
    fn deadline(&mut self) -> Instant {
        Instant::now()
    }
    fn fired(&mut self) {}
    fn expired(&self) -> bool {
        false
    }
}

// Each writer thread hands its end back through `join`: dropping it would poison
// the channel while the alt may still be looking at it.

/// What a writer saw: `Some(v)` is the value it got back (not sent).
fn writer_outcome(r: Result<(), SendTimeoutError<u32>>) -> Option<u32> {
    match r {
        Ok(()) => None,
        Err(SendTimeoutError::Timeout(v)) => Some(v),
        Err(SendTimeoutError::Poisoned(_)) => panic!("no one poisons here"),
    }
}

/// Two channels and a timeout race to wake one alt: exactly one wins. The alt's
/// result agrees with the writers': the writer whose guard was chosen delivered its
/// value, the other one (and both, on a timeout) got its own value back intact.
///
/// Catches: deciding the timeout outside the alt's one commit point (the alt parks
/// with `park_until` and, when that times out, reports the timeout without winning
/// the waiter's CAS, so a writer that claimed the waiter meanwhile delivers a value
/// the alt never reports: a writer sees `Ok` for an alt that says "timeout").
/// Checked by making `engine::wait` wait that way: loom fails this test with
/// `(Some(1), None)` against `(Some(1), Some(2))`.
#[test]
fn two_channels_and_timeout_race() {
    loom::model(|| {
        let (tx1, rx1) = one2one::<u32>();
        let (tx2, rx2) = one2one::<u32>();
        let w1 = thread::spawn(move || (writer_outcome(tx1.send_deadline(1, Instant::now())), tx1));
        let w2 = thread::spawn(move || (writer_outcome(tx2.send_deadline(2, Instant::now())), tx2));
        let got = alt! {
            recv(rx1) -> v => Some(v.unwrap()),
            recv(rx2) -> v => Some(v.unwrap()),
            after(Racing) => None,
        };
        let (back1, _tx1) = w1.join().unwrap();
        let (back2, _tx2) = w2.join().unwrap();
        match got {
            Some(1) => assert_eq!((back1, back2), (None, Some(2))),
            Some(2) => assert_eq!((back1, back2), (Some(1), None)),
            None => assert_eq!((back1, back2), (Some(1), Some(2))),
            other => panic!("alt got {other:?}"),
        }
    });
}

/// The alt-to-alt cycle (ProXC++ Fig. 5.3): two parties, each alting on the send
/// end of one channel and the receive end of the other. Exactly one communication
/// happens, and neither party blocks for ever.
///
/// Catches: releasing the channels' locks between the locked try and the register
/// phase (both alts try, find nothing, then both register: a lost wake-up, and
/// loom reports the deadlock). Checked by unlocking after the try and relocking to
/// register in `engine::wait`: loom reports "deadlock".
#[test]
fn alt_to_alt_cycle() {
    loom::model(|| {
        let (a_tx, a_rx) = one2one::<u32>();
        let (b_tx, b_rx) = one2one::<u32>();
        let t = thread::spawn(move || {
            alt! {
                send(a_tx, 1) -> r => { r.unwrap(); 'S' },
                recv(b_rx) -> v => { assert_eq!(v, Ok(2)); 'R' },
            }
        });
        let mine = alt! {
            recv(a_rx) -> v => { assert_eq!(v, Ok(1)); 'R' },
            send(b_tx, 2) -> r => { r.unwrap(); 'S' },
        };
        let theirs = t.join().unwrap();
        assert_ne!(mine, theirs, "exactly one communication");
    });
}

/// A guard whose precondition is false is never chosen, even when its writer is
/// ready first; its writer keeps its value. The builder form, with a timeout.
///
/// Catches: a disabled guard that is tried or registered anyway (the first writer's
/// value is taken and guard 0 reported). Checked by making `Alt::when` ignore
/// `false`: loom fails with "a disabled guard was chosen".
#[test]
fn precondition_false_never_chosen() {
    loom::model(|| {
        let (tx1, rx1) = one2one::<u32>();
        let (tx2, rx2) = one2one::<u32>();
        let w1 = thread::spawn(move || (writer_outcome(tx1.send_deadline(1, Instant::now())), tx1));
        let w2 = thread::spawn(move || (writer_outcome(tx2.send_deadline(2, Instant::now())), tx2));
        let mut alt = Alt::new();
        alt.when(false).recv(&rx1, |v| Some(v.unwrap()));
        alt.recv(&rx2, |v| Some(v.unwrap()));
        alt.timeout(Racing, || None);
        let fired = alt.select();
        let (back1, _tx1) = w1.join().unwrap();
        let (back2, _tx2) = w2.join().unwrap();
        assert_ne!(fired.guard, 0, "a disabled guard was chosen");
        assert_eq!(back1, Some(1), "the disabled guard's writer lost its value");
        match fired.output {
            Some(v) => {
                assert_eq!(v, 2);
                assert_eq!(back2, None);
            }
            None => assert_eq!(back2, Some(2)),
        }
    });
}

/// Alting barrier: barrier completion racing a channel claim and timeouts.
/// Three ends enrolled: A (main) alts on the barrier, a receive and a timeout; B
/// alts on the barrier, a send to A and a timeout; the third end is resigned by a
/// third thread, which completes the barrier if A and B are both offering then (or
/// lets the last of them complete it). The barrier is chosen by both or by neither;
/// the channel by both or by neither.
///
/// Catches: a completer that finds a stale offer and gives up without rolling back
/// the claims it already made (A stays claimed for ever: loom reports the
/// deadlock). Checked by removing the `unclaim_locked` loop from
/// `Inner::try_complete` in `alt/barrier.rs`: loom reports "deadlock".
///
/// Not reachable within 2 preemptions: a flagged waiter's timeout abort (or a
/// channel claim) that skips the global alting lock and so observes a claim that is
/// later rolled back. With `LOOM_MAX_PREEMPTIONS=3` loom does reach it (removing
/// the lock from `Waiter::try_abort_quiet` gives "deadlock"), but loom 0.7 then also
/// fails on the correct code: its `Thread::set_unparked` makes a thread that is
/// blocked on a *mutex* runnable when it is unparked (here: A, blocked on the
/// alting lock in its abort, is finished by B's send), which trips loom's own
/// "expected to be able to acquire lock" assertion. So this model runs with 2.
#[test]
fn alting_barrier_completion_racing_channel_claim() {
    use crate::alt::AltingBarrier;
    loom::model(|| {
        let (_bar, mut ends) = AltingBarrier::with_enrolled(3);
        let third = ends.pop().unwrap();
        let mut eb = ends.pop().unwrap();
        let mut ea = ends.pop().unwrap();
        let (tx, rx) = one2one::<u32>();
        let b = thread::spawn(move || {
            let r = alt! {
                barrier(&mut eb) => 'B',
                send(tx, 5) -> r => { r.unwrap(); 'C' },
                after(Racing) => 'T',
            };
            (r, eb, tx)
        });
        let r = thread::spawn(move || drop(third));
        let a = alt! {
            barrier(&mut ea) => 'B',
            recv(rx) -> v => { assert_eq!(v, Ok(5)); 'C' },
            after(Racing) => 'T',
        };
        let (b, _eb, _tx) = b.join().unwrap();
        r.join().unwrap();
        assert_eq!(a == 'B', b == 'B', "a chose {a}, b chose {b}");
        assert_eq!(a == 'C', b == 'C', "a chose {a}, b chose {b}");
    });
}

/// A `RecvAny` reused across waits: the entries of its last wait stay in the
/// channels' queues (pointing to its heap waiter, no longer waiting) until its next
/// wait re-arms that waiter under every channel's lock. The reader selects three
/// times over two buffered channels A and B (capacity 1); one writer sends 1
/// and 2 on A, then 10 on B. Every value arrives exactly once, A's in order.
///
/// Catches: re-arming the waiter before every channel is locked. The first alt
/// waits and is woken through A, leaving its entry on B; if the second alt re-arms
/// first, the writer's send on B claims it through that stale entry and hands 10 to
/// B's packet while the alt takes 2 from A's buffer: 10 is lost (and the pending
/// unpark ends the third wait before anyone committed it); before that, the
/// overwrite of the waiter races the writer's claim on it. Checked by calling
/// `Plan::rearm` before the locks are taken in `engine::wait`: loom fails with
/// "Causality violation: Concurrent load and mut accesses".
///
/// Both threads park through a [`ModelParker`](super::ModelParker): with the
/// core's `ThreadParker`, loom 0.7 fails this model on correct code (see there).
#[test]
fn recv_any_stale_entries_across_waits() {
    use crate::alt::RecvAny;
    use crate::chan::Channel;
    loom::model(|| {
        // A is the channel at the lower address, so the lock order (by address)
        // is the same in every execution (the allocator does not promise that the
        // first channel made gets the lower one; loom needs a deterministic model).
        let c1 = Channel::builder().bounded(1).one2one::<u32>();
        let c2 = Channel::builder().bounded(1).one2one::<u32>();
        let ((ta, ra), (tb, rb)) = if c1.1.raw().addr() < c2.1.raw().addr() {
            (c1, c2)
        } else {
            (c2, c1)
        };
        let w = thread::spawn(move || {
            super::as_process(false, || {
                ta.send(1).unwrap();
                ta.send(2).unwrap();
                tb.send(10).unwrap();
            });
            (ta, tb)
        });
        let rxs = [ra, rb];
        let got = super::as_process(false, || {
            let mut set = RecvAny::new(&rxs);
            let mut got = Vec::new();
            for _ in 0..3 {
                let (i, v) = set.select();
                got.push((i, v.unwrap()));
            }
            got
        });
        let _ends = w.join().unwrap();
        let from_a: Vec<u32> = got.iter().filter(|g| g.0 == 0).map(|g| g.1).collect();
        let from_b: Vec<u32> = got.iter().filter(|g| g.0 == 1).map(|g| g.1).collect();
        assert_eq!((from_a, from_b), (vec![1, 2], vec![10]), "got {got:?}");
    });
}
