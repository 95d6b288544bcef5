// Request/reply bundles, alting barriers (also as Alt guards), RecvAny.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

TEST(RequestReply, CallAndServe) {
  in_runtime([] {
    auto [client, server] = hoare::request_reply<int, std::string>();
    auto s = hoare::spawn([server = std::move(server)]() mutable {
      return server.serve([](int x) { return std::to_string(x * 2); });
    });
    std::vector<hoare::JoinHandle<int>> clients;
    for (int c = 0; c < 4; ++c) {
      clients.push_back(hoare::spawn([client = client, c]() mutable {
        int ok = 0;
        for (int i = 0; i < 25; ++i)
          ok += client.call(c * 100 + i) == std::to_string(2 * (c * 100 + i));
        return ok;
      }));
    }
    for (auto& h : clients) EXPECT_EQ(h.join(), 25);
    client.poison();
    EXPECT_EQ(s.join(), 100u);
  });
}

TEST(RequestReply, ExplicitRecvAndReply) {
  in_runtime([] {
    auto [client, server] =
        hoare::request_reply<std::string, std::size_t>(hoare::Buffer::bounded(2));
    auto s = hoare::spawn([server = std::move(server)]() mutable {
      auto r = server.recv();
      std::size_t n = r.value.size();
      r.reply(n);
    });
    EXPECT_EQ(client.call("hello"), 5u);
    s.join();
  });
}

TEST(RequestReply, PoisonedServerFailsTheCall) {
  in_runtime([] {
    auto [client, server] = hoare::request_reply<int, int>();
    server.poison();
    EXPECT_THROW(client.call(1), hoare::Poisoned);
  });
}

TEST(RequestReply, ServerDroppingTheRequestFailsTheCall) {
  in_runtime([] {
    auto [client, server] = hoare::request_reply<int, int>();
    auto s = hoare::spawn([server = std::move(server)]() mutable {
      auto r = server.recv();  // destroyed without a reply
      (void)r;
    });
    EXPECT_THROW(client.call(1), hoare::Poisoned);
    s.join();
  });
}

TEST(RequestReply, ServeExceptionReachesJoinAndFailsTheCall) {
  in_runtime([] {
    auto [client, server] = hoare::request_reply<int, int>();
    auto s = hoare::spawn([server = std::move(server)]() mutable {
      return server.serve([](int) -> int { throw std::invalid_argument("bad request"); });
    });
    EXPECT_THROW(client.call(1), hoare::Poisoned);
    EXPECT_THROW(s.join(), std::invalid_argument);
  });
}

TEST(AltingBarrier, SyncRounds) {
  in_runtime([] {
    hoare::AltingBarrier b;
    auto ends = b.enroll(3);
    EXPECT_EQ(b.enrolled(), 3u);
    hoare::par_for(ends, [](hoare::AltingBarrierEnd& e) {
      for (int i = 0; i < 20; ++i) e.sync();
    });
    EXPECT_EQ(b.rounds(), 20u);
    ends.clear();
    EXPECT_EQ(b.enrolled(), 0u);
  });
}

TEST(AltingBarrier, AsAnAltGuard) {
  in_runtime([] {
    hoare::AltingBarrier b;
    auto ends = b.enroll(4);
    std::atomic<int> fired{0};
    hoare::par_for(ends, [&](hoare::AltingBarrierEnd& e) {
      for (int i = 0; i < 10; ++i) {
        auto [tx, rx] = hoare::channel<int>();  // never ready
        std::size_t g = hoare::Alt().recv(rx).barrier(e, [&] { fired.fetch_add(1); }).select();
        EXPECT_EQ(g, 1u);
      }
    });
    EXPECT_EQ(fired.load(), 40);
    EXPECT_EQ(b.rounds(), 10u);
  });
}

TEST(AltingBarrier, OtherGuardWinsWhileIncomplete) {
  in_runtime([] {
    hoare::AltingBarrier b;
    auto mine = b.enroll();
    auto other = b.enroll();  // never offers
    auto [tx, rx] = hoare::channel<int>(hoare::Buffer::bounded(1));
    tx.send(7);
    int got = 0;
    EXPECT_EQ(hoare::Alt().barrier(mine).recv(rx, [&](int v) { got = v; }).select(), 1u);
    EXPECT_EQ(got, 7);
    // Disabled barrier guard: the skip is chosen.
    EXPECT_EQ(hoare::Alt().barrier_if(false, mine).skip().select(), 1u);
    // Once the other end resigns, the barrier completes with us alone.
    other.resign();
    EXPECT_EQ(hoare::Alt().barrier(mine).timeout(1s).select(), 0u);
    EXPECT_EQ(b.rounds(), 1u);
    EXPECT_TRUE(mine.barrier().enrolled() == 1u);
  });
}

