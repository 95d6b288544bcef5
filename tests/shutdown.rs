//! Shutdown (docs/semantics.md#shutdown): processes still blocked when the root
//! returns are unwound, and no wait leaves a registration behind that points into
//! an unwound stack.
//!
//! Each scenario runs in a child process of this test binary, so a crash (the bug
//! these tests catch is a segfault) fails one test with its signal instead of
//! taking the whole binary down.

use hoare::{Channel, Runtime};
use std::time::Duration;

fn child_mode() -> Option<String> {
    std::env::var("HOARE_TEST_CHILD").ok()
}

/// Runs the test `name` of this binary in a child process and returns its output;
/// a child still running after two minutes (a hang) is killed.
fn run_child(name: &str) -> std::process::Output {
    use std::process::{Command, Stdio};
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", name, "--nocapture", "--test-threads=1"]);
    c.env("HOARE_TEST_CHILD", name);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    let watchdog = std::thread::spawn(move || {
        let t = std::time::Instant::now();
        while !d.load(std::sync::atomic::Ordering::SeqCst) {
            if t.elapsed() > Duration::from_secs(120) {
                // SAFETY: plain kill(2) of our own child.
                unsafe { libc_kill(pid as i32, 9) };
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    watchdog.join().unwrap();
    out
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// Runs `name` as a child and checks that it printed "shut down cleanly" and
/// exited successfully.
fn expect_clean(name: &str) {
    let out = run_child(name);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("shut down cleanly"),
        "child {name} failed: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}

/// The reproduction, with the blocking operation of process A given by
/// `block`: on one worker, C holds the only sender of a channel and sleeps; A
/// blocks on the channel's (leaked) receiver; 4,200 newer processes sleep (enough
/// that the sweep hands A's stack back to the OS before C is unwound, so a stale
/// entry reads zeroed memory). The root returns; unwinding C drops the sender,
/// which poisons the channel and wakes whatever is still registered there.
fn blocked_at_shutdown(block: fn(hoare::Receiver<u32, hoare::chan::One>)) {
    Runtime::builder().workers(1).build().run(move || {
        let (tx, rx) = hoare::one2one::<u32>();
        let _c = hoare::spawn(move || {
            let _tx = tx;
            hoare::sleep_for(Duration::from_secs(3600));
        });
        let _a = hoare::spawn(move || block(rx));
        for _ in 0..4200 {
            let _ = hoare::spawn(|| hoare::sleep_for(Duration::from_secs(3600)));
        }
        hoare::sleep_for(Duration::from_millis(200));
    });
    println!("shut down cleanly");
}

macro_rules! shutdown_case {
    ($test:ident, $child:ident, $block:expr) => {
        #[test]
        fn $child() {
            if child_mode().as_deref() != Some(stringify!($child)) {
                return;
            }
            blocked_at_shutdown($block);
        }

        #[test]
        fn $test() {
            if child_mode().is_some() {
                return;
            }
            expect_clean(stringify!($child));
        }
    };
}

shutdown_case!(
    alt_blocked_at_shutdown_leaves_no_registration,
    child_alt,
    |rx| {
        let rx = Box::leak(Box::new(rx));
        hoare::alt! { recv(rx) -> _v => {} }
    }
);

shutdown_case!(
    alt_with_timeout_blocked_at_shutdown_leaves_no_registration,
    child_alt_timeout,
    |rx| {
        let rx = Box::leak(Box::new(rx));
        hoare::alt! {
            recv(rx) -> _v => {},
            after(Duration::from_secs(3600)) => {},
        }
    }
);

shutdown_case!(
    builder_alt_blocked_at_shutdown_leaves_no_registration,
    child_builder_alt,
    |rx| {
        let rx = Box::leak(Box::new(rx));
        let _ = hoare::Alt::new().recv(&*rx, |_| ()).select();
    }
);

shutdown_case!(
    recv_any_blocked_at_shutdown_leaves_no_registration,
    child_recv_any,
    |rx| {
        let rxs: &'static [hoare::Receiver<u32, hoare::chan::One>] =
            Box::leak(vec![rx].into_boxed_slice());
        let mut set = hoare::RecvAny::new(rxs);
        let _ = set.select();
        // Not reached; the set would be dropped here on a normal return.
    }
);

shutdown_case!(
    leaked_recv_any_blocked_at_shutdown_leaves_no_registration,
    child_leaked_recv_any,
    |rx| {
        let rxs: &'static [hoare::Receiver<u32, hoare::chan::One>] =
            Box::leak(vec![rx].into_boxed_slice());
        let set = Box::leak(Box::new(hoare::RecvAny::new(rxs)));
        let _ = set.select();
    }
);

shutdown_case!(
    alting_barrier_guard_blocked_at_shutdown_leaves_no_registration,
    child_alting_barrier,
    |rx| {
        let rx = Box::leak(Box::new(rx));
        let (_b, mut ends) = hoare::AltingBarrier::with_enrolled(2);
        let mut mine = ends.pop().unwrap();
        let other = ends.pop().unwrap();
        std::mem::forget(other); // never offers: the barrier never completes
        hoare::alt! {
            recv(rx) -> _v => {},
            barrier(&mut mine) => {},
        }
    }
);

shutdown_case!(
    recv_blocked_at_shutdown_leaves_no_registration,
    child_recv,
    |rx| {
        let rx = Box::leak(Box::new(rx));
        let _ = rx.recv();
    }
);

shutdown_case!(
    recv_timeout_blocked_at_shutdown_leaves_no_registration,
    child_recv_timeout,
    |rx| {
        let rx = Box::leak(Box::new(rx));
        let _ = rx.recv_timeout(Duration::from_secs(3600));
    }
);

shutdown_case!(
    barrier_sync_blocked_at_shutdown_leaves_no_registration,
    child_barrier,
    |rx| {
        let _rx = rx;
        let (_b, mut ends) = hoare::Barrier::with_enrolled(2);
        let mut mine = ends.pop().unwrap();
        std::mem::forget(ends);
        mine.sync();
    }
);

/// A bounded channel too: the waiting receiver sits in the buffered flavour's
/// queue.
#[test]
fn child_buffered_alt() {
    if child_mode().as_deref() != Some("child_buffered_alt") {
        return;
    }
    Runtime::builder().workers(1).build().run(move || {
        let (tx, rx) = Channel::builder().bounded(4).one2one::<u32>();
        let _c = hoare::spawn(move || {
            let _tx = tx;
            hoare::sleep_for(Duration::from_secs(3600));
        });
        let _a = hoare::spawn(move || {
            let rx = Box::leak(Box::new(rx));
            hoare::alt! { recv(rx) -> _v => {} }
        });
        for _ in 0..4200 {
            let _ = hoare::spawn(|| hoare::sleep_for(Duration::from_secs(3600)));
        }
        hoare::sleep_for(Duration::from_millis(200));
    });
    println!("shut down cleanly");
}

#[test]
fn buffered_alt_blocked_at_shutdown_leaves_no_registration() {
    if child_mode().is_some() {
        return;
    }
    expect_clean("child_buffered_alt");
}

/// Destructors that block while the sweep unwinds their process: every blocking
/// operation fails (as on a poisoned channel, handing the value back) or returns at
/// once, instead of parking a process that is being unwound (which aborted the
/// program).
#[test]
fn destructors_that_block_during_the_sweep_do_not_hang_or_abort() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    struct Blocker {
        tx: hoare::Sender<u32, hoare::chan::One>,
        rx: hoare::Receiver<u32, hoare::chan::One>,
        join: Option<hoare::JoinHandle<()>>,
        end: Option<hoare::BarrierEnd>,
        seen: Arc<AtomicUsize>,
    }
    impl Drop for Blocker {
        fn drop(&mut self) {
            // A rendezvous send nobody takes: fails, the value comes back.
            match self.tx.send(7) {
                Err(e) => assert_eq!(e.into_inner(), 7),
                Ok(()) => panic!("a send nobody received succeeded"),
            }
            assert!(self.rx.recv().is_err());
            assert!(self.rx.recv_timeout(Duration::from_secs(3600)).is_err());
            let r = hoare::alt! {
                recv(self.rx) -> v => v.is_err(),
                after(Duration::from_secs(3600)) => true,
            };
            assert!(r);
            let r = hoare::alt! { recv(self.rx) -> v => v.is_err() };
            assert!(r);
            if let Some(h) = self.join.take() {
                assert!(h.join().is_err());
            }
            if let Some(mut e) = self.end.take() {
                e.sync();
                std::mem::forget(e);
            }
            hoare::sleep_for(Duration::from_secs(3600));
            self.seen.fetch_add(1, Ordering::SeqCst);
        }
    }
    let seen = Arc::new(AtomicUsize::new(0));
    for workers in [1, 2] {
        let s = seen.clone();
        Runtime::builder().workers(workers).build().run(move || {
            let started = Arc::new(AtomicUsize::new(0));
            for _ in 0..50 {
                let (s, started) = (s.clone(), started.clone());
                let (tx, keep_rx) = hoare::one2one::<u32>();
                let (keep_tx, rx) = hoare::one2one::<u32>();
                let (_b, mut ends) = hoare::Barrier::with_enrolled(2);
                let end = ends.pop();
                std::mem::forget(ends);
                let join = Some(hoare::spawn(|| hoare::sleep_for(Duration::from_secs(3600))));
                let _ = hoare::spawn(move || {
                    let _keep = (keep_rx, keep_tx);
                    let b = Blocker {
                        tx,
                        rx,
                        join,
                        end,
                        seen: s,
                    };
                    started.fetch_add(1, Ordering::SeqCst);
                    // Blocked here when the root returns.
                    let _ = b.rx.recv();
                    unreachable!("nobody sends");
                });
            }
            while started.load(Ordering::SeqCst) < 50 {
                hoare::sleep_for(Duration::from_millis(1));
            }
        });
    }
    assert_eq!(seen.load(Ordering::SeqCst), 100);
}

/// An extended rendezvous under way at shutdown: the writer waits for the
/// reader's closure, which is itself blocked. Whichever of the two the sweep
/// unwinds first, nobody writes into a stack that is gone (the writer's stack is
/// kept while the reader may still wake it), and the program shuts down. With
/// `writer_first` the writer is queued when the reader arrives (the reader claims
/// it and holds the claim while its closure runs); otherwise the reader is queued
/// and the writer hands the value over and waits on a private waiter.
#[test]
fn child_extended_rendezvous() {
    if child_mode().as_deref() != Some("child_extended_rendezvous") {
        return;
    }
    for writer_first in [false, true] {
        for newer_writer in [false, true] {
            eprintln!("case writer_first={writer_first} newer_writer={newer_writer}");
            Runtime::builder().workers(1).build().run(move || {
                let (tx, rx) = hoare::one2one::<u64>();
                let (hold, stuck) = hoare::one2one::<u64>();
                // Whoever blocks second sleeps first.
                let pause = |late: bool| {
                    if late {
                        hoare::sleep_for(Duration::from_millis(20));
                    }
                };
                let reader = move || {
                    pause(writer_first);
                    let _ = rx.recv_with(|v| {
                        // Blocks inside the closure, holding the writer.
                        let _ = stuck.recv();
                        v
                    });
                };
                let writer = move || {
                    pause(!writer_first);
                    let _ = tx.send(41);
                };
                // The sweep unwinds the newer (later spawned) process first.
                if newer_writer {
                    let _ = hoare::spawn(reader);
                    let _ = hoare::spawn(writer);
                } else {
                    let _ = hoare::spawn(writer);
                    let _ = hoare::spawn(reader);
                }
                for _ in 0..4200 {
                    let _ = hoare::spawn(|| hoare::sleep_for(Duration::from_secs(3600)));
                }
                hoare::sleep_for(Duration::from_millis(100));
                std::mem::forget(hold); // the closure stays blocked
            });
        }
    }
    println!("shut down cleanly");
}

#[test]
fn extended_rendezvous_under_way_at_shutdown() {
    if child_mode().is_some() {
        return;
    }
    expect_clean("child_extended_rendezvous");
}

/// Runs `name` as a child and returns (success, stdout, stderr).
fn child_output(name: &str) -> (bool, String, String) {
    let out = run_child(name);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A process that computes without ever blocking or yielding keeps its worker:
/// shutdown waits for it, and names it (with where it was spawned) after a grace
/// period instead of hanging silently.
#[test]
fn child_compute_loop_at_shutdown() {
    if child_mode().as_deref() != Some("child_compute_loop_at_shutdown") {
        return;
    }
    Runtime::builder().workers(2).build().run(|| {
        let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = started.clone();
        let _spinner = hoare::spawn(move || {
            s.store(true, std::sync::atomic::Ordering::SeqCst);
            let t = std::time::Instant::now();
            while t.elapsed() < Duration::from_millis(1800) {
                std::hint::spin_loop();
            }
        });
        while !started.load(std::sync::atomic::Ordering::SeqCst) {
            hoare::sleep_for(Duration::from_millis(1));
        }
    });
    println!("shut down cleanly");
}

#[test]
fn a_process_that_keeps_its_worker_is_named_at_shutdown() {
    if child_mode().is_some() {
        return;
    }
    let (ok, stdout, stderr) = child_output("child_compute_loop_at_shutdown");
    assert!(
        ok && stdout.contains("shut down cleanly"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("shutdown is waiting for worker")
            && stderr.contains("without blocking or yielding")
            && stderr.contains("tests/shutdown.rs:"),
        "stderr: {stderr}"
    );
}

/// With a shutdown timeout, shutdown gives up on such a process and returns.
#[test]
fn child_compute_loop_shutdown_timeout() {
    if child_mode().as_deref() != Some("child_compute_loop_shutdown_timeout") {
        return;
    }
    let t = std::time::Instant::now();
    Runtime::builder()
        .workers(2)
        .shutdown_timeout(Duration::from_millis(300))
        .build()
        .run(|| {
            let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let s = started.clone();
            let _spinner = hoare::spawn(move || {
                s.store(true, std::sync::atomic::Ordering::SeqCst);
                loop {
                    std::hint::spin_loop();
                }
            });
            while !started.load(std::sync::atomic::Ordering::SeqCst) {
                hoare::sleep_for(Duration::from_millis(1));
            }
        });
    println!("returned after {:?}", t.elapsed());
    println!("shut down cleanly");
}

#[test]
fn shutdown_timeout_gives_up_on_a_process_that_keeps_its_worker() {
    if child_mode().is_some() {
        return;
    }
    let (ok, stdout, stderr) = child_output("child_compute_loop_shutdown_timeout");
    assert!(
        ok && stdout.contains("shut down cleanly"),
        "{stdout}\n{stderr}"
    );
    assert!(stderr.contains("shutdown gave up"), "stderr: {stderr}");
}

/// Shutdown waits for thread processes: one still sleeping (outside hoare) when
/// the root returns has finished when `run` returns.
#[test]
fn shutdown_waits_for_thread_processes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    Runtime::builder().workers(1).build().run(move || {
        let _t = hoare::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(200));
            d.store(true, Ordering::SeqCst);
        });
    });
    assert!(
        done.load(Ordering::SeqCst),
        "run returned before its thread process ended"
    );
}

/// A thread process blocked in a receive when the root returns: the sweep drops
/// the blocked process that held the channel's sender, which poisons it, and the
/// thread process ends. One that starts a wait after the shutdown began is
/// cancelled (its receive fails at once instead of blocking for ever).
#[test]
fn thread_processes_blocked_in_hoare_end_at_shutdown() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let ended = Arc::new(AtomicUsize::new(0));
    let e = ended.clone();
    let t = std::time::Instant::now();
    Runtime::builder().workers(2).build().run(move || {
        // Blocked in recv; its sender is held by a process blocked for ever.
        let (tx, rx) = hoare::one2one::<u32>();
        let _holder = hoare::spawn(move || {
            let _tx = tx;
            hoare::sleep_for(Duration::from_secs(3600));
        });
        let e1 = e.clone();
        let _a = hoare::spawn_blocking(move || {
            assert!(rx.recv().is_err());
            e1.fetch_add(1, Ordering::SeqCst);
        });
        // Starts waiting only after the shutdown began; its sender is leaked.
        let (tx2, rx2) = hoare::one2one::<u32>();
        std::mem::forget(tx2);
        let e2 = e.clone();
        let _b = hoare::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(200));
            assert!(rx2.recv().is_err());
            assert!(rx2.recv_timeout(Duration::from_secs(3600)).is_err());
            hoare::sleep_for(Duration::from_secs(3600)); // returns at once
            e2.fetch_add(1, Ordering::SeqCst);
        });
        hoare::sleep_for(Duration::from_millis(50));
    });
    assert_eq!(ended.load(Ordering::SeqCst), 2);
    assert!(t.elapsed() < Duration::from_secs(60));
}

/// A thread process blocked outside hoare past the shutdown timeout is reported
/// and left running; `run` returns.
#[test]
fn child_thread_process_shutdown_timeout() {
    if child_mode().as_deref() != Some("child_thread_process_shutdown_timeout") {
        return;
    }
    Runtime::builder()
        .workers(1)
        .shutdown_timeout(Duration::from_millis(200))
        .build()
        .run(|| {
            let _t = hoare::Builder::new()
                .name("sleepy")
                .thread(true)
                .spawn(|| loop {
                    std::thread::sleep(Duration::from_secs(1));
                });
        });
    println!("shut down cleanly");
}

#[test]
fn shutdown_timeout_gives_up_on_a_thread_process() {
    if child_mode().is_some() {
        return;
    }
    let (ok, stdout, stderr) = child_output("child_thread_process_shutdown_timeout");
    assert!(
        ok && stdout.contains("shut down cleanly"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("shutdown gave up") && stderr.contains("'sleepy'"),
        "stderr: {stderr}"
    );
}
