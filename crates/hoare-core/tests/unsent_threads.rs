//! A value offered in a send guard that was not taken comes back to its owner,
//! whichever way the guard was not taken: disabled by its precondition, another
//! guard chosen, a timeout, a skip, or poison (then in the `SendError`). In the
//! `Alt` builder (`take_unsent`) and in `alt!` (`send_from`), on channels and
//! broadcasts.
//!
//! Shown to fail: the builder's disabled cases with `Alt::send`/`send_for`/
//! `bcast_send` dropping a disabled guard's value (as they did before:
//! `take_unsent` gave `None`); the `send_from` cases with `SendFromCase`'s `Drop`
//! not putting the value back (every "back in the slot" assertion fails).
#![cfg(not(loom))]

use hoare_core::alt;
use hoare_core::alt::Alt;
use hoare_core::chan::{broadcast, broadcast_bounded, one2one, Channel, SendError};
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn builder_gives_back_a_disabled_guards_value() {
    let (tx, _rx) = one2one::<String>();
    let (btx, _brx) = broadcast::<String>();
    let (ready_tx, ready) = Channel::builder().bounded(1).one2one::<u8>();
    ready_tx.send(1).unwrap();
    let mut alt = Alt::new();
    let a = alt.when(false).send(&tx, "a".into(), |_| 0);
    let b = alt
        .when(false)
        .send_for([(&tx, "b0".to_string()), (&tx, "b1".into())], |_, _| 0);
    let c = alt.when(false).bcast_send(&btx, "c".into(), |_| 0);
    alt.recv(&ready, |_| 1);
    assert_eq!(alt.select().output, 1);
    assert_eq!(alt.take_unsent(a, 0).as_deref(), Some("a"));
    assert_eq!(alt.take_unsent(b, 0).as_deref(), Some("b0"));
    assert_eq!(alt.take_unsent(b, 1).as_deref(), Some("b1"));
    assert_eq!(alt.take_unsent(c, 0).as_deref(), Some("c"));
    // Taken once.
    assert_eq!(alt.take_unsent(a, 0), None);
}

#[test]
fn builder_gives_back_when_another_guard_is_chosen() {
    let (tx, _rx) = one2one::<String>();
    let (btx, _brx) = broadcast::<String>(); // empty: its send guard is ready
    let (ready_tx, ready) = Channel::builder().bounded(1).one2one::<u8>();
    ready_tx.send(1).unwrap();
    let mut alt = Alt::new();
    alt.recv(&ready, |_| "ready"); // pri: chosen before the ready broadcast guard
    let a = alt.send(&tx, "a".into(), |_| "a");
    let c = alt.bcast_send(&btx, "c".into(), |_| "c");
    assert_eq!(alt.select().output, "ready");
    assert_eq!(alt.take_unsent(a, 0).as_deref(), Some("a"));
    assert_eq!(alt.take_unsent(c, 0).as_deref(), Some("c"));
}

#[test]
fn builder_gives_back_on_timeout_and_skip() {
    let (tx, _rx) = one2one::<String>();
    let (btx, _brx) = broadcast_bounded::<String>(1);
    btx.send("fills the buffer".into()).unwrap(); // nobody reads: no room
    for way in ["timeout", "skip"] {
        let mut alt = Alt::new();
        let a = alt.send(&tx, "a".into(), |_| "sent");
        let c = alt.bcast_send(&btx, "c".into(), |_| "sent");
        if way == "timeout" {
            alt.timeout(ms(2), || way);
        } else {
            alt.skip(|| way);
        }
        assert_eq!(alt.select().output, way);
        assert_eq!(alt.take_unsent(a, 0).as_deref(), Some("a"));
        assert_eq!(alt.take_unsent(c, 0).as_deref(), Some("c"));
    }
}

#[test]
fn builder_poison_hands_the_value_to_the_handler() {
    let (tx, rx) = one2one::<String>();
    rx.poison();
    let (btx, brx) = broadcast::<String>();
    brx.poison();
    for bcast in [false, true] {
        let mut back = None;
        let mut alt = Alt::new();
        let k = if bcast {
            alt.bcast_send(&btx, "v".into(), |r| back = r.err().map(|SendError(v)| v))
        } else {
            alt.send(&tx, "v".into(), |r| back = r.err().map(|SendError(v)| v))
        };
        alt.select();
        assert!(
            alt.take_unsent(k, 0).is_none(),
            "handed to the handler already"
        );
        drop(alt);
        assert_eq!(back.as_deref(), Some("v"));
    }
}

