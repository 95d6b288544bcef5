//! TCP: [`TcpListener`] and [`TcpStream`].

use super::sys::{timed_out, Dir, Io};
use hoare_core::chan::{Any, Receiver};
use hoare_core::readiness::Interest;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::time::{Duration, Instant};

/// A TCP socket server, listening for connections.
///
/// [`accept`](Self::accept) parks the calling process (its worker runs other
/// processes) until a connection comes; on a plain OS thread it blocks the
/// thread. [`readable`](Self::readable) is an alt guard that fires when a
/// connection is pending.
///
/// ```
/// use std::io::{Read, Write};
/// hoare::run(|| {
///     let listener = hoare::net::TcpListener::bind("127.0.0.1:0").unwrap();
///     let addr = listener.local_addr().unwrap();
///     let server = hoare::spawn(move || {
///         let (mut s, _) = listener.accept().unwrap();
///         let mut buf = [0; 5];
///         s.read_exact(&mut buf).unwrap();
///         s.write_all(&buf).unwrap();
///     });
///     let mut c = hoare::net::TcpStream::connect(addr).unwrap();
///     c.write_all(b"hello").unwrap();
///     let mut back = [0; 5];
///     c.read_exact(&mut back).unwrap();
///     assert_eq!(&back, b"hello");
///     server.join().unwrap();
/// });
/// ```
#[derive(Debug)]
pub struct TcpListener {
    io: Io<mio::net::TcpListener>,
}

impl TcpListener {
    /// Binds a listener to the first of `addr`'s addresses that works (port 0:
    /// one the OS chooses; see [`local_addr`](Self::local_addr)).
    ///
    /// Resolving a host *name* (not an IP address) asks the system resolver,
    /// which blocks the worker while it runs.
    ///
    /// The backlog of pending connections is the system's largest
    /// (`net.core.somaxconn`, as Go's), not `std`'s 128: a server whose clients
    /// connect by the thousand at once would otherwise see their connections
    /// wait a second for a SYN retransmit.
    pub fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        let l = std::net::TcpListener::bind(addr)?;
        // SAFETY: `listen` on a descriptor we own; a second `listen` on a
        // listening socket only changes its backlog (-1: the system's maximum).
        if unsafe { libc::listen(l.as_raw_fd(), -1) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Self::from_std(l)
    }

    /// Wraps a standard listener (made non-blocking).
    pub fn from_std(l: std::net::TcpListener) -> io::Result<TcpListener> {
        l.set_nonblocking(true)?;
        Ok(TcpListener {
            io: Io::new(mio::net::TcpListener::from_std(l)),
        })
    }

    /// Waits for a connection and returns it with its peer's address.
    pub fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        self.io
            .io(Interest::Read, Dir::Read, "accept", |l| l.accept())
            .map(|(s, a)| (TcpStream::from_mio(s), a))
    }

    /// [`accept`](Self::accept), giving up with `TimedOut` after `timeout`.
    pub fn accept_timeout(&self, timeout: Duration) -> io::Result<(TcpStream, SocketAddr)> {
        let deadline = hoare_core::timer::add_clamped(Instant::now(), timeout);
        self.io
            .io_until(Interest::Read, Some(deadline), "accept", |l| l.accept())
            .map(|(s, a)| (TcpStream::from_mio(s), a))
    }

    /// Accepts a pending connection without waiting: `WouldBlock` if none is.
    pub fn try_accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        self.io
            .try_io(Interest::Read, |l| l.accept())
            .map(|(s, a)| (TcpStream::from_mio(s), a))
    }

    /// An alt guard that is ready while a connection is pending (it may fire
    /// spuriously: accept with [`try_accept`](Self::try_accept) after it fires).
    /// Must first be called from a process (it registers the listener with the
    /// runtime's poller).
    ///
    /// ```
    /// hoare::run(|| {
    ///     let l = hoare::net::TcpListener::bind("127.0.0.1:0").unwrap();
    ///     let addr = l.local_addr().unwrap();
    ///     let (stop_tx, stop) = hoare::one2one::<()>();
    ///     let _c = hoare::net::TcpStream::connect(addr).unwrap();
    ///     let accepted = hoare::alt! {
    ///         recv(l.readable().unwrap()) => l.try_accept().is_ok(),
    ///         recv(stop) => false,
    ///     };
    ///     assert!(accepted);
    ///     drop(stop_tx);
    /// });
    /// ```
    pub fn readable(&self) -> io::Result<&Receiver<(), Any>> {
        self.io.readable()
    }

    /// The address this listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.sock.local_addr()
    }

    /// Gives up on [`accept`](Self::accept) after `timeout` (`None`: never, the
    /// default). A zero timeout is refused.
    pub fn set_accept_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.io.set_timeout(Dir::Read, timeout)
    }

    /// An iterator over incoming connections (each [`accept`](Self::accept)).
    pub fn incoming(&self) -> impl Iterator<Item = io::Result<TcpStream>> + '_ {
        std::iter::repeat_with(move || self.accept().map(|(s, _)| s))
    }
}

