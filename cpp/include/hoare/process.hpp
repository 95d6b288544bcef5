// Processes: run() starts a runtime, spawn() a process (JoinHandle, SpawnOptions),
// this_proc the operations on the running process; what happens to an exception
// nobody joins (set_unjoined_failure_handler).
//
// THREAD-LOCAL HAZARD: a process may migrate to another worker thread whenever it
// blocks; see hoare/hoare.hpp and cpp/README.md ("The thread-local hazard").
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "hoare/detail/ffi.hpp"
#include "hoare/error.hpp"

namespace hoare {

// The result of a process whose body returns void.
struct Unit {
  bool operator==(const Unit&) const { return true; }
};

// A process that an exception ended and that nobody joins: its handle was
// detached or destroyed without join() (before or after the process ended).
struct UnjoinedFailure {
  std::uint64_t id;                 // the process's this_proc::id()
  std::optional<std::string> name;  // its name (SpawnOptions::name), if any
  std::exception_ptr error;         // what it threw
};

// Called once for every UnjoinedFailure, by whichever of the process and its
// handle goes last. It must not throw; it should not block.
using UnjoinedFailureHandler = void (*)(const UnjoinedFailure&) noexcept;

namespace detail {
inline std::atomic<UnjoinedFailureHandler> unjoined_handler{nullptr};

// The message of an exception, without type information beyond std::exception.
inline std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}
}  // namespace detail

// The default handler: one line on stderr, e.g.
//   hoare: process "reader" (id 12) ended by an exception nobody joined: bad input
inline void print_unjoined_failure(const UnjoinedFailure& f) noexcept {
  try {
    std::string who =
        f.name ? "\"" + *f.name + "\" (id " + std::to_string(f.id) + ")" : std::to_string(f.id);
    std::string line = "hoare: process " + who +
                       " ended by an exception nobody joined: " + detail::describe(f.error) + "\n";
    std::fputs(line.c_str(), stderr);
  } catch (...) {
    std::fputs("hoare: a process ended by an exception nobody joined\n", stderr);
  }
}

// Sets what happens to the exception of a process nobody joins (nullptr: the
// default, print_unjoined_failure); returns the previous handler. std::thread
// would terminate the program; a handler that calls std::terminate() does that.
// Exceptions of processes that are joined (also by par, par_for, scope) are the
// joiner's; hoare::Cancelled (a process unwound at shutdown) is never reported.
inline UnjoinedFailureHandler set_unjoined_failure_handler(UnjoinedFailureHandler h) noexcept {
  return detail::unjoined_handler.exchange(h);
}

namespace detail {
template <class F>
using result_of_t = std::invoke_result_t<std::decay_t<F>&>;

template <class R>
using stored_t = std::conditional_t<std::is_void_v<R>, Unit, R>;

inline bool is_cancelled(const std::exception_ptr& e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const Cancelled&) {
    return true;
  } catch (...) {
    return false;
  }
}

// Hands an exception nobody observed to the unjoined-failure handler.
inline void report_unjoined(const UnjoinedFailure& f) noexcept {
  if (is_cancelled(f.error)) return;
  if (auto h = unjoined_handler.load()) {
    h(f);
  } else {
    print_unjoined_failure(f);
  }
}

// The result slot a Task keeps for join(). The task outlives the process's body
// (FnTask destroys the callable as soon as the body returns) until the joiner takes
// the result, or, if nobody joins, until both the process and its handle are gone;
// an exception nobody took is reported then.
template <class R>
class ResultTask : public ffi::Task {
 public:
  ~ResultTask() override {
    if (error && !observed) {
      report_unjoined(UnjoinedFailure{failed_id, std::move(failed_name), std::move(error)});
    }
  }

  std::optional<stored_t<R>> value;
  std::exception_ptr error;
  // Whether a joiner has taken the error (join(), or a Scope's join_all).
  bool observed = false;
  // Who threw, recorded only when the body throws.
  std::uint64_t failed_id = 0;
  std::optional<std::string> failed_name;

