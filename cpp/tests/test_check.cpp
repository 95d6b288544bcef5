// hoare::check from C++ (the library is built with the check feature for the tests).
#include <gtest/gtest.h>

#include <hoare/hoare.hpp>
#include <stdexcept>
#include <string>

TEST(Check, PairIsExploredCompletely) {
  auto s = hoare::check::Builder().exhaustive().run([] {
    auto [tx, rx] = hoare::channel<int>();
    auto h = hoare::spawn([tx = std::move(tx)]() mutable {
      tx.send(1);
      tx.send(2);
    });
    EXPECT_EQ(rx.recv(), 1);
    EXPECT_EQ(rx.recv(), 2);
    h.join();
  });
  EXPECT_TRUE(s.complete);
  EXPECT_GE(s.executions, 1u);
}

TEST(Check, DelayBoundZeroRunsTheRoundRobinScheduleOnly) {
  auto pair = [] {
    auto [tx, rx] = hoare::channel<int>();
    auto h = hoare::spawn([tx = std::move(tx)]() mutable { tx.send(1); });
    EXPECT_EQ(rx.recv(), 1);
    h.join();
  };
  auto none = hoare::check::Builder().delay_bound(0).run(pair);
  EXPECT_EQ(none.executions, 1u);
  EXPECT_FALSE(none.complete);
  auto all = hoare::check::Builder().delay_bound(100).run(pair);
  EXPECT_GT(all.executions, 1u);
  EXPECT_TRUE(all.complete);
}

TEST(Check, DeadlockThrowsWithTheReport) {
  std::string report;
  try {
    hoare::check::Builder().exhaustive().run([] {
      auto [tx, rx] = hoare::channel<int>();
      (void)rx.recv();  // nobody sends
    });
  } catch (const hoare::check::Failure& e) {
    report = e.what();
  }
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("schedule:"), std::string::npos) << report;
}

TEST(Check, AnExceptionIsAFailureOfItsExecution) {
  EXPECT_THROW(hoare::check::Builder().random(50).seed(1).run([] {
    auto [tx, rx] = hoare::channel<int, hoare::Sharing::any2one>();
    auto tx2 = tx;
    auto a = hoare::spawn([tx = std::move(tx)]() mutable { tx.send(1); });
    auto b = hoare::spawn([tx = std::move(tx2)]() mutable { tx.send(2); });
    // Wrong in the order the writers can arrive in: 2 then 1.
    if (rx.recv() != 1) throw std::logic_error("2 came first");
    (void)rx.recv();
    a.join();
    b.join();
  }),
               hoare::check::Failure);
}
