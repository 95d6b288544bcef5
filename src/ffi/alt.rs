//! Alternation: `alt_select`, one alt over the guards C++ describes (`AltGuard`s).
//!
//! The cases (hoare-core's alt cases, as the `alt!` macro builds them) live in an
//! array on this function's stack for up to [`INLINE`] guards, so such an alt
//! allocates nothing; a larger one keeps them in a `Vec`.

use super::alting::AltingBarrierEndHandle;
use super::backend;
use super::bcast::{BRxAny, BTxAny, BcastRx, BcastTx};
use super::bridge::{self, Task};
use super::bridge::{AltGuard, AltKind, AltOutcome, ExcSlot, Status};
use super::chan::{ChanRx, ChanTx, RxAny, TxAny};
use super::elem::{wait_ack, ByValue, Carried, RawItem};
use super::guard;
use super::timer::{TimerHandle, TimerRef};
use hoare_core::alt::{
    BarrierCase, Case, ExtRecvCase, Fair, RecvCase, SendCase, SkipCase, TimeoutCase,
};
use hoare_core::chan::broadcast::{BcastRecvCase, BcastSendCase};
use hoare_core::chan::RawChan;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Alts of up to this many guards keep their cases on the stack (no allocation).
pub(super) const INLINE: usize = 8;

