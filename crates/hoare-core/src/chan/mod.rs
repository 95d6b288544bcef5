//! Channels: one2one, any2one, one2any and any2any; rendezvous, bounded,
//! overwriting and unbounded; with poison, extended rendezvous, timeouts, and the
//! select handle that alternation is built on.
//!
//! # Kinds and buffering
//! The sharing kind is in the type of each end: [`Sender<T, Any>`] and
//! [`Receiver<T, Any>`] can be cloned, the [`One`] ends cannot. The free functions
//! [`one2one`], [`any2one`], [`one2any`] and [`any2any`] make rendezvous channels;
//! [`Channel::builder`] makes any kind with any [`Buffer`]ing chosen at run time.
//!
//! ```
//! use hoare_core::chan::{any2one, Channel};
//! use std::thread;
//!
//! let (tx, rx) = any2one::<u32>();
//! let writers: Vec<_> = (0..4)
//!     .map(|i| {
//!         let tx = tx.clone();
//!         thread::spawn(move || tx.send(i).unwrap())
//!     })
//!     .collect();
//! drop(tx);
//! let mut got: Vec<u32> = rx.iter().collect(); // until every writer is gone
//! got.sort();
//! assert_eq!(got, [0, 1, 2, 3]);
//! for w in writers {
//!     w.join().unwrap();
//! }
//!
//! let (tx, rx) = Channel::builder().overwriting(2).one2one();
//! for i in 0..5 {
//!     tx.send(i).unwrap(); // never blocks; the oldest items are dropped
//! }
//! assert_eq!(rx.try_recv(), Ok(3));
//! assert_eq!(rx.try_recv(), Ok(4));
//! ```
//!
//! # Poison
//! Either end poisons the channel with `poison()` (unless it was made
//! [non-poisonable](Sender::non_poisonable)); dropping every end of one side poisons
//! it from that side. Afterwards every operation reports it, with these rules:
//! * a communication that completed before the poison is a success for both sides;
//!   each blocked party learns how its own wait ended from its own waiter, never
//!   from the channel's flag;
//! * a writer sees the poison at once; on a buffered channel poisoned by a writer,
//!   readers take the buffered items first and see the poison when it is empty; a
//!   reader's poison discards the buffer;
//! * a failed send gives its value back ([`SendError`], [`TrySendError`],
//!   [`SendTimeoutError`]).
//!
//! ```
//! use hoare_core::chan::{Channel, RecvError};
//!
//! let (tx, rx) = Channel::builder().bounded(4).one2one();
//! tx.send(1).unwrap();
//! tx.poison();
//! assert_eq!(tx.send(2).unwrap_err().into_inner(), 2); // the value comes back
//! assert_eq!(rx.recv(), Ok(1)); // the buffer is drained first
//! assert_eq!(rx.recv(), Err(RecvError::Poisoned));
//! ```
//!
//! # How it works
//! A blocked party owns a [`Waiter`](crate::waiter::Waiter) and a value slot (a
//! *packet*) on its own stack, and puts an entry pointing at both into the FIFO of
//! its side of the channel, behind a short lock that is never held across a park.
//! The party that arrives second claims the first's waiter (`try_claim`), releases
//! the lock, moves the value from one packet to the other and `finish`es the
//! waiter; nothing spins. A plain blocking operation without a deadline can only be
//! ended by holders of the channel's lock, so it is claimed with a plain store.
//! Every buffering shares one state (the two queues, the poison flag, and a buffer
//! that stays empty on a rendezvous channel); the buffering only changes what a
//! send or a receive does under the lock. Plain OS threads use every channel: their
//! waits go through the thread's parker.
//!
//! | file | what it holds |
//! |---|---|
//! | `ends.rs` | [`Sender`] and [`Receiver`]: the public operations |
//! | `ops.rs` | those operations, once for every buffering: try under the lock, else register and wait |
//! | `select.rs` | one channel, locked: try a send or a receive (dispatching on the buffering), register, unregister; completing what was decided. Alternation is built on it |
//! | `rendezvous.rs`, `buffered.rs` | what a send and a receive do under the lock, per buffering; the extended rendezvous's second phase |
//! | `raw.rs` | [`RawChan`]: the shared state of one channel (the lock, the queues, the poison flag, the buffer, the end counts); poison |
//! | `waitq.rs`, `packet.rs` | the FIFO of waiting parties; the value slot and the one hand-off between two slots |
//! | `factory.rs`, `bundle.rs`, `error.rs` | making channels, request–reply, errors |
//! | `broadcast.rs` | [`broadcast()`]: one writer to every enrolled reader, on the same protocol (its own state and alt guards) |
//!
//! # Large values
//! A value is moved by pointer, once into the channel and once out: a blocked
//! party's packet holds it, and whoever completes the communication copies it
//! straight from one packet (or the buffer) to the other. On the stack, a send
//! keeps no copy besides the caller's value and the `Result` it returns (which
//! gives the value back on failure), a receive one besides the caller's
//! `Result`, and an alt's receive guard one more (its packet). A process of
//! hoare's runtime with the default stack (128 KiB) can therefore send and receive
//! values of up to 32 KiB by every operation in an optimised build (see
//! `hoare::DEFAULT_STACK_SIZE`); for larger ones give it a larger stack, or send a
//! `Box`.

pub mod broadcast;
mod buffered;
pub mod bundle;
mod ends;
pub mod error;
mod factory;
pub(crate) mod ops;
mod packet;
mod raw;
mod rendezvous;
pub(crate) mod select;
mod waitq;

pub use broadcast::{
    broadcast, broadcast_bounded, broadcast_overwriting, BroadcastReceiver, BroadcastSender,
    RawBroadcast,
};
pub use bundle::{request_reply, request_reply_with, CallError, ClientEnd, Request, ServerEnd};
pub use ends::{Any, IntoIter, Iter, One, Receiver, Sender, Sharing};
pub use error::{
    RecvError, RecvTimeoutError, Refuse, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
pub use factory::{any2any, any2one, one2any, one2one, Buffer, Channel, ChannelBuilder};
pub use raw::{RawChan, Reason};

pub(crate) use packet::Packet;
pub(crate) use waitq::Entry;
