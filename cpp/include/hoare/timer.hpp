// Timers: Egg, Repeat and Date, for sleeps (this_proc::sleep), timed channel
// operations (send_timed, recv_timed) and alt timeouts (Alt::timeout).
#pragma once

#include <chrono>

#include "hoare/detail/ffi.hpp"
#include "hoare/process.hpp"

namespace hoare {

// The timers of hoare::timer, as values over std::chrono::steady_clock
// (the clock of Rust's Instant). An operation that can time out asks deadline()
// once when it starts and calls fired() only if the timeout ended it.
//   Egg    — relative: each use times out `period` after it starts.
//   Repeat — periodic grid start + k*period: a use does not restart it; each
//            firing advances one period (no drift).
//   Date   — absolute: a fixed time point; stays expired.
using Clock = std::chrono::steady_clock;

namespace detail {
// d in the clock's unit, saturated at its ends instead of overflowing (so that
// hours::max() means "for ever", not a negative period).
template <class Rep, class Period>
Clock::duration clock_duration(std::chrono::duration<Rep, Period> d) {
  using Wide = std::chrono::duration<long double, Clock::period>;
  long double x = std::chrono::duration_cast<Wide>(d).count();
  if (x != x) return Clock::duration::zero();  // NaN
  if (x >= static_cast<long double>(Clock::duration::max().count())) return Clock::duration::max();
  if (x <= static_cast<long double>(Clock::duration::min().count())) return Clock::duration::min();
  return Clock::duration(static_cast<Clock::rep>(x));
}

// t + d, saturated at the clock's ends.
inline Clock::time_point add_saturated(Clock::time_point t, Clock::duration d) {
  if (d > Clock::duration::zero() && t > Clock::time_point::max() - d) {
    return Clock::time_point::max();
  }
  if (d < Clock::duration::zero() && t < Clock::time_point::min() - d) {
    return Clock::time_point::min();
  }
  return t + d;
}
}  // namespace detail

class Egg {
 public:
  template <class Rep, class Period>
  explicit Egg(std::chrono::duration<Rep, Period> period)
      : period_(detail::clock_duration(period)) {}
  Clock::time_point deadline() const { return detail::add_saturated(Clock::now(), period_); }
  void fired() {}
  bool expired() const { return period_ <= Clock::duration::zero(); }
  Clock::duration period() const { return period_; }

 private:
  Clock::duration period_;
};

class Repeat {
 public:
  template <class Rep, class Period>
  explicit Repeat(std::chrono::duration<Rep, Period> period) : Repeat(Clock::now(), period) {}
  template <class Rep, class Period>
  Repeat(Clock::time_point start, std::chrono::duration<Rep, Period> period)
      : period_(detail::clock_duration(period)), next_(detail::add_saturated(start, period_)) {}
  Clock::time_point deadline() const { return next_; }
  void fired() { advance(); }
  bool expired() const { return Clock::now() >= next_; }
  void advance() { next_ = detail::add_saturated(next_, period_); }
  // Drops the ticks already passed except the latest.
  void skip_missed() {
    auto now = Clock::now();
    if (period_ <= Clock::duration::zero() || next_ >= now) return;
    next_ += period_ * ((now - next_) / period_);
  }
  Clock::duration period() const { return period_; }
  Clock::time_point next_tick() const { return next_; }

 private:
  Clock::duration period_;
  Clock::time_point next_;
};

class Date {
 public:
  explicit Date(Clock::time_point at) : at_(at) {}
  template <class Rep, class Period>
  static Date after(std::chrono::duration<Rep, Period> d) {
    return Date(detail::add_saturated(Clock::now(), detail::clock_duration(d)));
  }
  Clock::time_point deadline() const { return at_; }
  void fired() {}
  bool expired() const { return Clock::now() >= at_; }
  Clock::time_point at() const { return at_; }

 private:
  Clock::time_point at_;
};

namespace this_proc {
// Sleeps until the timer's deadline, then reports the firing (Repeat advances).
template <class Timer>
auto sleep(Timer& t) -> decltype(t.deadline(), t.fired(), void()) {
  sleep_until(t.deadline());
  t.fired();
}
}  // namespace this_proc

}  // namespace hoare
