// The C++ half of hoare's cxx bridge: the C++ types and functions that the Rust
// side (src/ffi/mod.rs) calls. Included by the cxx-generated code and by
// <hoare/hoare.hpp>; not meant to be used directly.
//
// Every function here is noexcept: a C++ exception never unwinds into a Rust frame.
// Exceptions thrown by a process body or by a value's move constructor are caught
// here and stored in a std::exception_ptr that the C++ caller rethrows once the
// Rust call has returned.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

namespace hoare {
namespace ffi {

// An exception caught on the C++ side of a bridge call, for the C++ caller to rethrow.
struct ExcSlot {
  std::exception_ptr error;
};

// How the Rust side moves C++ values of one type that it only knows by address.
// One static instance per type (see hoare::detail::ops_for<T>()).
struct ValueOps {
  // Move-constructs a T at `dst` (raw storage) from the T at `src`. On an exception
  // stores it in `err` and returns false.
  bool (*move_into)(std::uint8_t* dst, std::uint8_t* src, ExcSlot* err) noexcept;
  // `new T(std::move(*src))`; on an exception stores it in `err` and returns null.
  std::uint8_t* (*box)(std::uint8_t* src, ExcSlot* err) noexcept;
  // `*dst = std::move(*box); delete box;` (gives a value back to its sender).
  void (*unbox)(std::uint8_t* box, std::uint8_t* dst) noexcept;
  // `delete box;`
  void (*drop_box)(std::uint8_t* box) noexcept;
};

// A C++ process body: hoare::detail::FnTask<F, R> derives from it and keeps the
// result or the exception for join().
class Task {
 public:
  virtual ~Task() = default;
  virtual void run() noexcept = 0;
};

inline void task_run(Task& task) noexcept {
  task.run();
}

inline bool value_move(const ValueOps* ops, std::uint8_t* dst, std::uint8_t* src,
                       ExcSlot* err) noexcept {
  return ops->move_into(dst, src, err);
}

inline std::uint8_t* value_box(const ValueOps* ops, std::uint8_t* src, ExcSlot* err) noexcept {
  return ops->box(src, err);
}

inline void value_unbox(const ValueOps* ops, std::uint8_t* box, std::uint8_t* dst) noexcept {
  ops->unbox(box, dst);
}

inline void value_drop_box(const ValueOps* ops, std::uint8_t* box) noexcept {
  ops->drop_box(box);
}

// Stores the exception in `from` in `to` as well: a move out of a sender's object
// that threw in the receiver fails the sender's operation too.
inline void exc_share(ExcSlot* from, ExcSlot* to) noexcept {
  to->error = from->error;
}

// std::chrono::steady_clock::now() in nanoseconds since its epoch: how the Rust side
// maps C++ time points onto its Instants (src/ffi/timer.rs).
inline std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ffi
}  // namespace hoare
