//! Alternation: `alt_select`, one alt over the guards C++ describes (`AltGuard`s),
//! with a fast path for an alt of receive guards only.

use super::alting::AltingBarrierEndHandle;
use super::backend;
use super::bridge::{AltGuard, AltKind, AltOutcome, ExcSlot, Status};
use super::chan::{ChanRx, ChanTx, RxAny, TxAny};
use super::elem::{wait_ack, ByValue, Carried, RawItem, Unsent};
use super::guard;
use super::recv_set::{build_set, set_pick};
use super::timer::{TimerHandle, TimerRef};
use hoare_core::alt::{Alt, Fair, SendKey};
use hoare_core::chan::{RecvError, SendError};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A receive guard on `rx` that delivers the value into the C++ storage at `dst`.
///
/// # Safety
/// As for [`Carried::deliver`], until the alt has selected.
unsafe fn add_recv<'a, T: Carried>(
    alt: &mut Alt<'a, Status>,
    rx: &'a backend::Rx<T>,
    dst: *mut u8,
    err: *mut ExcSlot,
    size: usize,
) {
    let h = move |r: Result<T, RecvError>| match r {
        Ok(v) => {
            // SAFETY: the caller's contract.
            unsafe { v.deliver(dst, err, size) };
            Status::Ok
        }
        Err(_) => Status::Poisoned,
    };
    match rx {
        backend::Rx::One(r) => {
            alt.recv(r, h);
        }
        backend::Rx::Any(r) => {
            alt.recv(r, h);
        }
    }
}

/// A send guard offering `v` (taken or made from the C++ object at `p`, to which it
/// goes back if the channel is poisoned); returns what to give back if another
/// guard is chosen.
///
/// # Safety
/// `p` is the live C++ object `v` came from, until the alt has selected.
unsafe fn add_send<'a, T: Carried>(
    alt: &mut Alt<'a, Status>,
    tx: &'a backend::Tx<T>,
    v: T,
    p: *mut u8,
) -> Unsent {
    let h = move |r: Result<(), SendError<T>>| match r {
        Ok(()) => Status::Ok,
        Err(e) => {
            // SAFETY: the caller's contract.
            unsafe { e.into_inner().give_back(p) };
            Status::Poisoned
        }
    };
    let key = match tx {
        backend::Tx::One(t) => alt.send(t, v, h),
        backend::Tx::Any(t) => alt.send(t, v, h),
    };
    T::unsent(key, p)
}

