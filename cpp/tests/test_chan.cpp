#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;
using hoare::Buffer;
using hoare::Sharing;
using hoare::Status;

TEST(Chan, RendezvousSendRecv) {
  in_runtime([] {
    hoare::Chan<std::string> c;
    auto w = hoare::spawn([tx = c.move_tx()]() mutable {
      tx.send(std::string("a"));
      tx << std::string("b");
      tx(std::string("c"));
      std::string d = "d";
      tx.send(d);  // const& overload copies
      EXPECT_EQ(d, "d");
    });
    auto& rx = c.ref_rx();
    EXPECT_EQ(rx.recv(), "a");
    std::string s;
    EXPECT_TRUE(rx >> s);
    EXPECT_EQ(s, "b");
    EXPECT_EQ(rx(), "c");
    rx.recv(s);
    EXPECT_EQ(s, "d");
    w.join();
  });
}

TEST(Chan, RangeForEndsAtPoison) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      for (int i = 0; i < 10; ++i) tx << i;
      tx.poison();
    });
    std::vector<int> got;
    for (auto v : rx) got.push_back(v);
    EXPECT_EQ(got.size(), 10u);
    EXPECT_EQ(got.back(), 9);
    EXPECT_THROW(rx.recv(), hoare::Poisoned);
    w.join();
  });
}

TEST(Chan, PoisonThrowsOnBothSides) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    rx.poison();
    EXPECT_THROW(tx.send(1), hoare::Poisoned);
    EXPECT_FALSE(tx << 1);
    EXPECT_EQ(tx.try_send(1), Status::poisoned);
    EXPECT_EQ(tx.send_for(1, 1ms), Status::poisoned);
    EXPECT_THROW(rx.recv(), hoare::Poisoned);
    int x = 0;
    EXPECT_FALSE(rx >> x);
    EXPECT_EQ(rx.try_recv(x), Status::poisoned);
  });
}

TEST(Chan, DroppingTheOnlyWriterPoisons) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    { auto gone = std::move(tx); }
    EXPECT_THROW(rx.recv(), hoare::Poisoned);
  });
}

TEST(Chan, BlockedReaderWokenByPoison) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto r = hoare::spawn([rx = std::move(rx)]() mutable {
      try {
        rx.recv();
        return false;
      } catch (const hoare::Poisoned&) {
        return true;
      }
    });
    hoare::this_proc::sleep_for(5ms);
    tx.poison();
    EXPECT_TRUE(r.join());
  });
}

TEST(Chan, TryAndTimedOnRendezvous) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>();
    std::string v = "keep";
    EXPECT_EQ(tx.try_send(std::move(v)), Status::would_block);
    EXPECT_EQ(v, "keep");  // C4: a failed send leaves the value to the caller
    EXPECT_EQ(tx.send_for(std::move(v), 2ms), Status::timeout);
    EXPECT_EQ(v, "keep");
    EXPECT_EQ(tx.send_until(std::move(v), std::chrono::steady_clock::now() + 1ms), Status::timeout);
    EXPECT_EQ(v, "keep");
    std::string out;
    EXPECT_EQ(rx.try_recv(out), Status::would_block);
    EXPECT_EQ(rx.recv_for(out, 2ms), Status::timeout);
    EXPECT_EQ(rx.recv_until(out, std::chrono::steady_clock::now() + 1ms), Status::timeout);
    EXPECT_FALSE(rx.try_recv().has_value());
    EXPECT_FALSE(rx.recv_for(1ms).has_value());

    // A timed receive that a writer satisfies.
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      hoare::this_proc::sleep_for(2ms);
      tx << std::string("late");
    });
    EXPECT_EQ(rx.recv_for(out, 5s), Status::ok);
    EXPECT_EQ(out, "late");
    w.join();
  });
}

TEST(Chan, Bounded) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>(Buffer::bounded(2));
    tx << 1;
    tx << 2;
    EXPECT_EQ(tx.try_send(3), Status::would_block);
    EXPECT_EQ(tx.send_for(3, 1ms), Status::timeout);
    EXPECT_EQ(rx.recv(), 1);
    EXPECT_EQ(tx.try_send(3), Status::ok);
    EXPECT_EQ(rx.recv(), 2);
    EXPECT_EQ(rx.recv(), 3);
    int x;
    EXPECT_EQ(rx.try_recv(x), Status::would_block);
  });
}

