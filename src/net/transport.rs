//! What a node's connection runs over: a plain TCP stream, or (feature `tls`)
//! a rustls session on one.
//!
//! A connection is read by one process (its reader) while others write frames,
//! one at a time (they hold the connection's write token). A TLS session is one
//! state machine for both directions, so it sits behind a short lock that is
//! never held across a park: the reader waits for the socket without it and
//! then feeds what it read to the session; a writer encrypts under it, then
//! writes the records with only the write token held (so records go out in the
//! order they were made). Records the session makes while reading (a key
//! update's answer) go out with the next write.

use super::TcpStream;
use std::io::{self, Write};
use std::net::Shutdown;

/// A connection's byte stream.
pub(super) enum Transport {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tls::TlsStream>),
}

impl Transport {
    /// Reads some bytes (0: the peer closed the stream). One reader at a time.
    pub(super) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.read(buf),
        }
    }

    /// Writes all of `buf`. The caller holds the connection's write token.
    pub(super) fn write_all(&self, buf: &[u8]) -> io::Result<()> {
        match self {
            Transport::Plain(s) => (&*s).write_all(buf),
            #[cfg(feature = "tls")]
            Transport::Tls(t) => t.write_all(buf),
        }
    }

    /// Shuts the socket down (both ways), which ends a blocked read.
    // Without the `tls` feature the match has one arm.
    #[allow(clippy::infallible_destructuring_match)]
    pub(super) fn shutdown(&self) {
        let s = match self {
            Transport::Plain(s) => s,
            #[cfg(feature = "tls")]
            Transport::Tls(t) => &t.sock,
        };
        let _ = s.shutdown(Shutdown::Both);
    }
}