/// Gives the value of a send guard that was not chosen back to its C++ object.
///
/// # Safety
/// `p` is the live C++ object the value came from.
unsafe fn give_back_unsent<T: Carried>(alt: &mut Alt<'_, Status>, key: SendKey<T>, p: *mut u8) {
    if let Some(v) = alt.take_unsent(key, 0) {
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
    // Fast path: only enabled receive guards on ends of one element type and one
    // sharing kind (a replicated receive, as in StressedAlt): one set of cases, no
    // boxed guard per end.
    if gs.len() > 1 && gs.iter().all(|g| g.kind == AltKind::Recv && g.enabled) {
        // SAFETY: the caller's contract.
        let rxs: Vec<&ChanRx> = gs
            .iter()
            .map(|g| unsafe { &*(g.end as *const ChanRx) })
            .collect();
        // SAFETY: the ends live until this call returns.
        if let Ok(mut set) = unsafe { build_set(&rxs) } {
            let mut f = Fair::new();
            let fp = if fair {
                f.chosen(next.wrapping_sub(1));
                Some(&mut f)
            } else {
                None
            };
            // SAFETY: each guard's `value` is storage for the element type.
            let (i, status) = unsafe {
                set_pick(&mut set, rxs[0].size, fp, |i| {
                    (gs[i].value as *mut u8, gs[i].err as *mut ExcSlot)
                })
            };
            return Ok(AltOutcome {
                guard: i,
                status,
                fair_next: if fair { f.next_start() } else { next },
            });
        }
    }
    // First the items of C++ values to send (a move into a box may throw).
    let acks: Vec<AtomicBool> = gs.iter().map(|_| AtomicBool::new(false)).collect();
    let mut items: Vec<Option<RawItem>> = gs.iter().map(|_| None).collect();
    for (i, g) in gs.iter().enumerate() {
        if g.kind != AltKind::Send || !g.enabled {
            continue;
        }
        // SAFETY: the caller's contract.
        let tx = unsafe { &*(g.end as *const ChanTx) };
        if let TxAny::Raw(_) = tx.inner {
            let (v, e) = (g.value as *mut u8, g.err as *mut ExcSlot);
            // SAFETY: the caller's contract; we wait for the ack before returning.
            match unsafe { RawItem::new(v, tx.ops, tx.buffered, e, &acks[i]) } {
                Some(it) => items[i] = Some(it),
                None => {
                    for (j, it) in items.iter_mut().enumerate() {
                        if let Some(it) = it.take() {
                            // SAFETY: made from guard j's value.
                            unsafe { it.give_back(gs[j].value as *mut u8) };
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

    let mut unsent: Vec<Unsent> = Vec::with_capacity(gs.len());
    let mut alt: Alt<'_, Status> = Alt::new();
    for (i, g) in gs.iter().enumerate() {
        let (value, err) = (g.value as *mut u8, g.err as *mut ExcSlot);
        alt.when(g.enabled);
        match g.kind {
            AltKind::Recv => {
                // SAFETY: the caller's contract.
                let rx = unsafe { &*(g.end as *const ChanRx) };
                dispatch!(RxAny(r) in &rx.inner =>
                    // SAFETY: `value` is storage for the element type, `err` an
                    // exception slot (the caller's contract), until select returns.
                    unsafe { add_recv(&mut alt, r, value, err, rx.size) }
                );
                unsent.push(Unsent::Nothing);
            }
            AltKind::Send if !g.enabled => {
                // A disabled placeholder keeps the indices; the value is not touched.
                alt.skip(|| Status::Ok);
                unsent.push(Unsent::Nothing);
            }
            AltKind::Send => {
                // SAFETY: the caller's contract.
                let tx = unsafe { &*(g.end as *const ChanTx) };
                let u = dispatch!(TxAny(t) in &tx.inner => {
                        // SAFETY: `value` is a live value of the element type (the
                        // caller's contract; `tx.size` bytes for a by-value class).
                        let v = unsafe { ByValue::take(value, tx.size) };
                        // SAFETY: `v` came from `value`, which outlives the alt.
                        unsafe { add_send(&mut alt, t, v, value) }
                    },
                    Raw => {
                        let it = items[i].take().expect("hoare: alt send item");
                        // SAFETY: the item was made from `value`, which outlives the
                        // alt.
                        unsafe { add_send(&mut alt, t, it, value) }
                    }
                );
                unsent.push(u);
            }
            AltKind::Timeout if g.end != 0 => {
                // SAFETY: the caller's contract: a live timer that nobody else uses
                // while the alt runs (hoare::Alt takes it by non-const reference).
                let t = unsafe { TimerRef::new(g.end as *mut TimerHandle) };
                alt.timeout(t, || Status::Timeout);
                unsent.push(Unsent::Nothing);
            }
            AltKind::Timeout => {
                // A duration: an `Egg` of this alt alone.
                alt.timeout(Duration::from_nanos(g.timeout_ns), || Status::Timeout);
                unsent.push(Unsent::Nothing);
            }
            AltKind::Skip => {
                alt.skip(|| Status::Ok);
                unsent.push(Unsent::Nothing);
            }
            AltKind::Barrier => {
                // SAFETY: the caller's contract: a live end that only this alt uses
                // while it runs (hoare::Alt takes it by non-const reference).
                let e = unsafe { &mut *(g.end as *mut AltingBarrierEndHandle) };
                alt.barrier(&mut e.0, || Status::Ok);
                unsent.push(Unsent::Nothing);
            }
            _ => return Err("hoare: unknown alt guard kind".into()),
        }
    }

    let mut fair_next = next;
    let fired = if fair {
        let mut f = Fair::new();
        f.chosen(next.wrapping_sub(1));
        let fired = alt.select_fair(&mut f);
        fair_next = f.next_start();
        fired
    } else {
        alt.select()
    };
    // Values of the send guards that were not chosen go back to their objects.
    for (i, u) in unsent.into_iter().enumerate() {
        if i == fired.guard {
            continue;
        }
        match u {
            Unsent::Nothing => {}
            // SAFETY: `v` is the C++ object the guard's value was made from.
            Unsent::Raw(k, v) => unsafe { give_back_unsent(&mut alt, k, v) },
            // SAFETY: as above.
            Unsent::Str(k, v) => unsafe { give_back_unsent(&mut alt, k, v) },
            // SAFETY: as above.
            Unsent::Bytes(k, v) => unsafe { give_back_unsent(&mut alt, k, v) },
        }
    }
    drop(alt);
    // A C++ value lent to a receiver: wait until it has been moved out.
    let g = &gs[fired.guard];
    if g.kind == AltKind::Send && fired.output == Status::Ok {
        // SAFETY: the caller's contract.
        let tx = unsafe { &*(g.end as *const ChanTx) };
        if matches!(tx.inner, TxAny::Raw(_)) && !tx.buffered {
            wait_ack(&acks[fired.guard]);
        }
    }
    Ok(AltOutcome {
        guard: fired.guard,
        status: fired.output,
        fair_next,
    })
}
