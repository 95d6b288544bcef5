//! Network channels (seed 002's networked C++CSP, JCSP.net): a [`Node`] per
//! program, channels published by name, ends that are ordinary hoare ends.
//!
//! # How a network channel works
//! The writing program's end is a local channel whose reader is a *writer
//! proxy* process. The proxy takes each value in an extended rendezvous that
//! can refuse it (`recv_or_refuse`), so the user's `send` stays blocked while
//! the proxy encodes the value, sends it and waits for the reader's
//! acknowledgement; if the value cannot go (over the limit), the remote reader
//! poisoned the channel or the connection is lost first, the proxy refuses it:
//! the `send` fails and hands it back, and the channel is poisoned with why. At the reading
//! program a *reader proxy* sends the decoded value into the published channel
//! and acknowledges once that `send` returned: once the user's `recv` took it,
//! or once its `recv_with` closure returned (seed 002 §5.4.2). So a network
//! `send` returns exactly when a local one would.
//!
//! Poison crosses both ways: the writing side's poison (or its last end
//! dropped) sends `POISON`, which poisons the published channel; the reading
//! side's poison makes the reader proxy's `send` fail, which sends `POISON`
//! back, which poisons the writing end (a `send` then fails and hands its value
//! back). A lost connection poisons every channel it carried.
//!
//! Dropping the node closes each connection gracefully (`Conn::start_shut`,
//! `Conn::finish_shut`): every channel is poisoned, each proxy writes what it
//! owes and ends (a reader proxy the `ACK` of a value its reader took, then a
//! `POISON`; a writer proxy with a value in flight a `POISON` that withdraws
//! it, and waits for the answer: `ACK` if the remote reader took it, `POISON`
//! if not), and the connection is shut once every proxy has ended (each holds
//! a [`Busy`] token) or at the node's close timeout.
//!
//! All channels between two nodes share one TCP connection (opened by the
//! first `connect` to that node), multiplexed by channel ids (seed 002 §5.4.3);
//! values are cut into fragments, and each fragment is written on its own, so a
//! large value does not hold the connection for its whole length.

use super::auth;
use super::frame::{Decoder, Frame, Kind, FRAGMENT, LAST};
#[cfg(feature = "tls")]
use super::transport::tls::{Tls, TlsStream};
use super::transport::Transport;
use super::TcpStream;
use hoare_core::chan::{Any, Channel, One, Reason, Receiver, RecvError, Refuse, Sender};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The default largest value (encoded) a node accepts: 16 MiB.
pub const DEFAULT_MAX_MESSAGE: usize = 16 << 20;
/// The most channels one connection may carry at once.
const MAX_CHANNELS: usize = 1 << 16;
/// The longest channel name (bytes) an `OPEN` may carry.
const MAX_NAME: usize = 1024;
/// How long a peer may take to authenticate.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// The default bound on how long dropping a node waits for its connections to
/// finish the frames they owe (see [`NodeBuilder::close_timeout`]).
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// What an `OPEN` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Open {
    /// A writing end to a published channel.
    Chan = 1,
    /// A request/reply pair through an accepter.
    Pair = 2,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn protocol(msg: impl fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("hoare: network protocol error: {msg}"),
    )
}

/// What the connection's reader tells a writer proxy.
enum Ctl {
    Opened(u32, u32),
    Refused(String),
    Ack,
    /// The remote reader poisoned the channel (why, if it said).
    Poison(String),
    Lost,
    /// The node is closing the connection: poison the remote channel with
    /// this reason (which withdraws a value in flight unless it was taken)
    /// and wait for the answer.
    Closing(String),
}

/// What the connection's reader gives a reader proxy.
enum In {
    Data(Vec<u8>),
    /// The remote writer poisoned the channel: why.
    Poison(Reason),
    /// The node is closing the connection: poison the remote writer with this
    /// reason, and end.
    Close(String),
}

/// Held by each process that may still write a frame the peer is owed (a
/// proxy, for its whole life; a process sending a decided frame): a graceful
/// close (`Conn::finish_shut`) waits until every one is dropped. A clone of the
/// connection's `busy` sender: the channel is poisoned when the last goes.
type Busy = Sender<(), Any>;

/// One channel end of a connection, by its id at this node.
enum Endpoint {
    /// A user writes here; the remote end reads.
    Writer {
        ctl: Sender<Ctl, Any>,
        poison: Box<dyn Fn(Reason) + Send + Sync>,
    },
    /// The remote end writes; a reader proxy delivers here.
    Reader {
        /// The remote writer's id (0 until known, for a pair's reverse channel).
        peer: u32,
        inbox: Sender<In, Any>,
        poison: Box<dyn Fn(Reason) + Send + Sync>,
        /// Fragments of the value coming in.
        partial: Vec<u8>,
        /// A whole value was handed to the proxy and not yet acknowledged.
        pending: bool,
    },
    /// A reader that ended; data for it is answered with poison.
    Closed { peer: u32 },
}

/// A connection between two nodes, and the channels it carries.
struct Conn {
    stream: Transport,
    /// A token: whoever holds it writes one frame (or a few) to the stream.
    wlock: (Sender<(), Any>, Receiver<(), Any>),
    endpoints: Mutex<HashMap<u32, Endpoint>>,
    next_id: AtomicU32,
    dead: AtomicBool,
    why: Mutex<Option<String>>,
    node: Weak<NodeInner>,
    peer: SocketAddr,
    /// Bytes of values from the peer this connection holds: fragments being
    /// reassembled and whole values its reader proxies have not delivered.
    held: AtomicUsize,
    /// The most it may hold; a peer that sends more is cut off.
    max_held: usize,
    /// Where [`Busy`] tokens come from; `None` once the connection is closing
    /// (taken under the `endpoints` lock, so no endpoint is added after).
    busy: Mutex<Option<Busy>>,
    /// Fails once every `Busy` is gone (nothing is ever sent on it).
    idle: Receiver<(), Any>,
}

impl Conn {
    fn new(stream: Transport, node: &Arc<NodeInner>, peer: SocketAddr) -> Arc<Conn> {
        let wlock = Channel::builder().bounded(1).any2any::<()>();
        wlock.0.send(()).expect("a fresh channel");
        let (busy, idle) = Channel::builder().any2any::<()>();
        Arc::new(Conn {
            stream,
            wlock,
            endpoints: Mutex::new(HashMap::new()),
            next_id: AtomicU32::new(1),
            dead: AtomicBool::new(false),
            why: Mutex::new(None),
            node: Arc::downgrade(node),
            peer,
            held: AtomicUsize::new(0),
            max_held: node.max_held,
            busy: Mutex::new(Some(busy)),
            idle,
        })
    }

    /// A token that makes a graceful close wait for its holder, unless the
    /// connection is closing already.
    fn busy(&self) -> Option<Busy> {
        lock(&self.busy).clone()
    }

