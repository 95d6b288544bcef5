//! Channels between processes on the runtime: stress (1,000 writers × 1,000 values
//! into one any2one channel, one2any with 100 readers), poison spreading through a
//! 1,000-process pipeline, mobile ends, request–reply, and plain OS threads talking
//! to processes.

use hoare::{any2one, one2any, one2one, request_reply, Buffer, Channel, RecvError, Runtime};
use std::time::Duration;

fn rt(workers: usize) -> Runtime {
    Runtime::builder()
        .workers(workers)
        .build()
        .expect("runtime")
}

#[test]
fn thousand_writers_thousand_values_each_received_once() {
    const W: usize = 1000;
    const N: usize = 1000;
    for b in [Buffer::Rendezvous, Buffer::Bounded(64)] {
        let ok = rt(4).run(move || {
            let (tx, rx) = Channel::builder().buffer(b).any2one::<u32>();
            let writers: Vec<_> = (0..W)
                .map(|k| {
                    let tx = tx.clone();
                    hoare::spawn(move || {
                        for i in 0..N {
                            tx.send((k * N + i) as u32).unwrap();
                        }
                    })
                })
                .collect();
            drop(tx);
            let mut seen = vec![false; W * N];
            let mut count = 0;
            for v in &rx {
                assert!(!seen[v as usize], "{v} received twice");
                seen[v as usize] = true;
                count += 1;
            }
            for w in writers {
                w.join().unwrap();
            }
            count == W * N && seen.iter().all(|&s| s)
        });
        assert!(ok, "{b:?}");
    }
}

#[test]
fn one_writer_hundred_readers() {
    const R: usize = 100;
    const N: u64 = 100_000;
    let sum = rt(4).run(|| {
        let (tx, rx) = one2any::<u64>();
        let readers: Vec<_> = (0..R)
            .map(|_| {
                let rx = rx.clone();
                hoare::spawn(move || rx.iter().sum::<u64>())
            })
            .collect();
        drop(rx);
        for i in 0..N {
            tx.send(i).unwrap();
        }
        drop(tx);
        readers.into_iter().map(|r| r.join().unwrap()).sum::<u64>()
    });
    assert_eq!(sum, (0..N).sum::<u64>());
}

#[test]
fn poison_shuts_down_a_thousand_process_pipeline() {
    const P: usize = 1000;
    let joined = rt(4).run(|| {
        let (first_tx, mut prev) = one2one::<u64>();
        let mut stages = Vec::with_capacity(P);
        for _ in 0..P {
            let (tx, rx) = one2one::<u64>();
            let input = std::mem::replace(&mut prev, rx);
            stages.push(hoare::spawn(move || input.pipe_to(&tx)));
        }
        for i in 0..100 {
            first_tx.send(i).unwrap();
            assert_eq!(prev.recv(), Ok(i));
        }
        first_tx.poison();
        assert_eq!(prev.recv(), Err(RecvError::Poisoned));
        let mut joined = 0;
        for s in stages {
            assert_eq!(s.join().unwrap(), 100);
            joined += 1;
        }
        joined
    });
    assert_eq!(joined, P);
}

#[test]
fn backward_poison_through_a_pipeline() {
    // The last reader poisons; the poison travels back to the first writer.
    rt(2).run(|| {
        let (first_tx, mut prev) = one2one::<u64>();
        let mut stages = Vec::new();
        for _ in 0..100 {
            let (tx, rx) = one2one::<u64>();
            let input = std::mem::replace(&mut prev, rx);
            stages.push(hoare::spawn(move || input.pipe_to(&tx)));
        }
        assert!(first_tx.send(1).is_ok());
        assert_eq!(prev.recv(), Ok(1));
        prev.poison();
        let mut i = 0;
        while first_tx.send(i).is_ok() {
            i += 1;
        }
        for s in stages {
            s.join().unwrap();
        }
    });
}

