// C++ and Rust processes on one runtime, connected by channels of integers,
// strings and byte buffers (cpp/README.md, "Rust and C++ in one network").
#include <gtest/gtest.h>

#include <string>

#include "common.hpp"

using namespace testing_hoare;

TEST(Mixed, IntegersThroughARustProcess) {
  in_runtime([] {
    hoare::Chan<std::int64_t> in, out;
    hoare::rust_procs::doubler(in.move_rx(), out.move_tx());
    auto w = hoare::spawn([tx = in.move_tx()]() mutable {
      for (std::int64_t i = 0; i < 1000; ++i) tx << i;
      tx.poison();
    });
    std::int64_t expect = 0, n = 0;
    for (auto v : out.ref_rx()) {
      EXPECT_EQ(v, 2 * expect++);
      ++n;
    }
    EXPECT_EQ(n, 1000);
    w.join();
  });
}

TEST(Mixed, StringsThroughARustProcess) {
  in_runtime([] {
    hoare::Chan<rust::String> in(hoare::Buffer::bounded(2)), out;
    hoare::rust_procs::upper(in.move_rx(), out.move_tx());
    auto tx = in.move_tx();
    auto rx = out.move_rx();
    tx << rust::String("hello, rust");
    EXPECT_EQ(std::string(rx.recv()), "HELLO, RUST");
    rust::String s("moved");
    tx.send(std::move(s));
    EXPECT_EQ(std::string(rx.recv()), "MOVED");
    tx.poison();
    EXPECT_THROW(rx.recv(), hoare::Poisoned);
  });
}

TEST(Mixed, BytesThroughARustProcess) {
  in_runtime([] {
    hoare::Chan<rust::Vec<std::uint8_t>> in, out(hoare::Buffer::unbounded());
    hoare::rust_procs::reverse_bytes(in.move_rx(), out.move_tx());
    auto tx = in.move_tx();
    rust::Vec<std::uint8_t> v;
    for (int i = 0; i < 256; ++i) v.push_back(static_cast<std::uint8_t>(i));
    tx.send(std::move(v));
    auto back = out.ref_rx().recv();
    ASSERT_EQ(back.size(), 256u);
    EXPECT_EQ(back[0], 255);
    EXPECT_EQ(back[255], 0);
  });
}

TEST(Mixed, RustMadeChannelReadByCpp) {
  in_runtime([] {
    std::int64_t s = 0;
    for (auto v : hoare::rust_procs::counter(100)) s += v;
    EXPECT_EQ(s, 4950);
  });
}

TEST(Mixed, CppChannelReadByRustCode) {
  in_runtime([] {
    hoare::Chan<std::int64_t> c(hoare::Buffer::bounded(8));
    auto w = hoare::spawn([tx = c.move_tx()]() mutable {
      for (std::int64_t i = 1; i <= 10; ++i) tx << i;
      tx.poison();
    });
    EXPECT_EQ(hoare::rust_procs::sum(c.move_rx()), 55);
    w.join();
  });
}

TEST(Mixed, NativeTryAndTimedGiveTheValueBack) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<rust::String>();
    rust::String s("kept");
    EXPECT_EQ(tx.try_send(std::move(s)), hoare::Status::would_block);
    EXPECT_EQ(std::string(s), "kept");
    EXPECT_EQ(tx.send_for(std::move(s), 1ms), hoare::Status::timeout);
    EXPECT_EQ(std::string(s), "kept");
    rust::String out;
    EXPECT_EQ(rx.try_recv(out), hoare::Status::would_block);
  });
}