    fn lost_error(&self) -> io::Error {
        let why = lock(&self.why).clone().unwrap_or_default();
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            format!("hoare: connection to {} lost: {why}", self.peer),
        )
    }

    /// Writes frames, holding the write token for all of them.
    fn send(&self, frames: &[Frame]) -> io::Result<()> {
        if self.dead.load(Ordering::Acquire) {
            return Err(self.lost_error());
        }
        let mut buf = Vec::new();
        for f in frames {
            f.encode_into(&mut buf);
        }
        if self.wlock.1.recv().is_err() {
            return Err(self.lost_error());
        }
        let r = self.stream.write_all(&buf);
        let _ = self.wlock.0.try_send(());
        if let Err(e) = r {
            self.close(&format!("write failed: {e}"));
            return Err(self.lost_error());
        }
        Ok(())
    }

    /// Sends a value as `DATA` fragments; others may write between them.
    fn send_value(&self, chan: u32, bytes: &[u8]) -> io::Result<()> {
        let mut chunks = bytes.chunks(FRAGMENT).peekable();
        if chunks.peek().is_none() {
            return self.send(&[Frame {
                chan,
                kind: Kind::Data,
                flags: LAST,
                payload: Vec::new(),
            }]);
        }
        while let Some(c) = chunks.next() {
            let last = chunks.peek().is_none();
            self.send(&[Frame {
                chan,
                kind: Kind::Data,
                flags: if last { LAST } else { 0 },
                payload: c.to_vec(),
            }])?;
        }
        Ok(())
    }

    /// Adds an endpoint, with the token its proxy holds for its life.
    fn add(&self, e: Endpoint) -> io::Result<(u32, Busy)> {
        let mut eps = lock(&self.endpoints);
        let Some(busy) = self.busy() else {
            return Err(self.lost_error());
        };
        if eps.len() >= MAX_CHANNELS {
            return Err(protocol("too many channels on one connection"));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if id == 0 || id == u32::MAX {
            return Err(protocol("channel ids exhausted on this connection"));
        }
        eps.insert(id, e);
        Ok((id, busy))
    }

    /// Starts a graceful close (dropping the node): no new channel or value
    /// starts, every channel is poisoned with the reason (`why`, as a lost
    /// connection's), and each proxy finishes what it owes the peer (the
    /// acknowledgement of a value its reader took, a poison, the answer to a
    /// value in flight) and ends; [`finish_shut`](Self::finish_shut) waits for
    /// that. `to_peer` is the reason the peer's channels are poisoned with.
    fn start_shut(&self, why: &str, to_peer: &str) {
        if self.dead.load(Ordering::Acquire) {
            return;
        }
        let eps = lock(&self.endpoints);
        if lock(&self.busy).take().is_none() {
            return; // closing already
        }
        *lock(&self.why) = Some(why.to_owned());
        let reason: Reason = self.lost_error().to_string().into();
        for e in eps.values() {
            match e {
                Endpoint::Writer { ctl, poison } => {
                    // A value in flight stays in its `send` until the peer
                    // answers (its reader took it: the send succeeds).
                    let _ = ctl.try_send(Ctl::Closing(to_peer.to_owned()));
                    poison(reason.clone());
                }
                Endpoint::Reader { inbox, poison, .. } => {
                    // A proxy whose `send` a reader took acknowledges first.
                    let _ = inbox.try_send(In::Close(to_peer.to_owned()));
                    poison(reason.clone());
                }
                Endpoint::Closed { .. } => {}
            }
        }
    }

    /// Waits (until `deadline`) for the proxies started by
    /// [`start_shut`](Self::start_shut) to end, then closes the connection.
    fn finish_shut(&self, deadline: Option<Instant>) {
        // Err(Poisoned) once every token is gone, Err(Timeout) at the bound
        // (a peer that stopped reading or answering); at once in a process
        // the runtime is cancelling.
        let _ = match deadline {
            Some(d) => self.idle.recv_deadline(d),
            None => self.idle.recv().map_err(Into::into),
        };
        let why = lock(&self.why).clone().unwrap_or_default();
        self.close(&why);
    }

    /// Closes the connection (once): poisons every channel it carries, with the
    /// reason.
    fn close(&self, why: &str) {
        if self.dead.swap(true, Ordering::AcqRel) {
            return;
        }
        *lock(&self.why) = Some(why.to_owned());
        // No new proxy: a graceful close waits only for those still running.
        drop(lock(&self.busy).take());
        self.stream.shutdown();
        // Recorded before the channels are poisoned: a party that sees the
        // poison finds the reason in `Node::connection_error` too.
        if let Some(node) = self.node.upgrade() {
            lock(&node.lost).insert(self.peer, why.to_owned());
        }
        let reason: Reason = self.lost_error().to_string().into();
        let eps: Vec<Endpoint> = lock(&self.endpoints).drain().map(|(_, e)| e).collect();
        for e in eps {
            match e {
                Endpoint::Writer { ctl, poison } => {
                    let _ = ctl.try_send(Ctl::Lost);
                    poison(reason.clone());
                }
                Endpoint::Reader { poison, .. } => poison(reason.clone()),
                Endpoint::Closed { .. } => {}
            }
        }
        // Wake any process waiting for the write token.
        self.wlock.1.poison();
        if let Some(node) = self.node.upgrade() {
            let mut conns = lock(&node.conns);
            if conns
                .get(&self.peer)
                .is_some_and(|c| std::ptr::eq(Arc::as_ptr(c), self))
            {
                conns.remove(&self.peer);
            }
        }
    }

    /// The connection's reader: decodes frames until the stream ends or
    /// misbehaves, then closes the connection.
    fn read_loop(self: Arc<Conn>, max_message: usize) {
        let mut d = Decoder::new();
        let mut buf = vec![0u8; 64 * 1024];
        let why = loop {
            let n = match self.stream.read(&mut buf) {
                Ok(0) => break "the peer closed the connection".to_owned(),
                Ok(n) => n,
                Err(e) => break format!("read failed: {e}"),
            };
            d.feed(&buf[..n]);
            let r = loop {
                match d.next_frame() {
                    Ok(Some(f)) => {
                        if let Err(e) = self.handle(f, max_message) {
                            break Err(e.to_string());
                        }
                    }
                    Ok(None) => break Ok(()),
                    Err(e) => break Err(format!("hoare: network protocol error: {e}")),
                }
            };
            if let Err(e) = r {
                break e;
            }
        };
        self.close(&why);
    }

    fn handle(self: &Arc<Conn>, f: Frame, max_message: usize) -> io::Result<()> {
        match f.kind {
            Kind::Open => self.handle_open(f),
            Kind::Opened => {
                let a = u32_at(&f.payload, 0)?;
                let b = if f.payload.len() >= 8 {
                    u32_at(&f.payload, 4)?
                } else {
                    0
                };
                self.to_writer(f.chan, Ctl::Opened(a, b))
            }
            Kind::Refused => {
                let msg = String::from_utf8_lossy(&f.payload).into_owned();
                self.to_writer(f.chan, Ctl::Refused(msg))
            }
            Kind::Ack => self.to_writer(f.chan, Ctl::Ack),
            Kind::Poison => {
                let why = String::from_utf8_lossy(&f.payload).into_owned();
                let mut eps = lock(&self.endpoints);
                match eps.get(&f.chan) {
                    Some(Endpoint::Writer { ctl, poison }) => {
                        let reason = remote_poison(self.peer, "reader", &why);
                        let _ = ctl.try_send(Ctl::Poison(reason.to_string()));
                        poison(reason);
                    }
                    Some(Endpoint::Reader { inbox, poison, .. }) => {
                        let reason = remote_poison(self.peer, "writer", &why);
                        let _ = inbox.try_send(In::Poison(reason.clone()));
                        poison(reason);
                    }
                    Some(Endpoint::Closed { .. }) => {
                        eps.remove(&f.chan);
                    }
                    None => {}
                }
                Ok(())
            }
            Kind::Data => {
                let mut eps = lock(&self.endpoints);
                match eps.get_mut(&f.chan) {
                    Some(Endpoint::Reader {
                        inbox,
                        partial,
                        pending,
                        ..
                    }) => {
                        if partial.len() + f.payload.len() > max_message {
                            return Err(protocol(format!(
                                "a value over the limit of {max_message} bytes"
                            )));
                        }
                        let held = self.held.fetch_add(f.payload.len(), Ordering::Relaxed)
                            + f.payload.len();
                        if held > self.max_held {
                            return Err(protocol(format!(
                                "the peer sent more unfinished values than the \
                                 per-connection limit of {} bytes",
                                self.max_held
                            )));
                        }
                        partial.extend_from_slice(&f.payload);
                        if f.flags & LAST != 0 {
                            if *pending {
                                return Err(protocol(
                                    "a value sent before the last one was acknowledged",
                                ));
                            }
                            *pending = true;
                            let v = std::mem::take(partial);
                            let _ = inbox.try_send(In::Data(v));
                        }
                        Ok(())
                    }
                    Some(Endpoint::Closed { peer }) => {
                        if f.flags & LAST != 0 {
                            let peer = *peer;
                            drop(eps);
                            self.spawn_send(Frame::bare(peer, Kind::Poison));
                        }
                        Ok(())
                    }
                    _ => Err(protocol(format!("data for unknown channel {}", f.chan))),
                }
            }
        }
    }

    /// Sends a frame from a new process (the reader must not wait for the
    /// write token: the writer may be waiting for the reader).
    fn spawn_send(self: &Arc<Conn>, f: Frame) {
        let c = self.clone();
        let busy = self.busy();
        drop(hoare_runtime::spawn(move || {
            let _ = c.send(&[f]);
            drop(busy);
        }));
    }

    fn to_writer(&self, chan: u32, c: Ctl) -> io::Result<()> {
        match lock(&self.endpoints).get(&chan) {
            Some(Endpoint::Writer { ctl, .. }) => {
                let _ = ctl.try_send(c);
                Ok(())
            }
            // A writer that ended meanwhile.
            None | Some(Endpoint::Closed { .. }) => Ok(()),
            Some(Endpoint::Reader { .. }) => Err(protocol(format!(
                "a writer's frame for reading channel {chan}"
            ))),
        }
    }

    fn handle_open(self: &Arc<Conn>, f: Frame) -> io::Result<()> {
        let p = &f.payload;
        let peer = u32_at(p, 0)?;
        let kind = *p.get(4).ok_or_else(|| protocol("short OPEN"))?;
        let (reverse, name_at) = if kind == Open::Pair as u8 {
            (u32_at(p, 5)?, 9)
        } else if kind == Open::Chan as u8 {
            (0, 5)
        } else {
            return Err(protocol(format!("unknown OPEN kind {kind}")));
        };
        let name = std::str::from_utf8(p.get(name_at..).unwrap_or_default())
            .map_err(|_| protocol("a channel name that is not UTF-8"))?
            .to_owned();
        // Bounded, so the refusal that quotes it fits in one frame.
        if name.len() > MAX_NAME {
            return Err(protocol(format!("a channel name over {MAX_NAME} bytes")));
        }
        let factory = self.node.upgrade().and_then(|n| {
            lock(&n.published)
                .get(&name)
                .filter(|pb| pb.kind == kind)
                .map(|pb| pb.factory.clone())
        });
        let reply = match factory {
            None => {
                let what = if kind == Open::Pair as u8 {
                    "accepter"
                } else {
                    "channel"
                };
                Frame {
                    chan: peer,
                    kind: Kind::Refused,
                    flags: 0,
                    payload: format!("no {what} is published as {name:?}").into_bytes(),
                }
            }
            Some(factory) => match factory(self, peer, reverse) {
                Ok((a, b)) => {
                    let mut payload = a.to_le_bytes().to_vec();
                    if kind == Open::Pair as u8 {
                        payload.extend_from_slice(&b.to_le_bytes());
                    }
                    Frame {
                        chan: peer,
                        kind: Kind::Opened,
                        flags: 0,
                        payload,
                    }
                }
                Err(e) => Frame {
                    chan: peer,
                    kind: Kind::Refused,
                    flags: 0,
                    payload: e.to_string().into_bytes(),
                },
            },
        };
        self.spawn_send(reply);
        Ok(())
    }

    /// A reading endpoint for values from the remote writer `peer`, delivered
    /// into `tx` by a new reader proxy. Returns its id.
    fn add_reader<T, S>(self: &Arc<Conn>, peer: u32, tx: Sender<T, S>) -> io::Result<u32>
    where
        T: DeserializeOwned + Send + 'static,
        S: hoare_core::chan::Sharing,
        Sender<T, S>: Send + 'static,
    {
        let (inbox, rx) = Channel::builder().unbounded().any2one::<In>();
        let tx = Arc::new(tx);
        let tx2 = tx.clone();
        let (id, busy) = self.add(Endpoint::Reader {
            peer,
            inbox,
            poison: Box::new(move |r| tx2.poison_with(r)),
            partial: Vec::new(),
            pending: false,
        })?;
        let c = self.clone();
        drop(hoare_runtime::spawn(move || {
            c.reader_proxy(id, rx, &tx);
            drop(busy);
        }));
        Ok(id)
    }

    /// Stops counting what a reading endpoint that ended held: its partial
    /// value and any whole one left in its proxy's inbox.
    fn unhold(&self, e: Option<Endpoint>, inbox: &Receiver<In, One>) {
        let mut n = 0;
        if let Some(Endpoint::Reader { partial, .. }) = e {
            n += partial.len();
        }
        while let Ok(m) = inbox.try_recv() {
            if let In::Data(b) = m {
                n += b.len();
            }
        }
        self.held.fetch_sub(n, Ordering::Relaxed);
    }

    /// Ends the reading endpoint `id` from this side: poisons the remote writer
    /// with `why`, and answers any more of its data with poison.
    fn end_reader(&self, id: u32, inbox: &Receiver<In, One>, why: Option<&str>) {
        if self.dead.load(Ordering::Acquire) {
            return;
        }
        let p = match lock(&self.endpoints).get(&id) {
            Some(Endpoint::Reader { peer, .. }) => *peer,
            _ => 0,
        };
        let old = lock(&self.endpoints).insert(id, Endpoint::Closed { peer: p });
        self.unhold(old, inbox);
        let _ = self.send(&[poison_frame(p, why)]);
    }

    fn reader_proxy<T, S>(&self, id: u32, inbox: Receiver<In, One>, tx: &Sender<T, S>)
    where
        T: DeserializeOwned,
        S: hoare_core::chan::Sharing,
    {
        let peer = |c: &Conn| match lock(&c.endpoints).get(&id) {
            Some(Endpoint::Reader { peer, .. }) => *peer,
            _ => 0,
        };
        loop {
            match inbox.recv() {
                Ok(In::Data(bytes)) => {
                    let n = bytes.len();
                    let v: T = match postcard::from_bytes(&bytes) {
                        Ok(v) => v,
                        Err(e) => {
                            self.close(&format!(
                                "hoare: network protocol error: a value that does not decode: {e}"
                            ));
                            return;
                        }
                    };
                    drop(bytes);
                    let sent = tx.send(v);
                    // Delivered or dropped: no longer held.
                    self.held.fetch_sub(n, Ordering::Relaxed);
                    match sent {
                        Ok(()) => {
                            if let Some(Endpoint::Reader { pending, .. }) =
                                lock(&self.endpoints).get_mut(&id)
                            {
                                *pending = false;
                            }
                            if self.send(&[Frame::bare(peer(self), Kind::Ack)]).is_err() {
                                return;
                            }
                        }
                        Err(_) => {
                            // Poisoned by the reader (or the connection): tell the
                            // writer (with the reason), keep answering its data
                            // with poison.
                            let why = tx.poison_reason();
                            self.end_reader(id, &inbox, why.as_deref());
                            return;
                        }
                    }
                }
                Ok(In::Close(why)) => {
                    // The node is closing: any value it had was acknowledged
                    // above; a value still coming is answered with poison.
                    self.end_reader(id, &inbox, Some(&why));
                    return;
                }
                Ok(In::Poison(why)) => {
                    tx.poison_with(why);
                    let old = lock(&self.endpoints).remove(&id);
                    self.unhold(old, &inbox);
                    return;
                }
                Err(_) => {
                    tx.poison();
                    let old = lock(&self.endpoints).remove(&id);
                    self.unhold(old, &inbox);
                    return;
                }
            }
        }
    }

    /// A writing endpoint whose values go to the remote channel `peer` (0: not
    /// known yet, see `Ctl::Opened`), taken from `rx` by a new writer proxy once
    /// `start` says so. Returns its id and the control channel's reader.
    fn add_writer<T>(
        self: &Arc<Conn>,
        rx: Receiver<T, Any>,
        max_message: usize,
    ) -> io::Result<(u32, WriterStart<T>)>
    where
        T: Serialize + Send + 'static,
    {
        let (ctl, ctl_rx) = Channel::builder().unbounded().any2one::<Ctl>();
        let rx2 = rx.clone();
        let (id, busy) = self.add(Endpoint::Writer {
            ctl,
            poison: Box::new(move |r| rx2.poison_with(r)),
        })?;
        Ok((
            id,
            WriterStart {
                conn: self.clone(),
                id,
                rx,
                ctl: ctl_rx,
                max_message,
                _busy: busy,
            },
        ))
    }
}

