//! Channel elements: how each element type of a C++-held channel moves between
//! C++ storage and a Rust channel. C++ values of any movable type travel by address
//! ([`RawItem`]); natives and trivially copyable classes by value ([`ByValue`]).

use super::backend::{self, Fail, Wait};
use super::bridge::{self, ExcSlot, Status, ValueOps};
use std::sync::atomic::AtomicBool;

/// How a failed operation ends for C++.
pub(super) fn status_of(f: Fail) -> Status {
    match f {
        Fail::Poisoned => Status::Poisoned,
        Fail::Timeout => Status::Timeout,
        Fail::WouldBlock => Status::WouldBlock,
    }
}

/// A C++ value in a channel of C++ values: a borrowed address (rendezvous: the
/// sender's own object) or an owned heap box (buffered channels).
///
/// A borrowed item carries the sender's `ack` flag: the sender does not leave its
/// send (and so keeps its object alive) until the receiver has moved the value out
/// and set the flag. A plain receive moves inside an extended rendezvous
/// (`recv_with`), so the flag is already set when the sender is released; an alt's
/// receive guard moves right after the alt committed, and the sender waits for the
/// flag for that short moment (yielding). It also carries the sender's exception
/// slot: a move constructor that throws is reported to both sides (the value
/// stays in the sender's object: a failed send keeps its value,
/// `docs/semantics.md#channels`, "No data lost").
pub struct RawItem {
    ptr: *mut u8,
    ops: *const ValueOps,
    pub(super) owned: bool,
    ack: *const AtomicBool,
    /// The sender's exception slot (borrowed items only; null otherwise).
    sender_err: *mut ExcSlot,
}

// SAFETY: the pointee is a C++ value the sender gave up for the communication; only
// the receiver touches it (C++ process bodies and values must be movable between
// threads, as documented in hoare.hpp).
unsafe impl Send for RawItem {}

impl RawItem {
    /// The item for a send of the C++ value at `value`: borrowed on a rendezvous
    /// channel, boxed on a buffered one. `None` if the move into the box threw (the
    /// exception is in `err`, the sender's exception slot).
    ///
    /// # Safety
    /// `value` is a live C++ value of the type of `ops`; `ack` and `err` outlive the
    /// item's delivery (the sender waits for `ack`, see [`wait_ack`]).
    pub(super) unsafe fn new(
        value: *mut u8,
        ops: *const ValueOps,
        buffered: bool,
        err: *mut ExcSlot,
        ack: *const AtomicBool,
    ) -> Option<Self> {
        if buffered {
            // SAFETY: the caller's contract.
            let b = unsafe { bridge::value_box(ops, value, err) };
            (!b.is_null()).then_some(RawItem {
                ptr: b,
                ops,
                owned: true,
                ack: std::ptr::null(),
                sender_err: std::ptr::null_mut(),
            })
        } else {
            Some(RawItem {
                ptr: value,
                ops,
                owned: false,
                ack,
                sender_err: err,
            })
        }
    }

    /// Moves the value into the storage at `dst` and releases the sender. A
    /// throwing move constructor is caught in C++ and stored in `err`, and in the
    /// sender's slot too if the sender waits (a borrowed item): its send fails with
    /// the same exception, and the value stays in its object. (A boxed value whose
    /// move throws is destroyed with its box: its sender is gone.)
    ///
    /// # Safety
    /// `dst` is storage for the channel's C++ type; `err` an exception slot.
    unsafe fn move_into(self, dst: *mut u8, err: *mut ExcSlot) {
        // SAFETY: `self.ptr` is live: the sender waits for `ack`, or the box is ours.
        let moved = unsafe { bridge::value_move(self.ops, dst, self.ptr, err) };
        if !moved && !self.sender_err.is_null() {
            // SAFETY: the sender keeps its slot alive until it sees `ack` (below),
            // and reads it only then.
            unsafe { bridge::exc_share(err, self.sender_err) };
        }
        if !self.ack.is_null() {
            // The last access to the sender's memory: it may leave at once.
            // SAFETY: the sender keeps `ack` alive until it sees it set.
            unsafe { (*self.ack).store(true, std::sync::atomic::Ordering::Release) };
        }
        // Dropping `self` frees an owned box (its moved-from value).
    }
}

/// Waits until the receiver of a borrowed item has moved the value out.
pub(super) fn wait_ack(ack: &AtomicBool) {
    while !ack.load(std::sync::atomic::Ordering::Acquire) {
        yield_once();
    }
}

/// One yield, in a frame of its own: `hoare_runtime::yield_now` is `#[inline]` and
/// reads a thread-local; inlined into a loop, LLVM computes that thread-local's
/// address once before the loop (`__tls_get_addr` in PIC code such as this static
/// library) and the process, migrated by the first yield, would go on reading the
/// previous worker's state.
#[inline(never)]
fn yield_once() {
    backend::yield_now();
}

impl Drop for RawItem {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned item holds a box made by `value_box` for this `ops`
            // that nobody else frees.
            unsafe { bridge::value_drop_box(self.ops, self.ptr) }
        }
    }
}

