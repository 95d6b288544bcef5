// How C++ values cross the bridge: the element type the Rust side sees for a C++
// type (elem_of), the move/box operations for values it only knows by address
// (Ops), and storage a received value is constructed into (Slot). See
// cpp/README.md, "How values cross a channel".
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "hoare/detail/ffi.hpp"

namespace hoare {
namespace detail {
// Element types that travel as native Rust values (and so can cross to Rust code).
template <class T, class = void>
struct pod_elem;
template <class T>
struct elem_of : pod_elem<T> {};
template <>
struct elem_of<std::int64_t> : std::integral_constant<ffi::Elem, ffi::Elem::I64> {};
template <>
struct elem_of<std::uint64_t> : std::integral_constant<ffi::Elem, ffi::Elem::U64> {};
template <>
struct elem_of<double> : std::integral_constant<ffi::Elem, ffi::Elem::F64> {};
template <>
struct elem_of<rust::String> : std::integral_constant<ffi::Elem, ffi::Elem::Str> {};
template <>
struct elem_of<rust::Vec<std::uint8_t>> : std::integral_constant<ffi::Elem, ffi::Elem::Bytes> {};

// Trivially copyable types of at most 64 bytes travel by value (a bitwise move)
// through a Rust channel of u64 words: no extended rendezvous, no allocation.
template <class T, class>
struct pod_elem : std::integral_constant<ffi::Elem, ffi::Elem::Raw> {};
template <class T>
struct pod_elem<
    T, std::enable_if_t<std::is_trivially_copyable_v<T> && (sizeof(T) <= 64) && (alignof(T) <= 8)>>
    : std::integral_constant<ffi::Elem, sizeof(T) <= 8    ? ffi::Elem::Pod1
                                        : sizeof(T) <= 16 ? ffi::Elem::Pod2
                                        : sizeof(T) <= 32 ? ffi::Elem::Pod4
                                                          : ffi::Elem::Pod8> {};

template <class T>
struct Ops {
  static bool move_into(std::uint8_t* dst, std::uint8_t* src, ffi::ExcSlot* err) noexcept {
    try {
      ::new (static_cast<void*>(dst)) T(std::move(*reinterpret_cast<T*>(src)));
      return true;
    } catch (...) {
      err->error = std::current_exception();
      return false;
    }
  }
  static std::uint8_t* box(std::uint8_t* src, ffi::ExcSlot* err) noexcept {
    try {
      return reinterpret_cast<std::uint8_t*>(new T(std::move(*reinterpret_cast<T*>(src))));
    } catch (...) {
      err->error = std::current_exception();
      return nullptr;
    }
  }
  static void unbox(std::uint8_t* b, std::uint8_t* dst) noexcept {
    T* p = reinterpret_cast<T*>(b);
    *reinterpret_cast<T*>(dst) = std::move(*p);
    delete p;
  }
  static void drop_box(std::uint8_t* b) noexcept { delete reinterpret_cast<T*>(b); }

  static const ffi::ValueOps* get() {
    static const ffi::ValueOps ops{&move_into, &box, &unbox, &drop_box};
    return &ops;
  }
};

// Storage a received value is constructed into.
template <class T>
class Slot {
 public:
  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() { reset(); }
  std::uint8_t* raw() { return reinterpret_cast<std::uint8_t*>(&buf_); }
  T& get() { return *std::launder(reinterpret_cast<T*>(&buf_)); }
  void set_full() { full_ = true; }
  bool full() const { return full_; }
  void reset() {
    if (full_) {
      get().~T();
      full_ = false;
    }
  }

 private:
  alignas(T) unsigned char buf_[sizeof(T)];
  bool full_ = false;
};
}  // namespace detail
}  // namespace hoare
