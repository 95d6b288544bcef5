//! [`Alt`]: the builder form, for a set of guards known only at run time.

use super::barrier::{AltingBarrierEnd, BarrierCase};
use super::case::{Case, ExtRecvCase, Kind, RecvCase, SendCase, SkipCase, TimeoutCase};
use super::engine::CaseSet;
use super::Fair;
use crate::chan::broadcast::{BcastRecvCase, BcastSendCase};
use crate::chan::{
    BroadcastReceiver, BroadcastSender, Receiver, RecvError, SendError, Sender, Sharing,
};
use crate::timer::Timer;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which guard an [`Alt`] chose, and what its handler returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fired<R> {
    /// The index of the guard, in the order the guards were added (from 0).
    pub guard: usize,
    /// For a replicated guard (`recv_for`, `send_for`), the index of the element
    /// (the position in the iterator it was given); `0` otherwise.
    pub element: usize,
    /// What the guard's handler returned.
    pub output: R,
}

/// Names a send guard of one [`Alt`], to take back the values it did not send
/// ([`Alt::take_unsent`]).
pub struct SendKey<T> {
    alt: u64,
    guard: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for SendKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendKey<T> {}

impl<T> fmt::Debug for SendKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendKey")
            .field("guard", &self.guard)
            .finish()
    }
}

impl<T> SendKey<T> {
    /// The index of the guard.
    pub fn guard(&self) -> usize {
        self.guard
    }
}

/// One guard (one or more cases) and its handler.
trait Guard<'a, R> {
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>);
    fn finish(&mut self, element: usize) -> R;
    /// A send guard: takes element `element`'s unsent value into `out`, an
    /// `*mut Option<T>` of its value type.
    fn take_unsent(&mut self, _element: usize, _out: *mut ()) {}
}

struct RecvGuard<'a, T, F> {
    cases: Vec<RecvCase<'a, T>>,
    f: Option<F>,
}

impl<'a, T, R, F: FnOnce(usize, Result<T, RecvError>) -> R> Guard<'a, R> for RecvGuard<'a, T, F> {
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.extend(self.cases.iter_mut().map(|c| c as &mut dyn Case));
    }
    fn finish(&mut self, element: usize) -> R {
        let r = self.cases[element].take_result();
        (self.f.take().expect("hoare: an Alt guard fired twice"))(element, r)
    }
}

struct SendGuard<'a, T, F> {
    cases: Vec<SendCase<'a, T>>,
    f: Option<F>,
}

impl<'a, T, R, F: FnOnce(usize, Result<(), SendError<T>>) -> R> Guard<'a, R>
    for SendGuard<'a, T, F>
{
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.extend(self.cases.iter_mut().map(|c| c as &mut dyn Case));
    }
    fn finish(&mut self, element: usize) -> R {
        let r = self.cases[element].take_result();
        (self.f.take().expect("hoare: an Alt guard fired twice"))(element, r)
    }
    fn take_unsent(&mut self, element: usize, out: *mut ()) {
        let v = self.cases.get_mut(element).and_then(|c| c.take_unsent());
        // SAFETY: `Alt::take_unsent` passes an `Option<T>` of this guard's `T` (the
        // key was made by this alt for this guard).
        unsafe { *(out as *mut Option<T>) = v };
    }
}

struct ExtRecvGuard<'a, T, F> {
    case: ExtRecvCase<'a, T, fn(T)>,
    f: Option<F>,
}

impl<'a, T, R, F: FnOnce(Result<T, RecvError>) -> R> Guard<'a, R> for ExtRecvGuard<'a, T, F> {
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.push(&mut self.case);
    }
    fn finish(&mut self, _element: usize) -> R {
        let mut f = self.f.take();
        let mut take = || f.take().expect("hoare: an Alt guard fired twice");
        // The handler runs with the writer held; on poison, after.
        match self.case.run(|v| take()(Ok(v))) {
            Some(Ok(r)) => r,
            Some(Err(e)) => take()(Err(e)),
            None => panic!("hoare: the chosen receive guard has no result"),
        }
    }
}