  stored_t<R> take() {
    observed = true;
    if (error) std::rethrow_exception(error);
    return std::move(*value);
  }
  std::exception_ptr observe_error() {
    observed = true;
    return error;
  }

 protected:
  // Records the failing process's id and name (in the process, after the body).
  void note_failure() noexcept {
    failed_id = ffi::proc_id();
    try {
      rust::String n;
      if (ffi::proc_name(n)) failed_name.emplace(std::string(n));
    } catch (...) {
    }
  }
};

template <class F, class R>
class FnTask final : public ResultTask<R> {
 public:
  explicit FnTask(F f) : f_(std::in_place, std::move(f)) {}
  void run() noexcept override {
    try {
      if constexpr (std::is_void_v<R>) {
        (*f_)();
        this->value.emplace();
      } else {
        this->value.emplace((*f_)());
      }
    } catch (...) {
      this->error = std::current_exception();
    }
    // The callable and what it captured go as soon as the body has returned, as
    // with std::thread and in Rust: a captured channel end poisons its channel now,
    // not when somebody joins. Outside the handler: a destructor may block.
    f_.reset();
    if (this->error) this->note_failure();
  }

 private:
  std::optional<F> f_;
};

template <class F>
std::unique_ptr<ffi::Task> make_task(F&& f) {
  using Fn = std::decay_t<F>;
  return std::make_unique<FnTask<Fn, result_of_t<F>>>(Fn(std::forward<F>(f)));
}

template <class R>
R finish(std::unique_ptr<ffi::Task> t) {
  auto* rt = static_cast<ResultTask<R>*>(t.get());
  if constexpr (std::is_void_v<R>) {
    rt->take();
  } else {
    return rt->take();
  }
}
}  // namespace detail

// Options of a spawned process.
struct SpawnOptions {
  // Never migrate off the worker the process starts on (see THREAD-LOCAL HAZARD).
  bool pinned = false;
  // Stack size in bytes; 0: the runtime's default.
  std::size_t stack_size = 0;

  SpawnOptions& pin(bool on = true) {
    pinned = on;
    return *this;
  }
  SpawnOptions& stack(std::size_t bytes) {
    stack_size = bytes;
    return *this;
  }
  // Run on an OS thread of its own, for blocking system calls (see spawn_blocking).
  bool own_thread = false;
  // The process's name (this_proc::name(), overflow reports); empty: unnamed.
  std::string proc_name;

  SpawnOptions& thread(bool on = true) {
    own_thread = on;
    return *this;
  }
  SpawnOptions& name(std::string n) {
    proc_name = std::move(n);
    return *this;
  }
};

// The number of workers run() starts by default: HOARE_WORKERS or the core count.
inline std::size_t default_workers() noexcept {
  return ffi::default_workers();
}

// Options of the runtime started by run().
struct RunOptions {
  // Worker threads; 0: HOARE_WORKERS or the number of cores.
  std::size_t workers = 0;
  // Default stack size of processes in bytes; 0: the runtime's default.
  std::size_t stack_size = 0;
};

namespace detail {
// Waits for a process and returns its task; a failure of the process itself is a
// hoare::ProcessError.
inline std::unique_ptr<ffi::Task> join_process(rust::Box<ffi::ProcHandle> h) {
  try {
    return ffi::join(std::move(h));
  } catch (const rust::Error& e) {
    std::string m = e.what();
    if (m.rfind("hoare: process", 0) == 0) throw ProcessError(m);
    throw_error(e);
  }
}
}  // namespace detail

// A spawned process. join() returns its result or rethrows its exception. A handle
// destroyed without join() detaches the process (it keeps running), as in Rust; if
// an exception ends a process nobody joins, it is reported (on stderr by default,
// see set_unjoined_failure_handler). The process's callable, with everything it
// captured, is destroyed when its body returns or throws, not at join().
template <class R>
class JoinHandle {
 public:
  JoinHandle() = default;
  explicit JoinHandle(rust::Box<ffi::ProcHandle> h) : h_(std::move(h)) {}
  JoinHandle(JoinHandle&&) noexcept = default;
  JoinHandle& operator=(JoinHandle&&) noexcept = default;

