// hoare's exceptions: every failure hoare reports derives from hoare::Error (an
// exception of your own code keeps its type).
#pragma once

#include <cstddef>
#include <stdexcept>

namespace hoare {

// Any failure reported by the runtime (a Rust error or panic crossing the bridge).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A channel operation on a poisoned channel. From Alt::select(), guard() is the
// index of the poisoned guard that was chosen (npos otherwise).
class Poisoned : public Error {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  explicit Poisoned(std::size_t guard = npos) : Error("hoare: channel poisoned"), guard_(guard) {}
  std::size_t guard() const noexcept { return guard_; }

 private:
  std::size_t guard_;
};

// A process failed without a C++ exception (e.g. a Rust panic in the runtime).
class ProcessError : public Error {
 public:
  using Error::Error;
};

// Thrown inside a process that is still blocked when its runtime shuts down (the
// root process of run() returned): it unwinds the process's C++ frames, running
// their destructors. Do not swallow it in a loop that blocks again.
class Cancelled : public Error {
 public:
  using Error::Error;
};

// Thrown by run() when every process of the runtime is blocked and nothing can
// wake any of them. what() is the report: each blocked process (name or id, where
// it was spawned), what it waits on, and the wait-for cycle if one was found.
class Deadlock : public Error {
 public:
  using Error::Error;
};

}  // namespace hoare
