// A mixed network: C++ processes and Rust processes on one runtime, connected by
// channels of integers, strings and byte buffers (a channel of int64_t, uint64_t,
// double, rust::String or rust::Vec<uint8_t> is a plain Rust channel, so a Rust
// process can hold either end: cpp/README.md, "Rust and C++ in one network").
//
//   C++ producer --ints--> Rust doubler --ints--> C++ consumer
//   C++ producer --strings--> Rust upper --strings--> C++ consumer
//   C++ producer --bytes--> Rust reverse --bytes--> C++ consumer
//   Rust counter --ints--> C++ (range-for)  and  C++ --ints--> Rust sum
//
// The Rust processes are functions of src/ffi/test_hooks.rs exported through a cxx
// bridge of their own (built with the cargo feature cxx-test-hooks, which hoare's
// CMake build turns on for its examples); the channel ends cross the bridge as
// rust::Box<hoare::ffi::ChanTx/ChanRx>. Your own Rust processes are exported the
// same way: see cpp/README.md.
#include <hoare/hoare.hpp>
#include <hoare/test_hooks.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  return hoare::run([] {
    using namespace hoare;

    // Integers: C++ -> Rust -> C++.
    {
      Chan<std::int64_t> to_rust, from_rust;
      rust_procs::doubler(to_rust.move_rx(), from_rust.move_tx());
      auto producer = spawn([tx = to_rust.move_tx()]() mutable {
        for (std::int64_t i = 1; i <= 5; ++i) tx << i;
        tx.poison();  // the Rust process sees it, finishes, poisons its output
      });
      std::int64_t sum = 0;
      for (auto v : from_rust.ref_rx()) {
        std::printf("C++ got %lld from the Rust doubler\n", static_cast<long long>(v));
        sum += v;
      }
      producer.join();
      if (sum != 30) return 1;
    }

    // Strings: C++ -> Rust -> C++.
    {
      Chan<rust::String> to_rust, from_rust;
      rust_procs::upper(to_rust.move_rx(), from_rust.move_tx());
      auto producer = spawn([tx = to_rust.move_tx()]() mutable {
        for (const char* w : {"occam", "csp", "hoare"}) tx << rust::String(w);
        tx.poison();
      });
      for (auto s : from_rust.ref_rx())
        std::printf("C++ got \"%s\" from Rust\n", std::string(s).c_str());
      producer.join();
    }

    // Byte buffers: C++ -> Rust -> C++.
    {
      Chan<rust::Vec<std::uint8_t>> to_rust, from_rust;
      rust_procs::reverse_bytes(to_rust.move_rx(), from_rust.move_tx());
      auto tx = to_rust.move_tx();
      auto rx = from_rust.move_rx();
      rust::Vec<std::uint8_t> buf;
      for (std::uint8_t b : {1, 2, 3, 4}) buf.push_back(b);
      tx.send(std::move(buf));
      auto back = rx.recv();
      std::printf("C++ got bytes back from Rust:");
      for (auto b : back) std::printf(" %u", static_cast<unsigned>(b));
      std::printf("\n");
      tx.poison();
    }

    // A channel made by Rust, read by C++; and one made by C++, read by Rust code.
    {
      std::int64_t total = 0;
      for (auto v : rust_procs::counter(10)) total += v;
      std::printf("C++ summed the Rust counter: %lld\n", static_cast<long long>(total));

      Chan<std::int64_t> c;
      auto writer = spawn([tx = c.move_tx()]() mutable {
        for (std::int64_t i = 1; i <= 100; ++i) tx << i;
        tx.poison();
      });
      std::int64_t rust_total = rust_procs::sum(c.move_rx());
      writer.join();
      std::printf("Rust summed 1..100 sent by C++: %lld\n", static_cast<long long>(rust_total));
      if (total != 45 || rust_total != 5050) return 1;
    }
    std::printf("mixed network: ok\n");
    return 0;
  });
}