TEST(AltingBarrier, ResignedEndIsMisuse) {
  in_runtime([] {
    hoare::AltingBarrier b;
    auto e = b.enroll();
    e.resign();
    EXPECT_FALSE(e.valid());
    EXPECT_THROW(e.sync(), hoare::Error);
    EXPECT_THROW(hoare::Alt().barrier(e).skip(), hoare::Error);
    EXPECT_THROW(e.barrier(), hoare::Error);
    auto f = b.enroll();
    EXPECT_THROW(hoare::Alt().barrier(f).barrier(f), hoare::Error);  // one end, two guards
  });
}

TEST(RecvAny, SelectsAndPoisons) {
  in_runtime([] {
    std::vector<hoare::Rx<int>> rxs;
    std::vector<hoare::Tx<int>> txs;
    for (int i = 0; i < 4; ++i) {
      auto [tx, rx] = hoare::channel<int>(hoare::Buffer::bounded(4));
      txs.push_back(std::move(tx));
      rxs.push_back(std::move(rx));
    }
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 3; ++k) txs[i].send(i);
    hoare::RecvAny<int> set(rxs);
    EXPECT_EQ(set.size(), 4u);
    hoare::Fair fair;
    std::vector<int> count(4, 0);
    for (int k = 0; k < 12; ++k) {
      int v = -1;
      std::size_t i = set.select(fair, v);
      EXPECT_EQ(static_cast<int>(i), v);
      ++count[i];
    }
    for (int c : count) EXPECT_EQ(c, 3);
    txs[2].send(5);
    set.select_with([](std::size_t i, int v) {
      EXPECT_EQ(i, 2u);
      EXPECT_EQ(v, 5);
    });
    txs[3].poison();
    try {
      int v;
      set.select(v);
      FAIL() << "no exception";
    } catch (const hoare::Poisoned& p) {
      EXPECT_EQ(p.guard(), 3u);
    }
  });
}

TEST(RecvAny, SelectStatusReportsPoisonWithoutThrowing) {
  in_runtime([] {
    std::vector<hoare::Rx<std::string>> rxs;
    std::vector<hoare::Tx<std::string>> txs;
    for (int i = 0; i < 3; ++i) {
      auto [tx, rx] = hoare::channel<std::string>(hoare::Buffer::bounded(2));
      txs.push_back(std::move(tx));
      rxs.push_back(std::move(rx));
    }
    hoare::RecvAny<std::string> set(rxs);
    txs[1].send("one");
    std::string v = "untouched";
    auto r = set.select_status(v);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.guard, 1u);
    EXPECT_EQ(v, "one");
    txs[2].poison();
    v = "untouched";
    hoare::Fair fair;
    r = set.select_status(fair, v);
    EXPECT_TRUE(r.poisoned());
    EXPECT_EQ(r.guard, 2u);
    EXPECT_EQ(v, "untouched");
    EXPECT_EQ(fair.next, 3u);
  });
}

TEST(RecvAny, ByAddressValuesFromWriters) {
  in_runtime([] {
    std::vector<hoare::Rx<std::string>> rxs;
    std::vector<hoare::JoinHandle<void>> hs;
    // A writer that ended would poison its channel (its end goes with its body), and
    // the set could choose it: the writers keep their ends until the reader is done.
    auto done = hoare::Barrier().enroll(4);
    for (int i = 0; i < 3; ++i) {
      auto [tx, rx] = hoare::channel<std::string>();
      rxs.push_back(std::move(rx));
      hs.push_back(hoare::spawn([tx = std::move(tx), i, end = std::move(done[i])]() mutable {
        for (int k = 0; k < 10; ++k) tx.send(std::string(40, static_cast<char>('a' + i)));
        end.sync();
      }));
    }
    hoare::RecvAny<std::string> set(rxs);
    for (int k = 0; k < 30; ++k) {
      std::string s;
      std::size_t i = set.select(s);
      EXPECT_EQ(s, std::string(40, static_cast<char>('a' + i)));
    }
    done[3].sync();
    for (auto& h : hs) h.join();
  });
}