#[cfg(feature = "tls")]
pub(super) mod tls {
    use super::super::TcpStream;
    use std::io::{self, Read, Write};
    use std::net::SocketAddr;
    use std::sync::{Arc, Mutex};

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tls_error(e: impl std::fmt::Display) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, format!("hoare: TLS: {e}"))
    }

    /// The TLS settings of a node (see
    /// [`NodeBuilder::tls`](crate::net::NodeBuilder::tls)).
    #[derive(Clone, Debug)]
    pub(in crate::net) struct Tls {
        pub(in crate::net) server: Arc<rustls::ServerConfig>,
        pub(in crate::net) client: Arc<rustls::ClientConfig>,
    }

    struct State {
        conn: rustls::Connection,
        /// Records read from the socket and not yet fed to the session.
        pending: Vec<u8>,
    }

    /// A rustls session on a TCP stream, shared by a reader and (one at a
    /// time) writers.
    pub(in crate::net) struct TlsStream {
        pub(super) sock: TcpStream,
        state: Mutex<State>,
    }

    /// Runs the session's handshake to its end on `sock`.
    fn handshake(conn: &mut rustls::Connection, sock: &mut TcpStream) -> io::Result<()> {
        while conn.is_handshaking() {
            conn.complete_io(sock)?;
        }
        // Anything the handshake left to send (a server's tickets).
        while conn.wants_write() {
            conn.write_tls(sock)?;
        }
        Ok(())
    }

    impl TlsStream {
        /// The connecting side: the session with the node at `peer`, named
        /// `host` in the URL, whose certificate must be valid for that name (a
        /// DNS name, or the IP address when `host` is one); then `auth` (the
        /// node's own authentication) over it.
        pub(in crate::net) fn client(
            mut sock: TcpStream,
            peer: SocketAddr,
            host: &str,
            tls: &Tls,
            auth: impl FnOnce(&mut dyn ReadWrite) -> io::Result<()>,
        ) -> io::Result<TlsStream> {
            use rustls::pki_types::ServerName;
            let name = match host.parse::<std::net::IpAddr>() {
                Ok(_) => ServerName::IpAddress(peer.ip().into()),
                Err(_) => ServerName::try_from(host.to_owned()).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("hoare: {host:?} is not a valid TLS server name: {e}"),
                    )
                })?,
            };
            let mut c =
                rustls::ClientConnection::new(tls.client.clone(), name).map_err(tls_error)?;
            c.set_buffer_limit(None);
            let mut conn = rustls::Connection::from(c);
            handshake(&mut conn, &mut sock)?;
            Self::finish(sock, conn, auth)
        }

        /// The accepting side.
        pub(in crate::net) fn server(
            mut sock: TcpStream,
            tls: &Tls,
            auth: impl FnOnce(&mut dyn ReadWrite) -> io::Result<()>,
        ) -> io::Result<TlsStream> {
            let mut c = rustls::ServerConnection::new(tls.server.clone()).map_err(tls_error)?;
            c.set_buffer_limit(None);
            let mut conn = rustls::Connection::from(c);
            handshake(&mut conn, &mut sock)?;
            Self::finish(sock, conn, auth)
        }

        fn finish(
            mut sock: TcpStream,
            mut conn: rustls::Connection,
            auth: impl FnOnce(&mut dyn ReadWrite) -> io::Result<()>,
        ) -> io::Result<TlsStream> {
            {
                let mut s = Blocking {
                    conn: &mut conn,
                    sock: &mut sock,
                };
                auth(&mut s)?;
                s.flush()?;
            }
            sock.set_read_timeout(None)?;
            Ok(TlsStream {
                sock,
                state: Mutex::new(State {
                    conn,
                    pending: Vec::new(),
                }),
            })
        }

        pub(super) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
            let mut tmp = vec![0u8; 32 * 1024];
            loop {
                {
                    let mut st = lock(&self.state);
                    loop {
                        match st.conn.reader().read(buf) {
                            Ok(n) => return Ok(n),
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                            Err(e) => return Err(e),
                        }
                        if st.pending.is_empty() {
                            break;
                        }
                        // The session's plaintext is empty (it said
                        // WouldBlock), so it takes more records.
                        let State { conn, pending } = &mut *st;
                        let mut rd = &pending[..];
                        let n = conn.read_tls(&mut rd)?;
                        pending.drain(..n);
                        conn.process_new_packets().map_err(tls_error)?;
                    }
                }
                // Wait for the socket without the lock.
                let n = self.sock.read(&mut tmp)?;
                let mut st = lock(&self.state);
                if n == 0 {
                    // The end of the stream: let the session say whether it
                    // was a clean close.
                    let _ = st.conn.read_tls(&mut &[][..]);
                    st.conn.process_new_packets().map_err(tls_error)?;
                    return match st.conn.reader().read(buf) {
                        Ok(n) => Ok(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
                        Err(e) => Err(e),
                    };
                }
                st.pending.extend_from_slice(&tmp[..n]);
            }
        }

        pub(super) fn write_all(&self, buf: &[u8]) -> io::Result<()> {
            let mut out = Vec::with_capacity(buf.len() + 64);
            {
                let mut st = lock(&self.state);
                st.conn.writer().write_all(buf)?;
                while st.conn.wants_write() {
                    st.conn.write_tls(&mut out)?;
                }
            }
            // Records in the order they were made: the caller holds the
            // connection's write token.
            (&self.sock).write_all(&out)
        }
    }

    /// A session on its socket, used by one party only (the authentication
    /// after the TLS handshake).
    struct Blocking<'a> {
        conn: &'a mut rustls::Connection,
        sock: &'a mut TcpStream,
    }

    impl Read for Blocking<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            loop {
                match self.conn.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                if self.conn.complete_io(self.sock)? == (0, 0) {
                    return Ok(0);
                }
            }
        }
    }

    impl Write for Blocking<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = self.conn.writer().write(buf)?;
            self.flush()?;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            while self.conn.wants_write() {
                self.conn.write_tls(self.sock)?;
            }
            Ok(())
        }
    }

    /// A byte stream the authentication handshake runs over.
    pub(in crate::net) trait ReadWrite: Read + Write {}
    impl<T: Read + Write> ReadWrite for T {}
}
