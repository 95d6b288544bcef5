// Values cross channels by move, never by copy: a rendezvous moves the value
// straight out of the writer's object (extended rendezvous) and a buffered channel
// moves it into and out of one heap box.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include "common.hpp"

using namespace testing_hoare;
using hoare::Buffer;
using hoare::Status;

namespace {

struct MoveOnly {
  std::unique_ptr<int> p;
  MoveOnly() = default;
  explicit MoveOnly(int v) : p(std::make_unique<int>(v)) {}
  MoveOnly(MoveOnly&&) noexcept = default;
  MoveOnly& operator=(MoveOnly&&) noexcept = default;
  MoveOnly(const MoveOnly&) = delete;
  MoveOnly& operator=(const MoveOnly&) = delete;
};

std::atomic<int> copies{0}, moves{0}, live{0};

struct Counted {
  int v = 0;
  Counted() { ++live; }
  explicit Counted(int x) : v(x) { ++live; }
  Counted(const Counted& o) : v(o.v) {
    ++copies;
    ++live;
  }
  Counted(Counted&& o) noexcept : v(o.v) {
    ++moves;
    ++live;
  }
  Counted& operator=(const Counted& o) {
    v = o.v;
    ++copies;
    return *this;
  }
  Counted& operator=(Counted&& o) noexcept {
    v = o.v;
    ++moves;
    return *this;
  }
  ~Counted() { --live; }
};

void reset() {
  copies = 0;
  moves = 0;
}

// A value whose move constructor throws on demand.
struct Fragile {
  static inline std::atomic<bool> throw_on_move{false};
  int v = 0;
  Fragile() = default;
  explicit Fragile(int x) : v(x) {}
  Fragile(Fragile&& o) : v(o.v) {
    if (throw_on_move) throw std::runtime_error("move failed");
  }
  Fragile& operator=(Fragile&& o) {
    v = o.v;
    return *this;
  }
};

void check_buffering(Buffer b) {
  in_runtime([b] {
    auto [tx, rx] = hoare::channel<MoveOnly>(b);
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      for (int i = 0; i < 50; ++i) tx.send(MoveOnly(i));
      tx.poison();
    });
    int expect = 0;
    for (auto v : rx) {
      ASSERT_TRUE(v.p);
      EXPECT_EQ(*v.p, expect++);
    }
    EXPECT_EQ(expect, 50);
    w.join();
  });
}

}  // namespace

TEST(Moves, MoveOnlyRendezvous) {
  check_buffering(Buffer::rendezvous());
}
TEST(Moves, MoveOnlyBounded) {
  check_buffering(Buffer::bounded(4));
}
TEST(Moves, MoveOnlyUnbounded) {
  check_buffering(Buffer::unbounded());
}

TEST(Moves, MoveOnlyTryAndTimed) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<MoveOnly>(Buffer::bounded(1));
    MoveOnly m(7);
    EXPECT_EQ(tx.try_send(std::move(m)), Status::ok);
    MoveOnly m2(8);
    EXPECT_EQ(tx.try_send(std::move(m2)), Status::would_block);
    ASSERT_TRUE(m2.p);  // given back: the box was moved back into m2
    EXPECT_EQ(*m2.p, 8);
    EXPECT_EQ(tx.send_for(std::move(m2), 1ms), Status::timeout);
    ASSERT_TRUE(m2.p);
    MoveOnly out;
    EXPECT_EQ(rx.try_recv(out), Status::ok);
    EXPECT_EQ(*out.p, 7);
    auto o = rx.recv_for(1ms);
    EXPECT_FALSE(o.has_value());
  });
}

TEST(Moves, RendezvousMakesNoCopies) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<Counted>();
    reset();
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      for (int i = 0; i < 100; ++i) {
        Counted c(i);
        tx.send(std::move(c));
      }
      for (int i = 0; i < 100; ++i) tx << Counted(i);
    });
    for (int i = 0; i < 100; ++i) EXPECT_EQ(rx.recv().v, i);
    Counted c;
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(rx >> c);
      EXPECT_EQ(c.v, i);
    }
    w.join();
    EXPECT_EQ(copies.load(), 0);
    // recv(): one move out of the writer's object, one out of the receive slot.
    // operator>>: one move-construct and one move-assign.
    EXPECT_LE(moves.load(), 4 * 100);
  });
}

