//! Sockets for processes (feature `net`, on by default).
//!
//! [`TcpListener`], [`TcpStream`] and [`UdpSocket`] have blocking-style methods
//! (`accept`, `connect`, `read`, `write`, and through [`std::io::Read`] and
//! [`std::io::Write`] `read_exact`, `write_all`, …) that park the calling
//! *process* until the socket is ready, not its worker: one process per
//! connection is the normal way to write a server, and ten thousand
//! connections need ten thousand processes, not threads. On a plain OS thread
//! (or a [`spawn_blocking`](crate::spawn_blocking) process) the same methods
//! block the thread.
//!
//! Readiness comes from one poller per runtime (mio: epoll on Linux), made when
//! the first socket is used from a process. A worker with nothing to run sleeps
//! in it (with its next timer as the timeout), so an idle runtime uses no CPU
//! and a socket that becomes ready wakes its process at once; busy workers look
//! at it every few dozen dispatches. `readable()` gives an alt guard, so one
//! process can serve a socket and channels together.
//!
//! Timeouts: `set_read_timeout`/`set_write_timeout` (per operation, like
//! `std::net`'s), [`TcpStream::connect_timeout`], [`TcpListener::accept_timeout`];
//! an operation that times out returns [`std::io::ErrorKind::TimedOut`]. An
//! operation of a process that the runtime cancels at shutdown returns an error
//! saying so.
//!
//! Resolving a host *name* (as opposed to an IP address) in `bind`/`connect`
//! asks the system resolver, which blocks the worker while it runs.
//!
//! # Network channels
//! A [`Node`] stretches channels between programs with the semantics of local
//! ones (seed 002's networked C++CSP): [`Node::publish`] gives the reading end
//! of a channel other programs reach as `"HOST:PORT/name"` ([`Node::connect`]),
//! [`Node::accept`]/[`Node::connect_pair`] give a fresh request/reply pair per
//! client, and [`serve_names`] with [`Node::register`]/[`Node::connect_named`]
//! lets a writer find a reader by name. A `send` returns once the remote
//! reader has taken the value (after its `recv_with` closure), or fails and
//! hands the value back: no value is lost in between (a value over the node's
//! limit, a remote reader's poison, a connection lost before the
//! acknowledgement). Poison crosses both ways, with its reason; a lost
//! connection poisons every channel it carried, and a failed operation's
//! reason is the channel's `poison_reason()` (e.g. "connection to … lost: …";
//! [`Node::connection_error`] says it too). Peers authenticate with a shared
//! secret (HMAC-SHA-256 challenge–response) before any frame; frames
//! ([`frame`]) are at most 64 KiB and values at most the node's limit, and a
//! malformed frame closes its connection.
//!
//! Dropping a [`Node`] closes its connections gracefully: each first writes
//! what it owes its peer (the acknowledgement of a value a reader here took,
//! poison), and a value a writer here has in flight is withdrawn (the remote
//! node answers whether its reader took it: then the `send` succeeds, else the
//! value is handed back and never delivered), for at most
//! [`NodeBuilder::close_timeout`]. A connection that is *lost* (the peer
//! killed, the network cut, a peer that does not answer within that bound) can
//! still take an acknowledgement with it: that value is handed back although
//! the remote reader may have taken it (no protocol can tell), so a writer that
//! sends it again may deliver it twice.
//!
//! TLS (feature `tls`, rustls): see `NodeBuilder::tls`. C++ ends (strings and
//! bytes): `cpp/include/hoare/net.hpp`.

mod auth;
pub mod frame;
mod names;
mod node;
mod sys;
mod tcp;
mod transport;
mod udp;

/// Runs the connecting side of the nodes' authentication handshake on
/// `stream` (see [`Node::bind`]): for programs that speak the [`frame`]
/// protocol themselves (another language's implementation, a test of a node's
/// defences). After it succeeds, the stream carries frames.
///
/// ```
/// use hoare::net::{authenticate, Node, TcpStream};
/// hoare::run(|| {
///     let node = Node::bind("127.0.0.1:0", b"secret").unwrap();
///     let mut s = TcpStream::connect(node.local_addr()).unwrap();
///     authenticate(&mut s, b"secret").unwrap();
///     let mut s = TcpStream::connect(node.local_addr()).unwrap();
///     assert!(authenticate(&mut s, b"wrong").is_err());
/// });
/// ```
pub fn authenticate<S: std::io::Read + std::io::Write>(
    stream: &mut S,
    secret: impl AsRef<[u8]>,
) -> std::io::Result<()> {
    auth::client(stream, secret.as_ref())
}

pub use names::{serve_names, MAX_NAME, MAX_NAMES, SERVICE};
pub use node::{
    Accepted, Node, NodeBuilder, DEFAULT_CLOSE_TIMEOUT, DEFAULT_MAX_CONNECTION_MEMORY,
    DEFAULT_MAX_MESSAGE,
};
/// The TLS library of [`NodeBuilder::tls`] (feature `tls`), for its configurations.
#[cfg(feature = "tls")]
pub use rustls;
pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;
