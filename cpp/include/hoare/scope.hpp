// Structured parallelism: scope() (scoped forking: children may borrow the
// caller's locals), par() (PAR of a fixed set of callables) and par_for()
// (replicated PAR).
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "hoare/detail/ffi.hpp"
#include "hoare/error.hpp"
#include "hoare/process.hpp"

namespace hoare {

template <class R>
class ScopedJoinHandle;

// Scoped forking (C++CSP2's ScopedForking, Rust's hoare::scope): the processes a
// Scope spawns may refer to the caller's locals, because scope() joins every one of
// them before it returns, also when the body throws.
//
//   std::vector<int> v{1, 2, 3};
//   hoare::scope([&](hoare::Scope& s) {
//     for (auto& x : v) s.spawn([&x] { x *= 10; });
//   });                                   // all joined here
//
// A child's exception is rethrown by its handle's join(); if nobody joined it,
// scope() rethrows the first such exception (in spawn order) after all have ended.
// An exception of the body itself takes precedence.
class Scope {
 public:
  Scope() = default;
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  template <class F>
  ScopedJoinHandle<detail::result_of_t<F>> spawn(F&& f) {
    return spawn(SpawnOptions{}, std::forward<F>(f));
  }
  template <class F>
  ScopedJoinHandle<detail::result_of_t<F>> spawn(const SpawnOptions& opts, F&& f);

  // Joins every child not joined yet; returns the first exception of those.
  std::exception_ptr join_all() noexcept {
    std::exception_ptr first;
    for (auto& c : children_) {
      if (!c->h) continue;
      try {
        auto t = detail::bridge_call([&] { return ffi::join(std::move(*c->h)); });
        c->h.reset();
        c->task = std::move(t);
        if (!c->taken) {
          auto e = c->error_of(c->task.get());
          if (!first) first = e;
        }
      } catch (...) {
        c->h.reset();
        if (!first) first = std::current_exception();
      }
    }
    return first;
  }

 private:
  template <class R>
  friend class ScopedJoinHandle;
  struct Child {
    std::optional<rust::Box<ffi::ProcHandle>> h;
    std::unique_ptr<ffi::Task> task;  // once joined by join_all
    bool taken = false;               // the handle's join() ran
    // The child's exception, which the scope has now observed (it is not reported
    // as unjoined).
    std::exception_ptr (*error_of)(ffi::Task*) = nullptr;
  };
  std::vector<std::unique_ptr<Child>> children_;
};

// A process of a Scope: join() returns its result or rethrows its exception (which
// then no longer makes scope() throw).
template <class R>
class ScopedJoinHandle {
 public:
  R join() {
    if (!c_ || c_->taken) throw Error("hoare: join on an empty or joined handle");
    c_->taken = true;
    std::unique_ptr<ffi::Task> t;
    if (c_->h) {
      rust::Box<ffi::ProcHandle> h = std::move(*c_->h);
      c_->h.reset();
      t = detail::join_process(std::move(h));
    } else {
      t = std::move(c_->task);
    }
    return detail::finish<R>(std::move(t));
  }
  bool joinable() const { return c_ && !c_->taken; }

