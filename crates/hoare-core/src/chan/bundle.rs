//! A client/server bundle of ends for request–reply.
//!
//! Each call carries a fresh one2one reply channel (the C++CSP2 idiom of sending a
//! reply end with the request), so a server that dies or poisons without replying
//! makes the call fail instead of hang.

use super::ends::{Any, Receiver, Sender};
use super::error::{RecvError, SendError};
use super::factory::{Buffer, Channel};
use std::fmt;

/// A request with the end that replies to it.
pub struct Request<Req, Resp> {
    /// The request.
    pub req: Req,
    reply: Sender<Resp>,
}

impl<Req, Resp> fmt::Debug for Request<Req, Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Request(..)")
    }
}

impl<Req, Resp> Request<Req, Resp> {
    /// Sends the reply (waits until the client takes it).
    pub fn reply(self, resp: Resp) -> Result<(), SendError<Resp>> {
        self.reply.send(resp)
    }
    /// The request and its reply end, for a server that replies later or hands the
    /// job on.
    pub fn into_parts(self) -> (Req, Sender<Resp>) {
        (self.req, self.reply)
    }
}

/// How a [`ClientEnd::call`] failed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CallError<Req> {
    /// The request channel is poisoned; the request was not sent.
    Poisoned(Req),
    /// The server took the request but did not reply (it dropped the request or
    /// poisoned the reply channel).
    NoReply,
}

impl<Req> fmt::Debug for CallError<Req> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Poisoned(_) => f.write_str("CallError::Poisoned(..)"),
            Self::NoReply => f.write_str("CallError::NoReply"),
        }
    }
}

impl<Req> fmt::Display for CallError<Req> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Poisoned(_) => f.write_str("calling a server over a poisoned channel"),
            Self::NoReply => f.write_str("the server did not reply"),
        }
    }
}

impl<Req> std::error::Error for CallError<Req> {}

/// The client side of a request–reply bundle. Cloneable: any number of clients.
pub struct ClientEnd<Req, Resp> {
    requests: Sender<Request<Req, Resp>, Any>,
}

/// The server side of a request–reply bundle. Cloneable: a pool of servers may
/// share it.
pub struct ServerEnd<Req, Resp> {
    requests: Receiver<Request<Req, Resp>, Any>,
}

impl<Req, Resp> Clone for ClientEnd<Req, Resp> {
    fn clone(&self) -> Self {
        Self {
            requests: self.requests.clone(),
        }
    }
}

impl<Req, Resp> Clone for ServerEnd<Req, Resp> {
    fn clone(&self) -> Self {
        Self {
            requests: self.requests.clone(),
        }
    }
}

impl<Req, Resp> fmt::Debug for ClientEnd<Req, Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientEnd(..)")
    }
}

impl<Req, Resp> fmt::Debug for ServerEnd<Req, Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerEnd(..)")
    }
}

/// A client/server pair over a rendezvous request channel.
///
/// ```
/// let (client, server) = hoare_core::chan::request_reply::<u32, u32>();
/// let s = std::thread::spawn(move || server.serve(|x| x * 2));
/// assert_eq!(client.call(21), Ok(42));
/// drop(client); // the last client gone: the server's loop ends
/// s.join().unwrap();
/// ```
pub fn request_reply<Req, Resp>() -> (ClientEnd<Req, Resp>, ServerEnd<Req, Resp>) {
    request_reply_with(Buffer::Rendezvous)
}

/// A client/server pair whose request channel buffers as `buffer` says.
pub fn request_reply_with<Req, Resp>(
    buffer: Buffer,
) -> (ClientEnd<Req, Resp>, ServerEnd<Req, Resp>) {
    let (tx, rx) = Channel::builder().buffer(buffer).any2any();
    (ClientEnd { requests: tx }, ServerEnd { requests: rx })
}

impl<Req, Resp> ClientEnd<Req, Resp> {
    /// Sends `req` and waits for the reply.
    pub fn call(&self, req: Req) -> Result<Resp, CallError<Req>> {
        let (reply, replies) = Channel::builder().one2one();
        if let Err(SendError(r)) = self.requests.send(Request { req, reply }) {
            return Err(CallError::Poisoned(r.req));
        }
        replies.recv().map_err(|_| CallError::NoReply)
    }
    /// Poisons the request channel (servers see it once pending requests are
    /// served, if buffered).
    pub fn poison(&self) {
        self.requests.poison();
    }
}

impl<Req, Resp> ServerEnd<Req, Resp> {
    /// Receives the next request.
    pub fn recv(&self) -> Result<Request<Req, Resp>, RecvError> {
        self.requests.recv()
    }
    /// Answers requests with `f` until the request channel is poisoned (every
    /// client gone, or poisoned); returns how many were answered. A client that
    /// left without taking its reply is skipped.
    pub fn serve(&self, mut f: impl FnMut(Req) -> Resp) -> u64 {
        let mut n = 0;
        while let Ok(r) = self.recv() {
            let resp = f(r.req);
            if r.reply.send(resp).is_ok() {
                n += 1;
            }
        }
        n
    }
    /// Poisons the request channel from the server's side.
    pub fn poison(&self) {
        self.requests.poison();
    }
}
