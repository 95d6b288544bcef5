//! Deadlock detection (SPEC R7): every hang of the issue reports, naming the
//! processes and what they wait on; healthy programs never do.

mod common_nets;

use common_nets::seated_college;
use hoare::report::{ReportKind, Wait};
use hoare::{alt, Barrier, Builder, Channel, OnDeadlock, ProcessError, Report, Runtime};
use std::time::Duration;

/// Runs `f` as the root of a runtime with `workers` workers and returns the
/// deadlock report it must end with.
fn deadlock<F: FnOnce() + Send + 'static>(workers: usize, f: F) -> Report {
    match Runtime::builder().workers(workers).build().try_run(f) {
        Err(ProcessError::Deadlock(r)) => *r,
        Err(e) => panic!("expected a deadlock, got {e}"),
        Ok(()) => panic!("expected a deadlock, the root returned"),
    }
}

fn waits<'a>(r: &'a Report, name: &str) -> &'a Wait {
    r.blocked()
        .iter()
        .find(|b| b.name() == Some(name))
        .unwrap_or_else(|| panic!("{name} not in the report:\n{r}"))
        .wait()
}

#[test]
fn a_two_process_cycle_is_reported_with_names_and_the_cycle() {
    for workers in [1, 2] {
        let r = deadlock(workers, || {
            let (a_tx, a_rx) = Channel::builder().name("a").one2one::<u32>();
            let (b_tx, b_rx) = Channel::builder().name("b").one2one::<u32>();
            let p2 = Builder::new().name("P2").spawn(move || {
                b_tx.send(2).ok();
                a_rx.recv().ok();
            });
            let p1 = Builder::new().name("P1").spawn(move || {
                a_tx.send(1).ok();
                b_rx.recv().ok();
            });
            p1.join().ok();
            p2.join().ok();
        });
        assert_eq!(r.kind(), ReportKind::Deadlock);
        assert_eq!(r.blocked().len(), 3, "{r}");
        let text = r.to_string();
        assert!(text.contains("process 'P1'"), "{text}");
        assert!(text.contains("send on channel 'a'"), "{text}");
        assert!(text.contains("send on channel 'b'"), "{text}");
        assert!(
            text.contains("tests/deadlock.rs"),
            "spawn and creation sites: {text}"
        );
        assert!(
            matches!(waits(&r, "main"), Wait::Join { target } if *target > 0),
            "{text}"
        );
        let cycle = r.cycle().expect("a wait-for cycle").to_string();
        assert!(
            cycle == "P1 → a → P2 → b → P1" || cycle == "P2 → b → P1 → a → P2",
            "{cycle}"
        );
    }
}

#[test]
fn a_three_process_send_cycle_is_reported() {
    for workers in [1, 2] {
        let r = deadlock(workers, || {
            let chans: Vec<_> = (0..3)
                .map(|i| Channel::builder().name(format!("c{i}")).one2one::<u8>())
                .collect();
            let mut txs = Vec::new();
            let mut rxs = Vec::new();
            for (tx, rx) in chans {
                txs.push(Some(tx));
                rxs.push(Some(rx));
            }
            let mut hs = Vec::new();
            for i in 0..3 {
                let tx = txs[i].take().unwrap();
                let rx = rxs[(i + 2) % 3].take().unwrap();
                hs.push(Builder::new().name(format!("p{i}")).spawn(move || {
                    tx.send(0).ok();
                    rx.recv().ok();
                }));
            }
            for h in hs {
                h.join().ok();
            }
        });
        for i in 0..3 {
            match waits(&r, &format!("p{i}")) {
                Wait::Chan { op: "send", chan } => {
                    assert_eq!(chan.name, Some(["c0", "c1", "c2"][i]))
                }
                w => panic!("p{i} waits for {w}"),
            }
        }
        assert!(r.cycle().is_some(), "{r}");
    }
}

#[test]
fn a_barrier_one_party_short_is_reported() {
    for workers in [1, 2] {
        let r = deadlock(workers, || {
            let b = Barrier::named("rounds");
            let mut ends = b.enroll_many(3);
            let _short = ends.pop(); // enrolled, never syncs
            let hs: Vec<_> = ends
                .into_iter()
                .enumerate()
                .map(|(i, mut e)| Builder::new().name(format!("w{i}")).spawn(move || e.sync()))
                .collect();
            for h in hs {
                h.join().ok();
            }
        });
        match waits(&r, "w0") {
            Wait::Barrier {
                barrier,
                arrived,
                enrolled,
            } => {
                assert_eq!(barrier.name, Some("rounds"));
                assert_eq!((*arrived, *enrolled), (2, 3), "{r}");
            }
            w => panic!("w0 waits for {w}"),
        }
    }
}

