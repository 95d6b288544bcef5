// Alt::recv_with (issue 15): the extended-rendezvous receive guard, JCSP's alt then
// startRead: the handler runs with the writer held.
#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;

namespace {
struct Log {
  std::mutex m;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard<std::mutex> g(m);
    events.push_back(std::move(e));
  }
};
}  // namespace

// The writer's send returns only after the handler: the log is handler, then sent,
// for a native and a by-address type. Fails if the writer is released when the
// value is taken (checked with RecvWith mapped to a plain receive plus the handler
// run after the alt: "sent" came first, while the handler slept).
TEST(AltRecvWith, WriterHeldUntilHandlerReturns) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::int64_t>();
    auto [stx, srx] = hoare::channel<std::string>();
    Log log;
    auto w = hoare::spawn([&log, tx = std::move(tx), stx = std::move(stx)]() mutable {
      tx.send(7);
      log.add("sent 7");
      stx.send(std::string("seven"));
      log.add("sent seven");
    });
    for (int i = 0; i < 2; ++i) {
      hoare::Alt()
          .recv_with(rx,
                     [&](std::int64_t v) {
                       hoare::this_proc::sleep_for(20ms);  // the writer would run now
                       log.add("got " + std::to_string(v));
                     })
          .recv_with(srx,
                     [&](std::string s) {
                       hoare::this_proc::sleep_for(20ms);
                       log.add("got " + s);
                     })
          .select();
    }
    w.join();
    EXPECT_EQ(log.events, (std::vector<std::string>{"got 7", "sent 7", "got seven", "sent seven"}));
  });
}

// A handler's exception comes out of select() and still releases the writer; a
// poisoned channel throws Poisoned without running the handler (select_status:
// status poisoned); a disabled guard is not chosen.
TEST(AltRecvWith, ExceptionPoisonAndPrecondition) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<rust::String>();
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      tx.send(rust::String("x"));
      return true;  // released although the handler threw
    });
    EXPECT_THROW(hoare::Alt()
                     .recv_with(rx, [](rust::String) { throw std::runtime_error("handler"); })
                     .select(),
                 std::runtime_error);
    EXPECT_TRUE(w.join());

    auto [ptx, prx] = hoare::channel<std::int64_t>();
    ptx.poison();
    bool ran = false;
    EXPECT_THROW(hoare::Alt().recv_with(prx, [&](std::int64_t) { ran = true; }).select(),
                 hoare::Poisoned);
    auto r = hoare::Alt().recv_with(prx, [&](std::int64_t) { ran = true; }).select_status();
    EXPECT_TRUE(r.poisoned());
    EXPECT_FALSE(ran);
    auto i = hoare::Alt().recv_with_if(false, prx, [&] { ran = true; }).skip().select();
    EXPECT_EQ(i, 1u);
    EXPECT_FALSE(ran);
  });
}