/// A writer endpoint whose proxy has not started yet.
struct WriterStart<T> {
    conn: Arc<Conn>,
    id: u32,
    rx: Receiver<T, Any>,
    ctl: Receiver<Ctl, One>,
    max_message: usize,
    /// Held until the proxy ends (see [`Busy`]).
    _busy: Busy,
}

impl<T: Serialize + Send + 'static> WriterStart<T> {
    /// Waits for the remote node to answer the `OPEN`.
    fn opened(&self) -> io::Result<(u32, u32)> {
        match self.ctl.recv() {
            Ok(Ctl::Opened(a, b)) => Ok((a, b)),
            Ok(Ctl::Refused(msg)) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("hoare: {} refused the channel: {msg}", self.conn.peer),
            )),
            Ok(Ctl::Lost | Ctl::Closing(_)) | Err(_) => Err(self.conn.lost_error()),
            Ok(_) => Err(protocol("an unexpected answer to OPEN")),
        }
    }

    /// Starts the writer proxy for the remote channel `peer`.
    fn start(self, peer: u32) {
        drop(hoare_runtime::spawn(move || self.proxy(peer)));
    }

    /// Takes each value in an extended rendezvous that can refuse it: the
    /// user's `send` returns once the remote reader acknowledged the value, or
    /// fails and hands it back (the channel poisoned with why) when it cannot
    /// be sent (over the node's limit: before anything is written), the remote
    /// reader poisoned the channel, or the connection was lost before the
    /// acknowledgement. So every value is either acknowledged or handed back.
    /// When the node closes, a value in flight is withdrawn with a `POISON`,
    /// and the remote proxy's answer decides.
    fn proxy(self, peer: u32) {
        enum Stop {
            /// This side cannot send the value: tell the remote reader.
            Local,
            /// The remote reader poisoned the channel, or the connection is gone.
            Remote,
        }
        let conn = &self.conn;
        let max = self.max_message;
        let mut stop = None;
        // The node is closing and the remote channel was poisoned (no second
        // `POISON`).
        let mut told = false;
        loop {
            let r = self.rx.recv_or_refuse(|v: T| {
                let bytes = match postcard::to_stdvec(&v) {
                    Ok(b) if b.len() <= max => b,
                    Ok(b) => {
                        stop = Some(Stop::Local);
                        return Err(Refuse::new(
                            v,
                            format!(
                                "hoare: a value of {} bytes (encoded) is over the node's \
                                 message limit of {max} bytes",
                                b.len()
                            ),
                        ));
                    }
                    Err(e) => {
                        stop = Some(Stop::Local);
                        return Err(Refuse::new(
                            v,
                            format!("hoare: a value that does not encode: {e}"),
                        ));
                    }
                };
                if let Err(e) = conn.send_value(peer, &bytes) {
                    stop = Some(Stop::Remote);
                    return Err(Refuse::new(v, e.to_string()));
                }
                let mut answer = self.ctl.recv();
                while let Ok(Ctl::Closing(why)) = &answer {
                    // Withdraw the value: the remote proxy answers `ACK` if its
                    // reader took it, else `POISON`.
                    told = true;
                    let _ = conn.send(&[poison_frame(peer, Some(why))]);
                    answer = self.ctl.recv();
                }
                match answer {
                    Ok(Ctl::Ack) => Ok(()),
                    Ok(Ctl::Poison(why)) => {
                        stop = Some(Stop::Remote);
                        Err(Refuse::new(v, why))
                    }
                    _ => {
                        stop = Some(Stop::Remote);
                        Err(Refuse::new(v, conn.lost_error().to_string()))
                    }
                }
            });
            match r {
                Ok(Some(())) => {}
                Ok(None) => {
                    if matches!(stop, Some(Stop::Local)) {
                        let why = self.rx.poison_reason();
                        let _ = conn.send(&[poison_frame(peer, why.as_deref())]);
                    }
                    break;
                }
                Err(RecvError::Poisoned) => {
                    // The writers poisoned (or all dropped) their end, or the
                    // remote side did (then its poison or the loss is in `ctl`).
                    match self.ctl.try_recv() {
                        Ok(Ctl::Poison(_) | Ctl::Lost) => {}
                        _ if told || conn.dead.load(Ordering::Acquire) => {}
                        Ok(Ctl::Closing(why)) => {
                            let _ = conn.send(&[poison_frame(peer, Some(&why))]);
                        }
                        _ => {
                            let why = self.rx.poison_reason();
                            let _ = conn.send(&[poison_frame(peer, why.as_deref())]);
                        }
                    }
                    break;
                }
            }
        }
        lock(&conn.endpoints).remove(&self.id);
    }
}

