// Alternation: Alt (a builder of receive, send, timeout, skip and alting-barrier
// guards, selected once) and RecvAny (a replicated receive guard over a fixed set
// of ends, built once and selected on many times).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "hoare/barrier.hpp"
#include "hoare/chan.hpp"
#include "hoare/detail/ffi.hpp"
#include "hoare/detail/value.hpp"
#include "hoare/error.hpp"
#include "hoare/timer.hpp"

namespace hoare {

// Alternation: wait for the first ready of several guards, choose exactly one (the
// others leave no trace) and run its handler. The rules (readiness, pri and fair,
// preconditions, timers) are docs/semantics.md's "Alternation".
//
//   hoare::Alt()
//       .recv(rx1, [](Msg m) { ... })            // a value arrived
//       .recv_if(ready, rx2, [](int v) { ... })  // with a precondition
//       .recv_for(workers, [](std::size_t i, int v) { ... })  // one guard per end
//       .send(tx, std::move(reply), [] { ... })  // an output guard
//       .timeout(egg, [] { ... })                // Egg/Repeat/Date (by reference) or a duration
//       .skip([] { ... })                        // chosen only if nothing else is ready
//       .select();                               // pri; select(fair) for the fair policy
//
// select() returns the index of the chosen guard (in the order added; a recv_for
// counts as one guard) after its handler ran. A guard on a poisoned channel is ready;
// if it is chosen, select() throws hoare::Poisoned. A handler may take the value
// (T), the element index and the value (std::size_t, T) for recv_for, or nothing.
// An Alt selects once; it allocates (like the Rust builder).
//
// On a rendezvous channel of a by-address type, the writer released by an alt's
// receive waits (yielding) until the alt has moved the value out of its object.

// The state of the fair policy, kept across the alts of one loop.
struct Fair {
  std::size_t next = 0;
};

namespace detail {
struct Ignore {
  template <class... A>
  void operator()(A&&...) const {}
};

template <class F, class T>
void call_recv_handler(F& f, std::size_t i, T&& v) {
  if constexpr (std::is_invocable_v<F&, std::size_t, T&&>) {
    f(i, std::move(v));
  } else if constexpr (std::is_invocable_v<F&, T&&>) {
    f(std::move(v));
  } else {
    static_assert(std::is_invocable_v<F&>, "a recv handler takes (T), (std::size_t, T) or ()");
    f();
  }
}

class AltGuardBase {
 public:
  virtual ~AltGuardBase() = default;
  // Runs the handler of element `i` of this guard, which the alt chose.
  virtual void fire(std::size_t i, ffi::Status st) = 0;
  // Rethrows an exception a move into a box threw before the alt started.
  virtual void rethrow_pending() {}
  // For a timeout guard: nanoseconds from now to its deadline (asked once).
  virtual std::uint64_t start_ns() { return 0; }
};

template <class T, class F>
class RecvGuard final : public AltGuardBase {
 public:
  // One allocation for the storage and exception slot of every end.
  RecvGuard(std::size_t n, F f) : es_(new Entry[n]), f_(std::move(f)) {}
  std::uintptr_t slot(std::size_t i) { return reinterpret_cast<std::uintptr_t>(es_[i].slot.raw()); }
  std::uintptr_t err(std::size_t i) { return reinterpret_cast<std::uintptr_t>(&es_[i].err); }
  void fire(std::size_t i, ffi::Status st) override {
    rethrow_if(es_[i].err);
    if (st == ffi::Status::Poisoned) throw Poisoned();
    es_[i].slot.set_full();
    call_recv_handler(f_, i, std::move(es_[i].slot.get()));
  }

 private:
  struct Entry {
    Slot<T> slot;
    ffi::ExcSlot err;
  };
  std::unique_ptr<Entry[]> es_;
  F f_;
};

template <class T, class F>
class SendGuard final : public AltGuardBase {
 public:
  SendGuard(T v, F f) : value_(std::move(v)), f_(std::move(f)) {}
  std::uintptr_t value() { return reinterpret_cast<std::uintptr_t>(&value_); }
  std::uintptr_t err() { return reinterpret_cast<std::uintptr_t>(&err_); }
  void fire(std::size_t, ffi::Status st) override {
    rethrow_if(err_);
    if (st == ffi::Status::Poisoned) throw Poisoned();
    f_();
  }
  void rethrow_pending() override { rethrow_if(err_); }

