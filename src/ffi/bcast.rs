//! Broadcast channels as C++ holds them (`hoare::broadcast`, `BroadcastTx`,
//! `BroadcastRx`): the Rust [`BroadcastSender`]/[`BroadcastReceiver`] of the
//! element types that travel by value (natives and trivially copyable C++ types;
//! a broadcast clones its value per reader, which a C++ value known only by
//! address cannot be).

use super::backend::{Buf, Fail};
use super::bridge::{BcastPair, Buffering, Elem, Status, WaitMode};
use super::elem::{status_of, ByValue, Carried};
use super::guard;
use hoare_core::chan::{
    broadcast, broadcast_bounded, broadcast_overwriting, BroadcastReceiver, BroadcastSender,
    RecvTimeoutError, TryRecvError,
};
use std::time::Instant;

/// `enum $any { V($w<T>), .. }` over the by-value element types, with `elem()`.
macro_rules! bcast_enum {
    ($any:ident, $w:ident; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        pub(super) enum $any {
            $($v($w<$t>),)*
            $($pv($w<$pt>),)*
        }
        impl $any {
            fn elem(&self) -> Elem {
                match self {
                    $($any::$v(_) => Elem::$v,)*
                    $($any::$pv(_) => Elem::$pv,)*
                }
            }
        }
    };
}
elems!(bcast_enum!(BTxAny, BroadcastSender));
elems!(bcast_enum!(BRxAny, BroadcastReceiver));

/// `match $e { $any::V($x) => $body, .. }` over the by-value element types.
macro_rules! bdispatch {
    ($any:ident($x:ident) in $e:expr => $body:expr) => {
        elems!(bdispatch_arms!($any, $x, $e, $body))
    };
}
macro_rules! bdispatch_arms {
    ($any:ident, $x:ident, $e:expr, $body:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $e {
            $($any::$v($x) => $body,)*
            $($any::$pv($x) => $body,)*
        }
    };
}
/// A new reader of the broadcast `$e` (either end): `BRxAny::V(e.subscribe())`.
macro_rules! bsub {
    ($any:ident, $e:expr; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match &$e {
            $($any::$v(x) => BRxAny::$v(x.subscribe()),)*
            $($any::$pv(x) => BRxAny::$pv(x.subscribe()),)*
        }
    };
}

/// The writing end of a broadcast as C++ holds it.
pub struct BcastTx {
    pub(super) inner: BTxAny,
    /// Size in bytes of a `Pod*` element.
    pub(super) size: usize,
}

/// A reading end of a broadcast as C++ holds it.
pub struct BcastRx {
    pub(super) inner: BRxAny,
    /// Size in bytes of a `Pod*` element.
    pub(super) size: usize,
}

fn new_ends<T: Clone>(buf: Buf) -> (BroadcastSender<T>, BroadcastReceiver<T>) {
    match buf {
        Buf::Bounded(n) => broadcast_bounded(n),
        Buf::Overwriting(n) => broadcast_overwriting(n),
        _ => broadcast(),
    }
}

