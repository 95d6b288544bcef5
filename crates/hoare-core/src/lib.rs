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
//! * [`readiness`]: a socket's I/O readiness as an edge-triggered poller reports
//!   it, and the parties parked until it.
//! * [`sched`]: the protocols the scheduler is built from (process park/notify,
//!   worker sleep/wake), kept here so loom can check them.

pub mod alt;
pub mod barrier;
pub mod chan;
pub mod park;
pub mod readiness;
pub mod registration;
pub mod sched;
pub mod sync;
pub mod timer;
pub mod waiter;
