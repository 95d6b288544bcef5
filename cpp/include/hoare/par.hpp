// Parallel communication (SPEC C11, occam's PAR of communications): one process
// sends to, or receives from, several channels at once and continues when all of
// them have ended, without a process per channel (hoare::Par over the Rust Par).
//
//   std::int64_t a = 0;
//   rust::String s;
//   std::int64_t out = 7;
//   hoare::Par par;
//   par.recv(rx_a, a).recv(rx_s, s).send(tx, out);
//   if (!par.run()) {            // false: some communication did not happen
//     for (std::size_t i = 0; i < par.size(); ++i)
//       if (par.status(i) == hoare::Status::poisoned) ...;
//   }
//
// Each communication ends on its own: completed (Status::ok), or failed on poison
// (Status::poisoned; a failed send leaves its value in the variable it came from,
// a failed receive leaves its variable untouched), or with run_for/run_until at the
// deadline (Status::timeout). run() returns once every one has ended; it throws
// only for misuse or an exception of a value's move constructor. The variables
// are referenced, not copied: they must live until run() returns. A Par runs once.
//
// Limit: a receive of a by-address type (neither native nor trivially copyable,
// e.g. std::string) needs a buffered channel: on a rendezvous channel its writer
// would stay blocked until the whole Par ended (run() throws hoare::Error).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "hoare/chan.hpp"
#include "hoare/detail/ffi.hpp"
#include "hoare/detail/value.hpp"
#include "hoare/error.hpp"

namespace hoare {

class Par {
 public:
  Par() = default;
  Par(const Par&) = delete;
  Par& operator=(const Par&) = delete;
  Par(Par&&) = default;
  Par& operator=(Par&&) = default;

  // Receives a value from `rx` into `out`.
  template <class T, bool S>
  Par& recv(BasicRx<T, S>& rx, T& out) {
    auto b = std::make_unique<RecvBranch<T>>(out);
    std::uint8_t* slot = b->slot.raw();  // before b is moved from
    add(false, end_of(rx), slot, std::move(b));
    return *this;
  }
  // Sends the value of `value` on `tx` (moved out of it; given back on failure).
  template <class T, bool S>
  Par& send(BasicTx<T, S>& tx, T& value) {
    auto b = std::make_unique<SendBranch>();
    add(true, end_of(tx), reinterpret_cast<std::uint8_t*>(&value), std::move(b));
    return *this;
  }

  // Runs every communication at once; returns whether all completed.
  bool run() { return go(false, 0); }
  // The same, withdrawing at the deadline those that have not completed.
  template <class Rep, class Period>
  bool run_for(std::chrono::duration<Rep, Period> d) {
    return go(true, detail::to_ns(d));
  }
  template <class Clock, class Dur>
  bool run_until(std::chrono::time_point<Clock, Dur> tp) {
    return go(true, detail::until_ns(tp));
  }

  // The number of communications, and how the i-th (in the order added) ended.
  std::size_t size() const { return items_.size(); }
  Status status(std::size_t i) const { return detail::status(items_.at(i).status); }

 private:
  struct Branch {
    virtual ~Branch() = default;
    // The communication ended with `st`: finish it (rethrowing a move's exception).
    virtual void finish(ffi::Status st) = 0;
    ffi::ExcSlot err;
  };
  template <class T>
  struct RecvBranch final : Branch {
    explicit RecvBranch(T& o) : out(o) {}
    void finish(ffi::Status st) override {
      detail::rethrow_if(err);
      if (st != ffi::Status::Ok) return;
      slot.set_full();
      out = std::move(slot.get());
    }
    detail::Slot<T> slot;
    T& out;
  };
  struct SendBranch final : Branch {
    void finish(ffi::Status) override { detail::rethrow_if(err); }
  };

  template <class End>
  static std::uintptr_t end_of(const End& e) {
    if (!e.valid()) throw Error("hoare: a Par on an empty (moved-from) channel end");
    return reinterpret_cast<std::uintptr_t>(&e.handle());
  }
  void add(bool send, std::uintptr_t end, std::uint8_t* value, std::unique_ptr<Branch> b) {
    if (ran_) throw Error("hoare: a Par runs only once");
    auto err = reinterpret_cast<std::uintptr_t>(&b->err);
    branches_.push_back(std::move(b));
    try {
      items_.push_back(
          ffi::ParItem{send, end, reinterpret_cast<std::uintptr_t>(value), err, ffi::Status::Ok});
    } catch (...) {
      branches_.pop_back();
      throw;
    }
  }
  bool go(bool timed, std::uint64_t ns) {
    if (ran_) throw Error("hoare: a Par runs only once");
    ran_ = true;
    bool started = detail::bridge_call([&] {
      return ffi::par_run(rust::Slice<ffi::ParItem>(items_.data(), items_.size()), timed, ns);
    });
    if (!started) {
      // A move into a box threw before anything happened.
      for (auto& b : branches_) detail::rethrow_if(b->err);
      throw Error("hoare: a Par failed before it started");
    }
    bool all = true;
    for (std::size_t i = 0; i < items_.size(); ++i) {
      branches_[i]->finish(items_[i].status);
      all = all && items_[i].status == ffi::Status::Ok;
    }
    return all;
  }

  std::vector<ffi::ParItem> items_;
  std::vector<std::unique_ptr<Branch>> branches_;
  bool ran_ = false;
};

}  // namespace hoare
