//! The guards as the engine sees them: one [`Case`] per guard (per element of a
//! replicated guard), driven through the phases of [`select`](super::select).
//!
//! These types are public only so that the [`alt!`](crate::alt!) macro can name them
//! from other crates; they are not part of the stable API.

use crate::chan::ops::{ExtEnd, ReleaseOnDrop};
use crate::chan::select::{complete_recv, complete_send, Deal, FinishOnDrop, SelectLock, Selected};
use crate::chan::{Entry, Packet, RawChan, RecvError, SendError};
use crate::timer::Timer;
use crate::wait::Guard;
use crate::waiter::Waiter;
use std::marker::PhantomData;
use std::ptr;
use std::time::Instant;

/// What kind of guard a [`Case`] is, for this alt.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Its precondition is false: never chosen, never touched.
    Off,
    /// A channel guard (receive or send).
    Chan,
    /// A timeout guard.
    Timeout,
    /// A skip guard.
    Skip,
    /// An alting-barrier guard.
    Barrier,
}

/// One guard as the engine drives it.
///
/// # Safety
/// An implementation must report, from [`addr`](Case::addr), the address of the
/// `RawChan<T>` it locks and nothing else; [`lock_shared`](Case::lock_shared) is
/// handed the [`lock_slot`](Case::lock_slot) of another case with the same address
/// and casts it to its own lock type.
#[doc(hidden)]
pub unsafe trait Case {
    /// The kind of the guard (constant for one alt).
    fn kind(&self) -> Kind;
    /// The address of the channel (channel guards).
    fn addr(&self) -> usize {
        0
    }
    /// Fast path: locks the channel alone, tries the guard and releases the lock.
    /// `true`: the guard was chosen and completed (or found poisoned); its result
    /// is ready.
    fn try_alone(&mut self) -> bool {
        false
    }
    /// Locks the channel; this case owns the lock.
    fn lock_own(&mut self) {}
    /// Where this case keeps the lock it owns (an `Option<SelectLock<'_, T>>`).
    fn lock_slot(&mut self) -> *mut () {
        ptr::null_mut()
    }
    /// Uses the lock another case of the same channel owns.
    ///
    /// # Safety
    /// `slot` is the [`lock_slot`](Case::lock_slot) of a locked case whose
    /// [`addr`](Case::addr) equals this one's, and stays valid until
    /// [`unlock`](Case::unlock).
    unsafe fn lock_shared(&mut self, _slot: *mut ()) {}
    /// Releases (or forgets, if shared) the lock.
    fn unlock(&mut self) {}
    /// Under the lock: tries the guard. `true`: chosen; call
    /// [`complete`](Case::complete) once every lock is released.
    fn try_locked(&mut self) -> bool {
        false
    }
    /// Under the lock: registers the guard with the alt's waiter.
    ///
    /// # Safety
    /// `waiter` and this case stay valid and unmoved until
    /// [`unregister`](Case::unregister) has been called after the wait.
    unsafe fn register(&mut self, _waiter: *const Waiter, _token: usize) {}
    /// After the wait: removes the guard's entry (takes the channel's lock).
    fn unregister(&mut self, _waiter: *const Waiter) {}
    /// Under the lock: removes every entry of `waiter` from the channel (the
    /// entries an earlier wait of a lingering set left behind).
    fn unregister_locked(&mut self, _waiter: *const Waiter) {}
    /// Completes a communication decided by [`try_locked`](Case::try_locked).
    fn complete(&mut self) {}
    /// The guard was committed by another party while the alt waited.
    fn passive(&mut self, _poisoned: bool) {}
    /// A timeout guard: whether it has expired already (not counted as a use).
    fn expired(&self) -> bool {
        false
    }
    /// A timeout guard: its deadline for this alt (asked once, then cached).
    fn deadline(&mut self) -> Option<Instant> {
        None
    }
    /// A timeout or skip guard was chosen.
    fn set_chosen(&mut self) {}
    /// The guard as a report shows it (`None`: precondition false).
    fn guard(&self) -> Option<Guard> {
        None
    }
}

