//! Channel ends as C++ holds them: one `ChanTx`/`ChanRx` type for every element
//! type and sharing kind (the element type is a variant of `TxAny`/`RxAny`), and the
//! channel operations of the bridge.

use super::backend::{self, Buf, Rx, Tx, Wait};
use super::bridge::{
    self, Buffering, ChanPair, Elem, ExcSlot, Sharing, Status, Task, ValueOps, WaitMode,
};
use super::elem::{status_of, wait_ack, ByValue, Carried, RawItem};
use super::guard;
use hoare_core::timer::FAR_FUTURE;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

elems!(any_enum!(TxAny, Tx, elem));
elems!(any_enum!(RxAny, Rx, elem));

/// A sending end as C++ holds it.
pub struct ChanTx {
    pub(super) inner: TxAny,
    pub(super) ops: *const ValueOps,
    /// Whether the channel buffers (C++ values are then boxed, not borrowed).
    pub(super) buffered: bool,
    /// Size in bytes of a `Pod*` element.
    pub(super) size: usize,
}

/// A receiving end as C++ holds it.
pub struct ChanRx {
    pub(super) inner: RxAny,
    pub(super) ops: *const ValueOps,
    /// Whether the channel buffers (C++ values are then boxed, not borrowed).
    pub(super) buffered: bool,
    /// Size in bytes of a `Pod*` element.
    pub(super) size: usize,
}

// SAFETY: `ops` points to an immutable static table; the ends themselves are Send.
unsafe impl Send for ChanTx {}
// SAFETY: as above.
unsafe impl Send for ChanRx {}

fn buf_of(buffering: Buffering, capacity: usize) -> Result<Buf, String> {
    Ok(match buffering {
        Buffering::Rendezvous => Buf::Rendezvous,
        Buffering::Bounded if capacity == 0 => Buf::Rendezvous,
        Buffering::Bounded => Buf::Bounded(capacity),
        Buffering::Overwriting if capacity == 0 => {
            return Err("hoare: an overwriting buffer needs a capacity of at least 1".into())
        }
        Buffering::Overwriting => Buf::Overwriting(capacity),
        Buffering::Unbounded => Buf::Unbounded,
        _ => return Err("hoare: unknown buffering".into()),
    })
}

fn sharing_of(sharing: Sharing) -> Result<(bool, bool), String> {
    Ok(match sharing {
        Sharing::One2One => (false, false),
        Sharing::Any2One => (true, false),
        Sharing::One2Any => (false, true),
        Sharing::Any2Any => (true, true),
        _ => return Err("hoare: unknown sharing kind".into()),
    })
}

/// Both ends of a new channel of `T`.
fn new_ends<T>(ts: bool, rs: bool, buf: Buf) -> (TxAny, RxAny)
where
    TxAny: From<Tx<T>>,
    RxAny: From<Rx<T>>,
{
    let (t, r) = backend::channel::<T>(ts, rs, buf);
    (t.into(), r.into())
}

/// The ends of a new channel of the element type `elem` (`size`: the C++ type's).
macro_rules! ends_of {
    ($elem:expr, $size:expr, $ts:expr, $rs:expr, $buf:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $elem {
            Elem::$rv => new_ends::<$rt>($ts, $rs, $buf),
            $(Elem::$v => new_ends::<$t>($ts, $rs, $buf),)*
            $(Elem::$pv if $size <= std::mem::size_of::<$pt>() => new_ends::<$pt>($ts, $rs, $buf),)*
            $(Elem::$pv)|* => {
                return Err("hoare: element too large for its by-value class".into())
            }
            _ => return Err("hoare: unknown element type".into()),
        }
    };
}

pub(super) unsafe fn chan_new(
    elem: Elem,
    ops: *const ValueOps,
    size: usize,
    sharing: Sharing,
    buffering: Buffering,
    capacity: usize,
) -> Result<ChanPair, String> {
    guard(|| {
        let buf = buf_of(buffering, capacity)?;
        let buffered = !matches!(buf, Buf::Rendezvous);
        let (ts, rs) = sharing_of(sharing)?;
        if elem == Elem::Raw && ops.is_null() {
            return Err("hoare: no value operations".into());
        }
        let (t, r) = elems!(ends_of!(elem, size, ts, rs, buf));
        Ok(ChanPair {
            tx: Box::new(ChanTx {
                inner: t,
                ops,
                buffered,
                size,
            }),
            rx: Box::new(ChanRx {
                inner: r,
                ops,
                buffered,
                size,
            }),
        })
    })
}

fn wait_of(mode: WaitMode, timeout_ns: u64) -> Wait {
    match mode {
        WaitMode::Try => Wait::Try,
        // Beyond a century: no deadline at all (see `FAR_FUTURE`).
        WaitMode::Timeout if Duration::from_nanos(timeout_ns) < FAR_FUTURE => {
            Wait::Until(Instant::now() + Duration::from_nanos(timeout_ns))
        }
        _ => Wait::Block,
    }
}

/// Sends the value of the C++ object at `p` by value (a native or a trivially
/// copyable C++ value of `size` bytes).
///
/// # Safety
/// `p` points to a live value of the channel's C++ type.
unsafe fn send_value<T: ByValue>(tx: &backend::Tx<T>, p: *mut u8, size: usize, w: Wait) -> Status {
    // SAFETY: the caller's contract.
    let v = unsafe { T::take(p, size) };
    match tx.send(v, w) {
        Ok(()) => Status::Ok,
        Err((f, v)) => {
            // SAFETY: as above; a failed send gives the value back to the sender.
            unsafe { v.give_back(p) };
            status_of(f)
        }
    }
}

