//! Timers: values that say when the next timeout of an operation falls (how an alt
//! uses them: `docs/semantics.md#alternation`).
//!
//! Three kinds, after ProXC++ (and Øyvind Teig's definitions):
//!
//! | timer | deadline of a use | when its guard fires |
//! |---|---|---|
//! | [`Egg`] | *now* + period: restarts each time it is used | nothing to do |
//! | [`Repeat`] | the next tick of a fixed grid `start + k·period` (does not restart) | advances one period |
//! | [`Date`] | a fixed instant (stays expired once past) | nothing to do |
//!
//! Every timer implements [`Timer`]. An operation that can time out (a sleep, an alt
//! with a timeout guard, a timed channel operation) calls [`Timer::deadline`] once
//! when it starts, and [`Timer::fired`] if, and only if, the timeout is what ended it
//! (the alt chose the timeout guard, the sleep returned). So an [`Egg`] restarts on
//! every alt, while a [`Repeat`] moves on only when a tick was actually consumed: a
//! tick that passes while an alt chose another guard is not lost, and a consumer that
//! is late does not shift the grid (no drift).
//!
//! `Instant` implements [`Timer`] as a [`Date`] and `Duration` as an [`Egg`], so an
//! API taking `impl Timer` also takes plain deadlines and durations.
//!
//! [`Timer::sleep`] blocks the current party (a process of the runtime, or a plain
//! thread) until the deadline, through the park/unpark seam.
//!
//! # Very long timeouts
//! A duration too long to add to an `Instant` (`Duration::MAX`, say) means "never" in
//! practice: every deadline hoare forms from a duration ([`deadline_after`], used by
//! [`sleep_for`], the timers, alt timeouts and the channels' `*_timeout`
//! operations) is clamped to [`FAR_FUTURE`] from its start, about a century, instead
//! of panicking with "overflow when adding duration to instant".
//!
//! The timers' methods are also inherent, so calling them needs no import of
//! [`Timer`]:
//!
//! ```
//! use hoare_core::timer::{Egg, Repeat};
//! use std::time::{Duration, Instant};
//!
//! let t0 = Instant::now();
//! let mut tick = Repeat::new(Duration::from_millis(5));
//! for _ in 0..3 {
//!     tick.sleep(); // wakes at t0 + 5 ms, + 10 ms, + 15 ms: no drift
//! }
//! assert!(t0.elapsed() >= Duration::from_millis(15));
//!
//! let mut egg = Egg::new(Duration::from_millis(2));
//! egg.sleep(); // 2 ms from now, every time
//! ```

use crate::park;
use crate::sync;
use std::time::{Duration, Instant};

/// A source of timeouts: tells an operation when it times out, and hears whether it
/// did. See the [module documentation](self) for the protocol.
pub trait Timer {
    /// The deadline of an operation that starts now. Called once at the start of each
    /// operation (a sleep, an alt, a timed channel operation); an [`Egg`] restarts
    /// here, the other timers just report their next expiry.
    fn deadline(&mut self) -> Instant;

    /// Tells the timer that the operation that asked for [`deadline`](Timer::deadline)
    /// ended by this timeout (the alt chose its guard, the sleep returned). A
    /// [`Repeat`] advances one period here; the other timers ignore it.
    fn fired(&mut self);

    /// Blocks the current party until the deadline of this use, then reports the
    /// firing. Returns at once if the deadline has already passed.
    fn sleep(&mut self) {
        sleep_until(self.deadline());
        self.fired();
    }

    /// Whether an operation starting now would time out at once. Does not count as a
    /// use: it neither restarts an [`Egg`] nor advances a [`Repeat`].
    fn expired(&self) -> bool;
}

/// Blocks the current party (a process, or a plain OS thread) until `deadline`.
/// Returns at once if it has passed, after spending the process's
/// [cooperative budget](crate::park#the-cooperative-budget) (a loop of zero
/// sleeps yields now and then), or if the party is
/// [cancelled](crate::park::Park::cancelled).
///
/// Built on the seam's [`Park::park_until`](crate::park::Park::park_until): nobody
/// unparks a sleeping party, so the party re-parks until the deadline has really
/// passed. (Under loom every deadline has passed at once.)
pub fn sleep_until(deadline: Instant) {
    crate::check_step!(|| crate::step::Op {
        kind: crate::step::OpKind::Sleep,
        objs: crate::step::Objs::one(crate::step::CLOCK),
    });
    park::with_current(|p| {
        if sync::time::passed(deadline) {
            // Passed already: a poll (see `park::spend_budget`).
            p.spend_budget();
            return;
        }
        loop {
            // A cancelled party (the runtime shut down and is unwinding it) does
            // not sleep.
            if p.cancelled() {
                return;
            }
            // `true` would mean an unpark token was consumed. Nobody owes a
            // sleeping party an unpark, so that cannot happen under the waiter
            // protocol; either way the deadline decides, so loop until it has
            // passed.
            let _ = p.park_until(deadline, None);
            if sync::time::passed(deadline) {
                return;
            }
        }
    })
}

