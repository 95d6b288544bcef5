//! Broadcast channels between processes on the runtime: a writer and 100 reader
//! processes (some joining and leaving while it sends), alt guards on both sides,
//! and poison ending a network.

use hoare::{alt, broadcast_bounded, Runtime};
use std::time::Duration;

fn rt(workers: usize) -> Runtime {
    Runtime::builder().workers(workers).build()
}

/// 100 reader processes each receive all 2,000 values in order; 20 more join and
/// leave while the writer sends (each sees a contiguous run); the writer never
/// waits for a reader that left.
#[test]
fn hundred_readers_every_value_and_readers_that_come_and_go() {
    const N: u64 = 2000;
    for cap in [0, 16] {
        let sums = rt(4).run(move || {
            let (tx, rx) = broadcast_bounded::<u64>(cap);
            let readers: Vec<_> = (0..100)
                .map(|_| {
                    let rx = rx.subscribe();
                    hoare::spawn(move || {
                        let mut next = 0;
                        for v in rx.iter() {
                            assert_eq!(v, next, "a reader missed or repeated a value");
                            next += 1;
                        }
                        next
                    })
                })
                .collect();
            let visitors: Vec<_> = (0..20u64)
                .map(|k| {
                    let rx = rx.subscribe();
                    hoare::spawn(move || {
                        let mut last = None;
                        for _ in 0..(k * 37 % 200 + 1) {
                            let v = rx.recv().unwrap();
                            if let Some(l) = last {
                                assert_eq!(v, l + 1);
                            }
                            last = Some(v);
                        }
                        // Leaves here, perhaps while the writer waits for it.
                    })
                })
                .collect();
            drop(rx);
            let writer = hoare::spawn(move || {
                for i in 0..N {
                    tx.send(i).unwrap();
                }
            });
            writer.join().unwrap();
            for v in visitors {
                v.join().unwrap();
            }
            readers
                .into_iter()
                .map(|r| r.join().unwrap())
                .collect::<Vec<_>>()
        });
        assert_eq!(sums, vec![N; 100], "cap {cap}");
    }
}

/// Alt-to-alt on a broadcast: the writer alts between its send guard and a stop
/// channel, the readers between their receive guard and a timeout; poison ends
/// them all.
#[test]
fn alts_on_both_sides_and_poison_ends_the_network() {
    let got = rt(2).run(|| {
        let (tx, rx) = broadcast_bounded::<u32>(0);
        let (stop_tx, stop) = hoare::Channel::builder().bounded(1).one2one::<()>();
        let readers: Vec<_> = (0..8)
            .map(|_| {
                let rx = rx.subscribe();
                hoare::spawn(move || {
                    let mut n = 0;
                    loop {
                        alt! {
                            recv(rx) -> v => match v {
                                Ok(_) => n += 1,
                                Err(_) => return n,
                            },
                            after(Duration::from_secs(10)) => panic!("no value for 10 s"),
                        }
                    }
                })
            })
            .collect();
        drop(rx);
        let writer = hoare::spawn(move || {
            let mut i = 0;
            loop {
                alt! {
                    recv(stop) => break,
                    send(tx, i) -> r => { r.unwrap(); i += 1 },
                }
                if i == 500 {
                    stop_tx.send(()).unwrap();
                }
            }
            i
        });
        let sent = writer.join().unwrap();
        readers.into_iter().all(|r| r.join().unwrap() == sent)
    });
    assert!(got);
}
