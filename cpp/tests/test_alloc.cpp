// Counts heap allocations (malloc and friends are interposed in this executable,
// so Rust's and C++'s allocations are both seen) during a steady stream of
// communications: a rendezvous of a C++ value allocates nothing, a buffered
// channel allocates one box per item.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
inline void count() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(std::size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(std::size_t a, std::size_t b) {
  count();
  return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) {
  count();
  return __libc_realloc(p, n);
}
int posix_memalign(void** out, std::size_t align, std::size_t n) {
  count();
  void* p = __libc_memalign(align, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* aligned_alloc(std::size_t align, std::size_t n) {
  count();
  return __libc_memalign(align, n);
}
}

using namespace testing_hoare;

namespace {
// Not trivially copyable (a user-provided move): travels by address.
struct Payload {
  std::int64_t a = 0, b = 0, c = 0;
  Payload() = default;
  Payload(Payload&& o) noexcept : a(o.a), b(o.b), c(o.c) {}
  Payload& operator=(Payload&& o) noexcept {
    a = o.a;
    b = o.b;
    c = o.c;
    return *this;
  }
};
static_assert(!std::is_trivially_copyable_v<Payload>);

// Trivially copyable: travels by value.
struct Small {
  std::int32_t x = 0;
  double y = 0;
};

// One worker: the count is then the channel's alone (with several workers, waking a
// process on another worker may allocate a block of the runtime's injection queue
// now and then: crossbeam's Injector allocates one block per 63 pushes).
template <class T>
long allocations_for(hoare::Buffer buf, int n) {
  return hoare::run(hoare::RunOptions{1, 256 * 1024}, [buf, n] {
    auto [tx, rx] = hoare::channel<T>(buf);
    auto w = hoare::spawn([tx = std::move(tx), n]() mutable {
      for (int i = 0; i < 2 * n; ++i) tx << T{};
    });
    T x{};
    for (int i = 0; i < n; ++i) rx >> x;  // warm up
    allocations = 0;
    counting = true;
    for (int i = 0; i < n; ++i) rx >> x;
    counting = false;
    long a = allocations.load();
    w.join();
    return a;
  });
}
}  // namespace

TEST(Alloc, RendezvousOfACppValueAllocatesNothing) {
  long a = allocations_for<Payload>(hoare::Buffer::rendezvous(), 10000);
  std::printf("rendezvous, C++ struct: %ld allocations for 10000 communications\n", a);
  EXPECT_EQ(a, 0);
}

TEST(Alloc, RendezvousOfInt64AllocatesNothing) {
  long a = allocations_for<std::int64_t>(hoare::Buffer::rendezvous(), 10000);
  std::printf("rendezvous, int64: %ld allocations for 10000 communications\n", a);
  EXPECT_EQ(a, 0);
}

TEST(Alloc, RendezvousOfATriviallyCopyableValueAllocatesNothing) {
  long a = allocations_for<Small>(hoare::Buffer::rendezvous(), 10000);
  std::printf("rendezvous, trivially copyable struct: %ld allocations for 10000 communications\n",
              a);
  EXPECT_EQ(a, 0);
}

TEST(Alloc, BufferedAllocatesOneBoxPerItem) {
  long a = allocations_for<Payload>(hoare::Buffer::bounded(16), 10000);
  std::printf("bounded(16), C++ struct: %ld allocations for 10000 communications\n", a);
  EXPECT_GE(a, 10000 - 32);
  EXPECT_LE(a, 10000 + 100);
}

// A timer allocates its Rust timer once, when it is made; using it does not.
TEST(Alloc, UsingATimerAllocatesNothing) {
  long a = hoare::run(hoare::RunOptions{1, 256 * 1024}, [] {
    auto [tx, rx] = hoare::channel<int>();
    hoare::Repeat tick(hoare::Clock::now() - std::chrono::hours(1), std::chrono::microseconds(1));
    hoare::Egg egg(std::chrono::nanoseconds(0));
    hoare::Date date(hoare::Clock::now());
    int x = 0;
    auto use = [&] {
      (void)tick.deadline();
      (void)tick.expired();
      tick.fired();
      hoare::this_proc::sleep(tick);  // an expired tick: at once
      (void)hoare::recv_timed(rx, x, egg);
      (void)hoare::recv_timed(rx, x, date);
    };
    for (int i = 0; i < 100; ++i) use();  // warm up
    allocations = 0;
    counting = true;
    for (int i = 0; i < 1000; ++i) use();
    counting = false;
    return allocations.load();
  });
  std::printf("timers: %ld allocations for 1000 uses\n", a);
  EXPECT_EQ(a, 0);
}

// The builder-form Alt keeps a handful of guards (and their handlers, values and
// receive slots) in storage of its own, and the bridge keeps their cases on its
// stack: selecting allocates nothing, whatever the kinds of guard.
TEST(Alloc, AltOfAFewGuardsAllocatesNothing) {
  long a = hoare::run(hoare::RunOptions{1, 256 * 1024}, [] {
    hoare::Chan<Payload> pc;       // by address
    hoare::Chan<std::int64_t> ic;  // native
    hoare::Chan<Payload> sc;       // the alt sends on it
    hoare::Chan<Small> idle;
    auto prx = pc.move_rx();
    auto irx = ic.move_rx();
    auto stx = sc.move_tx();
    auto idle_rx = idle.move_rx();
    auto pw = hoare::spawn([tx = pc.move_tx()]() mutable {
      while (tx << Payload{}) {
      }
    });
    auto iw = hoare::spawn([tx = ic.move_tx()]() mutable {
      while (tx << std::int64_t{1}) {
      }
    });
    auto sr = hoare::spawn([rx = sc.move_rx()]() mutable {
      Payload p;
      while (rx >> p) {
      }
    });
    hoare::Repeat tick(std::chrono::hours(1));
    hoare::Fair fair;
    long got = 0;
    auto one = [&](bool fair_policy) {
      hoare::Alt alt;
      alt.recv(prx, [&](Payload p) { got += p.a + 1; })
          .recv(irx, [&](std::int64_t v) { got += v; })
          .recv_if(false, idle_rx, [&](Small) {})
          .send(stx, Payload{}, [&] { ++got; })
          .timeout(tick, [] {})
          .timeout(std::chrono::hours(1), [] {});
      if (fair_policy) {
        alt.select(fair);
      } else {
        alt.select_status();
      }
    };
    for (int i = 0; i < 1000; ++i) one(i % 2 == 0);  // warm up
    allocations = 0;
    counting = true;
    for (int i = 0; i < 10000; ++i) one(i % 2 == 0);
    counting = false;
    long n = allocations.load();
    prx.poison();
    irx.poison();
    stx.poison();
    pw.join();
    iw.join();
    sr.join();
    EXPECT_GT(got, 10000);
    return n;
  });
  std::printf("Alt of 6 guards: %ld allocations for 10000 selects\n", a);
  EXPECT_EQ(a, 0);
}

TEST(Alloc, AltOverAReplicatedGuardAllocatesNothing) {
  long a = hoare::run(hoare::RunOptions{1, 256 * 1024}, [] {
    std::vector<hoare::Chan<std::int64_t>> chans(4);
    std::vector<hoare::Rx<std::int64_t>> rxs;
    std::vector<hoare::JoinHandle<void>> ws;
    for (auto& c : chans) {
      ws.push_back(hoare::spawn([tx = c.move_tx()]() mutable {
        while (tx << std::int64_t{1}) {
        }
      }));
      rxs.push_back(c.move_rx());
    }
    hoare::Fair fair;
    std::int64_t sum = 0;
    auto one = [&] {
      hoare::Alt().recv_for(rxs, [&](std::size_t, std::int64_t v) { sum += v; }).select(fair);
    };
    for (int i = 0; i < 1000; ++i) one();  // warm up
    allocations = 0;
    counting = true;
    for (int i = 0; i < 10000; ++i) one();
    counting = false;
    long n = allocations.load();
    for (auto& rx : rxs) rx.poison();
    for (auto& w : ws) w.join();
    EXPECT_EQ(sum, 11000);
    return n;
  });
  std::printf("Alt over recv_for of 4 ends: %ld allocations for 10000 selects\n", a);
  EXPECT_EQ(a, 0);
}
