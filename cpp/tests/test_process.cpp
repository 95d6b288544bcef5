#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

TEST(Process, RunReturnsValue) {
  EXPECT_EQ(hoare::run([] { return 42; }), 42);
  EXPECT_EQ(in_runtime([] { return std::string("csp"); }), "csp");
}

TEST(Process, RunVoidAndMoveOnlyResult) {
  int x = 0;
  hoare::run([&] { x = 7; });
  EXPECT_EQ(x, 7);
  auto p = hoare::run([] { return std::make_unique<int>(5); });
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 5);
}

TEST(Process, RunRethrowsException) {
  EXPECT_THROW(hoare::run([]() -> int { throw std::logic_error("boom"); }), std::logic_error);
  try {
    hoare::run([] { throw std::runtime_error("root failed"); });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "root failed");
  }
}

TEST(Process, SpawnJoinResult) {
  in_runtime([] {
    auto h = hoare::spawn([] { return 6 * 7; });
    EXPECT_TRUE(h.joinable());
    EXPECT_EQ(h.join(), 42);
    EXPECT_FALSE(h.joinable());
    EXPECT_THROW(h.join(), hoare::Error);
  });
}

TEST(Process, JoinRethrowsTheProcessException) {
  in_runtime([] {
    struct Custom {
      int code;
    };
    auto h = hoare::spawn([]() -> int { throw Custom{17}; });
    try {
      h.join();
      ADD_FAILURE() << "no exception";
    } catch (const Custom& c) {
      EXPECT_EQ(c.code, 17);
    }
    // The runtime and its workers survive: more processes run fine.
    EXPECT_EQ(hoare::spawn([] { return 1; }).join(), 1);
  });
}

TEST(Process, ManyProcesses) {
  in_runtime([] {
    std::vector<hoare::JoinHandle<int>> hs;
    for (int i = 0; i < 2000; ++i) hs.push_back(hoare::spawn([i] { return i; }));
    long sum = 0;
    for (auto& h : hs) sum += h.join();
    EXPECT_EQ(sum, 1999L * 2000 / 2);
  });
}

TEST(Process, DetachedProcessRuns) {
  std::atomic<bool> ran{false};
  in_runtime([&] {
    auto [tx, rx] = hoare::channel<int>();
    {
      auto h = hoare::spawn([&ran, tx = std::move(tx)]() mutable {
        ran = true;
        tx << 1;
      });
      h.detach();
    }
    EXPECT_EQ(rx.recv(), 1);
  });
  EXPECT_TRUE(ran);
}

TEST(Process, ParReturnsTuple) {
  in_runtime([] {
    auto [a, b, c] = hoare::par([] { return 1; }, [] { return std::string("two"); }, [] {});
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, "two");
    EXPECT_EQ(c, hoare::Unit{});
    std::atomic<int> n{0};
    hoare::par([&] { ++n; }, [&] { ++n; }, [&] { ++n; });
    EXPECT_EQ(n.load(), 3);
  });
}

TEST(Process, ParRunsInParallelAndCommunicates) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto [sent, got] = hoare::par(
        [tx = std::move(tx)]() mutable {
          for (int i = 0; i < 100; ++i) tx << i;
          tx.poison();
          return 100;
        },
        [rx = std::move(rx)]() mutable {
          int s = 0;
          for (int v : rx) s += v;
          return s;
        });
    EXPECT_EQ(sent, 100);
    EXPECT_EQ(got, 4950);
  });
}

TEST(Process, ParRethrowsFirstFailureAfterAll) {
  in_runtime([] {
    std::atomic<int> finished{0};
    EXPECT_THROW(hoare::par([&] { ++finished; }, [&]() { throw std::out_of_range("x"); },
                            [&] {
                              hoare::this_proc::sleep_for(20ms);
                              ++finished;
                            }),
                 std::out_of_range);
    EXPECT_EQ(finished.load(), 2);
  });
}

TEST(Process, ParFor) {
  in_runtime([] {
    std::vector<int> out(100, 0);
    hoare::par_for(0, 100, [&](int i) { out[static_cast<std::size_t>(i)] = i * i; });
    for (int i = 0; i < 100; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], i * i);
    std::vector<int> v{1, 2, 3};
    hoare::par_for(v, [](int& x) { x *= 10; });
    EXPECT_EQ(v, (std::vector<int>{10, 20, 30}));
    EXPECT_THROW(hoare::par_for(0, 10,
                                [](int i) {
                                  if (i == 3) throw std::runtime_error("three");
                                }),
                 std::runtime_error);
  });
}

TEST(Process, ThisProc) {
  in_runtime([] {
    EXPECT_TRUE(hoare::this_proc::in_process());
    auto me = hoare::this_proc::id();
    EXPECT_NE(me, 0u);
    auto other = hoare::spawn([] { return hoare::this_proc::id(); }).join();
    EXPECT_NE(other, me);
    hoare::this_proc::yield();
    auto t0 = std::chrono::steady_clock::now();
    hoare::this_proc::sleep_for(10ms);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 10ms);
    auto until = std::chrono::steady_clock::now() + 5ms;
    hoare::this_proc::sleep_until(until);
    EXPECT_GE(std::chrono::steady_clock::now(), until);
    hoare::this_proc::sleep_until(std::chrono::system_clock::now() + 2ms);
  });
  EXPECT_FALSE(hoare::this_proc::in_process());
}

TEST(Process, PinnedProcessStaysOnItsThread) {
  in_runtime([] {
    auto h = hoare::spawn_pinned([] {
      auto t = std::this_thread::get_id();
      for (int i = 0; i < 200; ++i) {
        hoare::this_proc::yield();
        if (std::this_thread::get_id() != t) return false;
      }
      return true;
    });
    // Keep the other workers busy so that an unpinned process would move.
    std::vector<hoare::JoinHandle<void>> busy;
    for (int i = 0; i < 8; ++i)
      busy.push_back(hoare::spawn([] {
        for (int k = 0; k < 200; ++k) hoare::this_proc::yield();
      }));
    EXPECT_TRUE(h.join());
    for (auto& b : busy) b.join();
    auto h2 = hoare::spawn(hoare::SpawnOptions{}.pin().stack(128 * 1024), [] { return 3; });
    EXPECT_EQ(h2.join(), 3);
  });
}

TEST(Process, WorkersOption) {
  EXPECT_GE(hoare::default_workers(), 1u);
  auto ids = hoare::run(hoare::RunOptions{2, 0}, [] {
    std::vector<hoare::JoinHandle<std::thread::id>> hs;
    for (int i = 0; i < 64; ++i)
      hs.push_back(hoare::spawn([] {
        hoare::this_proc::yield();
        return std::this_thread::get_id();
      }));
    std::set<std::thread::id> s;
    for (auto& h : hs) s.insert(h.join());
    return s.size();
  });
  EXPECT_LE(ids, 2u);
}

// A process on its own OS thread is a process too (as the README calls it): the
// same answer as in a coroutine process; a plain thread is not one.
TEST(Process, ThreadProcessIsInProcess) {
  in_runtime([] {
    EXPECT_TRUE(hoare::spawn_blocking([] { return hoare::this_proc::in_process(); }).join());
    EXPECT_TRUE(hoare::spawn([] { return hoare::this_proc::in_process(); }).join());
    // ... and it can spawn, as a process can.
    EXPECT_EQ(hoare::spawn_blocking([] { return hoare::spawn([] { return 5; }).join(); }).join(),
              5);
  });
  bool plain = true;
  std::thread([&plain] { plain = hoare::this_proc::in_process(); }).join();
  EXPECT_FALSE(plain);
}