#[test]
fn send_from_puts_an_unsent_value_back_in_its_slot() {
    let (tx, _rx) = one2one::<String>();
    let (btx, brx) = broadcast::<String>();
    let _second = brx.subscribe();
    let (ready_tx, ready) = Channel::builder().bounded(1).one2one::<u8>();
    let mut a = Some("a".to_string());
    let mut b = Some("b".to_string());

    // Disabled: the slot is not touched.
    ready_tx.send(1).unwrap();
    let got = alt! {
        send_from(tx, &mut a) if false => "a",
        send_from(btx, &mut b) if false => "b",
        recv(ready) => "ready",
    };
    assert_eq!(got, "ready");
    assert_eq!((a.as_deref(), b.as_deref()), (Some("a"), Some("b")));

    // Another guard chosen (the broadcast guard is ready, so it comes after).
    ready_tx.send(1).unwrap();
    let got = alt! {
        recv(ready) => "ready",
        send_from(tx, &mut a) => "a",
        send_from(btx, &mut b) => "b",
    };
    assert_eq!(got, "ready");
    assert_eq!((a.as_deref(), b.as_deref()), (Some("a"), Some("b")));

    // A timeout (and a skip) chosen.
    let got = alt! {
        send_from(tx, &mut a) => "a",
        after(ms(1)) => "timeout",
    };
    assert_eq!(got, "timeout");
    assert_eq!(a.as_deref(), Some("a"));
    let got = alt! {
        send_from(tx, &mut a) => "a",
        skip => "skip",
    };
    assert_eq!(got, "skip");
    assert_eq!(a.as_deref(), Some("a"));

    // An empty slot disables the guard.
    let mut none: Option<String> = None;
    let got = alt! {
        send_from(tx, &mut none) => "sent",
        skip => "skip",
    };
    assert_eq!(got, "skip");
}

#[test]
fn send_from_sent_or_poisoned() {
    let (tx, rx) = Channel::builder().bounded(1).one2one::<String>();
    let mut a = Some("a".to_string());
    let r = alt! {
        send_from(tx, &mut a) -> r => r,
        after(ms(1000)) => panic!("room in the buffer"),
    };
    assert_eq!(r, Ok(()));
    assert_eq!(a, None, "sent: gone from the slot");
    assert_eq!(rx.recv().as_deref(), Ok("a"));

    rx.poison();
    let mut a = Some("p".to_string());
    let r = alt! {
        send_from(tx, &mut a) -> r => r,
        after(ms(1000)) => panic!("poison is ready"),
    };
    assert_eq!(
        r,
        Err(SendError("p".to_string())),
        "poison: back in the error"
    );
    assert_eq!(a, None);

    let (btx, brx) = broadcast::<String>();
    brx.poison();
    let mut b = Some("q".to_string());
    let r = alt! { send_from(btx, &mut b) -> r => r };
    assert_eq!(r, Err(SendError("q".to_string())));
}

#[test]
fn send_from_in_a_loop_delivers_every_value_once() {
    // A producer that offers its pending value while also serving requests: each
    // value is sent exactly once, none lost when the other guard wins.
    let (tx, rx) = one2one::<u32>();
    let (req_tx, req) = one2one::<u32>();
    let reader = std::thread::spawn(move || rx.iter().collect::<Vec<_>>());
    let pinger = std::thread::spawn(move || {
        for i in 0..200 {
            req_tx.send(i).unwrap();
        }
    });
    let mut next = 0;
    let mut pending = None;
    let mut pings = 0;
    while next < 500 || pending.is_some() || pings < 200 {
        if pending.is_none() && next < 500 {
            pending = Some(next);
            next += 1;
        }
        alt! {
            send_from(tx, &mut pending) -> r => r.unwrap(),
            recv(req) if pings < 200 -> v => { v.unwrap(); pings += 1; }
        }
    }
    drop(tx);
    pinger.join().unwrap();
    assert_eq!(reader.join().unwrap(), (0..500).collect::<Vec<_>>());
}
