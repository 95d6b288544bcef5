//! Unparks of a one-worker runtime's processes made off its worker (plain threads,
//! another runtime's workers), racing with that worker's parks (whose post-switch
//! transition and whose next slot take shortcuts when the runtime has one worker),
//! with timeouts and with local wakes. A lost wake-up hangs, a double run panics or
//! corrupts.

use hoare_core::chan::one2one;
use hoare_runtime::Runtime;
use std::time::Duration;

#[test]
fn thread_ping_pong_with_solo_worker() {
    let rt = Runtime::builder().workers(1).build().expect("runtime");
    let (to_p, from_t) = one2one::<u64>();
    let (to_t, from_p) = one2one::<u64>();
    let t = std::thread::spawn(move || {
        for i in 0..20_000u64 {
            to_p.send(i).unwrap();
            assert_eq!(from_p.recv().unwrap(), i + 1);
        }
    });
    rt.run(move || {
        while let Ok(v) = from_t.recv() {
            to_t.send(v + 1).unwrap();
        }
    });
    t.join().unwrap();
}

#[test]
fn foreign_sends_race_timeouts_on_solo_worker() {
    let rt = Runtime::builder().workers(1).build().expect("runtime");
    let (tx, rx) = one2one::<u64>();
    let t = std::thread::spawn(move || {
        for i in 0..5_000u64 {
            if i % 7 == 0 {
                std::thread::yield_now();
            }
            tx.send(i).unwrap();
        }
    });
    let got = rt.run(move || {
        // A local process keeps the worker busy with local hand-offs meanwhile.
        let (ltx, lrx) = one2one::<u64>();
        let h = hoare_runtime::spawn(move || {
            for i in 0..2_000u64 {
                ltx.send(i).unwrap();
            }
        });
        let mut got = 0u64;
        let mut local = 0u64;
        loop {
            match rx.recv_timeout(Duration::from_micros(20)) {
                Ok(_) => got += 1,
                Err(hoare_core::chan::RecvTimeoutError::Timeout) => {}
                Err(_) => break,
            }
            if local < 2_000 {
                lrx.recv().unwrap();
                local += 1;
            }
        }
        h.join().unwrap();
        got
    });
    assert_eq!(got, 5_000);
    t.join().unwrap();
}

#[test]
fn two_runtimes_wake_each_other() {
    let a = Runtime::builder().workers(1).build().expect("runtime");
    let b = Runtime::builder().workers(1).build().expect("runtime");
    let (to_b, from_a) = one2one::<u64>();
    let (to_a, from_b) = one2one::<u64>();
    let hb = std::thread::spawn(move || {
        b.run(move || {
            while let Ok(v) = from_a.recv() {
                if to_a.send(v + 1).is_err() {
                    break;
                }
            }
        })
    });
    a.run(move || {
        for i in 0..20_000u64 {
            to_b.send(i).unwrap();
            assert_eq!(from_b.recv().unwrap(), i + 1);
        }
    });
    hb.join().unwrap();
}
