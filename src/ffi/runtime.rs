//! A runtime C++ starts, uses from several threads and shuts down explicitly
//! (`hoare::Runtime`), and handles to it for plain threads and C callbacks
//! (`hoare::RuntimeHandle`): the Rust [`Runtime`] and [`Handle`].

use super::bridge::{RunOpts, Task};
use super::guard;
use super::process::{run_task, ProcHandle};
use hoare_runtime::{Handle, Runtime};

/// A runtime as C++ holds it (`hoare::Runtime`): running until `rt_shutdown`.
pub struct RuntimeBox {
    rt: Option<Runtime>,
    handle: Handle,
}

/// A handle to a runtime as C++ holds it (`hoare::RuntimeHandle`).
pub struct RuntimeHandle(Handle);

/// The error of an explicit shutdown from a process (it would wait for the
/// worker it runs on).
const SHUTDOWN_IN_PROCESS: &str =
    "hoare: Runtime::shutdown called from a process (call it from a plain thread)";

pub(super) fn rt_new(opts: &RunOpts) -> Result<Box<RuntimeBox>, String> {
    guard(|| {
        let mut b = Runtime::builder();
        if opts.workers > 0 {
            b = b.workers(opts.workers);
        }
        if opts.stack_size > 0 {
            b = b.stack_size(opts.stack_size);
        }
        let rt = b.try_build().map_err(|e| format!("hoare: {e}"))?;
        let handle = rt.handle();
        Ok(Box::new(RuntimeBox {
            rt: Some(rt),
            handle,
        }))
    })
}

pub(super) fn rt_handle(rt: &RuntimeBox) -> Box<RuntimeHandle> {
    Box::new(RuntimeHandle(rt.handle.clone()))
}

/// Shuts the runtime down (once; later calls do nothing). From a process it is an
/// error unless `detach`, when the shutdown runs on a thread of its own instead
/// (the C++ destructor, which cannot throw, uses that).
pub(super) fn rt_shutdown(rt: &mut RuntimeBox, detach: bool) -> Result<(), String> {
    guard(|| {
        if hoare_runtime::in_process() {
            if !detach {
                return Err(SHUTDOWN_IN_PROCESS.into());
            }
            if let Some(r) = rt.rt.take() {
                std::thread::Builder::new()
                    .name("hoare-shutdown".into())
                    .spawn(move || r.shutdown())
                    .map_err(|e| format!("hoare: cannot start the shutdown thread: {e}"))?;
            }
            return Ok(());
        }
        if let Some(r) = rt.rt.take() {
            r.shutdown();
        }
        Ok(())
    })
}

pub(super) fn handle_current() -> Result<Box<RuntimeHandle>, String> {
    Handle::current()
        .map(|h| Box::new(RuntimeHandle(h)))
        .ok_or_else(|| "hoare: RuntimeHandle::current called outside a runtime".to_string())
}

pub(super) fn handle_clone(h: &RuntimeHandle) -> Box<RuntimeHandle> {
    Box::new(RuntimeHandle(h.0.clone()))
}

pub(super) fn handle_spawn(
    h: &RuntimeHandle,
    task: cxx::UniquePtr<Task>,
) -> Result<Box<ProcHandle>, String> {
    guard(move || {
        if h.0.is_shut_down() {
            // The task is dropped here, on the caller's thread, as Rust drops the
            // closure: the C++ side sees no result, only the error.
            return Err("hoare: spawn into a runtime that has shut down".into());
        }
        h.0.try_spawn(move || run_task(task))
            .map(|p| Box::new(ProcHandle(p)))
            .map_err(|e| format!("hoare: {e}"))
    })
}

pub(super) fn handle_is_shut_down(h: &RuntimeHandle) -> bool {
    h.0.is_shut_down()
}

pub(super) fn handle_workers(h: &RuntimeHandle) -> usize {
    h.0.workers()
}
