// Scoped forking, processes on their own threads (spawn_blocking), process names.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

TEST(Scope, ChildrenBorrowLocalsAndAreJoined) {
  in_runtime([] {
    std::vector<int> v{1, 2, 3, 4};
    int total = 0;
    hoare::scope([&](hoare::Scope& s) {
      for (auto& x : v) {
        s.spawn([&x] {
          hoare::this_proc::sleep_for(2ms);
          x *= 10;
        });
      }
    });
    for (int x : v) total += x;
    EXPECT_EQ(total, 100);
  });
}

TEST(Scope, ReturnsBodyResultAndChildResults) {
  in_runtime([] {
    int r = hoare::scope([](hoare::Scope& s) {
      auto a = s.spawn([] { return 20; });
      auto b = s.spawn([] { return std::string("22"); });
      return a.join() + std::stoi(b.join());
    });
    EXPECT_EQ(r, 42);
  });
}

TEST(Scope, JoinsChildrenWhenTheBodyThrows) {
  in_runtime([] {
    std::atomic<int> done{0};
    EXPECT_THROW(hoare::scope([&](hoare::Scope& s) {
                   for (int i = 0; i < 3; ++i) {
                     s.spawn([&] {
                       hoare::this_proc::sleep_for(10ms);
                       done.fetch_add(1);
                     });
                   }
                   throw std::logic_error("body failed");
                 }),
                 std::logic_error);
    EXPECT_EQ(done.load(), 3);  // joined before scope() rethrew
  });
}

TEST(Scope, BodyExceptionTakesPrecedenceOverAChilds) {
  in_runtime([] {
    try {
      hoare::scope([](hoare::Scope& s) {
        s.spawn([] { throw std::runtime_error("child"); });
        throw std::logic_error("body");
      });
      FAIL() << "no exception";
    } catch (const std::logic_error& e) {
      EXPECT_STREQ(e.what(), "body");
    }
  });
}

TEST(Scope, UnjoinedChildExceptionIsRethrownByScope) {
  in_runtime([] {
    std::atomic<int> ok{0};
    try {
      hoare::scope([&](hoare::Scope& s) {
        s.spawn([&] { ok.fetch_add(1); });
        s.spawn([]() -> int { throw std::out_of_range("first"); });
        s.spawn([] { throw std::runtime_error("second"); });
      });
      FAIL() << "no exception";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "first");  // in spawn order
    }
    EXPECT_EQ(ok.load(), 1);
  });
}

TEST(Scope, JoinedChildExceptionDoesNotFailTheScope) {
  in_runtime([] {
    bool caught = false;
    hoare::scope([&](hoare::Scope& s) {
      auto h = s.spawn([] { throw std::runtime_error("mine"); });
      EXPECT_TRUE(h.joinable());
      try {
        h.join();
      } catch (const std::runtime_error&) {
        caught = true;
      }
      EXPECT_FALSE(h.joinable());
      EXPECT_THROW(h.join(), hoare::Error);  // misuse: joined twice
    });
    EXPECT_TRUE(caught);
  });
}

TEST(Scope, SpawnOutsideARuntimeThrows) {
  EXPECT_THROW(hoare::scope([](hoare::Scope& s) { s.spawn([] {}); }), hoare::Error);
}

TEST(Scope, ChildWithOptionsAndChannels) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    long sum = 0;
    hoare::scope([&](hoare::Scope& s) {
      s.spawn(hoare::SpawnOptions{}.name("producer").stack(128 * 1024), [&] {
        EXPECT_EQ(hoare::this_proc::name(), std::optional<std::string>("producer"));
        for (int i = 1; i <= 100; ++i) tx.send(i);
        tx.poison();
      });
      s.spawn([&] {
        for (int v : rx) sum += v;
      });
    });
    EXPECT_EQ(sum, 5050);
  });
}

TEST(SpawnBlocking, RunsOnItsOwnThread) {
  // One worker: if the blocking process ran on it, waiting on the future would
  // stall the process that fulfils it.
  hoare::run(hoare::RunOptions{1, 0}, [] {
    std::promise<int> pr;
    auto fut = pr.get_future();
    auto [tx, rx] = hoare::channel<int>();
    auto b = hoare::spawn_blocking([&fut, tx = std::move(tx)]() mutable {
      int v = fut.get();  // an OS-level blocking wait
      tx.send(v + 1);     // channel operations block the thread
      return std::this_thread::get_id();
    });
    auto p = hoare::spawn([&pr] {
      hoare::this_proc::sleep_for(5ms);
      pr.set_value(41);
    });
    EXPECT_EQ(rx.recv(), 42);
    p.join();
    EXPECT_NE(b.join(), std::this_thread::get_id());
  });
}

TEST(SpawnBlocking, ExceptionIsRethrownByJoin) {
  in_runtime([] {
    auto b = hoare::spawn_blocking([]() -> int { throw std::domain_error("io failed"); });
    EXPECT_THROW(b.join(), std::domain_error);
    auto t = hoare::spawn(hoare::SpawnOptions{}.thread().name("io"),
                          [] { return hoare::this_proc::name().value_or("?"); });
    EXPECT_EQ(t.join(), "io");
  });
}

TEST(SpawnBlocking, ThreadAndPinnedIsMisuse) {
  in_runtime([] {
    EXPECT_THROW(hoare::spawn(hoare::SpawnOptions{}.thread().pin(), [] {}), hoare::Error);
  });
  EXPECT_THROW(hoare::spawn_blocking([] {}), hoare::Error);  // outside a runtime
}

TEST(ProcName, NamedAndUnnamed) {
  in_runtime([] {
    auto a =
        hoare::spawn(hoare::SpawnOptions{}.name("alpha"), [] { return hoare::this_proc::name(); });
    auto b = hoare::spawn([] { return hoare::this_proc::name(); });
    EXPECT_EQ(a.join(), std::optional<std::string>("alpha"));
    EXPECT_EQ(b.join(), std::nullopt);
  });
}
