// hoare — a CSP runtime (processes, channels, poison) for C++17, over the Rust runtime.
//
//   #include <hoare/hoare.hpp>
//
//   int main() {
//     return hoare::run([] {
//       auto [tx, rx] = hoare::channel<std::string>();
//       auto p = hoare::spawn([tx = std::move(tx)]() mutable {
//         tx << std::string("hello");
//       });  // returning destroys tx: the channel is poisoned
//       for (auto s : rx) std::cout << s << "\n";  // ends at poison
//       p.join();
//       return 0;
//     });
//   }
//
// Processes are stackful coroutines scheduled on N worker threads (M:N). C++ and
// Rust processes share one runtime, and a channel of int64_t, uint64_t, double,
// rust::String or rust::Vec<uint8_t> can connect a C++ process with a Rust one.
//
// ---------------------------------------------------------------------------------
// THREAD-LOCAL HAZARD. A process may migrate to another worker thread whenever it
// blocks (a channel operation, join, sleep, yield). C++ code that caches the
// address of a `thread_local` object (or calls code that does: errno is fine, but
// e.g. some allocators, loggers or `static thread_local` caches inside libraries)
// across such a call will touch the thread-local of the *previous* thread: a data
// race. Compilers may also cache the address of a thread_local across a call in
// one function. Either copy values out of thread-locals before blocking, or run the
// process pinned to one worker: hoare::spawn_pinned(f) or
// hoare::spawn(hoare::SpawnOptions{}.pin(), f). A pinned process never migrates.
// ---------------------------------------------------------------------------------
//
// Exceptions: an exception thrown by a process body ends that process (not its
// worker, not the runtime) and is rethrown by join() (or by run() for the first
// process). hoare::par rethrows the first failure (in argument order) after every
// branch has finished. An exception of a process nobody joins is reported on
// stderr (see set_unjoined_failure_handler). Misuse (a spawn outside run(), an
// alt that could only wait for ever, ...) throws hoare::Error.
//
// This header includes one header per concept, each of which can also be included
// on its own:
//   hoare/error.hpp    Error, Poisoned, ProcessError, Cancelled
//   hoare/process.hpp  run, spawn, JoinHandle, SpawnOptions, RunOptions, this_proc,
//                      set_unjoined_failure_handler
//   hoare/runtime.hpp  Runtime, RuntimeHandle (a runtime used from any thread)
//   hoare/scope.hpp    scope, par, par_for
//   hoare/chan.hpp     Chan, channel, Tx/SharedTx, Rx/SharedRx, Buffer, Status,
//                      send_timed, recv_timed
//   hoare/timer.hpp    Egg, Repeat, Date, this_proc::sleep(timer)
//   hoare/broadcast.hpp broadcast, BroadcastTx, BroadcastRx (one writer, every reader
//                      gets every value)
//   hoare/par.hpp      Par (several sends and receives at once)
//   hoare/alt.hpp      Alt, RecvAny, Fair
//   hoare/barrier.hpp  Barrier, BarrierEnd, AltingBarrier, AltingBarrierEnd
//   hoare/bundle.hpp   request_reply, ClientEnd, ServerEnd, Request
//   hoare/net.hpp      net::Node, net::Accepter: network channels of strings and
//                      bytes (not included by this header)
// (hoare/detail/ holds what they share; hoare/bridge.hpp is the C++ half of the
// cxx bridge; hoare/test_hooks.hpp is for hoare's own tests and examples.)
#pragma once

#include "hoare/alt.hpp"
#include "hoare/barrier.hpp"
#include "hoare/broadcast.hpp"
#include "hoare/bundle.hpp"
#include "hoare/chan.hpp"
#include "hoare/check.hpp"
#include "hoare/error.hpp"
#include "hoare/par.hpp"
#include "hoare/process.hpp"
#include "hoare/runtime.hpp"
#include "hoare/scope.hpp"
#include "hoare/timer.hpp"