/// The longest poison reason a `POISON` frame carries (longer ones are cut).
const MAX_REASON: usize = 1024;

/// A `POISON` frame for the remote channel `chan`, with why (if known).
fn poison_frame(chan: u32, why: Option<&str>) -> Frame {
    let mut payload = why.unwrap_or_default().as_bytes().to_vec();
    if payload.len() > MAX_REASON {
        let mut n = MAX_REASON;
        while !why.unwrap_or_default().is_char_boundary(n) {
            n -= 1;
        }
        payload.truncate(n);
    }
    Frame {
        chan,
        kind: Kind::Poison,
        flags: 0,
        payload,
    }
}

/// The reason of a poison that came from the remote `side` ("reader" or
/// "writer") at `peer`, which said `why` (maybe nothing).
fn remote_poison(peer: SocketAddr, side: &str, why: &str) -> Reason {
    if why.is_empty() {
        format!("hoare: the remote {side} at {peer} poisoned the channel").into()
    } else {
        format!("hoare: the remote {side} at {peer} poisoned the channel: {why}").into()
    }
}

fn u32_at(p: &[u8], at: usize) -> io::Result<u32> {
    p.get(at..at + 4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .ok_or_else(|| protocol("a frame too short for its kind"))
}

type Factory = Arc<dyn Fn(&Arc<Conn>, u32, u32) -> io::Result<(u32, u32)> + Send + Sync>;

struct Published {
    kind: u8,
    factory: Factory,
}

struct NodeInner {
    addr: SocketAddr,
    secret: Vec<u8>,
    max_message: usize,
    /// The most bytes of unfinished values one connection may hold.
    max_held: usize,
    published: Mutex<HashMap<String, Published>>,
    conns: Mutex<HashMap<SocketAddr, Arc<Conn>>>,
    /// Why the last connection with each peer ended.
    lost: Mutex<HashMap<SocketAddr, String>>,
    /// Every connection (accepted or opened), to close them with the node;
    /// `None` once the node is closing.
    all: Mutex<Option<Vec<Weak<Conn>>>>,
    /// How long dropping the node waits for its connections' owed frames.
    close_timeout: Duration,
    stop: Sender<(), Any>,
    /// The channel pairs of this node's name registrations, kept open while
    /// the names should stay registered (see `names`).
    registrations: Mutex<Vec<super::names::Registration>>,
    /// TLS, if the node requires it.
    #[cfg(feature = "tls")]
    tls: Option<Tls>,
}

impl NodeInner {
    /// Adds a connection to those the node closes when it is dropped, or
    /// closes it if that has begun (a connection accepted meanwhile).
    fn track(&self, c: &Arc<Conn>) {
        match &mut *lock(&self.all) {
            Some(all) => all.push(Arc::downgrade(c)),
            None => c.close("the node was closed"),
        }
    }

    /// Secures (TLS, if the node requires it) and authenticates a connection
    /// this node opened to `addr`, named `host` in the URL (a DNS name or an IP
    /// address: what the peer's certificate must be valid for).
    fn secure_client(
        &self,
        mut s: TcpStream,
        addr: SocketAddr,
        host: &str,
    ) -> io::Result<Transport> {
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.tls {
            let t = TlsStream::client(s, addr, host, tls, |rw| {
                auth::client(&mut &mut *rw, &self.secret)
            })?;
            return Ok(Transport::Tls(Box::new(t)));
        }
        let _ = (addr, host);
        auth::client(&mut s, &self.secret)?;
        s.set_read_timeout(None)?;
        Ok(Transport::Plain(s))
    }

    /// Secures and authenticates a connection this node accepted.
    fn secure_server(&self, mut s: TcpStream) -> io::Result<Transport> {
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.tls {
            let t = TlsStream::server(s, tls, |rw| auth::server(&mut &mut *rw, &self.secret))?;
            return Ok(Transport::Tls(Box::new(t)));
        }
        auth::server(&mut s, &self.secret)?;
        s.set_read_timeout(None)?;
        Ok(Transport::Plain(s))
    }
}

/// The default most bytes of unfinished values one connection may hold: 64 MiB.
pub const DEFAULT_MAX_CONNECTION_MEMORY: usize = 64 << 20;

/// The settings of a [`Node`] (see [`Node::builder`]).
#[derive(Clone, Debug)]
pub struct NodeBuilder {
    max_message: usize,
    max_connection_memory: usize,
    close_timeout: Duration,
    #[cfg(feature = "tls")]
    tls: Option<Tls>,
}

impl NodeBuilder {
    /// The largest encoded value the node accepts (default
    /// [`DEFAULT_MAX_MESSAGE`]): a peer that sends a larger one is
    /// disconnected, and a local value larger than it is handed back by its
    /// `send`, which poisons its channel.
    ///
    /// ```
    /// let b = hoare::net::Node::builder().max_message(4096);
    /// # let _ = b;
    /// ```
    pub fn max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }

    /// The most bytes one connection may hold in values from its peer that
    /// are not delivered yet, over all its channels: fragments being
    /// reassembled, and whole values waiting for their readers (default
    /// [`DEFAULT_MAX_CONNECTION_MEMORY`], and never below the message limit).
    /// A peer that sends more is cut off, and the channels of its connection
    /// are poisoned with that reason. Each channel holds at most one value
    /// (a writer waits for its acknowledgement), so the limit is reached by
    /// a peer writing large values on many channels at once, or cheating.
    ///
    /// ```
    /// let b = hoare::net::Node::builder().max_connection_memory(16 << 20);
    /// # let _ = b;
    /// ```
    pub fn max_connection_memory(mut self, bytes: usize) -> Self {
        self.max_connection_memory = bytes;
        self
    }

    /// How long dropping the node may wait for its connections to write what
    /// they owe their peers before it closes them (default
    /// [`DEFAULT_CLOSE_TIMEOUT`], 5 s): the acknowledgements of values its
    /// readers took, and the answers to values its writers have in flight.
    /// A live peer answers within a round trip (plus the time a reader's
    /// `recv_with` closure takes); the bound is for a peer that stopped
    /// reading or answering, whose connection is then cut as before (see
    /// [`Node`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = hoare::net::Node::builder().close_timeout(Duration::from_secs(1));
    /// # let _ = b;
    /// ```
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// Requires TLS (feature `tls`) on every connection of the node, for
    /// channels that leave the machine: connections it accepts run a TLS
    /// session with `server` (its certificate, and
    /// [client certificates](rustls::server::WebPkiClientVerifier) if it asks
    /// for them), connections it opens one with `client`, which must accept
    /// the other node's certificate for its IP address (the address of the
    /// URL). The shared-secret challenge–response still runs, inside the
    /// session. A peer that does not speak TLS is disconnected.
    ///
    /// ```
    /// use hoare::net::rustls::{ClientConfig, RootCertStore, ServerConfig};
    /// use hoare::net::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    /// use std::sync::Arc;
    /// // A self-signed certificate for 127.0.0.1 (a real node loads its own).
    /// let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    /// let cert = CertificateDer::from(ck.cert.der().to_vec());
    /// let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    /// let server = ServerConfig::builder()
    ///     .with_no_client_auth()
    ///     .with_single_cert(vec![cert.clone()], key)
    ///     .unwrap();
    /// let mut roots = RootCertStore::empty();
    /// roots.add(cert).unwrap();
    /// let client = ClientConfig::builder()
    ///     .with_root_certificates(roots)
    ///     .with_no_client_auth();
    /// let (server, client) = (Arc::new(server), Arc::new(client));
    /// hoare::run(move || {
    ///     let tls = |b: hoare::net::NodeBuilder| b.tls(server.clone(), client.clone());
    ///     let a = tls(hoare::net::Node::builder()).bind("127.0.0.1:0", b"s").unwrap();
    ///     let rx = a.publish::<String>("in").unwrap();
    ///     let b = tls(hoare::net::Node::builder()).bind("127.0.0.1:0", b"s").unwrap();
    ///     let tx = b.connect::<String>(&format!("{}/in", a.local_addr())).unwrap();
    ///     let h = hoare::spawn(move || tx.send("secret stuff".to_owned()).unwrap());
    ///     assert_eq!(rx.recv().unwrap(), "secret stuff");
    ///     h.join().unwrap();
    /// });
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(
        mut self,
        server: Arc<rustls::ServerConfig>,
        client: Arc<rustls::ClientConfig>,
    ) -> Self {
        self.tls = Some(Tls { server, client });
        self
    }

    /// Binds the node: see [`Node::bind`].
    ///
    /// ```
    /// hoare::run(|| {
    ///     let node = hoare::net::Node::builder().bind("127.0.0.1:0", b"s").unwrap();
    ///     # drop(node);
    /// });
    /// ```
    pub fn bind<A: ToSocketAddrs>(self, addr: A, secret: impl AsRef<[u8]>) -> io::Result<Node> {
        let l = super::TcpListener::bind(addr)?;
        let (stop, stop_rx) = Channel::builder().bounded(1).any2one::<()>();
        let inner = Arc::new(NodeInner {
            addr: l.local_addr()?,
            secret: secret.as_ref().to_vec(),
            max_message: self.max_message,
            max_held: self.max_connection_memory.max(self.max_message),
            published: Mutex::new(HashMap::new()),
            conns: Mutex::new(HashMap::new()),
            lost: Mutex::new(HashMap::new()),
            all: Mutex::new(Some(Vec::new())),
            close_timeout: self.close_timeout,
            stop,
            registrations: Mutex::new(Vec::new()),
            #[cfg(feature = "tls")]
            tls: self.tls,
        });
        let weak = Arc::downgrade(&inner);
        // Make sure the listener is registered from this process.
        l.readable()?;
        drop(hoare_runtime::spawn(move || accept_loop(l, weak, stop_rx)));
        Ok(Node { inner })
    }
}

