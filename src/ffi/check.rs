//! The checking runtime from C++ (`cpp/include/hoare/check.hpp`): runs a C++ body
//! (a `Task` whose `run` may be called once per execution) under `hoare::check`.
//! Built with the `cxx` feature; without the `check` feature `check_run` fails
//! with a message saying so.

use super::bridge::{CheckOpts, CheckStats, Task};

#[cfg(feature = "check")]
std::thread_local! {
    /// The failure a C++ body reported in this execution (an exception that
    /// escaped it): raised as a panic once the body has returned to Rust.
    static FAILED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Records that the C++ body of the running execution failed (its exception's
/// message): the checker reports it as a panic of the root.
pub(super) fn check_fail(msg: &str) {
    #[cfg(feature = "check")]
    FAILED.with(|f| *f.borrow_mut() = Some(msg.to_owned()));
    #[cfg(not(feature = "check"))]
    let _ = msg;
}

/// Runs `task` under the checker with `opts`; a failure comes back as the
/// report's text.
#[cfg(feature = "check")]
pub(super) fn check_run(
    mut task: cxx::UniquePtr<Task>,
    opts: &CheckOpts,
) -> Result<CheckStats, String> {
    use std::time::Duration;
    // C++ processes are suspended inside C++ frames, which a Rust unwind
    // must not cross: leftovers are abandoned, as before issue 13's unwinding.
    let mut b = hoare_runtime::check::Builder::new().unwind(false);
    b = match opts.mode {
        1 => b.random(opts.executions),
        2 => b.pct(opts.depth, opts.executions),
        3 => b.delay_bound(opts.depth),
        _ => b.exhaustive(),
    }
    .seed(opts.seed);
    if opts.max_steps > 0 {
        b = b.max_steps(opts.max_steps);
    }
    if opts.max_time_ms > 0 {
        b = b.max_time(Duration::from_millis(opts.max_time_ms));
    }
    if !opts.replay.is_empty() {
        b = b.replay(&opts.replay);
    }
    if opts.quiescent {
        b = b.quiescent_time();
    }
    // Not a `RefCell`: an execution left over (a deadlock, a cut one) is
    // abandoned inside the call, which would keep such a borrow forever and
    // fail the next execution (and the replay of a failing one).
    let task: *mut cxx::UniquePtr<Task> = &mut task;
    let body = || {
        FAILED.with(|f| f.borrow_mut().take());
        // SAFETY: `task` lives until `try_run` returns; the checker runs one
        // execution at a time on this thread, and tears one down (abandoning,
        // never resuming, a call left suspended: `unwind(false)`) before it
        // runs the network again, so no two calls use the task at once.
        if let Some(t) = unsafe { (*task).as_mut() } {
            super::bridge::task_run(t);
        }
        if let Some(m) = FAILED.with(|f| f.borrow_mut().take()) {
            panic!("{m}");
        }
    };
    super::guard(|| match b.try_run(body) {
        Ok(s) => Ok(CheckStats {
            executions: s.executions(),
            complete: s.complete(),
        }),
        Err(r) => Err(format!("hoare::check: {r}")),
    })
}

/// Without the `check` feature: an error.
#[cfg(not(feature = "check"))]
pub(super) fn check_run(
    task: cxx::UniquePtr<Task>,
    opts: &CheckOpts,
) -> Result<CheckStats, String> {
    let _ = (task, opts);
    Err("hoare: built without the `check` feature (hoare::check needs it)".to_owned())
}
