//! Large values through channels (issue 17 §2): how many copies of a value each
//! send/receive path keeps on the stack, and that a 32 KiB value (and one at the
//! documented limit, 32 KiB: see `DEFAULT_STACK_SIZE`) goes through every flavour
//! and operation in processes with the default stack.
//!
//! The limits hold for optimised builds (the suite runs with `--release`); a debug
//! build copies values many times more, so these tests are ignored there.

mod stack_probe;

use hoare::chan::{
    Buffer, Channel, Receiver, RecvTimeoutError, SendError, SendTimeoutError, Sender, TryRecvError,
    TrySendError,
};
use hoare::core::alt::recv_any;
use hoare::{alt, Alt, Builder, Runtime};
use std::time::{Duration, Instant};

const BIG: usize = 32 * 1024;
type Big = [u8; BIG];

fn rt1() -> Runtime {
    Runtime::builder().workers(1).build()
}

/// Spawns `f` as a peer process with a stack large enough for anything.
fn peer<F: FnOnce() + Send + 'static>(f: F) -> hoare::JoinHandle<()> {
    Builder::new().stack_size(4 << 20).spawn(f)
}

/// Stack bytes each path reached, for values made by `make`, in a 1-worker runtime
/// (so the order of the processes is fixed).
fn depths<T: Send + 'static>(make: fn() -> T) -> Vec<(String, usize)> {
    const PAINT: usize = 3 << 20;
    rt1().run(move || {
        Builder::new()
            .stack_size(4 << 20)
            .spawn(move || {
                let mut out = Vec::new();
                for (flavour, buffer) in [
                    ("zero", Buffer::Rendezvous),
                    ("bounded", Buffer::Bounded(1)),
                    ("overwriting", Buffer::Overwriting(1)),
                    ("unbounded", Buffer::Unbounded),
                ] {
                    // A receive, the value there already (`ready`: a sender waits, or
                    // an item is buffered) or arriving later.
                    let mut recv = |name: &str, ready: bool, op: &dyn Fn(&Receiver<T>) -> bool| {
                        let (tx, rx) = Channel::builder().buffer(buffer).one2one::<T>();
                        let h = peer(move || {
                            let _ = tx.send(make());
                        });
                        if ready {
                            hoare::yield_now();
                        }
                        let (d, ok) = stack_probe::depth(PAINT, || op(&rx));
                        assert!(ok, "{name} {flavour}");
                        out.push((format!("{name} {flavour}"), d));
                        h.join().unwrap();
                    };
                    for ready in [true, false] {
                        let r = if ready { "ready" } else { "block" };
                        recv(&format!("recv/{r}"), ready, &|rx| used(rx.recv()));
                        recv(&format!("recv_timeout/{r}"), ready, &|rx| {
                            used(rx.recv_timeout(Duration::from_secs(5)))
                        });
                        recv(&format!("recv_with/{r}"), ready, &|rx| {
                            used(rx.recv_with(|v| drop(std::hint::black_box(v))))
                        });
                        recv(&format!("alt recv/{r}"), ready, &|rx| {
                            alt! { recv(rx) -> v => used(v) }
                        });
                    }
                    recv("try_recv", true, &|rx| used(rx.try_recv()));
                    recv("Alt recv", true, &|rx| {
                        let mut a = Alt::new();
                        a.recv(rx, used);
                        a.select().output
                    });
                    recv("recv_any", true, &|rx| {
                        used(recv_any(std::slice::from_ref(rx)).1)
                    });
                    // A send, the receiver waiting (or the buffer having room), or,
                    // `block`, the receiver coming later to a rendezvous or a full
                    // bounded buffer.
                    let mut send = |name: &str, ready: bool, op: &dyn Fn(&Sender<T>) -> bool| {
                        let (tx, rx) = Channel::builder().buffer(buffer).one2one::<T>();
                        if !ready && flavour == "bounded" {
                            tx.send(make()).unwrap();
                        }
                        let h = peer(move || while rx.recv().is_ok() {});
                        if ready {
                            hoare::yield_now();
                        }
                        let (d, ok) = stack_probe::depth(PAINT, || op(&tx));
                        assert!(ok, "{name} {flavour}");
                        out.push((format!("{name} {flavour}"), d));
                        drop(tx);
                        h.join().unwrap();
                    };
                    for ready in [true, false] {
                        if !ready && !matches!(flavour, "zero" | "bounded") {
                            continue;
                        }
                        let r = if ready { "ready" } else { "block" };
                        send(&format!("send/{r}"), ready, &|tx| tx.send(make()).is_ok());
                        send(&format!("send_timeout/{r}"), ready, &|tx| {
                            tx.send_timeout(make(), Duration::from_secs(5)).is_ok()
                        });
                        send(&format!("alt send/{r}"), ready, &|tx| {
                            alt! { send(tx, make()) -> r => r.is_ok() }
                        });
                    }
                    send("try_send", true, &|tx| tx.try_send(make()).is_ok());
                    send("Alt send", true, &|tx| {
                        let mut a = Alt::new();
                        a.send(tx, make(), |r| r.is_ok());
                        a.select().output
                    });
                }
                out
            })
            .join()
            .unwrap()
    })
}

