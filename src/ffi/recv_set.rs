//! Receive sets: `RecvSet`, the C++ `hoare::RecvAny`, a replicated receive guard
//! over a fixed set of ends built once and selected on many times (also the fast
//! path of an alt of receive guards only).

use super::backend;
use super::bridge::{AltOutcome, ExcSlot, Status};
use super::chan::{ChanRx, RxAny};
use super::elem::{Carried, RawItem};
use super::guard;
use hoare_core::alt::Fair;
use hoare_core::chan::RecvError;

/// A `RecvAny` over ends of one sharing kind.
pub(super) enum SetOf<T: 'static> {
    One(hoare_core::alt::RecvAny<'static, T>),
    Any(hoare_core::alt::RecvAny<'static, T>),
}

impl<T: 'static> SetOf<T> {
    /// # Safety
    /// The ends outlive the set (the C++ `RecvAny`'s contract).
    unsafe fn new(rxs: Vec<&backend::Rx<T>>) -> Result<Self, String> {
        // SAFETY: the caller's contract: the set never outlives the ends.
        let rxs: Vec<&'static backend::Rx<T>> = unsafe { std::mem::transmute(rxs) };
        if rxs.iter().all(|r| matches!(r, backend::Rx::One(_))) {
            Ok(SetOf::One(hoare_core::alt::RecvAny::from_ends(
                // An exact-size iterator: the cases are allocated once.
                rxs.into_iter().map(|r| match r {
                    backend::Rx::One(r) => r,
                    backend::Rx::Any(_) => unreachable!("checked above"),
                }),
            )))
        } else if rxs.iter().all(|r| matches!(r, backend::Rx::Any(_))) {
            Ok(SetOf::Any(hoare_core::alt::RecvAny::from_ends(
                rxs.into_iter().map(|r| match r {
                    backend::Rx::Any(r) => r,
                    backend::Rx::One(_) => unreachable!("checked above"),
                }),
            )))
        } else {
            Err("hoare: a RecvAny needs ends of one sharing kind".into())
        }
    }

    fn select(&mut self, fair: Option<&mut Fair>) -> (usize, Result<T, RecvError>) {
        let set = match self {
            SetOf::One(s) | SetOf::Any(s) => s,
        };
        match fair {
            Some(f) => set.select_fair(f),
            None => set.select(),
        }
    }
}

elems!(any_enum!(SetAny, SetOf));

/// A replicated receive guard as C++ holds it (`hoare::RecvAny<T>`).
pub struct RecvSet {
    inner: SetAny,
    /// Size in bytes of a `Pod*` element.
    size: usize,
    fair: Fair,
}

/// The set of receive guards over `rxs` (non-empty; one element type and one
/// sharing kind, or an error).
///
/// # Safety
/// The ends outlive the set.
pub(super) unsafe fn build_set(rxs: &[&ChanRx]) -> Result<SetAny, String> {
    let first = rxs
        .first()
        .ok_or("hoare: a RecvAny over no ends would wait for ever")?;
    if rxs
        .iter()
        .any(|r| std::mem::discriminant(&r.inner) != std::mem::discriminant(&first.inner))
    {
        return Err("hoare: a RecvAny needs ends of one element type".into());
    }
    macro_rules! set {
        ($v:ident) => {{
            let v: Vec<_> = rxs
                .iter()
                .map(|r| match &r.inner {
                    RxAny::$v(x) => x,
                    _ => unreachable!("checked above"),
                })
                .collect();
            // SAFETY: forwarded (the ends outlive the set).
            SetAny::$v(unsafe { SetOf::new(v) }?)
        }};
    }
    Ok(elems!(each_variant!(RxAny, &first.inner, set)))
}

/// Selects on `set`; `out(i)` gives the storage (and exception slot) for the value
/// of end `i`.
///
/// # Safety
/// `out(i)` is storage for the element type (`size` bytes for a by-value class).
unsafe fn pick<T: Carried>(
    set: &mut SetOf<T>,
    size: usize,
    fair: Option<&mut Fair>,
    out: impl Fn(usize) -> (*mut u8, *mut ExcSlot),
) -> (usize, Status) {
    let (i, r) = set.select(fair);
    let status = match r {
        Ok(v) => {
            let (dst, err) = out(i);
            // SAFETY: the caller's contract.
            unsafe { v.deliver(dst, err, size) };
            Status::Ok
        }
        Err(_) => Status::Poisoned,
    };
    (i, status)
}

/// [`pick`] on a set of any element type.
///
/// # Safety
/// As for [`pick`].
pub(super) unsafe fn set_pick(
    set: &mut SetAny,
    size: usize,
    fair: Option<&mut Fair>,
    out: impl Fn(usize) -> (*mut u8, *mut ExcSlot),
) -> (usize, Status) {
    // SAFETY: the caller's contract.
    dispatch!(SetAny(s) in set => unsafe { pick(s, size, fair, out) })
}

pub(super) unsafe fn recv_set_new(ends: &[usize]) -> Result<Box<RecvSet>, String> {
    guard(|| {
        // SAFETY: C++ passes addresses of live `ChanRx` boxes that outlive the set.
        let rxs: Vec<&ChanRx> = ends
            .iter()
            .map(|&e| unsafe { &*(e as *const ChanRx) })
            .collect();
        // SAFETY: as above.
        let inner = unsafe { build_set(&rxs) }?;
        Ok(Box::new(RecvSet {
            inner,
            size: rxs[0].size,
            fair: Fair::new(),
        }))
    })
}

pub(super) unsafe fn recv_set_select(
    set: &mut RecvSet,
    dst: *mut u8,
    err: *mut ExcSlot,
    fair: bool,
    fair_next: usize,
) -> Result<AltOutcome, String> {
    guard(|| {
        let f = if fair {
            set.fair.chosen(fair_next.wrapping_sub(1));
            Some(&mut set.fair)
        } else {
            None
        };
        // SAFETY: `dst` is storage for the element type (the caller's contract).
        let (i, status) = unsafe { set_pick(&mut set.inner, set.size, f, |_| (dst, err)) };
        Ok(AltOutcome {
            guard: i,
            status,
            fair_next: if fair {
                set.fair.next_start()
            } else {
                fair_next
            },
        })
    })
}