/// Sends the C++ value at `value` by address (see [`RawItem`]).
///
/// # Safety
/// `value` is a live C++ value of the type `tx.ops` was made for; `err` an
/// exception slot.
unsafe fn send_raw(
    t: &backend::Tx<RawItem>,
    tx: &ChanTx,
    value: *mut u8,
    err: *mut ExcSlot,
    w: Wait,
) -> Status {
    let ack = AtomicBool::new(false);
    // SAFETY: the caller's contract; we wait for `ack` below before returning.
    let Some(item) = (unsafe { RawItem::new(value, tx.ops, tx.buffered, err, &ack) }) else {
        // The move into the box threw; the C++ caller rethrows from `err`.
        return Status::Ok;
    };
    let borrowed = !item.owned;
    match t.send(item, w) {
        Ok(()) => {
            if borrowed {
                wait_ack(&ack);
            }
            Status::Ok
        }
        Err((f, item)) => {
            // SAFETY: `value` is the object the item was made from.
            unsafe { item.give_back(value) };
            status_of(f)
        }
    }
}

pub(super) unsafe fn tx_send(
    tx: &ChanTx,
    value: *mut u8,
    err: *mut ExcSlot,
    mode: WaitMode,
    timeout_ns: u64,
) -> Result<Status, String> {
    let w = wait_of(mode, timeout_ns);
    guard(|| {
        Ok(dispatch!(TxAny(t) in &tx.inner =>
            // SAFETY: the C++ caller passes the address of a live value of the
            // channel's type (`tx.size` bytes for a by-value class).
            unsafe { send_value(t, value, tx.size, w) },
            // SAFETY: as above; `err` is an exception slot.
            Raw => unsafe { send_raw(t, tx, value, err, w) }
        ))
    })
}

pub(super) unsafe fn rx_recv(
    rx: &ChanRx,
    dst: *mut u8,
    err: *mut ExcSlot,
    mode: WaitMode,
    timeout_ns: u64,
) -> Result<Status, String> {
    let w = wait_of(mode, timeout_ns);
    guard(|| {
        Ok(dispatch!(RxAny(r) in &rx.inner =>
            // SAFETY: the C++ caller passes storage for a value of the channel's
            // type (`rx.size` bytes for a by-value class) and an exception slot.
            unsafe { Carried::recv_into(r, dst, err, rx.size, w) }
        ))
    })
}

/// Receives into `dst`, then runs `task` (the C++ handler, which reads `dst`) while
/// the writer stays blocked.
///
/// # Safety
/// As for [`Carried::deliver`].
unsafe fn recv_with_task<T: Carried>(
    rx: &backend::Rx<T>,
    dst: *mut u8,
    err: *mut ExcSlot,
    size: usize,
    task: std::pin::Pin<&mut Task>,
) -> Status {
    let r = rx.recv_with(Wait::Block, move |v| {
        // SAFETY: `dst` is storage for the element type (the caller's contract); the
        // sender's object is alive inside the extended rendezvous.
        unsafe { v.deliver(dst, err, size) };
        bridge::task_run(task)
    });
    match r {
        Ok(()) => Status::Ok,
        Err(f) => status_of(f),
    }
}

pub(super) unsafe fn rx_recv_with(
    rx: &ChanRx,
    dst: *mut u8,
    err: *mut ExcSlot,
    task: std::pin::Pin<&mut Task>,
) -> Result<Status, String> {
    guard(move || {
        Ok(dispatch!(RxAny(r) in &rx.inner =>
            // SAFETY: the C++ caller's contract (storage for the element type).
            unsafe { recv_with_task(r, dst, err, rx.size, task) }
        ))
    })
}

pub(super) fn tx_poison(tx: &ChanTx) -> Result<(), String> {
    guard(|| {
        dispatch!(TxAny(t) in &tx.inner => t.poison());
        Ok(())
    })
}

pub(super) fn rx_poison(rx: &ChanRx) -> Result<(), String> {
    guard(|| {
        dispatch!(RxAny(r) in &rx.inner => r.poison());
        Ok(())
    })
}

const NOT_SHARED: &str = "hoare: this channel end cannot be shared (one2one side)";

pub(super) fn tx_clone(tx: &ChanTx) -> Result<Box<ChanTx>, String> {
    guard(|| {
        let inner =
            dispatch!(TxAny(t) in &tx.inner => t.try_clone().map(TxAny::from)).ok_or(NOT_SHARED)?;
        Ok(Box::new(ChanTx {
            inner,
            ops: tx.ops,
            buffered: tx.buffered,
            size: tx.size,
        }))
    })
}

pub(super) fn rx_clone(rx: &ChanRx) -> Result<Box<ChanRx>, String> {
    guard(|| {
        let inner =
            dispatch!(RxAny(r) in &rx.inner => r.try_clone().map(RxAny::from)).ok_or(NOT_SHARED)?;
        Ok(Box::new(ChanRx {
            inner,
            ops: rx.ops,
            buffered: rx.buffered,
            size: rx.size,
        }))
    })
}

pub(super) fn tx_elem(tx: &ChanTx) -> Elem {
    tx.inner.elem()
}

pub(super) fn rx_elem(rx: &ChanRx) -> Elem {
    rx.inner.elem()
}