/// Whether `r` is `Ok`, with the whole of `r` kept in memory (as a caller that uses
/// the value would).
#[inline(always)]
fn used<T, E>(r: Result<T, E>) -> bool {
    std::hint::black_box(&r);
    r.is_ok()
}

fn big() -> Big {
    [7; BIG]
}

fn small() -> u64 {
    7
}

/// How many copies of a 32 KiB value each path keeps on the stack: the depth with
/// a 32 KiB value minus the depth with a `u64`, in units of 32 KiB. The caller's
/// own copy (the value it sends, the result it receives) counts: a send or a
/// receive keeps one more, an alt's or `recv_any`'s receive two more (the guard's
/// packet). Before issue 17 they kept 6 to 9.
#[test]
#[cfg_attr(debug_assertions, ignore = "counts copies in optimised code")]
fn copies_on_the_stack_per_path() {
    let b = depths(big);
    let s = depths(small);
    let mut worst = 0.0f64;
    let mut over = Vec::new();
    for ((name, db), (_, ds)) in b.iter().zip(&s) {
        let copies = (*db as f64 - *ds as f64) / BIG as f64;
        println!("{name:30} {db:7} B with 32 KiB, {ds:5} B with u64: {copies:.2} copies");
        worst = worst.max(copies);
        let most = if name.starts_with("alt recv") || name.starts_with("recv_any") {
            3.0
        } else {
            2.0
        };
        if copies > most + 0.25 {
            over.push(format!("{name}: {copies:.2} copies (at most {most})"));
        }
    }
    println!("worst: {worst:.2} copies");
    assert!(
        over.is_empty(),
        "paths that copy a large value too often: {over:#?}"
    );
}

// ---------------------------------------------------------------- every operation

/// How one side of a communication is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Plain,
    Try,
    Timeout,
    Deadline,
    /// `recv_with` (the sender sends plainly).
    With,
    Alt,
    AltBuilder,
    /// `recv_any` (the sender sends plainly).
    Any,
}

const OPS: [Op; 8] = [
    Op::Plain,
    Op::Try,
    Op::Timeout,
    Op::Deadline,
    Op::With,
    Op::Alt,
    Op::AltBuilder,
    Op::Any,
];

const FLAVOURS: [Buffer; 4] = [
    Buffer::Rendezvous,
    Buffer::Bounded(1),
    Buffer::Overwriting(1),
    Buffer::Unbounded,
];

fn make<const N: usize>(tag: u8) -> [u8; N] {
    let mut v = [tag; N];
    v[0] = tag.wrapping_add(1);
    v[N - 1] = tag.wrapping_add(2);
    v
}

/// Checks a value made by `make(tag)` (every byte, through a reference).
#[inline(never)]
fn check<const N: usize>(v: &[u8; N], tag: u8) {
    assert_eq!(v[0], tag.wrapping_add(1));
    assert_eq!(v[N - 1], tag.wrapping_add(2));
    assert!(
        v[1..N - 1].iter().all(|&b| b == tag),
        "a value was corrupted"
    );
}