/// Implements [`Case`] for a wrapper type by forwarding every method to its
/// `inner` case.
macro_rules! delegate_case {
    ([$($g:tt)*] $ty:ty) => {
        // SAFETY: every method is the inner case's, which keeps `Case`'s contract
        // (the address and the lock slot are the inner case's own).
        unsafe impl<$($g)*> $crate::alt::Case for $ty {
            #[inline]
            fn kind(&self) -> $crate::alt::Kind {
                self.inner.kind()
            }
            #[inline]
            fn addr(&self) -> usize {
                self.inner.addr()
            }
            #[inline]
            fn try_alone(&mut self) -> bool {
                self.inner.try_alone()
            }
            #[inline]
            fn lock_own(&mut self) {
                self.inner.lock_own()
            }
            fn lock_slot(&mut self) -> *mut () {
                self.inner.lock_slot()
            }
            unsafe fn lock_shared(&mut self, slot: *mut ()) {
                // SAFETY: forwarded from the caller.
                unsafe { self.inner.lock_shared(slot) }
            }
            #[inline]
            fn unlock(&mut self) {
                self.inner.unlock()
            }
            #[inline]
            fn try_locked(&mut self) -> bool {
                self.inner.try_locked()
            }
            unsafe fn register(&mut self, waiter: *const $crate::waiter::Waiter, token: usize) {
                // SAFETY: forwarded from the caller (the inner case lives in this one).
                unsafe { self.inner.register(waiter, token) }
            }
            fn unregister(&mut self, waiter: *const $crate::waiter::Waiter) {
                self.inner.unregister(waiter)
            }
            fn unregister_locked(&mut self, waiter: *const $crate::waiter::Waiter) {
                self.inner.unregister_locked(waiter)
            }
            #[inline]
            fn complete(&mut self) {
                self.inner.complete()
            }
            fn passive(&mut self, poisoned: bool) {
                self.inner.passive(poisoned)
            }
            fn guard(&self) -> Option<$crate::wait::Guard> {
                self.inner.guard()
            }
        }
    };
}
pub(crate) use delegate_case;

/// The lock a channel case uses: its own, or another case's (same channel).
struct LockRef<'a, T> {
    own: Option<SelectLock<'a, T>>,
    shared: *mut Option<SelectLock<'a, T>>,
}

impl<'a, T> LockRef<'a, T> {
    const fn new() -> Self {
        Self {
            own: None,
            shared: ptr::null_mut(),
        }
    }

    #[inline]
    fn get(&mut self) -> &mut SelectLock<'a, T> {
        let l = if self.shared.is_null() {
            &mut self.own
        } else {
            // SAFETY: `lock_shared`'s contract: the owner's slot is valid, locked, and
            // holds a lock of the same channel (so of the same `T`) until `unlock`.
            unsafe { &mut *self.shared }
        };
        l.as_mut().expect("hoare: alt guard used without its lock")
    }

    #[inline]
    fn unlock(&mut self) {
        self.own = None;
        self.shared = ptr::null_mut();
    }
}

/// Where a [`ChanCase`] stands in its alt.
enum State<T> {
    /// Not chosen (yet).
    Open,
    /// Chosen under the locks; to be completed once they are released.
    Decided(Deal<T>),
    /// Chosen and complete, with the poison flag; the result is still to be taken.
    Chosen { poisoned: bool },
    /// The result was taken.
    Taken,
}

/// What a receive guard and a send guard do differently; [`ChanCase`] does the
/// rest (locking, trying, registering, recording the result) for both.
///
/// Implemented by [`RecvDir`] and [`SendDir`].
pub(crate) trait Direction<'a, T: 'a> {
    /// The operation, as a report names it.
    const OP: &'static str;
    /// The guard's result.
    type Output;
    /// Under the lock: tries the communication (`packet` is the case's).
    fn try_select(lock: &mut SelectLock<'a, T>, packet: &mut Packet<T>) -> Selected<Deal<T>>;
    /// Completes a decided communication.
    ///
    /// # Safety
    /// `d` came from [`try_select`](Direction::try_select) with this `packet`, and
    /// every lock is released. Returns whether it communicated (`false`: an
    /// extended receiver refused a sent value, which is back in `packet`, and
    /// poisoned the channel).
    unsafe fn complete(d: Deal<T>, packet: &mut Packet<T>) -> bool;
    /// The result of a chosen guard: its channel was poisoned, or it communicated
    /// (a receive's value is in `packet`).
    fn output(poisoned: bool, packet: &mut Packet<T>) -> Self::Output;
    /// Under the lock: registers `entry` on the channel's queue of this direction.
    ///
    /// # Safety
    /// As [`SelectLock::register_send`]; `entry`'s packet is empty for a receive
    /// and holds the value for a send.
    unsafe fn register(lock: &mut SelectLock<'a, T>, entry: Entry<T>);
}

/// The receive direction of a [`ChanCase`].
#[doc(hidden)]
#[derive(Debug)]
pub enum RecvDir {}

impl<'a, T: 'a> Direction<'a, T> for RecvDir {
    const OP: &'static str = "recv";
    type Output = Result<T, RecvError>;

    #[inline(always)]
    fn try_select(lock: &mut SelectLock<'a, T>, packet: &mut Packet<T>) -> Selected<Deal<T>> {
        // Not extended: no buffer place stays reserved.
        lock.try_recv(false, packet)
    }

    #[inline(always)]
    unsafe fn complete(d: Deal<T>, packet: &mut Packet<T>) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { complete_recv(d, packet) };
        true
    }

