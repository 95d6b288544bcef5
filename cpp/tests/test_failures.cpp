// The failure path of every bridge entry point: nothing unwinds across the
// language boundary; every failure arrives as a C++ exception of a hoare type.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

TEST(Failures, RustPanicBecomesError) {
  try {
    hoare::ffi::test_panic("deliberate");
    FAIL() << "no exception";
  } catch (const rust::Error& e) {
    EXPECT_NE(std::string(e.what()).find("deliberate"), std::string::npos);
  }
  // Through the API wrapper it is a hoare::Error, also inside a process.
  EXPECT_THROW(hoare::detail::bridge_call([] { hoare::ffi::test_panic("x"); }), hoare::Error);
  EXPECT_THROW(in_runtime([] { hoare::detail::bridge_call([] { hoare::ffi::test_panic("y"); }); }),
               hoare::Error);
}

TEST(Failures, DeadlockIsReported) {
  try {
    hoare::run(hoare::RunOptions{2, 0}, [] {
      auto [tx, rx] = hoare::channel<int>();
      rx.recv();  // nobody will ever send
    });
    FAIL() << "no exception";
  } catch (const hoare::Deadlock& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("deadlock"), std::string::npos) << m;
    EXPECT_NE(m.find("recv on channel"), std::string::npos) << m;
    EXPECT_NE(m.find("process 'main'"), std::string::npos) << m;
  }
}

TEST(Failures, SpawnOutsideARuntime) {
  EXPECT_THROW(hoare::spawn([] { return 1; }), hoare::Error);
  EXPECT_THROW(hoare::par([] {}, [] {}), hoare::Error);
}

TEST(Failures, JoinOfAPanickedRustProcess) {
  in_runtime([] {
    hoare::JoinHandle<void> h(
        hoare::detail::bridge_call([] { return hoare::ffi::test_spawn_panicking(); }));
    try {
      h.join();
      ADD_FAILURE() << "no exception";
    } catch (const hoare::ProcessError& e) {
      EXPECT_NE(std::string(e.what()).find("a Rust process panicked"), std::string::npos);
    }
  });
}

TEST(Failures, WrongElementTypeAcrossTheBridge) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<double>();
    auto [tx2, rx2] = hoare::channel<std::int64_t>();
    // A double channel handed to a Rust process that wants i64.
    EXPECT_THROW(hoare::detail::bridge_call([&] {
                   hoare::ffi::rust_doubler(std::move(rx).into_rust(), std::move(tx2).into_rust());
                 }),
                 hoare::Error);
    // An end of the wrong element type wrapped in C++.
    auto r = hoare::rust_procs::counter(1);
    auto raw = std::move(r).into_rust();
    EXPECT_THROW(hoare::Rx<double>::from_rust(std::move(raw)), hoare::Error);
  });
}

TEST(Failures, CloneOfAOne2OneEndIsRefused) {
  auto pair = hoare::ffi::chan_new(hoare::ffi::Elem::I64, nullptr, 8, hoare::ffi::Sharing::One2One,
                                   hoare::ffi::Buffering::Rendezvous, 0);
  EXPECT_THROW(hoare::ffi::tx_clone(*pair.tx), rust::Error);
  EXPECT_THROW(hoare::ffi::rx_clone(*pair.rx), rust::Error);
  // A raw (C++ value) channel without value operations is refused too.
  EXPECT_THROW(hoare::ffi::chan_new(hoare::ffi::Elem::Raw, nullptr, 8, hoare::ffi::Sharing::One2One,
                                    hoare::ffi::Buffering::Rendezvous, 0),
               rust::Error);
  // A by-value element larger than its class is refused.
  EXPECT_THROW(
      hoare::ffi::chan_new(hoare::ffi::Elem::Pod1, nullptr, 9, hoare::ffi::Sharing::One2One,
                           hoare::ffi::Buffering::Rendezvous, 0),
      rust::Error);
}

TEST(Failures, ExceptionTypesArePreserved) {
  struct NotAStdException {
    int v;
  };
  try {
    hoare::run([] { throw NotAStdException{3}; });
    FAIL();
  } catch (const NotAStdException& e) {
    EXPECT_EQ(e.v, 3);
  }
}