macro_rules! bends_of {
    ($elem:expr, $size:expr, $buf:expr;
     $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {
        match $elem {
            $(Elem::$v => {
                let (t, r) = new_ends::<$t>($buf);
                (BTxAny::$v(t), BRxAny::$v(r))
            })*
            $(Elem::$pv if $size <= std::mem::size_of::<$pt>() => {
                let (t, r) = new_ends::<$pt>($buf);
                (BTxAny::$pv(t), BRxAny::$pv(r))
            })*
            $(Elem::$pv)|* => {
                return Err("hoare: element too large for its by-value class".into())
            }
            Elem::$rv => {
                return Err("hoare: a broadcast carries values that can be copied per reader \
                            (a native or trivially copyable type)".into())
            }
            _ => return Err("hoare: unknown element type".into()),
        }
    };
}

pub(super) fn bcast_new(
    elem: Elem,
    size: usize,
    buffering: Buffering,
    capacity: usize,
) -> Result<BcastPair, String> {
    guard(|| {
        let buf = match buffering {
            Buffering::Rendezvous => Buf::Rendezvous,
            Buffering::Bounded if capacity == 0 => Buf::Rendezvous,
            Buffering::Bounded => Buf::Bounded(capacity),
            Buffering::Overwriting if capacity > 0 => Buf::Overwriting(capacity),
            Buffering::Overwriting => {
                return Err("hoare: an overwriting broadcast needs a capacity of at least 1".into())
            }
            _ => return Err("hoare: a broadcast is rendezvous, bounded or overwriting".into()),
        };
        let (t, r) = elems!(bends_of!(elem, size, buf));
        Ok(BcastPair {
            tx: Box::new(BcastTx { inner: t, size }),
            rx: Box::new(BcastRx { inner: r, size }),
        })
    })
}

/// # Safety
/// `p` points to a live value of the element type (`size` bytes for a `Pod*`).
unsafe fn send_one<T: ByValue + Clone>(t: &BroadcastSender<T>, p: *mut u8, size: usize) -> Status {
    // SAFETY: the caller's contract.
    let v = unsafe { T::take(p, size) };
    match t.send(v) {
        Ok(()) => Status::Ok,
        Err(e) => {
            // SAFETY: as above: a failed send hands the value back.
            unsafe { e.into_inner().give_back(p) };
            Status::Poisoned
        }
    }
}

pub(super) unsafe fn bcast_send(tx: &BcastTx, value: *mut u8) -> Result<Status, String> {
    guard(|| {
        // SAFETY: the C++ caller passes a live value of the element type.
        Ok(bdispatch!(BTxAny(t) in &tx.inner => unsafe { send_one(t, value, tx.size) }))
    })
}

/// # Safety
/// `dst` is storage for the element type (`size` bytes for a `Pod*`).
unsafe fn recv_one<T: Carried + Clone>(
    r: &BroadcastReceiver<T>,
    dst: *mut u8,
    size: usize,
    mode: WaitMode,
    timeout_ns: u64,
) -> Status {
    let got = match mode {
        WaitMode::Try => r.try_recv().map_err(|e| match e {
            TryRecvError::Empty => Fail::WouldBlock,
            TryRecvError::Poisoned => Fail::Poisoned,
        }),
        WaitMode::Timeout => {
            let d = hoare_core::timer::deadline_after(std::time::Duration::from_nanos(timeout_ns));
            let left = d.saturating_duration_since(Instant::now());
            r.recv_timeout(left).map_err(|e| match e {
                RecvTimeoutError::Timeout => Fail::Timeout,
                RecvTimeoutError::Poisoned => Fail::Poisoned,
            })
        }
        _ => r.recv().map_err(|_| Fail::Poisoned),
    };
    match got {
        Ok(v) => {
            // SAFETY: the caller's contract (by-value types raise no exception).
            unsafe { v.deliver(dst, std::ptr::null_mut(), size) };
            Status::Ok
        }
        Err(f) => status_of(f),
    }
}

pub(super) unsafe fn bcast_recv(
    rx: &BcastRx,
    dst: *mut u8,
    mode: WaitMode,
    timeout_ns: u64,
) -> Result<Status, String> {
    guard(|| {
        Ok(bdispatch!(BRxAny(r) in &rx.inner =>
            // SAFETY: the C++ caller passes storage for the element type.
            unsafe { recv_one(r, dst, rx.size, mode, timeout_ns) }
        ))
    })
}

pub(super) fn bcast_tx_subscribe(tx: &BcastTx) -> Box<BcastRx> {
    let inner = elems!(bsub!(BTxAny, tx.inner));
    Box::new(BcastRx {
        inner,
        size: tx.size,
    })
}

pub(super) fn bcast_rx_subscribe(rx: &BcastRx) -> Box<BcastRx> {
    let inner = elems!(bsub!(BRxAny, rx.inner));
    Box::new(BcastRx {
        inner,
        size: rx.size,
    })
}

pub(super) fn bcast_tx_poison(tx: &BcastTx) {
    bdispatch!(BTxAny(t) in &tx.inner => t.poison())
}

pub(super) fn bcast_rx_poison(rx: &BcastRx) {
    bdispatch!(BRxAny(r) in &rx.inner => r.poison())
}

pub(super) fn bcast_tx_is_open(tx: &BcastTx) -> bool {
    bdispatch!(BTxAny(t) in &tx.inner => t.is_open())
}

pub(super) fn bcast_rx_is_open(rx: &BcastRx) -> bool {
    bdispatch!(BRxAny(r) in &rx.inner => r.is_open())
}

pub(super) fn bcast_readers(tx: &BcastTx) -> usize {
    bdispatch!(BTxAny(t) in &tx.inner => t.readers())
}

pub(super) fn bcast_tx_elem(tx: &BcastTx) -> Elem {
    tx.inner.elem()
}

pub(super) fn bcast_rx_elem(rx: &BcastRx) -> Elem {
    rx.inner.elem()
}
