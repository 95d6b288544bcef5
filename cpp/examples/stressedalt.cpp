// Stressed alt (after JCSP's and C++CSP2's StressedAlt; the Rust version is
// examples/stressedalt.rs): C channels, W writer processes per channel, each writing
// for ever; one reader alts over all C channels (a replicated receive guard) K times
// and prints the time per alt.
//
//   stressedalt [--workers N] [--chans C] [--writers W] [--iters K]
//               [--policy fair|pri] [--builder]
//
// By default the reader uses hoare::RecvAny (the replicated guard built once and
// selected on K times, as the Rust example does); --builder builds a fresh
// hoare::Alt().recv_for(...) for every alt instead.
//
// The last line is machine-readable:
//   bench=stressedalt lang=cpp workers=N chans=C writers=W ns_per_alt=X
#include <hoare/hoare.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "stressedalt: %s\nusage: stressedalt [--workers N] [--chans C] [--writers W] "
               "[--iters K] [--policy fair|pri] [--builder]\n",
               msg);
  std::exit(2);
}

std::uint64_t number(const char* s, const char* flag) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0') usage((std::string("bad value for ") + flag).c_str());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t workers = 0, chans = 10, writers = 100;
  std::uint64_t iters = 1000000;
  bool fair_policy = true, builder = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--workers") {
      workers = number(value(), "--workers");
    } else if (a == "--chans") {
      chans = number(value(), "--chans");
    } else if (a == "--writers") {
      writers = number(value(), "--writers");
    } else if (a == "--iters") {
      iters = number(value(), "--iters");
    } else if (a == "--policy") {
      std::string p = value();
      if (p != "fair" && p != "pri") usage("--policy is pri or fair");
      fair_policy = p == "fair";
    } else if (a == "--builder") {
      builder = true;
    } else {
      usage(("unknown flag " + a).c_str());
    }
  }
  if (chans < 1) usage("--chans must be at least 1");
  if (writers < 1) usage("--writers must be at least 1");
  if (workers == 0) workers = hoare::default_workers();

  std::vector<std::uint64_t> counts(chans, 0);
  double ns = hoare::run(hoare::RunOptions{workers, 0}, [&] {
    std::vector<hoare::Rx<std::uint64_t>> rxs;
    std::vector<hoare::JoinHandle<void>> hs;
    rxs.reserve(chans);
    hs.reserve(chans * writers);
    for (std::size_t c = 0; c < chans; ++c) {
      auto [tx, rx] = hoare::channel<std::uint64_t, hoare::Sharing::any2one>();
      rxs.push_back(std::move(rx));
      for (std::size_t w = 0; w < writers; ++w) {
        hs.push_back(hoare::spawn([tx, c]() mutable {
          // Write for ever: until the reader poisons the channel.
          while (tx << static_cast<std::uint64_t>(c)) {
          }
        }));
      }
    }
    hoare::Fair fair;
    hoare::RecvAny<std::uint64_t> set(rxs);
    auto one = [&] {
      if (builder) {
        auto h = [&](std::size_t i, std::uint64_t v) {
          if (v != i) std::abort();
          ++counts[i];
        };
        if (fair_policy) {
          hoare::Alt().recv_for(rxs, h).select(fair);
        } else {
          hoare::Alt().recv_for(rxs, h).select();
        }
      } else {
        std::uint64_t v = 0;
        std::size_t i = fair_policy ? set.select(fair, v) : set.select(v);
        if (v != i) std::abort();
        ++counts[i];
      }
    };
    for (std::uint64_t k = 0; k < std::clamp<std::uint64_t>(iters / 10, 1, 10000); ++k) one();
    auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t k = 0; k < iters; ++k) one();
    auto elapsed = std::chrono::steady_clock::now() - t0;
    for (auto& rx : rxs) rx.poison();
    for (auto& h : hs) h.join();
    return std::chrono::duration<double, std::nano>(elapsed).count() /
           static_cast<double>(std::max<std::uint64_t>(iters, 1));
  });
  auto [mn, mx] = std::minmax_element(counts.begin(), counts.end());
  std::printf("per channel: min %llu max %llu alts (%s)\n", static_cast<unsigned long long>(*mn),
              static_cast<unsigned long long>(*mx), fair_policy ? "fair" : "pri");
  std::printf(
      "stressed alt: %zu worker(s), %zu channel(s) x %zu writer(s), %llu alts: %.1f ns per alt "
      "(%s)\n",
      workers, chans, writers, static_cast<unsigned long long>(iters), ns,
      builder ? "hoare::Alt" : "hoare::RecvAny");
  std::printf("bench=stressedalt lang=cpp workers=%zu chans=%zu writers=%zu ns_per_alt=%.1f\n",
              workers, chans, writers, ns);
  return 0;
}
