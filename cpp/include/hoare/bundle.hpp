// Request/reply bundles: a client/server pair over one channel of requests, each
// carrying a fresh reply channel.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "hoare/chan.hpp"
#include "hoare/error.hpp"

namespace hoare {

// A client/server bundle (Rust: hoare::request_reply): every call sends the request together with a
// fresh one2one reply channel, so a server that poisons or ends without replying
// makes the call fail (hoare::Poisoned) instead of hang.
//
//   auto [client, server] = hoare::request_reply<int, std::string>();
//   auto s = hoare::spawn([server = std::move(server)]() mutable {
//     server.serve([](int x) { return std::to_string(x); });   // until poison
//   });
//   std::string r = client.call(42);
//   client.poison();                                         // ends the server's loop

// One request as the server receives it: the value and the end to reply on.
template <class Req, class Resp>
class Request {
 public:
  Request(Req v, Tx<Resp> r) : value(std::move(v)), reply_(std::move(r)) {}
  Req value;
  // Sends the reply; throws hoare::Poisoned if the client is gone. A request
  // destroyed without a reply makes the client's call throw hoare::Poisoned.
  void reply(Resp r) { reply_.send(std::move(r)); }

 private:
  Tx<Resp> reply_;
};

// The client side. Copyable: any number of clients.
template <class Req, class Resp>
class ClientEnd {
 public:
  explicit ClientEnd(SharedTx<Request<Req, Resp>> tx) : tx_(std::move(tx)) {}
  // Sends `req` and waits for the reply; throws hoare::Poisoned if the server side
  // is poisoned (the request was not delivered) or the server did not reply.
  Resp call(Req req) {
    auto [rtx, rrx] = channel<Resp>();
    tx_.send(Request<Req, Resp>(std::move(req), std::move(rtx)));
    return rrx.recv();
  }
  void poison() { tx_.poison(); }
  SharedTx<Request<Req, Resp>>& requests() { return tx_; }

 private:
  SharedTx<Request<Req, Resp>> tx_;
};

// The server side. Copyable: a pool of servers may share it. requests() is the
// receiving end, for an Alt.
template <class Req, class Resp>
class ServerEnd {
 public:
  explicit ServerEnd(SharedRx<Request<Req, Resp>> rx) : rx_(std::move(rx)) {}
  // The next request; throws hoare::Poisoned once the clients poisoned (or are all
  // gone).
  Request<Req, Resp> recv() { return rx_.recv(); }
  // Replies f(request) to every request until poison; returns how many it served. A
  // reply to a client that went away is dropped. An exception of f propagates (the
  // request then fails on the client's side).
  template <class F>
  std::uint64_t serve(F&& f) {
    std::uint64_t n = 0;
    for (;;) {
      std::optional<Request<Req, Resp>> r;
      try {
        r.emplace(rx_.recv());
      } catch (const Poisoned&) {
        return n;
      }
      Resp resp = f(std::move(r->value));
      try {
        r->reply(std::move(resp));
      } catch (const Poisoned&) {
      }
      ++n;
    }
  }
  void poison() { rx_.poison(); }
  SharedRx<Request<Req, Resp>>& requests() { return rx_; }

 private:
  SharedRx<Request<Req, Resp>> rx_;
};

// A client/server pair over a request channel buffered as `b` says (rendezvous by
// default).
template <class Req, class Resp>
std::pair<ClientEnd<Req, Resp>, ServerEnd<Req, Resp>> request_reply(
    Buffer b = Buffer::rendezvous()) {
  auto [tx, rx] = channel<Request<Req, Resp>, Sharing::any2any>(b);
  return {ClientEnd<Req, Resp>(std::move(tx)), ServerEnd<Req, Resp>(std::move(rx))};
}
}  // namespace hoare
