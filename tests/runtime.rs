//! Runtime tests: spawn/join at scale, sleeping, PAR, scopes, panics, blocking,
//! several runtimes, pinning, thread processes, HOARE_WORKERS, stack overflow.

mod common_rt;

use common_rt::{Gate, Rng};
use hoare::{Builder, ProcessError, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn rt(workers: usize) -> Runtime {
    Runtime::builder().workers(workers).build()
}

#[test]
fn spawn_and_join_a_million() {
    let n = rt(2).run(|| {
        let mut total = 0u64;
        for batch in 0..100u64 {
            let hs: Vec<_> = (0..10_000u64)
                .map(|i| hoare::spawn(move || batch * 10_000 + i))
                .collect();
            total += hs.into_iter().map(|h| h.join().unwrap()).sum::<u64>();
        }
        total
    });
    assert_eq!(n, (0..1_000_000u64).sum::<u64>());
}

/// Blocks on `gate` `depth` calls deep, each level holding a buffer of its own;
/// afterwards returns the sum of all the levels' buffers (a clobbered frame
/// changes it).
#[inline(never)]
fn block_deep(gate: &Gate, depth: u64, seed: u64) -> u64 {
    let buf: [u64; 16] =
        std::array::from_fn(|i| seed.wrapping_mul(31).wrapping_add(i as u64 + depth));
    let below = if depth == 0 {
        gate.wait();
        0
    } else {
        block_deep(gate, depth - 1, seed)
    };
    std::hint::black_box(&buf)
        .iter()
        .sum::<u64>()
        .wrapping_add(below)
}

/// A release of thousands of processes at once queues them behind each other,
/// and a worker's queue that long asks the CPU for the next processes' headers
/// and stacks before it resumes them (`prefetch`: on a lone worker it looks at
/// the two behind the one it takes, on several at the one it takes). Processes
/// blocked at different depths (their stacks from a few lines to more than the
/// 2 KiB asked for) and processes that never ran must all resume intact, on
/// one worker and on two. The asking is a hint and cannot change a result: what
/// this catches is the code around it (a look past the queue's end, a header
/// read of the wrong process), with the processes' own checks of their frames.
#[test]
fn thousands_released_at_once_resume_with_their_frames_intact() {
    for workers in [1, 2] {
        rt(workers).run(|| {
            let n: u64 = 6_000;
            let gate = Arc::new(Gate::default());
            let blocked = Arc::new(AtomicUsize::new(0));
            let hs: Vec<_> = (0..n)
                .map(|i| {
                    let (gate, blocked) = (gate.clone(), blocked.clone());
                    hoare::spawn(move || {
                        blocked.fetch_add(1, Ordering::SeqCst);
                        (i, block_deep(&gate, i % 40, i))
                    })
                })
                .collect();
            while blocked.load(Ordering::SeqCst) < n as usize {
                hoare::yield_now();
            }
            // Spawned after the release is set up and never run before it: they
            // queue among the woken ones with the stacks spawn gave them.
            let late: Vec<_> = (0..3_000u64).map(|i| hoare::spawn(move || i * 3)).collect();
            gate.open();
            for h in hs {
                let (i, got) = h.join().unwrap();
                let want: u64 = (0..=i % 40)
                    .map(|d| {
                        (0..16u64)
                            .map(|k| i.wrapping_mul(31).wrapping_add(k + d))
                            .sum::<u64>()
                    })
                    .fold(0u64, |a, b| a.wrapping_add(b));
                assert_eq!(got, want, "process {i} on {workers} worker(s)");
            }
            let late: u64 = late.into_iter().map(|h| h.join().unwrap()).sum();
            assert_eq!(late, (0..3_000u64).map(|i| i * 3).sum::<u64>());
        });
    }
}

#[test]
fn hundred_thousand_sleepers_wake_on_time() {
    let early = rt(2).run(|| {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let hs: Vec<_> = (0..100_000)
            .map(|_| {
                let d = Duration::from_micros(rng.next() % 200_000);
                hoare::spawn(move || {
                    let deadline = Instant::now() + d;
                    hoare::sleep_until(deadline);
                    Instant::now() < deadline
                })
            })
            .collect();
        hs.into_iter()
            .filter(|_| true)
            .map(|h| h.join().unwrap())
            .filter(|&e| e)
            .count()
    });
    assert_eq!(early, 0, "processes woke before their deadline");
}

#[test]
fn sleep_for_sleeps() {
    rt(1).run(|| {
        let t = Instant::now();
        hoare::sleep_for(Duration::from_millis(20));
        assert!(t.elapsed() >= Duration::from_millis(20));
    });
    // And on a plain thread.
    let t = Instant::now();
    hoare::sleep_for(Duration::from_millis(5));
    assert!(t.elapsed() >= Duration::from_millis(5));
    hoare::yield_now();
}

#[test]
fn par_nested_three_deep() {
    let v = rt(2).run(|| {
        hoare::par_for(0..4u64, |a| {
            let (x, y) = hoare::par2(
                || hoare::par_for(0..3u64, |b| hoare::par3(|| a, || b, || 1).2 + a * 10 + b),
                || a,
            );
            x.iter().sum::<u64>() + y
        })
    });
    let expect: Vec<u64> = (0..4u64)
        .map(|a| (0..3u64).map(|b| 1 + a * 10 + b).sum::<u64>() + a)
        .collect();
    assert_eq!(v, expect);
}

#[test]
fn par_vec_in_order() {
    let v = rt(2).run(|| {
        let fs: Vec<hoare::ParFn<usize>> = (0..50usize)
            .map(|i| Box::new(move || i * 2) as hoare::ParFn<usize>)
            .collect();
        hoare::par(fs)
    });
    assert_eq!(v, (0..50).map(|i| i * 2).collect::<Vec<_>>());
}

#[test]
fn panic_reaches_the_joiner_with_its_message() {
    rt(2).run(|| {
        let h = hoare::spawn(|| -> u32 { panic!("boom {}", 42) });
        match h.join() {
            Err(ProcessError::Panicked { message }) => assert_eq!(message, "boom 42"),
            other => panic!("unexpected {other:?}"),
        }
        // The worker survived: more processes run.
        assert_eq!(hoare::spawn(|| 7).join().unwrap(), 7);
    });
}

#[test]
fn root_panic_propagates_or_is_returned() {
    let r = rt(1).try_run(|| -> () { panic!("root failed") });
    assert_eq!(r.unwrap_err().message(), Some("root failed"));
    let r = std::panic::catch_unwind(|| rt(1).run(|| -> () { panic!("again") }));
    assert!(r.is_err());
}

#[test]
fn scope_borrows_and_joins() {
    let mut data = vec![1u64, 2, 3, 4];
    let total = AtomicUsize::new(0);
    rt(2).run(|| {
        hoare::scope(|s| {
            for x in data.iter_mut() {
                let total = &total;
                s.spawn(move || {
                    hoare::yield_now();
                    *x *= 10;
                    total.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
    });
    assert_eq!(data, [10, 20, 30, 40]);
    assert_eq!(total.load(Ordering::SeqCst), 4);
}

#[test]
fn scope_body_panic_still_joins() {
    let done = AtomicUsize::new(0);
    let r = rt(2).try_run(|| {
        hoare::scope(|s| {
            for _ in 0..10 {
                let _ = s.spawn(|| {
                    hoare::sleep_for(Duration::from_millis(20));
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            panic!("body failed");
        })
    });
    assert_eq!(r.unwrap_err().message(), Some("body failed"));
    assert_eq!(done.load(Ordering::SeqCst), 10);
}

#[test]
fn two_hundred_thousand_blocked_then_released() {
    let n = rt(2).run(|| {
        let gate = Arc::new(Gate::default());
        let blocked = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..200_000usize)
            .map(|i| {
                let (gate, blocked) = (gate.clone(), blocked.clone());
                hoare::spawn(move || {
                    blocked.fetch_add(1, Ordering::SeqCst);
                    gate.wait();
                    i
                })
            })
            .collect();
        while blocked.load(Ordering::SeqCst) < 200_000 {
            hoare::sleep_for(Duration::from_millis(1));
        }
        gate.open();
        hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
    });
    assert_eq!(n, (0..200_000usize).sum::<usize>());
}

#[test]
fn several_runtimes_sequential_and_side_by_side() {
    for i in 0..5 {
        assert_eq!(
            rt(2).run(move || hoare::spawn(move || i + 1).join().unwrap()),
            i + 1
        );
    }
    let ts: Vec<_> = (0..2)
        .map(|k| {
            std::thread::spawn(move || {
                rt(2).run(move || {
                    let hs: Vec<_> = (0..10_000).map(|i| hoare::spawn(move || i * k)).collect();
                    hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
                })
            })
        })
        .collect();
    let sums: Vec<_> = ts.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(sums, [0, (0..10_000).sum::<usize>()]);
}

#[test]
fn pinned_processes_stay_on_their_worker() {
    rt(2).run(|| {
        let hs: Vec<_> = (0..20)
            .map(|i| {
                Builder::new().pinned(true).spawn(move || {
                    let w = hoare::core::park::worker_index();
                    for k in 0..50 {
                        if k % 2 == i % 2 {
                            hoare::yield_now();
                        } else {
                            hoare::sleep_for(Duration::from_micros(100));
                        }
                        assert_eq!(hoare::core::park::worker_index(), w, "pinned process moved");
                    }
                    w
                })
            })
            .collect();
        for h in hs {
            assert!(h.join().unwrap() < 2);
        }
    });
}

#[test]
fn thread_processes_block_their_thread() {
    rt(1).run(|| {
        let gate = Arc::new(Gate::default());
        let g2 = gate.clone();
        // A thread process blocks in a real syscall and on a gate (its thread parks).
        let t = hoare::spawn_blocking(move || {
            std::thread::sleep(Duration::from_millis(10));
            g2.wait();
            hoare::name()
        });
        let t2 = Builder::new().thread(true).name("io").spawn(|| {
            // A thread process can spawn and join coroutine processes.
            hoare::spawn(|| 5).join().unwrap() + hoare::name().map_or(0, |n| n.len())
        });
        // Meanwhile the single worker keeps running processes.
        assert_eq!(hoare::spawn(|| 1).join().unwrap(), 1);
        gate.open();
        assert_eq!(t.join().unwrap(), None);
        assert_eq!(t2.join().unwrap(), 7);
        let bad = hoare::spawn_blocking(|| -> () { panic!("thread boom") });
        assert_eq!(bad.join().unwrap_err().message(), Some("thread boom"));
    });
}

#[test]
fn join_from_a_plain_thread() {
    rt(2).run(|| {
        let h = hoare::spawn(|| {
            hoare::sleep_for(Duration::from_millis(10));
            99
        });
        let t = std::thread::spawn(move || h.join().unwrap());
        assert_eq!(t.join().unwrap(), 99);
    });
}

/// A result of `N` bytes (and a counter) that counts its drops.
#[derive(Clone)]
struct Counted<const N: usize> {
    bytes: [u8; N],
    drops: Arc<AtomicUsize>,
}

impl<const N: usize> Drop for Counted<N> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

#[repr(align(128))]
struct Aligned128(Counted<8>);

/// Join results of every size (small ones share cache-line blocks kept in
/// free lists, large or over-aligned ones live on the heap) come back intact
/// and are dropped exactly once: joined, detached before or after the process
/// ends, joined from a plain thread, or never joined because the handle went
/// first; many at once on both workers, so that blocks freed on one thread are
/// reused on another. Catches a slot freed twice or too early (a result read
/// from a reused block: a block listed twice as free made it crash, checked
/// once), and a result never dropped.
#[test]
fn join_results_of_every_size_come_back_once() {
    fn run_kind<const N: usize>(drops: &Arc<AtomicUsize>, rng: &mut Rng) -> usize {
        let mut hs = Vec::new();
        let mut made = 0;
        for i in 0..2_000usize {
            let tag = (i % 251) as u8;
            let d = drops.clone();
            let h = hoare::spawn(move || {
                if tag.is_multiple_of(3) {
                    hoare::yield_now();
                }
                Counted::<N> {
                    bytes: [tag; N],
                    drops: d,
                }
            });
            made += 1;
            match rng.next() % 16 {
                0..=3 => drop(h),
                4 => {
                    let v = std::thread::spawn(move || h.join().unwrap())
                        .join()
                        .unwrap();
                    assert!(
                        v.bytes.iter().all(|&b| b == tag),
                        "a result's bytes changed"
                    );
                }
                _ => hs.push((tag, h)),
            }
        }
        for (tag, h) in hs {
            let v = h.join().unwrap();
            assert!(
                v.bytes.iter().all(|&b| b == tag),
                "a result's bytes changed"
            );
        }
        made
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let d = drops.clone();
    let made = rt(2).run(move || {
        let mut rng = Rng(7);
        let mut made = 0;
        made += run_kind::<0>(&d, &mut rng);
        made += run_kind::<1>(&d, &mut rng);
        made += run_kind::<8>(&d, &mut rng);
        made += run_kind::<24>(&d, &mut rng);
        made += run_kind::<64>(&d, &mut rng);
        made += run_kind::<4096>(&d, &mut rng);
        for i in 0..500usize {
            let tag = (i % 256) as u8;
            let d = d.clone();
            let h = hoare::spawn(move || {
                Aligned128(Counted::<8> {
                    bytes: [tag; 8],
                    drops: d,
                })
            });
            let v = h.join().unwrap();
            assert_eq!(&v as *const Aligned128 as usize % 128, 0);
            assert_eq!(v.0.bytes, [tag; 8]);
            made += 1;
        }
        // The detached ones end in their own time.
        let t0 = Instant::now();
        while d.load(Ordering::Relaxed) < made && t0.elapsed() < Duration::from_secs(20) {
            hoare::sleep_for(Duration::from_millis(1));
        }
        made
    });
    assert_eq!(
        drops.load(Ordering::Relaxed),
        made,
        "each result dropped once"
    );
}

#[test]
fn ids_and_names() {
    rt(2).run(|| {
        let me = hoare::id();
        // par2 runs its first branch in the calling process, the second in a new one.
        let (a, b) = hoare::par2(hoare::id, hoare::id);
        assert!(a == me && b != me);
        let h = Builder::new()
            .name("named")
            .spawn(|| (hoare::name(), hoare::id()));
        let hid = h.id();
        let (n, id) = h.join().unwrap();
        assert_eq!(n.as_deref(), Some("named"));
        assert_eq!(id, hid);
        assert_eq!(hoare::spawn(hoare::name).join().unwrap(), None);
    });
}

struct Square(u64);
impl hoare::Process for Square {
    type Output = u64;
    fn run(self) -> u64 {
        self.0 * self.0
    }
}

#[test]
fn process_trait_values_spawn() {
    assert_eq!(rt(1).run(|| hoare::spawn(Square(12)).join().unwrap()), 144);
    assert_eq!(rt(1).run(Square(3)), 9);
}

#[test]
fn shutdown_unwinds_blocked_processes() {
    struct Bump(Arc<AtomicUsize>);
    impl Drop for Bump {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let d = dropped.clone();
    rt(2).run(move || {
        let gate = Arc::new(Gate::default());
        let started = Arc::new(AtomicUsize::new(0));
        for _ in 0..1000 {
            let (gate, d, started) = (gate.clone(), d.clone(), started.clone());
            // Detached: dropped handles, blocked forever.
            let _ = hoare::spawn(move || {
                let _b = Bump(d);
                started.fetch_add(1, Ordering::SeqCst);
                gate.wait();
            });
        }
        let _ = hoare::spawn({
            let d = d.clone();
            move || drop(Bump(d))
        });
        // Wait until every process has started (so each holds its `Bump` on its
        // stack and is blocked) and the last one has finished: under load some
        // could otherwise still be queued, never having made their `Bump`.
        while started.load(Ordering::SeqCst) < 1000 || d.load(Ordering::SeqCst) < 1 {
            hoare::yield_now();
        }
    });
    assert_eq!(dropped.load(Ordering::SeqCst), 1001);
}

#[test]
fn shutdown_unwinds_blocked_scopes_children_first() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s2 = seen.clone();
    rt(2).run(move || {
        let gate = Arc::new(Gate::default());
        let started = Arc::new(AtomicUsize::new(0));
        let (g, st) = (gate.clone(), started.clone());
        let _ = hoare::spawn(move || {
            // Children borrow `local` from this process's stack and touch it when
            // they are unwound: they must go before this frame does.
            let local = AtomicUsize::new(0);
            struct Touch<'a>(&'a AtomicUsize, Arc<AtomicUsize>);
            impl Drop for Touch<'_> {
                fn drop(&mut self) {
                    self.0.fetch_add(1, Ordering::SeqCst);
                    self.1.fetch_add(1, Ordering::SeqCst);
                }
            }
            hoare::scope(|s| {
                for _ in 0..100 {
                    let (g, st, s2, local) = (g.clone(), st.clone(), s2.clone(), &local);
                    s.spawn(move || {
                        let _t = Touch(local, s2);
                        st.fetch_add(1, Ordering::SeqCst);
                        g.wait();
                    });
                }
            });
        });
        while started.load(Ordering::SeqCst) < 100 {
            hoare::sleep_for(Duration::from_millis(1));
        }
    });
    assert_eq!(seen.load(Ordering::SeqCst), 100);
}

/// Timed waits racing wake-ups: every wait ends exactly once, either woken (and
/// then its timer is cancelled) or timed out no earlier than its deadline.
#[test]
fn timed_waits_race_wakeups() {
    use hoare::core::waiter::{Outcome, Waiter};
    use std::sync::Mutex;
    let (woken, timed_out) = rt(2).run(|| {
        let n = 20_000;
        let slots: Arc<Vec<Mutex<Option<usize>>>> =
            Arc::new((0..n).map(|_| Mutex::new(None)).collect());
        let registered = Arc::new(AtomicUsize::new(0));
        let start = Instant::now() + Duration::from_millis(100);
        let waiters: Vec<_> = (0..n)
            .map(|i| {
                let (slots, registered) = (slots.clone(), registered.clone());
                hoare::spawn(move || {
                    let d = Duration::from_micros(((i * 7919) % 20_000) as u64);
                    let deadline = start + d;
                    let w = Waiter::for_current();
                    *slots[i].lock().unwrap() = Some(&w as *const Waiter as usize);
                    registered.fetch_add(1, Ordering::SeqCst);
                    let out = w.wait(Some(deadline));
                    // Deregister under the lock before `w` goes away.
                    slots[i].lock().unwrap().take();
                    match out {
                        Outcome::Done { .. } => (1, 0),
                        Outcome::Aborted { .. } => {
                            assert!(Instant::now() >= deadline, "timed out early");
                            (0, 1)
                        }
                    }
                })
            })
            .collect();
        let s2 = slots.clone();
        let waker = hoare::spawn(move || {
            while registered.load(Ordering::SeqCst) < n {
                hoare::sleep_for(Duration::from_millis(1));
            }
            hoare::sleep_until(start);
            for (i, slot) in s2.iter().enumerate() {
                if i % 100 == 0 {
                    hoare::sleep_for(Duration::from_micros(50));
                }
                let g = slot.lock().unwrap();
                if let Some(w) = *g {
                    // SAFETY: the waiter deregisters under this lock before it
                    // leaves its wait, so it is alive while we hold the lock.
                    unsafe { Waiter::try_wake(w as *const Waiter, 0, false) };
                }
            }
        });
        waker.join().unwrap();
        waiters
            .into_iter()
            .map(|h| h.join().unwrap())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    assert_eq!(woken + timed_out, 20_000);
    // Both outcomes normally occur; under heavy load all may time out, which is
    // still correct, so only report the split.
    eprintln!("timed waits: {woken} woken, {timed_out} timed out");
}

#[test]
fn yield_interleaves_on_one_worker() {
    let order = rt(1).run(|| {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let hs: Vec<_> = (0..2)
            .map(|k| {
                let log = log.clone();
                hoare::spawn(move || {
                    for i in 0..3 {
                        log.lock().unwrap().push((k, i));
                        hoare::yield_now();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let v = log.lock().unwrap().clone();
        v
    });
    // Whichever starts first, the two alternate: a yield goes to the back.
    assert_eq!(order.len(), 6);
    for w in order.windows(2) {
        assert_ne!(w[0].0, w[1].0, "{order:?}");
    }
}

#[test]
fn custom_stack_sizes() {
    rt(2).run(|| {
        let big = Builder::new().stack_size(1 << 20).spawn(|| {
            let buf = [7u8; 512 * 1024];
            std::hint::black_box(&buf)
                .iter()
                .map(|&b| b as usize)
                .sum::<usize>()
        });
        assert_eq!(big.join().unwrap(), 7 * 512 * 1024);
    });
    let r = Runtime::builder()
        .workers(1)
        .stack_size(1024 * 1024)
        .build()
        .run(|| {
            let buf = [1u8; 512 * 1024];
            std::hint::black_box(&buf).len()
        });
    assert_eq!(r, 512 * 1024);
}

fn child_mode() -> Option<String> {
    std::env::var("HOARE_TEST_CHILD").ok()
}

fn run_child(test: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", test, "--nocapture", "--test-threads=1"]);
    c.env("HOARE_TEST_CHILD", test);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn child_report_workers() {
    if child_mode().as_deref() != Some("child_report_workers") {
        return;
    }
    let w = Runtime::new().workers();
    println!("CHILD workers={w} default={}", hoare::default_workers());
}

#[test]
fn hoare_workers_env_is_respected() {
    if child_mode().is_some() {
        return;
    }
    let out = run_child("child_report_workers", &[("HOARE_WORKERS", "3")]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("CHILD workers=3 default=3"), "{s}");
}

#[inline(never)]
fn recurse(n: u64) -> u64 {
    let buf = [n; 64];
    std::hint::black_box(&buf);
    if n == 0 {
        0
    } else {
        recurse(n - 1) + buf[3]
    }
}

#[test]
fn child_overflow() {
    if child_mode().as_deref() != Some("child_overflow") {
        return;
    }
    rt(1).run(|| {
        let h = Builder::new()
            .name("deep")
            .spawn(|| recurse(std::hint::black_box(10_000_000)));
        let _ = h.join();
    });
}

#[test]
fn child_overflow_late() {
    if child_mode().as_deref() != Some("child_overflow_late") {
        return;
    }
    rt(2).run(|| {
        // Enough blocked processes that later stacks come from slots carved by
        // refills and prepared by the pool's thread, not the first few.
        let gate = Arc::new(Gate::default());
        let hs: Vec<_> = (0..10_000)
            .map(|_| {
                let g = gate.clone();
                hoare::spawn(move || g.wait())
            })
            .collect();
        let h = Builder::new()
            .name("deep")
            .spawn(|| recurse(std::hint::black_box(10_000_000)));
        let _ = h.join();
        gate.open();
        drop(hs);
    });
}

/// Runs child test `child`, whose process 'deep' overflows its stack, and
/// checks that the overflow is reported and the OS process aborts.
fn assert_overflow_reported(child: &str) {
    let out = run_child(child, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("hoare: stack overflow in process 'deep' (id "),
        "stderr: {err}"
    );
}

#[test]
fn stack_overflow_is_reported_and_aborts() {
    if child_mode().is_some() {
        return;
    }
    assert_overflow_reported("child_overflow");
}

/// The same for a process spawned after 10,000 others: its slot was carved
/// later (its guard installed as it was carved, not with its slab's).
/// Catches later slots without guards (checked once: without a guard the
/// overflow runs into the slot below, and the child dies some other way).
#[test]
fn stack_overflow_after_many_spawns_is_reported_and_aborts() {
    if child_mode().is_some() {
        return;
    }
    assert_overflow_reported("child_overflow_late");
}

/// Spins (without yielding) until `flag` is set, or gives up after `limit`:
/// stands for a process that computes for a long time.
fn spin_until(flag: &std::sync::atomic::AtomicBool, limit: Duration) -> bool {
    let t = Instant::now();
    while !flag.load(Ordering::Acquire) {
        if t.elapsed() > limit {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// A process that spawns another and then computes must not keep it waiting
/// until it is done: another worker takes the child from the spawner's next slot
/// (here the parent computes until the child has run, so without that it would
/// wait for ever; the 20 s limit only turns a hang into a failure). The child
/// comes after the other worker has found nothing to do and gone to sleep.
#[test]
fn spawned_child_runs_beside_its_computing_parent() {
    let ok = rt(2).run(|| {
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Compute a while first, so the other worker finds nothing and sleeps.
        spin_until(&flag, Duration::from_millis(20));
        let f2 = flag.clone();
        let h = hoare::spawn(move || f2.store(true, Ordering::Release));
        let ok = spin_until(&flag, Duration::from_secs(20));
        h.join().unwrap();
        ok
    });
    assert!(ok, "the child never ran while its parent computed");
}

/// The same for a process woken by one that then computes: hand-offs do not
/// notify sleeping workers (that would cost every rendezvous), so a worker that
/// finds nothing while another runs naps and looks again.
#[test]
fn woken_process_runs_beside_its_computing_waker() {
    let ok = rt(2).run(|| {
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ready = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (f2, r2) = (flag.clone(), ready.clone());
        let (tx, rx) = hoare::one2one::<u32>();
        let h = hoare::spawn(move || {
            r2.store(true, Ordering::Release);
            rx.recv().unwrap();
            f2.store(true, Ordering::Release);
        });
        while !ready.load(Ordering::Acquire) {
            hoare::yield_now();
        }
        // Compute a while (no timers, no yields), so the child has blocked and the
        // other worker finds nothing and sleeps.
        spin_until(&flag, Duration::from_millis(20));
        tx.send(1).unwrap();
        let ok = spin_until(&flag, Duration::from_secs(20));
        h.join().unwrap();
        ok
    });
    assert!(ok, "the woken process never ran while its waker computed");
}

/// Plain threads spawn processes into a running runtime through its `Handle` and
/// join them, while the thread that owns the runtime spawns too; the processes
/// talk to each other over a channel.
#[test]
fn handle_spawns_from_plain_threads_into_a_running_runtime() {
    let rt = Runtime::builder().workers(2).build();
    let (tx, rx) = hoare::Channel::builder().bounded(16).any2one::<u64>();
    let sink = rt.spawn(move || rx.iter().sum::<u64>());
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let h = rt.handle();
            let tx = tx.clone();
            std::thread::spawn(move || {
                let hs: Vec<_> = (0..50u64)
                    .map(|i| {
                        let tx = tx.clone();
                        h.spawn(move || {
                            tx.send(t * 1000 + i).unwrap();
                            hoare::yield_now();
                            i
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).sum::<u64>()
            })
        })
        .collect();
    // The owner uses the runtime at the same time, from a scope of threads that
    // share it by reference.
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| assert_eq!(rt.spawn(|| hoare::id() > 0).join(), Ok(true)));
        }
    });
    let per_thread: u64 = (0..50).sum();
    for t in threads {
        assert_eq!(t.join().unwrap(), per_thread);
    }
    drop(tx);
    let want: u64 = (0..8u64).map(|t| 50 * t * 1000 + per_thread).sum();
    assert_eq!(sink.join().unwrap(), want);
    rt.shutdown();
}

/// An explicit shutdown follows docs/semantics.md#shutdown: a blocked process is
/// cancelled and unwound (its destructors run), its handle reports `Cancelled`,
/// and a spawn through a handle afterwards is refused.
#[test]
fn explicit_shutdown_unwinds_and_refuses_later_spawns() {
    struct Count(Arc<AtomicUsize>);
    impl Drop for Count {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let rt = Runtime::builder().workers(1).build();
    let h = rt.handle();
    let (tx, rx) = hoare::one2one::<u32>();
    let d = dropped.clone();
    let stuck = h.spawn(move || {
        let _c = Count(d);
        rx.recv()
    });
    assert_eq!(h.spawn(|| 5).join(), Ok(5));
    assert!(!h.is_shut_down());
    rt.shutdown();
    assert!(h.is_shut_down());
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the blocked process was not unwound"
    );
    assert!(matches!(stuck.join(), Err(ProcessError::Cancelled)));
    assert!(matches!(h.spawn(|| 1).join(), Err(ProcessError::Cancelled)));
    assert!(h.try_spawn(|| 1).is_err());
    drop(tx);
}

/// `run` keeps its meaning on a runtime a handle has spawned into: it runs its
/// root, then shuts down (cancelling what the handle spawned and left blocked).
#[test]
fn run_after_handle_spawns() {
    let rt = Runtime::builder().workers(2).build();
    let h = rt.handle();
    let (tx, rx) = hoare::one2one::<u32>();
    let blocked = h.spawn(move || rx.recv());
    let helper = h.spawn(|| 20);
    let v = rt.run(move || helper.join().unwrap() + 1);
    assert_eq!(v, 21);
    assert!(matches!(blocked.join(), Err(ProcessError::Cancelled)));
    drop(tx);
}
