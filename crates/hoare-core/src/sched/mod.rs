//! Scheduler protocols (process park/notify state, worker idle/notify, join
//! completion), model-checked with loom.
//!
//! The runtime (`hoare-runtime`) builds its scheduler from these pieces; they hold
//! no stacks, no queues and no clocks, only the atomic words whose races matter:
//!
//! * [`ProcState`]: the park/notify word of one process (no lost and no double
//!   wake-up when an unpark races the worker's post-switch park, or a timer).
//! * [`Idle`]: how workers go to sleep and how new work wakes one (no lost wake-up
//!   when work arrives while a worker is falling asleep).
//! * [`JoinSlot`]: a process's result and the one joiner that waits for it.

mod idle;
mod join;
mod proc_state;

pub use idle::{workers_awake, Idle, Watch, AWAKE, MAX_WORKERS, NO_DEADLINE};
pub use join::JoinSlot;
pub use proc_state::ProcState;
