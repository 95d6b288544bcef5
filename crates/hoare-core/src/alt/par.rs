//! Parallel communication: [`Par`], [`par_send`], [`par_recv`] (see [`Par`]).
//!
//! # How it works
//! Over the alt engine: each round is an alt over the communications still
//! pending (plus the deadline), which registers the process's one waiter on every
//! one of their channels and waits until one of them commits, completes it, and
//! withdraws the other registrations. The first, unlocked pass of each alt
//! completes every partner that is ready without registering anywhere, so a PAR
//! whose partners are all waiting costs one channel lock per communication.

use super::case::{Case, RecvCase, SendCase, TimeoutCase};
use crate::chan::broadcast::{BcastRecvCase, ParSend};
use crate::chan::error::SendFail;
use crate::chan::{
    BroadcastReceiver, BroadcastSender, RawChan, Receiver, RecvError, RecvTimeoutError, SendError,
    SendTimeoutError, Sender, Sharing,
};
use std::fmt;
use std::time::{Duration, Instant};

/// One communication of a [`Par`] and its handler.
trait Branch<'a> {
    /// A fresh case for the next round (a send's value moves into it).
    fn renew(&mut self);
    fn case(&mut self) -> &mut (dyn Case + 'a);
    /// Its case was chosen: records the result. Whether the communication has
    /// ended (`false`: it goes on in the next rounds, a rendezvous broadcast's
    /// send waiting for its takers).
    fn chosen(&mut self) -> bool;
    /// The deadline passed: records the timeout.
    fn abandon(&mut self);
    /// Whether it completed.
    fn ok(&self) -> bool;
    /// Runs the handler with the result.
    fn finish(self: Box<Self>);
}

/// A branch's result, once it has one, and the handler it goes to: what
/// [`Branch::ok`] and [`Branch::finish`] read, the same for every branch kind
/// that records a plain result.
struct Outcome<V, E, F> {
    result: Option<Result<V, E>>,
    f: F,
}

impl<V, E, F: FnOnce(Result<V, E>)> Outcome<V, E, F> {
    fn new(f: F) -> Self {
        Outcome { result: None, f }
    }
    fn ok(&self) -> bool {
        matches!(self.result, Some(Ok(_)))
    }
    fn finish(self) {
        (self.f)(self.result.expect("hoare: a par branch without a result"));
    }
}

struct RecvBranch<'a, T, F> {
    chan: &'a RawChan<T>,
    case: RecvCase<'a, T>,
    out: Outcome<T, RecvTimeoutError, F>,
}

impl<'a, T, F: FnOnce(Result<T, RecvTimeoutError>)> Branch<'a> for RecvBranch<'a, T, F> {
    fn renew(&mut self) {
        self.case = RecvCase::new(Some(self.chan));
    }
    fn case(&mut self) -> &mut (dyn Case + 'a) {
        &mut self.case
    }
    fn chosen(&mut self) -> bool {
        self.out.result = Some(
            self.case
                .take_result()
                .map_err(|RecvError::Poisoned| RecvTimeoutError::Poisoned),
        );
        true
    }
    fn abandon(&mut self) {
        self.out.result = Some(Err(RecvTimeoutError::Timeout));
    }
    fn ok(&self) -> bool {
        self.out.ok()
    }
    fn finish(self: Box<Self>) {
        self.out.finish();
    }
}

struct SendBranch<'a, T, F> {
    chan: &'a RawChan<T>,
    case: SendCase<'a, T>,
    out: Outcome<(), SendTimeoutError<T>, F>,
}

impl<'a, T, F: FnOnce(Result<(), SendTimeoutError<T>>)> Branch<'a> for SendBranch<'a, T, F> {
    fn renew(&mut self) {
        let v = self
            .case
            .take_unsent()
            .expect("hoare: a pending send keeps its value");
        self.case = SendCase::new(Some((self.chan, v)));
    }
    fn case(&mut self) -> &mut (dyn Case + 'a) {
        &mut self.case
    }
    fn chosen(&mut self) -> bool {
        self.out.result = Some(
            self.case
                .take_result()
                .map_err(|SendError(v)| SendTimeoutError::Poisoned(v)),
        );
        true
    }
    fn abandon(&mut self) {
        let v = self
            .case
            .take_unsent()
            .expect("hoare: an abandoned send keeps its value");
        self.out.result = Some(Err(SendTimeoutError::Timeout(v)));
    }
    fn ok(&self) -> bool {
        self.out.ok()
    }
    fn finish(self: Box<Self>) {
        self.out.finish();
    }
}

struct BcastRecvBranch<'a, T, F> {
    rx: &'a BroadcastReceiver<T>,
    case: BcastRecvCase<'a, T>,
    out: Outcome<T, RecvTimeoutError, F>,
}

