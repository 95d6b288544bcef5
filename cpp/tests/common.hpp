#pragma once
#include <hoare/hoare.hpp>
#include <hoare/test_hooks.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace testing_hoare {
// Runs `f` as the root process of a 4-worker runtime.
template <class F>
auto in_runtime(F&& f) {
  return hoare::run(hoare::RunOptions{4, 256 * 1024}, std::forward<F>(f));
}
using namespace std::chrono_literals;

// Captures what anything in the program (C++ or Rust, any thread) writes to file
// descriptor 2 while it lives.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()) {
    std::fflush(stderr);
    saved_ = ::dup(2);
    ::dup2(::fileno(file_), 2);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  ~StderrCapture() {
    restore();
    std::fclose(file_);
  }

  // What was written so far (the capture goes on).
  std::string peek() const {
    std::string s;
    char buf[4096];
    off_t at = 0;
    for (;;) {
      ssize_t n = ::pread(::fileno(file_), buf, sizeof buf, at);
      if (n <= 0) break;
      s.append(buf, static_cast<std::size_t>(n));
      at += n;
    }
    return s;
  }
  // Waits (in a process or a thread) until `what` was written; false after `limit`.
  bool wait_for(const std::string& what, std::chrono::milliseconds limit) const {
    auto end = std::chrono::steady_clock::now() + limit;
    while (peek().find(what) == std::string::npos) {
      if (std::chrono::steady_clock::now() > end) return false;
      if (hoare::this_proc::in_process()) {
        hoare::this_proc::sleep_for(1ms);
      } else {
        std::this_thread::sleep_for(1ms);
      }
    }
    return true;
  }
  // Ends the capture and returns everything written.
  std::string text() {
    restore();
    return peek();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::FILE* file_;
  int saved_ = -1;
};

// Whether `s` holds what a Rust panic prints (the default hook's "panicked at",
// its backtrace note) or the bridge's "Rust panic" prefix.
inline bool looks_like_rust_panic(const std::string& s) {
  for (const char* p : {"panicked", "RUST_BACKTRACE", "stack backtrace", "Rust panic"}) {
    if (s.find(p) != std::string::npos) return true;
  }
  return false;
}
}  // namespace testing_hoare
