//! Alternation on plain OS threads: the macro and the builder, every guard kind,
//! policies, alt-to-alt, poison, timers.
#![cfg(not(loom))]

use hoare_core::alt::{Alt, Fair};
use hoare_core::chan::{
    any2any, any2one, one2any, one2one, Channel, Receiver, RecvError, SendError, Sender,
};
use hoare_core::timer::{Date, Egg, Repeat};
use hoare_core::{alt, fair_alt, pri_alt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn recv_ready_buffered() {
    let (tx, rx) = Channel::builder().bounded(2).one2one::<u32>();
    let (_tx2, rx2) = one2one::<u32>();
    tx.send(3).unwrap();
    let got = alt! {
        recv(rx2) -> v => (2, v),
        recv(rx) -> v => (1, v),
    };
    assert_eq!(got, (1, Ok(3)));
}

#[test]
fn recv_waits_for_writer_thread() {
    let (tx, rx) = one2one::<u32>();
    let (_tx2, rx2) = one2one::<u32>();
    let t = thread::spawn(move || {
        thread::sleep(ms(20));
        tx.send(9).unwrap();
    });
    let got = alt! {
        recv(rx2) -> v => (2, v),
        recv(rx) -> v => (1, v),
    };
    assert_eq!(got, (1, Ok(9)));
    t.join().unwrap();
}

#[test]
fn send_guard_to_waiting_reader() {
    let (tx, rx) = one2one::<u32>();
    let (tx2, _rx2) = one2one::<u32>();
    let t = thread::spawn(move || rx.recv());
    let r = alt! {
        send(tx2, 1) -> r => (2, r.is_ok()),
        send(tx, 7) -> r => (1, r.is_ok()),
    };
    assert_eq!(r, (1, true));
    assert_eq!(t.join().unwrap(), Ok(7));
}

#[test]
fn timeout_fires_and_writers_untouched() {
    let (tx, rx) = one2one::<u32>();
    let t0 = Instant::now();
    let r = alt! {
        recv(rx) -> v => v.ok(),
        after(ms(20)) => None,
    };
    assert_eq!(r, None);
    assert!(t0.elapsed() >= ms(20));
    // The alt left no entry behind: a later send finds no receiver.
    assert!(tx.try_send(1).is_err());
}

#[test]
fn skip_only_when_nothing_ready() {
    let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
    let r = alt! {
        skip => 0,
        recv(rx) -> _v => 1,
    };
    assert_eq!(r, 0);
    tx.send(1).unwrap();
    let r = alt! {
        skip => 0,
        recv(rx) -> v => v.unwrap(),
    };
    assert_eq!(r, 1);
}

#[test]
fn preconditions() {
    let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
    tx.send(1).unwrap();
    let never = false;
    let r = alt! {
        recv(rx) if never -> _v => 1,
        skip => 0,
    };
    assert_eq!(r, 0);
    let r = alt! {
        recv(rx) if !never && 1 + 1 == 2 -> v => v.unwrap(),
        skip if never => 0,
    };
    assert_eq!(r, 1);
    // A disabled send guard does not even evaluate its value.
    let mut evaluated = false;
    let (tx2, _rx2) = Channel::builder().bounded(1).one2one::<u32>();
    let r = alt! {
        send(tx2, { evaluated = true; 5 }) if never => 1,
        skip => 0,
    };
    assert_eq!(r, 0);
    assert!(!evaluated);
}

#[test]
#[should_panic(expected = "no enabled guard")]
fn no_enabled_guard_panics() {
    let (_tx, rx) = one2one::<u32>();
    alt! {
        recv(rx) if false => (),
    }
}

#[test]
fn poisoned_recv_and_send() {
    let (tx, rx) = one2one::<u32>();
    tx.poison();
    let r = alt! { recv(rx) -> v => v };
    assert_eq!(r, Err(RecvError::Poisoned));
    let r = alt! { send(tx, 8) -> r => r };
    assert_eq!(r.unwrap_err().into_inner(), 8);
}

#[test]
fn poison_wakes_waiting_alt_and_gives_value_back() {
    let (tx, rx) = one2one::<String>();
    let (_tx2, rx2) = one2one::<u32>();
    let t = thread::spawn(move || {
        thread::sleep(ms(20));
        rx.poison();
    });
    let r = alt! {
        recv(rx2) -> _v => None,
        send(tx, "hello".to_string()) -> r => Some(r),
    };
    let e: SendError<String> = r.unwrap().unwrap_err();
    assert_eq!(e.into_inner(), "hello");
    t.join().unwrap();
}

#[test]
fn body_control_flow() {
    let (tx, rx) = Channel::builder().bounded(4).one2one::<u32>();
    for i in 0..4 {
        tx.send(i).unwrap();
    }
    drop(tx);
    fn sum(rx: &Receiver<u32>) -> Result<u32, RecvError> {
        let mut s = 0;
        loop {
            alt! {
                recv(rx) -> v => {
                    let v = v?;
                    if v == 2 {
                        continue;
                    }
                    s += v;
                    if s == 4 {
                        return Ok(s);
                    }
                }
            }
        }
    }
    assert_eq!(sum(&rx), Ok(4));
    assert_eq!(sum(&rx), Err(RecvError::Poisoned));
    let mut n = 0;
    let (tx, rx) = Channel::builder().bounded(4).one2one::<u32>();
    tx.send(1).unwrap();
    loop {
        pri_alt! {
            recv(rx) -> _v => n += 1,
            skip => break,
        }
    }
    assert_eq!(n, 1);
}

#[test]
fn fair_serves_all_ready_guards() {
    let chans: Vec<_> = (0..4)
        .map(|_| Channel::builder().unbounded().one2one::<usize>())
        .collect();
    for (i, (tx, _)) in chans.iter().enumerate() {
        for _ in 0..100 {
            tx.send(i).unwrap();
        }
    }
    let [a, b, c, d] = [&chans[0].1, &chans[1].1, &chans[2].1, &chans[3].1];
    let mut fair = Fair::new();
    let mut counts = [0; 4];
    for _ in 0..200 {
        let i = fair_alt! { fair;
            recv(a) -> v => v.unwrap(),
            recv(b) -> v => v.unwrap(),
            recv(c) -> v => v.unwrap(),
            recv(d) -> v => v.unwrap(),
        };
        counts[i] += 1;
    }
    assert_eq!(counts, [50; 4]);
    // pri would serve only the first.
    let mut counts = [0; 4];
    for _ in 0..40 {
        let i = alt! {
            recv(a) -> v => v.unwrap(),
            recv(b) -> v => v.unwrap(),
            recv(c) -> v => v.unwrap(),
            recv(d) -> v => v.unwrap(),
        };
        counts[i] += 1;
    }
    assert_eq!(counts, [40, 0, 0, 0]);
}

/// Several writer threads, each sending for ever into its own buffered channel,
/// which it filled before the reader starts: every guard is ready at every alt,
/// and a fair reader serves them in strict rotation (a pri one would serve only
/// the first).
#[test]
fn fair_under_sustained_load() {
    const W: usize = 4;
    const ALTS: usize = 4000;
    let stop = Arc::new(AtomicUsize::new(0));
    let filled = Arc::new(std::sync::Barrier::new(W + 1));
    let mut rxs = Vec::new();
    let mut ts = Vec::new();
    for i in 0..W {
        let (tx, rx) = Channel::builder().bounded(ALTS / W + 1).one2one::<usize>();
        rxs.push(rx);
        let (stop, filled) = (stop.clone(), filled.clone());
        ts.push(thread::spawn(move || {
            for _ in 0..=ALTS / W {
                tx.send(i).unwrap();
            }
            filled.wait();
            while stop.load(Ordering::Relaxed) == 0 {
                if tx.send_timeout(i, ms(10)).is_err() && tx.is_poisoned() {
                    break;
                }
            }
        }));
    }
    filled.wait();
    let mut fair = Fair::new();
    let mut counts = [0usize; W];
    for _ in 0..ALTS {
        let mut alt = Alt::new();
        alt.recv_for(rxs.iter(), |i, v| (i, v.unwrap()));
        let f = alt.select_fair(&mut fair);
        assert_eq!(f.output.0, f.output.1);
        counts[f.element] += 1;
    }
    stop.store(1, Ordering::Relaxed);
    drop(rxs);
    for t in ts {
        t.join().unwrap();
    }
    assert_eq!(counts, [ALTS / W; W], "a ready guard was passed over");
}

/// Alt-to-alt: each of two threads alts on the send end of one channel and the
/// receive end of the other (ProXC++ Fig. 5.3). Exactly one communication per
/// round; never a deadlock.
#[test]
fn alt_to_alt_cycle() {
    for _ in 0..200 {
        let (a_tx, a_rx) = one2one::<u32>();
        let (b_tx, b_rx) = one2one::<u32>();
        let t = thread::spawn(move || {
            alt! {
                send(a_tx, 1) -> r => { r.unwrap(); "sent" },
                recv(b_rx) -> v => { assert_eq!(v, Ok(2)); "received" },
            }
        });
        let mine = alt! {
            send(b_tx, 2) -> r => { r.unwrap(); "sent" },
            recv(a_rx) -> v => { assert_eq!(v, Ok(1)); "received" },
        };
        let theirs = t.join().unwrap();
        assert_ne!(mine, theirs);
    }
}

/// Both ends of one channel in one alt, and alt-to-alt on shared ends: four
/// threads each alt on sending to and receiving from one any2any channel until
/// `TARGET` communications happened. Every communication pairs one send guard
/// with one receive guard of another thread.
#[test]
fn both_ends_in_alts_any2any() {
    const TARGET: usize = 4000;
    let (tx, rx) = any2any::<u32>();
    let sent = Arc::new(AtomicUsize::new(0));
    let recvd = Arc::new(AtomicUsize::new(0));
    let ts: Vec<_> = (0..4)
        .map(|k| {
            let (tx, rx) = (tx.clone(), rx.clone());
            let (sent, recvd) = (sent.clone(), recvd.clone());
            thread::spawn(move || {
                let mut i = 0usize;
                while sent.load(Ordering::Relaxed) < TARGET {
                    i += 1;
                    let send_first = (i + k).is_multiple_of(2);
                    alt! {
                        send(tx, 1) if send_first => { sent.fetch_add(1, Ordering::Relaxed); },
                        recv(rx) -> v => { v.unwrap(); recvd.fetch_add(1, Ordering::Relaxed); },
                        send(tx, 1) if !send_first => { sent.fetch_add(1, Ordering::Relaxed); },
                        after(ms(20)) => {},
                    }
                }
            })
        })
        .collect();
    for t in ts {
        t.join().unwrap();
    }
    assert!(sent.load(Ordering::Relaxed) >= TARGET);
    assert_eq!(sent.load(Ordering::Relaxed), recvd.load(Ordering::Relaxed));
}

/// Every sharing kind and buffering.
#[test]
fn every_kind_and_buffering() {
    fn run<SS: hoare_core::chan::Sharing, RS: hoare_core::chan::Sharing>(
        tx: Sender<u64, SS>,
        rx: Receiver<u64, RS>,
    ) {
        let (_other_tx, other) = one2one::<u64>();
        let t = thread::spawn(move || {
            for i in 0..200 {
                let (ptx, _prx) = one2one::<u64>();
                alt! {
                    send(tx, i) -> r => r.unwrap(),
                    send(ptx, 0) if false => unreachable!(),
                }
            }
        });
        let mut sum = 0;
        for _ in 0..200 {
            sum += alt! {
                recv(other) -> _v => unreachable!(),
                recv(rx) -> v => v.unwrap(),
                after(Duration::from_secs(10)) => panic!("timed out"),
            };
        }
        assert_eq!(sum, 199 * 200 / 2);
        t.join().unwrap();
    }
    for buf in [
        hoare_core::chan::Buffer::Rendezvous,
        hoare_core::chan::Buffer::Bounded(3),
        hoare_core::chan::Buffer::Unbounded,
    ] {
        let (tx, rx) = Channel::builder().buffer(buf).one2one();
        run(tx, rx);
        let (tx, rx) = Channel::builder().buffer(buf).any2one();
        run(tx, rx);
        let (tx, rx) = Channel::builder().buffer(buf).one2any();
        run(tx, rx);
        let (tx, rx) = Channel::builder().buffer(buf).any2any();
        run(tx, rx);
    }
    let (tx, rx) = any2one();
    run(tx, rx);
    let (tx, rx) = one2any();
    run(tx, rx);
}

#[test]
fn timers_egg_repeat_date() {
    let (_tx, rx) = one2one::<u32>();
    // Egg restarts on every alt.
    let mut egg = Egg::new(ms(5));
    for _ in 0..3 {
        let t0 = Instant::now();
        alt! { recv(rx) => (), after(&mut egg) => () }
        assert!(t0.elapsed() >= ms(5));
    }
    // Repeat advances once per firing, on a fixed grid.
    let t0 = Instant::now();
    let mut tick = Repeat::starting_at(t0, ms(10));
    let mut fired = 0;
    for _ in 0..3 {
        alt! { recv(rx) => (), after(&mut tick) => fired += 1 }
    }
    assert_eq!(fired, 3);
    assert_eq!(tick.next_tick(), t0 + ms(40));
    // A Repeat that is not chosen does not advance.
    let (tx2, rx2) = Channel::builder().bounded(1).one2one::<u32>();
    tx2.send(1).unwrap();
    alt! { recv(rx2) => (), after(&mut tick) => panic!("tick chose") }
    assert_eq!(tick.next_tick(), t0 + ms(40));
    // Date stays expired.
    let mut date = Date::after(ms(2));
    alt! { recv(rx) => (), after(&mut date) => () }
    assert!(date.expired());
    let deadline = date.deadline();
    // Ready at once: an alt takes `skip` only when no other guard is ready (a
    // wall-clock bound here failed on loaded machines).
    let r = alt! { recv(rx) => 0, after(&mut date) => 1, skip => 2 };
    assert_eq!(r, 1);
    assert_eq!(date.deadline(), deadline);
    // An expired date in front of a ready guard wins under pri.
    tx2.send(1).unwrap();
    let r = alt! { after(&mut date) => 0, recv(rx2) => 1 };
    assert_eq!(r, 0);
    // The earliest of two timeouts fires.
    let r = alt! { recv(rx) => 0, after(Duration::from_secs(60)) => 1, after(ms(5)) => 2 };
    assert_eq!(r, 2);
}

#[test]
fn builder_mixed_and_unsent() {
    let (a_tx, a_rx) = one2one::<String>();
    let (b_tx, b_rx) = Channel::builder().bounded(1).one2one::<u32>();
    b_tx.send(4).unwrap();
    #[derive(Debug, PartialEq)]
    enum Ev {
        Sent,
        Got(u32),
        Timeout,
    }
    let mut alt = Alt::new();
    let key = alt.send(&a_tx, "kept".to_string(), |r| {
        r.unwrap();
        Ev::Sent
    });
    alt.recv(&b_rx, |v| Ev::Got(v.unwrap()));
    alt.timeout(ms(100), || Ev::Timeout);
    let f = alt.select();
    assert_eq!((f.guard, f.output), (1, Ev::Got(4)));
    assert_eq!(alt.take_unsent(key, 0).as_deref(), Some("kept"));
    assert_eq!(alt.take_unsent(key, 0), None);
    drop(a_rx);

    // send_for over a slice, with one reader waiting.
    let chans: Vec<_> = (0..5).map(|_| one2one::<usize>()).collect();
    let (txs, rxs): (Vec<_>, Vec<_>) = chans.into_iter().unzip();
    let mut rxs = rxs;
    let r3 = rxs.remove(3);
    let t = thread::spawn(move || r3.recv());
    let mut alt = Alt::new();
    let key = alt.send_for(txs.iter().enumerate().map(|(i, t)| (t, i * 10)), |i, r| {
        r.unwrap();
        i
    });
    let f = alt.select();
    assert_eq!((f.guard, f.element, f.output), (0, 3, 3));
    assert_eq!(t.join().unwrap(), Ok(30));
    assert_eq!(alt.take_unsent(key, 3), None);
    assert_eq!(alt.take_unsent(key, 1), Some(10));
    drop(rxs);

    // when(): a disabled guard
    let (c_tx, c_rx) = Channel::builder().bounded(1).one2one::<u32>();
    c_tx.send(1).unwrap();
    let mut alt = Alt::new();
    alt.when(false).recv(&c_rx, |_| 0).skip(|| 1);
    assert_eq!(alt.select().output, 1);
}

#[test]
fn many_channels_builder() {
    // More than the stack buffer of the engine.
    let chans: Vec<_> = (0..100).map(|_| one2one::<usize>()).collect();
    let (txs, rxs): (Vec<_>, Vec<_>) = chans.into_iter().unzip();
    let t = thread::spawn(move || {
        for (i, tx) in txs.iter().enumerate().rev() {
            tx.send(i).unwrap();
        }
    });
    let mut seen = [false; 100];
    for _ in 0..100 {
        let mut alt = Alt::new();
        alt.recv_for(rxs.iter(), |i, v| {
            assert_eq!(v, Ok(i));
            i
        });
        seen[alt.select().output] = true;
    }
    assert!(seen.iter().all(|&s| s));
    t.join().unwrap();
}

#[test]
fn same_channel_twice_in_one_alt() {
    let (tx, rx) = any2one::<u32>();
    let tx2 = tx.clone();
    let t = thread::spawn(move || {
        thread::sleep(ms(10));
        tx2.send(5).unwrap()
    });
    let r = alt! {
        recv(rx) if false => 0,
        send(tx, 1) if false => 0,
        recv(rx) -> v => v.unwrap(),
        recv(rx) -> v => v.unwrap() + 100,
    };
    assert_eq!(r, 5);
    t.join().unwrap();
}

#[test]
fn hundred_thousand_timeouts_threads() {
    let (_tx, rx) = one2one::<u32>();
    let mut n = 0;
    for _ in 0..20_000 {
        alt! {
            recv(rx) => (),
            after(Duration::from_nanos(1)) => n += 1,
        }
    }
    assert_eq!(n, 20_000);
}

/// A writer-poisoned buffered channel: the alt drains the buffer first, then
/// reports the poison; an overwriting channel's send guard is always ready.
#[test]
fn buffered_poison_order_and_overwriting() {
    let (tx, rx) = Channel::builder().bounded(4).one2one::<u32>();
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    tx.poison();
    let mut got = Vec::new();
    loop {
        alt! {
            recv(rx) -> v => match v {
                Ok(v) => got.push(v),
                Err(RecvError::Poisoned) => break,
            },
        }
    }
    assert_eq!(got, [1, 2]);

    let (otx, orx) = Channel::builder().overwriting(1).one2one::<u32>();
    let (_ptx, prx) = one2one::<u32>();
    for i in 0..3 {
        alt! {
            recv(prx) => unreachable!(),
            send(otx, i) -> r => r.unwrap(),
        }
    }
    assert_eq!(orx.try_recv(), Ok(2));
}

/// An alt's send guard matched by an extended-rendezvous reader: the alt is
/// released only when the reader's closure returns.
#[test]
fn send_guard_with_extended_reader() {
    let (tx, rx) = one2one::<u32>();
    let done = Arc::new(AtomicUsize::new(0));
    let d2 = done.clone();
    let t = thread::spawn(move || {
        rx.recv_with(|v| {
            thread::sleep(ms(20));
            d2.store(1, Ordering::SeqCst);
            v
        })
    });
    let (_otx, orx) = one2one::<u32>();
    alt! {
        recv(orx) => unreachable!(),
        send(tx, 11) -> r => r.unwrap(),
    }
    assert_eq!(
        done.load(Ordering::SeqCst),
        1,
        "released before the closure ended"
    );
    assert_eq!(t.join().unwrap(), Ok(11));
}

/// Merges writer threads that stop (and poison) at different times, in both
/// forms of the idiom that drops a done channel's guard; every value arrives once
/// and the loop ends after the last channel is done (a guard left on a done
/// channel would be chosen for ever and the loop would never end).
#[test]
fn alt_loops_drop_guards_of_done_channels() {
    for builder in [false, true] {
        for buffered in [false, true] {
            let mk = || {
                if buffered {
                    Channel::builder().bounded(3).one2one::<u64>()
                } else {
                    one2one::<u64>()
                }
            };
            let (chans, writers): (Vec<_>, Vec<_>) = (0..3u64)
                .map(|k| {
                    let (tx, rx) = mk();
                    let t = thread::spawn(move || {
                        for i in 0..(50 * (k + 1)) {
                            tx.send(k * 1000 + i).unwrap();
                        }
                        // Dropping `tx` poisons from the writing side.
                    });
                    (rx, t)
                })
                .unzip();
            let (a, b, c) = (&chans[0], &chans[1], &chans[2]);
            let (mut got, mut poisons, mut rounds) = (Vec::new(), 0, 0);
            loop {
                rounds += 1;
                assert!(rounds < 100_000, "the alt loop never ended");
                let r = if builder {
                    let mut alt = Alt::new();
                    alt.recv_open(a, |v| v.ok());
                    alt.recv_open(b, |v| v.ok());
                    alt.recv_open(c, |v| v.ok());
                    match alt.try_select() {
                        Some(f) => f.output,
                        None => break,
                    }
                } else {
                    alt! {
                        recv(a) if a.is_open() -> v => v.ok(),
                        recv(b) if b.is_open() -> v => v.ok(),
                        recv(c) if c.is_open() -> v => v.ok(),
                        skip if !a.is_open() && !b.is_open() && !c.is_open() => break,
                    }
                };
                match r {
                    Some(v) => got.push(v),
                    None => poisons += 1,
                }
            }
            writers.into_iter().for_each(|t| t.join().unwrap());
            got.sort();
            let want: Vec<u64> = (0..3u64)
                .flat_map(|k| (0..50 * (k + 1)).map(move |i| k * 1000 + i))
                .collect();
            assert_eq!(got, want);
            assert!(poisons <= 3, "a done channel's guard was offered again");
            assert!(chans.iter().all(|rx| !rx.is_open()));
        }
    }
}

#[test]
fn try_select_without_enabled_guards_is_none() {
    let (tx, rx) = one2one::<u8>();
    let mut alt: Alt<'_, u8> = Alt::new();
    alt.when(false).recv(&rx, |_| 1);
    assert!(alt.try_select().is_none());
    drop(tx);
    let mut alt: Alt<'_, u8> = Alt::new();
    alt.recv_open(&rx, |_| 1);
    assert!(
        alt.try_select().is_none(),
        "a done channel's guard is dropped"
    );
    let mut fair = Fair::new();
    let mut alt: Alt<'_, u8> = Alt::new();
    alt.recv(&rx, |r| r.map_or(2, |_| 3));
    assert_eq!(alt.try_select_fair(&mut fair).map(|f| f.output), Some(2));
}

/// `recv_with` guards (macro and builder): the closure runs with the writer still
/// held, on the fast path (writer first) and the passive one (the alt waits
/// first), on rendezvous and bounded channels; poison and panics release it.
#[test]
fn extended_rendezvous_after_an_alt_choice() {
    for writer_first in [true, false] {
        for builder in [false, true] {
            let (tx, rx) = one2one::<u32>();
            let released = Arc::new(AtomicUsize::new(0));
            let r2 = released.clone();
            let w = thread::spawn(move || {
                tx.send(5).unwrap();
                r2.store(1, Ordering::SeqCst);
            });
            if writer_first {
                thread::sleep(ms(20));
            }
            let held = |v: u32| {
                thread::sleep(ms(20));
                // The writer is still blocked in its send.
                assert_eq!(
                    released.load(Ordering::SeqCst),
                    0,
                    "the writer was released early"
                );
                v * 2
            };
            let got = if builder {
                let mut alt = Alt::new();
                alt.recv_with(&rx, |r| r.map(held));
                alt.timeout(ms(5000), || Err(RecvError::Poisoned));
                alt.select().output
            } else {
                alt! {
                    recv_with(rx, held) -> r => r,
                    after(ms(5000)) => Err(RecvError::Poisoned),
                }
            };
            assert_eq!(got, Ok(10));
            w.join().unwrap();
            assert_eq!(released.load(Ordering::SeqCst), 1);
        }
    }

    // Bounded: the item keeps its place while the closure runs.
    let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
    tx.send(1).unwrap();
    let got = alt! {
        recv_with(rx, |v| (v, tx.try_send(2).is_err())) -> r => r,
        skip => panic!("the item is there"),
    };
    assert_eq!(got, Ok((1, true)));
    tx.try_send(2).unwrap(); // the place is free again

    // Poison: the closure does not run.
    let (tx, rx) = one2one::<u32>();
    tx.poison();
    let got: Result<u32, _> = alt! { recv_with(rx, |_v| panic!("no value")) -> r => r };
    assert_eq!(got, Err(RecvError::Poisoned));

    // A closure that panics releases the writer.
    let (tx, rx) = one2one::<u32>();
    let w = thread::spawn(move || tx.send(3));
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        alt! { recv_with(rx, |_v| panic!("boom")) -> _r => () }
    }));
    assert!(p.is_err());
    assert!(
        w.join().unwrap().is_ok(),
        "the writer stays released with success"
    );

    // Not chosen: nothing taken.
    let (tx, rx) = Channel::builder().bounded(1).one2one::<u32>();
    let got = alt! {
        skip => 0,
        recv_with(rx, |v| v) -> _r => 1,
    };
    assert_eq!(got, 0);
    tx.send(9).unwrap();
    assert_eq!(rx.recv(), Ok(9));
}