#[test]
fn a_root_receiving_from_its_own_channel_is_reported() {
    for workers in [1, 2] {
        let r = deadlock(workers, || {
            let (_t, rx) = hoare::one2one::<u32>();
            rx.recv().ok();
        });
        assert_eq!(r.blocked().len(), 1);
        match waits(&r, "main") {
            Wait::Chan { op: "recv", chan } => {
                assert!(chan.site.file().ends_with("deadlock.rs"), "{r}");
                assert_eq!(chan.name, None);
            }
            w => panic!("main waits for {w}"),
        }
    }
}

#[test]
fn run_panics_with_the_report() {
    let e = std::panic::catch_unwind(|| {
        Runtime::builder().workers(1).build().run(|| {
            let (_t, rx) = Channel::builder().name("never").one2one::<u32>();
            rx.recv().ok();
        })
    })
    .expect_err("run must panic");
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("deadlock") && msg.contains("recv on channel 'never'"),
        "{msg}"
    );
}

#[test]
fn an_alt_over_a_channel_is_described_with_its_guards() {
    let r = deadlock(2, || {
        let (_t1, r1) = Channel::builder().name("left").one2one::<u32>();
        let (_t2, r2) = Channel::builder().name("right").one2one::<u32>();
        alt! {
            recv(r1) -> _ => {},
            recv(r2) -> _ => {},
        }
    });
    let text = r.to_string();
    assert!(
        text.contains("an alt over recv on channel 'left'")
            && text.contains("recv on channel 'right'"),
        "{text}"
    );
}

#[test]
fn an_alt_with_a_timeout_is_reported_only_after_the_timeout_and_an_untimed_wait() {
    let r = deadlock(2, || {
        let (_t, rx) = Channel::builder().name("quiet").one2one::<u32>();
        let mut timed_out = false;
        alt! {
            recv(rx) -> _ => {},
            after(Duration::from_millis(50)) => timed_out = true,
        }
        assert!(timed_out);
        rx.recv().ok(); // now untimed: a deadlock
    });
    // Reported in the untimed recv, not while the alt's timeout was pending.
    assert!(
        matches!(waits(&r, "main"), Wait::Chan { op: "recv", .. }),
        "{r}"
    );
}

#[test]
fn a_parked_thread_process_is_part_of_the_report() {
    let r = deadlock(2, || {
        let (_t, rx) = Channel::builder().name("for-thread").one2one::<u32>();
        let h = Builder::new().name("blocking").thread(true).spawn(move || {
            rx.recv().ok();
        });
        h.join().ok();
    });
    let b = r
        .blocked()
        .iter()
        .find(|b| b.name() == Some("blocking"))
        .unwrap_or_else(|| panic!("thread process missing:\n{r}"));
    assert!(r.to_string().contains("thread process 'blocking'"), "{r}");
    assert!(b.site().is_some());
}

#[test]
fn a_plain_thread_that_sends_after_a_sleep_is_not_a_deadlock() {
    // The channel is made outside every process: a plain thread may feed it.
    let (tx, rx) = hoare::one2one::<u32>();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        tx.send(7).unwrap();
    });
    let got = Runtime::builder()
        .workers(2)
        .build()
        .try_run(move || rx.recv().unwrap());
    assert_eq!(got, Ok(7));
    t.join().unwrap();
}

#[test]
fn a_thread_process_that_computes_before_sending_is_not_a_deadlock() {
    let got = Runtime::builder().workers(2).build().try_run(|| {
        let (tx, rx) = hoare::one2one::<u32>();
        let _h = hoare::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(150));
            tx.send(9).unwrap();
        });
        rx.recv().unwrap()
    });
    assert_eq!(got, Ok(9));
}

#[test]
fn ten_thousand_processes_behind_a_sleeper_are_not_reported() {
    let got = Runtime::builder().workers(2).build().try_run(|| {
        let (tx, rx) = Channel::builder().any2any::<u32>();
        let hs: Vec<_> = (0..10_000)
            .map(|_| {
                let rx = rx.clone();
                hoare::spawn(move || rx.recv().unwrap())
            })
            .collect();
        hoare::sleep_for(Duration::from_millis(100));
        for i in 0..10_000 {
            tx.send(i).unwrap();
        }
        hs.into_iter()
            .map(|h| h.join().unwrap() as u64)
            .sum::<u64>()
    });
    assert_eq!(got, Ok((0..10_000u64).sum()));
}