    #[inline]
    fn output(poisoned: bool, packet: &mut Packet<T>) -> Self::Output {
        if poisoned {
            Err(RecvError::Poisoned)
        } else {
            Ok(packet.take_full())
        }
    }

    unsafe fn register(lock: &mut SelectLock<'a, T>, entry: Entry<T>) {
        // SAFETY: forwarded from the caller: the waiter and the (empty) packet stay
        // put until `unregister`.
        unsafe { lock.register_recv(entry) }
    }
}

/// The send direction of a [`ChanCase`].
#[doc(hidden)]
#[derive(Debug)]
pub enum SendDir {}

impl<'a, T: 'a> Direction<'a, T> for SendDir {
    const OP: &'static str = "send";
    type Output = Result<(), SendError<T>>;

    #[inline(always)]
    fn try_select(lock: &mut SelectLock<'a, T>, packet: &mut Packet<T>) -> Selected<Deal<T>> {
        lock.try_send(packet)
    }

    #[inline(always)]
    unsafe fn complete(d: Deal<T>, packet: &mut Packet<T>) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { complete_send(d, packet) }
    }

    #[inline]
    fn output(poisoned: bool, packet: &mut Packet<T>) -> Self::Output {
        if poisoned {
            Err(SendError(packet.take_full()))
        } else {
            Ok(())
        }
    }

    unsafe fn register(lock: &mut SelectLock<'a, T>, entry: Entry<T>) {
        // SAFETY: forwarded from the caller: the waiter and the packet (which holds
        // the value) stay put until `unregister`.
        unsafe { lock.register_send(entry) }
    }
}

/// A channel guard: a [`RecvCase`] or a [`SendCase`]. Its value (the one to send,
/// or the one received) lives only in its packet.
#[doc(hidden)]
pub struct ChanCase<'a, T, D> {
    chan: Option<&'a RawChan<T>>,
    lock: LockRef<'a, T>,
    state: State<T>,
    packet: Packet<T>,
    dir: PhantomData<D>,
}

/// A receive guard.
#[doc(hidden)]
pub type RecvCase<'a, T> = ChanCase<'a, T, RecvDir>;

/// A send guard. Its value lives in the case; if another guard is chosen it stays
/// there (see [`into_unsent`](ChanCase::into_unsent)).
#[doc(hidden)]
pub type SendCase<'a, T> = ChanCase<'a, T, SendDir>;

impl<'a, T, D> ChanCase<'a, T, D> {
    #[inline]
    fn with(chan: Option<&'a RawChan<T>>, packet: Packet<T>) -> Self {
        Self {
            chan,
            lock: LockRef::new(),
            state: State::Open,
            packet,
            dir: PhantomData,
        }
    }

    #[inline]
    fn chan(&self) -> &'a RawChan<T> {
        self.chan.expect("hoare: a disabled guard was used")
    }
}

/// The result of `c`, if it was chosen (taken: asking again gives `None`).
#[inline]
fn chosen<'a, T, D: Direction<'a, T>>(c: &mut ChanCase<'a, T, D>) -> Option<D::Output> {
    match c.state {
        State::Chosen { poisoned } => {
            c.state = State::Taken;
            Some(D::output(poisoned, &mut c.packet))
        }
        _ => None,
    }
}

