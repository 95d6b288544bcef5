// Network channels (issue 14): hoare::net::Node stretches channels between
// programs with the semantics of local ones (docs/semantics.md, and the Rust
// hoare::net::Node it is). A node binds an address, publishes reading ends under
// names that other programs connect to as "HOST:PORT/name", and serves accepters
// (a fresh request/reply pair per client) and a name service.
//
// Values are strings and bytes: a channel of std::string or rust::String is a
// Rust channel of String, one of std::vector<uint8_t> or rust::Vec<uint8_t> is a
// channel of Vec<u8>, so a Rust program that publishes or connects
// `Node::publish::<String>` / `connect::<Vec<u8>>` talks with a C++ one. The ends
// are the ordinary ones of the bridge types (Rx<rust::String>,
// SharedTx<rust::Vec<uint8_t>>, ...): they work in Alt, iterate until poison,
// poison and time out as local ends; a std::string converts to rust::String on
// send (tx.send(std::string("x"))) and back with std::string(s).
//
// A send returns once the remote reader has taken the value; poison crosses in
// both directions; a lost connection poisons every channel it carried
// (lost_connections() says why). Destroying a Node closes its connections after
// writing what they owe (acknowledgements of values its readers took; a value
// its writers have in flight is withdrawn or acknowledged), waiting at most its
// close timeout (Node::bind's `close_timeout`, default 5 s: the Rust
// NodeBuilder::close_timeout) for a peer that stopped answering. Nodes
// authenticate each other with a shared secret before any traffic. Every call is
// made from a process (hoare::run, hoare::Runtime::spawn, ...); failures throw
// hoare::Error.
//
//   hoare::run([] {
//     auto node = hoare::net::Node::bind("127.0.0.1:0", "secret");
//     auto rx = node.publish<std::string>("greetings");
//     // another program: other.connect<std::string>(addr + "/greetings")
//     for (auto s : rx) std::cout << std::string(s) << "\n";  // until poison
//   });
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hoare/chan.hpp"
#include "hoare/detail/ffi.hpp"
#include "hoare/error.hpp"

namespace hoare {
namespace net {

namespace detail {
// The bridge type a network channel of T carries.
template <class T>
struct wire {
  static_assert(sizeof(T) == 0,
                "a network channel carries std::string, rust::String, std::vector<uint8_t> "
                "or rust::Vec<uint8_t>");
};
template <>
struct wire<std::string> {
  using type = rust::String;
};
template <>
struct wire<rust::String> {
  using type = rust::String;
};
template <>
struct wire<std::vector<std::uint8_t>> {
  using type = rust::Vec<std::uint8_t>;
};
template <>
struct wire<rust::Vec<std::uint8_t>> {
  using type = rust::Vec<std::uint8_t>;
};
}  // namespace detail

// The value type of a network channel of T (rust::String or rust::Vec<uint8_t>).
template <class T>
using wire_t = typename detail::wire<T>::type;

// Byte vectors between std::vector<uint8_t> and the channel's rust::Vec<uint8_t>.
inline rust::Vec<std::uint8_t> to_bytes(const std::vector<std::uint8_t>& v) {
  rust::Vec<std::uint8_t> out;
  out.reserve(v.size());
  for (auto b : v) out.push_back(b);
  return out;
}
inline std::vector<std::uint8_t> from_bytes(const rust::Vec<std::uint8_t>& v) {
  return std::vector<std::uint8_t>(v.begin(), v.end());
}

// A network connection that ended: the peer's address and why.
struct LostConnection {
  std::string peer;
  std::string why;
};

// The accepter of a name (Node::accept): each client that connects with
// Node::connect_pair gets a fresh pair of channels, which next() returns as the
// reading end of its requests and the writing end of its replies.
template <class Req, class Rep>
class Accepter {
 public:
  // Waits for the next client; hoare::Error once the node is gone.
  std::pair<Rx<wire_t<Req>>, SharedTx<wire_t<Rep>>> next() {
    if (!a_) throw Error("hoare: use of an empty (moved-from) net::Accepter");
    auto p = hoare::detail::bridge_call([&] { return ffi::net_accepter_next(**a_); });
    return {Rx<wire_t<Req>>::from_rust(std::move(p.rx)),
            SharedTx<wire_t<Rep>>::from_rust(std::move(p.tx))};
  }

 private:
  friend class Node;
  explicit Accepter(rust::Box<ffi::NetAccepter> a) : a_(std::move(a)) {}
  hoare::detail::Handle<ffi::NetAccepter> a_;  // empty once moved from
};

// A network node: listens on an address for other nodes that know its secret,
// and makes the network channels of this program. Move-only; destroying it
// closes its connections (poisoning their channels).
class Node {
 public:
  // Listens on `addr` ("127.0.0.1:0": a loopback port the OS chooses) for nodes
  // that know `secret`. `max_message`: the largest encoded value it accepts (0:
  // the default, 16 MiB).
  static Node bind(const std::string& addr, std::string_view secret, std::size_t max_message = 0) {
    return bind_ns(addr, secret, max_message, ffi::net_default_close_timeout_ns());
  }
  // bind() with a close timeout: how long destroying the node may wait for its
  // connections to write what they owe their peers before it cuts them (default
  // default_close_timeout(), 5 s). A live peer answers within a round trip; the
  // bound is for one that stopped reading or answering. A duration too long for
  // 64-bit nanoseconds (hours::max()) means no bound; a negative one throws
  // hoare::Error.
  template <class Rep, class Period>
  static Node bind(const std::string& addr, std::string_view secret, std::size_t max_message,
                   std::chrono::duration<Rep, Period> close_timeout) {
    if (!(close_timeout.count() >= Rep{0})) {  // NaN too
      throw Error("hoare: a negative net::Node close timeout");
    }
    return bind_ns(addr, secret, max_message, hoare::detail::to_ns(close_timeout));
  }
  // The close timeout of a node bound without one (the Rust DEFAULT_CLOSE_TIMEOUT).
  static std::chrono::nanoseconds default_close_timeout() {
    return std::chrono::nanoseconds(static_cast<std::int64_t>(ffi::net_default_close_timeout_ns()));
  }

