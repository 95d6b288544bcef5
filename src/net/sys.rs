//! What every socket type shares: a non-blocking mio socket, its registration
//! with the runtime's poller (made on the first operation a process waits in),
//! its timeouts, and the loop that tries an operation and parks until the socket
//! is ready when it would block.

use hoare_core::chan::{Any, Receiver};
use hoare_core::readiness::{Guard, Interest, Wait};
use hoare_runtime::io::Registered;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A timeout that stands for none.
const NO_TIMEOUT: u64 = u64::MAX;

/// A non-blocking socket, and how processes wait on it.
pub(crate) struct Io<S: AsRawFd> {
    // Dropped before `sock`: deregistering needs the descriptor open.
    reg: OnceLock<Registered>,
    guard: OnceLock<Arc<Guard>>,
    read_timeout: AtomicU64,
    write_timeout: AtomicU64,
    pub(crate) sock: S,
}

impl<S: AsRawFd> std::fmt::Debug for Io<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Io")
            .field("fd", &self.sock.as_raw_fd())
            .finish_non_exhaustive()
    }
}

/// Which timeout an operation obeys.
#[derive(Clone, Copy)]
pub(crate) enum Dir {
    Read,
    Write,
}

impl<S: AsRawFd> Io<S> {
    pub(crate) fn new(sock: S) -> Self {
        Self {
            reg: OnceLock::new(),
            guard: OnceLock::new(),
            read_timeout: AtomicU64::new(NO_TIMEOUT),
            write_timeout: AtomicU64::new(NO_TIMEOUT),
            sock,
        }
    }

    fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// The registration with the caller's runtime's poller, made on first use.
    fn registered(&self) -> io::Result<&Registered> {
        if let Some(r) = self.reg.get() {
            return Ok(r);
        }
        // One registration per descriptor: racing processes take turns here.
        static INIT: Mutex<()> = Mutex::new(());
        let _g = INIT.lock().unwrap_or_else(|p| p.into_inner());
        if self.reg.get().is_none() {
            let _ = self.reg.set(Registered::new(self.fd())?);
        }
        Ok(self.reg.get().expect("hoare: just registered"))
    }

    pub(crate) fn set_timeout(&self, dir: Dir, t: Option<Duration>) -> io::Result<()> {
        if t == Some(Duration::ZERO) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "hoare: a zero timeout is not allowed (use None for no timeout)",
            ));
        }
        let v = t.map_or(NO_TIMEOUT, |t| {
            t.as_nanos().min(NO_TIMEOUT as u128 - 1) as u64
        });
        self.timeout_cell(dir).store(v, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn timeout(&self, dir: Dir) -> Option<Duration> {
        match self.timeout_cell(dir).load(Ordering::Relaxed) {
            NO_TIMEOUT => None,
            n => Some(Duration::from_nanos(n)),
        }
    }

    fn timeout_cell(&self, dir: Dir) -> &AtomicU64 {
        match dir {
            Dir::Read => &self.read_timeout,
            Dir::Write => &self.write_timeout,
        }
    }

    /// Tries `op` until it does not report `WouldBlock`, waiting for `interest`
    /// in between: a process parks (its worker runs others), a plain thread
    /// blocks in `poll(2)`. Gives up with `TimedOut` at the socket's timeout for
    /// `dir` (counted from now), `what` naming the operation in the error.
    pub(crate) fn io<R>(
        &self,
        interest: Interest,
        dir: Dir,
        what: &str,
        op: impl FnMut(&S) -> io::Result<R>,
    ) -> io::Result<R> {
        let timeout = self.timeout(dir);
        let deadline = timeout.map(|t| hoare_core::timer::add_clamped(Instant::now(), t));
        self.io_until(interest, deadline, what, op)
    }

    /// [`io`](Self::io) with an explicit deadline.
    pub(crate) fn io_until<R>(
        &self,
        interest: Interest,
        deadline: Option<Instant>,
        what: &str,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> io::Result<R> {
        if !hoare_core::park::in_process() {
            return self.io_thread(interest, deadline, what, op);
        }
        let r = self.registered()?.readiness();
        loop {
            let snap = r.snapshot();
            match op(&self.sock) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => {
                    if res.is_ok() && interest == Interest::Read && self.guard.get().is_some() {
                        r.rearm();
                    }
                    return res;
                }
            }
            r.clear(snap, interest);
            match r.wait(interest, deadline) {
                Wait::Ready => {}
                Wait::TimedOut => return Err(timed_out(what)),
                Wait::Cancelled => return Err(cancelled(what)),
            }
        }
    }

    /// A plain thread (or a thread process): blocks the thread in `poll(2)`.
    fn io_thread<R>(
        &self,
        interest: Interest,
        deadline: Option<Instant>,
        what: &str,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> io::Result<R> {
        loop {
            match op(&self.sock) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                res => return res,
            }
            let ms = match deadline {
                None => -1,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(timed_out(what));
                    }
                    // Rounded up, so a deadline is not polled for in a busy loop.
                    let left = d - now;
                    left.as_millis()
                        .saturating_add(u128::from(!left.subsec_nanos().is_multiple_of(1_000_000)))
                        .min(i32::MAX as u128) as i32
                }
            };
            let events = match interest {
                Interest::Read => libc::POLLIN,
                Interest::Write => libc::POLLOUT,
            };
            let mut p = libc::pollfd {
                fd: self.fd(),
                events,
                revents: 0,
            };
            // SAFETY: one valid `pollfd` on the stack.
            let n = unsafe { libc::poll(&mut p, 1, ms) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }

    /// Tries `op` once; if it would block, records that (so the alt guard and
    /// later waits see it) and returns the `WouldBlock` error.
    pub(crate) fn try_io<R>(
        &self,
        interest: Interest,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> io::Result<R> {
        let reg = self.reg.get();
        let snap = reg.map(|r| r.readiness().snapshot());
        let res = op(&self.sock);
        match (&res, reg, snap) {
            (Err(e), Some(r), Some(snap)) if e.kind() == io::ErrorKind::WouldBlock => {
                r.readiness().clear(snap, interest);
            }
            // Only sockets whose guard is in use pay for this.
            (Ok(_), Some(r), _) if interest == Interest::Read && self.guard.get().is_some() => {
                r.readiness().rearm();
            }
            _ => {}
        }
        res
    }

    /// The readable guard (see `hoare_core::readiness::Guard`).
    pub(crate) fn readable(&self) -> io::Result<&Receiver<(), Any>> {
        if let Some(g) = self.guard.get() {
            return Ok(g.receiver());
        }
        let g = self.registered()?.readiness().guard();
        let _ = self.guard.set(g);
        Ok(self
            .guard
            .get()
            .expect("hoare: the guard was just set")
            .receiver())
    }
}

pub(crate) fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("hoare: {what} timed out"))
}

pub(crate) fn cancelled(what: &str) -> io::Error {
    io::Error::other(format!(
        "hoare: {what} cancelled: the runtime is shutting down"
    ))
}
