#pragma once
#include <hoare/hoare.hpp>

#include <chrono>

namespace testing_hoare {
// Runs `f` as the root process of a 4-worker runtime.
template <class F>
auto in_runtime(F&& f) {
  return hoare::run(hoare::RunOptions{4, 256 * 1024}, std::forward<F>(f));
}
using namespace std::chrono_literals;
}  // namespace testing_hoare