TEST(Chan, BoundedWriterPoisonKeepsBufferedItems) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>(Buffer::bounded(4));
    tx << std::string("x");
    tx << std::string("y");
    tx.poison();
    EXPECT_EQ(rx.recv(), "x");
    EXPECT_EQ(rx.recv(), "y");
    EXPECT_THROW(rx.recv(), hoare::Poisoned);
  });
}

TEST(Chan, ReaderPoisonDiscardsBuffer) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>(Buffer::unbounded());
    for (int i = 0; i < 100; ++i) tx << std::to_string(i);
    rx.poison();
    EXPECT_THROW(rx.recv(), hoare::Poisoned);
    EXPECT_THROW(tx.send(std::string("z")), hoare::Poisoned);
  });
}

TEST(Chan, Overwriting) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>(Buffer::overwriting(2));
    for (int i = 0; i < 5; ++i) EXPECT_EQ(tx.try_send(int(i)), Status::ok);
    EXPECT_EQ(rx.recv(), 3);
    EXPECT_EQ(rx.recv(), 4);
    EXPECT_FALSE(rx.try_recv().has_value());
  });
  EXPECT_THROW(hoare::channel<int>(Buffer::overwriting(0)), hoare::Error);
}

TEST(Chan, Unbounded) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>(Buffer::unbounded());
    for (int i = 0; i < 10000; ++i) tx << i;
    long s = 0;
    for (int i = 0; i < 10000; ++i) s += rx.recv();
    EXPECT_EQ(s, 9999L * 10000 / 2);
  });
}

template <Sharing S>
void many_to_many(Buffer b) {
  in_runtime([b] {
    hoare::Chan<int, S> c(b);
    constexpr int writers = 4, per = 250;
    constexpr bool shared_tx = S == Sharing::any2one || S == Sharing::any2any;
    constexpr bool shared_rx = S == Sharing::one2any || S == Sharing::any2any;
    constexpr int readers = shared_rx ? 3 : 1;
    std::vector<hoare::JoinHandle<void>> ws;
    if constexpr (shared_tx) {
      for (int w = 0; w < writers; ++w)
        ws.push_back(hoare::spawn([tx = c.tx(), w]() mutable {
          for (int i = 0; i < per; ++i) tx << (w * per + i);
        }));
    } else {
      ws.push_back(hoare::spawn([tx = c.move_tx()]() mutable {
        for (int i = 0; i < writers * per; ++i) tx << i;
      }));
    }
    std::vector<hoare::JoinHandle<std::vector<int>>> rs;
    for (int r = 0; r < readers; ++r) {
      if constexpr (shared_rx) {
        rs.push_back(hoare::spawn([rx = c.rx()]() mutable {
          std::vector<int> got;
          for (int v : rx) got.push_back(v);
          return got;
        }));
      } else {
        rs.push_back(hoare::spawn([rx = c.move_rx()]() mutable {
          std::vector<int> got;
          for (int v : rx) got.push_back(v);
          return got;
        }));
      }
    }
    for (auto& w : ws) w.join();
    // All writers are done: poison (readers drain buffered items first).
    if constexpr (shared_tx) {
      c.ref_tx().poison();
    }
    std::vector<int> all;
    for (auto& r : rs) {
      auto g = r.join();
      all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), std::size_t(writers * per));
    for (int i = 0; i < writers * per; ++i) EXPECT_EQ(all[std::size_t(i)], i);
  });
}

TEST(Chan, One2One) {
  many_to_many<Sharing::one2one>(Buffer::rendezvous());
}
TEST(Chan, Any2One) {
  many_to_many<Sharing::any2one>(Buffer::rendezvous());
}
TEST(Chan, One2Any) {
  many_to_many<Sharing::one2any>(Buffer::rendezvous());
}
TEST(Chan, Any2Any) {
  many_to_many<Sharing::any2any>(Buffer::rendezvous());
}
TEST(Chan, Any2AnyBounded) {
  many_to_many<Sharing::any2any>(Buffer::bounded(8));
}
TEST(Chan, Any2OneUnbounded) {
  many_to_many<Sharing::any2one>(Buffer::unbounded());
}