TEST(Moves, BufferedMakesNoCopies) {
  for (auto b : {Buffer::bounded(3), Buffer::unbounded(), Buffer::overwriting(1000)}) {
    in_runtime([b] {
      auto [tx, rx] = hoare::channel<Counted>(b);
      reset();
      auto w = hoare::spawn([tx = std::move(tx)]() mutable {
        for (int i = 0; i < 100; ++i) tx << Counted(i);
      });
      for (int i = 0; i < 100; ++i) EXPECT_EQ(rx.recv().v, i);
      w.join();
      EXPECT_EQ(copies.load(), 0);
    });
  }
}

TEST(Moves, RangeForMovesOut) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<Counted>();
    reset();
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      for (int i = 0; i < 10; ++i) tx << Counted(i);
      tx.poison();
    });
    int n = 0;
    for (auto c : rx) n += c.v >= 0;
    for (auto&& c : rx) n += c.v;  // (poisoned: no iterations)
    EXPECT_EQ(n, 10);
    w.join();
    EXPECT_EQ(copies.load(), 0);
  });
}

TEST(Moves, DroppedItemsAreDestroyed) {
  int before = live.load();
  in_runtime([] {
    auto [tx, rx] = hoare::channel<Counted>(Buffer::overwriting(2));
    for (int i = 0; i < 10; ++i) tx << Counted(i);  // 8 dropped by the channel
    auto [tx2, rx2] = hoare::channel<Counted>(Buffer::unbounded());
    for (int i = 0; i < 10; ++i) tx2 << Counted(i);
    rx2.poison();  // discards the buffer
  });
  // Every boxed value was destroyed (by the channel or when its ends went away).
  EXPECT_EQ(live.load(), before);
}

// A move constructor that throws while the reader takes the value out of the
// writer's object (rendezvous): both sides see the exception, nothing was
// communicated, and the value stays with the writer, who can send it again (C4).
TEST(Moves, ThrowingMoveConstructorReachesBothSides) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<Fragile>();
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      Fragile f(1);
      int failures = 0;
      for (;;) {
        try {
          tx.send(std::move(f));
          break;
        } catch (const std::runtime_error&) {
          ++failures;  // f still holds the value: send it again
        }
      }
      return failures;
    });
    Fragile::throw_on_move = true;
    EXPECT_THROW(rx.recv(), std::runtime_error);  // thrown on the C++ side, not through Rust
    Fragile::throw_on_move = false;
    Fragile out;
    EXPECT_EQ(rx.recv_for(out, 5s), Status::ok);
    EXPECT_EQ(out.v, 1);
    EXPECT_EQ(w.join(), 1);
  });
}

// The same when the reader is an alt (its receive is no extended rendezvous: the
// writer waits for the alt's move) and when the writer is one.
TEST(Moves, ThrowingMoveConstructorInAnAltReachesBothSides) {
  in_runtime([] {
    hoare::Chan<Fragile> c;
    auto tx = c.move_tx();
    auto rx = c.move_rx();
    auto w = hoare::spawn([&tx] {
      Fragile f(7);
      try {
        tx.send(std::move(f));
      } catch (const std::runtime_error&) {
        return f.v;  // the value is still here
      }
      return -1;
    });
    Fragile::throw_on_move = true;
    EXPECT_THROW(hoare::Alt().recv(rx, [](Fragile) {}).select(), std::runtime_error);
    Fragile::throw_on_move = false;
    EXPECT_EQ(w.join(), 7);

    auto r = hoare::spawn([&rx] {
      try {
        rx.recv();
      } catch (const std::runtime_error&) {
        return true;
      }
      return false;
    });
    hoare::Alt alt;
    alt.send(tx, Fragile(8));  // moves into the guard before the flag is set
    Fragile::throw_on_move = true;
    EXPECT_THROW(alt.select(), std::runtime_error);
    Fragile::throw_on_move = false;
    EXPECT_TRUE(r.join());
  });
}

TEST(Moves, ThrowingMoveIntoTheBoxReachesTheSender) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<Fragile>(Buffer::unbounded());
    Fragile::throw_on_move = true;
    Fragile f(3);
    EXPECT_THROW(tx.send(std::move(f)), std::runtime_error);
    Fragile::throw_on_move = false;
    EXPECT_EQ(rx.try_recv(f), Status::would_block);  // nothing was sent
    tx.send(Fragile(4));
    EXPECT_EQ(rx.recv().v, 4);
  });
}
