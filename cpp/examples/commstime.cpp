// CommsTime (the classic occam/JCSP benchmark; examples/commstime.rs and the Go
// program in benches/go use the same definition):
//
//   prefix --a--> delta --b--> succ --c--> prefix
//                  delta --d--> consumer
//
// All channels are rendezvous. One loop of the cycle costs four communications,
// so ns_per_comm = time for K numbers at the consumer / (4 K). delta writes b then
// d (delta=seq).
//
//   commstime [iters] [workers] [--pod | --raw] [--compare]
//
// --compare also runs the same network written in Rust (through the bridge, in
// the same runtime) and prints its figure before the C++ one.
// Values: int64_t by default (a native Rust i64 channel); --pod sends a trivially
// copyable struct (by value, as u64 words); --raw a struct with a user-provided
// move constructor (by address: the reader move-constructs it out of the blocked
// writer inside an extended rendezvous; no allocation, no copy).
#include <hoare/hoare.hpp>
#include <hoare/test_hooks.hpp>  // hoare::rust_procs::commstime, for --compare

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Trivially copyable: travels by value (memcpy) through a Rust channel of words.
struct Num {
  std::int64_t v = 0;
};
// Not trivially copyable (user-provided move): travels by address; the reader
// move-constructs it out of the blocked writer (extended rendezvous).
struct Boxed {
  std::int64_t v = 0;
  Boxed() = default;
  explicit Boxed(std::int64_t x) : v(x) {}
  Boxed(Boxed&& o) noexcept : v(o.v) {}
  Boxed& operator=(Boxed&& o) noexcept {
    v = o.v;
    return *this;
  }
};

inline std::int64_t val(std::int64_t x) {
  return x;
}
inline std::int64_t val(const Num& x) {
  return x.v;
}
inline std::int64_t val(const Boxed& x) {
  return x.v;
}
template <class T>
T make(std::int64_t v) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return v;
  } else {
    return T{v};
  }
}

template <class T>
double commstime(std::int64_t iters) {
  using namespace hoare;
  Chan<T> a, b, c, d;
  auto prefix = spawn([out = a.move_tx(), in = c.move_rx()]() mutable {
    out.send(make<T>(0));
    T x;
    while (in >> x) {
      if (!(out << std::move(x))) break;
    }
    out.poison();
    in.poison();
  });
  auto delta = spawn([in = a.move_rx(), o1 = b.move_tx(), o2 = d.move_tx()]() mutable {
    T x;
    while (in >> x) {
      T y = make<T>(val(x));
      if (!(o1 << std::move(x))) break;
      if (!(o2 << std::move(y))) break;
    }
    in.poison();
    o1.poison();
    o2.poison();
  });
  auto succ = spawn([in = b.move_rx(), out = c.move_tx()]() mutable {
    T x;
    while (in >> x) {
      if (!(out << make<T>(val(x) + 1))) break;
    }
    in.poison();
    out.poison();
  });
  auto in = d.move_rx();
  T x;
  in >> x;  // the first number: start-up excluded
  auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t i = 1; i <= iters; ++i) {
    in >> x;
    if (val(x) != i) {
      std::fprintf(stderr, "commstime: expected %lld, got %lld\n", static_cast<long long>(i),
                   static_cast<long long>(val(x)));
      std::exit(1);
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  in.poison();
  prefix.join();
  delta.join();
  succ.join();
  double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  return ns / (4.0 * static_cast<double>(iters));
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t iters = 1000000;
  std::size_t workers = 0;
  bool raw = false, pod = false;
  bool compare = false;
  int pos = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--raw") == 0) {
      raw = true;
    } else if (std::strcmp(argv[i], "--pod") == 0) {
      pod = true;
    } else if (std::strcmp(argv[i], "--compare") == 0) {
      compare = true;
    } else if (pos++ == 0) {
      iters = std::atoll(argv[i]);
    } else {
      workers = static_cast<std::size_t>(std::atoll(argv[i]));
    }
  }
  if (iters <= 0) iters = 1;
  std::size_t n = workers ? workers : hoare::default_workers();
  double rust_ns = 0;
  double ns = hoare::run(hoare::RunOptions{n, 0}, [&] {
    if (compare) rust_ns = hoare::rust_procs::commstime(iters);
    return raw   ? commstime<Boxed>(iters)
           : pod ? commstime<Num>(iters)
                 : commstime<std::int64_t>(iters);
  });
  if (compare) {
    std::printf("commstime: Rust network in the same runtime: %.1f ns per communication\n",
                rust_ns);
    std::printf("bench=commstime lang=rust-via-bridge delta=seq workers=%zu ns_per_comm=%.3f\n", n,
                rust_ns);
  }
  std::printf("commstime: %lld numbers, %zu workers, %s values: %.1f ns per communication\n",
              static_cast<long long>(iters), n,
              raw   ? "by-address C++"
              : pod ? "trivially copyable C++"
                    : "int64",
              ns);
  std::printf("bench=commstime lang=cpp delta=seq workers=%zu ns_per_comm=%.3f\n", n, ns);
  return 0;
}
