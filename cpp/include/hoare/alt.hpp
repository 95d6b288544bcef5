// Alternation: Alt (a builder of receive, send, timeout, skip and alting-barrier
// guards, selected once) and RecvAny (a replicated receive guard over a fixed set
// of ends, built once and selected on many times).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "hoare/barrier.hpp"
#include "hoare/broadcast.hpp"
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
// if it is chosen, select() throws hoare::Poisoned. select_status() (and
// select_status(fair)) does not: it returns an AltResult whose status is
// Status::poisoned instead (the handler did not run), so an alt loop can drop a
// poisoned guard with its precondition and go on without a try/catch. A handler may
// take the value (T), the element index and the value (std::size_t, T) for recv_for,
// or nothing. An Alt selects once.
//
// Allocation: an Alt keeps its guards in storage of its own (kInlineGuards guards and
// kInlineBytes bytes of handlers, values and receive slots), so a handful of guards
// with small handlers allocates nothing on either side of the bridge; beyond that
// a guard goes to the heap. (A recv_with guard allocates one box on the Rust side
// for its closure; a broadcast allocates a shared cell per value sent.)
//
// On a rendezvous channel of a by-address type, the writer released by an alt's
// receive waits (yielding) until the alt has moved the value out of its object.

// The state of the fair policy, kept across the alts of one loop.
struct Fair {
  std::size_t next = 0;
};

// What Alt::select_status() and RecvAny::select_status() report.
struct AltResult {
  // The chosen guard (for a RecvAny: the chosen end).
  std::size_t guard = 0;
  // The element of a recv_for guard (0 for other guards and for a RecvAny).
  std::size_t element = 0;
  // Status::ok: the guard's communication (or timeout, skip, barrier) happened and
  // its handler ran; Status::poisoned: its channel is poisoned, nothing was
  // communicated and the handler did not run.
  Status status = Status::ok;
  bool ok() const { return status == Status::ok; }
  bool poisoned() const { return status == Status::poisoned; }
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

// Storage inside an Alt for its guards (and their receive slots), the heap being the
// fallback: allocate() returns null when the rest does not fit.
class AltArena {
 public:
  static constexpr std::size_t kBytes = 768;
  AltArena() = default;
  AltArena(const AltArena&) = delete;
  AltArena& operator=(const AltArena&) = delete;

  void* allocate(std::size_t size, std::size_t align) {
    if (align > alignof(std::max_align_t)) return nullptr;
    std::size_t at = (used_ + align - 1) & ~(align - 1);
    if (at > kBytes || size > kBytes - at) return nullptr;
    used_ = at + size;
    return buf_ + at;
  }
  // Forgets every allocation (its objects are gone).
  void reset() noexcept { used_ = 0; }
  bool owns(const void* p) const {
    auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(buf_);
    return a >= b && a < b + kBytes;
  }

 private:
  alignas(std::max_align_t) unsigned char buf_[kBytes];
  std::size_t used_ = 0;
};

// A vector of trivially copyable values that holds its first N inline.
template <class T, std::size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallVec() = default;
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  std::size_t size() const { return size_; }
  T* data() { return heap_ ? heap_ : reinterpret_cast<T*>(inline_); }
  const T* data() const { return heap_ ? heap_ : reinterpret_cast<const T*>(inline_); }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

  void reserve(std::size_t n) {
    if (n <= cap_) return;
    T* p = static_cast<T*>(::operator new(n * sizeof(T)));
    std::memcpy(static_cast<void*>(p), data(), size_ * sizeof(T));
    if (heap_) ::operator delete(heap_);
    heap_ = p;
    cap_ = n;
  }
  void push_back(const T& v) {
    if (size_ == cap_) reserve(2 * cap_);
    std::memcpy(static_cast<void*>(data() + size_), &v, sizeof(T));
    ++size_;
  }

 private:
  void take(SmallVec& o) noexcept {
    heap_ = std::exchange(o.heap_, nullptr);
    size_ = std::exchange(o.size_, 0);
    cap_ = std::exchange(o.cap_, N);
    if (!heap_) std::memcpy(inline_, o.inline_, size_ * sizeof(T));
  }
  void release() noexcept {
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
    size_ = 0;
    cap_ = N;
  }

