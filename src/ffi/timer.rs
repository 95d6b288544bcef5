//! Timers: the Rust `Egg`, `Repeat` and `Date` of `hoare_core::timer` as C++ holds
//! them (`hoare::Egg`, `Repeat`, `Date` are thin wrappers over a [`TimerHandle`]),
//! and time points across the bridge.
//!
//! # Time points
//! C++ time points are nanoseconds of `std::chrono::steady_clock` since its epoch;
//! Rust's `Instant` cannot be built from a number. Both are the monotonic clock
//! (`CLOCK_MONOTONIC` on Linux), so one [`Anchor`] — an `Instant` and a
//! `steady_clock` reading taken together once — maps one onto the other exactly up
//! to the width of that reading (tens of nanoseconds), and a round trip C++ → Rust →
//! C++ gives back the same time point (`Repeat(t0, 1s).deadline() == t0 + 1s`). The
//! error is on the late side: the Rust instant of a C++ time point is never earlier
//! than it, so a wait never ends before the C++ deadline.

use super::bridge;
use super::guard;
use hoare_core::timer::{add_clamped, deadline_after, Date, Egg, Repeat, Timer};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A timer as C++ holds it: allocated once when the C++ timer is made, then used by
/// reference (an alt's timeout guard, a sleep, a timed channel operation).
pub struct TimerHandle(Kind);

#[derive(Clone, Debug)]
enum Kind {
    Egg(Egg),
    Repeat(Repeat),
    Date(Date),
}

impl Timer for TimerHandle {
    fn deadline(&mut self) -> Instant {
        match &mut self.0 {
            Kind::Egg(t) => t.deadline(),
            Kind::Repeat(t) => t.deadline(),
            Kind::Date(t) => t.deadline(),
        }
    }

    fn fired(&mut self) {
        match &mut self.0 {
            Kind::Egg(t) => t.fired(),
            Kind::Repeat(t) => t.fired(),
            Kind::Date(t) => t.fired(),
        }
    }

    fn expired(&self) -> bool {
        match &self.0 {
            Kind::Egg(t) => t.expired(),
            Kind::Repeat(t) => t.expired(),
            Kind::Date(t) => t.expired(),
        }
    }
}

/// A timeout guard's timer in an alt: the C++ timer by address. It is borrowed only
/// inside each call (the alt asks `deadline` once and calls `fired` on the chosen
/// guard, one call at a time), so two guards of one alt may share a timer as they
/// could before the timers were bridged.
pub(super) struct TimerRef(*mut TimerHandle);

impl TimerRef {
    /// # Safety
    /// `t` points to a live `TimerHandle` that nobody else uses while the alt that
    /// holds this runs (the alt's own guards aside, see the type's documentation).
    pub(super) unsafe fn new(t: *mut TimerHandle) -> Self {
        TimerRef(t)
    }
}

impl Timer for TimerRef {
    fn deadline(&mut self) -> Instant {
        // SAFETY: live and unshared while the alt runs (`new`'s contract); the borrow
        // ends with this call.
        unsafe { (*self.0).deadline() }
    }

    fn fired(&mut self) {
        // SAFETY: as in `deadline`.
        unsafe { (*self.0).fired() }
    }

    fn expired(&self) -> bool {
        // SAFETY: as in `deadline`.
        unsafe { (*self.0).expired() }
    }
}

/// One moment read on both clocks: `instant` and `steady_ns` (C++'s
/// `steady_clock`, nanoseconds since its epoch). `steady_ns` was read at most a
/// few tens of nanoseconds before `instant`.
struct Anchor {
    instant: Instant,
    steady_ns: i64,
}

/// The anchor, read once: the tightest of a few brackets `steady, Instant, steady`.
fn anchor() -> &'static Anchor {
    static ANCHOR: OnceLock<Anchor> = OnceLock::new();
    ANCHOR.get_or_init(|| {
        let mut best: Option<(i64, Anchor)> = None;
        for _ in 0..8 {
            let before = bridge::steady_now_ns();
            let instant = Instant::now();
            let width = bridge::steady_now_ns().saturating_sub(before);
            if best.as_ref().is_none_or(|(w, _)| width < *w) {
                let steady_ns = before;
                best = Some((width, Anchor { instant, steady_ns }));
            }
        }
        best.expect("at least one reading").1
    })
}

