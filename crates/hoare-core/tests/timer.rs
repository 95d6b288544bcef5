//! Timer semantics with plain threads. Scheduling noise only ever makes things late,
//! so the tests assert lower bounds, and upper bounds only where they are hundreds of
//! milliseconds away from the expected value.
#![cfg(not(loom))]

use hoare_core::timer::{sleep_for, sleep_until, Date, Egg, Repeat, Timer};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MS: Duration = Duration::from_millis(1);

#[test]
fn sleep_until_waits_for_the_deadline() {
    let t0 = Instant::now();
    sleep_until(t0 + 30 * MS);
    assert!(t0.elapsed() >= 30 * MS);
    let t1 = Instant::now();
    sleep_until(t1 - 10 * MS); // in the past: returns at once
    assert!(t1.elapsed() < 300 * MS);
    let t2 = Instant::now();
    sleep_for(20 * MS);
    assert!(t2.elapsed() >= 20 * MS);
}

/// An egg restarts on every use: its deadline is always one period after the use.
#[test]
fn egg_restarts_on_each_use() {
    let mut egg = Egg::new(40 * MS);
    let t0 = Instant::now();
    let d1 = egg.deadline();
    assert!(d1 >= t0 + 40 * MS);
    sleep_for(15 * MS);
    let t1 = Instant::now();
    let d2 = egg.deadline();
    assert!(d2 >= t1 + 40 * MS, "the egg did not restart");
    assert!(d2 >= d1 + 15 * MS);
    egg.fired(); // does nothing to an egg
                 // Three sleeps take at least three periods each counted from its own start.
    let t2 = Instant::now();
    for _ in 0..3 {
        let s = Instant::now();
        egg.sleep();
        assert!(s.elapsed() >= 40 * MS);
    }
    assert!(t2.elapsed() >= 120 * MS);
    assert!(!egg.expired());
    assert!(Egg::new(Duration::ZERO).expired());
}

/// A repeat does not restart when used, moves on exactly one period per firing, and a
/// late consumer does not shift its grid.
#[test]
fn repeat_does_not_drift() {
    let period = 20 * MS;
    let t0 = Instant::now();
    let mut r = Repeat::starting_at(t0, period);
    // Using it without firing does not move it.
    assert_eq!(r.deadline(), t0 + period);
    sleep_for(5 * MS);
    assert_eq!(r.deadline(), t0 + period);
    // Each sleep wakes at the next grid point, however late the previous one was.
    for k in 1..=5u32 {
        if k == 3 {
            // A slow consumer: work for 1.5 periods between ticks.
            sleep_for(30 * MS);
        }
        r.sleep();
        assert!(Instant::now() >= t0 + period * k);
        assert_eq!(r.next_tick(), t0 + period * (k + 1), "the grid drifted");
    }
    // In total: five periods, not five periods plus the slow consumer's 30 ms.
    let total = t0.elapsed();
    assert!(total >= period * 5);
    assert!(total < period * 5 + 300 * MS);
}

#[test]
fn repeat_late_consumer_catches_up_or_skips() {
    let period = 10 * MS;
    let t0 = Instant::now();
    let mut r = Repeat::starting_at(t0, period);
    sleep_until(t0 + 55 * MS); // ticks at 10, 20, 30, 40, 50 have passed
    assert!(r.expired());
    // Missed ticks are delivered at once, one per use (catch-up), on the same grid.
    r.sleep();
    assert_eq!(r.next_tick(), t0 + 2 * period);
    r.skip_missed(); // drop the rest but the latest
    assert!(r.expired());
    let n = r.next_tick();
    assert!(n <= Instant::now(), "skip_missed dropped the latest tick");
    assert!(
        n >= t0 + 50 * MS,
        "skip_missed kept an older tick than the latest"
    );
    assert_eq!(
        (n - t0).as_nanos() % period.as_nanos(),
        0,
        "skip_missed left the grid"
    );
    r.sleep(); // the kept tick, at once
    assert_eq!(r.next_tick(), n + period);
}

