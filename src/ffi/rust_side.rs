//! Rust-side access: conversions between the C++-held ends and Rust channel ends,
//! for Rust code that exchanges channels with C++.

use super::backend;
use super::chan::{ChanRx, ChanTx, RxAny, TxAny};

/// Conversions between the C++-held ends and Rust channel ends, for Rust code that
/// exchanges channels with C++ (a channel of a native element type can have a C++
/// process at one end and a Rust process at the other; see `cpp/README.md`, "Rust and
/// C++ in one network", and `cpp/examples/my_procs` for a crate of one's own).
///
/// The Rust end is a [`Tx`](super::Tx) or [`Rx`](super::Rx): a `Sender` or
/// `Receiver` of either sharing kind, as the C++ side made the channel.
///
/// ```
/// use hoare::ffi::{NativeElem, Rx};
///
/// let (tx, rx) = hoare::Channel::builder().bounded(1).one2one::<i64>();
/// let for_cpp = i64::rx_into(Rx::One(rx)); // what a bridge function returns, boxed
/// match i64::rx_from(for_cpp) {
///     Ok(Rx::One(rx)) => {
///         tx.send(7).unwrap();
///         assert_eq!(rx.recv(), Ok(7));
///     }
///     _ => unreachable!(),
/// }
/// ```
pub trait NativeElem: Sized + Send + 'static {
    /// Unwraps a C++-held sending end carrying `Self`.
    fn tx_from(tx: ChanTx) -> Result<backend::Tx<Self>, ChanTx>;
    /// Unwraps a C++-held receiving end carrying `Self`.
    fn rx_from(rx: ChanRx) -> Result<backend::Rx<Self>, ChanRx>;
    /// Wraps a Rust sending end for C++.
    fn tx_into(tx: backend::Tx<Self>) -> ChanTx;
    /// Wraps a Rust receiving end for C++.
    fn rx_into(rx: backend::Rx<Self>) -> ChanRx;
}

macro_rules! native_elems {
    (; $rv:ident $rt:ty; $($v:ident $t:ty),*; $($pv:ident $pt:ty),*) => {$(
        impl NativeElem for $t {
            fn tx_from(tx: ChanTx) -> Result<backend::Tx<Self>, ChanTx> {
                match tx.inner {
                    TxAny::$v(t) => Ok(t),
                    inner => Err(ChanTx { inner, ..tx }),
                }
            }
            fn rx_from(rx: ChanRx) -> Result<backend::Rx<Self>, ChanRx> {
                match rx.inner {
                    RxAny::$v(r) => Ok(r),
                    inner => Err(ChanRx { inner, ..rx }),
                }
            }
            fn tx_into(tx: backend::Tx<Self>) -> ChanTx {
                ChanTx {
                    inner: TxAny::$v(tx),
                    ops: std::ptr::null(),
                    buffered: false,
                    size: std::mem::size_of::<Self>(),
                }
            }
            fn rx_into(rx: backend::Rx<Self>) -> ChanRx {
                ChanRx {
                    inner: RxAny::$v(rx),
                    ops: std::ptr::null(),
                    buffered: false,
                    size: std::mem::size_of::<Self>(),
                }
            }
        }
    )*};
}
elems!(native_elems!());
