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
//! reader has taken the value (after its `recv_with` closure); poison crosses
//! both ways; a lost connection poisons every channel it carried
//! ([`Node::connection_error`] says why). Peers authenticate with a shared
//! secret (HMAC-SHA-256 challenge–response) before any frame; frames
//! ([`frame`]) are at most 64 KiB and values at most the node's limit, and a
//! malformed frame closes its connection.
//!
//! Not done yet (issue 14): a value whose proxy already took it when the
//! connection is lost, or that encodes to more than the node's limit, is not
//! handed back — its `send` returns `Ok` without an acknowledgement and the
//! channel is poisoned (handing it back needs an extended rendezvous that can
//! refuse the value, a core change); TLS (rustls); the reassembly
//! buffers are bounded per channel (the node's message limit) but not per
//! connection. C++ ends (strings and bytes): `cpp/include/hoare/net.hpp`.

mod auth;
pub mod frame;
mod names;
mod node;
mod sys;
mod tcp;
mod udp;

pub use names::{serve_names, MAX_NAME, MAX_NAMES, SERVICE};
pub use node::{Accepted, Node, DEFAULT_MAX_MESSAGE};
pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;
