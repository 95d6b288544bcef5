// Broadcast channels (SPEC C10, docs/semantics.md "Broadcast"): every reader
// enrolled on a broadcast receives every value its writer sends. Rendezvous
// (send returns once every reader has taken the value), bounded (once it is in a
// buffer of n values not yet taken by all; it blocks while the slowest reader is
// n behind) or overwriting (never blocks; on a full buffer the oldest value is
// dropped, a "latest value" cell with n = 1). Readers join with subscribe() (from
// the next value on) and leave by destroying their end. Poison as on every
// channel. Both ends are alt guards (Alt::bcast_recv, Alt::bcast_send).
//
// Values are copied once per reader, so T is a type that travels by value: int64_t,
// uint64_t, double, rust::String, rust::Vec<uint8_t>, or a trivially copyable type
// of at most 64 bytes.
//
//   auto [tx, rx1] = hoare::broadcast<std::int64_t>();
//   auto rx2 = rx1.subscribe();
//   // two reader processes: for (auto v : rx) ...
//   tx.send(1);  // returns once both readers have it
//   tx.poison();
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>

#include "hoare/chan.hpp"
#include "hoare/detail/ffi.hpp"
#include "hoare/detail/value.hpp"
#include "hoare/error.hpp"

namespace hoare {

template <class T>
class BroadcastRx;

namespace detail {
template <class T>
constexpr void check_broadcast_elem() {
  static_assert(elem_of<T>::value != ffi::Elem::Raw,
                "a broadcast carries int64_t, uint64_t, double, rust::String, "
                "rust::Vec<uint8_t> or a trivially copyable type of at most 64 bytes");
}
}  // namespace detail

// The writing end of a broadcast. Move-only (one writer).
template <class T>
class BroadcastTx {
 public:
  using value_type = T;
  BroadcastTx(BroadcastTx&&) noexcept = default;
  BroadcastTx& operator=(BroadcastTx&&) noexcept = default;
  // Destroying the writer poisons the broadcast (the readers take what is
  // buffered, then see the poison), as a channel's.

  // Sends `v` to every reader; throws hoare::Poisoned (the value is left in `v`).
  void send(T&& v) {
    if (raw_send(&v) == Status::poisoned) throw Poisoned();
  }
  void send(const T& v) {
    T tmp(v);
    send(std::move(tmp));
  }
  // send without throwing: false on poison.
  bool operator<<(T&& v) { return raw_send(&v) == Status::ok; }
  bool operator<<(const T& v) {
    T tmp(v);
    return raw_send(&tmp) == Status::ok;
  }

  // A new reader, receiving from the next value on.
  BroadcastRx<T> subscribe() const;
  void poison() {
    if (h_) ffi::bcast_tx_poison(**h_);
  }
  // Whether the broadcast is not poisoned.
  bool is_open() const { return h_ && ffi::bcast_tx_is_open(**h_); }
  // The readers enrolled now.
  std::size_t readers() const { return h_ ? ffi::bcast_readers(**h_) : 0; }
  bool valid() const { return h_.has_value(); }
  const ffi::BcastTx& handle() const { return **h_; }

 private:
  template <class U>
  friend std::pair<BroadcastTx<U>, BroadcastRx<U>> broadcast(Buffer);
  BroadcastTx() = default;
  Status raw_send(T* v) {
    if (!h_) throw Error("hoare: use of an empty (moved-from) broadcast end");
    return detail::status(detail::bridge_call(
        [&] { return ffi::bcast_send(**h_, reinterpret_cast<std::uint8_t*>(v)); }));
  }
  detail::Handle<ffi::BcastTx> h_;
};

// A reading end of a broadcast. Move-only; subscribe() makes another reader.
// Iterating receives until poison.
template <class T>
class BroadcastRx {
 public:
  using value_type = T;
  BroadcastRx(BroadcastRx&&) noexcept = default;
  BroadcastRx& operator=(BroadcastRx&&) noexcept = default;

