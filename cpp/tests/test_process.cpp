#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
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

// The crate README's first Rust program, translated line by line: the end the
// process captured must poison the channel when the body returns (as in Rust and
// std::thread), not when somebody joins the process. A hang here would mean the
// end lives on in the task until join().
TEST(Process, CapturedEndsGoWhenTheBodyReturns) {
  auto total = in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto squares = hoare::spawn([tx = std::move(tx)]() mutable {
      for (int i = 1; i <= 4; ++i) tx.send(i * i);
    });  // returning destroys tx, which poisons the channel and ends the loop
    int total = 0;
    int v = 0;
    hoare::Status st;
    while ((st = rx.recv_for(v, 5s)) == hoare::Status::ok) total += v;
    EXPECT_EQ(st, hoare::Status::poisoned) << "the process's end outlived its body";
    squares.join();
    return total;
  });
  EXPECT_EQ(total, 30);
}

TEST(Process, CapturedEndsGoWhenTheBodyThrows) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto p = hoare::spawn([tx = std::move(tx)]() mutable {
      tx.send(1);
      throw std::runtime_error("failed");
    });
    EXPECT_EQ(rx.recv(), 1);
    int v = 0;
    EXPECT_EQ(rx.recv_for(v, 5s), hoare::Status::poisoned);
    EXPECT_THROW(p.join(), std::runtime_error);  // the exception outlives the callable
  });
}

// The callable is destroyed by the process itself, right after its body, while the
// result waits for the joiner.
TEST(Process, CallableIsDestroyedInTheProcess) {
  struct Probe {
    std::uint64_t* destroyed_in;
    explicit Probe(std::uint64_t* p) : destroyed_in(p) {}
    Probe(Probe&& o) noexcept : destroyed_in(std::exchange(o.destroyed_in, nullptr)) {}
    ~Probe() {
      if (destroyed_in) *destroyed_in = hoare::this_proc::id();
    }
  };
  in_runtime([] {
    std::uint64_t destroyed_in = 0;
    auto h = hoare::spawn([probe = Probe(&destroyed_in)] { return hoare::this_proc::id(); });
    auto id = h.join();
    EXPECT_EQ(destroyed_in, id);
  });
}

// An exception that ends a process nobody joins is reported on stderr with the
// process's name, whether the handle goes before or after the process ends.
TEST(Process, AnExceptionNobodyJoinsIsReported) {
  StderrCapture cap;
  in_runtime([&cap] {
    hoare::spawn(hoare::SpawnOptions{}.name("lost"), [] {
      hoare::this_proc::sleep_for(5ms);
      throw std::runtime_error("nobody hears me");
    }).detach();
    auto [tx, rx] = hoare::channel<int>();
    {
      auto h =
          hoare::spawn(hoare::SpawnOptions{}.name("dropped"),
                       [tx = std::move(tx)]() mutable -> int { throw std::logic_error("gone"); });
      int v = 0;
      EXPECT_EQ(rx.recv_for(v, 5s), hoare::Status::poisoned);  // the body has ended
    }                                                          // the handle goes without join()
    EXPECT_TRUE(cap.wait_for("nobody hears me", 5s));
    EXPECT_TRUE(cap.wait_for("gone", 5s));
  });
  auto err = cap.text();
  EXPECT_NE(err.find("\"lost\""), std::string::npos) << err;
  EXPECT_NE(err.find("\"dropped\""), std::string::npos) << err;
}

// Joined processes (also through par, par_for and scope) and processes cancelled
// at shutdown are not reported.
TEST(Process, ObservedOrCancelledExceptionsAreNotReported) {
  StderrCapture cap;
  hoare::run(hoare::RunOptions{2, 0}, [] {
    auto h = hoare::spawn([] { throw std::runtime_error("joined"); });
    EXPECT_THROW(h.join(), std::runtime_error);
    EXPECT_THROW(hoare::par([] { throw std::runtime_error("par 1"); },
                            [] { throw std::runtime_error("par 2"); }),
                 std::runtime_error);
    EXPECT_THROW(hoare::scope([](hoare::Scope& s) {
                   s.spawn([] { throw std::runtime_error("scope 1"); });
                   s.spawn([] { throw std::runtime_error("scope 2"); });
                 }),
                 std::runtime_error);
    hoare::spawn([] { hoare::this_proc::sleep_for(std::chrono::hours(1)); }).detach();
    hoare::this_proc::sleep_for(5ms);
  });
  auto err = cap.text();
  EXPECT_EQ(err.find("hoare:"), std::string::npos) << err;
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

// The report goes to the handler set with set_unjoined_failure_handler (e.g. one
// that terminates, as std::thread would), once per failure.
TEST(Process, UnjoinedFailureHandler) {
  static std::atomic<int> calls{0};
  static std::string seen;  // written by the one call below
  calls = 0;
  auto prev = hoare::set_unjoined_failure_handler([](const hoare::UnjoinedFailure& f) noexcept {
    if (calls++ == 0) seen = f.name.value_or("?") + ": " + hoare::detail::describe(f.error);
  });
  StderrCapture cap;
  in_runtime([] {
    hoare::spawn(hoare::SpawnOptions{}.name("p"), [] {
      throw std::runtime_error("boom");
    }).detach();
    for (int i = 0; i < 5000 && calls == 0; ++i) hoare::this_proc::sleep_for(1ms);
  });
  EXPECT_NE(hoare::set_unjoined_failure_handler(prev), prev);  // ours, now replaced
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(seen, "p: boom");
  EXPECT_EQ(cap.text(), "");  // the default handler did not print
}
