//! Bad input gets a clear error, never a panic deep inside or silent misbehaviour
//! (issue 10 §4): durations too long to add to an `Instant`, absurd stack sizes,
//! worker counts out of range (from the builder or `HOARE_WORKERS`), and a worker
//! thread the OS refuses.

mod common_rt;

use common_rt::Gate;
use hoare::chan::{Buffer, Channel};
use hoare::{alt, Alt, Builder, Date, Egg, Repeat, Runtime, Timer, MAX_STACK_SIZE, MAX_WORKERS};
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn rt(workers: usize) -> Runtime {
    Runtime::builder().workers(workers).build()
}

fn child_mode() -> Option<String> {
    std::env::var("HOARE_TEST_CHILD").ok()
}

/// Runs test `test` of this binary in a child process (with `env`), which sees
/// `HOARE_TEST_CHILD=test` and so does the child's part.
fn run_child(test: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", test, "--nocapture", "--test-threads=1"]);
    c.env("HOARE_TEST_CHILD", test);
    c.env_remove("HOARE_WORKERS");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Spawns `sleep` in a process and checks, a while later, that it is still
/// asleep (it neither returned nor panicked). The runtime then shuts down and
/// unwinds it.
fn stays_asleep(sleep: impl FnOnce() + Send + 'static) {
    rt(1).run(move || {
        let woke = Arc::new(AtomicBool::new(false));
        let w = woke.clone();
        let h = hoare::spawn(move || {
            sleep();
            w.store(true, Ordering::SeqCst);
        });
        hoare::sleep_for(Duration::from_millis(50));
        assert!(!h.is_finished(), "the sleep ended (returned or panicked)");
        assert!(!woke.load(Ordering::SeqCst));
    });
}

// ---------------------------------------------------------------- durations

#[test]
fn sleep_for_duration_max_sleeps_instead_of_panicking() {
    stays_asleep(|| hoare::sleep_for(Duration::MAX));
    stays_asleep(|| hoare::timer::sleep_for(Duration::MAX));
    stays_asleep(|| Egg::new(Duration::MAX).sleep());
    stays_asleep(|| Repeat::new(Duration::MAX).sleep());
    stays_asleep(|| Date::after(Duration::MAX).sleep());
    let mut d = Duration::MAX;
    stays_asleep(move || d.sleep());
}

#[test]
fn an_alt_with_only_a_duration_max_timeout_sleeps() {
    stays_asleep(|| alt! { after(Duration::MAX) => {} });
    stays_asleep(|| {
        let mut a = Alt::new();
        a.timeout(Duration::MAX, || ());
        a.select();
    });
}

/// The alt registers (nothing is ready when it starts), so it asks every timer
/// for its deadline; the value arrives later and is chosen.
#[test]
fn alt_timeouts_of_duration_max_wait_for_the_other_guard() {
    rt(1).run(|| {
        for round in 0..6u32 {
            let (tx, rx) = Channel::builder().one2one::<u32>();
            let h = hoare::spawn(move || {
                hoare::sleep_for(Duration::from_millis(20));
                tx.send(round).unwrap();
            });
            let mut egg = Egg::new(Duration::MAX);
            let mut repeat = Repeat::new(Duration::MAX);
            let got = match round {
                0 => alt! { recv(rx) -> v => v.ok(), after(Duration::MAX) => None },
                1 => alt! { recv(rx) -> v => v.ok(), after(&mut egg) => None },
                2 => alt! { recv(rx) -> v => v.ok(), after(&mut repeat) => None },
                3 => alt! { recv(rx) -> v => v.ok(), after(Date::after(Duration::MAX)) => None },
                4 => {
                    let far = hoare::timer::deadline_after(Duration::MAX);
                    alt! { recv(rx) -> v => v.ok(), after(far) => None }
                }
                _ => {
                    let mut a = Alt::new();
                    a.recv(&rx, |v| v.ok());
                    a.timeout(Duration::MAX, || None);
                    a.select().output
                }
            };
            assert_eq!(got, Some(round));
            h.join().unwrap();
        }
    });
}

/// `*_timeout(Duration::MAX)` waits (for ever, in practice) on every flavour.
#[test]
fn timed_channel_operations_with_duration_max() {
    rt(2).run(|| {
        for buffer in [
            Buffer::Rendezvous,
            Buffer::Bounded(1),
            Buffer::Overwriting(1),
            Buffer::Unbounded,
        ] {
            let (tx, rx) = Channel::builder().buffer(buffer).one2one::<u32>();
            let (tx2, rx2) = Channel::builder().buffer(buffer).one2one::<u32>();
            let h = hoare::spawn(move || {
                hoare::sleep_for(Duration::from_millis(10));
                tx.send_timeout(1, Duration::MAX).unwrap();
                let far = hoare::timer::deadline_after(Duration::MAX);
                let v = rx2.recv_with_deadline(far, |v| v).unwrap();
                (tx, v)
            });
            assert_eq!(rx.recv_timeout(Duration::MAX), Ok(1));
            hoare::sleep_for(Duration::from_millis(10));
            tx2.send_timeout(2, Duration::MAX).unwrap();
            let (_tx, v) = h.join().unwrap();
            assert_eq!(v, 2);
        }
    });
}

// ---------------------------------------------------------------- stack sizes

#[test]
fn absurd_stack_sizes_are_errors() {
    rt(1).run(|| {
        for thread in [false, true] {
            for size in [usize::MAX, usize::MAX - 4095, 1 << 62, MAX_STACK_SIZE + 1] {
                let ran = Arc::new(AtomicBool::new(false));
                let r = ran.clone();
                let e = Builder::new()
                    .stack_size(size)
                    .thread(thread)
                    .try_spawn(move || r.store(true, Ordering::SeqCst))
                    .expect_err("an absurd stack size");
                assert_eq!(e.kind(), ErrorKind::InvalidInput, "{size}: {e}");
                assert!(e.to_string().contains("larger than the largest"), "{e}");
                assert!(!ran.load(Ordering::SeqCst));
            }
        }
        let e = Builder::new()
            .thread(true)
            .name("a\0b")
            .try_spawn(|| ())
            .expect_err("a NUL in a thread's name");
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        hoare::scope(|s| {
            let e = s
                .try_spawn_with(Builder::new().stack_size(usize::MAX), || ())
                .err()
                .expect("an absurd stack size");
            assert_eq!(e.kind(), ErrorKind::InvalidInput);
        });
        // The largest allowed size works (it costs address space only).
        let h = Builder::new().stack_size(MAX_STACK_SIZE).try_spawn(|| {
            let buf = [3u8; 4 << 20];
            std::hint::black_box(&buf)[12345]
        });
        assert_eq!(h.expect("the largest size").join().unwrap(), 3);
        // Ordinary spawns carry on.
        assert_eq!(hoare::spawn(|| 7).join().unwrap(), 7);
    });
}

#[test]
fn runtime_settings_out_of_range_are_errors() {
    for b in [
        Runtime::builder().workers(1).stack_size(usize::MAX),
        Runtime::builder().workers(1).stack_size(MAX_STACK_SIZE + 1),
        Runtime::builder().workers(0),
        Runtime::builder().workers(MAX_WORKERS + 1),
        Runtime::builder().workers(100_000),
        Runtime::builder().workers(1).thread_name("bad\0name"),
    ] {
        let e = b.try_build().expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().starts_with("hoare: "), "{e}");
    }
    assert_eq!(rt(1).run(|| 5), 5);
}