/// What an accepter (see [`Node::accept`]) hands over for each client: the
/// reading end of the client's requests and the writing end of its replies.
pub type Accepted<Req, Rep> = (Receiver<Req, One>, Sender<Rep, Any>);

/// A program's presence on the network: it publishes channels by name and
/// connects to other nodes' channels.
///
/// Peers authenticate with a shared secret before any channel traffic (see
/// [`Node::bind`]). Dropping the node stops accepting connections and closes
/// every connection it has, which poisons their channels, gracefully: no value
/// that a reader here took is reported failed at its remote writer, and a value
/// a writer here has in flight is withdrawn (its `send` succeeds if the remote
/// reader took it, and hands it back otherwise). The drop waits for the frames
/// that says, at most [`NodeBuilder::close_timeout`] (default 5 s; a live peer
/// answers within a round trip, or a reader's `recv_with` closure): past it, a
/// peer that stopped reading or answering is cut off as a lost connection.
/// The wait parks the dropping process (not its worker) and blocks a plain
/// thread; in a process the runtime cancels at shutdown, or after the runtime
/// ended, nothing is left to wait for. (Dropping the node inside a `recv_with`
/// closure on one of its own channels waits the whole bound, since that value's
/// acknowledgement waits for the closure, and then loses the acknowledgement.)
///
/// ```
/// use hoare::net::Node;
/// hoare::run(|| {
///     let server = Node::bind("127.0.0.1:0", b"secret").unwrap();
///     let results = server.publish::<String>("results").unwrap();
///     let client = Node::bind("127.0.0.1:0", b"secret").unwrap();
///     let url = format!("{}/results", server.local_addr());
///     let tx = client.connect::<String>(&url).unwrap();
///     let h = hoare_runtime::spawn(move || tx.send("hello".to_owned()).unwrap());
///     assert_eq!(results.recv().unwrap(), "hello");
///     h.join().unwrap(); // the send returned once `recv` had the value
/// });
/// ```
pub struct Node {
    inner: Arc<NodeInner>,
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("addr", &self.inner.addr)
            .finish_non_exhaustive()
    }
}