/// A date times out at its instant and stays expired.
#[test]
fn date_stays_expired() {
    let t0 = Instant::now();
    let mut d = Date::new(t0 + 25 * MS);
    assert!(!d.expired());
    assert_eq!(d.deadline(), t0 + 25 * MS);
    d.sleep();
    assert!(t0.elapsed() >= 25 * MS);
    assert!(d.expired());
    d.fired();
    assert_eq!(d.deadline(), t0 + 25 * MS, "a date never moves");
    let t1 = Instant::now();
    d.sleep(); // already expired: at once
    assert!(t1.elapsed() < 300 * MS);
    assert!(Date::after(Duration::from_secs(3600)).at() > t0);
}

#[test]
fn plain_instants_and_durations_are_timers() {
    let t0 = Instant::now();
    let mut at = t0 + 10 * MS;
    at.sleep();
    assert!(t0.elapsed() >= 10 * MS);
    let mut d = 10 * MS;
    let t1 = Instant::now();
    d.sleep();
    assert!(t1.elapsed() >= 10 * MS);
    // Through a `&mut dyn Timer`, as an alt builder would hold them.
    let mut egg = Egg::new(5 * MS);
    let timers: [&mut dyn Timer; 2] = [&mut egg, &mut at];
    for t in timers {
        let _ = t.deadline();
        t.fired();
    }
}

/// Sleeping threads do not block each other.
#[test]
fn concurrent_sleeps() {
    // Eight threads, started together at a barrier, sleep 300 ms each. Sleeps
    // that blocked each other would take up to 8 x 300 ms; each must take less
    // than 4 x 300 (900 ms of room for a loaded machine to wake a thread late).
    let go = Arc::new(std::sync::Barrier::new(8));
    let hs: Vec<_> = (0..8)
        .map(|_| {
            let go = go.clone();
            std::thread::spawn(move || {
                go.wait();
                let start = Instant::now();
                Egg::new(300 * MS).sleep();
                start.elapsed()
            })
        })
        .collect();
    for h in hs {
        let e = h.join().unwrap();
        assert!(e >= 300 * MS);
        assert!(e < 4 * 300 * MS, "sleeps were serialised: {e:?}");
    }
}

/// Durations too long to add to an `Instant` are clamped to the far future by
/// every timer (they panicked with "overflow when adding duration to instant").
#[test]
fn duration_max_is_the_far_future() {
    use hoare_core::timer::{add_clamped, deadline_after, FAR_FUTURE};
    let t0 = Instant::now();
    let far = t0 + FAR_FUTURE;
    assert!(Egg::new(Duration::MAX).deadline() >= far);
    assert!(!Egg::new(Duration::MAX).expired());
    let mut d = Duration::MAX;
    assert!(d.deadline() >= far);
    assert!(Date::after(Duration::MAX).at() >= far);
    assert!(deadline_after(Duration::MAX) >= far);
    let mut r = Repeat::starting_at(t0, Duration::MAX);
    assert_eq!(r.deadline(), far);
    r.fired(); // one more period: the far future from the far future
    assert_eq!(r.next_tick(), add_clamped(far, Duration::MAX));
    r.skip_missed();
    let mut r = Repeat::new(Duration::MAX);
    assert!(!r.expired());
    r.advance();
    // Ordinary durations are added exactly.
    assert_eq!(add_clamped(t0, 5 * MS), t0 + 5 * MS);
    assert_eq!(add_clamped(t0, FAR_FUTURE), far);
}

/// The timers' methods are inherent: none of these calls imports `Timer`.
mod without_the_trait {
    use hoare_core::timer::{Date, Egg, Repeat};
    use std::time::{Duration, Instant};

    #[test]
    fn timer_methods_need_no_trait_import() {
        let t0 = Instant::now();
        let mut r = Repeat::starting_at(t0, Duration::from_millis(2));
        assert_eq!(r.deadline(), t0 + Duration::from_millis(2));
        r.fired();
        assert_eq!(r.deadline(), t0 + Duration::from_millis(4));
        r.sleep();
        assert!(Instant::now() >= t0 + Duration::from_millis(4));
        assert_eq!(r.next_tick(), t0 + Duration::from_millis(6));
        assert!(!r.clone().expired() || Instant::now() >= r.next_tick());

        let mut e = Egg::new(Duration::ZERO);
        assert!(e.expired());
        e.sleep();
        e.fired();
        let mut d = Date::new(t0);
        assert!(d.expired());
        assert_eq!(d.deadline(), t0);
    }
}
