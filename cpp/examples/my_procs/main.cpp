// A C++ program with Rust processes of its own: a C++ producer writes integers, a
// Rust process (my-procs/src/lib.rs, built into the program's static library by
// hoare_add_rust_library) squares them, and the C++ main process sums the squares.
#include <hoare/hoare.hpp>

#include <cstdint>
#include <cstdio>

#include "my-procs/src/lib.rs.h"

int main() {
  return hoare::run([] {
    auto [tx, numbers] = hoare::channel<std::int64_t>();
    auto producer = hoare::spawn([tx = std::move(tx)]() mutable {
      for (std::int64_t i = 1; i <= 10; ++i) tx.send(i);
    });  // returning poisons `numbers`, which ends the Rust process
    // The receiving end goes to Rust; the squares come back on a channel Rust made.
    auto squares =
        hoare::Rx<std::int64_t>::from_rust(my_procs::spawn_squarer(std::move(numbers).into_rust()));
    std::int64_t sum = 0;
    for (std::int64_t s : squares) sum += s;  // until the Rust process poisons it
    producer.join();
    std::printf("my_procs: sum of squares 1..10 = %lld (%s)\n", static_cast<long long>(sum),
                sum == 385 ? "ok" : "WRONG");
    return sum == 385 ? 0 : 1;
  });
}
