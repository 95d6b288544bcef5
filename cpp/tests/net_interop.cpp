// The Rust/C++ mix over the network (issue 14): this C++ program starts the Rust
// example examples/net_peer.rs as a child process and the two exchange strings and
// byte vectors over network channels on loopback, both ways (ctest net.rust_cpp).
//
//   net_interop PATH/TO/net_peer
//
// The C++ side publishes to_cpp (strings) and bytes_to_cpp (bytes) on its node,
// connects to the Rust node's to_rust and bytes_to_rust, sends its address first,
// then strings and byte vectors, and checks each answer (upper-cased, reversed).
// Poisoning its writers ends the Rust program, which reports how many values it
// saw; both counts are checked. Fails (non-zero exit, no "ok" line) if any value is
// lost, altered or not answered (checked once with a Rust peer that lower-cased
// instead: the test failed).
#include <hoare/hoare.hpp>
#include <hoare/net.hpp>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("net_interop: " + what);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: net_interop PATH/TO/net_peer\n";
    return 2;
  }
  const std::string secret = "interop-secret";
  std::string cmd = std::string(argv[1]) + " " + secret;
  FILE* child = popen(cmd.c_str(), "r");
  if (!child) {
    std::cerr << "net_interop: cannot start " << argv[1] << "\n";
    return 2;
  }
  char line[512];
  std::string rust_addr;
  while (std::fgets(line, sizeof line, child)) {
    std::string l(line);
    auto at = l.find("net_peer: addr=");
    if (at != std::string::npos) {
      rust_addr = l.substr(at + 15);
      while (!rust_addr.empty() && (rust_addr.back() == '\n' || rust_addr.back() == '\r'))
        rust_addr.pop_back();
      break;
    }
  }
  if (rust_addr.empty()) {
    std::cerr << "net_interop: the Rust peer printed no address\n";
    pclose(child);
    return 1;
  }

  // Each string and what the Rust side answers (str::to_uppercase).
  const std::vector<std::pair<std::string, std::string>> words = {
      {"hello", "HELLO"},
      {"from c++", "FROM C++"},
      {"\xc3\xbc ok", "\xc3\x9c OK"},                       // u-umlaut: UTF-8 crosses intact
      {std::string(70000, 'x'), std::string(70000, 'X')}};  // over one 64 KiB frame
  const std::vector<std::vector<std::uint8_t>> blobs = {
      {1, 2, 3}, {}, {0, 255, 0, 128, 7}, std::vector<std::uint8_t>(100000, 42)};
  int failed = 0;
  try {
    hoare::run(hoare::RunOptions{2}, [&] {
      auto node = hoare::net::Node::bind("127.0.0.1:0", secret);
      auto from_rust = node.publish<std::string>("to_cpp");
      auto bytes_from_rust = node.publish<std::vector<std::uint8_t>>("bytes_to_cpp");
      auto to_rust = node.connect<std::string>(rust_addr + "/to_rust");
      auto bytes_to_rust = node.connect<std::vector<std::uint8_t>>(rust_addr + "/bytes_to_rust");
      to_rust.send(std::string(node.local_addr()));

      auto bytes = hoare::spawn([&, tx = std::move(bytes_to_rust)]() mutable {
        for (const auto& b : blobs) {
          tx.send(hoare::net::to_bytes(b));
          auto back = hoare::net::from_bytes(bytes_from_rust.recv());
          std::vector<std::uint8_t> want(b.rbegin(), b.rend());
          expect(back == want, "a byte vector came back wrong");
        }
        tx.poison();
      });
      for (const auto& [w, want] : words) {
        to_rust.send(rust::String(w));
        std::string back(from_rust.recv());
        expect(back == want,
               "\"" + w.substr(0, 20) + "\" came back as \"" + back.substr(0, 20) + "\"");
      }
      to_rust.poison();
      bytes.join();
      // The Rust side poisons its writers once it has seen ours: poison crosses back.
      // It poisons to_cpp last, once both its processes are done: this node goes
      // after that (destroying it writes the acknowledgements it owes first, so this
      // order is no longer needed for them, but the test checks the poison).
      try {
        from_rust.recv();
        expect(false, "a value after the last answer");
      } catch (const hoare::Poisoned&) {
      }
    });
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    failed = 1;
  }
  std::string rest;
  while (std::fgets(line, sizeof line, child)) rest += line;
  int status = pclose(child);
  std::cout << rest;
  std::string want = "net_peer: ok " + std::to_string(words.size()) + " strings, " +
                     std::to_string(blobs.size()) + " byte vectors";
  if (failed || status != 0 || rest.find(want) == std::string::npos) {
    std::cerr << "net_interop: FAILED (child status " << status << ", wanted \"" << want << "\")\n";
    return 1;
  }
  std::cout << "net_interop: ok\n";
  return 0;
}
