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
