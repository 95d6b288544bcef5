//! Network channels from C++ (`hoare::net::Node`, feature `net`): a [`Node`] as
//! C++ holds it, whose published, connected and accepted ends are ordinary
//! C++-held ends ([`ChanTx`], [`ChanRx`]) of `rust::String` or
//! `rust::Vec<uint8_t>`, i.e. Rust channels of `String` and `Vec<u8>`: the same
//! serde types a Rust program publishes or connects, so the two interoperate.

use super::backend::{self, Rx, Tx};
use super::bridge::{Elem, LostConn, NetPair};
use super::chan::{ChanRx, ChanTx};
use super::guard;
use super::rust_side::NativeElem;
use crate::chan::{One, Receiver};
use crate::net::{Accepted, Node, DEFAULT_CLOSE_TIMEOUT};
use serde::{de::DeserializeOwned, Serialize};
use std::time::Duration;

/// A network node as C++ holds it (`hoare::net::Node`).
pub struct NetNode(Node);

/// The accepter of a published name as C++ holds it (`hoare::net::Accepter`): a
/// fresh pair of channels per connecting client.
pub struct NetAccepter(AccepterAny);

enum AccepterAny {
    StrStr(Receiver<Accepted<String, String>, One>),
    StrBytes(Receiver<Accepted<String, Vec<u8>>, One>),
    BytesStr(Receiver<Accepted<Vec<u8>, String>, One>),
    BytesBytes(Receiver<Accepted<Vec<u8>, Vec<u8>>, One>),
}

const BAD_ELEM: &str =
    "hoare: a network channel carries rust::String or rust::Vec<uint8_t> (std::string or std::vector<uint8_t>)";

fn io_err(e: std::io::Error) -> String {
    let s = e.to_string();
    if s.starts_with("hoare:") {
        s
    } else {
        format!("hoare: {s}")
    }
}

pub(super) fn net_bind(
    addr: &str,
    secret: &[u8],
    max_message: usize,
    close_timeout_ns: u64,
) -> Result<Box<NetNode>, String> {
    guard(|| {
        backend::need_runtime()?;
        let mut b = Node::builder().close_timeout(close_timeout(close_timeout_ns));
        if max_message != 0 {
            b = b.max_message(max_message);
        }
        b.bind(addr, secret)
            .map(|n| Box::new(NetNode(n)))
            .map_err(io_err)
    })
}

/// The close timeout C++ asked for: `u64::MAX` nanoseconds is what C++ saturates
/// a duration too long for 64-bit nanoseconds (`hours::max()`) to, i.e. no
/// bound, as `Duration::MAX` is in Rust (negative ones C++ refuses).
fn close_timeout(ns: u64) -> Duration {
    if ns == u64::MAX {
        Duration::MAX
    } else {
        Duration::from_nanos(ns)
    }
}

pub(super) fn net_default_close_timeout_ns() -> u64 {
    u64::try_from(DEFAULT_CLOSE_TIMEOUT.as_nanos()).unwrap_or(u64::MAX)
}

pub(super) fn net_local_addr(n: &NetNode) -> String {
    n.0.local_addr().to_string()
}

fn publish<T>(n: &Node, name: &str) -> Result<Box<ChanRx>, String>
where
    T: NativeElem + Serialize + DeserializeOwned,
{
    let rx = n.publish::<T>(name).map_err(io_err)?;
    Ok(Box::new(T::rx_into(Rx::One(rx))))
}

pub(super) fn net_publish(n: &NetNode, name: &str, elem: Elem) -> Result<Box<ChanRx>, String> {
    guard(|| match elem {
        Elem::Str => publish::<String>(&n.0, name),
        Elem::Bytes => publish::<Vec<u8>>(&n.0, name),
        _ => Err(BAD_ELEM.into()),
    })
}

/// A writing end to `url` (with a buffer of `buffer` values if it is not 0, or
/// the name registered with the name service at `service` if that is not empty).
fn connect<T>(n: &Node, url: &str, service: &str, buffer: usize) -> Result<Box<ChanTx>, String>
where
    T: NativeElem + Serialize + DeserializeOwned,
{
    backend::need_runtime()?;
    let tx = if !service.is_empty() {
        n.connect_named::<T>(service, url)
    } else if buffer > 0 {
        n.connect_buffered::<T>(url, buffer)
    } else {
        n.connect::<T>(url)
    };
    Ok(Box::new(T::tx_into(Tx::Any(tx.map_err(io_err)?))))
}

