//! Errors of channel operations. Every failed send gives its value back ("no data
//! lost", `docs/semantics.md#channels`).

use std::error::Error;
use std::fmt;

macro_rules! opaque_debug {
    ($name:ident, $($variant:ident),+) => {
        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $($name::$variant(_) => f.write_str(concat!(stringify!($name), "::", stringify!($variant), "(..)")),)+
                }
            }
        }
    };
}

/// A blocking send failed because the channel is poisoned. Holds the value that was
/// not sent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a poisoned channel")
    }
}

impl<T> Error for SendError<T> {}

/// What the closure of [`Receiver::recv_or_refuse`](super::Receiver::recv_or_refuse)
/// returns to refuse the value it was given: the value (which goes back to its
/// sender) and why (which stays with the channel, see
/// [`Sender::poison_reason`](super::Sender::poison_reason)).
///
/// ```
/// use hoare_core::chan::Refuse;
/// let r = Refuse::new(7, "too large");
/// assert_eq!((r.value, &*r.reason), (7, "too large"));
/// ```
pub struct Refuse<T> {
    /// The refused value.
    pub value: T,
    /// Why it was refused.
    pub reason: super::Reason,
}

impl<T> Refuse<T> {
    /// Refuses `value` because of `reason`.
    pub fn new(value: T, reason: impl Into<super::Reason>) -> Self {
        Self {
            value,
            reason: reason.into(),
        }
    }
}

impl<T> fmt::Debug for Refuse<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Refuse")
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

/// A [`try_send`](super::Sender::try_send) failed. Holds the value that was not sent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TrySendError<T> {
    /// No receiver was ready (rendezvous) or the buffer was full (bounded).
    Full(T),
    /// The channel is poisoned.
    Poisoned(T),
}

opaque_debug!(TrySendError, Full, Poisoned);

impl<T> TrySendError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            Self::Full(v) | Self::Poisoned(v) => v,
        }
    }
    /// Whether the send failed because of poison.
    pub fn is_poisoned(&self) -> bool {
        matches!(self, Self::Poisoned(_))
    }
    /// Whether the send failed because the channel was not ready.
    pub fn is_full(&self) -> bool {
        matches!(self, Self::Full(_))
    }
}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full(_) => f.write_str("sending on a full channel (no receiver ready)"),
            Self::Poisoned(_) => f.write_str("sending on a poisoned channel"),
        }
    }
}

impl<T> Error for TrySendError<T> {}

impl<T> From<SendError<T>> for TrySendError<T> {
    fn from(e: SendError<T>) -> Self {
        Self::Poisoned(e.0)
    }
}

/// A [`send_timeout`](super::Sender::send_timeout) or
/// [`send_deadline`](super::Sender::send_deadline) failed. Holds the value that was
/// not sent: a timed-out send has not delivered it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SendTimeoutError<T> {
    /// The deadline passed before a receiver took the value.
    Timeout(T),
    /// The channel is poisoned.
    Poisoned(T),
}

opaque_debug!(SendTimeoutError, Timeout, Poisoned);

impl<T> SendTimeoutError<T> {
    /// The value that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            Self::Timeout(v) | Self::Poisoned(v) => v,
        }
    }
    /// Whether the send failed because of poison.
    pub fn is_poisoned(&self) -> bool {
        matches!(self, Self::Poisoned(_))
    }
    /// Whether the send timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout(_))
    }
}

impl<T> fmt::Display for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(_) => f.write_str("timed out sending on a channel"),
            Self::Poisoned(_) => f.write_str("sending on a poisoned channel"),
        }
    }
}

impl<T> Error for SendTimeoutError<T> {}

impl<T> From<SendError<T>> for SendTimeoutError<T> {
    fn from(e: SendError<T>) -> Self {
        Self::Poisoned(e.0)
    }
}

/// A blocking receive failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecvError {
    /// The channel is poisoned (and, if buffered, its buffer is empty).
    Poisoned,
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("receiving on a poisoned channel")
    }
}

impl Error for RecvError {}

/// A [`try_recv`](super::Receiver::try_recv) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TryRecvError {
    /// No sender was ready (rendezvous) or the buffer was empty.
    Empty,
    /// The channel is poisoned (and, if buffered, its buffer is empty).
    Poisoned,
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("receiving on an empty channel (no sender ready)"),
            Self::Poisoned => f.write_str("receiving on a poisoned channel"),
        }
    }
}

impl Error for TryRecvError {}

impl From<RecvError> for TryRecvError {
    fn from(_: RecvError) -> Self {
        Self::Poisoned
    }
}

/// A [`recv_timeout`](super::Receiver::recv_timeout) or
/// [`recv_deadline`](super::Receiver::recv_deadline) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecvTimeoutError {
    /// The deadline passed before a value arrived.
    Timeout,
    /// The channel is poisoned (and, if buffered, its buffer is empty).
    Poisoned,
}

impl fmt::Display for RecvTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("timed out receiving on a channel"),
            Self::Poisoned => f.write_str("receiving on a poisoned channel"),
        }
    }
}

impl Error for RecvTimeoutError {}

impl From<RecvError> for RecvTimeoutError {
    fn from(_: RecvError) -> Self {
        Self::Poisoned
    }
}

/// How an internal send failed (mapped onto the public errors, with the value given
/// back, by each method).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SendFail {
    Full,
    Timeout,
    Poisoned,
}

/// How an internal receive failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecvFail {
    Empty,
    Timeout,
    Poisoned,
}
