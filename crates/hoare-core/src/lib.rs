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
//! * [`chan`], [`alt`](mod@alt), [`barrier`], [`timer`]: what users build programs from.
//!
//! Every module is written against the crate-private `sync` module, the one place
//! that switches between `std` and loom; the loom models live in `loom_tests`
//! (built only under `--cfg loom`, in the crate so that they can drive internals).

pub mod alt;
pub mod barrier;
pub mod chan;
pub mod park;
pub mod readiness;
pub mod registration;
pub mod sched;
#[cfg(feature = "check")]
pub mod step;
mod sync;
pub mod timer;
pub mod wait;
pub mod waiter;

#[cfg(all(test, loom))]
mod loom_tests;

/// A scheduling point before an operation for a checking runtime, compiled only
/// with the `check` feature (without it, this is nothing): `check_step!(|| op)`,
/// where `op` builds a [`step::Op`].
macro_rules! check_step {
    ($op:expr) => {
        #[cfg(feature = "check")]
        $crate::step::step($op);
    };
}
pub(crate) use check_step;