impl<'a, T> RecvCase<'a, T> {
    /// A receive guard on `chan` (`None`: precondition false).
    #[inline]
    pub fn new(chan: Option<&'a RawChan<T>>) -> Self {
        Self::with(chan, Packet::empty())
    }

    /// The result, if this guard was chosen (consumes the case).
    #[inline]
    pub fn into_chosen(mut self) -> Option<Result<T, RecvError>> {
        chosen(&mut self)
    }

    /// The result of the chosen guard.
    pub(crate) fn take_result(&mut self) -> Result<T, RecvError> {
        chosen(self).expect("hoare: the chosen receive guard has no result")
    }
}

impl<'a, T> SendCase<'a, T> {
    /// A send guard of `value` on `chan` (`None`: precondition false).
    #[inline]
    pub fn new(arg: Option<(&'a RawChan<T>, T)>) -> Self {
        match arg {
            Some((c, v)) => Self::with(Some(c), Packet::with_value(v)),
            None => Self::with(None, Packet::empty()),
        }
    }

    /// A send guard whose precondition is false: never chosen, its channel never
    /// touched, but it keeps `value` for [`take_unsent`](Self::take_unsent).
    #[inline]
    pub(crate) fn disabled(value: T) -> Self {
        Self::with(None, Packet::with_value(value))
    }

    /// The result, if this guard was chosen (consumes the case; the unsent value
    /// is dropped).
    #[inline]
    pub fn into_chosen(mut self) -> Option<Result<(), SendError<T>>> {
        chosen(&mut self)
    }

    /// The result of the chosen guard.
    pub(crate) fn take_result(&mut self) -> Result<(), SendError<T>> {
        chosen(self).expect("hoare: the chosen send guard has no result")
    }

    /// The value, if it was not sent.
    pub fn into_unsent(mut self) -> Option<T> {
        self.packet.take()
    }

    pub(crate) fn take_unsent(&mut self) -> Option<T> {
        if matches!(self.state, State::Decided(_)) {
            return None;
        }
        self.packet.take()
    }
}

// SAFETY: `addr` is the address of the channel `lock_own` locks.
unsafe impl<'a, T, D: Direction<'a, T>> Case for ChanCase<'a, T, D> {
    #[inline]
    fn kind(&self) -> Kind {
        if self.chan.is_some() {
            Kind::Chan
        } else {
            Kind::Off
        }
    }

    #[inline]
    fn addr(&self) -> usize {
        self.chan().addr()
    }

    fn guard(&self) -> Option<Guard> {
        self.chan.map(|c| Guard::Chan {
            op: D::OP,
            chan: c.object(),
        })
    }

    #[inline(always)]
    fn try_alone(&mut self) -> bool {
        let mut g = self.chan().lock();
        match D::try_select(&mut g, &mut self.packet) {
            Selected::Ready(d) => {
                drop(g);
                // SAFETY: decided with this packet under the lock just released.
                let done = unsafe { D::complete(d, &mut self.packet) };
                self.state = State::Chosen { poisoned: !done };
                true
            }
            Selected::Poisoned => {
                drop(g);
                self.state = State::Chosen { poisoned: true };
                true
            }
            Selected::NotReady => false,
        }
    }

    #[inline]
    fn lock_own(&mut self) {
        self.lock.own = Some(self.chan().lock());
        self.lock.shared = ptr::null_mut();
    }

    fn lock_slot(&mut self) -> *mut () {
        &mut self.lock.own as *mut Option<SelectLock<'_, T>> as *mut ()
    }

    unsafe fn lock_shared(&mut self, slot: *mut ()) {
        self.lock.shared = slot as *mut Option<SelectLock<'_, T>>;
    }

    #[inline]
    fn unlock(&mut self) {
        self.lock.unlock();
    }

    #[inline]
    fn try_locked(&mut self) -> bool {
        match D::try_select(self.lock.get(), &mut self.packet) {
            Selected::Ready(d) => {
                self.state = State::Decided(d);
                true
            }
            Selected::Poisoned => {
                self.state = State::Chosen { poisoned: true };
                true
            }
            Selected::NotReady => false,
        }
    }

    #[inline]
    unsafe fn register(&mut self, waiter: *const Waiter, token: usize) {
        let packet: *const Packet<T> = &self.packet;
        // SAFETY: forwarded from the caller: the waiter and this case (so the packet)
        // stay put until `unregister`; the packet is empty for a receive (nothing
        // was handed to it yet) and holds the value for a send.
        unsafe { D::register(self.lock.get(), Entry::new(waiter, token, packet)) };
    }