struct BcastRecvGuard<'a, T, F> {
    case: BcastRecvCase<'a, T>,
    f: Option<F>,
}

impl<'a, T: Clone, R, F: FnOnce(Result<T, RecvError>) -> R> Guard<'a, R>
    for BcastRecvGuard<'a, T, F>
{
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.push(&mut self.case);
    }
    fn finish(&mut self, _element: usize) -> R {
        let r = self
            .case
            .take_chosen()
            .expect("hoare: the chosen receive guard has no result");
        (self.f.take().expect("hoare: an Alt guard fired twice"))(r)
    }
}

struct BcastRecvWithGuard<'a, T, F> {
    case: BcastRecvCase<'a, T>,
    f: Option<F>,
}

impl<'a, T: Clone, R, F: FnOnce(Result<T, RecvError>) -> R> Guard<'a, R>
    for BcastRecvWithGuard<'a, T, F>
{
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.push(&mut self.case);
    }
    fn finish(&mut self, _element: usize) -> R {
        let mut f = self.f.take();
        let mut take = || f.take().expect("hoare: an Alt guard fired twice");
        // The handler runs while the reader holds the value; on poison, after.
        match self.case.run_with(|v| take()(Ok(v))) {
            Some(Ok(r)) => r,
            Some(Err(e)) => take()(Err(e)),
            None => panic!("hoare: the chosen receive guard has no result"),
        }
    }
}

struct BcastSendGuard<'a, T, F> {
    case: BcastSendCase<'a, T>,
    f: Option<F>,
}

impl<'a, T: Clone, R, F: FnOnce(Result<(), SendError<T>>) -> R> Guard<'a, R>
    for BcastSendGuard<'a, T, F>
{
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.push(&mut self.case);
    }
    fn finish(&mut self, _element: usize) -> R {
        let r = self
            .case
            .take_chosen()
            .expect("hoare: the chosen send guard has no result");
        (self.f.take().expect("hoare: an Alt guard fired twice"))(r)
    }
    fn take_unsent(&mut self, _element: usize, out: *mut ()) {
        let v = self.case.take_unsent();
        // SAFETY: as for `SendGuard`.
        unsafe { *(out as *mut Option<T>) = v };
    }
}

struct TimeoutGuard<Tm, F> {
    case: TimeoutCase<Tm>,
    f: Option<F>,
}

impl<'a, Tm: Timer + 'a, R, F: FnOnce() -> R> Guard<'a, R> for TimeoutGuard<Tm, F> {
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.push(&mut self.case);
    }
    fn finish(&mut self, _element: usize) -> R {
        self.case.fire();
        (self.f.take().expect("hoare: an Alt guard fired twice"))()
    }
}

struct SkipGuard<F> {
    case: SkipCase,
    f: Option<F>,
}

impl<'a, R, F: FnOnce() -> R> Guard<'a, R> for SkipGuard<F> {
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.push(&mut self.case);
    }
    fn finish(&mut self, _element: usize) -> R {
        self.case.take_chosen();
        (self.f.take().expect("hoare: an Alt guard fired twice"))()
    }
}

struct BarrierGuard<'a, F> {
    case: BarrierCase<'a>,
    f: Option<F>,
}

impl<'a, R, F: FnOnce() -> R> Guard<'a, R> for BarrierGuard<'a, F> {
    fn push_cases<'s>(&'s mut self, out: &mut Vec<&'s mut (dyn Case + 'a)>) {
        out.push(&mut self.case);
    }
    fn finish(&mut self, _element: usize) -> R {
        self.case.take_chosen();
        (self.f.take().expect("hoare: an Alt guard fired twice"))()
    }
}

