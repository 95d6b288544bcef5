#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"

using namespace testing_hoare;
using hoare::Buffer;

TEST(Alt, ChoosesTheReadyGuard) {
  in_runtime([] {
    auto [tx1, rx1] = hoare::channel<int>(Buffer::bounded(1));
    auto [tx2, rx2] = hoare::channel<std::string>(Buffer::bounded(1));
    tx2 << std::string("two");
    std::string got;
    int n = 0;
    auto i = hoare::Alt()
                 .recv(rx1, [&](int) { n = 1; })
                 .recv(rx2, [&](std::string s) { got = std::move(s); })
                 .select();
    EXPECT_EQ(i, 1u);
    EXPECT_EQ(got, "two");
    EXPECT_EQ(n, 0);
    EXPECT_FALSE(rx1.try_recv().has_value());  // the other guard left no trace
  });
}

TEST(Alt, WaitsForAWriter) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<rust::String>();  // rendezvous, by value
    auto w = hoare::spawn([tx = std::move(tx)]() mutable {
      hoare::this_proc::sleep_for(2ms);
      tx << rust::String("late but here");
    });
    std::string got;
    hoare::Alt().recv(rx, [&](rust::String s) { got = std::string(s); }).timeout(5s).select();
    EXPECT_EQ(got, "late but here");
    w.join();
  });
}

TEST(Alt, BufferedCppValues) {
  // Many writers of a non-trivially-copyable type, one alting reader.
  in_runtime([] {
    constexpr int writers = 4, per = 200;
    std::vector<hoare::Chan<std::string>> chans;
    for (int w = 0; w < writers; ++w) chans.emplace_back(Buffer::bounded(1));
    std::vector<hoare::Rx<std::string>> rxs;
    std::vector<hoare::JoinHandle<void>> ws;
    // A writer that ended would poison its channel (its end goes with its body), and
    // the alt could choose that guard: the writers keep their ends until the reader
    // has everything.
    auto done = hoare::Barrier().enroll(writers + 1);
    for (int w = 0; w < writers; ++w) {
      rxs.push_back(chans[w].move_rx());
      ws.push_back(hoare::spawn([tx = chans[w].move_tx(), w, end = std::move(done[w])]() mutable {
        for (int i = 0; i < per; ++i)
          tx << (std::to_string(w) + ":" + std::to_string(i) + std::string(40, 'x'));
        end.sync();
      }));
    }
    std::vector<int> next(writers, 0);
    for (int k = 0; k < writers * per; ++k) {
      hoare::Alt()
          .recv_for(rxs,
                    [&](std::size_t i, std::string s) {
                      EXPECT_EQ(s, std::to_string(i) + ":" + std::to_string(next[i]++) +
                                       std::string(40, 'x'));
                    })
          .select();
    }
    done[writers].sync();
    for (auto& w : ws) w.join();
    for (int w = 0; w < writers; ++w) EXPECT_EQ(next[w], per);
  });
}

TEST(Alt, SendGuards) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>();
    auto r = hoare::spawn([rx = std::move(rx)]() mutable {
      std::vector<std::string> got;
      for (auto s : rx) got.push_back(s);
      return got;
    });
    for (int i = 0; i < 50; ++i) {
      bool sent = false;
      hoare::Alt().send(tx, std::to_string(i), [&] { sent = true; }).select();
      EXPECT_TRUE(sent);
    }
    tx.poison();
    auto got = r.join();
    ASSERT_EQ(got.size(), 50u);
    EXPECT_EQ(got[49], "49");
  });
}

TEST(Alt, AltToAlt) {
  // Both ends of each channel in alts at once.
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto [tx2, rx2] = hoare::channel<rust::String>();
    auto [tx3, rx3] = hoare::channel<std::string>();  // by address
    constexpr int n = 600;
    auto writer = hoare::spawn([tx = std::move(tx), tx2 = std::move(tx2),
                                tx3 = std::move(tx3)]() mutable {
      for (int i = 0; i < n; ++i) {
        if (i % 3 == 0)
          hoare::Alt().send(tx, int(i)).timeout(10s).select();
        else if (i % 3 == 1)
          hoare::Alt().send(tx2, rust::String(std::to_string(i))).timeout(10s).select();
        else
          hoare::Alt().send(tx3, std::to_string(i) + std::string(100, ' ')).timeout(10s).select();
      }
    });
    long sum = 0;
    for (int i = 0; i < n; ++i) {
      hoare::Alt()
          .recv(rx, [&](int v) { sum += v; })
          .recv(rx2, [&](rust::String s) { sum += std::stol(std::string(s)); })
          .recv(rx3, [&](std::string s) { sum += std::stol(s); })
          .select();
    }
    writer.join();
    EXPECT_EQ(sum, long(n) * (n - 1) / 2);
  });
}