    fn unregister(&mut self, waiter: *const Waiter) {
        self.chan().lock().unregister(waiter);
    }

    fn unregister_locked(&mut self, waiter: *const Waiter) {
        self.lock.get().unregister(waiter);
    }

    #[inline]
    fn complete(&mut self) {
        if !matches!(self.state, State::Decided(_)) {
            return;
        }
        if let State::Decided(d) = std::mem::replace(&mut self.state, State::Taken) {
            // SAFETY: decided by `try_locked` with this packet; the engine calls
            // `complete` once every lock is released.
            let done = unsafe { D::complete(d, &mut self.packet) };
            self.state = State::Chosen { poisoned: !done };
        }
    }

    #[inline]
    fn passive(&mut self, poisoned: bool) {
        self.state = State::Chosen { poisoned };
    }
}

/// A send guard (on a channel or a broadcast) whose value can come back: the
/// cases [`SendFromCase`] wraps.
#[doc(hidden)]
pub trait SendGuardCase<T>: Case {
    /// The result, if this guard was chosen (asking again gives `None`).
    fn take_chosen_send(&mut self) -> Option<Result<(), SendError<T>>>;
    /// The value, if it was not sent (nor handed back in a poison error).
    fn take_unsent_value(&mut self) -> Option<T>;
}

impl<'a, T> SendGuardCase<T> for SendCase<'a, T> {
    fn take_chosen_send(&mut self) -> Option<Result<(), SendError<T>>> {
        chosen(self)
    }
    fn take_unsent_value(&mut self) -> Option<T> {
        self.take_unsent()
    }
}

/// The `send_from(tx, &mut slot)` guard of [`alt!`](crate::alt!): a send guard
/// whose value is taken out of `slot` (an `Option<T>`) when the alt starts, if
/// its precondition holds and the slot holds a value, and is put back into the
/// slot if the guard is not chosen (another guard, a timeout, a skip; also if
/// the alt unwinds). A disabled guard leaves the slot alone. On poison the value
/// comes back in the guard's `SendError`, as for every send.
#[doc(hidden)]
pub struct SendFromCase<'s, C: SendGuardCase<T>, T> {
    inner: C,
    slot: &'s mut Option<T>,
}

impl<'s, C: SendGuardCase<T>, T> SendFromCase<'s, C, T> {
    /// Takes the value out of `slot` if `on`, and makes the inner case with it
    /// (`make(None)`: a disabled guard).
    #[inline]
    pub fn new(slot: &'s mut Option<T>, on: bool, make: impl FnOnce(Option<T>) -> C) -> Self {
        let v = if on { slot.take() } else { None };
        Self {
            inner: make(v),
            slot,
        }
    }

    /// The result, if this guard was chosen; an unsent value goes back to the
    /// slot (when this case is dropped).
    #[inline]
    pub fn into_chosen(mut self) -> Option<Result<(), SendError<T>>> {
        self.inner.take_chosen_send()
    }
}

impl<C: SendGuardCase<T>, T> Drop for SendFromCase<'_, C, T> {
    fn drop(&mut self) {
        if let Some(v) = self.inner.take_unsent_value() {
            *self.slot = Some(v);
        }
    }
}

delegate_case!(['s, C: SendGuardCase<T>, T] SendFromCase<'s, C, T>);

/// Where an [`ExtRecvCase`] stands.
enum ExtState<T> {
    Open,
    /// Chosen by this alt: a claimed rendezvous writer (its value still in its
    /// packet, the writer held until the closure returns), or a buffered item in
    /// this case's packet (its place reserved until then).
    Decided(Deal<T>),
    /// Chosen by a writer while the alt waited (`poisoned`: by poison). The value
    /// is in the packet; a rendezvous writer waits on the private waiter it left
    /// in the packet, a bounded channel keeps the item's place reserved.
    Passive {
        poisoned: bool,
    },
    /// The channel was poisoned.
    Poisoned,
    /// The result was taken (or the guard never fired).
    Taken,
}

/// An extended-rendezvous receive guard (JCSP's alt, then `startRead` …
/// `endRead`): when it is chosen, its closure runs on the value with the writer
/// still held (a rendezvous writer stays blocked, a bounded channel keeps the
/// item's place), which is released when the closure returns or panics, exactly
/// as [`Receiver::recv_with`](crate::chan::Receiver::recv_with).
#[doc(hidden)]
pub struct ExtRecvCase<'a, T, F> {
    chan: Option<&'a RawChan<T>>,
    lock: LockRef<'a, T>,
    state: ExtState<T>,
    packet: Packet<T>,
    f: Option<F>,
}