TEST(Chan, SharedEndsAreCopyableOthersAreNot) {
  static_assert(std::is_copy_constructible_v<hoare::SharedTx<int>>);
  static_assert(std::is_copy_constructible_v<hoare::SharedRx<int>>);
  static_assert(std::is_move_constructible_v<hoare::Tx<int>>);
  static_assert(std::is_move_constructible_v<hoare::Rx<int>>);
  static_assert(std::is_same_v<hoare::Any2OneChan<int>::tx_type, hoare::SharedTx<int>>);
  static_assert(std::is_same_v<hoare::Any2OneChan<int>::rx_type, hoare::Rx<int>>);
  static_assert(std::is_same_v<hoare::One2AnyChan<int>::rx_type, hoare::SharedRx<int>>);
}

TEST(Chan, Pipe) {
  in_runtime([] {
    auto [tx1, rx1] = hoare::channel<int>();
    auto [tx2, rx2] = hoare::channel<int>();
    auto src = hoare::spawn([tx = std::move(tx1)]() mutable {
      for (int i = 1; i <= 3; ++i) tx << i;
      tx.poison();
    });
    auto pipe = hoare::spawn([rx = std::move(rx1), tx = std::move(tx2)]() mutable {
      int n = 0;
      while (rx >> tx) ++n;
      tx.poison();
      return n;
    });
    std::vector<int> got;
    for (int v : rx2) got.push_back(v);
    EXPECT_EQ(got, (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(pipe.join(), 3);
    src.join();
  });
}

TEST(Chan, NonPoisonableEnds) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>(Buffer::bounded(1));
    auto np = std::move(tx).non_poisonable();
    EXPECT_FALSE(np.poisonable());
    np.poison();  // no effect
    np << 5;
    EXPECT_EQ(rx.recv(), 5);
    auto nrx = std::move(rx).non_poisonable();
    nrx.poison();  // no effect
    np << 6;
    EXPECT_EQ(nrx.recv(), 6);

    hoare::Any2AnyChan<int> c(Buffer::bounded(1));
    auto shared_np = c.ref_tx().non_poisonable();  // a copy that cannot poison
    shared_np.poison();
    shared_np << 1;
    EXPECT_EQ(c.ref_rx().recv(), 1);
    c.ref_rx().poison();  // the poisonable end still can
    EXPECT_THROW(shared_np.send(2), hoare::Poisoned);
  });
}

TEST(Chan, ChannelEndsOverChannels) {
  in_runtime([] {
    // Request/reply: the client sends its reply channel's writing end.
    auto [req_tx, req_rx] = hoare::channel<std::pair<int, hoare::Tx<int>>>();
    auto server = hoare::spawn([rx = std::move(req_rx)]() mutable {
      for (auto&& req : rx) req.second << req.first * 2;
    });
    for (int i = 0; i < 5; ++i) {
      auto [rtx, rrx] = hoare::channel<int>();
      req_tx << std::make_pair(i, std::move(rtx));
      EXPECT_EQ(rrx.recv(), i * 2);
    }
    req_tx.poison();
    server.join();
  });
}

TEST(Chan, UsableFromPlainThreads) {
  // Channels work from a thread that is not a process (it blocks the thread).
  auto [tx, rx] = hoare::channel<int>();
  std::thread t([tx = std::move(tx)]() mutable {
    for (int i = 0; i < 3; ++i) tx << i;
    tx.poison();
  });
  int s = 0;
  for (int v : rx) s += v;
  t.join();
  EXPECT_EQ(s, 3);
}

TEST(Chan, MovedFromEndThrows) {
  auto [tx, rx] = hoare::channel<int>();
  auto tx2 = std::move(tx);
  EXPECT_FALSE(tx.valid());
  EXPECT_THROW(tx.send(1), hoare::Error);
  EXPECT_TRUE(tx2.valid());
}

