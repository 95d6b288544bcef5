//! Parallel communication from C++ (`hoare::Par`): hoare-core's [`Par`] over
//! C++-held ends, every communication at once, continuing when all have ended.

use super::backend::{self, Tx};
use super::bridge::{ExcSlot, ParItem, Status};
use super::chan::{ChanRx, ChanTx, RxAny, TxAny};
use super::elem::{wait_ack, ByValue, Carried, RawItem};
use super::guard;
use hoare_core::alt::Par;
use hoare_core::chan::{RecvTimeoutError, SendTimeoutError};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The error of a Par receive of a by-address C++ type on a rendezvous channel.
const RAW_RENDEZVOUS: &str = "hoare: a Par cannot receive a by-address type (not trivially \
     copyable, not native) on a rendezvous channel; use a buffered channel";

fn recv_status(e: RecvTimeoutError) -> Status {
    match e {
        RecvTimeoutError::Timeout => Status::Timeout,
        RecvTimeoutError::Poisoned => Status::Poisoned,
    }
}

/// Adds a receive into the C++ storage `dst`.
///
/// # Safety
/// `dst` is storage for the element type (`size` bytes for a by-value class), `err`
/// an exception slot; both outlive the par.
unsafe fn add_recv<'a, T: Carried>(
    par: &mut Par<'a>,
    rx: &'a backend::Rx<T>,
    dst: *mut u8,
    err: *mut ExcSlot,
    size: usize,
    st: &'a Cell<Status>,
) {
    let h = move |r: Result<T, RecvTimeoutError>| match r {
        Ok(v) => {
            // SAFETY: the caller's contract.
            unsafe { v.deliver(dst, err, size) };
            st.set(Status::Ok);
        }
        Err(e) => st.set(recv_status(e)),
    };
    match rx {
        backend::Rx::One(r) => par.recv(r, h),
        backend::Rx::Any(r) => par.recv(r, h),
    };
}

/// Adds a send of `v`, which goes back to the C++ object at `p` if it fails.
///
/// # Safety
/// `p` is the live C++ object `v` was taken (or boxed) from; it outlives the par.
unsafe fn add_send<'a, T: Carried>(
    par: &mut Par<'a>,
    tx: &'a Tx<T>,
    v: T,
    p: *mut u8,
    st: &'a Cell<Status>,
) {
    let h = move |r: Result<(), SendTimeoutError<T>>| match r {
        Ok(()) => st.set(Status::Ok),
        Err(e) => {
            let (s, v) = match e {
                SendTimeoutError::Timeout(v) => (Status::Timeout, v),
                SendTimeoutError::Poisoned(v) => (Status::Poisoned, v),
            };
            // SAFETY: the caller's contract.
            unsafe { v.give_back(p) };
            st.set(s);
        }
    };
    match tx {
        Tx::One(t) => par.send(t, v, h),
        Tx::Any(t) => par.send(t, v, h),
    };
}

/// Runs the communications of `items` at once (until `timeout_ns` from now if
/// `timed`); each item's `status` says how it ended. Returns false, touching
/// nothing, if moving a C++ value into a box threw (its item's exception slot holds
/// the exception).
///
/// # Safety
/// Every `end` points to a live `ChanTx` (send) or `ChanRx` (receive), every `value`
/// to a live C++ value (send) or storage for one (receive) of the end's element
/// type, every `err` to an exception slot; all outlive this call.
pub(super) unsafe fn par_run(
    items: &mut [ParItem],
    timed: bool,
    timeout_ns: u64,
) -> Result<bool, String> {
    // SAFETY: forwarded from the C++ caller.
    guard(|| unsafe { par_impl(items, timed, timeout_ns) })
}

unsafe fn par_impl(items: &mut [ParItem], timed: bool, timeout_ns: u64) -> Result<bool, String> {
    if items.is_empty() {
        return Ok(true);
    }
    backend::need_runtime()?;
    for it in items.iter().filter(|it| !it.send) {
        // SAFETY: the caller's contract.
        let rx: &ChanRx = unsafe { &*(it.end as *const ChanRx) };
        if matches!(rx.inner, RxAny::Raw(_)) && !rx.buffered {
            // Its writer stays blocked until the value is moved out of its object,
            // which a Par does only once every communication has ended: a writer
            // with more to do in the same Par's reach would deadlock.
            return Err(RAW_RENDEZVOUS.into());
        }
    }
    let n = items.len();
    // One acknowledgement per C++ value lent by address (a rendezvous send of a
    // by-address type), set once the receiver has moved it out.
    let acks: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let statuses: Vec<Cell<Status>> = (0..n).map(|_| Cell::new(Status::Poisoned)).collect();
    // First the by-address items (a move into a box may throw: then nothing else
    // has been touched).
    let mut raw: Vec<Option<RawItem>> = (0..n).map(|_| None).collect();
    for (i, it) in items.iter().enumerate() {
        if !it.send {
            continue;
        }
        // SAFETY: the caller's contract.
        let tx: &ChanTx = unsafe { &*(it.end as *const ChanTx) };
        if matches!(tx.inner, TxAny::Raw(_)) {
            let (v, e) = (it.value as *mut u8, it.err as *mut ExcSlot);
            // SAFETY: the caller's contract; we wait for the ack before returning.
            match unsafe { RawItem::new(v, tx.ops, tx.buffered, e, &acks[i]) } {
                Some(item) => raw[i] = Some(item),
                None => {
                    for (j, r) in raw.iter_mut().enumerate() {
                        if let Some(r) = r.take() {
                            // SAFETY: made from item j's value.
                            unsafe { r.give_back(items[j].value as *mut u8) };
                        }
                    }
                    return Ok(false);
                }
            }
        }
    }
    let all = {
        let mut par = Par::new();
        for (i, it) in items.iter().enumerate() {
            let (p, err, st) = (it.value as *mut u8, it.err as *mut ExcSlot, &statuses[i]);
            if it.send {
                // SAFETY: the caller's contract.
                let tx: &ChanTx = unsafe { &*(it.end as *const ChanTx) };
                let size = tx.size;
                dispatch!(TxAny(t) in &tx.inner => {
                        // SAFETY: `p` is a live value of the element type.
                        let v = unsafe { ByValue::take(p, size) };
                        // SAFETY: as above.
                        unsafe { add_send(&mut par, t, v, p, st) }
                    },
                    Raw => {
                        let v = raw[i].take().expect("made above");
                        // SAFETY: `p` is the object the item was made from.
                        unsafe { add_send(&mut par, t, v, p, st) }
                    }
                );
            } else {
                // SAFETY: the caller's contract.
                let rx: &ChanRx = unsafe { &*(it.end as *const ChanRx) };
                let size = rx.size;
                // SAFETY: `p` is storage for the element type, `err` a slot.
                dispatch!(RxAny(r) in &rx.inner => unsafe {
                    add_recv(&mut par, r, p, err, size, st)
                });
            }
        }
        if timed {
            par.run_timeout(Duration::from_nanos(timeout_ns))
        } else {
            par.run()
        }
    };
    for (i, it) in items.iter_mut().enumerate() {
        it.status = statuses[i].get();
        if it.send && it.status == Status::Ok {
            // SAFETY: the caller's contract.
            let tx: &ChanTx = unsafe { &*(it.end as *const ChanTx) };
            if matches!(tx.inner, TxAny::Raw(_)) && !tx.buffered {
                // A C++ value lent to a receiver: wait until it has been moved out.
                wait_ack(&acks[i]);
            }
        }
    }
    let _ = all;
    Ok(true)
}
