//! The two ends of a channel. The sharing kind is a type parameter: an end whose
//! kind is [`Any`] may be cloned (shared by many processes), an end whose kind is
//! [`One`] may not.

use super::error::{
    RecvError, RecvFail, RecvTimeoutError, SendError, SendFail, SendTimeoutError, TryRecvError,
    TrySendError,
};
use super::ops::Wait;
use super::packet::{is_large, Packet};
use super::raw::{RawChan, Side};
use crate::park;
use crate::sync::Arc;
use std::fmt;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::One {}
    impl Sealed for super::Any {}
}

/// The sharing kind of a channel end: [`One`] (exclusive) or [`Any`] (shared).
pub trait Sharing: sealed::Sealed + Send + Sync + 'static {
    /// Whether ends of this kind may be cloned.
    const SHARED: bool;
}

/// An exclusive end: exactly one process uses it; it cannot be cloned.
///
/// # Why `One` ends are `Sync`
/// A `Sender<T, One>` (or `Receiver<T, One>`) is `Sync`, so a reference to it can
/// reach another process. That is deliberate: the type enforces that the end
/// cannot be *cloned*, and leaves "one process at a time" to the borrow, because
/// the idiom that needs it is occam's `PAR` of communications on ends the parent
/// owns, where each branch borrows one end while the parent waits for both:
///
/// ```
/// use hoare_core::chan::one2one;
///
/// let (a, ra) = one2one::<u32>();
/// let (b, rb) = one2one::<u32>();
/// let readers = std::thread::spawn(move || (ra.recv(), rb.recv()));
/// std::thread::scope(|s| {
///     // Each branch borrows one `One` end: this needs `&Sender<u32, One>: Send`,
///     // that is `Sender<u32, One>: Sync`.
///     s.spawn(|| a.send(1).unwrap());
///     s.spawn(|| b.send(2).unwrap());
/// });
/// assert_eq!(readers.join().unwrap(), (Ok(1), Ok(2)));
/// ```
///
/// (hoare's `par2(|| a.send(v), || b.send(v))` and its scopes are the same
/// pattern; the CommsTime benchmark's parallel delta is written so.) Making the
/// ends `!Sync` would forbid this without preventing the misuse it aims at: two
/// processes can still use one end in turn by moving it. Using one end from two
/// processes at once is not unsafe either: every operation takes the channel's
/// lock, and the end then behaves like an [`Any`] end (its parties are served in
/// FIFO order). See `docs/semantics.md#channels`.
#[derive(Debug, Clone, Copy)]
pub struct One;

/// A shared end: it can be cloned and used by any number of processes, which are
/// served in FIFO order.
#[derive(Debug, Clone, Copy)]
pub struct Any;

impl Sharing for One {
    const SHARED: bool = false;
}
impl Sharing for Any {
    const SHARED: bool = true;
}

/// The deadline of a `*_timeout` operation: `d` from now, clamped to the far future
/// (see [`crate::timer::add_clamped`]).
fn deadline_after(d: Duration) -> Option<Instant> {
    Some(crate::timer::deadline_after(d))
}

/// The sending end of a channel.
///
/// `S` says whether the end may be shared: `Sender<T, Any>` implements `Clone`,
/// `Sender<T, One>` does not:
///
/// ```compile_fail,E0599
/// let (tx, _rx) = hoare_core::chan::one2one::<i32>();
/// let tx2 = tx.clone(); // a one2one end cannot be cloned
/// ```
///
/// Ends are `Send` (they can be moved into processes and sent over channels) when
/// `T` is, and only then:
///
/// ```compile_fail,E0277
/// let (tx, _rx) = hoare_core::chan::one2one::<std::rc::Rc<u32>>();
/// std::thread::spawn(move || drop(tx)); // an Rc may not cross threads
/// ```
///
/// Dropping the last sending end poisons the channel from the writing side (the
/// readers drain any buffered items first).
pub struct Sender<T, S: Sharing = One> {
    chan: Arc<RawChan<T>>,
    poisonable: bool,
    _s: PhantomData<S>,
}