impl<'a, T, F> ExtRecvCase<'a, T, F> {
    /// An extended receive guard on `chan` (`None`: precondition false) whose
    /// closure is `f`.
    #[inline]
    pub fn new<R>(chan: Option<&'a RawChan<T>>, f: F) -> Self
    where
        F: FnOnce(T) -> R,
    {
        Self {
            chan,
            lock: LockRef::new(),
            state: ExtState::Open,
            packet: Packet::extended(),
            f: Some(f),
        }
    }

    #[inline]
    fn chan(&self) -> &'a RawChan<T> {
        self.chan.expect("hoare: a disabled guard was used")
    }

    fn decide(&mut self, s: Selected<Deal<T>>) -> bool {
        match s {
            Selected::Ready(d) => {
                self.state = ExtState::Decided(d);
                true
            }
            Selected::Poisoned => {
                self.state = ExtState::Poisoned;
                true
            }
            Selected::NotReady => false,
        }
    }

    /// Runs `f` on the value of a chosen guard with the writer held, then
    /// releases the writer (also if `f` panics). `None` if not chosen.
    pub(crate) fn run<R>(&mut self, f: impl FnOnce(T) -> R) -> Option<Result<R, RecvError>> {
        match std::mem::replace(&mut self.state, ExtState::Taken) {
            ExtState::Open | ExtState::Taken => None,
            ExtState::Poisoned | ExtState::Passive { poisoned: true } => {
                Some(Err(RecvError::Poisoned))
            }
            ExtState::Decided(Deal::Partner(s)) => {
                let _finish = FinishOnDrop(s.waiter);
                // SAFETY: claimed under the lock; the writer's packet is full and
                // stays put until its waiter is finished, when `f` has returned.
                let v = unsafe { Packet::read_raw(s.packet) };
                Some(Ok(f(v)))
            }
            ExtState::Decided(Deal::Done) => {
                let _release = ReleaseOnDrop(self.chan());
                Some(Ok(f(self.packet.take_full())))
            }
            ExtState::Passive { poisoned: false } => {
                let _end = ExtEnd {
                    chan: self.chan(),
                    writer: self.packet.writer(),
                };
                Some(Ok(f(self.packet.take_full())))
            }
        }
    }
}

impl<'a, T, R, F: FnOnce(T) -> R> ExtRecvCase<'a, T, F> {
    /// The closure's result if this guard was chosen (the closure ran with the
    /// writer held), or the poison.
    #[inline]
    pub fn into_chosen(mut self) -> Option<Result<R, RecvError>> {
        self.take_chosen()
    }

    pub(crate) fn take_chosen(&mut self) -> Option<Result<R, RecvError>> {
        if matches!(self.state, ExtState::Open | ExtState::Taken) {
            return None;
        }
        let f = self.f.take().expect("hoare: an alt guard fired twice");
        self.run(f)
    }
}

impl<T, F> Drop for ExtRecvCase<'_, T, F> {
    fn drop(&mut self) {
        // A chosen guard whose result was never asked for (a panic between the
        // alt and its arm): release the writer without running the closure.
        if matches!(
            self.state,
            ExtState::Decided(_) | ExtState::Passive { poisoned: false }
        ) {
            let _ = self.run(drop);
        }
    }
}

// SAFETY: `addr` is the address of the channel `lock_own` locks; the lock slot is
// an `Option<SelectLock<'_, T>>`, as a `ChanCase`'s.
unsafe impl<'a, T, F> Case for ExtRecvCase<'a, T, F> {
    #[inline]
    fn kind(&self) -> Kind {
        if self.chan.is_some() {
            Kind::Chan
        } else {
            Kind::Off
        }
    }

    fn guard(&self) -> Option<Guard> {
        self.chan.map(|c| Guard::Chan {
            op: "extended recv",
            chan: c.object(),
        })
    }

    fn addr(&self) -> usize {
        self.chan().addr()
    }

