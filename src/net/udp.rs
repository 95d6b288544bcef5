//! UDP: [`UdpSocket`].

use super::sys::{Dir, Io};
use hoare_core::chan::{Any, Receiver};
use hoare_core::readiness::Interest;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// A UDP socket. Receives park the calling process until a datagram is there
/// (on a plain OS thread they block the thread), sends until there is room.
///
/// ```
/// hoare::run(|| {
///     let a = hoare::net::UdpSocket::bind("127.0.0.1:0").unwrap();
///     let b = hoare::net::UdpSocket::bind("127.0.0.1:0").unwrap();
///     let b_addr = b.local_addr().unwrap();
///     let h = hoare::spawn(move || {
///         let mut buf = [0; 16];
///         let (n, from) = b.recv_from(&mut buf).unwrap();
///         b.send_to(&buf[..n], from).unwrap();
///     });
///     a.send_to(b"ping", b_addr).unwrap();
///     let mut buf = [0; 16];
///     let (n, _) = a.recv_from(&mut buf).unwrap();
///     assert_eq!(&buf[..n], b"ping");
///     h.join().unwrap();
/// });
/// ```
#[derive(Debug)]
pub struct UdpSocket {
    io: Io<mio::net::UdpSocket>,
}

impl UdpSocket {
    /// Binds to the first of `addr`'s addresses that works (port 0: one the OS
    /// chooses).
    pub fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        Self::from_std(std::net::UdpSocket::bind(addr)?)
    }

    /// Wraps a standard socket (made non-blocking).
    pub fn from_std(s: std::net::UdpSocket) -> io::Result<UdpSocket> {
        s.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: Io::new(mio::net::UdpSocket::from_std(s)),
        })
    }

    /// Sets the peer that [`send`](Self::send) sends to and [`recv`](Self::recv)
    /// receives from.
    pub fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        let mut last = None;
        for a in addr.to_socket_addrs()? {
            match self.io.sock.connect(a) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "hoare: connect: the address resolved to nothing",
            )
        }))
    }

    /// Sends a datagram to `addr`.
    pub fn send_to(&self, buf: &[u8], addr: SocketAddr) -> io::Result<usize> {
        self.io.io(Interest::Write, Dir::Write, "send_to", |s| {
            s.send_to(buf, addr)
        })
    }

    /// Receives a datagram and its sender's address.
    pub fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .io(Interest::Read, Dir::Read, "recv_from", |s| s.recv_from(buf))
    }

    /// Sends a datagram to the connected peer.
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .io(Interest::Write, Dir::Write, "send", |s| s.send(buf))
    }

    /// Receives a datagram from the connected peer.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .io(Interest::Read, Dir::Read, "recv", |s| s.recv(buf))
    }

    /// Receives without waiting: `WouldBlock` if no datagram is there.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.try_io(Interest::Read, |s| s.recv_from(buf))
    }

    /// Sends without waiting: `WouldBlock` if there is no room.
    pub fn try_send_to(&self, buf: &[u8], addr: SocketAddr) -> io::Result<usize> {
        self.io.try_io(Interest::Write, |s| s.send_to(buf, addr))
    }

    /// An alt guard that is ready while a datagram is waiting (it may fire
    /// spuriously: receive with [`try_recv_from`](Self::try_recv_from) after it
    /// fires). Must first be called from a process.
    pub fn readable(&self) -> io::Result<&Receiver<(), Any>> {
        self.io.readable()
    }

    /// Gives up on receives after `timeout` with `TimedOut` (`None`: never).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.io.set_timeout(Dir::Read, timeout)
    }

    /// Gives up on sends after `timeout` with `TimedOut` (`None`: never).
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.io.set_timeout(Dir::Write, timeout)
    }

    /// The read timeout.
    pub fn read_timeout(&self) -> io::Result<Option<Duration>> {
        Ok(self.io.timeout(Dir::Read))
    }

    /// The write timeout.
    pub fn write_timeout(&self) -> io::Result<Option<Duration>> {
        Ok(self.io.timeout(Dir::Write))
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.sock.local_addr()
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.sock.peer_addr()
    }
}

impl AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.io.sock.as_raw_fd()
    }
}