 private:
  T value_;
  ffi::ExcSlot err_;
  F f_;
};

// A timeout guard on a timer type of the caller's own (anything with deadline() and
// fired()): asked for its deadline when the alt starts, told when it fired. (The
// guards on hoare's timers and on durations are the Rust alt's own.)
template <class Timer, class F>
class TimeoutGuard final : public AltGuardBase {
 public:
  TimeoutGuard(Timer* t, F f) : t_(t), f_(std::move(f)) {}
  std::uint64_t start_ns() override { return until_ns(t_->deadline()); }
  void fire(std::size_t, ffi::Status) override {
    t_->fired();
    f_();
  }

 private:
  Timer* t_;
  F f_;
};

template <class F>
class SkipGuard final : public AltGuardBase {
 public:
  explicit SkipGuard(F f) : f_(std::move(f)) {}
  void fire(std::size_t, ffi::Status) override { f_(); }

 private:
  F f_;
};

template <class R>
std::uintptr_t end_addr(const R& end) {
  if (!end.valid()) throw Error("hoare: an alt guard on an empty (moved-from) channel end");
  return reinterpret_cast<std::uintptr_t>(&end.handle());
}
}  // namespace detail

class Alt {
 public:
  Alt() = default;
  Alt(Alt&&) = default;
  Alt& operator=(Alt&&) = default;

  template <class T, bool S, class F = detail::Ignore>
  Alt& recv(BasicRx<T, S>& rx, F f = {}) {
    return recv_if(true, rx, std::move(f));
  }
  template <class T, bool S, class F = detail::Ignore>
  Alt& recv_if(bool cond, BasicRx<T, S>& rx, F f = {}) {
    auto g = std::make_unique<detail::RecvGuard<T, F>>(1, std::move(f));
    add(ffi::AltKind::Recv, cond, detail::end_addr(rx), g->slot(0), g->err(0), 0);
    guards_.push_back(std::move(g));
    return *this;
  }

  // One receive guard per end of `ends` (a range of Rx/SharedRx); the handler gets
  // the element's index.
  template <class Range, class F = detail::Ignore>
  Alt& recv_for(Range& ends, F f = {}) {
    return recv_for_if(true, ends, std::move(f));
  }
  template <class Range, class F = detail::Ignore>
  Alt& recv_for_if(bool cond, Range& ends, F f = {}) {
    using End = std::decay_t<decltype(*std::begin(ends))>;
    using T = typename End::value_type;
    std::size_t n = static_cast<std::size_t>(std::distance(std::begin(ends), std::end(ends)));
    auto g = std::make_unique<detail::RecvGuard<T, F>>(n, std::move(f));
    entries_.reserve(entries_.size() + n);
    where_.reserve(where_.size() + n);
    std::size_t i = 0;
    for (auto& e : ends) {
      add(ffi::AltKind::Recv, cond, detail::end_addr(e), g->slot(i), g->err(i), 0, i);
      ++i;
    }
    guards_.push_back(std::move(g));
    return *this;
  }

  // An output guard: sends `value` if chosen (it is dropped otherwise).
  template <class T, bool S, class F = detail::Ignore>
  Alt& send(BasicTx<T, S>& tx, T value, F f = {}) {
    return send_if(true, tx, std::move(value), std::move(f));
  }
  template <class T, bool S, class F = detail::Ignore>
  Alt& send_if(bool cond, BasicTx<T, S>& tx, T value, F f = {}) {
    auto g = std::make_unique<detail::SendGuard<T, F>>(std::move(value), std::move(f));
    add(ffi::AltKind::Send, cond, detail::end_addr(tx), g->value(), g->err(), 0);
    guards_.push_back(std::move(g));
    return *this;
  }

