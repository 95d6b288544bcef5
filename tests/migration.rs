//! Processes migrate between workers at every switch: nothing may reuse a
//! thread-local address computed before a switch. These loops are the shape in which
//! LLVM hoists a thread-local's address out of a loop once the accessor is inlined
//! (`yield_now`, `id`, `recv` in a tight loop), which showed up as stray wake-ups
//! and crashes before the accessors were made non-inlinable.

use hoare::{Runtime, Sender};

#[test]
fn identity_survives_migration() {
    let rt = Runtime::builder().workers(2).build();
    rt.run(|| {
        let procs: Vec<_> = (0..64)
            .map(|_| {
                hoare::spawn(|| {
                    let me = hoare::id();
                    for _ in 0..20_000 {
                        hoare::yield_now();
                        assert_eq!(hoare::id(), me, "a process saw another's identity");
                    }
                })
            })
            .collect();
        for p in procs {
            p.join().unwrap();
        }
    });
}

#[test]
fn channel_loops_survive_migration() {
    const PAIRS: u64 = 32;
    const N: u64 = 20_000;
    let rt = Runtime::builder().workers(2).build();
    let total = rt.run(|| {
        let readers: Vec<_> = (0..PAIRS)
            .map(|k| {
                let (tx, rx) = hoare::one2one::<u64>();
                let writer = hoare::spawn(move || {
                    let tx: Sender<u64> = tx;
                    for i in 0..N {
                        tx.send(k * N + i).unwrap();
                        if i % 7 == 0 {
                            hoare::yield_now();
                        }
                    }
                });
                hoare::spawn(move || {
                    let mut next = k * N;
                    for v in rx.iter() {
                        assert_eq!(v, next, "values out of order or from another channel");
                        next += 1;
                    }
                    writer.join().unwrap();
                    next - k * N
                })
            })
            .collect();
        readers.into_iter().map(|r| r.join().unwrap()).sum::<u64>()
    });
    assert_eq!(total, PAIRS * N);
}
