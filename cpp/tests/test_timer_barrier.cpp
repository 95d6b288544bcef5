#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;
using Clock = hoare::Clock;

TEST(Timer, EggRestartsEachUse) {
  hoare::Egg egg(50ms);
  auto d1 = egg.deadline();
  std::this_thread::sleep_for(1ms);
  EXPECT_GT(egg.deadline(), d1);
  EXPECT_FALSE(egg.expired());
  EXPECT_TRUE(hoare::Egg(0ms).expired());
}

TEST(Timer, RepeatAdvancesOnlyWhenFired) {
  auto t0 = Clock::now();
  hoare::Repeat r(t0, 1s);
  EXPECT_EQ(r.deadline(), t0 + 1s);
  EXPECT_EQ(r.deadline(), t0 + 1s);
  r.fired();
  EXPECT_EQ(r.deadline(), t0 + 2s);
  hoare::Repeat late(t0 - 10s, 1s);
  late.skip_missed();
  EXPECT_TRUE(late.expired());
  late.fired();
  EXPECT_FALSE(late.expired());
}

TEST(Timer, DateStaysExpired) {
  auto d = hoare::Date::after(1ms);
  in_runtime([&] {
    hoare::this_proc::sleep(d);
    EXPECT_TRUE(d.expired());
    auto at = d.deadline();
    hoare::this_proc::sleep(d);   // at once
    EXPECT_EQ(d.deadline(), at);  // not moved on by either sleep
    // Still expired when an alt starts: chosen before a skip, which is taken only
    // when nothing else is ready. (Not a wall-clock bound on the sleep: a loaded
    // machine can stall any call for longer than a bound short enough to matter.)
    auto [tx, rx] = hoare::channel<int>();
    EXPECT_EQ(hoare::Alt().recv(rx).timeout(d).skip().select(), 1u);
  });
}

TEST(Timer, RepeatSleepsOnAGrid) {
  in_runtime([] {
    auto t0 = Clock::now();
    hoare::Repeat tick(t0, 5ms);
    for (int i = 0; i < 4; ++i) hoare::this_proc::sleep(tick);
    EXPECT_GE(Clock::now() - t0, 20ms);
    EXPECT_EQ(tick.next_tick(), t0 + 25ms);
  });
}

TEST(Timer, TimedChannelOperations) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    hoare::Repeat r(2ms);
    auto first = r.deadline();
    int x = 0;
    EXPECT_EQ(hoare::recv_timed(rx, x, r), hoare::Status::timeout);
    EXPECT_EQ(r.deadline(), first + 2ms);  // fired: advanced one period
    hoare::Egg egg(1ms);
    EXPECT_EQ(hoare::send_timed(tx, 5, egg), hoare::Status::timeout);
  });
}

// The C++ timers are the Rust ones: a time point goes to Rust and back unchanged,
// a copy is a timer of its own, and a moved-from timer refuses to be used.
TEST(Timer, BridgedTimersKeepTheirTimePoints) {
  auto t0 = Clock::now();
  hoare::Date d(t0 + 1h);
  EXPECT_EQ(d.at(), t0 + 1h);
  EXPECT_EQ(d.deadline(), t0 + 1h);
  EXPECT_FALSE(d.expired());
  EXPECT_TRUE(hoare::Date(t0 - 1h).expired());
  hoare::Repeat r(t0, 7ms);
  hoare::Repeat copy = r;
  r.fired();
  EXPECT_EQ(r.next_tick(), t0 + 14ms);
  EXPECT_EQ(copy.next_tick(), t0 + 7ms);
  EXPECT_EQ(r.period(), 7ms);
  EXPECT_EQ(hoare::Egg(3ms).period(), 3ms);
  hoare::Egg moved(1ms);
  hoare::Egg to(std::move(moved));
  EXPECT_THROW(moved.deadline(), hoare::Error);
  EXPECT_FALSE(to.expired());
}

// Alt timeouts and sleeps also take a timer type of the caller's own.
TEST(Timer, AltTakesAUserTimer) {
  struct Every {
    Clock::time_point next;
    int fired_count = 0;
    Clock::time_point deadline() const { return next; }
    void fired() {
      ++fired_count;
      next += 1ms;
    }
  };
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    Every t{Clock::now() + 1ms};
    auto first = t.next;
    for (int k = 0; k < 3; ++k) hoare::Alt().recv(rx).timeout(t).select();
    EXPECT_EQ(t.fired_count, 3);
    EXPECT_EQ(t.next, first + 3ms);
    hoare::this_proc::sleep(t);
    EXPECT_EQ(t.fired_count, 4);
  });
}

TEST(Barrier, SyncsRounds) {
  in_runtime([] {
    hoare::Barrier b;
    constexpr int n = 8, rounds = 50;
    std::atomic<int> counter{0};
    std::atomic<bool> bad{false};
    std::vector<hoare::JoinHandle<void>> hs;
    auto ends = b.enroll(n);
    EXPECT_EQ(b.enrolled(), std::size_t(n));
    for (auto& e : ends) {
      hs.push_back(hoare::spawn([&, e = std::move(e)]() mutable {
        for (int r = 0; r < rounds; ++r) {
          ++counter;
          e.sync();
          if (counter.load() < (r + 1) * n) bad = true;  // everyone arrived
          e.sync();
        }
      }));
    }
    for (auto& h : hs) h.join();
    EXPECT_FALSE(bad.load());
    EXPECT_EQ(counter.load(), n * rounds);
    EXPECT_EQ(b.enrolled(), 0u);
    EXPECT_GE(b.rounds(), std::uint64_t(2 * rounds));
  });
}

TEST(Barrier, DynamicEnrollAndResign) {
  in_runtime([] {
    hoare::Barrier b;
    auto a = b.enroll();
    auto c = b.enroll();
    EXPECT_TRUE(a.barrier() == b);
    auto p = hoare::spawn([c = std::move(c)]() mutable {
      c.sync();
      c.resign();
    });
    a.sync();  // with c
    p.join();
    EXPECT_EQ(b.enrolled(), 1u);
    a.sync();  // alone now: returns at once
    a.resign();
    EXPECT_THROW(a.sync(), hoare::Error);
    hoare::Barrier other;
    EXPECT_TRUE(other != b);
  });
}
