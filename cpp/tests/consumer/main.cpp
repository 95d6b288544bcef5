#include <hoare/hoare.hpp>

#include <cstdio>
#include <string>

int main() {
  return hoare::run([] {
    auto [tx, rx] = hoare::channel<std::string>();
    auto p = hoare::spawn([tx = std::move(tx)]() mutable {
      tx << std::string("hello from a hoare process");
      tx.poison();
    });
    for (auto s : rx) std::printf("consumer: %s\n", s.c_str());
    p.join();
    return 0;
  });
}
