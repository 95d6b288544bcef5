// Timers: Egg, Repeat and Date, for sleeps (this_proc::sleep), timed channel
// operations (send_timed, recv_timed) and alt timeouts (Alt::timeout).
//
// They are the Rust timers of hoare::timer (hoare_core::timer), held through the
// bridge: each C++ timer owns one Rust timer, allocated when it is made (a copy
// makes another), so using it (a sleep, an alt, a timed operation) allocates
// nothing. An operation that can time out asks the timer for its deadline once
// when it starts and reports the firing only if the timeout ended it
// (docs/semantics.md, "Alternation"):
//   Egg    — relative: each use times out `period` after it starts.
//   Repeat — periodic grid start + k*period: a use does not restart it; each
//            firing advances one period (no drift).
//   Date   — absolute: a fixed time point; stays expired.
// Time points are std::chrono::steady_clock's (the clock of Rust's Instant).
// Durations are whole nanoseconds; a negative one counts as zero, one too long for
// 64-bit nanoseconds (hours::max()) or further than a century as "for ever" (the
// deadline is clamped a century ahead, as in Rust).
#pragma once

#include <chrono>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "hoare/detail/ffi.hpp"
#include "hoare/error.hpp"
#include "hoare/process.hpp"

namespace hoare {

using Clock = std::chrono::steady_clock;

namespace detail {
// A time point as the bridge passes it: nanoseconds since the clock's epoch.
inline std::int64_t steady_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
inline Clock::time_point from_steady_ns(std::int64_t ns) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}
// A period the bridge reports (unsigned nanoseconds), saturated at the clock's end.
inline Clock::duration from_period_ns(std::uint64_t ns) {
  constexpr auto most = static_cast<std::uint64_t>(std::chrono::nanoseconds::max().count());
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::nanoseconds(static_cast<std::int64_t>(ns < most ? ns : most)));
}

// What Egg, Repeat and Date share: the Rust timer they wrap. A moved-from timer is
// empty: using it throws hoare::Error.
class TimerBase {
 public:
  // The deadline of an operation that starts now (an Egg restarts here).
  Clock::time_point deadline() const { return from_steady_ns(ffi::timer_deadline(handle())); }
  // Tells the timer that an operation ended by its timeout (a Repeat advances).
  void fired() { ffi::timer_fired(handle()); }
  // Whether an operation starting now would time out at once (not a use: it neither
  // restarts an Egg nor advances a Repeat).
  bool expired() const { return ffi::timer_expired(handle()); }

  // The Rust timer (for hoare::Alt and this_proc::sleep).
  ffi::TimerHandle& handle() {
    if (!h_) throw Error("hoare: use of a moved-from timer");
    return **h_;
  }
  const ffi::TimerHandle& handle() const {
    if (!h_) throw Error("hoare: use of a moved-from timer");
    return **h_;
  }

 protected:
  explicit TimerBase(rust::Box<ffi::TimerHandle> h) : h_(std::move(h)) {}
  // A copy is a timer of its own, in the same state (a Repeat at the same tick).
  TimerBase(const TimerBase& o) : h_(ffi::timer_clone(o.handle())) {}
  TimerBase& operator=(const TimerBase& o) {
    if (this != &o) h_ = Handle<ffi::TimerHandle>(ffi::timer_clone(o.handle()));
    return *this;
  }
  TimerBase(TimerBase&&) noexcept = default;
  TimerBase& operator=(TimerBase&&) noexcept = default;
  ~TimerBase() = default;

 private:
  Handle<ffi::TimerHandle> h_;
};

template <class Timer>
constexpr bool is_hoare_timer = std::is_base_of_v<TimerBase, Timer>;
}  // namespace detail

// A relative timer: each use times out one period after the use starts.
class Egg : public detail::TimerBase {
 public:
  template <class Rep, class Period>
  explicit Egg(std::chrono::duration<Rep, Period> period)
      : TimerBase(ffi::timer_egg(detail::to_ns(period))) {}
  Clock::duration period() const { return detail::from_period_ns(ffi::timer_period(handle())); }
};

// A periodic timer: its ticks lie on the grid start + k*period (k = 1, 2, ...). A use
// does not restart it; each firing moves it on by exactly one period, so the grid
// never drifts. A consumer that fell behind sees the missed ticks expired, one per
// use, unless it calls skip_missed().
class Repeat : public detail::TimerBase {
 public:
  // First tick one period from now.
  template <class Rep, class Period>
  explicit Repeat(std::chrono::duration<Rep, Period> period)
      : TimerBase(ffi::timer_repeat(detail::to_ns(period))) {}
  // First tick at start + period.
  template <class Rep, class Period>
  Repeat(Clock::time_point start, std::chrono::duration<Rep, Period> period)
      : TimerBase(ffi::timer_repeat_from(detail::steady_ns(start), detail::to_ns(period))) {}
  // Moves on one period (what fired() does).
  void advance() { ffi::timer_advance(handle()); }
  // Drops the ticks already passed except the latest.
  void skip_missed() { ffi::timer_skip_missed(handle()); }
  Clock::duration period() const { return detail::from_period_ns(ffi::timer_period(handle())); }
  // The next tick, without using the timer.
  Clock::time_point next_tick() const { return detail::from_steady_ns(ffi::timer_next(handle())); }
};

// An absolute timer: times out at a fixed time point and stays expired afterwards.
class Date : public detail::TimerBase {
 public:
  explicit Date(Clock::time_point at) : TimerBase(ffi::timer_date(detail::steady_ns(at))) {}
  template <class Rep, class Period>
  static Date after(std::chrono::duration<Rep, Period> d) {
    return Date(ffi::timer_date_after(detail::to_ns(d)));
  }
  Clock::time_point at() const { return detail::from_steady_ns(ffi::timer_next(handle())); }

 private:
  explicit Date(rust::Box<ffi::TimerHandle> h) : TimerBase(std::move(h)) {}
};

namespace this_proc {
// Sleeps until the timer's deadline, then reports the firing (Repeat advances).
// Takes hoare's timers and any type with deadline() and fired().
template <class Timer>
auto sleep(Timer& t) -> decltype(t.deadline(), t.fired(), void()) {
  if constexpr (detail::is_hoare_timer<Timer>) {
    detail::bridge_call([&] { ffi::timer_sleep(t.handle()); });
  } else {
    sleep_until(t.deadline());
    t.fired();
  }
}
}  // namespace this_proc

}  // namespace hoare
