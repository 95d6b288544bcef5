// A runtime you start, use from any thread and shut down explicitly (Runtime), and
// a handle to it for plain threads and callbacks from C libraries (RuntimeHandle):
// the Rust hoare::Runtime and hoare::Handle. run() is the simpler form (start, run
// one root process, shut down); a Runtime serves programs whose main thread, or a
// foreign library's threads, start processes and wait for them.
//
//   hoare::Runtime rt(hoare::RunOptions{2});          // 2 workers, running now
//   auto h = rt.spawn([] { return 6 * 7; });           // from a plain thread
//   std::thread t([hd = rt.handle()] {                 // any thread may keep a handle
//     hd.spawn([] { /* a process */ }).join();
//   });
//   t.join();
//   int v = h.join();                                  // 42
//   rt.shutdown();  // or the destructor: still-blocked processes are cancelled
#pragma once

#include <cstddef>
#include <utility>

#include "hoare/detail/ffi.hpp"
#include "hoare/error.hpp"
#include "hoare/process.hpp"

namespace hoare {

// A handle to a running runtime: copyable, usable from any thread (a process of
// any runtime, a plain std::thread, a callback from C code), to spawn processes
// into it and join them. After the runtime has shut down, spawn throws
// hoare::Error, and join of a process it cancelled throws hoare::Cancelled.
class RuntimeHandle {
 public:
  // The runtime the caller runs in (a process); hoare::Error outside any.
  static RuntimeHandle current() {
    return RuntimeHandle(detail::bridge_call([] { return ffi::handle_current(); }));
  }

  RuntimeHandle(const RuntimeHandle& o) {
    if (o.h_) h_ = detail::Handle<ffi::RuntimeHandle>(ffi::handle_clone(**o.h_));
  }
  RuntimeHandle& operator=(const RuntimeHandle& o) {
    if (this != &o) *this = RuntimeHandle(o);
    return *this;
  }
  // A moved-from handle is empty: using it throws hoare::Error.
  RuntimeHandle(RuntimeHandle&&) noexcept = default;
  RuntimeHandle& operator=(RuntimeHandle&&) noexcept = default;

  // Starts `f` as a process of this runtime, from any thread; join() the result
  // from any thread too. `f` is moved into the process.
  template <class F>
  JoinHandle<detail::result_of_t<F>> spawn(F&& f) const {
    auto h = detail::bridge_call(
        [&] { return ffi::handle_spawn(get(), detail::make_task(std::forward<F>(f))); });
    return JoinHandle<detail::result_of_t<F>>(std::move(h));
  }

  // Whether the runtime has begun to shut down.
  bool is_shut_down() const { return ffi::handle_is_shut_down(get()); }
  // Its number of worker threads.
  std::size_t workers() const { return ffi::handle_workers(get()); }

 private:
  friend class Runtime;
  explicit RuntimeHandle(rust::Box<ffi::RuntimeHandle> h) : h_(std::move(h)) {}
  const ffi::RuntimeHandle& get() const {
    if (!h_) throw Error("hoare: use of an empty (moved-from) RuntimeHandle");
    return **h_;
  }
  detail::Handle<ffi::RuntimeHandle> h_;
};

// A runtime, running from construction until shutdown() or destruction. Shutdown
// stops the workers and cancels every process that has not finished (it unwinds
// with hoare::Cancelled, running its destructors; its join() throws Cancelled), as
// run() does when its root process returns. Call shutdown() from a plain thread:
// from one of the runtime's processes it throws hoare::Error (it would wait for
// the worker it runs on); the destructor, which cannot throw, then starts the
// shutdown on a thread of its own and returns.
class Runtime {
 public:
  // A runtime with the default number of workers (hoare::default_workers()).
  Runtime() : Runtime(RunOptions{}) {}
  explicit Runtime(const RunOptions& opts)
      : rt_(detail::bridge_call([&] {
          ffi::RunOpts o{opts.workers, opts.stack_size};
          return ffi::rt_new(o);
        })),
        handle_(ffi::rt_handle(*rt_)) {}
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() {
    try {
      ffi::rt_shutdown(*rt_, true);
    } catch (...) {
      // Only a Rust panic can fail here; a destructor must not throw.
    }
  }

  // A handle for other threads (copy it freely).
  RuntimeHandle handle() const { return handle_; }

  // Starts `f` as a process of this runtime (see RuntimeHandle::spawn).
  template <class F>
  JoinHandle<detail::result_of_t<F>> spawn(F&& f) const {
    return handle_.spawn(std::forward<F>(f));
  }

  // Shuts the runtime down now and waits for its workers (a second call does
  // nothing). hoare::Error from a process.
  void shutdown() {
    detail::bridge_call([&] { ffi::rt_shutdown(*rt_, false); });
  }

  bool is_shut_down() const { return handle_.is_shut_down(); }
  std::size_t workers() const { return handle_.workers(); }

 private:
  rust::Box<ffi::RuntimeBox> rt_;
  RuntimeHandle handle_;
};

}  // namespace hoare
