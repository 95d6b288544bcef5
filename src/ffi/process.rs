//! Processes: run, spawn and join C++ process bodies (`Task`s), and the per-process
//! operations of `hoare::this_proc`.

use super::backend;
use super::bridge::{self, RunOpts, SpawnOpts, Task};
use super::guard;
use hoare_core::timer::deadline_after;
use std::time::{Duration, Instant};

/// A process spawned from C++.
pub struct ProcHandle(pub(super) backend::Proc<cxx::UniquePtr<Task>>);

pub(super) fn run_task(mut task: cxx::UniquePtr<Task>) -> cxx::UniquePtr<Task> {
    if let Some(t) = task.as_mut() {
        bridge::task_run(t);
    }
    task
}

pub(super) fn run(
    task: cxx::UniquePtr<Task>,
    opts: &RunOpts,
) -> Result<cxx::UniquePtr<Task>, String> {
    let (workers, stack) = (opts.workers, opts.stack_size);
    guard(move || backend::run(workers, stack, move || run_task(task)))
}

pub(super) fn spawn(
    task: cxx::UniquePtr<Task>,
    opts: &SpawnOpts,
) -> Result<Box<ProcHandle>, String> {
    guard(move || {
        let name = (!opts.name.is_empty()).then(|| opts.name.clone());
        backend::spawn_with(opts.pinned, opts.stack_size, opts.thread, name, move || {
            run_task(task)
        })
        .map(|p| Box::new(ProcHandle(p)))
    })
}

pub(super) fn join(handle: Box<ProcHandle>) -> Result<cxx::UniquePtr<Task>, String> {
    guard(move || handle.0.join().map_err(backend::process_error))
}

pub(super) fn yield_now() -> Result<(), String> {
    guard(|| {
        backend::yield_now();
        Ok(())
    })
}

pub(super) fn sleep_ns(ns: u64) -> Result<(), String> {
    guard(|| {
        hoare_runtime::sleep_until(deadline_in(ns));
        Ok(())
    })
}

/// The instant `ns` nanoseconds from now (at most `FAR_FUTURE` ahead: a century
/// is "for ever"; C++ saturates longer durations at `u64::MAX` nanoseconds).
fn deadline_in(ns: u64) -> Instant {
    deadline_after(Duration::from_nanos(ns))
}

pub(super) fn proc_id() -> u64 {
    backend::proc_id()
}

/// The running process's name (a thread's name outside a process) into `out`;
/// false if it has none.
pub(super) fn proc_name(out: &mut String) -> bool {
    match hoare_runtime::name() {
        Some(n) => {
            *out = n;
            true
        }
        None => false,
    }
}

pub(super) fn in_process() -> bool {
    backend::in_process()
}

pub(super) fn default_workers() -> usize {
    hoare_runtime::default_workers()
}