/// The receiving end of a channel. `Receiver<T, Any>` may be cloned,
/// `Receiver<T, One>` may not:
///
/// ```compile_fail,E0599
/// let (_tx, rx) = hoare_core::chan::any2one::<i32>();
/// let rx2 = rx.clone(); // the reading end of an any2one channel is exclusive
/// ```
///
/// Dropping the last receiving end poisons the channel from the reading side
/// (discarding any buffered items).
pub struct Receiver<T, S: Sharing = One> {
    chan: Arc<RawChan<T>>,
    poisonable: bool,
    _s: PhantomData<S>,
}

impl<T, S: Sharing> fmt::Debug for Sender<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("shared", &S::SHARED)
            .field("poisonable", &self.poisonable)
            .field("poisoned", &self.is_poisoned())
            .finish()
    }
}

impl<T, S: Sharing> fmt::Debug for Receiver<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("shared", &S::SHARED)
            .field("poisonable", &self.poisonable)
            .field("poisoned", &self.is_poisoned())
            .finish()
    }
}

/// Makes the two ends of a new channel (each counted once).
pub(crate) fn ends<T, S: Sharing, R: Sharing>(chan: RawChan<T>) -> (Sender<T, S>, Receiver<T, R>) {
    let chan = Arc::new(chan);
    (
        Sender {
            chan: chan.clone(),
            poisonable: true,
            _s: PhantomData,
        },
        Receiver {
            chan,
            poisonable: true,
            _s: PhantomData,
        },
    )
}