/// Sends `make(tag)` with `op`. Each operation has a function of its own, so its
/// frame is what a caller's would be (one function over all of them would hold
/// every arm's copies at once).
fn send_with<const N: usize>(op: Op, tx: &Sender<[u8; N]>, tag: u8) {
    match op {
        Op::Plain | Op::With | Op::Any => send_plain(tx, tag),
        Op::Try => send_try(tx, tag),
        Op::Timeout => send_timeout(tx, tag),
        Op::Deadline => send_deadline(tx, tag),
        Op::Alt => send_alt(tx, tag),
        Op::AltBuilder => send_alt_builder(tx, tag),
    }
}

#[inline(never)]
fn send_plain<const N: usize>(tx: &Sender<[u8; N]>, tag: u8) {
    tx.send(make(tag)).expect("send");
}

#[inline(never)]
fn send_try<const N: usize>(tx: &Sender<[u8; N]>, tag: u8) {
    let mut v = make::<N>(tag);
    loop {
        match tx.try_send(v) {
            Ok(()) => break,
            Err(TrySendError::Full(back)) => {
                // A failed send gives the value back, whole.
                check(&back, tag);
                v = back;
                hoare::yield_now();
            }
            Err(TrySendError::Poisoned(_)) => panic!("poisoned"),
        }
    }
}

#[inline(never)]
fn send_timeout<const N: usize>(tx: &Sender<[u8; N]>, tag: u8) {
    match tx.send_timeout(make(tag), Duration::MAX) {
        Ok(()) => {}
        Err(SendTimeoutError::Timeout(_) | SendTimeoutError::Poisoned(_)) => panic!("send"),
    }
}

#[inline(never)]
fn send_deadline<const N: usize>(tx: &Sender<[u8; N]>, tag: u8) {
    let deadline = Instant::now() + Duration::from_secs(60);
    tx.send_deadline(make(tag), deadline).expect("send");
}

#[inline(never)]
fn send_alt<const N: usize>(tx: &Sender<[u8; N]>, tag: u8) {
    alt! { send(tx, make(tag)) -> r => r.expect("send") }
}

#[inline(never)]
fn send_alt_builder<const N: usize>(tx: &Sender<[u8; N]>, tag: u8) {
    let mut a = Alt::new();
    a.send(tx, make(tag), |r| r.is_ok());
    assert!(a.select().output, "send");
}

/// Receives with `op` and checks the value (one function per operation, as for
/// `send_with`).
fn recv_with<const N: usize>(op: Op, rx: &Receiver<[u8; N]>, tag: u8) {
    match op {
        Op::Plain => recv_plain(rx, tag),
        Op::Try => recv_try(rx, tag),
        Op::Timeout => recv_timeout(rx, tag),
        Op::Deadline => recv_deadline(rx, tag),
        Op::With => recv_extended(rx, tag),
        Op::Alt => recv_alt(rx, tag),
        Op::AltBuilder => recv_alt_builder(rx, tag),
        Op::Any => recv_any_of(rx, tag),
    }
}

#[inline(never)]
fn recv_plain<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    check(&rx.recv().expect("recv"), tag);
}

#[inline(never)]
fn recv_try<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    loop {
        match rx.try_recv() {
            Ok(v) => break check(&v, tag),
            Err(TryRecvError::Empty) => hoare::yield_now(),
            Err(TryRecvError::Poisoned) => panic!("poisoned"),
        }
    }
}

#[inline(never)]
fn recv_timeout<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    match rx.recv_timeout(Duration::MAX) {
        Ok(v) => check(&v, tag),
        Err(RecvTimeoutError::Timeout | RecvTimeoutError::Poisoned) => panic!("recv"),
    }
}

#[inline(never)]
fn recv_deadline<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    let deadline = Instant::now() + Duration::from_secs(60);
    check(&rx.recv_deadline(deadline).expect("recv"), tag);
}

#[inline(never)]
fn recv_extended<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    rx.recv_with(|v| check(&v, tag)).expect("recv");
}

#[inline(never)]
fn recv_alt<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    alt! { recv(rx) -> v => check(&v.expect("recv"), tag) }
}

#[inline(never)]
fn recv_alt_builder<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    let mut a = Alt::new();
    a.recv(rx, |r| check(&r.expect("recv"), tag));
    a.select().output
}