/// Blocks the current party for at least `d` (a `d` beyond [`FAR_FUTURE`] sleeps
/// that long: for ever, in practice).
pub fn sleep_for(d: Duration) {
    sleep_until(deadline_after(d))
}

/// How far ahead a deadline may lie: about a century (100 × 365.25 days). Longer
/// durations are clamped to it (see [`add_clamped`]): nothing waits that long, and
/// the instant stays representable on every platform and in the runtime's timer
/// wheel (nanoseconds since its start fit in 64 bits for 584 years).
pub const FAR_FUTURE: Duration = Duration::from_secs(3_155_760_000);

/// `t + d`, with `d` clamped to [`FAR_FUTURE`] (and, should even that not be
/// representable after `t`, to the longest duration that is): never panics. Every
/// deadline hoare forms from an instant and a duration goes through this.
///
/// ```
/// use hoare_core::timer::{add_clamped, FAR_FUTURE};
/// use std::time::{Duration, Instant};
///
/// let t = Instant::now();
/// assert_eq!(add_clamped(t, Duration::from_secs(1)), t + Duration::from_secs(1));
/// assert_eq!(add_clamped(t, Duration::MAX), t + FAR_FUTURE);
/// ```
#[inline]
pub fn add_clamped(t: Instant, d: Duration) -> Instant {
    if d <= FAR_FUTURE {
        if let Some(at) = t.checked_add(d) {
            return at;
        }
    }
    add_clamped_slow(t, d.min(FAR_FUTURE))
}

#[cold]
fn add_clamped_slow(t: Instant, mut d: Duration) -> Instant {
    loop {
        if let Some(at) = t.checked_add(d) {
            return at;
        }
        d /= 2;
    }
}

/// The deadline `d` from now, clamped to [`FAR_FUTURE`] from now
/// (`add_clamped(Instant::now(), d)`).
#[inline]
pub fn deadline_after(d: Duration) -> Instant {
    add_clamped(park::now(), d)
}

/// A relative timer: each use times out one `period` after the use starts, like an
/// egg timer turned over anew each time (ProXC++ `timer::Egg`).
///
/// ```
/// use hoare_core::timer::{Egg, Timer};
/// use std::time::{Duration, Instant};
///
/// let mut egg = Egg::new(Duration::from_millis(50));
/// let d1 = egg.deadline();
/// std::thread::sleep(Duration::from_millis(1));
/// let d2 = egg.deadline(); // restarted: later than d1
/// assert!(d2 > d1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Egg {
    period: Duration,
}

impl Egg {
    /// An egg timer of `period`.
    pub const fn new(period: Duration) -> Self {
        Self { period }
    }

    /// Its period.
    pub const fn period(&self) -> Duration {
        self.period
    }
}

impl Timer for Egg {
    fn deadline(&mut self) -> Instant {
        deadline_after(self.period)
    }

    fn fired(&mut self) {}

    fn expired(&self) -> bool {
        self.period.is_zero()
    }
}

/// A periodic timer: its ticks lie on the grid `start + k·period` (k = 1, 2, …). A use
/// does not restart it; each firing moves it on by exactly one period, so the grid
/// never drifts however late the consumer runs (ProXC++ `timer::Repeat`).
///
/// A consumer that falls several periods behind sees the missed ticks as expired at
/// once, one per use, until it has caught up; call [`skip_missed`](Repeat::skip_missed)
/// to drop them instead.
///
/// ```
/// use hoare_core::timer::{Repeat, Timer};
/// use std::time::{Duration, Instant};
///
/// let t0 = Instant::now();
/// let mut r = Repeat::starting_at(t0, Duration::from_secs(1));
/// assert_eq!(r.deadline(), t0 + Duration::from_secs(1));
/// assert_eq!(r.deadline(), t0 + Duration::from_secs(1)); // a use does not restart it
/// r.fired();
/// assert_eq!(r.deadline(), t0 + Duration::from_secs(2)); // one period on, not "now + 1 s"
/// ```
///
/// # Not `Copy`
/// A `Repeat` has state (its next tick), so it is not `Copy`: a copy that fires
/// would advance the copy, not the timer. An alt that lives in a loop borrows it
/// (`after(&mut tick)`); passing it by value moves it into the first alt, so the
/// mistake that used to compile and silently never advance the timer is now an
/// error:
///
/// ```compile_fail,E0382
/// use hoare_core::{alt, chan::one2one, timer::Repeat};
/// use std::time::Duration;
///
/// let (_tx, rx) = one2one::<u32>();
/// let mut tick = Repeat::new(Duration::from_millis(1));
/// for _ in 0..3 {
///     alt! {
///         recv(rx) -> _v => {},
///         after(tick) => {}, // error: `tick` moved in the previous iteration
///     }
/// }
/// ```
///
/// The same loop with `after(&mut tick)` compiles and ticks on the grid. A
/// stateless timer ([`Egg`], [`Date`], a `Duration`, an `Instant`) stays `Copy`
/// and is passed by value. (`Clone` is kept: `tick.clone()` says what it does.)
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Repeat {
    next: Instant,
    period: Duration,
}

