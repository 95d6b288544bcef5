//! hoare's synchronisation core.
//!
//! Everything here is a state machine over atomics that never switches stacks: when
//! a party must wait it goes through the park/unpark seam in [`park`], which the
//! runtime implements for processes, [`park::ThreadParker`] for plain OS threads,
//! and loom for model checking (build with `RUSTFLAGS="--cfg loom"`).
//!
//! * [`waiter`]: the one commit word per wait that every wake-up goes through.
//! * [`registration`]: the one type that undoes a waiting party's registration
//!   on every exit, return or unwind.
//! * [`sched`]: the protocols the scheduler is built from (process park/notify,
//!   worker sleep/wake), kept here so loom can check them.

pub mod alt;
pub mod barrier;
pub mod chan;
pub mod park;
pub mod registration;
pub mod sched;
mod sync;
pub mod timer;
pub mod waiter;

// The loom models, inside the crate so that they can drive its internals.
#[cfg(all(test, loom))]
mod loom_tests;
