// Barriers: Barrier/BarrierEnd (sync until every enrolled party has synced) and
// AltingBarrier/AltingBarrierEnd (a barrier that can also be an Alt guard). Both
// allow enroll and resign while in use; the rules are docs/semantics.md's
// "Barriers".
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hoare/detail/ffi.hpp"
#include "hoare/error.hpp"

namespace hoare {

namespace detail {
// n ends enrolled on barrier b (a Barrier or an AltingBarrier).
template <class B>
auto enroll_n(const B& b, std::size_t n) {
  std::vector<decltype(b.enroll())> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n; ++i) v.push_back(b.enroll());
  return v;
}
}  // namespace detail

class Barrier;

// One enrolled party of a barrier. sync() waits until every enrolled party has
// synced; destroying the end (or resign()) leaves the barrier, even mid-round.
class BarrierEnd {
 public:
  BarrierEnd() = default;
  BarrierEnd(BarrierEnd&&) noexcept = default;
  BarrierEnd& operator=(BarrierEnd&&) noexcept = default;
  bool valid() const { return h_.has_value(); }
  void sync() {
    if (!h_) throw Error("hoare: sync on a resigned barrier end");
    detail::bridge_call([&] { ffi::barrier_sync(**h_); });
  }
  void resign() { h_.reset(); }
  inline Barrier barrier() const;

 private:
  friend class Barrier;
  explicit BarrierEnd(rust::Box<ffi::BarrierEndHandle> h) : h_(std::move(h)) {}
  detail::Handle<ffi::BarrierEndHandle> h_;
};

// A barrier: copies are handles to the same barrier. Parties enroll
// (and resign) dynamically, also while others are syncing.
class Barrier {
 public:
  Barrier() : h_(ffi::barrier_new()) {}
  Barrier(const Barrier& o) : h_(ffi::barrier_clone(*o.h_)) {}
  Barrier& operator=(const Barrier& o) {
    if (this != &o) h_ = ffi::barrier_clone(*o.h_);
    return *this;
  }
  BarrierEnd enroll() const {
    return BarrierEnd(detail::bridge_call([&] { return ffi::barrier_enroll(*h_); }));
  }
  std::vector<BarrierEnd> enroll(std::size_t n) const { return detail::enroll_n(*this, n); }
  std::size_t enrolled() const { return ffi::barrier_enrolled(*h_); }
  std::uint64_t rounds() const {
    return detail::bridge_call([&] { return ffi::barrier_rounds(*h_); });
  }
  bool operator==(const Barrier& o) const { return ffi::barrier_same(*h_, *o.h_); }
  bool operator!=(const Barrier& o) const { return !(*this == o); }

 private:
  friend class BarrierEnd;
  explicit Barrier(rust::Box<ffi::BarrierHandle> h) : h_(std::move(h)) {}
  rust::Box<ffi::BarrierHandle> h_;
};

inline Barrier BarrierEnd::barrier() const {
  if (!h_) throw Error("hoare: a resigned barrier end");
  return Barrier(ffi::barrier_of(**h_));
}

class AltingBarrier;

// One enrolled end of an alting barrier: a barrier that can be a guard of
// an Alt (Alt::barrier). The barrier completes when every enrolled end offers it
// (by sync() or by an alt with its barrier guard); an alt that offers it may
// choose another ready guard instead, and then withdraws its offer. Move-only;
// destroying the end (or resign()) leaves the barrier. One process uses an end at
// a time.
class AltingBarrierEnd {
 public:
  AltingBarrierEnd() = default;
  AltingBarrierEnd(AltingBarrierEnd&&) noexcept = default;
  AltingBarrierEnd& operator=(AltingBarrierEnd&&) noexcept = default;
  bool valid() const { return h_.has_value(); }
  // Offers the barrier and waits until every enrolled end does.
  void sync() {
    if (!h_) throw Error("hoare: sync on a resigned alting barrier end");
    detail::bridge_call([&] { ffi::alting_barrier_sync(**h_); });
  }
  void resign() { h_.reset(); }
  inline AltingBarrier barrier() const;

  // The bridge handle (for hoare::Alt).
  ffi::AltingBarrierEndHandle& handle() {
    if (!h_) throw Error("hoare: an alt guard on a resigned alting barrier end");
    return **h_;
  }

 private:
  friend class AltingBarrier;
  explicit AltingBarrierEnd(rust::Box<ffi::AltingBarrierEndHandle> h) : h_(std::move(h)) {}
  detail::Handle<ffi::AltingBarrierEndHandle> h_;
};

// An alting barrier: a handle to enroll ends with (copies refer to the same barrier).
class AltingBarrier {
 public:
  AltingBarrier() : h_(ffi::alting_barrier_new()) {}
  AltingBarrier(const AltingBarrier& o) : h_(ffi::alting_barrier_clone(*o.h_)) {}
  AltingBarrier& operator=(const AltingBarrier& o) {
    if (this != &o) h_ = ffi::alting_barrier_clone(*o.h_);
    return *this;
  }
  AltingBarrierEnd enroll() const {
    return AltingBarrierEnd(detail::bridge_call([&] { return ffi::alting_barrier_enroll(*h_); }));
  }
  std::vector<AltingBarrierEnd> enroll(std::size_t n) const { return detail::enroll_n(*this, n); }
  std::size_t enrolled() const {
    return detail::bridge_call([&] { return ffi::alting_barrier_enrolled(*h_); });
  }
  // How many times the barrier has completed.
  std::uint64_t rounds() const {
    return detail::bridge_call([&] { return ffi::alting_barrier_rounds(*h_); });
  }

 private:
  friend class AltingBarrierEnd;
  explicit AltingBarrier(rust::Box<ffi::AltingBarrierHandle> h) : h_(std::move(h)) {}
  rust::Box<ffi::AltingBarrierHandle> h_;
};

inline AltingBarrier AltingBarrierEnd::barrier() const {
  if (!h_) throw Error("hoare: barrier() of a resigned alting barrier end");
  return AltingBarrier(ffi::alting_barrier_of(**h_));
}
}  // namespace hoare