TEST(Alt, PreconditionsSkipAndTimeout) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>(Buffer::bounded(1));
    tx << 1;
    int which = -1;
    // The ready guard is disabled: skip is taken.
    auto i =
        hoare::Alt().recv_if(false, rx, [&](int) { which = 0; }).skip([&] { which = 1; }).select();
    EXPECT_EQ(i, 1u);
    EXPECT_EQ(which, 1);
    // Ready beats skip.
    i = hoare::Alt().skip().recv(rx).select();
    EXPECT_EQ(i, 1u);
    // Nothing ready: the timeout.
    auto t0 = hoare::Clock::now();
    i = hoare::Alt().recv(rx).timeout(3ms, [&] { which = 2; }).select();
    EXPECT_EQ(i, 1u);
    EXPECT_EQ(which, 2);
    EXPECT_GE(hoare::Clock::now() - t0, 3ms);
    // No guard enabled at all: an error, not a hang.
    EXPECT_THROW(hoare::Alt().recv_if(false, rx).select(), hoare::Error);
  });
}

TEST(Alt, TimersInAlts) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    hoare::Repeat tick(2ms);
    auto first = tick.next_tick();
    for (int k = 0; k < 3; ++k) hoare::Alt().recv(rx).timeout(tick).select();
    EXPECT_EQ(tick.next_tick(), first + 6ms);  // advanced once per firing
    auto d = hoare::Date::after(1ms);
    hoare::Alt().recv(rx).timeout(d).select();
    // Stays expired: chosen at once, before a skip (taken only when nothing else is
    // ready; deterministic, where a wall-clock bound fails on a loaded machine).
    EXPECT_EQ(hoare::Alt().recv(rx).timeout(d).skip().select(), 1u);
  });
}

TEST(Alt, PoisonedGuardIsReadyAndThrows) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<int>();
    auto [tx2, rx2] = hoare::channel<int>();
    tx.poison();
    try {
      hoare::Alt().recv(rx2).recv(rx).select();
      ADD_FAILURE() << "no exception";
    } catch (const hoare::Poisoned& p) {
      EXPECT_EQ(p.guard(), 1u);  // which guard was poisoned
    }
    rx2.poison();
    EXPECT_THROW(hoare::Alt().send(tx2, 1).select(), hoare::Poisoned);
  });
}

TEST(Alt, FairPolicyServesEveryone) {
  in_runtime([] {
    constexpr int n = 3;
    std::vector<hoare::Chan<int>> chans;
    for (int i = 0; i < n; ++i) chans.emplace_back(Buffer::unbounded());
    std::vector<hoare::Rx<int>> rxs;
    for (auto& c : chans) {
      for (int k = 0; k < 30; ++k) c.ref_tx() << k;
      rxs.push_back(c.move_rx());
    }
    hoare::Fair fair;
    std::vector<int> count(n, 0);
    for (int k = 0; k < 30; ++k) {
      hoare::Alt().recv_for(rxs, [&](std::size_t i, int) { ++count[i]; }).select(fair);
    }
    for (int i = 0; i < n; ++i) EXPECT_EQ(count[i], 10);
    // Pri always takes the first ready guard.
    std::vector<int> pri(n, 0);
    for (int k = 0; k < 10; ++k)
      hoare::Alt().recv_for(rxs, [&](std::size_t i, int) { ++pri[i]; }).select();
    EXPECT_EQ(pri[0], 10);
  });
}