impl<'a, T: Clone, F: FnOnce(Result<T, RecvTimeoutError>)> Branch<'a>
    for BcastRecvBranch<'a, T, F>
{
    fn renew(&mut self) {
        self.case = self.rx.__alt_recv_case(true);
    }
    fn case(&mut self) -> &mut (dyn Case + 'a) {
        &mut self.case
    }
    fn chosen(&mut self) -> bool {
        self.out.result = Some(
            self.case
                .take_chosen()
                .expect("hoare: a chosen par receive has a result")
                .map_err(|RecvError::Poisoned| RecvTimeoutError::Poisoned),
        );
        true
    }
    fn abandon(&mut self) {
        self.out.result = Some(Err(RecvTimeoutError::Timeout));
    }
    fn ok(&self) -> bool {
        self.out.ok()
    }
    fn finish(self: Box<Self>) {
        self.out.finish();
    }
}

struct BcastSendBranch<'a, T, F> {
    send: ParSend<'a, T>,
    f: F,
}

impl<'a, T: Clone, F: FnOnce(Result<(), SendTimeoutError<T>>)> Branch<'a>
    for BcastSendBranch<'a, T, F>
{
    fn renew(&mut self) {
        self.send.renew();
    }
    fn case(&mut self) -> &mut (dyn Case + 'a) {
        self.send.case()
    }
    fn chosen(&mut self) -> bool {
        self.send.chosen()
    }
    fn abandon(&mut self) {
        self.send.abandon();
    }
    fn ok(&self) -> bool {
        self.send.is_ok()
    }
    fn finish(self: Box<Self>) {
        let me = *self;
        (me.f)(me.send.result().map_err(|(why, v)| match why {
            SendFail::Timeout => SendTimeoutError::Timeout(v),
            _ => SendTimeoutError::Poisoned(v),
        }));
    }
}

/// Parallel communication (SPEC C11; occam's `PAR` of communications, C++CSP
/// Networked §5.4.2): one process sends to, or receives from, several channels
/// at once and goes on when every communication has ended, without a process
/// per channel.
///
/// ```
/// use hoare_core::alt::Par;
/// use hoare_core::chan::one2one;
/// use std::thread;
///
/// let (a_tx, a_rx) = one2one::<u32>();
/// let (b_tx, b_rx) = one2one::<String>();
/// let (c_tx, c_rx) = one2one::<u64>();
/// // Partners that are ready in any order (here: each one waits for the other).
/// let t = thread::spawn(move || {
///     let s = b_rx.recv().unwrap();
///     a_tx.send(s.len() as u32).unwrap();
///     c_rx.recv().unwrap()
/// });
/// let (mut got, mut sent) = (None, None);
/// let mut par = Par::new();
/// par.recv(&a_rx, |r| got = r.ok());
/// par.send(&b_tx, "four".to_string(), |r| sent = Some(r.is_ok()));
/// par.send(&c_tx, 7, |r| r.unwrap());
/// assert!(par.run()); // returns once all three have completed
/// assert_eq!((got, sent), (Some(4), Some(true)));
/// assert_eq!(t.join().unwrap(), 7);
/// ```
///
/// # Semantics (`docs/semantics.md#parallel-communication`)
/// * Every communication completes (or fails) on its own, in whatever order its
///   partners arrive; `run` returns when all have ended. Each behaves as the
///   plain operation would: a rendezvous send completes when its reader has the
///   value, a buffered one when the buffer takes it.
/// * **Poison** on one channel ends that communication (a send gets its value
///   back); the others go on. A communication that completed cannot be undone,
///   so stopping the others early would make the outcome depend on timing; a
///   process that must not wait for the rest gives a deadline.
/// * **Deadline** ([`run_deadline`](Par::run_deadline),
///   [`run_timeout`](Par::run_timeout)): the communications that have not
///   completed by then are withdrawn (a send gets its value back, as
///   `SendTimeoutError::Timeout`); those that completed stay completed. Ready
///   partners are always served before the deadline is looked at.
/// * The handlers run after every communication has ended, in the order they
///   were added.
///
/// Add sends and receives on any channels, then [`run`](Self::run) them all at
/// once.
#[derive(Default)]
pub struct Par<'a> {
    branches: Vec<Box<dyn Branch<'a> + 'a>>,
}

impl fmt::Debug for Par<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Par")
            .field("branches", &self.branches.len())
            .finish()
    }
}

impl<'a> Par<'a> {
    /// A parallel communication with no branches yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of communications added.
    pub fn len(&self) -> usize {
        self.branches.len()
    }

    /// Whether no communication was added.
    pub fn is_empty(&self) -> bool {
        self.branches.is_empty()
    }