namespace {
template <std::size_t N>
struct Bytes {
  unsigned char b[N];
};
template <std::size_t N>
void pod_roundtrip() {
  static_assert(std::is_trivially_copyable_v<Bytes<N>>);
  in_runtime([] {
    for (auto buf : {Buffer::rendezvous(), Buffer::bounded(2)}) {
      auto [tx, rx] = hoare::channel<Bytes<N>>(buf);
      auto w = hoare::spawn([tx = std::move(tx)]() mutable {
        for (int k = 0; k < 20; ++k) {
          Bytes<N> v;
          for (std::size_t i = 0; i < N; ++i) v.b[i] = static_cast<unsigned char>(i + k);
          tx << v;
        }
      });
      for (int k = 0; k < 20; ++k) {
        auto v = rx.recv();
        for (std::size_t i = 0; i < N; ++i) ASSERT_EQ(v.b[i], static_cast<unsigned char>(i + k));
      }
      w.join();
    }
  });
}
}  // namespace

// Trivially copyable values up to 64 bytes travel by value; larger ones by address.
TEST(Chan, TriviallyCopyableSizes) {
  static_assert(hoare::detail::elem_of<int>::value == hoare::ffi::Elem::Pod1);
  static_assert(hoare::detail::elem_of<Bytes<16>>::value == hoare::ffi::Elem::Pod2);
  static_assert(hoare::detail::elem_of<Bytes<33>>::value == hoare::ffi::Elem::Pod8);
  static_assert(hoare::detail::elem_of<Bytes<65>>::value == hoare::ffi::Elem::Raw);
  static_assert(hoare::detail::elem_of<std::string>::value == hoare::ffi::Elem::Raw);
  static_assert(hoare::detail::elem_of<std::int64_t>::value == hoare::ffi::Elem::I64);
  pod_roundtrip<1>();
  pod_roundtrip<7>();
  pod_roundtrip<16>();
  pod_roundtrip<31>();
  pod_roundtrip<64>();
  pod_roundtrip<65>();
  pod_roundtrip<1000>();
}

TEST(Chan, PodTryAndTimed) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    int v = 5;
    EXPECT_EQ(tx.try_send(std::move(v)), Status::would_block);
    EXPECT_EQ(v, 5);
    EXPECT_EQ(tx.send_for(std::move(v), 1ms), Status::timeout);
    EXPECT_EQ(v, 5);
    EXPECT_EQ(rx.try_recv(v), Status::would_block);
    EXPECT_EQ(rx.recv_for(v, 1ms), Status::timeout);
  });
}

// A timeout longer than 64 bits of nanoseconds waits (saturated), instead of
// overflowing into a negative or tiny one.
TEST(Chan, HugeTimeoutsSaturate) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      hoare::this_proc::sleep_for(20ms);
      EXPECT_EQ(tx.send_for(5, std::chrono::hours::max()), hoare::Status::ok);
    });
    int v = 0;
    EXPECT_EQ(rx.recv_for(v, std::chrono::hours::max()), hoare::Status::ok);
    EXPECT_EQ(v, 5);
    w.join();
    auto [tx2, rx2] = hoare::channel<int>();
    auto w2 = hoare::spawn([tx2 = std::move(tx2)]() mutable {
      hoare::this_proc::sleep_for(20ms);
      tx2.send(6);
    });
    EXPECT_EQ(hoare::Alt().recv(rx2).timeout(std::chrono::hours::max()).select(), 0u);
    w2.join();
    static std::atomic<bool> woke{false};
    hoare::spawn([] {
      hoare::this_proc::sleep_for(std::chrono::hours::max());  // cancelled at shutdown
      woke = true;
    }).detach();
    hoare::this_proc::sleep_for(20ms);
    EXPECT_FALSE(woke.load());
    EXPECT_EQ(hoare::detail::to_ns(std::chrono::duration<double>(1e300)), UINT64_MAX);
    EXPECT_EQ(hoare::detail::to_ns(std::chrono::duration<double>(-1.0)), 0u);
    EXPECT_EQ(hoare::detail::to_ns(std::chrono::milliseconds(3)), 3000000u);
  });
}