pub(super) fn net_connect(
    n: &NetNode,
    url: &str,
    service: &str,
    elem: Elem,
    buffer: usize,
) -> Result<Box<ChanTx>, String> {
    guard(|| match elem {
        Elem::Str => connect::<String>(&n.0, url, service, buffer),
        Elem::Bytes => connect::<Vec<u8>>(&n.0, url, service, buffer),
        _ => Err(BAD_ELEM.into()),
    })
}

pub(super) fn net_accept(
    n: &NetNode,
    name: &str,
    req: Elem,
    rep: Elem,
) -> Result<Box<NetAccepter>, String> {
    guard(|| {
        let a = match (req, rep) {
            (Elem::Str, Elem::Str) => AccepterAny::StrStr(n.0.accept(name).map_err(io_err)?),
            (Elem::Str, Elem::Bytes) => AccepterAny::StrBytes(n.0.accept(name).map_err(io_err)?),
            (Elem::Bytes, Elem::Str) => AccepterAny::BytesStr(n.0.accept(name).map_err(io_err)?),
            (Elem::Bytes, Elem::Bytes) => {
                AccepterAny::BytesBytes(n.0.accept(name).map_err(io_err)?)
            }
            _ => return Err(BAD_ELEM.into()),
        };
        Ok(Box::new(NetAccepter(a)))
    })
}

fn pair<Req: NativeElem, Rep: NativeElem>(p: Accepted<Req, Rep>) -> NetPair {
    let (rx, tx) = p;
    NetPair {
        tx: Box::new(Rep::tx_into(Tx::Any(tx))),
        rx: Box::new(Req::rx_into(Rx::One(rx))),
    }
}

/// The next client's pair (its requests' reading end, its replies' writing end);
/// an error once the node is gone.
pub(super) fn net_accepter_next(a: &NetAccepter) -> Result<NetPair, String> {
    guard(|| {
        backend::need_runtime()?;
        let closed = |_| "hoare: poisoned: the accepter's node was closed".to_string();
        Ok(match &a.0 {
            AccepterAny::StrStr(r) => pair(r.recv().map_err(closed)?),
            AccepterAny::StrBytes(r) => pair(r.recv().map_err(closed)?),
            AccepterAny::BytesStr(r) => pair(r.recv().map_err(closed)?),
            AccepterAny::BytesBytes(r) => pair(r.recv().map_err(closed)?),
        })
    })
}

fn connect_pair<Req, Rep>(n: &Node, url: &str) -> Result<NetPair, String>
where
    Req: NativeElem + Serialize + DeserializeOwned,
    Rep: NativeElem + Serialize + DeserializeOwned,
{
    backend::need_runtime()?;
    let (tx, rx) = n.connect_pair::<Req, Rep>(url).map_err(io_err)?;
    Ok(NetPair {
        tx: Box::new(Req::tx_into(Tx::Any(tx))),
        rx: Box::new(Rep::rx_into(Rx::One(rx))),
    })
}

pub(super) fn net_connect_pair(
    n: &NetNode,
    url: &str,
    req: Elem,
    rep: Elem,
) -> Result<NetPair, String> {
    guard(|| match (req, rep) {
        (Elem::Str, Elem::Str) => connect_pair::<String, String>(&n.0, url),
        (Elem::Str, Elem::Bytes) => connect_pair::<String, Vec<u8>>(&n.0, url),
        (Elem::Bytes, Elem::Str) => connect_pair::<Vec<u8>, String>(&n.0, url),
        (Elem::Bytes, Elem::Bytes) => connect_pair::<Vec<u8>, Vec<u8>>(&n.0, url),
        _ => Err(BAD_ELEM.into()),
    })
}

pub(super) fn net_register(n: &NetNode, service: &str, name: &str) -> Result<(), String> {
    guard(|| {
        backend::need_runtime()?;
        n.0.register(service, name).map_err(io_err)
    })
}

pub(super) fn net_resolve(n: &NetNode, service: &str, name: &str) -> Result<String, String> {
    guard(|| {
        backend::need_runtime()?;
        n.0.resolve(service, name).map_err(io_err)
    })
}

pub(super) fn net_serve_names(n: &NetNode) -> Result<(), String> {
    guard(|| {
        backend::need_runtime()?;
        crate::net::serve_names(&n.0).map_err(io_err)
    })
}

pub(super) fn net_lost(n: &NetNode) -> Vec<LostConn> {
    n.0.lost_connections()
        .into_iter()
        .map(|(peer, why)| LostConn {
            peer: peer.to_string(),
            why,
        })
        .collect()
}