impl<T, S: Sharing> Sender<T, S> {
    /// Sends `value`, blocking until a receiver has it (rendezvous) or the buffer
    /// takes it. On a poisoned channel gives the value back.
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one();
    /// let t = std::thread::spawn(move || rx.recv());
    /// tx.send(42).unwrap();
    /// assert_eq!(t.join().unwrap(), Ok(42));
    /// ```
    #[inline(always)]
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        if is_large::<T>() {
            // The packet built straight into the argument (see `RawChan::send`).
            return self
                .chan
                .send(Packet::with_value(value), Wait::Until(None), |_, v| {
                    SendError(v)
                });
        }
        self.chan.send_blocking(value, |_, v| SendError(v))
    }

    /// Sends `value` only if that needs no waiting: a receiver is waiting
    /// (rendezvous) or the buffer has room.
    ///
    /// A failure is a poll that found nothing: it spends the process's
    /// [cooperative budget](crate::park#the-cooperative-budget), so a loop of
    /// failing `try_send`s yields to other processes now and then.
    #[inline]
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        self.chan
            .send(Packet::with_value(value), Wait::Try, |why, v| {
                park::spend_budget();
                match why {
                    SendFail::Poisoned => TrySendError::Poisoned(v),
                    SendFail::Full | SendFail::Timeout => TrySendError::Full(v),
                }
            })
    }

    /// Like [`send`](Self::send), giving up after `timeout`. A timed-out send has
    /// not delivered its value, which it gives back.
    #[inline]
    pub fn send_timeout(&self, value: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        self.send_until(value, deadline_after(timeout))
    }

    /// Like [`send`](Self::send), giving up at `deadline`.
    #[inline]
    pub fn send_deadline(&self, value: T, deadline: Instant) -> Result<(), SendTimeoutError<T>> {
        self.send_until(value, Some(deadline))
    }

    #[inline]
    fn send_until(&self, value: T, d: Option<Instant>) -> Result<(), SendTimeoutError<T>> {
        self.chan.send(
            Packet::with_value(value),
            Wait::Until(d),
            |why, v| match why {
                SendFail::Poisoned => SendTimeoutError::Poisoned(v),
                SendFail::Timeout | SendFail::Full => SendTimeoutError::Timeout(v),
            },
        )
    }

    /// Poisons the channel from the writing side, unless this end is
    /// non-poisonable (then this does nothing). Every later operation on the
    /// channel reports the poison; readers of a buffered channel first drain it.
    pub fn poison(&self) {
        if self.poisonable {
            poison_end(&self.chan, Side::Writer, None);
        }
    }

    /// [`poison`](Self::poison), saying why: the reason stays with the channel
    /// (unless it was poisoned already), for every end to read with
    /// [`poison_reason`](Self::poison_reason).
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one::<u8>();
    /// tx.poison_with("the input ended early");
    /// assert!(rx.recv().is_err());
    /// assert_eq!(rx.poison_reason().as_deref(), Some("the input ended early"));
    /// ```
    pub fn poison_with(&self, reason: impl Into<super::Reason>) {
        if self.poisonable {
            poison_end(&self.chan, Side::Writer, Some(reason.into()));
        }
    }

    /// Why the channel was poisoned, if it is and its poisoner said so (with
    /// `poison_with`, or a reader that refused a value, see
    /// [`Receiver::recv_or_refuse`]). A failed send's error holds only the value:
    /// this says why it failed.
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one::<u8>();
    /// assert_eq!(tx.poison_reason(), None);
    /// rx.poison_with("shutting down");
    /// assert!(tx.send(1).is_err());
    /// assert_eq!(tx.poison_reason().as_deref(), Some("shutting down"));
    /// ```
    pub fn poison_reason(&self) -> Option<super::Reason> {
        self.chan.poison_reason()
    }

    /// The channel's identity in reports: its id, its name (see
    /// [`ChannelBuilder::name`](super::ChannelBuilder::name)) and where it was made.
    pub fn info(&self) -> &crate::wait::ObjInfo {
        self.chan.info()
    }

    /// Whether the channel is poisoned.
    pub fn is_poisoned(&self) -> bool {
        self.chan.is_poisoned()
    }

    /// Whether a send on this end may still deliver: the channel is not poisoned.
    /// Once `false`, it stays `false`. The precondition that drops a send guard
    /// from an alt loop once its channel is poisoned (see
    /// [the alt loop idiom](mod@crate::alt#ending-an-alt-loop-on-poison)):
    /// `send(tx, v) if tx.is_open() => …`.
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one::<u8>();
    /// assert!(tx.is_open());
    /// drop(rx); // poisons from the reading side
    /// assert!(!tx.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        !self.chan.is_poisoned()
    }

    /// This end, made non-poisonable: its [`poison`](Self::poison) does nothing.
    /// (Dropping the last end of a side still poisons, or the other side could wait
    /// for ever.)
    pub fn non_poisonable(mut self) -> Self {
        self.poisonable = false;
        self
    }

    /// Whether [`poison`](Self::poison) on this end poisons the channel.
    pub fn is_poisonable(&self) -> bool {
        self.poisonable
    }

    /// The channel's shared state, which the guards of an alt take (the
    /// [`alt!`](crate::alt!) macro calls this).
    pub fn raw(&self) -> &RawChan<T> {
        &self.chan
    }

    /// The send guard the [`alt!`](crate::alt!) macro makes (`None`: its
    /// precondition is false).
    #[doc(hidden)]
    #[inline(always)]
    pub fn __alt_send_case(&self, value: Option<T>) -> crate::alt::SendCase<'_, T> {
        crate::alt::SendCase::new(value.map(|v| (&*self.chan, v)))
    }

    /// Whether `self` and `other` are ends of the same channel.
    pub fn same_channel<S2: Sharing>(&self, other: &Receiver<T, S2>) -> bool {
        std::ptr::eq(&*self.chan, &*other.chan)
    }

    /// The number of items buffered in the channel now: always 0 on a rendezvous
    /// channel (see also [`capacity`](Self::capacity)). Another process may change
    /// it at once; use it for monitoring, not to decide whether an operation will
    /// block (the `try_*` forms do that).
    ///
    /// ```
    /// use hoare_core::chan::Channel;
    ///
    /// let (tx, rx) = Channel::builder().bounded(4).one2one();
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// assert_eq!((tx.len(), tx.is_empty(), tx.is_full()), (2, false, false));
    /// assert_eq!(tx.capacity(), Some(4));
    /// ```
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// Whether the channel's buffer is empty now (always, on a rendezvous
    /// channel).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the buffer is at its capacity now: a bounded channel's `send`
    /// would block, an overwriting one's would drop its oldest item. Always
    /// `true` on a rendezvous channel (capacity 0), never on an unbounded one.
    pub fn is_full(&self) -> bool {
        self.capacity().is_some_and(|c| self.len() >= c)
    }

    /// The capacity of the channel's buffer: `Some(0)` for a rendezvous channel,
    /// `Some(n)` for a bounded or overwriting channel of `n`, `None` for an
    /// unbounded one.
    ///
    /// ```
    /// use hoare_core::chan::{one2one, Channel};
    ///
    /// assert_eq!(one2one::<u8>().0.capacity(), Some(0));
    /// assert_eq!(Channel::builder().unbounded().one2one::<u8>().1.capacity(), None);
    /// ```
    pub fn capacity(&self) -> Option<usize> {
        self.chan.capacity()
    }
}