/// The guard pages of this kernel's stacks: `MADV_GUARD_INSTALL` needs Linux
/// 6.13; older kernels use `mprotect`, one mapping per guard.
fn kernel_has_guard_install() -> bool {
    let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut it = r
        .trim()
        .split(['.', '-'])
        .map(|x| x.parse::<u32>().unwrap_or(0));
    let (major, minor) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    (major, minor) >= (6, 13)
}

fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn child_failed_spawn_then_many() {
    if child_mode().as_deref() != Some("child_failed_spawn_then_many") {
        return;
    }
    const N: usize = 40_000;
    rt(1).run(|| {
        // The first stack the OS process maps: once, this switched every later
        // guard to `mprotect` (one mapping each) for good.
        let e = Builder::new()
            .stack_size(1 << 62)
            .try_spawn(|| ())
            .expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        let before = mappings();
        let gate = Arc::new(Gate::default());
        let hs: Vec<_> = (0..N)
            .map(|_| {
                let g = gate.clone();
                hoare::spawn(move || g.wait())
            })
            .collect();
        hoare::yield_now();
        let grown = mappings().saturating_sub(before);
        println!("CHILD mappings grew by {grown} for {N} blocked processes");
        assert!(
            grown < 1000,
            "guards went to mprotect: {grown} new mappings"
        );
        gate.open();
        for h in hs {
            h.join().unwrap();
        }
    });
    println!("CHILD ok");
}