impl AsRawFd for TcpListener {
    fn as_raw_fd(&self) -> RawFd {
        self.io.sock.as_raw_fd()
    }
}

/// A TCP connection.
///
/// Reads and writes park the calling process until the socket is ready (on a
/// plain OS thread they block the thread), with optional timeouts; it
/// implements [`Read`] and [`Write`] (also through `&TcpStream`, so one process
/// may read while another writes), so `read_exact`, `write_all` and
/// `std::io::copy` work as usual. See [`TcpListener`] for an example.
#[derive(Debug)]
pub struct TcpStream {
    io: Io<mio::net::TcpStream>,
}

impl TcpStream {
    fn from_mio(s: mio::net::TcpStream) -> TcpStream {
        TcpStream { io: Io::new(s) }
    }

    /// Wraps a standard stream (made non-blocking).
    pub fn from_std(s: std::net::TcpStream) -> io::Result<TcpStream> {
        s.set_nonblocking(true)?;
        Ok(Self::from_mio(mio::net::TcpStream::from_std(s)))
    }

    /// Connects to the first of `addr`'s addresses that accepts (see
    /// [`TcpListener::bind`] on resolving names).
    pub fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        let mut last = None;
        for a in addr.to_socket_addrs()? {
            match Self::connect_one(a, None) {
                Ok(s) => return Ok(s),
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

    /// Connects to `addr`, giving up with `TimedOut` after `timeout`.
    pub fn connect_timeout(addr: &SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
        Self::connect_one(
            *addr,
            Some(hoare_core::timer::add_clamped(Instant::now(), timeout)),
        )
    }

    fn connect_one(addr: SocketAddr, deadline: Option<Instant>) -> io::Result<TcpStream> {
        if !hoare_core::park::in_process() {
            let s = match deadline {
                None => std::net::TcpStream::connect(addr)?,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(timed_out("connect"));
                    }
                    std::net::TcpStream::connect_timeout(&addr, left)?
                }
            };
            return Self::from_std(s);
        }
        let s = Self::from_mio(mio::net::TcpStream::connect(addr)?);
        // Connected once writable with no pending error and a peer (mio's
        // recipe; `NotConnected` means still in progress).
        s.io.io_until(Interest::Write, deadline, "connect", |s| {
            if let Some(e) = s.take_error()? {
                return Err(e);
            }
            match s.peer_addr() {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                    Err(io::ErrorKind::WouldBlock.into())
                }
                Err(e) => Err(e),
            }
        })?;
        Ok(s)
    }

    /// Reads what is there (at least one byte, or 0 at end of stream), waiting
    /// until something is.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .io(Interest::Read, Dir::Read, "read", |mut s| s.read(buf))
    }

    /// Like [`read`](Self::read) but leaves the data in the socket.
    pub fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .io(Interest::Read, Dir::Read, "peek", |s| s.peek(buf))
    }

    /// Writes some of `buf` (at least one byte), waiting for room.
    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .io(Interest::Write, Dir::Write, "write", |mut s| s.write(buf))
    }

    /// Reads without waiting: `WouldBlock` if nothing is there.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_io(Interest::Read, |mut s| s.read(buf))
    }

    /// Writes without waiting: `WouldBlock` if there is no room.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_io(Interest::Write, |mut s| s.write(buf))
    }

    /// An alt guard that is ready while data (or the end of the stream) can be
    /// read. It may fire spuriously: read with [`try_read`](Self::try_read)
    /// after it fires. Must first be called from a process.
    ///
    /// ```
    /// use std::io::Write;
    /// hoare::run(|| {
    ///     let l = hoare::net::TcpListener::bind("127.0.0.1:0").unwrap();
    ///     let mut c = hoare::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
    ///     let (s, _) = l.accept().unwrap();
    ///     let (tx, rx) = hoare::one2one::<u32>();
    ///     // (The writer hands its end back, so the channel is not poisoned.)
    ///     let h = hoare::spawn(move || { tx.send(7).unwrap(); tx });
    ///     // The channel's value first, then the socket's bytes.
    ///     let mut got = Vec::new();
    ///     let mut buf = [0; 8];
    ///     while got.len() < 2 {
    ///         hoare::alt! {
    ///             recv(rx) -> v => { got.push(format!("chan {}", v.unwrap())); c.write_all(b"hi").unwrap(); }
    ///             recv(s.readable().unwrap()) => if let Ok(n) = s.try_read(&mut buf) {
    ///                 got.push(format!("sock {}", String::from_utf8_lossy(&buf[..n])));
    ///             },
    ///         }
    ///     }
    ///     assert_eq!(got, ["chan 7", "sock hi"]);
    ///     h.join().unwrap();
    /// });
    /// ```
    pub fn readable(&self) -> io::Result<&Receiver<(), Any>> {
        self.io.readable()
    }

    /// Shuts down the reading half, the writing half, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.sock.shutdown(how)
    }

    /// Gives up on reads after `timeout` with `TimedOut` (`None`: never, the
    /// default). A zero timeout is refused.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.io.set_timeout(Dir::Read, timeout)
    }

    /// Gives up on writes after `timeout` with `TimedOut` (`None`: never).
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

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes).
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        self.io.sock.set_nodelay(on)
    }

    /// Whether `TCP_NODELAY` is set.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.sock.nodelay()
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.sock.local_addr()
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.sock.peer_addr()
    }

    /// Another handle to the same connection (a duplicated descriptor, with
    /// its own timeouts), e.g. to read in one process and write in another.
    pub fn try_clone(&self) -> io::Result<TcpStream> {
        // SAFETY: borrowed for the `dup`; `ManuallyDrop` keeps it from closing
        // the descriptor `self` owns.
        let s = std::mem::ManuallyDrop::new(unsafe {
            std::net::TcpStream::from_raw_fd(self.io.sock.as_raw_fd())
        });
        Self::from_std(s.try_clone()?)
    }
}

impl AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> RawFd {
        self.io.sock.as_raw_fd()
    }
}

impl Read for &TcpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        TcpStream::read(self, buf)
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.io.io(Interest::Read, Dir::Read, "read", |mut s| {
            s.read_vectored(&mut *bufs)
        })
    }
}

impl Read for TcpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        TcpStream::read(self, buf)
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        (&*self).read_vectored(bufs)
    }
}

impl Write for &TcpStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        TcpStream::write(self, buf)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.io.io(Interest::Write, Dir::Write, "write", |mut s| {
            s.write_vectored(bufs)
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Write for TcpStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        TcpStream::write(self, buf)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&*self).write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