#[inline(never)]
fn recv_any_of<const N: usize>(rx: &Receiver<[u8; N]>, tag: u8) {
    check(&recv_any(std::slice::from_ref(rx)).1.expect("recv"), tag);
}

/// In processes with the default stack: for every flavour and operation, a value
/// of `N` bytes goes from the root (using the operation) to a peer and back; then
/// the failure paths give values back whole.
fn every_flavour_and_operation<const N: usize>() {
    hoare::run(|| {
        for buffer in FLAVOURS {
            for (k, op) in OPS.into_iter().enumerate() {
                let tag = k as u8 * 3;
                let (tx, rx) = Channel::builder().buffer(buffer).one2one::<[u8; N]>();
                let (back_tx, back_rx) = Channel::builder().buffer(buffer).one2one::<[u8; N]>();
                // The peer blocks plainly, so that the root's polling operations
                // (`try_*`) meet a partner on a rendezvous channel.
                let peer = hoare::spawn(move || {
                    recv_with(Op::Plain, &rx, tag);
                    send_with(Op::Plain, &back_tx, tag + 1);
                    // Hand the ends back: dropping them here could poison the
                    // channel before the root has taken its value (a rendezvous
                    // `try_recv` would then see the poison).
                    (rx, back_tx)
                });
                send_with(op, &tx, tag);
                recv_with(op, &back_rx, tag + 1);
                let _ends = peer
                    .join()
                    .unwrap_or_else(|e| panic!("{buffer:?} {op:?}: {e}"));
            }
            failures::<N>(buffer);
        }
    });
}

/// A send that fails gives the large value back whole: `try_send` on a full
/// channel, `send_timeout` that times out, any send on a poisoned channel.
#[inline(never)]
fn failures<const N: usize>(buffer: Buffer) {
    let (tx, rx) = Channel::builder().buffer(buffer).one2one::<[u8; N]>();
    if matches!(buffer, Buffer::Rendezvous | Buffer::Bounded(_)) {
        if buffer != Buffer::Rendezvous {
            tx.send(make(1)).unwrap();
        }
        match tx.try_send(make(2)) {
            Err(TrySendError::Full(v)) => check(&v, 2),
            _ => panic!("{buffer:?}: try_send on a full channel"),
        }
        match tx.send_timeout(make(3), Duration::from_millis(1)) {
            Err(SendTimeoutError::Timeout(v)) => check(&v, 3),
            _ => panic!("{buffer:?}: send_timeout on a full channel"),
        }
        let mut a = Alt::new();
        let key = a.send(&tx, make(4), |r| r.is_ok());
        a.skip(|| false);
        assert!(
            !a.select().output,
            "{buffer:?}: the skip guard was not chosen"
        );
        check(&a.take_unsent(key, 0).expect("unsent"), 4);
    }
    rx.poison();
    match tx.send(make(5)) {
        Err(SendError(v)) => check(&v, 5),
        Ok(()) => panic!("{buffer:?}: send on a poisoned channel"),
    }
    alt! {
        send(tx, make(6)) -> r => check(&r.expect_err("poisoned").0, 6),
    }
    assert_eq!(rx.try_recv().err(), Some(TryRecvError::Poisoned));
}

#[test]
#[cfg_attr(debug_assertions, ignore = "the limits hold for optimised builds")]
fn a_32_kib_value_through_every_flavour_and_operation_in_default_processes() {
    every_flavour_and_operation::<{ 32 * 1024 }>();
}

#[test]
#[cfg_attr(debug_assertions, ignore = "the limits hold for optimised builds")]
fn a_value_at_the_documented_limit_through_every_flavour_and_operation() {
    assert_eq!(
        hoare::DEFAULT_STACK_SIZE,
        128 * 1024,
        "update the limit in its docs"
    );
    every_flavour_and_operation::<{ 32 * 1024 }>();
}

/// The issue's reproduction, exactly: a 32 KiB value through an unbounded
/// channel in the root process.
#[test]
#[cfg_attr(debug_assertions, ignore = "the limits hold for optimised builds")]
fn issue_17_reproduction() {
    hoare::run(|| {
        let (s, r) = Channel::builder().unbounded().one2one::<[u8; 32768]>();
        s.send([0; 32768]).unwrap();
        let _ = r.try_recv();
    })
}