TEST(Alt, UnsentValuesAreNotLostOrLeaked) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>(Buffer::bounded(1));
    auto [tx2, rx2] = hoare::channel<int>(Buffer::bounded(1));
    tx2 << 7;
    // The recv guard wins; the send guard's boxed value goes back and is destroyed
    // with the Alt.
    auto i = hoare::Alt().recv(rx2).send(tx, std::string(1000, 'z')).select();
    EXPECT_EQ(i, 0u);
    EXPECT_FALSE(rx.try_recv().has_value());
  });
}

TEST(Alt, SelectsOnlyOnce) {
  in_runtime([] {
    hoare::Alt a;
    a.skip();
    a.select();
    EXPECT_THROW(a.select(), hoare::Error);
  });
}

TEST(Alt, RendezvousOfCppValuesPassedByAddress) {
  // The alt receives the address of the writer's own object; the writer, released
  // when the alt commits, waits until the alt has moved the value out.
  in_runtime([] {
    constexpr int writers = 4, per = 300;
    std::vector<hoare::Chan<std::string>> chans(writers);
    std::vector<hoare::Rx<std::string>> rxs;
    std::vector<hoare::JoinHandle<void>> ws;
    auto done = hoare::Barrier().enroll(writers + 1);  // as in BufferedCppValues
    for (int w = 0; w < writers; ++w) {
      rxs.push_back(chans[w].move_rx());
      ws.push_back(hoare::spawn([tx = chans[w].move_tx(), w, end = std::move(done[w])]() mutable {
        for (int i = 0; i < per; ++i)
          tx << (std::to_string(w) + ":" + std::to_string(i) + std::string(40, 'x'));
        end.sync();
      }));
    }
    std::vector<int> next(writers, 0);
    for (int k = 0; k < writers * per; ++k) {
      hoare::Alt()
          .recv_for(rxs,
                    [&](std::size_t i, std::string s) {
                      EXPECT_EQ(s, std::to_string(i) + ":" + std::to_string(next[i]++) +
                                       std::string(40, 'x'));
                    })
          .select();
    }
    done[writers].sync();
    for (auto& w : ws) w.join();
    for (int w = 0; w < writers; ++w) EXPECT_EQ(next[w], per);
    // And from an alt's send guard to a plain (extended) receive.
    auto [tx, rx] = hoare::channel<std::string>();
    auto r = hoare::spawn([rx = std::move(rx)]() mutable { return rx.recv(); });
    hoare::Alt().send(tx, std::string("from an alt")).select();
    EXPECT_EQ(r.join(), "from an alt");
  });
}

// select_status(): a chosen poisoned guard is reported, not thrown, so a loop
// drops it with its precondition and goes on until every channel is poisoned.
TEST(Alt, SelectStatusEndsALoopOnPoisonWithoutThrowing) {
  in_runtime([] {
    auto [tx_a, a] = hoare::channel<int>();
    auto [tx_b, b] = hoare::channel<std::string>();
    auto wa = hoare::spawn([tx = std::move(tx_a)]() mutable {
      for (int i = 1; i <= 10; ++i) tx << i;
    });  // returning poisons a
    auto wb = hoare::spawn([tx = std::move(tx_b)]() mutable {
      for (int i = 0; i < 5; ++i) tx << std::string("x");
    });
    int sum = 0;
    std::string text;
    bool a_open = true, b_open = true;
    int poisoned = 0;
    while (a_open || b_open) {
      auto r = hoare::Alt()
                   .recv_if(a_open, a, [&](int v) { sum += v; })
                   .recv_if(b_open, b, [&](std::string s) { text += s; })
                   .select_status();
      if (r.poisoned()) {
        ++poisoned;
        EXPECT_EQ(r.element, 0u);
        (r.guard == 0 ? a_open : b_open) = false;
      } else {
        EXPECT_TRUE(r.ok());
      }
    }
    EXPECT_EQ(sum, 55);
    EXPECT_EQ(text, "xxxxx");
    EXPECT_EQ(poisoned, 2);
    wa.join();
    wb.join();
  });
}