  bool joinable() const { return h_.has_value(); }

  // Waits for the process; returns its result or rethrows what it threw.
  R join() {
    if (!h_) throw Error("hoare: join on an empty or joined handle");
    rust::Box<ffi::ProcHandle> h = std::move(*h_);
    h_.reset();
    return detail::finish<R>(detail::join_process(std::move(h)));
  }

  // Lets the process run on without a handle.
  void detach() { h_.reset(); }

 private:
  detail::Handle<ffi::ProcHandle> h_;
};

// Runs `f` as the first process of a new runtime, waits for it, shuts down and
// returns its result (or rethrows its exception).
template <class F>
detail::result_of_t<F> run(const RunOptions& opts, F&& f) {
  using R = detail::result_of_t<F>;
  ffi::RunOpts o{opts.workers, opts.stack_size};
  auto t = detail::bridge_call([&] { return ffi::run(detail::make_task(std::forward<F>(f)), o); });
  return detail::finish<R>(std::move(t));
}

template <class F>
detail::result_of_t<F> run(F&& f) {
  return run(RunOptions{}, std::forward<F>(f));
}

// Starts `f` as a new process (callable from a process, or a thread of a running
// runtime). `f` is moved into the process; it must not depend on its creating thread.
template <class F>
JoinHandle<detail::result_of_t<F>> spawn(const SpawnOptions& opts, F&& f) {
  ffi::SpawnOpts o{opts.pinned, opts.stack_size, opts.own_thread, rust::String(opts.proc_name)};
  auto h =
      detail::bridge_call([&] { return ffi::spawn(detail::make_task(std::forward<F>(f)), o); });
  return JoinHandle<detail::result_of_t<F>>(std::move(h));
}

template <class F>
JoinHandle<detail::result_of_t<F>> spawn(F&& f) {
  return spawn(SpawnOptions{}, std::forward<F>(f));
}

// Starts `f` pinned to one worker: safe for code that caches thread_local addresses.
template <class F>
JoinHandle<detail::result_of_t<F>> spawn_pinned(F&& f) {
  return spawn(SpawnOptions{}.pin(), std::forward<F>(f));
}

// Starts `f` on an OS thread of its own: for code that makes blocking system calls
// (file or socket I/O, waiting on a mutex) without stalling a worker. Channel
// operations there block the thread. Equivalent to spawn(SpawnOptions{}.thread(), f).
template <class F>
JoinHandle<detail::result_of_t<F>> spawn_blocking(F&& f) {
  return spawn(SpawnOptions{}.thread(), std::forward<F>(f));
}

// Operations on the running process.
namespace this_proc {
// A number that identifies the running process (0 outside any process).
inline std::uint64_t id() noexcept {
  return ffi::proc_id();
}
// The running process's name (SpawnOptions::name); for a plain thread, the
// thread's name; nullopt if it has none.
inline std::optional<std::string> name() {
  rust::String n;
  if (!ffi::proc_name(n)) return std::nullopt;
  return std::string(n);
}
// Whether the caller runs as a process: on a worker or on a thread of its own
// (spawn_blocking); false on a plain thread. Where it is true, spawn() works.
inline bool in_process() noexcept {
  return ffi::in_process();
}
// Lets other ready processes run.
inline void yield() {
  detail::bridge_call([] { ffi::yield_now(); });
}
template <class Rep, class Period>
void sleep_for(std::chrono::duration<Rep, Period> d) {
  auto ns = detail::to_ns(d);
  detail::bridge_call([ns] { ffi::sleep_ns(ns); });
}
template <class Clock, class Dur>
void sleep_until(std::chrono::time_point<Clock, Dur> tp) {
  auto ns = detail::until_ns(tp);
  detail::bridge_call([ns] { ffi::sleep_ns(ns); });
}
}  // namespace this_proc

}  // namespace hoare