    /// Adds a receive on `rx`; `f` gets its value (or its poison, or, with a
    /// deadline, the timeout) once every communication has ended.
    pub fn recv<T: 'a, S: Sharing>(
        &mut self,
        rx: &'a Receiver<T, S>,
        f: impl FnOnce(Result<T, RecvTimeoutError>) + 'a,
    ) -> &mut Self {
        self.branches.push(Box::new(RecvBranch {
            chan: rx.raw(),
            case: RecvCase::new(Some(rx.raw())),
            out: Outcome::new(f),
        }));
        self
    }

    /// Adds a send of `value` on `tx`; `f` gets the outcome (a failure gives the
    /// value back) once every communication has ended.
    pub fn send<T: 'a, S: Sharing>(
        &mut self,
        tx: &'a Sender<T, S>,
        value: T,
        f: impl FnOnce(Result<(), SendTimeoutError<T>>) + 'a,
    ) -> &mut Self {
        self.branches.push(Box::new(SendBranch {
            chan: tx.raw(),
            case: SendCase::new(Some((tx.raw(), value))),
            out: Outcome::new(f),
        }));
        self
    }

    /// Adds a receive on a broadcast reader end; `f` gets its value (or its
    /// poison, or, with a deadline, the timeout) once every communication has
    /// ended.
    ///
    /// ```
    /// use hoare_core::alt::Par;
    /// use hoare_core::chan::{broadcast, one2one};
    ///
    /// let (tx, rx) = broadcast::<u32>();
    /// let (c_tx, c_rx) = one2one::<u32>();
    /// let t = std::thread::spawn(move || {
    ///     c_tx.send(2).unwrap();
    ///     tx.send(1).unwrap();
    /// });
    /// let (mut a, mut b) = (0, 0);
    /// let mut par = Par::new();
    /// par.bcast_recv(&rx, |r| a = r.unwrap());
    /// par.recv(&c_rx, |r| b = r.unwrap());
    /// assert!(par.run());
    /// assert_eq!((a, b), (1, 2));
    /// t.join().unwrap();
    /// ```
    pub fn bcast_recv<T: Clone + 'a>(
        &mut self,
        rx: &'a BroadcastReceiver<T>,
        f: impl FnOnce(Result<T, RecvTimeoutError>) + 'a,
    ) -> &mut Self {
        self.branches.push(Box::new(BcastRecvBranch {
            rx,
            case: rx.__alt_recv_case(true),
            out: Outcome::new(f),
        }));
        self
    }

    /// Adds a send of `value` to a broadcast; `f` gets the outcome (a failure
    /// gives the value back) once every communication has ended. It completes as
    /// [`BroadcastSender::send`] does (rendezvous: when every reader has taken
    /// the value), while the other communications go on, so a reader may take it
    /// only after one of them. With a deadline it ends as
    /// [`BroadcastSender::send_deadline`] does (a value that not every reader took
    /// is withdrawn and comes back as a timeout).
    ///
    /// ```
    /// use hoare_core::alt::Par;
    /// use hoare_core::chan::{broadcast, one2one};
    ///
    /// let (tx, rx) = broadcast::<u32>();
    /// let (c_tx, c_rx) = one2one::<u32>();
    /// // The reader sends first, then takes the broadcast value.
    /// let t = std::thread::spawn(move || {
    ///     c_tx.send(2).unwrap();
    ///     rx.recv().unwrap()
    /// });
    /// let mut got = 0;
    /// let mut par = Par::new();
    /// par.bcast_send(&tx, 1, |r| r.unwrap());
    /// par.recv(&c_rx, |r| got = r.unwrap());
    /// assert!(par.run());
    /// assert_eq!((got, t.join().unwrap()), (2, 1));
    /// ```
    pub fn bcast_send<T: Clone + 'a>(
        &mut self,
        tx: &'a BroadcastSender<T>,
        value: T,
        f: impl FnOnce(Result<(), SendTimeoutError<T>>) + 'a,
    ) -> &mut Self {
        self.branches.push(Box::new(BcastSendBranch {
            send: ParSend::new(tx, value),
            f,
        }));
        self
    }

    /// Runs every communication at once and returns when all have ended (each
    /// completed, or failed on poison); then runs the handlers. Returns whether
    /// every one completed.
    pub fn run(self) -> bool {
        self.run_until(None)
    }

    /// [`run`](Self::run), withdrawing the communications that have not completed
    /// at `deadline` (they report a timeout).
    ///
    /// ```
    /// use hoare_core::alt::Par;
    /// use hoare_core::chan::{one2one, Channel, SendTimeoutError};
    /// use std::time::{Duration, Instant};
    ///
    /// let (buf_tx, buf_rx) = Channel::builder().bounded(1).one2one::<u32>();
    /// let (tx, _nobody_reads) = one2one::<u32>();
    /// let mut back = None;
    /// let mut par = Par::new();
    /// par.send(&buf_tx, 1, |r| r.unwrap()); // the buffer takes it at once
    /// par.send(&tx, 2, |r| back = r.err());
    /// let all = par.run_deadline(Instant::now() + Duration::from_millis(10));
    /// assert!(!all);
    /// assert_eq!(back, Some(SendTimeoutError::Timeout(2)));
    /// assert_eq!(buf_rx.recv(), Ok(1));
    /// ```
    pub fn run_deadline(self, deadline: Instant) -> bool {
        self.run_until(Some(deadline))
    }

    /// [`run_deadline`](Self::run_deadline) `timeout` from now.
    pub fn run_timeout(self, timeout: Duration) -> bool {
        self.run_until(Some(crate::timer::deadline_after(timeout)))
    }

    fn run_until(mut self, deadline: Option<Instant>) -> bool {
        let n = self.branches.len();
        let mut pending: Vec<usize> = (0..n).collect();
        let mut all = true;
        let mut timeout = TimeoutCase::new(deadline);
        while !pending.is_empty() {
            let chosen = {
                let mut cases: Vec<&mut (dyn Case + 'a)> = Vec::with_capacity(pending.len() + 1);
                // Borrow the pending branches' cases (distinct elements).
                let mut rest: &mut [Box<dyn Branch<'a> + 'a>] = &mut self.branches;
                let mut base = 0;
                for &i in &pending {
                    let (_, tail) = std::mem::take(&mut rest).split_at_mut(i - base);
                    let (b, tail) = tail.split_first_mut().expect("a pending branch");
                    b.renew();
                    cases.push(b.case());
                    rest = tail;
                    base = i + 1;
                }
                cases.push(&mut timeout);
                super::engine::select(&mut cases, 0)
            };
            if chosen == pending.len() {
                // The deadline: the rest are withdrawn (the alt left no trace).
                timeout.fire();
                for &i in &pending {
                    self.branches[i].abandon();
                }
                all = false;
                break;
            }
            if self.branches[pending[chosen]].chosen() {
                pending.remove(chosen);
            }
        }
        let mut ok = all;
        for b in self.branches {
            ok &= b.ok();
            b.finish();
        }
        ok
    }
}