/// `t - d`, clamped to the earliest instant that can be represented: never panics.
fn sub_clamped(t: Instant, mut d: Duration) -> Instant {
    loop {
        if let Some(at) = t.checked_sub(d) {
            return at;
        }
        d /= 2;
    }
}

/// The Rust instant of the C++ time point `t` (see the module documentation);
/// clamped at `FAR_FUTURE` from the anchor, as every deadline hoare forms.
pub(super) fn instant_of(t: i64) -> Instant {
    let a = anchor();
    let d = i128::from(t) - i128::from(a.steady_ns);
    let ns = |d: i128| Duration::from_nanos(u64::try_from(d).unwrap_or(u64::MAX));
    if d >= 0 {
        add_clamped(a.instant, ns(d))
    } else {
        sub_clamped(a.instant, ns(-d))
    }
}

/// The C++ time point of the Rust instant `i`, saturated at the ends of `i64`.
pub(super) fn steady_of(i: Instant) -> i64 {
    let a = anchor();
    let ns = |d: Duration| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX);
    let d = match i.checked_duration_since(a.instant) {
        Some(d) => ns(d),
        None => -ns(a.instant.duration_since(i)),
    };
    let t = i128::from(a.steady_ns).saturating_add(d);
    i64::try_from(t).unwrap_or(if t < 0 { i64::MIN } else { i64::MAX })
}

fn boxed(k: Kind) -> Box<TimerHandle> {
    Box::new(TimerHandle(k))
}

pub(super) fn timer_egg(period_ns: u64) -> Box<TimerHandle> {
    boxed(Kind::Egg(Egg::new(Duration::from_nanos(period_ns))))
}

pub(super) fn timer_repeat(period_ns: u64) -> Box<TimerHandle> {
    boxed(Kind::Repeat(Repeat::new(Duration::from_nanos(period_ns))))
}

pub(super) fn timer_repeat_from(start: i64, period_ns: u64) -> Box<TimerHandle> {
    let period = Duration::from_nanos(period_ns);
    boxed(Kind::Repeat(Repeat::starting_at(instant_of(start), period)))
}

pub(super) fn timer_date(at: i64) -> Box<TimerHandle> {
    boxed(Kind::Date(Date::new(instant_of(at))))
}

pub(super) fn timer_date_after(ns: u64) -> Box<TimerHandle> {
    boxed(Kind::Date(Date::after(Duration::from_nanos(ns))))
}

pub(super) fn timer_clone(t: &TimerHandle) -> Box<TimerHandle> {
    boxed(t.0.clone())
}

pub(super) fn timer_deadline(t: &TimerHandle) -> i64 {
    // A copy: no timer changes state when asked for its deadline.
    steady_of(TimerHandle(t.0.clone()).deadline())
}

pub(super) fn timer_fired(t: &mut TimerHandle) {
    t.fired()
}

pub(super) fn timer_expired(t: &TimerHandle) -> bool {
    t.expired()
}

pub(super) fn timer_period(t: &TimerHandle) -> u64 {
    let p = match &t.0 {
        Kind::Egg(e) => e.period(),
        Kind::Repeat(r) => r.period(),
        Kind::Date(_) => Duration::ZERO,
    };
    u64::try_from(p.as_nanos()).unwrap_or(u64::MAX)
}

pub(super) fn timer_next(t: &TimerHandle) -> i64 {
    steady_of(match &t.0 {
        Kind::Egg(e) => deadline_after(e.period()),
        Kind::Repeat(r) => r.next_tick(),
        Kind::Date(d) => d.at(),
    })
}

pub(super) fn timer_advance(t: &mut TimerHandle) {
    if let Kind::Repeat(r) = &mut t.0 {
        r.advance();
    }
}

pub(super) fn timer_skip_missed(t: &mut TimerHandle) {
    if let Kind::Repeat(r) = &mut t.0 {
        r.skip_missed();
    }
}

/// Sleeps until the timer's deadline, then reports the firing (`Timer::sleep`).
pub(super) fn timer_sleep(t: &mut TimerHandle) -> Result<(), String> {
    guard(|| {
        t.sleep();
        Ok(())
    })
}
