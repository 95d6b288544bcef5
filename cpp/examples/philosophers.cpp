// The dining philosophers (as in examples/dining_philosophers.rs), with
// alternation: each fork is a process that alts between the pick-up channels of
// its two philosophers, and a security guard lets at most n-1 philosophers sit at
// once, with a precondition on its "sit down" guard. Each philosopher eats `meals`
// times; the program checks that every meal was eaten and prints the count per
// philosopher.
//
//   philosophers [n] [meals]
#include <hoare/hoare.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace hoare;

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 5;
  int meals = argc > 2 ? std::atoi(argv[2]) : 100;
  if (n < 2) n = 2;
  if (meals < 1) meals = 1;
  return run([n, meals] {
    // Fork i lies between philosopher i (its left hand) and philosopher i+1 (its
    // right hand). Picking up is a send on the fork's channel for that hand;
    // putting down is a send on the fork's (shared) put-down channel.
    // The channels are any2one so that main keeps a writing end of each: a
    // philosopher that has finished must not poison a fork its neighbour still
    // needs (destroying the last writing end poisons a channel).
    struct Fork {
      Any2OneChan<int> by_left, by_right, down;
    };
    std::vector<Fork> forks(static_cast<std::size_t>(n));
    Any2OneChan<int> sit, stand;
    Any2OneChan<int> ate(Buffer::unbounded());

    std::vector<JoinHandle<void>> servers;
    for (auto& f : forks) {
      servers.push_back(spawn(
          [l = f.by_left.move_rx(), r = f.by_right.move_rx(), d = f.down.move_rx()]() mutable {
            try {
              for (;;) {
                Alt().recv(l).recv(r).select();  // whoever asks first gets it
                d.recv();                        // until it is put down
              }
            } catch (const Poisoned&) {
            }
          }));
    }
    servers.push_back(spawn([n, sit = sit.move_rx(), stand = stand.move_rx()]() mutable {
      int seated = 0;
      try {
        for (;;) {
          Alt()
              .recv_if(seated < n - 1, sit, [&](int) { ++seated; })
              .recv(stand, [&](int) { --seated; })
              .select();
        }
      } catch (const Poisoned&) {
      }
    }));

    std::vector<JoinHandle<void>> philosophers;
    for (int i = 0; i < n; ++i) {
      auto& left = forks[static_cast<std::size_t>(i)];
      auto& right = forks[static_cast<std::size_t>((i + 1) % n)];
      philosophers.push_back(
          spawn([i, meals, sit = sit.tx(), stand = stand.tx(), ate = ate.tx(),
                 take_l = left.by_left.tx(), drop_l = left.down.tx(), take_r = right.by_right.tx(),
                 drop_r = right.down.tx()]() mutable {
            for (int m = 0; m < meals; ++m) {
              this_proc::yield();  // think
              sit << i;
              take_l << i;
              take_r << i;
              ate << i;  // eat
              drop_l << i;
              drop_r << i;
              stand << i;
            }
          }));
    }
    for (auto& p : philosophers) p.join();

    // Everybody has finished: poison the servers' channels and count the meals.
    sit.ref_tx().poison();
    stand.ref_tx().poison();
    for (auto& f : forks) f.by_left.ref_tx().poison();
    for (auto& s : servers) s.join();
    ate.ref_tx().poison();
    std::vector<int> count(static_cast<std::size_t>(n), 0);
    for (int who : ate.ref_rx()) ++count[static_cast<std::size_t>(who)];
    bool ok = true;
    for (int i = 0; i < n; ++i) {
      std::printf("philosopher %d ate %d times\n", i, count[static_cast<std::size_t>(i)]);
      ok = ok && count[static_cast<std::size_t>(i)] == meals;
    }
    std::printf(ok ? "philosophers: ok\n" : "philosophers: WRONG\n");
    return ok ? 0 : 1;
  });
}
