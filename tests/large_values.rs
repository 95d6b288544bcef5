//! Large values through channels (issue 17 §2): how many copies of a value each
//! send/receive path keeps on the stack.
//!
//! The limits hold for optimised builds (the suite runs with `--release`); a debug
//! build copies values many times more, so these tests are ignored there.

mod stack_probe;

use hoare::chan::{Buffer, Channel, Receiver, Sender};
use hoare::core::alt::recv_any;
use hoare::{alt, Alt, Builder, Runtime};
use std::time::Duration;

const BIG: usize = 32 * 1024;
type Big = [u8; BIG];

fn rt1() -> Runtime {
    Runtime::builder().workers(1).build().expect("runtime")
}

/// Spawns `f` as a peer process with a stack large enough for anything.
fn peer<F: FnOnce() + Send + 'static>(f: F) -> hoare::JoinHandle<()> {
    Builder::new().stack_size(4 << 20).spawn(f).expect("spawn")
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
            .expect("spawn")
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