/// A spawn with an absurd stack size fails on its own: it does not switch the
/// whole OS process's guard pages to `mprotect`, after which ordinary spawns
/// failed at ~32,640 processes (`vm.max_map_count`).
#[test]
fn a_failed_spawn_does_not_change_how_guards_are_installed() {
    if child_mode().is_some() || !kernel_has_guard_install() {
        return;
    }
    let out = run_child("child_failed_spawn_then_many", &[]);
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && so.contains("CHILD ok"),
        "{so}\n{se}"
    );
}

/// `VmSize` of this OS process, in bytes.
fn vm_size() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmSize:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn child_address_space_limit() {
    if child_mode().as_deref() != Some("child_address_space_limit") {
        return;
    }
    const N: usize = 6_000;
    // 512 MiB of address space left, before the runtime maps anything: a stack
    // slab (1 GiB whole) does not fit, and 6,000 default stacks (about 800 MiB
    // of slots) do not fit in what is left, so the pool maps smaller slabs, and
    // keeps mapping them as earlier ones fill up, until the limit.
    let limit = (vm_size() + (512 << 20)) as libc::rlim_t;
    let lim = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: a plain system call with a valid limit block.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0);
    rt(2).run(|| {
        let gate = Arc::new(Gate::default());
        let mut hs = Vec::new();
        let mut refused = None;
        for i in 0..N {
            let g = gate.clone();
            match Builder::new().try_spawn(move || {
                g.wait();
                i
            }) {
                Ok(h) => hs.push(h),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        let e = refused.expect("the limit is reached at last");
        assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}");
        let n = hs.len();
        println!("CHILD {n} processes under the limit; then {e}");
        assert!(
            n > 2_000,
            "only {n} processes under a 512 MiB address space limit"
        );
        gate.open();
        for (i, h) in hs.into_iter().enumerate() {
            assert_eq!(h.join().unwrap(), i);
        }
    });
    println!("CHILD ok");
}

/// Under an address space limit that a whole stack slab exceeds (`ulimit -v`,
/// or strict overcommit accounting, which ignores `MAP_NORESERVE`), processes
/// still spawn, on slabs mapped smaller, until the limit itself is reached,
/// and then a spawn fails with an error, not a crash. Catches a pool that
/// only maps whole slabs (no spawn at all: checked once).
#[test]
fn stacks_fit_under_an_address_space_limit() {
    if child_mode().is_some() {
        return;
    }
    let out = run_child("child_address_space_limit", &[]);
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && so.contains("CHILD ok"),
        "{so}\n{se}"
    );
}

// ---------------------------------------------------------------- workers

#[test]
fn child_bad_workers() {
    if child_mode().as_deref() != Some("child_bad_workers") {
        return;
    }
    // Two runtimes and a direct look: one warning in all.
    let a = Runtime::new().run(|| hoare::spawn(|| 20).join().unwrap());
    let b = Runtime::new().workers();
    let d = hoare::default_workers();
    println!("CHILD ok {a} workers={b} default={d}");
}

#[test]
fn bad_hoare_workers_values_warn_once_and_use_the_cores() {
    if child_mode().is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for v in ["0", "-1", "abc", "100000", "65535"] {
        let out = run_child("child_bad_workers", &[("HOARE_WORKERS", v)]);
        let so = String::from_utf8_lossy(&out.stdout);
        let se = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "HOARE_WORKERS={v}: {so}\n{se}");
        assert!(
            so.contains(&format!("CHILD ok 20 workers={cores} default={cores}")),
            "HOARE_WORKERS={v}: {so}"
        );
        let warnings: Vec<&str> = se.lines().filter(|l| l.contains("HOARE_WORKERS")).collect();
        assert_eq!(warnings.len(), 1, "HOARE_WORKERS={v}: {se}");
        assert!(
            warnings[0].starts_with("hoare: warning: ignoring HOARE_WORKERS="),
            "{}",
            warnings[0]
        );
    }
    // Good values and an empty one: no warning.
    for (v, want) in [("3", 3), ("", cores), (" 2 ", 2)] {
        let out = run_child("child_bad_workers", &[("HOARE_WORKERS", v)]);
        let so = String::from_utf8_lossy(&out.stdout);
        let se = String::from_utf8_lossy(&out.stderr);
        assert!(
            so.contains(&format!("workers={want} default={want}")),
            "{v:?}: {so}"
        );
        assert!(!se.contains("HOARE_WORKERS"), "{v:?}: {se}");
    }
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