impl<T, S: Sharing> Receiver<T, S> {
    /// Receives a value, blocking until one is there. Reports poison once the
    /// channel is poisoned (for a writer-poisoned buffered channel: once its buffer
    /// is empty).
    #[inline]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.chan.recv_blocking(|_| RecvError::Poisoned)
    }

    /// Receives a value if one is there without waiting.
    ///
    /// A failure spends the process's
    /// [cooperative budget](crate::park#the-cooperative-budget), so a polling loop
    /// yields to other processes now and then.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.chan.recv(Wait::Try, try_recv_failed)
    }

    /// Like [`recv`](Self::recv), giving up after `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.recv_until(deadline_after(timeout))
    }

    /// Like [`recv`](Self::recv), giving up at `deadline`.
    pub fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        self.recv_until(Some(deadline))
    }

    fn recv_until(&self, d: Option<Instant>) -> Result<T, RecvTimeoutError> {
        self.chan.recv(Wait::Until(d), map_timeout)
    }

    /// Extended rendezvous: receives a value and runs `f` on it while the writer
    /// stays blocked; the writer is released when `f` returns (or panics), and sees
    /// success even if the channel is poisoned meanwhile.
    ///
    /// On a bounded channel the item leaves the buffer only when `f` returns: its
    /// place stays taken, so a writer blocked on a full buffer stays blocked until
    /// then. Overwriting and unbounded channels never block writers, so there only
    /// the reader is held.
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one();
    /// let t = std::thread::spawn(move || tx.send(20));
    /// let r = rx.recv_with(|v: i32| v + 1); // the writer waits until this returns
    /// assert_eq!(r, Ok(21));
    /// assert!(t.join().unwrap().is_ok());
    /// ```
    pub fn recv_with<R>(&self, f: impl FnOnce(T) -> R) -> Result<R, RecvError> {
        self.chan
            .recv_with(f, Wait::Until(None), |_| RecvError::Poisoned)
    }

    /// Extended rendezvous in which the reader may *refuse* the value: `f`
    /// returns `Ok(r)` to take it (the writer's `send` returns `Ok`, as after
    /// [`recv_with`](Self::recv_with)), or `Err(Refuse::new(value, reason))` to
    /// hand it back: the channel is poisoned from the reading side with `reason`,
    /// and the writer's `send` fails with the value (its
    /// [`poison_reason`](Sender::poison_reason) says why). Returns `Ok(Some(r))`,
    /// or `Ok(None)` when `f` refused.
    ///
    /// On a buffered channel the writer returned when its value entered the
    /// buffer: a refused value is dropped (as the items a reader's poison
    /// discards). A writer in an alt sees its send guard poisoned, with the value
    /// still unsent.
    ///
    /// ```
    /// use hoare_core::chan::{one2one, Refuse};
    /// let (tx, rx) = one2one::<Vec<u8>>();
    /// let t = std::thread::spawn(move || {
    ///     let e = tx.send(vec![0; 100]).unwrap_err();
    ///     (e.into_inner().len(), tx.poison_reason())
    /// });
    /// let r = rx.recv_or_refuse(|v| {
    ///     if v.len() > 10 { Err(Refuse::new(v, "over 10 bytes")) } else { Ok(v) }
    /// });
    /// assert_eq!(r, Ok(None));
    /// let (len, why) = t.join().unwrap();
    /// assert_eq!((len, why.as_deref()), (100, Some("over 10 bytes")));
    /// ```
    pub fn recv_or_refuse<R>(
        &self,
        f: impl FnOnce(T) -> Result<R, super::Refuse<T>>,
    ) -> Result<Option<R>, RecvError> {
        self.chan.recv_or_refuse(f).map_err(|_| RecvError::Poisoned)
    }

    /// Extended rendezvous that waits for a value at most until `deadline` (once
    /// the value is there, `f` runs to completion).
    pub fn recv_with_deadline<R>(
        &self,
        deadline: Instant,
        f: impl FnOnce(T) -> R,
    ) -> Result<R, RecvTimeoutError> {
        self.chan
            .recv_with(f, Wait::Until(Some(deadline)), map_timeout)
    }

    /// Extended rendezvous only if a value is there without waiting. A failure
    /// spends the budget as [`try_recv`](Self::try_recv)'s does.
    pub fn try_recv_with<R>(&self, f: impl FnOnce(T) -> R) -> Result<R, TryRecvError> {
        self.chan.recv_with(f, Wait::Try, try_recv_failed)
    }

    /// An iterator that receives until the channel is poisoned.
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one();
    /// let t = std::thread::spawn(move || {
    ///     for i in 0..3 {
    ///         tx.send(i).unwrap();
    ///     }
    ///     // dropping `tx` poisons the channel and ends the loop below
    /// });
    /// let got: Vec<i32> = rx.iter().collect();
    /// assert_eq!(got, [0, 1, 2]);
    /// t.join().unwrap();
    /// ```
    pub fn iter(&self) -> Iter<'_, T, S> {
        Iter { rx: self }
    }

    /// Forwards every value received here to `tx` until either channel is
    /// poisoned, then poisons the other one (forward poison from this channel to
    /// `tx`'s, backward from `tx`'s to this one). Returns how many values were
    /// forwarded. A value received just before `tx` turned out poisoned is dropped,
    /// as an identity process would drop it.
    pub fn pipe_to<S2: Sharing>(&self, tx: &Sender<T, S2>) -> u64 {
        let mut n = 0;
        loop {
            match self.recv() {
                Ok(v) => {
                    if tx.send(v).is_err() {
                        self.poison();
                        return n;
                    }
                    n += 1;
                }
                Err(RecvError::Poisoned) => {
                    tx.poison();
                    return n;
                }
            }
        }
    }

    /// Poisons the channel from the reading side, unless this end is
    /// non-poisonable (then this does nothing). A buffered channel's items are
    /// discarded.
    pub fn poison(&self) {
        if self.poisonable {
            poison_end(&self.chan, Side::Reader, None);
        }
    }

    /// [`poison`](Self::poison), saying why (see [`Sender::poison_with`]).
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one::<u8>();
    /// rx.poison_with("full");
    /// assert_eq!(tx.poison_reason().as_deref(), Some("full"));
    /// ```
    pub fn poison_with(&self, reason: impl Into<super::Reason>) {
        if self.poisonable {
            poison_end(&self.chan, Side::Reader, Some(reason.into()));
        }
    }

    /// Why the channel was poisoned, if it is and its poisoner said so (see
    /// [`Sender::poison_reason`]).
    ///
    /// ```
    /// let (tx, rx) = hoare_core::chan::one2one::<u8>();
    /// tx.poison_with("done");
    /// assert_eq!(rx.poison_reason().as_deref(), Some("done"));
    /// ```
    pub fn poison_reason(&self) -> Option<super::Reason> {
        self.chan.poison_reason()
    }

    /// The channel's identity in reports: its id, its name (see
    /// [`ChannelBuilder::name`](super::ChannelBuilder::name)) and where it was made.
    pub fn info(&self) -> &crate::wait::ObjInfo {
        self.chan.info()
    }

    /// Whether the channel is poisoned (a buffered channel poisoned by its writers
    /// may still hold items for this end).
    pub fn is_poisoned(&self) -> bool {
        self.chan.is_poisoned()
    }

    /// Whether a receive on this end may still deliver a value: the channel is not
    /// poisoned, or it is but still buffers items (writer-side poison leaves them
    /// for the readers). Once `false` it stays `false`: every later receive reports
    /// the poison. The precondition that drops a receive guard from an alt loop
    /// once its channel is done (a poisoned guard is otherwise ready for ever; see
    /// [the alt loop idiom](mod@crate::alt#ending-an-alt-loop-on-poison)):
    /// `recv(rx) if rx.is_open() -> v => …`.
    ///
    /// ```
    /// use hoare_core::chan::Channel;
    ///
    /// let (tx, rx) = Channel::builder().bounded(2).one2one::<u8>();
    /// tx.send(1).unwrap();
    /// drop(tx); // poisons from the writing side: the item stays for the reader
    /// assert!(rx.is_poisoned() && rx.is_open());
    /// assert_eq!(rx.recv(), Ok(1));
    /// assert!(!rx.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        // Poison is final and no item enters a poisoned channel, so "poisoned and
        // empty" stays true once seen.
        !(self.chan.is_poisoned() && self.chan.len() == 0)
    }

    /// This end, made non-poisonable: its [`poison`](Self::poison) does nothing.
    pub fn non_poisonable(mut self) -> Self {
        self.poisonable = false;
        self
    }

    /// Whether [`poison`](Self::poison) on this end poisons the channel.
    pub fn is_poisonable(&self) -> bool {
        self.poisonable
    }

    /// The channel's shared state, which the guards of an alt take (the
    /// [`alt!`](crate::alt!) macro calls this).
    pub fn raw(&self) -> &RawChan<T> {
        &self.chan
    }

    /// The receive guard the [`alt!`](crate::alt!) macro makes (`on`: its
    /// precondition).
    #[doc(hidden)]
    #[inline(always)]
    pub fn __alt_recv_case(&self, on: bool) -> crate::alt::RecvCase<'_, T> {
        crate::alt::RecvCase::new(if on { Some(&*self.chan) } else { None })
    }

    #[doc(hidden)]
    #[inline]
    pub fn __alt_recv_with_case<R, F: FnOnce(T) -> R>(
        &self,
        on: bool,
        f: F,
    ) -> crate::alt::ExtRecvCase<'_, T, F> {
        crate::alt::ExtRecvCase::new(if on { Some(&*self.chan) } else { None }, f)
    }

    /// The number of items buffered in the channel now: always 0 on a rendezvous
    /// channel (see also [`capacity`](Self::capacity)). Another process may change
    /// it at once; use it for monitoring, not to decide whether an operation will
    /// block (the `try_*` forms do that).
    ///
    /// ```
    /// use hoare_core::chan::Channel;
    ///
    /// let (tx, rx) = Channel::builder().bounded(4).one2one();
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// assert_eq!((rx.len(), rx.is_empty(), rx.is_full()), (2, false, false));
    /// rx.recv().unwrap();
    /// rx.recv().unwrap();
    /// assert!(rx.is_empty());
    /// assert_eq!(rx.capacity(), Some(4));
    /// ```
    pub fn len(&self) -> usize {
        self.chan.len()
    }

    /// Whether the channel's buffer is empty now (always, on a rendezvous
    /// channel).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the buffer is at its capacity now: a bounded channel's `send`
    /// would block, an overwriting one's would drop its oldest item. Always
    /// `true` on a rendezvous channel (capacity 0), never on an unbounded one.
    pub fn is_full(&self) -> bool {
        self.capacity().is_some_and(|c| self.len() >= c)
    }

    /// The capacity of the channel's buffer: `Some(0)` for a rendezvous channel,
    /// `Some(n)` for a bounded or overwriting channel of `n`, `None` for an
    /// unbounded one.
    ///
    /// ```
    /// use hoare_core::chan::{one2one, Channel};
    ///
    /// assert_eq!(one2one::<u8>().0.capacity(), Some(0));
    /// assert_eq!(Channel::builder().unbounded().one2one::<u8>().1.capacity(), None);
    /// ```
    pub fn capacity(&self) -> Option<usize> {
        self.chan.capacity()
    }
}