#[test]
fn warn_keeps_waiting_for_a_thread_the_runtime_cannot_see() {
    // A plain thread given a process-made channel is invisible until it uses it:
    // with Warn the report is printed and the program goes on.
    let got = Runtime::builder()
        .workers(1)
        .on_deadlock(OnDeadlock::Warn)
        .build()
        .try_run(|| {
            let (tx, rx) = hoare::one2one::<u32>();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                tx.send(3).unwrap();
            });
            rx.recv().unwrap()
        });
    assert_eq!(got, Ok(3));
}

/// Healthy networks on 2 workers, many rounds, detection on: never a report.
#[test]
fn healthy_networks_never_report() {
    for round in 0..20 {
        let r = Runtime::builder().workers(2).build().try_run(move || {
            // A pipeline.
            let (mut tx, first) = hoare::one2one::<u64>();
            let mut hs = Vec::new();
            let mut prev = first;
            for _ in 0..8 {
                let (t, r) = hoare::one2one::<u64>();
                let input = prev;
                hs.push(hoare::spawn(move || {
                    for v in input.iter() {
                        if t.send(v + 1).is_err() {
                            break;
                        }
                    }
                }));
                prev = r;
            }
            let sink = hoare::spawn(move || prev.iter().sum::<u64>());
            for i in 0..200 {
                tx.send(i).unwrap();
            }
            drop(std::mem::replace(&mut tx, hoare::one2one().0));
            let sum = sink.join().unwrap();
            assert_eq!(sum, (0..200u64).map(|i| i + 8).sum());
            // Philosophers with a butler: at most 4 of 5 seated (seat tokens in a
            // buffered channel), forks as one-token channels.
            let (seat_tx, seat_rx) = Channel::builder().bounded(4).any2any::<()>();
            for _ in 0..4 {
                seat_tx.send(()).unwrap();
            }
            let forks: Vec<_> = (0..5)
                .map(|_| Channel::builder().bounded(1).any2any::<()>())
                .collect();
            for (t, _) in &forks {
                t.send(()).unwrap();
            }
            let phils: Vec<_> = (0..5)
                .map(|i| {
                    let left = forks[i].clone();
                    let right = forks[(i + 1) % 5].clone();
                    let (seat_tx, seat_rx) = (seat_tx.clone(), seat_rx.clone());
                    hoare::spawn(move || {
                        for _ in 0..20 {
                            seat_rx.recv().unwrap();
                            left.1.recv().unwrap();
                            right.1.recv().unwrap();
                            hoare::yield_now();
                            left.0.send(()).unwrap();
                            right.0.send(()).unwrap();
                            seat_tx.send(()).unwrap();
                        }
                    })
                })
                .collect();
            for p in phils {
                p.join().unwrap();
            }
            // Alt to alt, a barrier and timers.
            let (a_tx, a_rx) = hoare::one2one::<u32>();
            let (b_tx, b_rx) = hoare::one2one::<u32>();
            let other = hoare::spawn(move || {
                for i in 0..100 {
                    alt! {
                        send(a_tx, i) -> _ => {},
                        recv(b_rx) -> _ => {},
                    }
                }
            });
            for _ in 0..100 {
                alt! {
                    recv(a_rx) -> _ => {},
                    send(b_tx, 0) -> _ => {},
                    after(Duration::from_millis(1)) => {},
                }
            }
            // A timeout leaves `other` with alts nobody will answer: closing
            // both channels lets those alts fire (with errors) and end.
            drop((a_rx, b_tx));
            other.join().unwrap();
            let (_b, ends) = Barrier::with_enrolled(4);
            let hs: Vec<_> = ends
                .into_iter()
                .map(|mut e| {
                    hoare::spawn(move || {
                        for _ in 0..20 {
                            e.sync();
                            hoare::sleep_for(Duration::from_micros(100));
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
        });
        assert!(
            r.is_ok(),
            "round {round}: {:?}",
            r.err().map(|e| e.to_string())
        );
    }
}

/// Run by `the_leak_report_names_processes_blocked_at_shutdown` in a child
/// process (its stderr is the report).
#[test]
#[ignore = "run as a child process by the_leak_report_names_processes_blocked_at_shutdown"]
fn leak_child() {
    if std::env::var_os("HOARE_LEAK_CHILD").is_none() {
        return;
    }
    Runtime::builder()
        .workers(2)
        .leak_report(true)
        .build()
        .run(|| {
            let (tx, rx) = Channel::builder().name("left-open").one2one::<u32>();
            std::mem::forget(tx); // never sent on, never poisoned
            let _h = Builder::new().name("leaker").spawn(move || rx.recv().ok());
            hoare::sleep_for(Duration::from_millis(20));
        });
}

#[test]
fn the_leak_report_names_processes_blocked_at_shutdown() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "leak_child", "--ignored", "--nocapture"])
        .env("HOARE_LEAK_CHILD", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("still blocked when the root process returned"),
        "{err}"
    );
    assert!(
        err.contains("process 'leaker'") && err.contains("recv on channel 'left-open'"),
        "{err}"
    );
}

#[test]
fn the_stall_report_finds_a_partial_deadlock_while_the_program_goes_on() {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<Report>>> = Arc::default();
    let s = seen.clone();
    let seen_in = seen.clone();
    let names_stuck1 = move || {
        seen_in
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.blocked().iter().any(|b| b.name() == Some("stuck1")))
    };
    let got = Runtime::builder()
        .workers(2)
        .stall_report_with(Duration::from_millis(50), move |r| {
            s.lock().unwrap().push(r.clone())
        })
        .build()
        .try_run(|| {
            // Two processes stuck on each other...
            let (a_tx, a_rx) = Channel::builder().name("x").one2one::<u8>();
            let (b_tx, b_rx) = Channel::builder().name("y").one2one::<u8>();
            let _p = Builder::new().name("stuck1").spawn(move || {
                a_tx.send(1).ok();
                b_rx.recv().ok();
            });
            let _q = Builder::new().name("stuck2").spawn(move || {
                b_tx.send(1).ok();
                a_rx.recv().ok();
            });
            // ...while the rest of the program keeps working (timers pending: not a
            // global deadlock), for 40 ticks and until the report has come: the
            // detector looks only while every worker sleeps, which a loaded
            // machine may not show it within 40 ticks (the 60 s only turn a
            // missing report into a failure).
            let t0 = std::time::Instant::now();
            let mut ticks = 0;
            while ticks < 40 || (!names_stuck1() && t0.elapsed() < Duration::from_secs(60)) {
                hoare::sleep_for(Duration::from_millis(10));
                ticks += 1;
            }
            ticks >= 40
        });
    assert_eq!(got, Ok(true));
    let reports = seen.lock().unwrap();
    let r = reports
        .iter()
        .find(|r| r.blocked().iter().any(|b| b.name() == Some("stuck1")))
        .unwrap_or_else(|| panic!("no stall report names stuck1: {reports:?}"));
    assert_eq!(r.kind(), ReportKind::Stall);
    let text = r.to_string();
    assert!(
        text.contains("process 'stuck2'") && text.contains("send on channel"),
        "{text}"
    );
    // Each wait is reported once.
    let n = reports
        .iter()
        .filter(|r| r.blocked().iter().any(|b| b.name() == Some("stuck1")))
        .count();
    assert_eq!(n, 1, "{reports:?}");
}

#[test]
fn a_broadcast_reader_waiting_for_ever_is_reported() {
    let r = deadlock(2, || {
        let (tx, rx) = hoare::chan::broadcast::<u32>();
        let _keep = tx;
        rx.recv().ok();
    });
    let text = r.to_string();
    assert!(
        text.contains("recv on broadcast channel created at"),
        "{text}"
    );
}

/// A process waiting for a socket waits for the outside world: never a deadlock,
/// however long the peer takes (here a plain thread that connects after 200 ms),
/// whether it blocks in `accept` or in an alt over the listener's readable guard.
#[cfg(feature = "net")]
#[test]
fn waiting_for_a_socket_is_not_a_deadlock() {
    for use_alt in [false, true] {
        let got = Runtime::builder().workers(2).build().try_run(move || {
            let l = hoare::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = l.local_addr().unwrap();
            let t = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                std::net::TcpStream::connect(addr).unwrap()
            });
            if use_alt {
                let (_keep, never) = hoare::one2one::<u8>();
                let ready = l.readable().unwrap();
                alt! {
                    recv(never) -> _ => panic!("nothing is sent on it"),
                    recv(ready) -> _ => {},
                }
            }
            let (_s, _) = l.accept().unwrap();
            drop(t.join().unwrap());
            true
        });
        assert_eq!(got, Ok(true), "alt: {use_alt}");
    }
}

/// Five philosophers as boxed `par` branches (the channel ends each captured
/// stay in its box, on the heap), each holding its left fork when all try
/// their right: the report shows the wait-for cycle. Fails when the search for
/// the ends a process holds looks only at its stack (`Proc::captures` not
/// scanned): the philosophers' stacks hold only the channel they wait on.
#[test]
fn five_philosophers_as_par_branches_report_their_cycle() {
    for workers in [1, 2] {
        let r = deadlock(workers, || seated_college(5));
        assert!(r.cycle().is_some(), "no wait-for cycle:\n{r}");
    }
}