impl Node {
    /// Listens on `addr` (port 0: one the OS chooses; use a loopback address
    /// unless other machines must connect) for nodes that know `secret`, and
    /// serves them from processes of the caller's runtime.
    ///
    /// Every peer must prove it knows `secret` (HMAC-SHA-256 challenge–response)
    /// before it may open a channel; a peer that does not is disconnected.
    pub fn bind<A: ToSocketAddrs>(addr: A, secret: impl AsRef<[u8]>) -> io::Result<Node> {
        Self::bind_with(addr, secret, DEFAULT_MAX_MESSAGE)
    }

    /// [`bind`](Self::bind) with the largest encoded value this node accepts
    /// (a peer that sends a larger one is disconnected, and a local value
    /// larger than it is handed back by its `send`, which poisons its
    /// channel).
    pub fn bind_with<A: ToSocketAddrs>(
        addr: A,
        secret: impl AsRef<[u8]>,
        max_message: usize,
    ) -> io::Result<Node> {
        Self::builder().max_message(max_message).bind(addr, secret)
    }

    /// A node with settings other than the defaults.
    ///
    /// ```
    /// use hoare::net::Node;
    /// hoare::run(|| {
    ///     let node = Node::builder()
    ///         .max_message(1 << 20)
    ///         .max_connection_memory(8 << 20)
    ///         .bind("127.0.0.1:0", b"secret")
    ///         .unwrap();
    ///     assert!(node.local_addr().ip().is_loopback());
    /// });
    /// ```
    pub fn builder() -> NodeBuilder {
        NodeBuilder {
            max_message: DEFAULT_MAX_MESSAGE,
            max_connection_memory: DEFAULT_MAX_CONNECTION_MEMORY,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// Keeps a name registration's channel pair open for the node's lifetime.
    pub(super) fn keep_registration(&self, r: super::names::Registration) {
        lock(&self.inner.registrations).push(r);
    }

    /// The address other nodes connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// Why the connection with the node at `peer` ended, if one did: the
    /// channels it carried were poisoned then, with this as their
    /// `poison_reason()`.
    /// `peer` is the address connected to, or for a node that connected here,
    /// its connection's address.
    pub fn connection_error(&self, peer: SocketAddr) -> Option<io::Error> {
        lock(&self.inner.lost).get(&peer).map(|why| {
            io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!("hoare: connection to {peer} lost: {why}"),
            )
        })
    }

    /// The peers whose connections ended, with why (see
    /// [`connection_error`](Self::connection_error)).
    pub fn lost_connections(&self) -> Vec<(SocketAddr, String)> {
        lock(&self.inner.lost)
            .iter()
            .map(|(a, w)| (*a, w.clone()))
            .collect()
    }

    /// Publishes a channel under `name` and returns its reading end: values that
    /// writers in other programs send to `"HOST:PORT/name"` arrive here. Many
    /// remote writers may connect to one name (an any2one channel). Poison from
    /// any writer poisons it, as does a lost connection; poisoning this end
    /// poisons the writers' ends.
    pub fn publish<T>(&self, name: &str) -> io::Result<Receiver<T, One>>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
    {
        let (tx, rx) = Channel::builder().any2one::<T>();
        self.publish_factory(name, Open::Chan, move |conn, peer, _| {
            conn.add_reader(peer, tx.clone()).map(|id| (id, 0))
        })?;
        Ok(rx)
    }

    /// Publishes an *accepter* under `name` (seed 002 §5.1.3): each client that
    /// connects with [`connect_pair`](Self::connect_pair) gets a fresh pair of
    /// channels, which arrives here as the reading end of its requests and the
    /// writing end of its replies.
    ///
    /// ```
    /// use hoare::net::Node;
    /// hoare::run(|| {
    ///     let server = Node::bind("127.0.0.1:0", b"s").unwrap();
    ///     let clients = server.accept::<u32, u32>("double").unwrap();
    ///     let url = format!("{}/double", server.local_addr());
    ///     let h = hoare_runtime::spawn(move || {
    ///         let (requests, replies) = clients.recv().unwrap();
    ///         for x in requests.iter() {
    ///             replies.send(2 * x).unwrap();
    ///         }
    ///     });
    ///     let client = Node::bind("127.0.0.1:0", b"s").unwrap();
    ///     let (req, rep) = client.connect_pair::<u32, u32>(&url).unwrap();
    ///     req.send(21).unwrap();
    ///     assert_eq!(rep.recv().unwrap(), 42);
    ///     drop(req); // ends the server's loop
    ///     h.join().unwrap();
    /// });
    /// ```
    pub fn accept<Req, Rep>(&self, name: &str) -> io::Result<Receiver<Accepted<Req, Rep>, One>>
    where
        Req: Serialize + DeserializeOwned + Send + 'static,
        Rep: Serialize + DeserializeOwned + Send + 'static,
    {
        let (acc_tx, acc_rx) = Channel::builder()
            .unbounded()
            .any2one::<(Receiver<Req, One>, Sender<Rep, Any>)>();
        let max = self.inner.max_message;
        self.publish_factory(name, Open::Pair, move |conn, peer, reverse| {
            let (req_tx, req_rx) = Channel::builder().one2one::<Req>();
            let (rep_tx, rep_rx) = Channel::builder().any2any::<Rep>();
            let reader = conn.add_reader(peer, req_tx)?;
            let (writer, start) = conn.add_writer::<Rep>(rep_rx, max)?;
            start.start(reverse);
            if acc_tx.send((req_rx, rep_tx)).is_err() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "the accepter was closed",
                ));
            }
            Ok((reader, writer))
        })?;
        Ok(acc_rx)
    }

    fn publish_factory(
        &self,
        name: &str,
        kind: Open,
        f: impl Fn(&Arc<Conn>, u32, u32) -> io::Result<(u32, u32)> + Send + Sync + 'static,
    ) -> io::Result<()> {
        check_name(name)?;
        let mut p = lock(&self.inner.published);
        if p.contains_key(name) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("hoare: {name:?} is already published on this node"),
            ));
        }
        p.insert(
            name.to_owned(),
            Published {
                kind: kind as u8,
                factory: Arc::new(f),
            },
        );
        Ok(())
    }

    /// The connection to the node at `addr`, made (and authenticated) on first
    /// use.
    fn conn_to(&self, addr: SocketAddr, host: &str) -> io::Result<Arc<Conn>> {
        if let Some(c) = lock(&self.inner.conns).get(&addr) {
            return Ok(c.clone());
        }
        let s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
        let s = self.inner.secure_client(s, addr, host)?;
        let mut conns = lock(&self.inner.conns);
        if let Some(c) = conns.get(&addr) {
            // Another process connected meanwhile: use its connection.
            return Ok(c.clone());
        }
        let c = Conn::new(s, &self.inner, addr);
        conns.insert(addr, c.clone());
        drop(conns);
        self.inner.track(&c);
        let (c2, max) = (c.clone(), self.inner.max_message);
        drop(hoare_runtime::spawn(move || c2.read_loop(max)));
        Ok(c)
    }

    /// A writing end to the channel published as `url` (`"HOST:PORT/name"`): a
    /// `send` returns once the remote reader has taken the value (after its
    /// `recv_with` closure, if it used one). Clone it for more writers in this
    /// program: they share one network channel.
    ///
    /// The connection to that node is shared by every channel between the two
    /// nodes. If it is lost, the end is poisoned (its `poison_reason()` says
    /// so); a `send` whose value was not acknowledged fails and hands it back.
    /// A value that encodes to more than the node's message limit is handed
    /// back before anything is written, and poisons the channel (the reason
    /// names the limit).
    pub fn connect<T>(&self, url: &str) -> io::Result<Sender<T, Any>>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
    {
        self.connect_with(url, Channel::builder())
    }

    /// [`connect`](Self::connect) with a buffer of `n` values on the writing
    /// side: a `send` returns once its value is in the buffer, and the values
    /// go to the remote reader one by one, each acknowledged. As with a local
    /// buffered channel, a `send` that returned no longer owns its value: the
    /// values still buffered (or in flight) when the connection is lost or the
    /// remote reader poisons are dropped with the channel's poison, whose
    /// reason says why.
    pub fn connect_buffered<T>(&self, url: &str, n: usize) -> io::Result<Sender<T, Any>>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
    {
        self.connect_with(url, Channel::builder().bounded(n))
    }

    fn connect_with<T>(
        &self,
        url: &str,
        chan: hoare_core::chan::ChannelBuilder,
    ) -> io::Result<Sender<T, Any>>
    where
        T: Serialize + DeserializeOwned + Send + 'static,
    {
        let (addr, host, name) = parse_url(url)?;
        let conn = self.conn_to(addr, host)?;
        let (tx, rx) = chan.any2any::<T>();
        let (id, start) = conn.add_writer::<T>(rx, self.inner.max_message)?;
        let mut payload = id.to_le_bytes().to_vec();
        payload.push(Open::Chan as u8);
        payload.extend_from_slice(name.as_bytes());
        conn.send(&[Frame {
            chan: 0,
            kind: Kind::Open,
            flags: 0,
            payload,
        }])?;
        match start.opened() {
            Ok((peer, _)) => {
                start.start(peer);
                Ok(tx)
            }
            Err(e) => {
                lock(&conn.endpoints).remove(&id);
                Err(e)
            }
        }
    }

    /// Connects to the accepter published as `url` (see [`accept`](Self::accept)):
    /// a fresh pair of channels, the writing end of requests and the reading end
    /// of replies.
    pub fn connect_pair<Req, Rep>(
        &self,
        url: &str,
    ) -> io::Result<(Sender<Req, Any>, Receiver<Rep, One>)>
    where
        Req: Serialize + DeserializeOwned + Send + 'static,
        Rep: Serialize + DeserializeOwned + Send + 'static,
    {
        let (addr, host, name) = parse_url(url)?;
        let conn = self.conn_to(addr, host)?;
        let (req_tx, req_rx) = Channel::builder().any2any::<Req>();
        let (rep_tx, rep_rx) = Channel::builder().one2one::<Rep>();
        let (wid, start) = conn.add_writer::<Req>(req_rx, self.inner.max_message)?;
        // Its peer (the server's writer) is learnt from `OPENED`.
        let rid = conn.add_reader(0, rep_tx)?;
        let mut payload = wid.to_le_bytes().to_vec();
        payload.push(Open::Pair as u8);
        payload.extend_from_slice(&rid.to_le_bytes());
        payload.extend_from_slice(name.as_bytes());
        conn.send(&[Frame {
            chan: 0,
            kind: Kind::Open,
            flags: 0,
            payload,
        }])?;
        match start.opened() {
            Ok((reader, writer)) => {
                if let Some(Endpoint::Reader { peer, .. }) = lock(&conn.endpoints).get_mut(&rid) {
                    *peer = writer;
                }
                start.start(reader);
                Ok((req_tx, rep_rx))
            }
            Err(e) => {
                let mut eps = lock(&conn.endpoints);
                eps.remove(&wid);
                if let Some(Endpoint::Reader { inbox, .. }) = eps.remove(&rid) {
                    let _ = inbox.try_send(In::Poison(e.to_string().into()));
                }
                Err(e)
            }
        }
    }
}