/// Sends each value to its end, all at once, and returns when every send has
/// ended: the outcome of each, in order (occam's `PAR` of outputs).
///
/// ```
/// use hoare_core::alt::par_send;
/// use hoare_core::chan::one2one;
///
/// let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(|_| one2one::<u32>()).unzip();
/// // The readers take their values in the opposite order.
/// let t = std::thread::spawn(move || rxs.iter().rev().map(|rx| rx.recv().unwrap()).collect::<Vec<_>>());
/// let r = par_send(txs.iter().zip([10, 20, 30]));
/// assert!(r.iter().all(|r| r.is_ok()));
/// assert_eq!(t.join().unwrap(), [30, 20, 10]);
/// ```
pub fn par_send<'a, T: 'a, S: Sharing>(
    items: impl IntoIterator<Item = (&'a Sender<T, S>, T)>,
) -> Vec<Result<(), SendError<T>>> {
    let items: Vec<_> = items.into_iter().collect();
    let mut out: Vec<Option<Result<(), SendError<T>>>> = (0..items.len()).map(|_| None).collect();
    {
        let mut par = Par::new();
        for ((tx, v), slot) in items.into_iter().zip(out.iter_mut()) {
            par.send(tx, v, move |r| {
                *slot = Some(r.map_err(|e| SendError(e.into_inner())));
            });
        }
        par.run();
    }
    out.into_iter()
        .map(|r| r.expect("every branch reports"))
        .collect()
}

/// Receives one value from each end, all at once, and returns when every
/// receive has ended: the value (or the poison) of each, in order (occam's `PAR`
/// of inputs).
///
/// ```
/// use hoare_core::alt::par_recv;
/// use hoare_core::chan::{one2one, RecvError};
///
/// let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(|_| one2one::<u32>()).unzip();
/// let t = std::thread::spawn(move || {
///     txs[2].send(2).unwrap(); // in any order
///     txs[0].send(0).unwrap();
///     drop(txs); // poisons channel 1, whose value never comes
/// });
/// assert_eq!(par_recv(&rxs), [Ok(0), Err(RecvError::Poisoned), Ok(2)]);
/// t.join().unwrap();
/// ```
pub fn par_recv<T, S: Sharing>(rxs: &[Receiver<T, S>]) -> Vec<Result<T, RecvError>> {
    let mut out: Vec<Option<Result<T, RecvError>>> = (0..rxs.len()).map(|_| None).collect();
    {
        let mut par = Par::new();
        for (rx, slot) in rxs.iter().zip(out.iter_mut()) {
            par.recv(rx, move |r| {
                *slot = Some(r.map_err(|_| RecvError::Poisoned));
            });
        }
        par.run();
    }
    out.into_iter()
        .map(|r| r.expect("every branch reports"))
        .collect()
}