TEST(RecvAny, Misuse) {
  in_runtime([] {
    std::vector<hoare::Rx<int>> none;
    EXPECT_THROW(hoare::RecvAny<int>{none}, hoare::Error);  // would wait for ever
    std::vector<hoare::Rx<int>> moved_from(1);
    EXPECT_THROW(hoare::RecvAny<int>{moved_from}, hoare::Error);  // an empty end
  });
}

// An alt of only receive guards of one type and sharing kind takes the bridge's
// set fast path; mixed kinds fall back to the general one. Both agree.
TEST(AltFastPath, RecvOnlyAltsPoisonAndMixedKinds) {
  in_runtime([] {
    auto [t1, r1] = hoare::channel<std::string>();
    auto [t2, r2] = hoare::channel<std::string>(hoare::Buffer::bounded(1));
    auto w = hoare::spawn([&t1] { t1.send(std::string(64, 'x')); });  // t1 stays open
    std::string got;
    EXPECT_EQ(hoare::Alt().recv(r2).recv(r1, [&](std::string s) { got = std::move(s); }).select(),
              1u);
    EXPECT_EQ(got, std::string(64, 'x'));
    w.join();
    t2.poison();
    try {
      hoare::Alt().recv(r1).recv(r2).select();
      FAIL() << "no exception";
    } catch (const hoare::Poisoned& p) {
      EXPECT_EQ(p.guard(), 1u);
    }
    // A one2one and an any2one end: different sharing kinds (general path).
    auto [t3, r3] = hoare::channel<int>(hoare::Buffer::bounded(1));
    auto [t4, r4] = hoare::channel<int, hoare::Sharing::one2any>(hoare::Buffer::bounded(1));
    t4.send(4);
    int v = 0;
    EXPECT_EQ(hoare::Alt().recv(r3).recv(r4, [&](int x) { v = x; }).select(), 1u);
    EXPECT_EQ(v, 4);
    // Different element types in one alt.
    t3.send(3);
    EXPECT_EQ(hoare::Alt().recv(r1).recv(r3, [&](int x) { v = x; }).select(), 1u);
    EXPECT_EQ(v, 3);
  });
}

TEST(RecvWith, WriterStaysBlockedUntilTheHandlerReturns) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>();
    std::atomic<bool> sent{false};
    auto w = hoare::spawn([&, tx = std::move(tx)]() mutable {
      tx.send(std::string("payload"));
      sent = true;
    });
    std::size_t n = rx.recv_with([&](std::string s) {
      hoare::this_proc::sleep_for(20ms);
      EXPECT_FALSE(sent.load());  // still inside the rendezvous
      return s.size();
    });
    EXPECT_EQ(n, 7u);
    w.join();
    EXPECT_TRUE(sent.load());
  });
}

TEST(RecvWith, NativeAndPodValuesAndVoidHandlers) {
  in_runtime([] {
    struct P {
      int a, b;
    };
    auto [t1, r1] = hoare::channel<std::int64_t>();
    auto [t2, r2] = hoare::channel<P>(hoare::Buffer::bounded(1));
    auto w = hoare::spawn([t1 = std::move(t1)]() mutable { t1.send(40); });
    EXPECT_EQ(r1.recv_with([](std::int64_t v) { return v + 2; }), 42);
    w.join();
    t2.send(P{3, 4});
    int sum = 0;
    r2.recv_with([&](P p) { sum = p.a + p.b; });
    EXPECT_EQ(sum, 7);
  });
}

TEST(RecvWith, PoisonAndHandlerException) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto w = hoare::spawn([tx = std::move(tx)]() mutable { tx.send(1); });
    EXPECT_THROW(rx.recv_with([](int) -> int { throw std::range_error("handler"); }),
                 std::range_error);
    w.join();  // the writer was released all the same
    bool ran = false;
    // The writer is gone: its end was destroyed, which poisons the channel.
    EXPECT_THROW(rx.recv_with([&](int) { ran = true; }), hoare::Poisoned);
    EXPECT_FALSE(ran);
    hoare::Rx<int> empty;
    EXPECT_THROW(empty.recv_with([](int) {}), hoare::Error);  // misuse: an empty end
  });
}