  T* heap_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

class AltGuardBase {
 public:
  virtual ~AltGuardBase() = default;
  // Runs the handler of element `i` of this guard, which the alt chose.
  virtual void fire(std::size_t i, ffi::Status st) = 0;
  // Rethrows an exception a move into a box threw before the alt started.
  virtual void rethrow_pending() {}
  // Fills in element `i`'s addresses (value, exception slot) and, for a timeout on
  // a timer of the caller's own, its nanoseconds, when the alt starts.
  virtual void prepare(std::size_t, ffi::AltGuard&) {}
  // Moves this guard into `to` (or the heap) and returns the new one (an Alt moved).
  virtual AltGuardBase* move_to(AltArena& to) = 0;
};

// A G made in `arena` if it fits, else on the heap (see destroy_guard).
template <class G, class... A>
G* make_guard(AltArena& arena, A&&... args) {
  if (void* p = arena.allocate(sizeof(G), alignof(G))) return ::new (p) G(std::forward<A>(args)...);
  return new G(std::forward<A>(args)...);
}

inline void destroy_guard(AltArena& arena, AltGuardBase* g) noexcept {
  if (arena.owns(g)) {
    g->~AltGuardBase();
  } else {
    delete g;
  }
}

// A receive guard over one end (recv) or several (recv_for): a slot for the value
// and an exception slot per end, in the arena if they fit.
template <class T, class F>
class RecvGuard final : public AltGuardBase {
 public:
  RecvGuard(AltArena& arena, std::size_t n, F f) : f_(std::move(f)) {
    alloc(arena, n);
    for (std::size_t i = 0; i < n; ++i) ::new (static_cast<void*>(es_ + i)) Entry;
  }
  // Moves `o` into `arena` (an Alt moved).
  RecvGuard(AltArena& arena, RecvGuard&& o) : f_(std::move(o.f_)) {
    alloc(arena, o.n_);
    std::size_t i = 0;
    try {
      for (; i < n_; ++i) {
        Entry* e = ::new (static_cast<void*>(es_ + i)) Entry;
        Entry& from = o.es_[i];
        e->err.error = std::move(from.err.error);
        if (from.slot.full()) {
          ::new (static_cast<void*>(e->slot.raw())) T(std::move(from.slot.get()));
          e->slot.set_full();
        }
      }
    } catch (...) {
      release(i + 1);  // entry i was made (empty) before T's move threw
      throw;
    }
  }
  ~RecvGuard() override { release(n_); }
  void prepare(std::size_t i, ffi::AltGuard& e) override {
    e.value = reinterpret_cast<std::uintptr_t>(es_[i].slot.raw());
    e.err = reinterpret_cast<std::uintptr_t>(&es_[i].err);
  }
  void fire(std::size_t i, ffi::Status st) override {
    rethrow_if(es_[i].err);
    if (st == ffi::Status::Poisoned) throw Poisoned();
    es_[i].slot.set_full();
    call_recv_handler(f_, i, std::move(es_[i].slot.get()));
  }
  AltGuardBase* move_to(AltArena& to) override {
    return make_guard<RecvGuard>(to, to, std::move(*this));
  }

 private:
  struct Entry {
    Slot<T> slot;
    ffi::ExcSlot err;
  };
  void release(std::size_t made) noexcept {
    for (std::size_t i = 0; i < made; ++i) es_[i].~Entry();
    if (heap_) ::operator delete(static_cast<void*>(es_));
  }
  void alloc(AltArena& arena, std::size_t n) {
    n_ = n;
    void* p = arena.allocate(n * sizeof(Entry), alignof(Entry));
    heap_ = p == nullptr;
    es_ = static_cast<Entry*>(heap_ ? ::operator new(n * sizeof(Entry)) : p);
  }

  Entry* es_ = nullptr;
  std::size_t n_ = 0;
  bool heap_ = false;
  F f_;
};

template <class T, class F>
class SendGuard final : public AltGuardBase {
 public:
  SendGuard(T v, F f) : value_(std::move(v)), f_(std::move(f)) {}
  SendGuard(SendGuard&& o) : value_(std::move(o.value_)), err_(o.err_), f_(std::move(o.f_)) {}
  void prepare(std::size_t, ffi::AltGuard& e) override {
    e.value = reinterpret_cast<std::uintptr_t>(&value_);
    e.err = reinterpret_cast<std::uintptr_t>(&err_);
  }
  void fire(std::size_t, ffi::Status st) override {
    rethrow_if(err_);
    if (st == ffi::Status::Poisoned) throw Poisoned();
    f_();
  }
  void rethrow_pending() override { rethrow_if(err_); }
  AltGuardBase* move_to(AltArena& to) override {
    return make_guard<SendGuard>(to, std::move(*this));
  }