impl Drop for Node {
    /// Stops accepting connections and closes every connection, gracefully:
    /// each first writes what it owes its peer (see [`Node`]), for at most
    /// the node's close timeout.
    fn drop(&mut self) {
        let _ = self.inner.stop.try_send(());
        let all = lock(&self.inner.all).take().unwrap_or_default();
        let conns: Vec<Arc<Conn>> = all.into_iter().filter_map(|c| c.upgrade()).collect();
        let to_peer = format!(
            "hoare: connection lost: the node at {} was closed",
            self.inner.addr
        );
        // All connections flush at once; one deadline for them all.
        for c in &conns {
            c.start_shut("the node was closed", &to_peer);
        }
        let deadline = Instant::now().checked_add(self.inner.close_timeout);
        for c in &conns {
            c.finish_shut(deadline);
        }
        lock(&self.inner.published).clear();
        lock(&self.inner.registrations).clear();
    }
}

/// Splits `"HOST:PORT/name"` into the address HOST:PORT resolves to, HOST (without
/// the brackets of an IPv6 address) and the name.
fn parse_url(url: &str) -> io::Result<(SocketAddr, &str, String)> {
    let (host, name) = url.rsplit_once('/').ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("hoare: {url:?} is not HOST:PORT/name"),
        )
    })?;
    let addr = host.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("hoare: {host:?} resolves to no address"),
        )
    })?;
    check_name(name)?;
    let bare = host.rsplit_once(':').map_or(host, |(h, _)| h);
    let bare = bare.trim_start_matches('[').trim_end_matches(']');
    Ok((addr, bare, name.to_owned()))
}

fn check_name(name: &str) -> io::Result<()> {
    if name.len() > MAX_NAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("hoare: a channel name over {MAX_NAME} bytes"),
        ));
    }
    Ok(())
}

/// Accepts connections until the node is dropped; each is authenticated and
/// served by its own processes.
fn accept_loop(l: super::TcpListener, node: Weak<NodeInner>, stop: Receiver<(), One>) {
    loop {
        let stopped = hoare_core::alt! {
            recv(stop) => true,
            recv(l.readable().expect("registered in bind")) => false,
        };
        if stopped {
            return;
        }
        let (s, peer) = match l.try_accept() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(_) => continue,
        };
        let Some(n) = node.upgrade() else { return };
        drop(hoare_runtime::spawn(move || {
            if s.set_nodelay(true).is_err() || s.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).is_err()
            {
                return; // dropped: closed
            }
            let Ok(s) = n.secure_server(s) else {
                return; // dropped: closed
            };
            let c = Conn::new(s, &n, peer);
            n.track(&c);
            let max = n.max_message;
            drop(n);
            c.read_loop(max);
        }));
    }
}
