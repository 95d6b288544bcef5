// Channels: Chan<T, Sharing> and channel<T, Sharing>(Buffer) make one; its ends
// are Tx/SharedTx (writing) and Rx/SharedRx (reading), with blocking, try, timed
// and ProXC++-style operations, extended rendezvous (recv_with) and poison. The
// rules (rendezvous, buffering, poison, no data lost) are docs/semantics.md's
// "Channels" and "Poison".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>

#include "hoare/detail/ffi.hpp"
#include "hoare/detail/value.hpp"
#include "hoare/error.hpp"
#include "hoare/process.hpp"  // stored_t: recv_with keeps its handler's result as a process does

namespace hoare {

// Which ends of a channel may be shared (copied between processes).
enum class Sharing { one2one, any2one, one2any, any2any };

// How a channel buffers. The default is an unbuffered rendezvous.
class Buffer {
 public:
  static Buffer rendezvous() { return Buffer(ffi::Buffering::Rendezvous, 0); }
  // A FIFO of n items; a sender blocks while it is full.
  static Buffer bounded(std::size_t n) { return Buffer(ffi::Buffering::Bounded, n); }
  // A FIFO of n items; when full the oldest item is dropped.
  static Buffer overwriting(std::size_t n) { return Buffer(ffi::Buffering::Overwriting, n); }
  static Buffer unbounded() { return Buffer(ffi::Buffering::Unbounded, 0); }

  ffi::Buffering kind() const { return kind_; }
  std::size_t capacity() const { return capacity_; }

 private:
  Buffer(ffi::Buffering k, std::size_t n) : kind_(k), capacity_(n) {}
  ffi::Buffering kind_;
  std::size_t capacity_;
};

// How a non-throwing channel operation ended.
enum class Status {
  ok,           // the communication happened
  poisoned,     // the channel is poisoned; nothing was communicated
  timeout,      // the deadline passed first; nothing was communicated
  would_block,  // try_*: no partner/space right now; nothing was communicated
};

inline const char* to_string(Status s) {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::poisoned:
      return "poisoned";
    case Status::timeout:
      return "timeout";
    case Status::would_block:
      return "would_block";
  }
  return "?";
}

namespace detail {
inline Status status(ffi::Status s) {
  switch (s) {
    case ffi::Status::Ok:
      return Status::ok;
    case ffi::Status::Poisoned:
      return Status::poisoned;
    case ffi::Status::Timeout:
      return Status::timeout;
    default:
      return Status::would_block;
  }
}

}  // namespace detail

template <class T, bool Shared>
class BasicRx;

namespace detail {
// The handler of an extended rendezvous (BasicRx::recv_with), run by the bridge
// while the writer is blocked.
template <class T, class F, class R>
class WithTask final : public ffi::Task {
 public:
  WithTask(Slot<T>& s, ffi::ExcSlot& err, F& f) : s_(s), err_(err), f_(f) {}
  void run() noexcept override {
    if (err_.error) return;  // the move out of the writer threw
    s_.set_full();
    try {
      if constexpr (std::is_void_v<R>) {
        f_(std::move(s_.get()));
      } else {
        value.emplace(f_(std::move(s_.get())));
      }
    } catch (...) {
      error = std::current_exception();
    }
  }
  std::optional<stored_t<R>> value;
  std::exception_ptr error;

 private:
  Slot<T>& s_;
  ffi::ExcSlot& err_;
  F& f_;
};

// The bridge functions of each kind of end, overloaded on its handle type.
struct EndFns {
  static ffi::Elem elem(const ffi::ChanTx& h) { return ffi::tx_elem(h); }
  static ffi::Elem elem(const ffi::ChanRx& h) { return ffi::rx_elem(h); }
  static rust::Box<ffi::ChanTx> clone(const ffi::ChanTx& h) { return ffi::tx_clone(h); }
  static rust::Box<ffi::ChanRx> clone(const ffi::ChanRx& h) { return ffi::rx_clone(h); }
  static void poison(const ffi::ChanTx& h) { ffi::tx_poison(h); }
  static void poison(const ffi::ChanRx& h) { ffi::rx_poison(h); }
};

// What both kinds of channel end are made of: the bridge handle H (ffi::ChanTx or
// ffi::ChanRx; empty once moved from) and whether poison() acts. End is the end
// type itself (BasicTx or BasicRx); it is copyable only on a shared side, where a
// copy is one more end.
template <class End, class H, bool Shared>
class ChanEnd {
  static constexpr bool writer = std::is_same_v<H, ffi::ChanTx>;