/// A `try_recv` that found nothing: spends the budget (see `park::spend_budget`).
#[cold]
fn try_recv_failed(e: RecvFail) -> TryRecvError {
    park::spend_budget();
    match e {
        RecvFail::Poisoned => TryRecvError::Poisoned,
        RecvFail::Empty | RecvFail::Timeout => TryRecvError::Empty,
    }
}

fn map_timeout(e: RecvFail) -> RecvTimeoutError {
    match e {
        RecvFail::Poisoned => RecvTimeoutError::Poisoned,
        RecvFail::Timeout | RecvFail::Empty => RecvTimeoutError::Timeout,
    }
}

impl<T> Clone for Sender<T, Any> {
    fn clone(&self) -> Self {
        self.chan.add_end(true);
        Self {
            chan: self.chan.clone(),
            poisonable: self.poisonable,
            _s: PhantomData,
        }
    }
}

impl<T> Clone for Receiver<T, Any> {
    fn clone(&self) -> Self {
        self.chan.add_end(false);
        Self {
            chan: self.chan.clone(),
            poisonable: self.poisonable,
            _s: PhantomData,
        }
    }
}

impl<T, S: Sharing> Drop for Sender<T, S> {
    fn drop(&mut self) {
        self.chan.drop_end(true);
    }
}