 private:
  T value_;
  ffi::ExcSlot err_;
  F f_;
};

// An extended-rendezvous receive guard: when chosen, the handler runs on the value
// inside the bridge's call, with the writer still held (it is released when the
// handler returns or throws).
template <class T, class F>
class RecvWithGuard final : public AltGuardBase {
 public:
  explicit RecvWithGuard(F f) : f_(std::move(f)), task_(*this) {}
  RecvWithGuard(RecvWithGuard&& o) : f_(std::move(o.f_)), task_(*this) {}
  void prepare(std::size_t, ffi::AltGuard& e) override {
    e.value = reinterpret_cast<std::uintptr_t>(slot_.raw());
    e.err = reinterpret_cast<std::uintptr_t>(&err_);
    e.task = reinterpret_cast<std::uintptr_t>(static_cast<ffi::Task*>(&task_));
  }
  void fire(std::size_t, ffi::Status st) override {
    rethrow_if(err_);
    if (st == ffi::Status::Poisoned) throw Poisoned();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  AltGuardBase* move_to(AltArena& to) override {
    return make_guard<RecvWithGuard>(to, std::move(*this));
  }

 private:
  struct Run final : ffi::Task {
    explicit Run(RecvWithGuard& g) : g_(g) {}
    void run() noexcept override { g_.handle(); }
    RecvWithGuard& g_;
  };
  // In the bridge, the writer held: the value is in the slot (unless its move
  // threw).
  void handle() noexcept {
    if (err_.error) return;
    slot_.set_full();
    try {
      call_recv_handler(f_, 0, std::move(slot_.get()));
    } catch (...) {
      error_ = std::current_exception();
    }
  }

  Slot<T> slot_;
  ffi::ExcSlot err_;
  std::exception_ptr error_;
  F f_;
  Run task_;
};

// A timeout guard on a timer type of the caller's own (anything with deadline() and
// fired()): asked for its deadline when the alt starts, told when it fired. (The
// guards on hoare's timers and on durations are the Rust alt's own.)
template <class Timer, class F>
class TimeoutGuard final : public AltGuardBase {
 public:
  TimeoutGuard(Timer* t, F f) : t_(t), f_(std::move(f)) {}
  void prepare(std::size_t, ffi::AltGuard& e) override { e.timeout_ns = until_ns(t_->deadline()); }
  void fire(std::size_t, ffi::Status) override {
    t_->fired();
    f_();
  }
  AltGuardBase* move_to(AltArena& to) override {
    return make_guard<TimeoutGuard>(to, std::move(*this));
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
  AltGuardBase* move_to(AltArena& to) override {
    return make_guard<SkipGuard>(to, std::move(*this));
  }

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
  // Guards and bytes an Alt holds without allocating (see above).
  static constexpr std::size_t kInlineGuards = 8;
  static constexpr std::size_t kInlineBytes = detail::AltArena::kBytes;

  Alt() = default;
  Alt(const Alt&) = delete;
  Alt& operator=(const Alt&) = delete;
  // Moving an Alt moves its guards (their handlers and values).
  Alt(Alt&& o) { take(o); }
  Alt& operator=(Alt&& o) {
    if (this != &o) {
      clear();
      take(o);
    }
    return *this;
  }
  ~Alt() { clear(); }

  template <class T, bool S, class F = detail::Ignore>
  Alt& recv(BasicRx<T, S>& rx, F f = {}) {
    return recv_if(true, rx, std::move(f));
  }
  template <class T, bool S, class F = detail::Ignore>
  Alt& recv_if(bool cond, BasicRx<T, S>& rx, F f = {}) {
    auto end = detail::end_addr(rx);
    push(detail::make_guard<detail::RecvGuard<T, F>>(arena_, arena_, 1, std::move(f)));
    add(ffi::AltKind::Recv, cond, end, 0);
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
    for (auto& e : ends) (void)detail::end_addr(e);  // refuse a moved-from end first
    push(detail::make_guard<detail::RecvGuard<T, F>>(arena_, arena_, n, std::move(f)));
    entries_.reserve(entries_.size() + n);
    where_.reserve(where_.size() + n);
    std::size_t i = 0;
    for (auto& e : ends) add(ffi::AltKind::Recv, cond, detail::end_addr(e), 0, i++);
    return *this;
  }

  // An output guard: sends `value` if chosen (it is dropped otherwise).
  template <class T, bool S, class F = detail::Ignore>
  Alt& send(BasicTx<T, S>& tx, T value, F f = {}) {
    return send_if(true, tx, std::move(value), std::move(f));
  }
  template <class T, bool S, class F = detail::Ignore>
  Alt& send_if(bool cond, BasicTx<T, S>& tx, T value, F f = {}) {
    auto end = detail::end_addr(tx);
    push(detail::make_guard<detail::SendGuard<T, F>>(arena_, std::move(value), std::move(f)));
    add(ffi::AltKind::Send, cond, end, 0);
    return *this;
  }

  // An extended-rendezvous receive guard (JCSP's alt, then startRead): when it is
  // chosen, `f` runs on the value with the writer still blocked; the writer is
  // released when `f` returns or throws (select() then rethrows). On poison,
  // select() throws hoare::Poisoned (select_status(): status poisoned) and `f`
  // does not run.
  template <class T, bool S, class F = detail::Ignore>
  Alt& recv_with(BasicRx<T, S>& rx, F f = {}) {
    return recv_with_if(true, rx, std::move(f));
  }
  template <class T, bool S, class F = detail::Ignore>
  Alt& recv_with_if(bool cond, BasicRx<T, S>& rx, F f = {}) {
    auto end = detail::end_addr(rx);
    push(detail::make_guard<detail::RecvWithGuard<T, F>>(arena_, std::move(f)));
    add(ffi::AltKind::RecvWith, cond, end, 0);
    return *this;
  }

  // A receive guard on a broadcast's reader: ready when a value it has not taken is
  // there (or on poison).
  template <class T, class F = detail::Ignore>
  Alt& bcast_recv(BroadcastRx<T>& rx, F f = {}) {
    return bcast_recv_if(true, rx, std::move(f));
  }
  template <class T, class F = detail::Ignore>
  Alt& bcast_recv_if(bool cond, BroadcastRx<T>& rx, F f = {}) {
    auto end = detail::end_addr(rx);
    push(detail::make_guard<detail::RecvGuard<T, F>>(arena_, arena_, 1, std::move(f)));
    add(ffi::AltKind::BcastRecv, cond, end, 0);
    return *this;
  }
  // A send guard on a broadcast's writer: ready when the broadcast has room
  // (rendezvous: the previous value was taken by every reader); once chosen on a
  // rendezvous broadcast, select() returns when every reader has taken the value.
  template <class T, class F = detail::Ignore>
  Alt& bcast_send(BroadcastTx<T>& tx, T value, F f = {}) {
    return bcast_send_if(true, tx, std::move(value), std::move(f));
  }
  template <class T, class F = detail::Ignore>
  Alt& bcast_send_if(bool cond, BroadcastTx<T>& tx, T value, F f = {}) {
    auto end = detail::end_addr(tx);
    push(detail::make_guard<detail::SendGuard<T, F>>(arena_, std::move(value), std::move(f)));
    add(ffi::AltKind::BcastSend, cond, end, 0);
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
      push(detail::make_guard<detail::SkipGuard<F>>(arena_, std::move(f)));
      add(ffi::AltKind::Timeout, cond, addr, 0);
    } else {
      // Asked for its deadline when the alt starts (AltGuardBase::prepare).
      push(detail::make_guard<detail::TimeoutGuard<Timer, F>>(arena_, &timer, std::move(f)));
      add(ffi::AltKind::Timeout, cond, 0, 0);
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
    push(detail::make_guard<detail::SkipGuard<F>>(arena_, std::move(f)));
    add(ffi::AltKind::Timeout, cond, 0, detail::to_ns(d));
    return *this;
  }

  template <class F = detail::Ignore>
  Alt& skip(F f = {}) {
    return skip_if(true, std::move(f));
  }
  template <class F = detail::Ignore>
  Alt& skip_if(bool cond, F f = {}) {
    push(detail::make_guard<detail::SkipGuard<F>>(arena_, std::move(f)));
    add(ffi::AltKind::Skip, cond, 0, 0);
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
    push(detail::make_guard<detail::SkipGuard<F>>(arena_, std::move(f)));
    add(ffi::AltKind::Barrier, cond, addr, 0);
    return *this;
  }

  // Pri select: the first ready guard in order. Returns the chosen guard's index;
  // throws hoare::Poisoned if it is a poisoned channel's.
  std::size_t select() { return run(nullptr, true).guard; }
  // Fair select: starts after the guard `fair` chose last time.
  std::size_t select(Fair& fair) { return run(&fair, true).guard; }

  // The same without throwing hoare::Poisoned: a chosen poisoned guard comes back
  // as status Status::poisoned (its handler did not run). Other failures (a
  // handler's or a move constructor's exception, misuse, Cancelled) still throw.
  //
  //   bool a_open = true, b_open = true;
  //   while (a_open || b_open) {
  //     auto r = hoare::Alt().recv_if(a_open, a, use).recv_if(b_open, b, use).select_status();
  //     if (r.poisoned()) (r.guard == 0 ? a_open : b_open) = false;
  //   }
  AltResult select_status() { return run(nullptr, false); }
  AltResult select_status(Fair& fair) { return run(&fair, false); }

 private:
  struct Where {
    std::size_t guard;
    std::size_t element;
  };

  // Appends a C++ guard (before its Rust-level guards are added).
  void push(detail::AltGuardBase* g) {
    try {
      guards_.push_back(g);
    } catch (...) {
      detail::destroy_guard(arena_, g);
      throw;
    }
  }
  // Records one Rust-level guard of the C++ guard pushed last (its value and
  // exception slot are filled in when the alt starts).
  void add(ffi::AltKind k, bool cond, std::uintptr_t end, std::uint64_t ns,
           std::size_t element = 0) {
    entries_.push_back(ffi::AltGuard{k, cond, end, 0, 0, ns, 0});
    where_.push_back(Where{guards_.size() - 1, element});
  }

  AltResult run(Fair* fair, bool throw_poison) {
    if (used_) throw Error("hoare: an Alt selects only once");
    used_ = true;
    for (std::size_t e = 0; e < entries_.size(); ++e)
      guards_[where_[e].guard]->prepare(where_[e].element, entries_[e]);
    auto out = detail::bridge_call([&] {
      return ffi::alt_select(rust::Slice<const ffi::AltGuard>(entries_.data(), entries_.size()),
                             fair != nullptr, fair ? fair->next : 0);
    });
    if (fair) fair->next = out.fair_next;
    if (out.guard >= where_.size()) {
      for (auto* g : guards_) g->rethrow_pending();
      throw Error("hoare: alt failed");
    }
    Where w = where_[out.guard];
    if (out.status == ffi::Status::Poisoned) {
      if (throw_poison) throw Poisoned(w.guard);
      return AltResult{w.guard, w.element, Status::poisoned};
    }
    guards_[w.guard]->fire(w.element, out.status);
    return AltResult{w.guard, w.element, Status::ok};
  }

  // Moves o's guards into this (empty) Alt; o is left empty. If a guard's move
  // throws, both are left empty.
  void take(Alt& o) {
    guards_.reserve(o.guards_.size());
    try {
      for (auto*& g : o.guards_) {
        guards_.push_back(g->move_to(arena_));
        detail::destroy_guard(o.arena_, std::exchange(g, nullptr));
      }
    } catch (...) {
      clear();
      o.clear();
      throw;
    }
    entries_ = std::move(o.entries_);
    where_ = std::move(o.where_);
    used_ = o.used_;
    o.clear();
  }
  void clear() noexcept {
    for (auto* g : guards_) {
      if (g) detail::destroy_guard(arena_, g);
    }
    guards_ = {};
    entries_ = {};
    where_ = {};
    arena_.reset();
    used_ = false;
  }

  detail::SmallVec<detail::AltGuardBase*, kInlineGuards> guards_;
  detail::SmallVec<ffi::AltGuard, kInlineGuards> entries_;
  detail::SmallVec<Where, kInlineGuards> where_;
  detail::AltArena arena_;
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
// hoare::Poisoned whose guard() is that index. select_status(out) (and
// select_status(fair, out)) reports a poisoned end as an AltResult with status
// Status::poisoned instead, leaving `out` alone.
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
  // Without throwing hoare::Poisoned (see above).
  AltResult select_status(T& out) { return run_status(nullptr, out); }
  AltResult select_status(Fair& fair, T& out) { return run_status(&fair, out); }
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
  AltResult run_status(Fair* fair, T& out) {
    detail::Slot<T> slot;
    bool poisoned = false;
    std::size_t i = raw(fair, slot, &poisoned);
    if (poisoned) return AltResult{i, 0, Status::poisoned};
    out = std::move(slot.get());
    return AltResult{i, 0, Status::ok};
  }
  // Selects into `slot`; a poisoned end throws, or, with `poisoned`, sets it.
  std::size_t raw(Fair* fair, detail::Slot<T>& slot, bool* poisoned = nullptr) {
    ffi::ExcSlot err;
    auto out = detail::bridge_call([&] {
      return ffi::recv_set_select(**set_, slot.raw(), &err, fair != nullptr, fair ? fair->next : 0);
    });
    if (fair) fair->next = out.fair_next;
    detail::rethrow_if(err);
    if (out.status == ffi::Status::Poisoned) {
      if (!poisoned) throw Poisoned(out.guard);
      *poisoned = true;
      return out.guard;
    }
    slot.set_full();
    return out.guard;
  }

  std::optional<rust::Box<ffi::RecvSet>> set_;
  std::size_t n_ = 0;
};

}  // namespace hoare
