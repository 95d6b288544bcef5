//! One place that makes a channel of the sharing kind and buffering a caller
//! chooses.

use super::ends::{ends, Any, One, Receiver, Sender, Sharing};
use super::raw::RawChan;
use crate::wait::ObjInfo;

/// How a channel buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// No buffer: a send completes when a receiver has the value.
    #[default]
    Rendezvous,
    /// A FIFO of this capacity; a send on a full buffer blocks.
    /// `Bounded(0)` is a rendezvous channel.
    Bounded(usize),
    /// A FIFO of this capacity (at least 1); a send on a full buffer drops the
    /// oldest item and never blocks.
    Overwriting(usize),
    /// A FIFO without a bound; a send never blocks.
    Unbounded,
}

/// Namespace of the channel factory.
///
/// ```
/// use hoare_core::chan::{Buffer, Channel};
///
/// // A composite process lets its caller choose the buffering:
/// fn pipeline_stage(buffer: Buffer) -> (hoare_core::chan::Sender<u32>, hoare_core::chan::Receiver<u32>) {
///     Channel::builder().buffer(buffer).one2one()
/// }
/// let (tx, rx) = pipeline_stage(Buffer::Bounded(4));
/// tx.send(1).unwrap(); // does not block: the buffer has room
/// assert_eq!(rx.recv(), Ok(1));
///
/// let (tx, rx) = Channel::builder().bounded(8).any2one::<String>();
/// let tx2 = tx.clone();
/// tx2.send("hi".into()).unwrap();
/// assert_eq!(rx.recv().unwrap(), "hi");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Channel;

impl Channel {
    /// A builder for a channel; rendezvous unless told otherwise.
    pub fn builder() -> ChannelBuilder {
        ChannelBuilder::default()
    }
}

/// Chooses a channel's buffering, then makes it with one of the sharing-kind
/// methods ([`one2one`](Self::one2one), [`any2one`](Self::any2one),
/// [`one2any`](Self::one2any), [`any2any`](Self::any2any), or the generic
/// [`make`](Self::make)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelBuilder {
    buffer: Buffer,
    name: Option<&'static str>,
    /// Fed from outside hoare (an I/O readiness guard): never deadlocked.
    outside: bool,
}

impl From<Buffer> for ChannelBuilder {
    fn from(buffer: Buffer) -> Self {
        Self {
            buffer,
            name: None,
            outside: false,
        }
    }
}

impl ChannelBuilder {
    /// Sets the buffering.
    pub fn buffer(mut self, buffer: Buffer) -> Self {
        self.buffer = buffer;
        self
    }
    /// No buffer (the default).
    pub fn rendezvous(self) -> Self {
        self.buffer(Buffer::Rendezvous)
    }
    /// A bounded FIFO of capacity `n` (`0`: rendezvous).
    pub fn bounded(self, n: usize) -> Self {
        self.buffer(Buffer::Bounded(n))
    }
    /// An overwriting FIFO of capacity `n` (at least 1).
    pub fn overwriting(self, n: usize) -> Self {
        self.buffer(Buffer::Overwriting(n))
    }
    /// An unbounded FIFO.
    pub fn unbounded(self) -> Self {
        self.buffer(Buffer::Unbounded)
    }
    /// Names the channel: deadlock, stall and leak reports call it by this name
    /// (otherwise by the place in the source where it was made). Each distinct
    /// name is stored once for the life of the program.
    ///
    /// ```
    /// use hoare_core::chan::Channel;
    ///
    /// let (tx, _rx) = Channel::builder().name("fork1").one2one::<()>();
    /// assert_eq!(tx.info().name(), Some("fork1"));
    /// let (tx, _rx) = Channel::builder().name(format!("fork{}", 2)).one2one::<()>();
    /// assert_eq!(tx.info().name(), Some("fork2"));
    /// ```
    pub fn name(mut self, name: impl AsRef<str>) -> Self {
        self.name = Some(crate::wait::intern(name.as_ref()));
        self
    }

    /// Marks the channel as fed from outside hoare (by readiness events), so
    /// that a wait on it never counts as deadlocked.
    pub(crate) fn outside(mut self) -> Self {
        self.outside = true;
        self
    }

    /// The buffering chosen so far.
    pub fn buffering(&self) -> Buffer {
        self.buffer
    }

    /// Makes a channel whose ends have the sharing kinds `S` (writing) and `R`
    /// (reading): generic code can take the kinds as type parameters.
    ///
    /// # Panics
    /// On an overwriting buffer of capacity 0.
    #[track_caller]
    pub fn make<T, S: Sharing, R: Sharing>(self) -> (Sender<T, S>, Receiver<T, R>) {
        let mut info = ObjInfo::here(self.name);
        if self.outside {
            info = info.made_outside();
        }
        ends(RawChan::new(self.buffer, info))
    }
    /// One writer, one reader.
    #[track_caller]
    pub fn one2one<T>(self) -> (Sender<T, One>, Receiver<T, One>) {
        self.make()
    }
    /// Shared writing end, one reader.
    #[track_caller]
    pub fn any2one<T>(self) -> (Sender<T, Any>, Receiver<T, One>) {
        self.make()
    }
    /// One writer, shared reading end.
    #[track_caller]
    pub fn one2any<T>(self) -> (Sender<T, One>, Receiver<T, Any>) {
        self.make()
    }
    /// Shared writing and reading ends.
    #[track_caller]
    pub fn any2any<T>(self) -> (Sender<T, Any>, Receiver<T, Any>) {
        self.make()
    }
}

/// A rendezvous channel with one writer and one reader.
#[track_caller]
pub fn one2one<T>() -> (Sender<T, One>, Receiver<T, One>) {
    Channel::builder().one2one()
}

/// A rendezvous channel whose writing end may be shared.
#[track_caller]
pub fn any2one<T>() -> (Sender<T, Any>, Receiver<T, One>) {
    Channel::builder().any2one()
}

/// A rendezvous channel whose reading end may be shared.
#[track_caller]
pub fn one2any<T>() -> (Sender<T, One>, Receiver<T, Any>) {
    Channel::builder().one2any()
}

/// A rendezvous channel whose both ends may be shared.
#[track_caller]
pub fn any2any<T>() -> (Sender<T, Any>, Receiver<T, Any>) {
    Channel::builder().any2any()
}
