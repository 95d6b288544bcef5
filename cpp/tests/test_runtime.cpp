// hoare::Runtime and hoare::RuntimeHandle (issue 15): a runtime started, used from
// plain threads and C callbacks, and shut down explicitly or by its destructor.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

// Fails without RuntimeHandle::spawn working from a plain thread (checked by making
// handle_spawn refuse callers outside a process: every join threw).
TEST(Runtime, SpawnAndJoinFromPlainThreads) {
  hoare::Runtime rt(hoare::RunOptions{2});
  EXPECT_EQ(rt.workers(), 2u);
  EXPECT_FALSE(rt.is_shut_down());
  EXPECT_FALSE(hoare::this_proc::in_process());
  std::vector<std::thread> threads;
  std::atomic<std::int64_t> sum{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([h = rt.handle(), t, &sum] {
      for (int i = 0; i < 50; ++i) {
        sum += h.spawn([t, i] { return static_cast<std::int64_t>(t * 1000 + i); }).join();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::int64_t want = 0;
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 50; ++i) want += t * 1000 + i;
  EXPECT_EQ(sum.load(), want);
  auto h = rt.handle();
  auto h2 = std::move(h);
  EXPECT_THROW(h.spawn([] {}), hoare::Error);  // a moved-from handle
  EXPECT_EQ(h2.workers(), 2u);
  rt.shutdown();
  EXPECT_TRUE(rt.is_shut_down());
  rt.shutdown();  // a second call does nothing
}

// Processes spawned from a plain thread communicate as any others; the main
// thread joins a process that another thread spawned.
TEST(Runtime, ProcessesOfPlainThreadsTalk) {
  hoare::Runtime rt(hoare::RunOptions{2});
  auto [tx, rx] = hoare::channel<std::int64_t>();
  auto reader = rt.spawn([rx = std::move(rx)]() mutable {
    std::int64_t s = 0;
    for (auto v : rx) s += v;
    return s;
  });
  std::thread t([h = rt.handle(), tx = std::move(tx)]() mutable {
    h.spawn([tx = std::move(tx)]() mutable {
       for (std::int64_t i = 1; i <= 100; ++i) tx << i;
     }).join();  // returning destroyed tx: poison ends the reader
  });
  t.join();
  EXPECT_EQ(reader.join(), 5050);
}

namespace {
// A C library's callback (a plain function pointer, called on the library's own
// threads) that uses a handle kept in a global.
std::atomic<hoare::RuntimeHandle*> g_handle{nullptr};
extern "C" std::int64_t on_event(std::int64_t x) {
  return g_handle.load()->spawn([x] { return x * 2; }).join();
}
}  // namespace

TEST(Runtime, CallbackFromCThread) {
  hoare::Runtime rt(hoare::RunOptions{2});
  hoare::RuntimeHandle h = rt.handle();
  g_handle = &h;
  std::int64_t (*cb)(std::int64_t) = &on_event;
  std::vector<std::int64_t> got(4);
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i) ts.emplace_back([&, i] { got[i] = cb(i + 1); });
  for (auto& t : ts) t.join();
  EXPECT_EQ(got, (std::vector<std::int64_t>{2, 4, 6, 8}));
  g_handle = nullptr;
}

// Shutdown cancels a blocked process (its join throws Cancelled, its destructors
// ran); a spawn afterwards throws. Fails if shutdown does not cancel (checked with
// a shutdown that did nothing: the join hung until ctest's timeout).
TEST(Runtime, ShutdownCancelsAndRefusesLaterSpawns) {
  auto rt = std::make_unique<hoare::Runtime>(hoare::RunOptions{1});
  auto [tx, rx] = hoare::channel<std::int64_t>();
  std::atomic<bool> unwound{false};
  struct Flag {
    std::atomic<bool>* f;
    ~Flag() { *f = true; }
  };
  auto stuck = rt->spawn([rx = std::move(rx), &unwound]() mutable {
    Flag f{&unwound};
    return rx.recv();  // nobody sends
  });
  auto h = rt->handle();
  EXPECT_EQ(rt->spawn([] { return 1; }).join(), 1);
  rt->shutdown();
  EXPECT_TRUE(h.is_shut_down());
  EXPECT_THROW(stuck.join(), hoare::Cancelled);
  EXPECT_TRUE(unwound.load());
  EXPECT_THROW(h.spawn([] { return 0; }), hoare::Error);
  rt.reset();  // the destructor after shutdown does nothing more
  (void)tx;
}

// The destructor shuts down: a process blocked for ever is cancelled (fails if
// the destructor leaked the runtime: the join would hang).
TEST(Runtime, DestructorShutsDown) {
  auto [tx, rx] = hoare::channel<std::int64_t>();
  hoare::JoinHandle<std::int64_t> stuck;
  std::optional<hoare::RuntimeHandle> h;
  {
    hoare::Runtime rt(hoare::RunOptions{1});
    h.emplace(rt.handle());
    stuck = rt.spawn([rx = std::move(rx)]() mutable { return rx.recv(); });
  }
  EXPECT_TRUE(h->is_shut_down());
  EXPECT_THROW(stuck.join(), hoare::Cancelled);
  (void)tx;
}

// RuntimeHandle::current inside a process names its runtime; outside any it throws.
// Shutdown from a process of the runtime throws instead of waiting for itself.
TEST(Runtime, CurrentAndShutdownFromAProcess) {
  EXPECT_THROW(hoare::RuntimeHandle::current(), hoare::Error);
  hoare::Runtime rt(hoare::RunOptions{2});
  auto n = rt.spawn([] { return hoare::RuntimeHandle::current().workers(); }).join();
  EXPECT_EQ(n, 2u);
  auto nested = rt.spawn([] {
                    return hoare::RuntimeHandle::current().spawn([] { return 5; }).join();
                  }).join();
  EXPECT_EQ(nested, 5);
  auto threw = rt.spawn([&rt] {
                   try {
                     rt.shutdown();
                     return false;
                   } catch (const hoare::Error&) {
                     return true;
                   }
                 }).join();
  EXPECT_TRUE(threw);
  EXPECT_FALSE(rt.is_shut_down());
}

// An exception of a process spawned through a handle reaches its joiner.
TEST(Runtime, ExceptionReachesJoiner) {
  hoare::Runtime rt(hoare::RunOptions{1});
  auto p = rt.spawn([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_THROW(
      {
        try {
          p.join();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "boom");
          throw;
        }
      },
      std::runtime_error);
}