/// A send guard of `value` on `chan`; disabled (`!on`), it keeps the value for
/// [`Alt::take_unsent`].
fn send_case<T>(on: bool, chan: &crate::chan::RawChan<T>, value: T) -> SendCase<'_, T> {
    if on {
        SendCase::new(Some((chan, value)))
    } else {
        SendCase::disabled(value)
    }
}

static NEXT_ALT_ID: AtomicU64 = AtomicU64::new(1);

/// Alternation over a set of guards built at run time, each with a handler that
/// runs if, and only if, its guard is chosen.
///
/// Add guards (their index is the order they were added in), with an optional
/// precondition set by [`when`](Alt::when) just before, then call
/// [`select`](Alt::select) (pri) or [`select_fair`](Alt::select_fair) once. The
/// result says which guard (and, for a replicated guard, which element) fired, with
/// its handler's output. The builder allocates; for a fixed set of guards the
/// [`alt!`](crate::alt!) macro does not.
///
/// The values of send guards belong to the builder: a value that was not sent
/// can be taken back with [`take_unsent`](Alt::take_unsent) after the selection,
/// whichever way its guard was not taken (its precondition was false, another
/// guard or a timeout was chosen); otherwise it is dropped with the builder. A
/// chosen send guard that found its channel poisoned hands the value to its
/// handler, in the `SendError`.
///
/// ```
/// use hoare_core::alt::Alt;
/// use hoare_core::chan::{Channel, Receiver};
/// use std::time::Duration;
///
/// let chans: Vec<_> = (0..4).map(|_| Channel::builder().bounded(1).one2one::<u32>()).collect();
/// chans[2].0.send(42).unwrap();
/// let rxs: Vec<&Receiver<u32>> = chans.iter().map(|(_, rx)| rx).collect();
///
/// let mut alt = Alt::new();
/// alt.recv_for(rxs.iter().copied(), |i, v| (i, v.unwrap()));
/// alt.timeout(Duration::from_millis(100), || (usize::MAX, 0));
/// let fired = alt.select();
/// assert_eq!((fired.guard, fired.element, fired.output), (0, 2, (2, 42)));
/// ```
pub struct Alt<'a, R = ()> {
    guards: Vec<Box<dyn Guard<'a, R> + 'a>>,
    /// The number of cases of each guard.
    lens: Vec<usize>,
    cond: bool,
    id: u64,
    fired: bool,
}

impl<R> fmt::Debug for Alt<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Alt")
            .field("guards", &self.guards.len())
            .field("fired", &self.fired)
            .finish()
    }
}

impl<R> Default for Alt<'_, R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a, R> Alt<'a, R> {
    /// An alt with no guards yet.
    pub fn new() -> Self {
        Self {
            guards: Vec::new(),
            lens: Vec::new(),
            cond: true,
            id: NEXT_ALT_ID.fetch_add(1, Ordering::Relaxed),
            fired: false,
        }
    }

    /// The number of guards added so far (the index the next guard gets).
    pub fn len(&self) -> usize {
        self.guards.len()
    }

    /// Whether no guard was added yet.
    pub fn is_empty(&self) -> bool {
        self.guards.is_empty()
    }

    /// Sets the precondition of the **next** guard added: with `false` it is never
    /// chosen (its channels are not even looked at; a send guard keeps its value
    /// for [`take_unsent`](Self::take_unsent)). A replicated guard's
    /// precondition covers all its elements.
    pub fn when(&mut self, cond: bool) -> &mut Self {
        self.cond = cond;
        self
    }

    fn take_cond(&mut self) -> bool {
        std::mem::replace(&mut self.cond, true)
    }

    fn push(&mut self, g: Box<dyn Guard<'a, R> + 'a>, len: usize) -> usize {
        assert!(
            !self.fired,
            "hoare: adding a guard to an Alt that has selected"
        );
        self.guards.push(g);
        self.lens.push(len);
        self.guards.len() - 1
    }

