//! Parallel communication between processes on the runtime: an all-to-all
//! exchange over rendezvous channels, which deadlocks with sequential sends and
//! receives and completes with `Par`.

use hoare::alt::Par;
use hoare::{one2one, Receiver, Runtime, Sender};

/// 12 processes, each with a rendezvous channel to every other one; for 200
/// rounds each sends its round's value to all the others and receives theirs in
/// one PAR. Every process must see every other's value of every round.
#[test]
fn all_to_all_exchange_in_par() {
    const K: usize = 12;
    const ROUNDS: u64 = 200;
    for workers in [1, 3] {
        let ok = Runtime::builder().workers(workers).build().run(|| {
            // chans[i][j]: from i to j.
            let mut txs: Vec<Vec<Option<Sender<u64>>>> = (0..K).map(|_| Vec::new()).collect();
            let mut rxs: Vec<Vec<Option<Receiver<u64>>>> =
                (0..K).map(|_| (0..K).map(|_| None).collect()).collect();
            for (i, row) in txs.iter_mut().enumerate() {
                for (j, rx_row) in rxs.iter_mut().enumerate() {
                    if i == j {
                        row.push(None);
                        continue;
                    }
                    let (tx, rx) = one2one::<u64>();
                    row.push(Some(tx));
                    rx_row[i] = Some(rx);
                }
            }
            let procs: Vec<_> = txs
                .into_iter()
                .zip(rxs)
                .enumerate()
                .map(|(me, (outs, ins))| {
                    hoare::spawn(move || {
                        let mut total = 0u64;
                        for round in 0..ROUNDS {
                            let mut got = [0u64; K];
                            {
                                let mut par = Par::new();
                                for tx in outs.iter().flatten() {
                                    par.send(tx, round * 1000 + me as u64, |r| r.unwrap());
                                }
                                for (from, (rx, slot)) in ins.iter().zip(got.iter_mut()).enumerate()
                                {
                                    if let Some(rx) = rx {
                                        par.recv(rx, move |r| {
                                            let v = r.unwrap();
                                            assert_eq!(v, round * 1000 + from as u64);
                                            *slot = v;
                                        });
                                    }
                                }
                                assert!(par.run());
                            }
                            total += got.iter().sum::<u64>();
                        }
                        total
                    })
                })
                .collect();
            let want = |me: u64| -> u64 {
                (0..ROUNDS)
                    .map(|r| {
                        (0..K as u64)
                            .filter(|&j| j != me)
                            .map(|j| r * 1000 + j)
                            .sum::<u64>()
                    })
                    .sum()
            };
            procs
                .into_iter()
                .enumerate()
                .all(|(me, p)| p.join().unwrap() == want(me as u64))
        });
        assert!(ok, "workers {workers}");
    }
}

/// A coordinator and 16 workers on the runtime: each round the coordinator, in
/// one PAR, broadcasts the round's number (rendezvous: every worker must take it)
/// and receives every worker's result of the previous round. A worker sends its
/// result before it takes the next number, so the broadcast completes only
/// because the PAR's receives go on while it waits for its takers (with the
/// broadcast sent first and the receives after, the network deadlocks).
/// Shown to fail (the runtime reports the deadlock) with the PAR's broadcast send
/// waiting for its takers inside its round, as a plain alt's send guard does.
#[test]
fn broadcast_and_gather_in_one_par() {
    const K: u64 = 16;
    const ROUNDS: u64 = 100;
    for workers in [1, 3] {
        let total = Runtime::builder().workers(workers).build().run(|| {
            let (btx, brx) = hoare::broadcast::<u64>();
            let mut results = Vec::new();
            let mut procs = Vec::new();
            for i in 0..K {
                let rx = brx.subscribe();
                let (tx, res) = one2one::<u64>();
                results.push(res);
                procs.push(hoare::spawn(move || {
                    let mut v = rx.recv().unwrap(); // round 0
                    while let Ok(next) = {
                        tx.send(v * (i + 1)).unwrap();
                        rx.recv()
                    } {
                        v = next;
                    }
                }));
            }
            drop(brx);
            btx.send(0).unwrap();
            let mut total = 0;
            for round in 1..=ROUNDS {
                let mut got = vec![0u64; K as usize];
                let mut par = Par::new();
                par.bcast_send(&btx, round, |r| r.unwrap());
                for (res, slot) in results.iter().zip(got.iter_mut()) {
                    par.recv(res, move |r| *slot = r.unwrap());
                }
                assert!(par.run());
                // Round - 1's results: (round - 1) * (i + 1) from worker i.
                for (i, g) in got.iter().enumerate() {
                    assert_eq!(*g, (round - 1) * (i as u64 + 1));
                }
                total += got.iter().sum::<u64>();
            }
            // The last round's results, then the end.
            for res in &results {
                total += res.recv().unwrap();
            }
            drop(btx);
            for p in procs {
                p.join().unwrap();
            }
            total
        });
        let per_round: u64 = (1..=K).sum();
        assert_eq!(total, per_round * (0..=ROUNDS).sum::<u64>());
    }
}