impl Repeat {
    /// A periodic timer whose first tick is one `period` from now.
    pub fn new(period: Duration) -> Self {
        Self::starting_at(park::now(), period)
    }

    /// A periodic timer whose first tick is at `start + period`.
    pub fn starting_at(start: Instant, period: Duration) -> Self {
        Self {
            next: add_clamped(start, period),
            period,
        }
    }

    /// Its period.
    pub const fn period(&self) -> Duration {
        self.period
    }

    /// The next tick, without using the timer.
    pub const fn next_tick(&self) -> Instant {
        self.next
    }

    /// Moves on one period (what [`Timer::fired`] does).
    pub fn advance(&mut self) {
        self.next = add_clamped(self.next, self.period);
    }

    /// Drops the ticks that have already passed except the latest: afterwards at most
    /// one tick is expired. The grid stays the same.
    pub fn skip_missed(&mut self) {
        let now = park::now();
        if self.period.is_zero() || self.next >= now {
            return;
        }
        let behind = (now - self.next).as_nanos() / self.period.as_nanos();
        // The ticks `next`, `next + period`, … up to `now`: keep the last one.
        let skip = u32::try_from(behind).unwrap_or(u32::MAX);
        let by = self.period.checked_mul(skip).unwrap_or(Duration::MAX);
        self.next = add_clamped(self.next, by);
    }
}

impl Timer for Repeat {
    fn deadline(&mut self) -> Instant {
        self.next
    }

    fn fired(&mut self) {
        self.advance();
    }

    fn expired(&self) -> bool {
        park::now() >= self.next
    }
}

/// An absolute timer: times out at a fixed instant and stays expired afterwards
/// (ProXC++ `timer::Date`).
///
/// ```
/// use hoare_core::timer::{Date, Timer};
/// use std::time::{Duration, Instant};
///
/// let mut d = Date::new(Instant::now() + Duration::from_millis(1));
/// d.sleep();
/// assert!(d.expired());
/// d.sleep(); // returns at once: still expired
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    at: Instant,
}

impl Date {
    /// A date timer that expires at `at`.
    pub const fn new(at: Instant) -> Self {
        Self { at }
    }

    /// A date timer that expires `d` from now (at most [`FAR_FUTURE`] from now).
    pub fn after(d: Duration) -> Self {
        Self::new(deadline_after(d))
    }

    /// The instant it expires at.
    pub const fn at(&self) -> Instant {
        self.at
    }
}

impl Timer for Date {
    fn deadline(&mut self) -> Instant {
        self.at
    }

    fn fired(&mut self) {}

    fn expired(&self) -> bool {
        park::now() >= self.at
    }
}

/// A plain deadline is a [`Date`].
impl Timer for Instant {
    fn deadline(&mut self) -> Instant {
        *self
    }

    fn fired(&mut self) {}

    fn expired(&self) -> bool {
        park::now() >= *self
    }
}

/// A plain duration is an [`Egg`]: each use times out `self` after it starts.
impl Timer for Duration {
    fn deadline(&mut self) -> Instant {
        deadline_after(*self)
    }

    fn fired(&mut self) {}

    fn expired(&self) -> bool {
        self.is_zero()
    }
}

impl<T: Timer + ?Sized> Timer for &mut T {
    fn deadline(&mut self) -> Instant {
        (**self).deadline()
    }

    fn fired(&mut self) {
        (**self).fired()
    }

    fn sleep(&mut self) {
        (**self).sleep()
    }

    fn expired(&self) -> bool {
        (**self).expired()
    }
}

/// Inherent forms of the [`Timer`] methods, so that a timer's methods can be called
/// without importing the trait (`tick.sleep()`).
macro_rules! inherent_timer_methods {
    ($($t:ty),*) => {$(
        impl $t {
            /// The deadline of an operation that starts now: [`Timer::deadline`]
            /// (callable without importing [`Timer`]).
            #[inline]
            pub fn deadline(&mut self) -> Instant {
                <Self as Timer>::deadline(self)
            }

            /// Reports that the operation that asked for the deadline timed out:
            /// [`Timer::fired`].
            #[inline]
            pub fn fired(&mut self) {
                <Self as Timer>::fired(self)
            }

            /// Blocks the current party until the deadline of this use, then reports
            /// the firing: [`Timer::sleep`].
            #[inline]
            pub fn sleep(&mut self) {
                <Self as Timer>::sleep(self)
            }

            /// Whether an operation starting now would time out at once:
            /// [`Timer::expired`].
            #[inline]
            pub fn expired(&self) -> bool {
                <Self as Timer>::expired(self)
            }
        }
    )*};
}
inherent_timer_methods!(Egg, Repeat, Date);