 public:
  ChanEnd() = default;
  // A moved-from end is empty (valid() == false).
  ChanEnd(ChanEnd&&) noexcept = default;
  ChanEnd& operator=(ChanEnd&&) noexcept = default;
  ChanEnd(const ChanEnd& o) : poisonable_(o.poisonable_) {
    static_assert(Shared || !writer, "a one2one/one2any writing end cannot be copied; move it");
    static_assert(Shared || writer, "a one2one/any2one reading end cannot be copied; move it");
    if (o.h_) h_.emplace(bridge_call([&] { return EndFns::clone(**o.h_); }));
  }
  ChanEnd& operator=(const ChanEnd& o) {
    if (this != &o) self() = End(static_cast<const End&>(o));
    return *this;
  }

  // Wraps an end made on the Rust side (element type checked).
  static End from_rust(rust::Box<H> h) {
    if (EndFns::elem(*h) != elem_of<typename End::value_type>::value)
      throw Error("hoare: channel end of the wrong element type");
    End e;
    static_cast<ChanEnd&>(e).h_.emplace(std::move(h));
    return e;
  }
  // Hands the end to Rust code (see cpp/README.md, "Rust and C++ in one network").
  rust::Box<H> into_rust() && {
    check();
    auto h = std::move(*h_);
    h_.reset();
    return h;
  }

  bool valid() const { return h_.has_value(); }
  // The bridge handle (for hoare::Alt and Rust interop).
  const H& handle() const { return **h_; }

  // Poisons the channel (no effect from a non-poisonable end).
  void poison() {
    if (h_ && poisonable_) bridge_call([&] { EndFns::poison(**h_); });
  }
  bool poisonable() const { return poisonable_; }
  // An end whose poison() does nothing (C++CSP's non-poisonable ends): a process
  // given it can use the channel but cannot poison it.
  End non_poisonable() && { return without_poison(End(std::move(self()))); }
  End non_poisonable() const& {
    static_assert(Shared || !writer, "move a one2one/one2any end: std::move(tx).non_poisonable()");
    static_assert(Shared || writer, "move a one2one/any2one end: std::move(rx).non_poisonable()");
    return without_poison(End(static_cast<const End&>(*this)));
  }

 protected:
  void check() const {
    if (!h_) throw Error("hoare: use of an empty (moved-from) channel end");
  }

  Handle<H> h_;
  bool poisonable_ = true;

 private:
  End& self() { return static_cast<End&>(*this); }
  static End without_poison(End e) {
    static_cast<ChanEnd&>(e).poisonable_ = false;
    return e;
  }
};
}  // namespace detail

// The writing end of a channel of T. Move-only (Shared=false: a one2one/one2any
// writer) or copyable (Shared=true: any2one/any2any; copies are more writers).
template <class T, bool Shared>
class BasicTx : public detail::ChanEnd<BasicTx<T, Shared>, ffi::ChanTx, Shared> {
  static_assert(std::is_move_constructible_v<T> && std::is_move_assignable_v<T>,
                "hoare::Chan<T> needs a movable T");
  using Base = detail::ChanEnd<BasicTx, ffi::ChanTx, Shared>;

 public:
  // Construction, copies (shared side only), from_rust/into_rust, valid, handle,
  // poison, poisonable, non_poisonable: see detail::ChanEnd.
  using value_type = T;

  // Sends v; returns once a reader took it (rendezvous) or it is buffered. Throws
  // hoare::Poisoned (v is then left untouched). v is moved, never copied. If T's
  // move constructor throws as the value is taken (by a rendezvous reader, or into
  // a buffer's box), the send rethrows that exception and v stays here, as the
  // move left it: nothing was sent (a rendezvous reader sees the exception too).
  void send(T&& v) {
    if (raw_send(&v, ffi::WaitMode::Block, 0) == Status::poisoned) throw Poisoned();
  }
  void send(const T& v) {
    T tmp(v);
    send(std::move(tmp));
  }
  // Non-blocking / timed: on anything but Status::ok, v is left to the caller.
  Status try_send(T&& v) { return raw_send(&v, ffi::WaitMode::Try, 0); }
  template <class Rep, class Period>
  Status send_for(T&& v, std::chrono::duration<Rep, Period> d) {
    return raw_send(&v, ffi::WaitMode::Timeout, detail::to_ns(d));
  }
  template <class Clock, class Dur>
  Status send_until(T&& v, std::chrono::time_point<Clock, Dur> tp) {
    return raw_send(&v, ffi::WaitMode::Timeout, detail::until_ns(tp));
  }

  // ProXC++ style: true when sent, false when poisoned (never throws Poisoned).
  bool operator<<(T&& v) { return raw_send(&v, ffi::WaitMode::Block, 0) == Status::ok; }
  bool operator<<(const T& v) {
    T tmp(v);
    return *this << std::move(tmp);
  }
  // tx(v): sends, throwing hoare::Poisoned.
  void operator()(T&& v) { send(std::move(v)); }
  void operator()(const T& v) { send(v); }

