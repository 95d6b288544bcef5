// The checking runtime: runs a process network on one thread and explores the
// orders of its hoare operations (see docs/checking.md). Needs the Rust library
// built with the `check` feature (cpp/README.md, "Building"); without it
// Builder::run throws hoare::Error saying so.
//
//   auto stats = hoare::check::Builder().exhaustive().run([] {
//     auto [tx, rx] = hoare::channel<int>();
//     auto h = hoare::spawn([tx = std::move(tx)]() mutable { tx.send(1); });
//     if (rx.recv() != 1) throw std::logic_error("lost");
//     h.join();
//   });
//
// The body runs once per execution, so it must build its network afresh each time.
// An exception that escapes it is a failure of that execution; run() throws
// hoare::check::Failure with the report (what each process waits on, the trace,
// and the schedule that replay() reproduces).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "hoare/detail/ffi.hpp"
#include "hoare/error.hpp"

namespace hoare::check {

// A failure found by a check: what() is the report.
class Failure : public Error {
 public:
  using Error::Error;
};

// What a check explored.
struct Stats {
  std::uint64_t executions = 0;
  bool complete = false;  // every distinct interleaving was explored
};

namespace detail {

// A body the checker may run once per execution.
template <class F>
class RepeatTask final : public ffi::Task {
 public:
  explicit RepeatTask(F f) : f_(std::move(f)) {}
  void run() noexcept override {
    std::string failure;
    try {
      f_();
      return;
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "an exception that is not a std::exception";
    }
    // Outside the handler: the checker may switch processes in the call.
    ffi::check_fail(rust::Str(failure.data(), failure.size()));
  }

 private:
  F f_;
};

}  // namespace detail

// Configures and runs a check (mirrors the Rust hoare::check::Builder).
class Builder {
 public:
  // Every distinct interleaving (the default).
  Builder& exhaustive() {
    o_.mode = 0;
    return *this;
  }
  // `executions` executions choosing uniformly at random.
  Builder& random(std::uint64_t executions) {
    o_.mode = 1;
    o_.executions = executions;
    return *this;
  }
  // `executions` executions of PCT with bug depth `depth`.
  Builder& pct(std::uint32_t depth, std::uint64_t executions) {
    o_.mode = 2;
    o_.depth = depth;
    o_.executions = executions;
    return *this;
  }
  // Every schedule within `delays` deviations from a round-robin one.
  Builder& delay_bound(std::uint32_t delays) {
    o_.mode = 3;
    o_.depth = delays;
    return *this;
  }
  Builder& seed(std::uint64_t s) {
    o_.seed = s;
    return *this;
  }
  // Cuts each execution after `n` steps (networks that do not end).
  Builder& max_steps(std::uint64_t n) {
    o_.max_steps = n;
    return *this;
  }
  template <class Rep, class Period>
  Builder& max_time(std::chrono::duration<Rep, Period> d) {
    o_.max_time_ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
    return *this;
  }
  // Replays the execution of a report's schedule.
  Builder& replay(const std::string& schedule) {
    o_.replay = rust::String(schedule);
    return *this;
  }
  // Timeouts fire only when nothing else can run.
  Builder& quiescent_time() {
    o_.quiescent = true;
    return *this;
  }

  // Checks `f`; throws Failure with the report on the first failure.
  template <class F>
  Stats run(F f) const {
    ffi::CheckOpts o = o_;
    ffi::CheckStats s;
    try {
      s = ffi::check_run(std::make_unique<detail::RepeatTask<F>>(std::move(f)), o);
    } catch (const rust::Error& e) {
      throw Failure(e.what());
    }
    return Stats{s.executions, s.complete};
  }

 private:
  ffi::CheckOpts o_{0, 0, 0, 0, 0, 0, rust::String(), false};
};

}  // namespace hoare::check