    fn try_alone(&mut self) -> bool {
        let mut g = self.chan().lock();
        let s = g.try_recv(true, &mut self.packet);
        drop(g);
        self.decide(s)
    }

    fn lock_own(&mut self) {
        self.lock.own = Some(self.chan().lock());
        self.lock.shared = ptr::null_mut();
    }

    fn lock_slot(&mut self) -> *mut () {
        &mut self.lock.own as *mut Option<SelectLock<'_, T>> as *mut ()
    }

    unsafe fn lock_shared(&mut self, slot: *mut ()) {
        self.lock.shared = slot as *mut Option<SelectLock<'_, T>>;
    }

    fn unlock(&mut self) {
        self.lock.unlock();
    }

    fn try_locked(&mut self) -> bool {
        let s = self.lock.get().try_recv(true, &mut self.packet);
        self.decide(s)
    }

    unsafe fn register(&mut self, waiter: *const Waiter, token: usize) {
        let packet: *const Packet<T> = &self.packet;
        // SAFETY: forwarded from the caller: the waiter and this case (so its
        // empty, extended packet) stay put until `unregister`.
        unsafe {
            self.lock
                .get()
                .register_recv(Entry::new(waiter, token, packet))
        };
    }

    fn unregister(&mut self, waiter: *const Waiter) {
        self.chan().lock().unregister(waiter);
    }

    fn unregister_locked(&mut self, waiter: *const Waiter) {
        self.lock.get().unregister(waiter);
    }

    fn passive(&mut self, poisoned: bool) {
        self.state = ExtState::Passive { poisoned };
    }
}

/// A timeout guard over any [`Timer`] (owned, or borrowed as `&mut`).
#[doc(hidden)]
pub struct TimeoutCase<Tm> {
    timer: Option<Tm>,
    deadline: Option<Instant>,
    chosen: bool,
}

impl<Tm: Timer> TimeoutCase<Tm> {
    /// A timeout guard (`None`: precondition false).
    #[inline]
    pub fn new(timer: Option<Tm>) -> Self {
        Self {
            timer,
            deadline: None,
            chosen: false,
        }
    }

    /// `Some(())` if this guard was chosen; tells the timer it fired.
    #[inline]
    pub fn into_chosen(mut self) -> Option<()> {
        self.fire()
    }

    pub(crate) fn fire(&mut self) -> Option<()> {
        if !self.chosen {
            return None;
        }
        self.chosen = false;
        if let Some(t) = self.timer.as_mut() {
            t.fired();
        }
        Some(())
    }
}

// SAFETY: not a channel guard.
unsafe impl<Tm: Timer> Case for TimeoutCase<Tm> {
    #[inline]
    fn kind(&self) -> Kind {
        if self.timer.is_some() {
            Kind::Timeout
        } else {
            Kind::Off
        }
    }

    fn expired(&self) -> bool {
        self.timer.as_ref().is_some_and(|t| t.expired())
    }

    fn guard(&self) -> Option<Guard> {
        self.timer.as_ref().map(|_| Guard::Other("timeout"))
    }

    fn deadline(&mut self) -> Option<Instant> {
        if self.deadline.is_none() {
            self.deadline = self.timer.as_mut().map(|t| t.deadline());
        }
        self.deadline
    }

    fn set_chosen(&mut self) {
        self.chosen = true;
    }
}

/// A skip guard.
#[doc(hidden)]
#[derive(Debug)]
pub struct SkipCase {
    enabled: bool,
    chosen: bool,
}

impl SkipCase {
    /// A skip guard (`false`: precondition false).
    #[inline]
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            chosen: false,
        }
    }

    /// `Some(())` if this guard was chosen.
    #[inline]
    pub fn into_chosen(self) -> Option<()> {
        self.chosen.then_some(())
    }

    pub(crate) fn take_chosen(&mut self) -> bool {
        std::mem::replace(&mut self.chosen, false)
    }
}

// SAFETY: not a channel guard.
unsafe impl Case for SkipCase {
    #[inline]
    fn kind(&self) -> Kind {
        if self.enabled {
            Kind::Skip
        } else {
            Kind::Off
        }
    }

    fn guard(&self) -> Option<Guard> {
        self.enabled.then_some(Guard::Other("skip"))
    }

    fn set_chosen(&mut self) {
        self.chosen = true;
    }
}
