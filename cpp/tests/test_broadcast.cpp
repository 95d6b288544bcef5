// Broadcast channels from C++ (issue 15): every reader gets every value; rendezvous,
// bounded and overwriting; subscribe; poison; alt guards on both ends.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

namespace {
struct Point {
  std::int32_t x, y;
};
}  // namespace

// Every reader receives every value, in order, of every by-value element kind.
TEST(Broadcast, EveryReaderGetsEveryValue) {
  in_runtime([] {
    auto [tx, rx] = hoare::broadcast<std::int64_t>();
    std::vector<hoare::BroadcastRx<std::int64_t>> readers;
    for (int i = 0; i < 3; ++i) readers.push_back(rx.subscribe());
    readers.push_back(std::move(rx));
    EXPECT_EQ(tx.readers(), 4u);
    std::vector<hoare::JoinHandle<std::int64_t>> hs;
    for (auto& r : readers) {
      hs.push_back(hoare::spawn([r = std::move(r)]() mutable {
        std::int64_t s = 0, expect = 0;
        for (auto v : r) {
          if (v != expect++) return std::int64_t(-1);  // out of order or missing
          s += v;
        }
        return s;
      }));
    }
    for (std::int64_t i = 0; i < 200; ++i) tx.send(i);
    tx.poison();
    for (auto& h : hs) EXPECT_EQ(h.join(), 199 * 200 / 2);
  });
}

TEST(Broadcast, StringsAndPodsBuffered) {
  in_runtime([] {
    auto [tx, rx] = hoare::broadcast<rust::String>(hoare::Buffer::bounded(4));
    auto rx2 = rx.subscribe();
    tx.send(rust::String("a"));
    tx.send(rust::String("b"));
    EXPECT_EQ(std::string(rx.recv()), "a");
    EXPECT_EQ(std::string(rx2.recv()), "a");
    EXPECT_EQ(std::string(rx2.recv()), "b");
    EXPECT_EQ(std::string(rx.recv()), "b");
    EXPECT_FALSE(rx.try_recv().has_value());

    auto [ptx, prx] = hoare::broadcast<Point>(hoare::Buffer::bounded(1));
    ptx.send(Point{3, 4});
    auto p = prx.recv();
    EXPECT_EQ(p.x, 3);
    EXPECT_EQ(p.y, 4);
  });
}

// Overwriting: a latest-value cell; send never blocks.
TEST(Broadcast, OverwritingKeepsLatest) {
  in_runtime([] {
    auto [tx, rx] = hoare::broadcast<std::uint64_t>(hoare::Buffer::overwriting(1));
    for (std::uint64_t i = 0; i < 10; ++i) tx.send(i);
    EXPECT_EQ(rx.recv(), 9u);
    EXPECT_FALSE(rx.try_recv().has_value());
  });
}

// A late subscriber gets values from the next one on; poison from a reader
// reaches the writer, whose failed send leaves the value with the sender.
TEST(Broadcast, SubscribeAndPoison) {
  in_runtime([] {
    auto [tx, rx] = hoare::broadcast<rust::String>(hoare::Buffer::bounded(2));
    tx.send(rust::String("early"));
    auto late = tx.subscribe();
    tx.send(rust::String("late"));
    EXPECT_EQ(std::string(late.recv()), "late");
    EXPECT_EQ(std::string(rx.recv()), "early");
    rx.poison();
    EXPECT_FALSE(tx.is_open());
    rust::String v("back");
    EXPECT_THROW(tx.send(std::move(v)), hoare::Poisoned);
    EXPECT_EQ(std::string(v), "back");
    EXPECT_THROW(late.recv(), hoare::Poisoned);
  });
}

// Misuse is an exception: unbounded broadcast, overwriting of capacity 0.
TEST(Broadcast, BadBufferingThrows) {
  in_runtime([] {
    EXPECT_THROW(hoare::broadcast<std::int64_t>(hoare::Buffer::unbounded()), hoare::Error);
    EXPECT_THROW(hoare::broadcast<std::int64_t>(hoare::Buffer::overwriting(0)), hoare::Error);
  });
}

// Alt guards: a reader alts over a broadcast and a channel; a writer alts a
// broadcast send against a timeout (the unchosen value stays unsent). Fails if
// the guards do not reach the Rust broadcast cases (checked with BcastRecv mapped
// to an always-off guard: the alt threw "no enabled guard"/chose the wrong one).
TEST(Broadcast, AltGuardsBothSides) {
  in_runtime([] {
    auto [tx, rx] = hoare::broadcast<std::int64_t>();
    auto [ctx, crx] = hoare::channel<std::int64_t>();
    auto w = hoare::spawn([tx = std::move(tx), ctx = std::move(ctx)]() mutable {
      for (std::int64_t i = 0; i < 10; ++i) {
        bool sent = false;
        hoare::Alt().bcast_send(tx, i, [&] { sent = true; }).select();
        EXPECT_TRUE(sent);
        ctx.send(100 + i);
      }
    });
    std::int64_t bsum = 0, csum = 0;
    int b_open = 1, c_open = 1;
    while (b_open || c_open) {
      auto r = hoare::Alt()
                   .bcast_recv_if(b_open, rx, [&](std::int64_t v) { bsum += v; })
                   .recv_if(c_open, crx, [&](std::int64_t v) { csum += v; })
                   .select_status();
      if (r.poisoned()) (r.guard == 0 ? b_open : c_open) = 0;
    }
    EXPECT_EQ(bsum, 45);
    EXPECT_EQ(csum, 1045);
    w.join();

    // A send guard that is not chosen leaves its broadcast untouched.
    auto [tx2, rx2] = hoare::broadcast<std::int64_t>(hoare::Buffer::bounded(1));
    tx2.send(1);  // full
    auto i = hoare::Alt().bcast_send(tx2, std::int64_t(2)).skip().select();
    EXPECT_EQ(i, 1u);
    EXPECT_EQ(rx2.recv(), 1);
    EXPECT_FALSE(rx2.try_recv().has_value());
  });
}