  // A timeout guard on a timer kept across alts (Egg, Repeat, Date: by reference,
  // so that a Repeat advances when it fires; or any type with deadline() and
  // fired()) ...
  template <class Timer, class F = detail::Ignore,
            class = decltype(std::declval<Timer&>().deadline(), std::declval<Timer&>().fired())>
  Alt& timeout(Timer& timer, F f = {}) {
    return timeout_if(true, timer, std::move(f));
  }
  template <class Timer, class F = detail::Ignore,
            class = decltype(std::declval<Timer&>().deadline(), std::declval<Timer&>().fired())>
  Alt& timeout_if(bool cond, Timer& timer, F f = {}) {
    if constexpr (detail::is_hoare_timer<Timer>) {
      // The Rust timer itself: the Rust alt asks its deadline and reports the firing.
      auto addr = reinterpret_cast<std::uintptr_t>(&timer.handle());
      add(ffi::AltKind::Timeout, cond, addr, 0, 0, 0);
      guards_.push_back(std::make_unique<detail::SkipGuard<F>>(std::move(f)));
    } else {
      add(ffi::AltKind::Timeout, cond, 0, 0, 0, 0);
      guards_.push_back(std::make_unique<detail::TimeoutGuard<Timer, F>>(&timer, std::move(f)));
      timeouts_.push_back(entries_.size() - 1);
    }
    return *this;
  }
  // ... or a relative timeout.
  template <class Rep, class Period, class F = detail::Ignore>
  Alt& timeout(std::chrono::duration<Rep, Period> d, F f = {}) {
    return timeout_if(true, d, std::move(f));
  }
  template <class Rep, class Period, class F = detail::Ignore>
  Alt& timeout_if(bool cond, std::chrono::duration<Rep, Period> d, F f = {}) {
    // An Egg of this alt alone, without a timer object: the Rust alt times out `d`
    // after it starts.
    add(ffi::AltKind::Timeout, cond, 0, 0, 0, detail::to_ns(d));
    guards_.push_back(std::make_unique<detail::SkipGuard<F>>(std::move(f)));
    return *this;
  }

  template <class F = detail::Ignore>
  Alt& skip(F f = {}) {
    return skip_if(true, std::move(f));
  }
  template <class F = detail::Ignore>
  Alt& skip_if(bool cond, F f = {}) {
    add(ffi::AltKind::Skip, cond, 0, 0, 0, 0);
    guards_.push_back(std::make_unique<detail::SkipGuard<F>>(std::move(f)));
    return *this;
  }

  // An alting-barrier guard: chosen when every end enrolled on the barrier offers
  // it; then f() runs. The end is used by this alt until select() returns.
  template <class F = detail::Ignore>
  Alt& barrier(AltingBarrierEnd& end, F f = {}) {
    return barrier_if(true, end, std::move(f));
  }
  template <class F = detail::Ignore>
  Alt& barrier_if(bool cond, AltingBarrierEnd& end, F f = {}) {
    auto addr = reinterpret_cast<std::uintptr_t>(&end.handle());
    for (const auto& e : entries_) {
      if (e.kind == ffi::AltKind::Barrier && e.end == addr)
        throw Error("hoare: two barrier guards on one alting barrier end in one alt");
    }
    add(ffi::AltKind::Barrier, cond, addr, 0, 0, 0);
    guards_.push_back(std::make_unique<detail::SkipGuard<F>>(std::move(f)));
    return *this;
  }

  // Pri select: the first ready guard in order. Returns the chosen guard's index.
  std::size_t select() { return run(nullptr); }
  // Fair select: starts after the guard `fair` chose last time.
  std::size_t select(Fair& fair) { return run(&fair); }

 private:
  struct Where {
    std::size_t guard;
    std::size_t element;
  };