  // The address ("HOST:PORT") other nodes connect to.
  std::string local_addr() const { return std::string(ffi::net_local_addr(node())); }

  // Publishes a channel of T under `name` and returns its reading end: values that
  // writers in other programs send to "HOST:PORT/name" arrive here (any number of
  // remote writers: an any2one channel).
  template <class T>
  Rx<wire_t<T>> publish(const std::string& name) {
    auto rx = hoare::detail::bridge_call(
        [&] { return ffi::net_publish(node(), name, hoare::detail::elem_of<wire_t<T>>::value); });
    return Rx<wire_t<T>>::from_rust(std::move(rx));
  }

  // A writing end to the channel published as `url` ("HOST:PORT/name"); copy it
  // for more writers here. A send returns once the remote reader has the value;
  // with `buffer` > 0, once it is in a buffer of that many values on this side.
  template <class T>
  SharedTx<wire_t<T>> connect(const std::string& url, std::size_t buffer = 0) {
    return connect_impl<T>(url, "", buffer);
  }

  // A writing end to the channel registered as `name` with the name service at
  // `service` ("HOST:PORT" of a node that called serve_names()).
  template <class T>
  SharedTx<wire_t<T>> connect_named(const std::string& service, const std::string& name) {
    return connect_impl<T>(name, service, 0);
  }

  // Publishes an accepter under `name`: a fresh request/reply pair per client.
  template <class Req, class Rep>
  Accepter<Req, Rep> accept(const std::string& name) {
    return Accepter<Req, Rep>(hoare::detail::bridge_call([&] {
      return ffi::net_accept(node(), name, hoare::detail::elem_of<wire_t<Req>>::value,
                             hoare::detail::elem_of<wire_t<Rep>>::value);
    }));
  }

  // Connects to the accepter published as `url`: the writing end of this
  // client's requests and the reading end of its replies.
  template <class Req, class Rep>
  std::pair<SharedTx<wire_t<Req>>, Rx<wire_t<Rep>>> connect_pair(const std::string& url) {
    auto p = hoare::detail::bridge_call([&] {
      return ffi::net_connect_pair(node(), url, hoare::detail::elem_of<wire_t<Req>>::value,
                                   hoare::detail::elem_of<wire_t<Rep>>::value);
    });
    return {SharedTx<wire_t<Req>>::from_rust(std::move(p.tx)),
            Rx<wire_t<Rep>>::from_rust(std::move(p.rx))};
  }

  // Serves a name service on this node (until the node is destroyed).
  void serve_names() {
    hoare::detail::bridge_call([&] { ffi::net_serve_names(node()); });
  }
  // Registers this node's channel published as `name` with the name service at
  // `service` ("HOST:PORT").
  void register_name(const std::string& service, const std::string& name) {
    hoare::detail::bridge_call([&] { ffi::net_register(node(), service, name); });
  }
  // The URL registered as `name` with the name service at `service`.
  std::string resolve(const std::string& service, const std::string& name) {
    return std::string(
        hoare::detail::bridge_call([&] { return ffi::net_resolve(node(), service, name); }));
  }

  // The connections that ended (their channels were poisoned), with why.
  std::vector<LostConnection> lost_connections() const {
    std::vector<LostConnection> out;
    for (const auto& l : ffi::net_lost(node())) {
      out.push_back(LostConnection{std::string(l.peer), std::string(l.why)});
    }
    return out;
  }

 private:
  explicit Node(rust::Box<ffi::NetNode> n) : n_(std::move(n)) {}
  // `close_ns` UINT64_MAX: no bound.
  static Node bind_ns(const std::string& addr, std::string_view secret, std::size_t max_message,
                      std::uint64_t close_ns) {
    rust::Slice<const std::uint8_t> s(reinterpret_cast<const std::uint8_t*>(secret.data()),
                                      secret.size());
    return Node(
        hoare::detail::bridge_call([&] { return ffi::net_bind(addr, s, max_message, close_ns); }));
  }
  const ffi::NetNode& node() const {
    if (!n_) throw Error("hoare: use of an empty (moved-from) net::Node");
    return **n_;
  }

  template <class T>
  SharedTx<wire_t<T>> connect_impl(const std::string& url, const std::string& service,
                                   std::size_t buffer) {
    auto tx = hoare::detail::bridge_call([&] {
      return ffi::net_connect(node(), url, service, hoare::detail::elem_of<wire_t<T>>::value,
                              buffer);
    });
    return SharedTx<wire_t<T>>::from_rust(std::move(tx));
  }

  hoare::detail::Handle<ffi::NetNode> n_;  // empty once moved from
};

}  // namespace net
}  // namespace hoare