 private:
  using Base::check;
  using Base::h_;
  Status raw_send(T* v, ffi::WaitMode mode, std::uint64_t ns) {
    check();
    ffi::ExcSlot err;
    auto s = detail::bridge_call(
        [&] { return ffi::tx_send(**h_, reinterpret_cast<std::uint8_t*>(v), &err, mode, ns); });
    detail::rethrow_if(err);
    return detail::status(s);
  }

  template <class, bool>
  friend class BasicRx;
  template <class, Sharing>
  friend class Chan;
};

// The reading end of a channel of T. Move-only (Shared=false) or copyable
// (Shared=true: one2any/any2any). Iterating over it receives until poison.
template <class T, bool Shared>
class BasicRx : public detail::ChanEnd<BasicRx<T, Shared>, ffi::ChanRx, Shared> {
  using Base = detail::ChanEnd<BasicRx, ffi::ChanRx, Shared>;

 public:
  // Construction, copies (shared side only), from_rust/into_rust, valid, handle,
  // poison, poisonable, non_poisonable: see detail::ChanEnd.
  using value_type = T;

  // Receives a value; throws hoare::Poisoned. On a rendezvous channel the value is
  // move-constructed straight out of the writer's object while the writer waits.
  T recv() {
    detail::Slot<T> s;
    if (raw_recv(s, ffi::WaitMode::Block, 0) == Status::poisoned) throw Poisoned();
    return std::move(s.get());
  }
  void recv(T& out) { out = recv(); }

  // Extended rendezvous (JCSP/C++CSP2 beginRead/endRead): receives a value and runs
  // f(T&&) on it while the writer stays blocked; returns f's result. Throws
  // hoare::Poisoned (f does not run), or rethrows f's exception (the writer is
  // released all the same).
  template <class F>
  std::invoke_result_t<F&, T&&> recv_with(F&& f) {
    using R = std::invoke_result_t<F&, T&&>;
    check();
    detail::Slot<T> s;
    ffi::ExcSlot err;
    detail::WithTask<T, std::remove_reference_t<F>, R> task(s, err, f);
    auto st = detail::bridge_call([&] { return ffi::rx_recv_with(**h_, s.raw(), &err, task); });
    detail::rethrow_if(err);
    if (detail::status(st) == Status::poisoned) throw Poisoned();
    if (task.error) std::rethrow_exception(task.error);
    if constexpr (!std::is_void_v<R>) return std::move(*task.value);
  }

  Status try_recv(T& out) { return recv_into(out, ffi::WaitMode::Try, 0); }
  std::optional<T> try_recv() { return recv_opt(ffi::WaitMode::Try, 0); }
  template <class Rep, class Period>
  Status recv_for(T& out, std::chrono::duration<Rep, Period> d) {
    return recv_into(out, ffi::WaitMode::Timeout, detail::to_ns(d));
  }
  template <class Rep, class Period>
  std::optional<T> recv_for(std::chrono::duration<Rep, Period> d) {
    return recv_opt(ffi::WaitMode::Timeout, detail::to_ns(d));
  }
  template <class Clock, class Dur>
  Status recv_until(T& out, std::chrono::time_point<Clock, Dur> tp) {
    return recv_into(out, ffi::WaitMode::Timeout, detail::until_ns(tp));
  }

  // ProXC++ style: true when a value was received into out, false when poisoned.
  bool operator>>(T& out) { return recv_into(out, ffi::WaitMode::Block, 0) == Status::ok; }
  // Pipe: receives one value and sends it on; false when either side is poisoned.
  template <bool S>
  bool operator>>(BasicTx<T, S>& tx) {
    detail::Slot<T> s;
    if (raw_recv(s, ffi::WaitMode::Block, 0) != Status::ok) return false;
    return tx << std::move(s.get());
  }
  // rx(): receives, throwing hoare::Poisoned.
  T operator()() { return recv(); }

  // Range-for: `for (auto v : rx)` receives until the channel is poisoned. The
  // value is received into the iterator (no allocation) and moved out by `auto v`.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = T*;
    using reference = T&&;

    iterator() = default;
    explicit iterator(BasicRx* rx) : rx_(rx) { next(); }
    iterator(const iterator&) = delete;
    iterator& operator=(const iterator&) = delete;
    // Moves out on `auto v : rx`; binds without a move on `auto&& v : rx`.
    T&& operator*() { return std::move(slot_.get()); }
    T* operator->() { return &slot_.get(); }
    iterator& operator++() {
      next();
      return *this;
    }
    bool operator==(const iterator& o) const { return done() == o.done(); }
    bool operator!=(const iterator& o) const { return !(*this == o); }