  // The next value; throws hoare::Poisoned.
  T recv() {
    detail::Slot<T> s;
    if (raw_recv(s, ffi::WaitMode::Block, 0) == Status::poisoned) throw Poisoned();
    return std::move(s.get());
  }
  std::optional<T> try_recv() { return recv_opt(ffi::WaitMode::Try, 0); }
  template <class Rep, class Period>
  std::optional<T> recv_for(std::chrono::duration<Rep, Period> d) {
    return recv_opt(ffi::WaitMode::Timeout, detail::to_ns(d));
  }
  // recv without throwing: false on poison.
  bool operator>>(T& out) {
    detail::Slot<T> s;
    if (raw_recv(s, ffi::WaitMode::Block, 0) != Status::ok) return false;
    out = std::move(s.get());
    return true;
  }

  // Another reader of the same broadcast, from the next value on.
  BroadcastRx subscribe() const {
    check();
    return BroadcastRx(ffi::bcast_rx_subscribe(**h_));
  }
  void poison() {
    if (h_) ffi::bcast_rx_poison(**h_);
  }
  bool is_open() const { return h_ && ffi::bcast_rx_is_open(**h_); }
  bool valid() const { return h_.has_value(); }
  const ffi::BcastRx& handle() const { return **h_; }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = T*;
    using reference = T&&;
    iterator() = default;
    explicit iterator(BroadcastRx* rx) : rx_(rx) { ++*this; }
    T&& operator*() { return std::move(*v_); }
    iterator& operator++() {
      v_.reset();
      T v;
      if (*rx_ >> v) {
        v_.emplace(std::move(v));
      } else {
        rx_ = nullptr;
      }
      return *this;
    }
    bool operator==(const iterator& o) const { return rx_ == o.rx_; }
    bool operator!=(const iterator& o) const { return rx_ != o.rx_; }

   private:
    BroadcastRx* rx_ = nullptr;
    std::optional<T> v_;
  };
  iterator begin() { return iterator(this); }
  iterator end() { return iterator(); }

 private:
  friend class BroadcastTx<T>;
  template <class U>
  friend std::pair<BroadcastTx<U>, BroadcastRx<U>> broadcast(Buffer);
  BroadcastRx() = default;
  explicit BroadcastRx(rust::Box<ffi::BcastRx> h) : h_(std::move(h)) {}
  void check() const {
    if (!h_) throw Error("hoare: use of an empty (moved-from) broadcast end");
  }
  Status raw_recv(detail::Slot<T>& s, ffi::WaitMode mode, std::uint64_t ns) {
    check();
    s.reset();
    auto st = detail::status(
        detail::bridge_call([&] { return ffi::bcast_recv(**h_, s.raw(), mode, ns); }));
    if (st == Status::ok) s.set_full();
    return st;
  }
  std::optional<T> recv_opt(ffi::WaitMode mode, std::uint64_t ns) {
    detail::Slot<T> s;
    if (raw_recv(s, mode, ns) != Status::ok) return std::nullopt;
    return std::move(s.get());
  }
  detail::Handle<ffi::BcastRx> h_;
};

template <class T>
BroadcastRx<T> BroadcastTx<T>::subscribe() const {
  if (!h_) throw Error("hoare: use of an empty (moved-from) broadcast end");
  return BroadcastRx<T>(ffi::bcast_tx_subscribe(**h_));
}

// A new broadcast and its writer and first reader. Buffer::rendezvous() (the
// default), bounded(n) or overwriting(n); unbounded is refused (hoare::Error).
template <class T>
std::pair<BroadcastTx<T>, BroadcastRx<T>> broadcast(Buffer b = Buffer::rendezvous()) {
  detail::check_broadcast_elem<T>();
  auto p = detail::bridge_call(
      [&] { return ffi::bcast_new(detail::elem_of<T>::value, sizeof(T), b.kind(), b.capacity()); });
  BroadcastTx<T> tx;
  BroadcastRx<T> rx;
  tx.h_.emplace(std::move(p.tx));
  rx.h_.emplace(std::move(p.rx));
  return {std::move(tx), std::move(rx)};
}

}  // namespace hoare