 private:
  friend class Scope;
  explicit ScopedJoinHandle(Scope::Child* c) : c_(c) {}
  Scope::Child* c_ = nullptr;
};

template <class F>
ScopedJoinHandle<detail::result_of_t<F>> Scope::spawn(const SpawnOptions& opts, F&& f) {
  using R = detail::result_of_t<F>;
  auto c = std::make_unique<Child>();
  c->error_of = [](ffi::Task* t) {
    return static_cast<detail::ResultTask<R>*>(t)->observe_error();
  };
  ffi::SpawnOpts o{opts.pinned, opts.stack_size, opts.own_thread, rust::String(opts.proc_name)};
  c->h.emplace(
      detail::bridge_call([&] { return ffi::spawn(detail::make_task(std::forward<F>(f)), o); }));
  children_.push_back(std::move(c));
  return ScopedJoinHandle<R>(children_.back().get());
}

// Runs body(scope) and joins every process it spawned on the scope; returns the
// body's result. Rethrows the body's exception, else the first exception of a child
// nobody joined, after all children have ended.
template <class F>
auto scope(F&& body) -> std::invoke_result_t<F&, Scope&> {
  using R = std::invoke_result_t<F&, Scope&>;
  Scope s;
  std::optional<detail::stored_t<R>> r;
  std::exception_ptr body_error;
  try {
    if constexpr (std::is_void_v<R>) {
      body(s);
      r.emplace();
    } else {
      r.emplace(body(s));
    }
  } catch (...) {
    // Not joined inside the handler: join blocks, and a process that migrated to
    // another thread must not leave a catch block there (the C++ runtime keeps the
    // caught exceptions per thread).
    body_error = std::current_exception();
  }
  auto child_error = s.join_all();
  if (body_error) std::rethrow_exception(body_error);
  if (child_error) std::rethrow_exception(child_error);
  if constexpr (!std::is_void_v<R>) return std::move(*r);
}

namespace detail {
template <class H>
void join_into(H& h, std::exception_ptr& first) {
  try {
    h.join();
  } catch (...) {
    if (!first) first = std::current_exception();
  }
}
}  // namespace detail

// Runs the callables in parallel (the first one in the calling process), waits for
// all of them and returns their results as a tuple (void results become hoare::Unit;
// all-void returns void). If any threw, rethrows the first (in argument order) after
// every branch has finished.
template <class F0, class... Fs>
auto par(F0&& f0, Fs&&... fs) {
  using Tuple = std::tuple<detail::stored_t<detail::result_of_t<F0>>,
                           detail::stored_t<detail::result_of_t<Fs>>...>;
  constexpr bool all_void =
      std::is_void_v<detail::result_of_t<F0>> && (std::is_void_v<detail::result_of_t<Fs>> && ...);
  auto handles = std::make_tuple(spawn(std::forward<Fs>(fs))...);
  std::optional<detail::stored_t<detail::result_of_t<F0>>> r0;
  std::exception_ptr first;
  try {
    if constexpr (std::is_void_v<detail::result_of_t<F0>>) {
      f0();
      r0.emplace();
    } else {
      r0.emplace(f0());
    }
  } catch (...) {
    first = std::current_exception();
  }
  std::tuple<std::optional<detail::stored_t<detail::result_of_t<Fs>>>...> rs;
  std::apply(
      [&](auto&... hs) {
        std::apply(
            [&](auto&... slots) {
              auto one = [&](auto& h, auto& slot) {
                try {
                  using HR = std::decay_t<decltype(h.join())>;
                  if constexpr (std::is_void_v<HR>) {
                    h.join();
                    slot.emplace();
                  } else {
                    slot.emplace(h.join());
                  }
                } catch (...) {
                  if (!first) first = std::current_exception();
                }
              };
              (one(hs, slots), ...);
            },
            rs);
      },
      handles);
  if (first) std::rethrow_exception(first);
  if constexpr (all_void) {
    return;
  } else {
    return std::apply([&](auto&... slots) { return Tuple(std::move(*r0), std::move(*slots)...); },
                      rs);
  }
}

// Replicated PAR over an integer range: f(i) for i in [first, last), in parallel.
// Rethrows the first failure (lowest i) after all have finished.
template <class Int, class F, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
void par_for(Int first, Int last, F&& f) {
  std::vector<JoinHandle<void>> hs;
  if (last > first) hs.reserve(static_cast<std::size_t>(last - first));
  for (Int i = first; i < last; ++i) {
    hs.push_back(spawn([&f, i] { f(i); }));
  }
  std::exception_ptr first_error;
  for (auto& h : hs) detail::join_into(h, first_error);
  if (first_error) std::rethrow_exception(first_error);
}

// Replicated PAR over a range: f(element&) for every element, in parallel.
template <class Range, class F, std::enable_if_t<!std::is_integral_v<std::decay_t<Range>>, int> = 0>
void par_for(Range&& range, F&& f) {
  std::vector<JoinHandle<void>> hs;
  for (auto& x : range) {
    auto* p = &x;
    hs.push_back(spawn([&f, p] { f(*p); }));
  }
  std::exception_ptr first_error;
  for (auto& h : hs) detail::join_into(h, first_error);
  if (first_error) std::rethrow_exception(first_error);
}
}  // namespace hoare