#[test]
fn request_reply_between_processes() {
    let total = rt(4).run(|| {
        let (client, server) = request_reply::<u64, u64>();
        let servers: Vec<_> = (0..4)
            .map(|_| {
                let s = server.clone();
                hoare::spawn(move || s.serve(|x| x * x))
            })
            .collect();
        drop(server);
        let clients: Vec<_> = (0..100u64)
            .map(|k| {
                let c = client.clone();
                hoare::spawn(move || (0..100).map(|i| c.call(k * 100 + i).unwrap()).sum::<u64>())
            })
            .collect();
        drop(client);
        let total: u64 = clients.into_iter().map(|c| c.join().unwrap()).sum();
        let served: u64 = servers.into_iter().map(|s| s.join().unwrap()).sum();
        assert_eq!(served, 10_000);
        total
    });
    assert_eq!(total, (0..10_000u64).map(|x| x * x).sum::<u64>());
}

#[test]
fn mobile_reply_channels() {
    rt(2).run(|| {
        let (req_tx, req_rx) = any2one::<(u32, hoare::Sender<u32>)>();
        let server = hoare::spawn(move || {
            for (x, reply) in &req_rx {
                reply.send(x + 1).unwrap();
            }
        });
        for i in 0..1000 {
            let (tx, rx) = one2one();
            req_tx.send((i, tx)).unwrap();
            assert_eq!(rx.recv(), Ok(i + 1));
        }
        drop(req_tx);
        server.join().unwrap();
    });
}

#[test]
fn timeouts_in_processes() {
    rt(2).run(|| {
        let (tx, rx) = one2one::<u32>();
        let e = tx.send_timeout(1, Duration::from_millis(20)).unwrap_err();
        assert_eq!(e.into_inner(), 1);
        assert!(rx.recv_timeout(Duration::from_millis(20)).is_err());
        let h = hoare::spawn(move || {
            hoare::sleep_for(Duration::from_millis(10));
            tx.send(5)
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(5));
        h.join().unwrap().unwrap();
    });
}

#[test]
fn extended_rendezvous_between_processes() {
    rt(2).run(|| {
        let (tx, rx) = one2one::<u32>();
        let h = hoare::spawn(move || {
            let t0 = std::time::Instant::now();
            tx.send(1).unwrap();
            t0.elapsed()
        });
        let r = rx.recv_with(|v| {
            hoare::sleep_for(Duration::from_millis(30));
            v + 1
        });
        assert_eq!(r, Ok(2));
        assert!(h.join().unwrap() >= Duration::from_millis(30));
    });
}

#[test]
fn plain_threads_and_processes_share_channels() {
    let (tx, rx) = any2one::<u32>();
    let (done_tx, done_rx) = one2one::<u64>();
    let threads: Vec<_> = (0..4)
        .map(|k| {
            let tx = tx.clone();
            std::thread::spawn(move || (0..1000).for_each(|i| tx.send(k * 1000 + i).unwrap()))
        })
        .collect();
    drop(tx);
    let runtime = std::thread::spawn(move || {
        rt(2).run(move || {
            let sum: u64 = rx.iter().map(u64::from).sum();
            done_tx.send(sum).unwrap();
        })
    });
    assert_eq!(done_rx.recv(), Ok((0..4000u64).sum()));
    threads.into_iter().for_each(|t| t.join().unwrap());
    runtime.join().unwrap();
}

#[test]
fn a_process_unwound_at_shutdown_leaves_no_entry_behind() {
    let (tx, rx) = hoare::any2any::<u32>();
    let rx_outside = rx.clone();
    rt(2).run(move || {
        // Blocks for ever; the runtime unwinds it when the root returns.
        let _ = hoare::spawn(move || rx.recv());
        hoare::sleep_for(Duration::from_millis(20));
    });
    // Without the unregistration the send would claim a waiter in a freed frame.
    assert_eq!(
        tx.send_timeout(1, Duration::from_millis(10)),
        Err(hoare::SendTimeoutError::Timeout(1))
    );
    let t = std::thread::spawn(move || rx_outside.recv());
    tx.send(2).unwrap();
    assert_eq!(t.join().unwrap(), Ok(2));
}