   private:
    bool done() const { return !slot_.full(); }
    void next() {
      slot_.reset();
      rx_->raw_recv(slot_, ffi::WaitMode::Block, 0);
    }
    BasicRx* rx_ = nullptr;
    detail::Slot<T> slot_;
  };
  iterator begin() { return iterator(this); }
  iterator end() { return iterator(); }

 private:
  using Base::check;
  using Base::h_;
  Status raw_recv(detail::Slot<T>& s, ffi::WaitMode mode, std::uint64_t ns) {
    check();
    ffi::ExcSlot err;
    auto st = detail::bridge_call([&] { return ffi::rx_recv(**h_, s.raw(), &err, mode, ns); });
    detail::rethrow_if(err);
    auto r = detail::status(st);
    if (r == Status::ok) s.set_full();
    return r;
  }
  Status recv_into(T& out, ffi::WaitMode mode, std::uint64_t ns) {
    detail::Slot<T> s;
    auto r = raw_recv(s, mode, ns);
    if (r == Status::ok) out = std::move(s.get());
    return r;
  }
  std::optional<T> recv_opt(ffi::WaitMode mode, std::uint64_t ns) {
    detail::Slot<T> s;
    if (raw_recv(s, mode, ns) != Status::ok) return std::nullopt;
    return std::optional<T>(std::move(s.get()));
  }

  template <class, Sharing>
  friend class Chan;
};

template <class T>
using Tx = BasicTx<T, false>;
template <class T>
using SharedTx = BasicTx<T, true>;
template <class T>
using Rx = BasicRx<T, false>;
template <class T>
using SharedRx = BasicRx<T, true>;

// A channel of T: the factory of its two ends. The sharing kind fixes which end
// types are copyable; the buffering is chosen at construction.
//
//   hoare::Chan<Msg> c;                                    // one2one rendezvous
//   hoare::Chan<Msg, hoare::Sharing::any2one> c2(hoare::Buffer::bounded(16));
//   auto tx = c.move_tx(); auto rx = c.move_rx();
template <class T, Sharing S = Sharing::one2one>
class Chan {
 public:
  using tx_type = BasicTx<T, S == Sharing::any2one || S == Sharing::any2any>;
  using rx_type = BasicRx<T, S == Sharing::one2any || S == Sharing::any2any>;

  explicit Chan(Buffer b = Buffer::rendezvous()) {
    auto pair = detail::bridge_call([&] {
      return ffi::chan_new(detail::elem_of<T>::value, detail::Ops<T>::get(), sizeof(T),
                           static_cast<ffi::Sharing>(S), b.kind(), b.capacity());
    });
    tx_.h_.emplace(std::move(pair.tx));
    rx_.h_.emplace(std::move(pair.rx));
  }

  tx_type& ref_tx() { return tx_; }
  rx_type& ref_rx() { return rx_; }
  tx_type move_tx() { return std::move(tx_); }
  rx_type move_rx() { return std::move(rx_); }
  // Copies of shared ends.
  tx_type tx() const { return tx_; }
  rx_type rx() const { return rx_; }

 private:
  tx_type tx_;
  rx_type rx_;
};

template <class T>
using One2OneChan = Chan<T, Sharing::one2one>;
template <class T>
using Any2OneChan = Chan<T, Sharing::any2one>;
template <class T>
using One2AnyChan = Chan<T, Sharing::one2any>;
template <class T>
using Any2AnyChan = Chan<T, Sharing::any2any>;

// Makes a channel and returns its ends: `auto [tx, rx] = hoare::channel<int>();`
template <class T, Sharing S = Sharing::one2one>
std::pair<typename Chan<T, S>::tx_type, typename Chan<T, S>::rx_type> channel(
    Buffer b = Buffer::rendezvous()) {
  Chan<T, S> c(b);
  return {c.move_tx(), c.move_rx()};
}

// Timed channel operations with a timer (hoare::Egg, Repeat, Date, or any type with
// deadline() and fired()): the operation asks deadline() once, and fired() is
// called only if the timeout ended it.
template <class T, bool S, class Timer>
Status send_timed(BasicTx<T, S>& tx, T&& v, Timer& t) {
  auto r = tx.send_until(std::move(v), t.deadline());
  if (r == Status::timeout) t.fired();
  return r;
}
template <class T, bool S, class Timer>
Status recv_timed(BasicRx<T, S>& rx, T& out, Timer& t) {
  auto r = rx.recv_until(out, t.deadline());
  if (r == Status::timeout) t.fired();
  return r;
}

}  // namespace hoare