#[test]
fn child_worker_start_fails() {
    if child_mode().as_deref() != Some("child_worker_start_fails") {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect("VmSize");
    let before = threads();
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain calls with valid pointers.
    unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut old) };
    // Room for a few 2 MiB worker stacks, not for 64.
    let tight = libc::rlimit {
        rlim_cur: (vm_kb + 24 * 1024) * 1024,
        rlim_max: old.rlim_max,
    };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &tight) }, 0);
    let r = Runtime::builder().workers(64).try_build();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &old) }, 0);
    let e = r.expect_err("64 workers in 24 MiB of address space");
    println!("CHILD error: {e}");
    assert!(e.to_string().contains("cannot start worker thread"), "{e}");
    // The workers that did start were stopped and joined, not left spinning.
    assert_eq!(
        threads(),
        before,
        "workers of the failed runtime are still alive"
    );
    assert_eq!(rt(2).run(|| 6 * 7), 42);
    println!("CHILD ok");
}

/// If worker N cannot start, `build` returns the error and the workers already
/// started stop (they used to run on until the program exited).
#[test]
fn a_worker_that_cannot_start_stops_the_others() {
    if child_mode().is_some() {
        return;
    }
    let out = run_child("child_worker_start_fails", &[]);
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && so.contains("CHILD ok"),
        "{so}\n{se}"
    );
}

/// What a destructor that spawns sees when the shutdown sweep unwinds its
/// process.
type Seen = (
    Option<(ErrorKind, String)>,
    Result<i32, hoare::ProcessError>,
);

struct SpawnsOnDrop(std::sync::mpsc::Sender<Seen>);

impl Drop for SpawnsOnDrop {
    fn drop(&mut self) {
        let e = Builder::new().try_spawn(|| 1).err();
        let h = hoare::spawn(|| 2);
        let seen = (e.map(|e| (e.kind(), e.to_string())), h.join());
        let _ = self.0.send(seen);
    }
}

/// A spawn into a runtime that has shut down (here: from a destructor the
/// shutdown sweep runs) is refused: `Builder::spawn` returns an error and
/// `spawn` a handle that reports `Cancelled`. It used to queue a process nobody
/// would ever run, whose join blocked for ever.
#[test]
fn spawn_after_shutdown_is_an_error_or_a_cancelled_handle() {
    let (tx, rx) = std::sync::mpsc::channel();
    rt(1).run(move || {
        drop(hoare::spawn(move || {
            let _g = SpawnsOnDrop(tx);
            hoare::sleep_for(Duration::from_secs(3600));
        }));
        hoare::sleep_for(Duration::from_millis(20));
    });
    let (e, joined) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the destructor ran");
    let (kind, msg) = e.expect("Builder::spawn after shutdown is an error");
    assert_eq!(kind, ErrorKind::Other);
    assert!(msg.contains("the runtime has shut down"), "{msg}");
    assert_eq!(joined, Err(hoare::ProcessError::Cancelled));
}

#[test]
fn deadline_after_clamps() {
    let t = Instant::now();
    let far = hoare::timer::add_clamped(t, Duration::MAX);
    assert_eq!(far, t + hoare::timer::FAR_FUTURE);
    assert!(hoare::timer::deadline_after(Duration::MAX) >= far);
}

/// CPU time (user + system, in clock ticks) of this OS process's threads whose
/// name starts with `prefix`, from /proc.
fn cpu_ticks_of_threads(prefix: &str) -> u64 {
    let mut total = 0;
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if !comm.starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        // The fields after the command (which is in parentheses): utime and stime
        // are the 12th and 13th of them.
        let rest = stat.rsplit(')').next().unwrap_or("");
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 12 {
            total += f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
        }
    }
    total
}

/// A deadline centuries away (beyond what the timers' nanosecond clock can count) is a long sleep, not a due timer: the worker sleeps instead of spinning.
/// (Its nanoseconds used to wrap to a small number.)
#[test]
fn a_deadline_centuries_away_does_not_make_a_worker_spin() {
    let rt = Runtime::builder()
        .workers(1)
        .thread_name("far-deadline")
        .build();
    rt.run(|| {
        // Just past what 64 bits of nanoseconds hold (~584.5 years): wrapped, it
        // would read as a few milliseconds after the runtime started.
        let far = Instant::now() + Duration::from_nanos(u64::MAX) + Duration::from_millis(5);
        let _sleeper = hoare::spawn(move || hoare::sleep_until(far));
        // Measured from a thread process, so that no other timer is pending.
        let spent = hoare::spawn_blocking(|| {
            std::thread::sleep(Duration::from_millis(50));
            let before = cpu_ticks_of_threads("far-deadline");
            std::thread::sleep(Duration::from_millis(500));
            cpu_ticks_of_threads("far-deadline") - before
        })
        .join()
        .unwrap();
        // A spinning worker burns ~50 ticks (10 ms each) in 500 ms.
        assert!(spent < 20, "the worker spent {spent} ticks in 500 ms");
    });
}