  // Records one Rust-level guard of the C++ guard about to be pushed to guards_.
  void add(ffi::AltKind k, bool cond, std::uintptr_t end, std::uintptr_t value, std::uintptr_t err,
           std::uint64_t ns, std::size_t element = 0) {
    entries_.push_back(ffi::AltGuard{k, cond, end, value, err, ns});
    where_.push_back(Where{guards_.size(), element});
  }

  std::size_t run(Fair* fair) {
    if (used_) throw Error("hoare: an Alt selects only once");
    used_ = true;
    for (std::size_t e : timeouts_) entries_[e].timeout_ns = guards_[where_[e].guard]->start_ns();
    auto out = detail::bridge_call([&] {
      return ffi::alt_select(rust::Slice<const ffi::AltGuard>(entries_.data(), entries_.size()),
                             fair != nullptr, fair ? fair->next : 0);
    });
    if (fair) fair->next = out.fair_next;
    if (out.guard >= where_.size()) {
      for (auto& g : guards_) g->rethrow_pending();
      throw Error("hoare: alt failed");
    }
    Where w = where_[out.guard];
    if (out.status == ffi::Status::Poisoned) throw Poisoned(w.guard);
    guards_[w.guard]->fire(w.element, out.status);
    return w.guard;
  }

  std::vector<std::unique_ptr<detail::AltGuardBase>> guards_;
  std::vector<ffi::AltGuard> entries_;
  std::vector<Where> where_;
  std::vector<std::size_t> timeouts_;
  bool used_ = false;
};

// A replicated receive guard over a fixed set of ends (of one element type and one
// sharing kind), built once and selected on again and again: for one reader over
// many channels in a loop it avoids rebuilding an Alt (and its allocations) per
// select. The ends must outlive the RecvAny (moving an Rx object is fine: the set
// refers to the Rust end it owns).
//
//   hoare::RecvAny<int> set(rxs);
//   int v;
//   std::size_t i = set.select(fair, v);   // or set.select(v) for pri
//
// select() returns the index of the chosen end; on a poisoned end it throws
// hoare::Poisoned whose guard() is that index.
template <class T>
class RecvAny {
 public:
  template <class Range>
  explicit RecvAny(Range& ends) {
    std::vector<std::size_t> addrs;
    for (auto& e : ends) addrs.push_back(static_cast<std::size_t>(detail::end_addr(e)));
    set_.emplace(detail::bridge_call([&] {
      return ffi::recv_set_new(rust::Slice<const std::size_t>(addrs.data(), addrs.size()));
    }));
    n_ = addrs.size();
  }

  std::size_t size() const { return n_; }

  // Pri select: the first ready end in order.
  std::size_t select(T& out) { return run(nullptr, out); }
  // Fair select.
  std::size_t select(Fair& fair, T& out) { return run(&fair, out); }
  // Selects and calls f(index, value) (pri) ...
  template <class F>
  std::size_t select_with(F&& f) {
    detail::Slot<T> slot;
    std::size_t i = raw(nullptr, slot);
    f(i, std::move(slot.get()));
    return i;
  }
  // ... or with the fair policy.
  template <class F>
  std::size_t select_with(Fair& fair, F&& f) {
    detail::Slot<T> slot;
    std::size_t i = raw(&fair, slot);
    f(i, std::move(slot.get()));
    return i;
  }

 private:
  std::size_t run(Fair* fair, T& out) {
    detail::Slot<T> slot;
    std::size_t i = raw(fair, slot);
    out = std::move(slot.get());
    return i;
  }
  std::size_t raw(Fair* fair, detail::Slot<T>& slot) {
    ffi::ExcSlot err;
    auto out = detail::bridge_call([&] {
      return ffi::recv_set_select(**set_, slot.raw(), &err, fair != nullptr, fair ? fair->next : 0);
    });
    if (fair) fair->next = out.fair_next;
    detail::rethrow_if(err);
    if (out.status == ffi::Status::Poisoned) throw Poisoned(out.guard);
    slot.set_full();
    return out.guard;
  }

  std::optional<rust::Box<ffi::RecvSet>> set_;
  std::size_t n_ = 0;
};

}  // namespace hoare
