// hoare::Par (issue 15): several communications at once, continuing when all have
// ended; poison reported per branch, a failed send's value handed back.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

// Receives from three channels of three element kinds (native, by address through
// a buffer, Rust-layout string) at once; the writer sends in the reverse order, so
// a Par that did its communications one by one, in order, would wait for ever.
// (Shown to hang once with a by-address rendezvous receive delivered only after
// the others, which is why run() refuses that shape: the last check.)
TEST(Par, ReceivesFromSeveralAtOnce) {
  in_runtime([] {
    auto [ta, ra] = hoare::channel<std::int64_t>();
    auto [tb, rb] = hoare::channel<std::string>(hoare::Buffer::bounded(1));
    auto [tc, rc] = hoare::channel<rust::String>();
    auto w = hoare::spawn([ta = std::move(ta), tb = std::move(tb), tc = std::move(tc)]() mutable {
      tc.send(rust::String("c"));
      tb.send(std::string("b"));
      ta.send(1);
    });
    std::int64_t a = 0;
    std::string b;
    rust::String c;
    hoare::Par par;
    par.recv(ra, a).recv(rb, b).recv(rc, c);
    EXPECT_TRUE(par.run());
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, "b");
    EXPECT_EQ(std::string(c), "c");
    for (std::size_t i = 0; i < par.size(); ++i) EXPECT_EQ(par.status(i), hoare::Status::ok);
    w.join();

    // A by-address type on a rendezvous channel is refused (see par.hpp).
    auto [tr, rr] = hoare::channel<std::string>();
    std::string out;
    hoare::Par p2;
    p2.recv(rr, out);
    EXPECT_THROW(p2.run(), hoare::Error);
  });
}

TEST(Par, SendsToSeveralAtOnce) {
  in_runtime([] {
    auto [ta, ra] = hoare::channel<std::int64_t>();
    auto [tb, rb] = hoare::channel<std::string>();
    auto [tc, rc] = hoare::channel<std::string>(hoare::Buffer::bounded(1));
    auto r = hoare::spawn([ra = std::move(ra), rb = std::move(rb), rc = std::move(rc)]() mutable {
      std::string got = rc.recv() + rb.recv();
      return got + std::to_string(ra.recv());
    });
    std::int64_t a = 3;
    std::string b = "b", c = "c";
    hoare::Par par;
    par.send(ta, a).send(tb, b).send(tc, c);
    EXPECT_TRUE(par.run());
    EXPECT_EQ(r.join(), "cb3");
  });
}

// One poisoned channel fails its branch only: the others complete, and the failed
// send's value is back in its variable (checked to fail with a bridge that did not
// give values back: `b` was empty).
TEST(Par, PoisonPerBranchHandsValueBack) {
  in_runtime([] {
    auto [ta, ra] = hoare::channel<std::int64_t>();
    auto [tb, rb] = hoare::channel<std::string>();
    auto [tc, rc] = hoare::channel<rust::String>();
    rb.poison();
    rc.poison();
    auto r = hoare::spawn([ra = std::move(ra)]() mutable { return ra.recv(); });
    std::int64_t a = 5;
    std::string b = "kept";
    rust::String c("also kept");
    hoare::Par par;
    par.send(ta, a).send(tb, b).send(tc, c);
    EXPECT_FALSE(par.run());
    EXPECT_EQ(par.status(0), hoare::Status::ok);
    EXPECT_EQ(par.status(1), hoare::Status::poisoned);
    EXPECT_EQ(par.status(2), hoare::Status::poisoned);
    EXPECT_EQ(b, "kept");
    EXPECT_EQ(std::string(c), "also kept");
    EXPECT_EQ(r.join(), 5);

    // A poisoned receive leaves its variable alone.
    auto [tx, rx] = hoare::channel<std::int64_t>();
    tx.poison();
    std::int64_t v = 42;
    hoare::Par p2;
    p2.recv(rx, v);
    EXPECT_FALSE(p2.run());
    EXPECT_EQ(p2.status(0), hoare::Status::poisoned);
    EXPECT_EQ(v, 42);
  });
}

// A deadline withdraws what has not completed; a Par runs once.
TEST(Par, TimeoutAndMisuse) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>();  // nobody reads
    auto [bt, br] = hoare::channel<std::int64_t>(hoare::Buffer::bounded(1));
    std::string s = "unsent";
    std::int64_t x = 9;
    hoare::Par par;
    par.send(tx, s).send(bt, x);
    EXPECT_FALSE(par.run_for(std::chrono::milliseconds(20)));
    EXPECT_EQ(par.status(0), hoare::Status::timeout);
    EXPECT_EQ(par.status(1), hoare::Status::ok);
    EXPECT_EQ(s, "unsent");
    EXPECT_EQ(br.recv(), 9);
    EXPECT_THROW(par.run(), hoare::Error);
    hoare::Tx<std::int64_t> empty;
    hoare::Par p3;
    EXPECT_THROW(p3.send(empty, x), hoare::Error);
  });
}