TEST(Failures, BlockedProcessesAreCancelledAtShutdown) {
  // The root returns while C++ processes are still blocked: the runtime unwinds
  // them. The C++ side sees hoare::Cancelled, its destructors run, nothing aborts.
  static std::atomic<int> destroyed{0};
  static std::atomic<int> cancelled{0};
  destroyed = 0;
  cancelled = 0;
  struct Guard {
    ~Guard() { ++destroyed; }
  };
  hoare::run(hoare::RunOptions{2, 0}, [] {
    // Each process says it has started: one still queued at shutdown is dropped
    // unstarted (its body, and so its Guard, never runs), which a sleep alone could
    // not rule out on a loaded machine.
    auto [started_tx, started] =
        hoare::channel<int, hoare::Sharing::any2one>(hoare::Buffer::bounded(3));
    for (int i = 0; i < 3; ++i) {
      auto h = hoare::spawn([started = started_tx]() mutable {
        Guard g;
        started.send(1);
        try {
          hoare::this_proc::sleep_for(std::chrono::hours(1));
        } catch (const hoare::Cancelled&) {
          ++cancelled;
          throw;
        }
      });
      h.detach();
    }
    for (int i = 0; i < 3; ++i) started.recv();
    hoare::this_proc::sleep_for(10ms);  // most likely asleep by now; cancelled either way
  });
  EXPECT_EQ(destroyed.load(), 3);
  EXPECT_EQ(cancelled.load(), 3);
}

// A process cancelled while blocked in a channel operation: hoare-core unregisters
// its wait from the channel as the cancellation unwinds, so the later poison of that
// channel (when main destroys its end) touches nothing freed.
TEST(Failures, CancelledWhileBlockedOnAChannel) {
  static std::atomic<int> destroyed{0};
  destroyed = 0;
  struct Guard {
    ~Guard() { ++destroyed; }
  };
  auto [tx, rx] = hoare::channel<int>();  // tx outlives the runtime: no poison
  hoare::run(hoare::RunOptions{2, 0}, [&rx] {
    // As above: wait until the process has started (not merely a sleep), then give
    // it time to block in recv (cancelled at shutdown either way).
    auto [started_tx, started] = hoare::channel<int>(hoare::Buffer::bounded(1));
    auto keep = hoare::spawn([rx = std::move(rx), started = std::move(started_tx)]() mutable {
      Guard g;
      started.send(1);
      rx.recv();  // never satisfied
    });
    keep.detach();
    started.recv();
    hoare::this_proc::sleep_for(10ms);
  });
  tx.poison();
  EXPECT_EQ(destroyed.load(), 1);
}

// Misuse from C++ is refused by the bridge with a plain hoare::Error: no Rust panic
// happens, so none of its output (the panic hook's "panicked at" line, a backtrace
// note) reaches stderr, and the message does not speak of a Rust panic.
TEST(Failures, MisuseIsAnErrorWithoutRustPanicOutput) {
  std::vector<std::string> msgs;
  auto refused = [&msgs](auto&& f) {
    try {
      f();
      msgs.push_back("no exception");
    } catch (const hoare::Error& e) {
      msgs.push_back(e.what());
    }
  };
  StderrCapture cap;
  // Outside a runtime.
  refused([] { hoare::spawn([] {}); });
  refused([] { hoare::spawn_blocking([] {}); });
  refused([] { hoare::par([] {}, [] {}); });
  refused([] {
    auto [tx, rx] = hoare::channel<std::int64_t>();
    auto [tx2, rx2] = hoare::channel<std::int64_t>();
    hoare::rust_procs::doubler(std::move(rx), std::move(tx2));
  });
  refused([] { hoare::rust_procs::counter(3); });
  refused([] { hoare::rust_procs::commstime(10); });
  in_runtime([&refused] {
    // An alt that could only wait for ever.
    refused([] { hoare::Alt().select(); });
    refused([] {
      auto [tx, rx] = hoare::channel<int>();
      hoare::Alt().recv_if(false, rx).timeout_if(false, 1ms).select();
    });
    // A thread cannot be named with a NUL character.
    refused(
        [] { hoare::spawn(hoare::SpawnOptions{}.thread().name(std::string("a\0b", 3)), [] {}); });
    // Two barrier guards on one end, straight through the bridge (hoare::Alt checks
    // this itself).
    refused([] {
      hoare::AltingBarrier b;
      auto e = b.enroll();
      auto end = reinterpret_cast<std::uintptr_t>(&e.handle());
      std::vector<hoare::ffi::AltGuard> gs{{hoare::ffi::AltKind::Barrier, true, end, 0, 0, 0},
                                           {hoare::ffi::AltKind::Barrier, true, end, 0, 0, 0}};
      hoare::detail::bridge_call([&] {
        hoare::ffi::alt_select(rust::Slice<const hoare::ffi::AltGuard>(gs.data(), gs.size()), false,
                               0);
      });
    });
  });
  auto err = cap.text();
  EXPECT_FALSE(looks_like_rust_panic(err)) << err;
  ASSERT_EQ(msgs.size(), 10u);
  for (const auto& m : msgs) {
    EXPECT_NE(m, "no exception");
    EXPECT_FALSE(looks_like_rust_panic(m)) << m;
    EXPECT_EQ(m.rfind("hoare: ", 0), 0u) << m;
  }
}