/// A Rust element type of the channels C++ holds: how a received value reaches its
/// C++ storage, and how a value whose send failed goes back to its C++ object.
pub(super) trait Carried: Sized + Send + 'static {
    /// Writes a received value into the C++ storage at `dst`.
    ///
    /// # Safety
    /// `dst` is storage for the channel's C++ type (`size` bytes for a by-value
    /// class, `size <= size_of::<Self>()`); `err` is an exception slot (for the move
    /// of a by-address value).
    unsafe fn deliver(self, dst: *mut u8, err: *mut ExcSlot, size: usize);

    /// A send that failed: gives the value back to the sender's C++ object (a failed
    /// send keeps its value: `docs/semantics.md#channels`).
    ///
    /// # Safety
    /// `p` is the sender's live object the value was taken (or made) from.
    unsafe fn give_back(self, p: *mut u8);

    /// A receive into `dst`: by default a plain receive, since the value is owned
    /// by the channel once sent and the writer need not wait for the write into
    /// `dst`.
    ///
    /// # Safety
    /// As for [`Carried::deliver`].
    unsafe fn recv_into(
        rx: &backend::Rx<Self>,
        dst: *mut u8,
        err: *mut ExcSlot,
        size: usize,
        w: Wait,
    ) -> Status {
        match rx.recv(w) {
            Ok(v) => {
                // SAFETY: the caller's contract.
                unsafe { v.deliver(dst, err, size) };
                Status::Ok
            }
            Err(f) => status_of(f),
        }
    }
}

/// The element types C++ sends by value (the natives and the by-value classes): the
/// value is taken out of the C++ object for the send.
pub(super) trait ByValue: Carried {
    /// Takes the value out of the C++ object at `p`, leaving a valid object behind.
    ///
    /// # Safety
    /// `p` points to a live value of the channel's C++ type (`size` readable bytes
    /// for a by-value class, `size <= size_of::<Self>()`).
    unsafe fn take(p: *mut u8, size: usize) -> Self;
}

impl Carried for RawItem {
    unsafe fn deliver(self, dst: *mut u8, err: *mut ExcSlot, _size: usize) {
        // SAFETY: the caller's contract.
        unsafe { self.move_into(dst, err) }
    }

    unsafe fn give_back(mut self, p: *mut u8) {
        if self.owned {
            self.owned = false;
            // SAFETY: the box is ours again; `p` is the object it was made from.
            unsafe { bridge::value_unbox(self.ops, self.ptr, p) };
        }
    }

    /// The move runs inside an extended rendezvous: the sender's object is alive.
    unsafe fn recv_into(
        rx: &backend::Rx<Self>,
        dst: *mut u8,
        err: *mut ExcSlot,
        _size: usize,
        w: Wait,
    ) -> Status {
        // SAFETY: `dst` is storage for the channel's C++ type (the caller's contract).
        match rx.recv_with(w, |item| unsafe { item.move_into(dst, err) }) {
            Ok(_) => Status::Ok,
            Err(f) => status_of(f),
        }
    }
}

macro_rules! native_copy {
    ($($t:ty),*) => {$(
        impl Carried for $t {
            unsafe fn deliver(self, dst: *mut u8, _err: *mut ExcSlot, _size: usize) {
                // SAFETY: the caller's contract: `dst` is storage for a `Self`.
                unsafe { std::ptr::write(dst as *mut Self, self) }
            }
            // The C++ object was only read: it still holds the value.
            unsafe fn give_back(self, _p: *mut u8) {}
        }
        impl ByValue for $t {
            unsafe fn take(p: *mut u8, _size: usize) -> Self {
                // SAFETY: the caller's contract: `p` points to a live value.
                unsafe { std::ptr::read(p as *const Self) }
            }
        }
    )*};
}
native_copy!(i64, u64, f64);

macro_rules! native_move {
    ($($t:ty),*) => {$(
        impl Carried for $t {
            unsafe fn deliver(self, dst: *mut u8, _err: *mut ExcSlot, _size: usize) {
                // SAFETY: the caller's contract: `dst` is storage for a `Self`.
                unsafe { std::ptr::write(dst as *mut Self, self) }
            }
            unsafe fn give_back(self, p: *mut u8) {
                // SAFETY: `p` points to a live `rust::String`/`rust::Vec`, which has
                // this type's layout.
                unsafe { *(p as *mut Self) = self }
            }
        }
        impl ByValue for $t {
            unsafe fn take(p: *mut u8, _size: usize) -> Self {
                // SAFETY: as in `give_back`; an empty value is left behind.
                unsafe { std::mem::take(&mut *(p as *mut Self)) }
            }
        }
    )*};
}
native_move!(String, Vec<u8>);

/// A trivially copyable C++ value of `size <= 8 * N` bytes, carried by value.
impl<const N: usize> Carried for [u64; N] {
    unsafe fn deliver(self, dst: *mut u8, _err: *mut ExcSlot, size: usize) {
        // SAFETY: `dst` is storage for `size <= 8 * N` bytes (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(self.as_ptr() as *const u8, dst, size) }
    }
    // The caller's object was only read: it still holds the value.
    unsafe fn give_back(self, _p: *mut u8) {}
}

impl<const N: usize> ByValue for [u64; N] {
    unsafe fn take(p: *mut u8, size: usize) -> Self {
        let mut a = [0u64; N];
        // SAFETY: `p` points to `size` readable bytes; `size <= 8 * N` (checked at
        // creation).
        unsafe { std::ptr::copy_nonoverlapping(p, a.as_mut_ptr() as *mut u8, size) };
        a
    }
}
