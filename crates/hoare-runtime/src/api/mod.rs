//! The public API, one concept per file, each using only the ones listed before
//! it: `error` (why a process or a spawn failed), `join` (a process's body and
//! its result), `builder` (spawning), `this_proc` (what a process asks about
//! itself), `runtime` (runtimes and `run`), `scope` (scopes and `PAR`).

mod builder;
mod error;
mod join;
mod runtime;
mod scope;
mod this_proc;

pub use builder::{spawn, spawn_blocking, Builder, DEFAULT_STACK_SIZE, MAX_STACK_SIZE};
pub use error::ProcessError;
pub use join::{JoinHandle, Process};
pub use runtime::{default_workers, run, try_run, Handle, Runtime, RuntimeBuilder, MAX_WORKERS};
pub use scope::{par, par2, par3, par_for, scope, ParFn, Scope, ScopedJoinHandle};
pub use this_proc::{id, in_process, name, sleep_for, sleep_until, yield_now};
