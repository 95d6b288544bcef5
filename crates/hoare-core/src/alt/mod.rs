//! Alternation (`docs/semantics.md#alternation`): wait for the first of several
//! guards, choose exactly one, and leave no trace on the others.
//!
//! # Guards
//! | guard | ready when | result |
//! |---|---|---|
//! | receive on a channel end | a value can be taken now | `Result<T, RecvError>` |
//! | send on a channel end | the value can be delivered now | `Result<(), SendError<T>>` (the value comes back on poison) |
//! | timeout (a [`Timer`](crate::timer::Timer)) | its deadline has passed | — |
//! | skip | always, but taken only when no other guard is ready | — |
//! | alting barrier ([`AltingBarrierEnd`], see [`barrier`]) | every enrolled end offers it | — (all offering alts choose it at once) |
//!
//! Every guard may carry a boolean precondition; a guard whose precondition is
//! false is never chosen (and its channel is not touched). A guard on a poisoned
//! channel is ready and reports the poison. Ends of every sharing kind and
//! buffering work, and both ends of one channel may be in alts of two processes at
//! once (alt-to-alt).
//!
//! Timeouts take any [`Timer`](crate::timer::Timer): the alt asks for its deadline
//! once (when it finds nothing ready and is about to wait; until then an
//! [`expired`](crate::timer::Timer::expired) timer counts as a ready guard at its
//! place in the order) and tells it that it fired only when its guard is chosen, so an
//! [`Egg`](crate::timer::Egg) (or a `Duration`) restarts on every alt, a
//! [`Repeat`](crate::timer::Repeat) advances one period per firing and never
//! restarts, and a [`Date`](crate::timer::Date) (or an `Instant`) stays expired.
//! Pass a timer that lives across alts by `&mut` (`after(&mut tick)`): a
//! `Repeat` is `Copy`, and a copy that fires does not advance the original.
//!
//! An alt that chooses `skip`, or a timeout that had expired before the alt began,
//! has polled: it spends the process's
//! [cooperative budget](crate::park#the-cooperative-budget), so a loop over such an
//! alt yields to the other processes (and due timers) of its worker now and then.
//!
//! # Policies
//! * **pri** ([`alt!`](crate::alt!), [`pri_alt!`](crate::pri_alt!),
//!   [`Alt::select`]): of the ready guards, the first in order is chosen.
//! * **fair** ([`fair_alt!`](crate::fair_alt!), [`Alt::select_fair`]): the order
//!   starts just after the guard chosen last time, kept in a [`Fair`] that the
//!   caller holds across the alts of one loop; a guard that stays ready is chosen at
//!   least once every `n` alts over `n` guards.
//!
//! # The macro form
//! For a fixed set of guards (at most 32); nothing is allocated. The chosen arm's
//! body runs inline in the caller, so `break`, `continue`, `return` and `?` work.
//!
//! ```text
//! alt! {                                   // also pri_alt!; fair_alt! { fair; ... }
//!     recv(rx) -> v => body,               // v: Result<T, RecvError>
//!     recv(rx) if cond -> v => body,       // precondition: any bool expression
//!     recv(rx) => body,                    // the value is dropped
//!     send(tx, value) -> r => body,        // r: Result<(), SendError<T>>
//!     send(tx, value) if cond => body,
//!     after(timer) => body,                // timer: Duration, Instant, &mut Egg/Repeat/Date…
//!     after(timer) if cond => body,
//!     skip => body,
//!     skip if cond => body,
//!     barrier(&mut end) => body,           // end: AltingBarrierEnd
//!     barrier(&mut end) if cond => body,
//! }
//! ```
//! `-> pattern` takes any irrefutable pattern. A body is an expression followed by
//! a comma, or a block (comma optional); all bodies have the same type, which is
//! the macro's. `rx`/`tx` are places holding a [`Receiver`](crate::chan::Receiver)
//! or a [`Sender`](crate::chan::Sender) (or references to them). A send guard's
//! value is evaluated when the alt starts (only if its precondition holds) and is
//! **dropped if another guard is chosen**; use the [`Alt`] builder to get unsent
//! values back.
//!
//! ```
//! use hoare_core::alt;
//! use hoare_core::chan::{Channel, RecvError};
//! use hoare_core::timer::Repeat;
//! use std::time::Duration;
//!
//! let (data_tx, data) = Channel::builder().bounded(8).one2one::<u32>();
//! let (stop_tx, stop) = Channel::builder().bounded(1).one2one::<()>();
//! let mut tick = Repeat::new(Duration::from_millis(1));
//! for i in 0..3 {
//!     data_tx.send(i).unwrap();
//! }
//! stop_tx.send(()).unwrap();
//! let (mut sum, mut ticks) = (0, 0);
//! loop {
//!     alt! {
//!         recv(data) -> v => sum += v?,
//!         recv(stop) if sum >= 3 => break,
//!         after(&mut tick) => ticks += 1,
//!     }
//! }
//! assert_eq!(sum, 3);
//! # Ok::<(), RecvError>(())
//! ```
//!
//! # The builder form
//! [`Alt`] takes any number of guards, replicated guards over iterators of ends
//! ([`Alt::recv_for`], [`Alt::send_for`]), and a handler per guard; it returns
//! which guard (and element) [`Fired`] with its handler's output. For the common
//! "one reader over many channels" case, [`recv_any`] / [`fair_recv_any`] (no
//! allocation up to 32 ends) and [`RecvAny`] (built once, reused for every alt)
//! return the index of the end and its value directly.
//!
//! # How it works
//! Go's recipe for `select` (see the core's `chan/select.rs`): one
//! [`Waiter`](crate::waiter::Waiter) per alt is the single commit point for every
//! way the alt can end (a partner's communication, poison, the timeout). First each
//! guard is tried under its own channel's lock alone (an alt that is not registered
//! anywhere can claim a passive partner safely, so the first success is the choice;
//! when writers are always ready that is one lock per alt). If nothing was ready,
//! the alt locks all its channels in address order, tries again, registers the
//! waiter on every guard, releases the locks and waits with the earliest deadline;
//! after the wait it unregisters everywhere. A registered alt is purely passive: it
//! is claimed by one party at a time under one channel's lock, so two alts on the
//! two ends of a channel never spin or offer and accept (unlike ProXC++'s
//! alt-to-alt protocol): the second to lock the channel claims the first.
//!
//! Every alt runs in one engine (`engine.rs`); a [`RecvAny`] brings its own plan
//! to it (its lock order computed once, a waiter on the heap whose entries may stay
//! in the queues between alts, see `any.rs`).
//!
//! | file | what it holds |
//! |---|---|
//! | `macros.rs`, `builder.rs`, `any.rs` | the three forms: [`alt!`](crate::alt!), [`Alt`] (and `recv_any`), [`RecvAny`] |
//! | `policy.rs` | [`Fair`] |
//! | `case.rs` | the guards as the engine drives them (channel, timeout, skip) |
//! | `engine.rs` | the one engine, and the plan a set that outlives its alts adapts it with |
//! | `barrier.rs` | alting barriers and their guard |

mod any;
pub mod barrier;
mod builder;
mod case;
mod engine;
mod macros;
mod policy;

pub use any::RecvAny;
#[doc(hidden)]
pub use barrier::BarrierCase;
pub use barrier::{AltingBarrier, AltingBarrierEnd};
pub use builder::{fair_recv_any, recv_any, Alt, Fired, SendKey};
#[doc(hidden)]
pub use case::{Case, Kind, RecvCase, SendCase, SkipCase, TimeoutCase};
#[doc(hidden)]
pub use engine::select as __select;
pub use policy::Fair;

/// Evaluates a guard's precondition (the macro's way of avoiding parentheses
/// lints).
#[doc(hidden)]
#[inline(always)]
pub const fn __enabled(cond: bool) -> bool {
    cond
}
