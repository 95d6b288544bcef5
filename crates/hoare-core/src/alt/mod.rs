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
//! Pass a timer that lives across alts by `&mut` (`after(&mut tick)`); a
//! [`Repeat`](crate::timer::Repeat) is not `Copy`, so `after(tick)` in a loop
//! does not compile (it would move the timer into the first alt), while the
//! stateless `Duration`, `Instant`, `Egg` and `Date` are passed by value.
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
//!     recv_with(rx, |v| expr) -> r => body, // extended rendezvous: r = Ok(expr), see below
//!     send(tx, value) -> r => body,        // r: Result<(), SendError<T>>
//!     send(tx, value) if cond => body,
//!     send_from(tx, &mut slot) -> r => body, // slot: Option<T>, see below
//!     after(timer) => body,                // timer: Duration, Instant, Egg, Date, &mut Repeat…
//!     after(timer) if cond => body,
//!     skip => body,
//!     skip if cond => body,
//!     barrier(&mut end) => body,           // end: AltingBarrierEnd
//!     barrier(&mut end) if cond => body,
//! }
//! ```
//! Broadcast ends ([`BroadcastReceiver`](crate::chan::BroadcastReceiver),
//! [`BroadcastSender`](crate::chan::BroadcastSender)) go in `recv`, `recv_with`,
//! `send` and `send_from` guards like channel ends.
//!
//! `-> pattern` takes any irrefutable pattern. A body is an expression followed by
//! a comma, or a block (comma optional); all bodies have the same type, which is
//! the macro's. `rx`/`tx` are places holding a [`Receiver`](crate::chan::Receiver)
//! or a [`Sender`](crate::chan::Sender) (or references to them). A `send` guard's
//! value is evaluated when the alt starts (only if its precondition holds) and is
//! **dropped if another guard is chosen**. To keep it, offer it from a slot:
//! `send_from(tx, &mut slot)` (`slot: Option<T>`, on a channel's or a
//! broadcast's writer) is enabled when its precondition holds and the slot holds
//! a value; the value leaves the slot when the alt starts and is back in it
//! before any arm's body runs, whichever way the guard was not taken (another
//! guard, a timeout or a skip chosen; a disabled guard never touches the slot).
//! On poison it comes back in `r`'s `SendError`, as for every send. The
//! [`Alt`] builder gives unsent values back with [`Alt::take_unsent`].
//!
//! ```
//! use hoare_core::alt;
//! use hoare_core::chan::{one2one, Channel};
//! use std::time::Duration;
//!
//! let (out, _nobody_reads) = one2one::<String>();
//! let (in_tx, input) = Channel::builder().bounded(1).one2one::<u32>();
//! in_tx.send(1).unwrap();
//! let mut pending = Some("result".to_string());
//! let got = alt! {
//!     send_from(out, &mut pending) -> r => { r.unwrap(); None }
//!     recv(input) -> v => v.ok(),
//! };
//! assert_eq!(got, Some(1));
//! assert_eq!(pending.as_deref(), Some("result")); // not sent: still ours
//! let timed_out = alt! {
//!     send_from(out, &mut pending) => false,
//!     after(Duration::from_millis(1)) => true,
//! };
//! assert!(timed_out && pending.is_some());
//! ```
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
//! # Extended rendezvous after an alt choice
//! A `recv_with(rx, f)` guard (builder: [`Alt::recv_with`]) is JCSP's alt
//! followed by `startRead`/`endRead`: when it is chosen, `f` runs on the value
//! while the writer is still held (a rendezvous writer stays blocked, a bounded
//! channel keeps the item's place), and the writer is released when `f` returns
//! (or panics), as [`Receiver::recv_with`](crate::chan::Receiver::recv_with)
//! does. The arm's body then runs with `f`'s result, the writer released. A
//! writer sees success even if the channel is poisoned while `f` runs.
//!
//! ```
//! use hoare_core::alt;
//! use hoare_core::chan::one2one;
//! use std::time::Duration;
//!
//! let (tx, rx) = one2one::<u32>();
//! let (log_tx, log) = hoare_core::chan::Channel::builder().unbounded().one2one();
//! let w = std::thread::spawn(move || {
//!     tx.send(20).unwrap();
//!     log_tx.send("writer released").unwrap();
//! });
//! let got = alt! {
//!     // The writer is blocked until this closure returns: nothing is logged yet.
//!     recv_with(rx, |v| { assert!(log.try_recv().is_err()); v + 1 }) -> r => r,
//!     after(Duration::from_secs(5)) => panic!("no writer"),
//! };
//! assert_eq!(got, Ok(21));
//! w.join().unwrap();
//! assert_eq!(log.recv(), Ok("writer released"));
//! ```
//!
//! # Ending an alt loop on poison
//! A guard on a poisoned channel is ready for ever (it reports the poison), so a
//! loop that merges several channels must stop offering a channel once it is
//! done, and end when none is left. [`Receiver::is_open`](crate::chan::Receiver::is_open)
//! (poisoned and nothing left to read: `false`, for good) and
//! [`Sender::is_open`](crate::chan::Sender::is_open) are that precondition; a
//! last `skip` guard, enabled only when every channel is done, ends the loop
//! (it cannot be chosen while a guard is enabled: a channel that closed after
//! its precondition was evaluated has a ready guard, which is chosen first):
//!
//! ```
//! use hoare_core::alt;
//! use hoare_core::chan::Channel;
//!
//! let (ta, a) = Channel::builder().bounded(4).one2one::<u32>();
//! let (tb, b) = Channel::builder().bounded(4).one2one::<u32>();
//! (1..=3).for_each(|i| ta.send(i).unwrap());
//! tb.send(10).unwrap();
//! drop((ta, tb)); // the writers are done
//! let mut sum = 0;
//! loop {
//!     alt! {
//!         recv(a) if a.is_open() -> v => sum += v.unwrap_or(0),
//!         recv(b) if b.is_open() -> v => sum += v.unwrap_or(0),
//!         skip if !a.is_open() && !b.is_open() => break,
//!     }
//! }
//! assert_eq!(sum, 16);
//! ```
//!
//! The builder form drops such a guard itself ([`Alt::recv_open`]) and ends the
//! loop with [`Alt::try_select`], which returns `None` when no guard is left.
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
//! | `par.rs` | [`Par`], [`par_send`], [`par_recv`]: parallel communication (occam's `PAR` of communications), a round of the engine per completion |

mod any;
pub mod barrier;
mod builder;
mod case;
pub(crate) use case::delegate_case;
mod engine;
mod macros;
mod par;
mod policy;

pub use any::RecvAny;
#[doc(hidden)]
pub use barrier::BarrierCase;
pub use barrier::{AltingBarrier, AltingBarrierEnd};
pub use builder::{fair_recv_any, recv_any, Alt, Fired, SendKey};
#[doc(hidden)]
pub use case::{
    Case, ExtRecvCase, Kind, RecvCase, SendCase, SendFromCase, SendGuardCase, SkipCase, TimeoutCase,
};
#[doc(hidden)]
pub use engine::select as __select;
pub use par::{par_recv, par_send, Par};
pub use policy::Fair;

/// Evaluates a guard's precondition (the macro's way of avoiding parentheses
/// lints).
#[doc(hidden)]
#[inline(always)]
pub const fn __enabled(cond: bool) -> bool {
    cond
}