impl<T, S: Sharing> Drop for Receiver<T, S> {
    fn drop(&mut self) {
        self.chan.drop_end(false);
    }
}

/// Receives until poison; made by [`Receiver::iter`] or `&Receiver`'s
/// `IntoIterator`.
#[derive(Debug)]
pub struct Iter<'a, T, S: Sharing> {
    rx: &'a Receiver<T, S>,
}

impl<T, S: Sharing> Iterator for Iter<'_, T, S> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

/// Receives until poison, owning the end; made by `Receiver`'s `IntoIterator`.
#[derive(Debug)]
pub struct IntoIter<T, S: Sharing> {
    rx: Receiver<T, S>,
}

impl<T, S: Sharing> Iterator for IntoIter<T, S> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<'a, T, S: Sharing> IntoIterator for &'a Receiver<T, S> {
    type Item = T;
    type IntoIter = Iter<'a, T, S>;
    fn into_iter(self) -> Iter<'a, T, S> {
        self.iter()
    }
}

impl<T, S: Sharing> IntoIterator for Receiver<T, S> {
    type Item = T;
    type IntoIter = IntoIter<T, S>;
    fn into_iter(self) -> IntoIter<T, S> {
        IntoIter { rx: self }
    }
}

/// Poisons `chan` from `side` (with `reason`, if given): the one checker
/// scheduling point of every end's `poison` and `poison_with`, then the poison.
fn poison_end<T>(chan: &RawChan<T>, side: Side, reason: Option<super::Reason>) {
    crate::check_step!(|| crate::step::Op::one(
        crate::step::OpKind::Poison,
        chan.info().id() as usize,
        crate::step::Class::Chan,
        crate::step::Access::Other
    )
    .with_info(*chan.info()));
    chan.poison_with(side, reason);
}