TEST(Alt, SelectStatusReportsTheElementFairAndSendGuards) {
  in_runtime([] {
    std::vector<hoare::Chan<int>> chans(3);
    std::vector<hoare::Rx<int>> rxs;
    for (auto& c : chans) rxs.push_back(c.move_rx());
    chans[1].ref_tx().poison();
    hoare::Fair fair;
    bool ran = false;
    auto r = hoare::Alt().recv_for(rxs, [&](std::size_t, int) { ran = true; }).select_status(fair);
    EXPECT_TRUE(r.poisoned());
    EXPECT_EQ(r.guard, 0u);
    EXPECT_EQ(r.element, 1u);  // which end
    EXPECT_FALSE(ran);
    EXPECT_EQ(fair.next, 2u);  // the fair policy moved on past it
    // A poisoned send guard: the value stays unsent, nothing thrown.
    auto [tx, rx] = hoare::channel<std::string>();
    rx.poison();
    auto s = hoare::Alt().skip_if(false).send(tx, std::string("kept")).select_status();
    EXPECT_EQ(s.guard, 1u);
    EXPECT_TRUE(s.poisoned());
    // Not a poison: select_status() still reports ok, and other failures still throw.
    EXPECT_TRUE(hoare::Alt().skip().select_status().ok());
    EXPECT_THROW(hoare::Alt().skip([] { throw std::runtime_error("handler"); }).select_status(),
                 std::runtime_error);
    EXPECT_THROW(hoare::Alt().skip_if(false).select_status(), hoare::Error);
  });
}

// More guards (and larger handlers and values) than an Alt holds inline: the rest
// go to the heap, and nothing changes for the caller.
TEST(Alt, BeyondTheInlineStorage) {
  in_runtime([] {
    constexpr int n = 12;
    std::vector<hoare::Chan<std::string>> chans;
    for (int i = 0; i < n; ++i) chans.emplace_back(Buffer::bounded(1));
    std::vector<hoare::Rx<std::string>> rxs;
    for (auto& c : chans) rxs.push_back(c.move_rx());
    chans[9].ref_tx() << std::string("nine");
    std::array<char, 2000> big{};  // a handler larger than the inline bytes
    big[0] = 'b';
    std::string got;
    hoare::Alt alt;
    for (int i = 0; i < n; ++i) {
      alt.recv(rxs[i], [&got, i, big](std::string s) { got = s + std::to_string(i) + big[0]; });
    }
    alt.send(chans[0].ref_tx(), std::string(5000, 'y'));
    EXPECT_EQ(alt.select(), 9u);
    EXPECT_EQ(got, "nine9b");
    // The send guard's value went back and was destroyed with the Alt; recv_for
    // over more ends than fit inline works too.
    chans[11].ref_tx() << std::string("eleven");
    std::size_t which = 99;
    hoare::Alt().recv_for(rxs, [&](std::size_t i, std::string) { which = i; }).select();
    EXPECT_EQ(which, 11u);
  });
}

// Moving an Alt moves its guards (handlers, values, receive slots) into the new
// one's storage.
TEST(Alt, MovedAltSelects) {
  in_runtime([] {
    auto [tx, rx] = hoare::channel<std::string>(Buffer::bounded(1));
    auto [tx2, rx2] = hoare::channel<std::string>(Buffer::bounded(1));
    std::string got;
    hoare::Alt a;
    a.recv(rx, [&](std::string s) { got = s; }).send(tx2, std::string(100, 'q'), [&] {
      got = "sent";
    });
    hoare::Alt b = std::move(a);
    tx << std::string("moved");
    // Both are ready; pri takes the receive.
    EXPECT_EQ(b.select(), 0u);
    EXPECT_EQ(got, "moved");
    hoare::Alt c;
    c.send(tx2, std::string(100, 'q'), [&] { got = "sent"; });
    c = std::move(b);  // b has selected: so has c now
    EXPECT_THROW(c.select(), hoare::Error);
    hoare::Alt d;
    d.send(tx2, std::string(100, 'q'), [&] { got = "sent"; });
    hoare::Alt e(std::move(d));
    EXPECT_EQ(e.select(), 0u);
    EXPECT_EQ(got, "sent");
    EXPECT_EQ(rx2.recv(), std::string(100, 'q'));
    // A moved-from Alt is empty and can be used again.
    EXPECT_EQ(a.skip().select(), 0u);
    EXPECT_EQ(d.skip_if(false).skip().select(), 1u);
  });
}