    /// A receive guard on `rx`; `f` gets the value, or the poison.
    pub fn recv<T: 'a, S: Sharing>(
        &mut self,
        rx: &'a Receiver<T, S>,
        f: impl FnOnce(Result<T, RecvError>) -> R + 'a,
    ) -> &mut Self {
        let on = self.take_cond();
        let g = RecvGuard {
            cases: vec![RecvCase::new(on.then(|| rx.raw()))],
            f: Some(move |_: usize, r| f(r)),
        };
        self.push(Box::new(g), 1);
        self
    }

    /// A receive guard on `rx` that is dropped once its channel is done: as
    /// [`recv`](Self::recv) with the precondition [`rx.is_open()`](Receiver::is_open)
    /// (and'ed with a [`when`](Self::when) set before). A poisoned channel's guard
    /// is otherwise ready for ever; with this one `f` sees the poison once, and an
    /// alt loop built anew each time ends with [`try_select`](Self::try_select)
    /// once every guard is dropped (see
    /// [the alt loop idiom](mod@crate::alt#ending-an-alt-loop-on-poison)).
    pub fn recv_open<T: 'a, S: Sharing>(
        &mut self,
        rx: &'a Receiver<T, S>,
        f: impl FnOnce(Result<T, RecvError>) -> R + 'a,
    ) -> &mut Self {
        let on = self.cond && rx.is_open();
        self.when(on).recv(rx, f)
    }

    /// A replicated receive guard: one receive per end of `rxs` (ProXC++'s
    /// `recv_for`); `f` gets the element's index and the value, or the poison.
    pub fn recv_for<T: 'a, S: Sharing, I>(
        &mut self,
        rxs: I,
        f: impl FnOnce(usize, Result<T, RecvError>) -> R + 'a,
    ) -> &mut Self
    where
        I: IntoIterator<Item = &'a Receiver<T, S>>,
    {
        let on = self.take_cond();
        let cases: Vec<_> = rxs
            .into_iter()
            .map(|rx| RecvCase::new(on.then(|| rx.raw())))
            .collect();
        let n = cases.len();
        self.push(Box::new(RecvGuard { cases, f: Some(f) }), n);
        self
    }

    /// A send guard of `value` on `tx`; `f` gets `Ok(())`, or the poison with the
    /// value. The key gives the value back if another guard is chosen.
    pub fn send<T: 'a, S: Sharing>(
        &mut self,
        tx: &'a Sender<T, S>,
        value: T,
        f: impl FnOnce(Result<(), SendError<T>>) -> R + 'a,
    ) -> SendKey<T> {
        let on = self.take_cond();
        let g = SendGuard {
            cases: vec![send_case(on, tx.raw(), value)],
            f: Some(move |_: usize, r| f(r)),
        };
        let guard = self.push(Box::new(g), 1);
        self.send_key(guard)
    }

    /// A replicated send guard: one send per `(end, value)` pair; `f` gets the
    /// element's index and the outcome.
    pub fn send_for<T: 'a, S: Sharing, I>(
        &mut self,
        items: I,
        f: impl FnOnce(usize, Result<(), SendError<T>>) -> R + 'a,
    ) -> SendKey<T>
    where
        I: IntoIterator<Item = (&'a Sender<T, S>, T)>,
    {
        let on = self.take_cond();
        let cases: Vec<_> = items
            .into_iter()
            .map(|(tx, v)| send_case(on, tx.raw(), v))
            .collect();
        let n = cases.len();
        let guard = self.push(Box::new(SendGuard { cases, f: Some(f) }), n);
        self.send_key(guard)
    }

    fn send_key<T>(&self, guard: usize) -> SendKey<T> {
        SendKey {
            alt: self.id,
            guard,
            _t: PhantomData,
        }
    }

    /// An extended-rendezvous receive guard on `rx` (JCSP's alt, then
    /// `startRead`): when it is chosen, the handler `f` runs on the value with the
    /// writer still held (see [`Receiver::recv_with`]); on poison it gets the
    /// poison.
    ///
    /// ```
    /// use hoare_core::alt::Alt;
    /// use hoare_core::chan::one2one;
    ///
    /// let (tx, rx) = one2one::<u32>();
    /// let w = std::thread::spawn(move || tx.send(4));
    /// let mut alt = Alt::new();
    /// alt.recv_with(&rx, |v| v.map(|v| v * 10)); // the writer waits until this returns
    /// assert_eq!(alt.select().output, Ok(40));
    /// assert!(w.join().unwrap().is_ok());
    /// ```
    pub fn recv_with<T: 'a, S: Sharing>(
        &mut self,
        rx: &'a Receiver<T, S>,
        f: impl FnOnce(Result<T, RecvError>) -> R + 'a,
    ) -> &mut Self {
        let on = self.take_cond();
        let ignore: fn(T) = drop;
        let g = ExtRecvGuard {
            case: ExtRecvCase::new(on.then(|| rx.raw()), ignore),
            f: Some(f),
        };
        self.push(Box::new(g), 1);
        self
    }

    /// A receive guard on a broadcast reader end
    /// ([`BroadcastReceiver`](crate::chan::BroadcastReceiver)); `f` gets the value,
    /// or the poison.
    ///
    /// ```
    /// use hoare_core::alt::Alt;
    /// use hoare_core::chan::broadcast_bounded;
    /// use std::time::Duration;
    ///
    /// let (tx, rx) = broadcast_bounded::<u32>(1);
    /// tx.send(3).unwrap();
    /// let mut alt = Alt::new();
    /// alt.bcast_recv(&rx, |v| v.unwrap());
    /// alt.timeout(Duration::from_millis(10), || 0);
    /// assert_eq!(alt.select().output, 3);
    /// ```
    pub fn bcast_recv<T: Clone + 'a>(
        &mut self,
        rx: &'a BroadcastReceiver<T>,
        f: impl FnOnce(Result<T, RecvError>) -> R + 'a,
    ) -> &mut Self {
        let on = self.take_cond();
        let g = BcastRecvGuard {
            case: rx.__alt_recv_case(on),
            f: Some(f),
        };
        self.push(Box::new(g), 1);
        self
    }

    /// An extended receive guard on a broadcast reader end: when it is chosen,
    /// `f` runs on the value while the reader holds it (a rendezvous writer stays
    /// blocked, a buffered value keeps its place, see
    /// [`BroadcastReceiver::recv_with`]); on poison it gets the poison.
    ///
    /// ```
    /// use hoare_core::alt::Alt;
    /// use hoare_core::chan::broadcast;
    ///
    /// let (tx, rx) = broadcast::<u32>();
    /// let w = std::thread::spawn(move || tx.send(4));
    /// let mut alt = Alt::new();
    /// alt.bcast_recv_with(&rx, |v| v.map(|v| v * 10)); // the writer waits until this returns
    /// assert_eq!(alt.select().output, Ok(40));
    /// assert!(w.join().unwrap().is_ok());
    /// ```
    pub fn bcast_recv_with<T: Clone + 'a>(
        &mut self,
        rx: &'a BroadcastReceiver<T>,
        f: impl FnOnce(Result<T, RecvError>) -> R + 'a,
    ) -> &mut Self {
        let on = self.take_cond();
        let g = BcastRecvWithGuard {
            case: rx.__alt_held_recv_case(on),
            f: Some(f),
        };
        self.push(Box::new(g), 1);
        self
    }

    /// A send guard of `value` on a broadcast's writer
    /// ([`BroadcastSender`](crate::chan::BroadcastSender)): ready when the broadcast
    /// has room (rendezvous: the previous value was taken by every reader); once
    /// chosen on a rendezvous broadcast, the alt returns when every reader has
    /// taken the value. `f` gets `Ok(())`, or the poison with the value; the key
    /// gives the value back if another guard is chosen.
    ///
    /// ```
    /// use hoare_core::alt::Alt;
    /// use hoare_core::chan::broadcast_bounded;
    ///
    /// let (tx, rx) = broadcast_bounded::<u32>(1);
    /// let mut alt = Alt::new();
    /// alt.bcast_send(&tx, 9, |r| r.is_ok());
    /// assert!(alt.select().output);
    /// assert_eq!(rx.recv(), Ok(9));
    /// ```
    pub fn bcast_send<T: Clone + 'a>(
        &mut self,
        tx: &'a BroadcastSender<T>,
        value: T,
        f: impl FnOnce(Result<(), SendError<T>>) -> R + 'a,
    ) -> SendKey<T> {
        let on = self.take_cond();
        let g = BcastSendGuard {
            case: if on {
                tx.__alt_send_case(Some(value))
            } else {
                BcastSendCase::disabled(value)
            },
            f: Some(f),
        };
        let guard = self.push(Box::new(g), 1);
        self.send_key(guard)
    }

    /// A timeout guard. `timer` is any [`Timer`]: a `Duration` (relative), an
    /// `Instant` (absolute), an [`Egg`](crate::timer::Egg) or a
    /// [`Date`](crate::timer::Date) (stateless: by value), or `&mut` a
    /// [`Repeat`](crate::timer::Repeat) kept across alts, so that it advances (a
    /// `Repeat` is not `Copy`: by value it would be moved into this alt). Its
    /// deadline is asked for when the alt starts; it is told it fired only if this
    /// guard is chosen.
    pub fn timeout<Tm: Timer + 'a>(&mut self, timer: Tm, f: impl FnOnce() -> R + 'a) -> &mut Self {
        let on = self.take_cond();
        let g = TimeoutGuard {
            case: TimeoutCase::new(Some(timer).filter(|_| on)),
            f: Some(f),
        };
        self.push(Box::new(g), 1);
        self
    }

    /// A skip guard: chosen only if no other guard is ready.
    pub fn skip(&mut self, f: impl FnOnce() -> R + 'a) -> &mut Self {
        let on = self.take_cond();
        let g = SkipGuard {
            case: SkipCase::new(on),
            f: Some(f),
        };
        self.push(Box::new(g), 1);
        self
    }

    /// An alting-barrier guard: chosen when every end enrolled on the barrier offers
    /// it (see [`AltingBarrier`](super::AltingBarrier)).
    pub fn barrier(
        &mut self,
        end: &'a mut AltingBarrierEnd,
        f: impl FnOnce() -> R + 'a,
    ) -> &mut Self {
        let on = self.take_cond();
        let g = BarrierGuard {
            case: BarrierCase::new(Some(end).filter(|_| on)),
            f: Some(f),
        };
        self.push(Box::new(g), 1);
        self
    }

    /// Selects with the **pri** policy (the first ready guard in order) and runs
    /// the chosen guard's handler.
    ///
    /// # Panics
    /// If called twice, or if no guard is enabled.
    pub fn select(&mut self) -> Fired<R> {
        self.run(|cases| super::engine::select(cases, 0))
    }

    /// Selects with the **fair** policy (see [`Fair`]); every element of a
    /// replicated guard counts as a guard of its own.
    pub fn select_fair(&mut self, fair: &mut Fair) -> Fired<R> {
        self.run(|cases| fair.__select(cases))
    }

    /// Like [`select`](Self::select), but `None` instead of a panic when no guard
    /// is enabled: the end of an alt loop whose guards drop out once their
    /// channels are done ([`recv_open`](Self::recv_open), or preconditions set
    /// with [`when`](Self::when)).
    ///
    /// ```
    /// use hoare_core::alt::Alt;
    /// use hoare_core::chan::Channel;
    ///
    /// let (ta, a) = Channel::builder().bounded(4).one2one::<u32>();
    /// let (tb, b) = Channel::builder().bounded(4).one2one::<u32>();
    /// (1..=3).for_each(|i| ta.send(i).unwrap());
    /// tb.send(10).unwrap();
    /// drop((ta, tb)); // both writers are gone: their items stay to be read
    /// let mut sum = 0;
    /// // The loop: each guard drops out once its channel is done; the loop ends
    /// // when none is left.
    /// loop {
    ///     let mut alt = Alt::new();
    ///     alt.recv_open(&a, |v| v.unwrap_or(0));
    ///     alt.recv_open(&b, |v| v.unwrap_or(0));
    ///     let Some(fired) = alt.try_select() else { break };
    ///     sum += fired.output;
    /// }
    /// assert_eq!(sum, 16);
    /// ```
    pub fn try_select(&mut self) -> Option<Fired<R>> {
        self.any_enabled().then(|| self.select())
    }

    /// [`try_select`](Self::try_select) with the **fair** policy.
    pub fn try_select_fair(&mut self, fair: &mut Fair) -> Option<Fired<R>> {
        self.any_enabled().then(|| self.select_fair(fair))
    }

    /// Whether some guard is enabled (its precondition held).
    fn any_enabled(&mut self) -> bool {
        let mut cases: Vec<&mut (dyn Case + 'a)> = Vec::new();
        for g in self.guards.iter_mut() {
            g.push_cases(&mut cases);
        }
        cases.iter().any(|c| c.kind() != Kind::Off)
    }

    fn run(&mut self, sel: impl FnOnce(&mut [&mut (dyn Case + 'a)]) -> usize) -> Fired<R> {
        assert!(!self.fired, "hoare: an Alt selects only once");
        self.fired = true;
        let total = self.lens.iter().sum();
        let chosen = {
            let mut cases: Vec<&mut (dyn Case + 'a)> = Vec::with_capacity(total);
            for g in self.guards.iter_mut() {
                g.push_cases(&mut cases);
            }
            sel(&mut cases)
        };
        let mut element = chosen;
        let mut guard = 0;
        while element >= self.lens[guard] {
            element -= self.lens[guard];
            guard += 1;
        }
        let output = self.guards[guard].finish(element);
        Fired {
            guard,
            element,
            output,
        }
    }

    /// Takes back the value of element `element` (0 for a plain send guard) of the
    /// send guard `key`, if it was not sent: its guard was disabled by its
    /// precondition, or not chosen (another guard, a timeout or a skip was). `None`
    /// if it was sent, was handed to the handler (poison), was taken already, or
    /// the element does not exist.
    ///
    /// ```
    /// use hoare_core::alt::Alt;
    /// use hoare_core::chan::one2one;
    /// use std::time::Duration;
    ///
    /// let (tx, _rx) = one2one::<String>();
    /// let mut alt = Alt::new();
    /// let off = alt.when(false).send(&tx, "disabled".into(), |_| "sent");
    /// let idle = alt.send(&tx, "nobody reads".into(), |_| "sent");
    /// alt.timeout(Duration::from_millis(1), || "timeout");
    /// assert_eq!(alt.select().output, "timeout");
    /// assert_eq!(alt.take_unsent(off, 0).as_deref(), Some("disabled"));
    /// assert_eq!(alt.take_unsent(idle, 0).as_deref(), Some("nobody reads"));
    /// ```
    ///
    /// # Panics
    /// If `key` belongs to another alt.
    pub fn take_unsent<T>(&mut self, key: SendKey<T>, element: usize) -> Option<T> {
        assert_eq!(key.alt, self.id, "hoare: a SendKey of another Alt");
        let mut out: Option<T> = None;
        self.guards[key.guard].take_unsent(element, &mut out as *mut Option<T> as *mut ());
        out
    }
}

/// `recv_any`'s cases and [`RecvAny`](super::RecvAny)'s: every one an enabled
/// receive guard.
impl<'a, T> CaseSet for [RecvCase<'a, T>] {
    type Case = RecvCase<'a, T>;
    const ALL_CHANNELS: bool = true;
    #[inline]
    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    #[inline]
    fn case(&mut self, i: usize) -> &mut RecvCase<'a, T> {
        &mut self[i]
    }
    #[inline]
    fn case_ref(&self, i: usize) -> &RecvCase<'a, T> {
        &self[i]
    }
}

/// The most stack `recv_any` spends on a buffer of cases.
const ON_STACK_BYTES: usize = 8 * 1024;

/// Runs `f` over receive cases for `rxs` kept on the stack (no allocation), then
/// takes the chosen case's result and drops the cases.
fn on_stack<'a, T, S: Sharing, const N: usize>(
    rxs: &'a [Receiver<T, S>],
    f: impl FnOnce(&mut [RecvCase<'a, T>]) -> usize,
) -> (usize, Result<T, RecvError>) {
    use std::mem::MaybeUninit;
    let n = rxs.len();
    assert!(n <= N);
    let mut buf: [MaybeUninit<RecvCase<'a, T>>; N] = [const { MaybeUninit::uninit() }; N];
    for (slot, rx) in buf.iter_mut().zip(rxs) {
        slot.write(RecvCase::new(Some(rx.raw())));
    }
    // SAFETY: the first `n` slots were initialised just above; they are dropped in
    // place below, once (a panic in between leaks them, which is safe).
    let cases: &mut [RecvCase<'a, T>] =
        unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut RecvCase<'a, T>, n) };
    let chosen = f(cases);
    let r = cases[chosen].take_result();
    // SAFETY: initialised above, dropped once.
    unsafe { std::ptr::drop_in_place(cases as *mut [RecvCase<'a, T>]) };
    (chosen, r)
}

fn recv_any_with<'a, T, S: Sharing>(
    rxs: &'a [Receiver<T, S>],
    sel: impl FnOnce(&mut [RecvCase<'a, T>]) -> usize,
) -> (usize, Result<T, RecvError>) {
    let n = rxs.len();
    assert!(
        n > 0,
        "hoare: an alt with no enabled guard would wait for ever"
    );
    // The cases hold their packets, so a buffer of them is as large as that many
    // values: on the stack only while that stays small (a process's stack is
    // small, and large values are moved by pointer, see `chan`'s "Large values").
    let case = std::mem::size_of::<RecvCase<'a, T>>();
    if n <= 8 && 8 * case <= ON_STACK_BYTES {
        on_stack::<T, S, 8>(rxs, sel)
    } else if n <= 32 && 32 * case <= ON_STACK_BYTES {
        on_stack::<T, S, 32>(rxs, sel)
    } else {
        let mut cases: Vec<RecvCase<'a, T>> =
            rxs.iter().map(|rx| RecvCase::new(Some(rx.raw()))).collect();
        let chosen = sel(&mut cases);
        (chosen, cases[chosen].take_result())
    }
}

/// Alternation over a slice of receive ends alone (a replicated receive guard,
/// **pri** policy): returns the index of the end that was chosen and what it
/// received (or its poison). Allocates nothing for up to 32 ends; for more, or to
/// alt over the same ends again and again, use a [`RecvAny`](super::RecvAny).
///
/// ```
/// use hoare_core::chan::Channel;
///
/// let (txs, rxs): (Vec<_>, Vec<_>) =
///     (0..3).map(|_| Channel::builder().bounded(1).one2one::<u32>()).unzip();
/// txs[1].send(7).unwrap();
/// assert_eq!(hoare_core::alt::recv_any(&rxs), (1, Ok(7)));
/// ```
pub fn recv_any<T, S: Sharing>(rxs: &[Receiver<T, S>]) -> (usize, Result<T, RecvError>) {
    recv_any_with(rxs, |cases| super::engine::select_set(cases, 0))
}

/// [`recv_any`] with the **fair** policy.
pub fn fair_recv_any<T, S: Sharing>(
    fair: &mut Fair,
    rxs: &[Receiver<T, S>],
) -> (usize, Result<T, RecvError>) {
    recv_any_with(rxs, |cases| fair.select_set(cases))
}