/// `enum $name<'a>` with one `$case<'a, T>` variant per element type, `From` each,
/// and the type-erased case.
macro_rules! case_enum {
    ($name:ident, $case:ident; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        enum $name<'a> {
            $rv($case<'a, $rt>),
            $($v($case<'a, $t>),)*
            $($pv($case<'a, $pt>),)*
        }
        case_enum!(@from $name, $case; $rv $rt, $($v $t,)* $($pv $pt),*);
        impl<'a> $name<'a> {
            fn as_case(&mut self) -> &mut (dyn Case + 'a) {
                dispatch!($name(c) in self => c)
            }
        }
    };
    (@from $name:ident, $case:ident; $($v:ident $t:ty),*) => {
        $(impl<'a> From<$case<'a, $t>> for $name<'a> {
            fn from(c: $case<'a, $t>) -> Self {
                $name::$v(c)
            }
        })*
    };
}
elems!(case_enum!(RecvCases, RecvCase));
elems!(case_enum!(SendCases, SendCase));

/// `enum $name<'a>` with one `$case<'a, T>` variant per by-value element type (the
/// broadcast cases), and the type-erased case.
macro_rules! bcase_enum {
    ($name:ident, $case:ident; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        enum $name<'a> {
            $($v($case<'a, $t>),)*
            $($pv($case<'a, $pt>),)*
        }
        impl<'a> $name<'a> {
            fn as_case(&mut self) -> &mut (dyn Case + 'a) {
                bdispatch!($name(c) in self => c)
            }
        }
    };
}
elems!(bcase_enum!(BRecvCases, BcastRecvCase));

/// An extended receive case whose closure delivers the value to C++ and runs the
/// C++ handler (boxed: one allocation per such guard).
type ExtCase<'a, T> = ExtRecvCase<'a, T, Box<dyn FnOnce(T) + 'a>>;

/// `enum ExtRecvCases<'a>` with one `ExtCase<'a, T>` per element type.
macro_rules! ext_enum {
    (; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        enum ExtRecvCases<'a> {
            $rv(ExtCase<'a, $rt>),
            $($v(ExtCase<'a, $t>),)*
            $($pv(ExtCase<'a, $pt>),)*
        }
        impl<'a> ExtRecvCases<'a> {
            fn as_case(&mut self) -> &mut (dyn Case + 'a) {
                dispatch!(ExtRecvCases(c) in self => c)
            }
        }
    };
}
elems!(ext_enum!());

/// The extended receive case of `rx` whose closure delivers into `dst` and runs
/// `task` (the C++ handler) while the writer is held.
///
/// # Safety
/// `dst` is storage for the element type (`size` bytes for a by-value class), `err`
/// an exception slot, `task` a live C++ task; all outlive the alt.
unsafe fn ext_case<'a, T: Carried>(
    rx: &'a backend::Rx<T>,
    dst: *mut u8,
    err: *mut ExcSlot,
    size: usize,
    task: *mut Task,
) -> ExtCase<'a, T> {
    let f: Box<dyn FnOnce(T) + 'a> = Box::new(move |v: T| {
        // SAFETY: the caller's contract.
        unsafe { v.deliver(dst, err, size) };
        // SAFETY: as above; the task is pinned in the C++ guard.
        bridge::task_run(unsafe { std::pin::Pin::new_unchecked(&mut *task) });
    });
    ExtRecvCase::new(Some(rx_raw(rx)), f)
}
elems!(bcase_enum!(BSendCases, BcastSendCase));

/// `RxAny` to `ExtRecvCases`, variant by variant.
macro_rules! ext_of {
    ($e:expr, $x:ident => $body:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $e {
            RxAny::$rv($x) => ExtRecvCases::$rv($body),
            $(RxAny::$v($x) => ExtRecvCases::$v($body),)*
            $(RxAny::$pv($x) => ExtRecvCases::$pv($body),)*
        }
    };
}

/// The case of a broadcast guard, made from the end at `end` (`BRxAny`/`BTxAny`
/// to `BRecvCases`/`BSendCases`, variant by variant).
macro_rules! bcase_of {
    ($from:ident => $to:ident, $e:expr, $x:ident => $body:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $e {
            $($from::$v($x) => $to::$v($body),)*
            $($from::$pv($x) => $to::$pv($body),)*
        }
    };
}

/// One case of a bridged alt, of any kind and element type.
enum AltCase<'a> {
    /// A guard whose precondition is false (or a slot no guard uses).
    Off(SkipCase),
    Recv(RecvCases<'a>),
    Send(SendCases<'a>),
    /// A timeout on a Rust timer C++ holds (`hoare::Egg`, `Repeat`, `Date`).
    Timer(TimeoutCase<TimerRef>),
    /// A timeout after a duration: an `Egg` of this alt alone.
    After(TimeoutCase<Duration>),
    Skip(SkipCase),
    Barrier(BarrierCase<'a>),
    BRecv(BRecvCases<'a>),
    BSend(BSendCases<'a>),
    Ext(ExtRecvCases<'a>),
}

impl<'a> AltCase<'a> {
    fn off() -> Self {
        AltCase::Off(SkipCase::new(false))
    }

    fn as_case(&mut self) -> &mut (dyn Case + 'a) {
        match self {
            AltCase::Off(c) | AltCase::Skip(c) => c,
            AltCase::Recv(c) => c.as_case(),
            AltCase::Send(c) => c.as_case(),
            AltCase::Timer(c) => c,
            AltCase::After(c) => c,
            AltCase::Barrier(c) => c,
            AltCase::BRecv(c) => c.as_case(),
            AltCase::BSend(c) => c.as_case(),
            AltCase::Ext(c) => c.as_case(),
        }
    }
}

fn rx_raw<T>(rx: &backend::Rx<T>) -> &RawChan<T> {
    match rx {
        backend::Rx::One(r) => r.raw(),
        backend::Rx::Any(r) => r.raw(),
    }
}

fn tx_raw<T>(tx: &backend::Tx<T>) -> &RawChan<T> {
    match tx {
        backend::Tx::One(t) => t.raw(),
        backend::Tx::Any(t) => t.raw(),
    }
}

/// The receive guard chosen: delivers its value into the C++ storage at `dst`.
///
/// # Safety
/// As for [`Carried::deliver`].
unsafe fn recv_chosen<T: Carried>(
    c: RecvCase<'_, T>,
    dst: *mut u8,
    err: *mut ExcSlot,
    size: usize,
) -> Status {
    match c.into_chosen() {
        Some(Ok(v)) => {
            // SAFETY: the caller's contract.
            unsafe { v.deliver(dst, err, size) };
            Status::Ok
        }
        Some(Err(_)) => Status::Poisoned,
        None => unreachable!("hoare: the chosen alt case has no result"),
    }
}

/// The send guard chosen: on poison its value goes back to the C++ object at `p`.
///
/// # Safety
/// `p` is the live C++ object the case's value was taken (or made) from.
unsafe fn send_chosen<T: Carried>(c: SendCase<'_, T>, p: *mut u8) -> Status {
    match c.into_chosen() {
        Some(Ok(())) => Status::Ok,
        Some(Err(e)) => {
            // SAFETY: the caller's contract.
            unsafe { e.into_inner().give_back(p) };
            Status::Poisoned
        }
        None => unreachable!("hoare: the chosen alt case has no result"),
    }
}

/// A send guard that was not chosen: its value goes back to the C++ object at `p`.
///
/// # Safety
/// As for [`send_chosen`].
unsafe fn send_unsent<T: Carried>(c: SendCase<'_, T>, p: *mut u8) {
    if let Some(v) = c.into_unsent() {
        // SAFETY: the caller's contract.
        unsafe { v.give_back(p) }
    }
}

pub(super) unsafe fn alt_select(
    guards: &[AltGuard],
    fair: bool,
    fair_next: usize,
) -> Result<AltOutcome, String> {
    // SAFETY: forwarded from the C++ caller (hoare::Alt), whose ends, values and
    // slots live until this call returns.
    guard(|| unsafe { alt_impl(guards, fair, fair_next) })
}

/// Refuses, before the alt engine would panic (or alias an end), an alt that could
/// only wait for ever and one with two guards on one alting-barrier end.
fn check_guards(gs: &[AltGuard]) -> Result<(), String> {
    if !gs.iter().any(|g| g.enabled) {
        return Err("hoare: an alt with no enabled guard would wait for ever".into());
    }
    let is_barrier = |g: &&AltGuard| g.kind == AltKind::Barrier;
    for (i, g) in gs.iter().enumerate().filter(|(_, g)| is_barrier(g)) {
        if gs[..i].iter().filter(is_barrier).any(|h| h.end == g.end) {
            return Err("hoare: two barrier guards on one alting barrier end in one alt".into());
        }
    }
    Ok(())
}

/// # Safety
/// Every `end` points to a live end of the kind its guard says; every `value`
/// points to a live C++ value (send) or storage for one (receive) of the end's
/// element type; every `err` to an `ExcSlot`.
unsafe fn alt_impl(gs: &[AltGuard], fair: bool, next: usize) -> Result<AltOutcome, String> {
    check_guards(gs)?;
    // One flag for the C++ value a rendezvous send guard lends: only the chosen
    // guard's value reaches a receiver.
    let ack = AtomicBool::new(false);
    if gs.len() <= INLINE {
        let mut cases: [AltCase<'_>; INLINE] = std::array::from_fn(|_| AltCase::off());
        // SAFETY: the caller's contract.
        unsafe { run_alt(gs, &mut cases[..gs.len()], &ack, fair, next) }
    } else {
        let mut cases: Vec<AltCase<'_>> = gs.iter().map(|_| AltCase::off()).collect();
        // SAFETY: the caller's contract.
        unsafe { run_alt(gs, &mut cases, &ack, fair, next) }
    }
}

/// Builds the cases of `gs` into `cases` (as many, all `Off`), selects, and hands the
/// outcome to the chosen guard's C++ storage.
///
/// # Safety
/// As for [`alt_impl`]; `ack` outlives the cases.
unsafe fn run_alt<'a>(
    gs: &[AltGuard],
    cases: &mut [AltCase<'a>],
    ack: &'a AtomicBool,
    fair: bool,
    next: usize,
) -> Result<AltOutcome, String> {
    // First the items of C++ values to send by address (a move into a box may
    // throw: then nothing else was touched yet).
    for (i, g) in gs.iter().enumerate() {
        if g.kind != AltKind::Send || !g.enabled {
            continue;
        }
        // SAFETY: the caller's contract.
        let tx: &'a ChanTx = unsafe { &*(g.end as *const ChanTx) };
        if let TxAny::Raw(t) = &tx.inner {
            let (v, e) = (g.value as *mut u8, g.err as *mut ExcSlot);
            // SAFETY: the caller's contract; we wait for the ack before returning.
            match unsafe { RawItem::new(v, tx.ops, tx.buffered, e, ack) } {
                Some(it) => {
                    let c = SendCase::new(Some((tx_raw(t), it)));
                    cases[i] = AltCase::Send(c.into());
                }
                None => {
                    for (j, c) in cases[..i].iter_mut().enumerate() {
                        if let AltCase::Send(SendCases::Raw(c)) =
                            std::mem::replace(c, AltCase::off())
                        {
                            // SAFETY: made from guard j's value.
                            unsafe { send_unsent(c, gs[j].value as *mut u8) };
                        }
                    }
                    return Ok(AltOutcome {
                        guard: usize::MAX,
                        status: Status::Ok,
                        fair_next: next,
                    });
                }
            }
        }
    }

    for (i, g) in gs.iter().enumerate() {
        if !g.enabled || matches!(cases[i], AltCase::Send(_)) {
            // Disabled (never looked at, its end not even touched), or built above.
            continue;
        }
        let value = g.value as *mut u8;
        cases[i] = match g.kind {
            AltKind::Recv => {
                // SAFETY: the caller's contract.
                let rx: &'a ChanRx = unsafe { &*(g.end as *const ChanRx) };
                AltCase::Recv(dispatch!(RxAny(r) in &rx.inner =>
                    RecvCase::new(Some(rx_raw(r))).into()
                ))
            }
            AltKind::Send => {
                // SAFETY: the caller's contract.
                let tx: &'a ChanTx = unsafe { &*(g.end as *const ChanTx) };
                AltCase::Send(dispatch!(TxAny(t) in &tx.inner => {
                        // SAFETY: `value` is a live value of the element type (the
                        // caller's contract; `tx.size` bytes for a by-value class).
                        let v = unsafe { ByValue::take(value, tx.size) };
                        SendCase::new(Some((tx_raw(t), v))).into()
                    },
                    Raw => {
                        let _ = t;
                        unreachable!("hoare: built with its item above")
                    }
                ))
            }
            AltKind::Timeout if g.end != 0 => {
                // SAFETY: the caller's contract: a live timer that nobody else uses
                // while the alt runs (hoare::Alt takes it by non-const reference).
                let t = unsafe { TimerRef::new(g.end as *mut TimerHandle) };
                AltCase::Timer(TimeoutCase::new(Some(t)))
            }
            AltKind::Timeout => {
                AltCase::After(TimeoutCase::new(Some(Duration::from_nanos(g.timeout_ns))))
            }
            AltKind::Skip => AltCase::Skip(SkipCase::new(true)),
            AltKind::Barrier => {
                // SAFETY: the caller's contract: a live end that only this alt uses
                // while it runs (hoare::Alt takes it by non-const reference).
                let e: &'a mut AltingBarrierEndHandle =
                    unsafe { &mut *(g.end as *mut AltingBarrierEndHandle) };
                AltCase::Barrier(BarrierCase::new(Some(&mut e.0)))
            }
            AltKind::RecvWith if g.task != 0 => {
                // SAFETY: the caller's contract.
                let rx: &'a ChanRx = unsafe { &*(g.end as *const ChanRx) };
                let (err, size, task) = (g.err as *mut ExcSlot, rx.size, g.task as *mut Task);
                // SAFETY: the caller's contract (storage, slot and task live until
                // this call returns).
                AltCase::Ext(elems!(ext_of!(&rx.inner, r => unsafe {
                    ext_case(r, value, err, size, task)
                })))
            }
            AltKind::BcastRecv => {
                // SAFETY: the caller's contract.
                let rx: &'a BcastRx = unsafe { &*(g.end as *const BcastRx) };
                AltCase::BRecv(elems!(bcase_of!(BRxAny => BRecvCases, &rx.inner,
                    r => r.__alt_recv_case(true))))
            }
            AltKind::BcastSend => {
                // SAFETY: the caller's contract.
                let tx: &'a BcastTx = unsafe { &*(g.end as *const BcastTx) };
                let size = tx.size;
                AltCase::BSend(elems!(bcase_of!(BTxAny => BSendCases, &tx.inner,
                    // SAFETY: `value` is a live value of the element type (the
                    // caller's contract; `size` bytes for a by-value class).
                    t => t.__alt_send_case(Some(unsafe { ByValue::take(value, size) })))))
            }
            _ => {
                // Give back what was taken from the C++ objects so far.
                // SAFETY: the caller's contract.
                unsafe { give_back_all(gs, cases) };
                return Err("hoare: unknown alt guard kind".into());
            }
        };
    }

    let mut f = Fair::new();
    let chosen = if fair {
        f.chosen(next.wrapping_sub(1));
        select_cases(cases, Some(&mut f))
    } else {
        select_cases(cases, None)
    };
    let g = &gs[chosen];
    let (value, err) = (g.value as *mut u8, g.err as *mut ExcSlot);
    let status = match std::mem::replace(&mut cases[chosen], AltCase::off()) {
        AltCase::Recv(c) => {
            // SAFETY: the caller's contract.
            let size = unsafe { &*(g.end as *const ChanRx) }.size;
            // SAFETY: `value` is storage for the element type, `err` an exception
            // slot (the caller's contract).
            dispatch!(RecvCases(c) in c => unsafe { recv_chosen(c, value, err, size) })
        }
        // SAFETY: `value` is the C++ object the case's value came from.
        AltCase::Send(c) => dispatch!(SendCases(c) in c => unsafe { send_chosen(c, value) }),
        AltCase::Timer(c) => {
            c.into_chosen();
            Status::Timeout
        }
        AltCase::After(c) => {
            c.into_chosen();
            Status::Timeout
        }
        AltCase::Skip(_) | AltCase::Barrier(_) => Status::Ok,
        AltCase::Ext(c) => dispatch!(ExtRecvCases(c) in c => match c.into_chosen() {
            Some(Ok(())) => Status::Ok,
            Some(Err(_)) => Status::Poisoned,
            None => unreachable!("hoare: the chosen alt case has no result"),
        }),
        AltCase::BRecv(c) => {
            // SAFETY: the caller's contract.
            let size = unsafe { &*(g.end as *const BcastRx) }.size;
            bdispatch!(BRecvCases(c) in c => match c.into_chosen() {
                Some(Ok(v)) => {
                    // SAFETY: `value` is storage for the element type (the caller's
                    // contract); by-value types raise no exception.
                    unsafe { v.deliver(value, err, size) };
                    Status::Ok
                }
                Some(Err(_)) => Status::Poisoned,
                None => unreachable!("hoare: the chosen alt case has no result"),
            })
        }
        AltCase::BSend(c) => bdispatch!(BSendCases(c) in c => match c.into_chosen() {
            Some(Ok(())) => Status::Ok,
            Some(Err(e)) => {
                // SAFETY: `value` is the C++ object the case's value came from.
                unsafe { e.into_inner().give_back(value) };
                Status::Poisoned
            }
            None => unreachable!("hoare: the chosen alt case has no result"),
        }),
        AltCase::Off(_) => unreachable!("hoare: an alt chose a disabled guard"),
    };
    // Values of the send guards that were not chosen go back to their objects.
    // SAFETY: the caller's contract.
    unsafe { give_back_all(gs, cases) };
    // A C++ value lent to a receiver: wait until it has been moved out.
    if g.kind == AltKind::Send && status == Status::Ok {
        // SAFETY: the caller's contract.
        let tx = unsafe { &*(g.end as *const ChanTx) };
        if matches!(tx.inner, TxAny::Raw(_)) && !tx.buffered {
            wait_ack(ack);
        }
    }
    Ok(AltOutcome {
        guard: chosen,
        status,
        fair_next: if fair { f.next_start() } else { next },
    })
}

/// Gives the values of the send cases left in `cases` back to their C++ objects,
/// and drops every case.
///
/// # Safety
/// Every send case was made from the value of the guard of its index.
unsafe fn give_back_all(gs: &[AltGuard], cases: &mut [AltCase<'_>]) {
    for (c, g) in cases.iter_mut().zip(gs) {
        let p = g.value as *mut u8;
        match std::mem::replace(c, AltCase::off()) {
            // SAFETY: the caller's contract.
            AltCase::Send(c) => dispatch!(SendCases(c) in c => unsafe { send_unsent(c, p) }),
            AltCase::BSend(c) => bdispatch!(BSendCases(c) in c => {
                if let Some(v) = c.into_unsent() {
                    // SAFETY: the caller's contract.
                    unsafe { v.give_back(p) }
                }
            }),
            _ => {}
        }
    }
}

/// Selects over `cases` (pri, or fair from `fair`'s start), returning the index of
/// the chosen one, whose outcome it holds.
fn select_cases<'a>(cases: &mut [AltCase<'a>], fair: Option<&mut Fair>) -> usize {
    let n = cases.len();
    let pick = |refs: &mut [&mut (dyn Case + 'a)]| match fair {
        Some(f) => f.__select(refs),
        None => hoare_core::alt::__select(refs, 0),
    };
    if n <= INLINE {
        // The engine takes a slice of type-erased cases: on the stack, with idle
        // cases of no channel to fill the array.
        let mut pad: [SkipCase; INLINE] = std::array::from_fn(|_| SkipCase::new(false));
        let mut pads = pad.iter_mut();
        let mut it = cases.iter_mut();
        let mut refs: [&mut (dyn Case + 'a); INLINE] = std::array::from_fn(|_| match it.next() {
            Some(c) => c.as_case(),
            None => pads.next().expect("one pad per slot") as &mut (dyn Case + 'a),
        });
        pick(&mut refs[..n])
    } else {
        let mut refs: Vec<&mut (dyn Case + 'a)> = cases.iter_mut().map(AltCase::as_case).collect();
        pick(&mut refs)
    }
}
