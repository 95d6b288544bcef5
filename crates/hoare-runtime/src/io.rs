//! The I/O poller: one mio `Poll` per runtime, made when the first socket is
//! registered (a runtime that does no I/O never has one, and sleeps as before).
//!
//! # Who polls
//! One worker at a time, whoever holds the poller's lock:
//! * a worker with nothing to run that would sleep deeply (not a short nap: its
//!   timers' resolution stays the condvar's) takes the poller if it is free and
//!   sleeps *in* it (`Idle::sleep_in`), with its next timer (rounded down to the
//!   millisecond, epoll's unit) as the timeout; the others sleep on their condvars
//!   as before. A notifier that picks the polling worker interrupts the poll with
//!   mio's `Waker` (an eventfd), so an idle runtime uses no CPU and a readiness
//!   event or new work wakes it within microseconds;
//! * a busy worker polls without blocking at its periodic look (every
//!   `GLOBAL_CHECK` dispatches), if the poller is free: readiness is noticed
//!   within that many dispatches even when no worker is idle (tokio's workers do
//!   the same every 61 ticks).
//!
//! Each event sets its socket's [`Readiness`], which wakes the processes parked
//! for it into the polling worker's queues (the usual wake path: its next slot,
//! then its queue, from which idle workers steal).
//!
//! # Sources
//! A socket registers its file descriptor once (edge-triggered, readable and
//! writable) and gets a [`Registered`]: its token is a slab index with a
//! generation, so an event for a socket closed meanwhile finds a newer
//! generation (or nothing) and is dropped.

use crate::shared::Shared;
use crate::sync::lock;
use crate::worker::WorkerLocal;
use hoare_core::park::Unparker;
use hoare_core::readiness::{Readiness, READABLE, READ_CLOSED, WRITABLE, WRITE_CLOSED};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token, Waker};
use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The waker's token (slab tokens have a generation in the upper half, never
/// all ones).
const WAKE: Token = Token(usize::MAX);
/// Events taken per poll.
const EVENTS: usize = 1024;

/// A runtime's poller.
pub(crate) struct Driver {
    /// Whoever holds this polls.
    poller: Mutex<Poller>,
    registry: Registry,
    waker: Waker,
    sources: Mutex<Slab>,
}

struct Poller {
    poll: Poll,
    events: Events,
}

#[derive(Default)]
struct Slab {
    entries: Vec<(u32, Option<Arc<Readiness>>)>,
    free: Vec<usize>,
}

fn token(index: usize, gen: u32) -> Token {
    Token(((gen as usize) << 32) | index)
}

impl Driver {
    fn new() -> io::Result<Self> {
        let poll = Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = Waker::new(poll.registry(), WAKE)?;
        Ok(Self {
            poller: Mutex::new(Poller {
                poll,
                events: Events::with_capacity(EVENTS),
            }),
            registry,
            waker,
            sources: Mutex::new(Slab::default()),
        })
    }

    /// The runtime's driver, made on first use.
    fn get_or_init(sh: &Shared) -> io::Result<&Driver> {
        if let Some(d) = sh.io.get() {
            return Ok(d);
        }
        let d = Driver::new().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("hoare: cannot make the runtime's I/O poller: {e}"),
            )
        })?;
        // Another thread may have made one meanwhile: then ours is dropped.
        let _ = sh.io.set(d);
        Ok(sh.io.get().expect("hoare: the I/O poller was just set"))
    }

    /// The poller, if no other worker holds it.
    fn try_poller(&self) -> Option<MutexGuard<'_, Poller>> {
        match self.poller.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    unsafe fn wake_raw(data: *const ()) {
        // SAFETY: `data` is a `Driver` of a live runtime (see `interrupt`).
        let d = unsafe { &*(data as *const Driver) };
        // An eventfd write: fails only if the counter would overflow, which
        // mio handles by resetting it first.
        let _ = d.waker.wake();
    }

    /// Interrupts a blocked poll (what a notifier calls on the polling worker).
    fn interrupt(&self) -> Unparker {
        // SAFETY: `wake_raw` is sound from any thread while the driver lives,
        // which is as long as its runtime's `Shared`, which the sleeping worker
        // holds.
        unsafe { Unparker::from_raw(self as *const Self as *const (), Self::wake_raw) }
    }

    /// Sets the readiness of the sources of the events `p` holds: wakes their
    /// processes (into the calling worker's queues).
    fn dispatch(&self, p: &Poller) {
        let slab = lock(&self.sources);
        for ev in p.events.iter() {
            let t = ev.token();
            if t == WAKE {
                continue;
            }
            let (index, gen) = (t.0 & 0xffff_ffff, (t.0 >> 32) as u32);
            let Some((g, Some(r))) = slab.entries.get(index) else {
                continue;
            };
            if *g != gen {
                continue;
            }
            let mut bits = 0;
            if ev.is_readable() {
                bits |= READABLE;
            }
            if ev.is_writable() {
                bits |= WRITABLE;
            }
            if ev.is_read_closed() {
                bits |= READ_CLOSED;
            }
            if ev.is_write_closed() {
                bits |= WRITE_CLOSED;
            }
            if ev.is_error() {
                // A pending error: the next operation either way reports it.
                bits |= READABLE | WRITABLE;
            }
            r.set(bits);
        }
    }
}

/// Polls with `timeout` and wakes the processes of the events. Errors other
/// than an interrupted call are not expected from epoll with valid arguments;
/// they are treated as "no events" (the worker looks again).
fn poll_and_dispatch(d: &Driver, p: &mut Poller, timeout: Option<Duration>) {
    let Poller { poll, events } = p;
    if poll.poll(events, timeout).is_err() {
        events.clear();
    }
    d.dispatch(p);
}

impl WorkerLocal {
    /// Sleeps (registered with `Idle::prepare_sleep`) until woken or `timeout`:
    /// in the I/O poller if the runtime has one, this sleep is deep, and no other
    /// worker polls; else on the condvar. Returns whether the worker is now
    /// searching (as `Idle::sleep`).
    pub(crate) fn sleep_maybe_polling(&self, timeout: Option<Duration>, light: bool) -> bool {
        let sh = self.shared();
        if !light {
            if let Some(d) = sh.io.get() {
                // epoll counts milliseconds (mio rounds up): a timer due sooner
                // is left to the condvar, a later one is polled for whole
                // milliseconds and the rest slept on the condvar next round.
                let t = timeout.map(|t| Duration::from_millis(t.as_millis() as u64));
                if t.is_none_or(|t| !t.is_zero()) {
                    if let Some(mut p) = d.try_poller() {
                        // SAFETY: the driver outlives this call (the worker holds
                        // its runtime's `Shared`).
                        let searching = unsafe {
                            sh.idle.sleep_in(self.index, t, d.interrupt(), |t| {
                                let Poller { poll, events } = &mut *p;
                                if poll.poll(events, t).is_err() {
                                    events.clear();
                                }
                            })
                        };
                        // No longer a sleeper: wake the processes of the events
                        // (into this worker's queues; a longer queue notifies).
                        d.dispatch(&p);
                        return searching;
                    }
                }
            }
        }
        sh.idle.sleep(self.index, timeout)
    }

    /// At a periodic look: polls without blocking if the runtime has a poller and
    /// no other worker holds it. The processes woken go to this worker's queues.
    #[inline]
    pub(crate) fn poll_io_now(&self) {
        if let Some(d) = self.shared().io.get() {
            if let Some(mut p) = d.try_poller() {
                poll_and_dispatch(d, &mut p, Some(Duration::ZERO));
            }
        }
    }
}

/// A file descriptor registered with the poller of the caller's runtime: the
/// readiness the poller reports for it. Dropping it deregisters the descriptor
/// (which must still be open then).
pub struct Registered {
    shared: Arc<Shared>,
    fd: RawFd,
    index: usize,
    readiness: Arc<Readiness>,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("fd", &self.fd)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl Registered {
    /// Registers `fd` (a non-blocking socket) with the poller of the runtime the
    /// caller runs in, making the poller on first use.
    ///
    /// # Errors
    /// `NotFound` if the caller is not a process of a runtime; the OS error if
    /// the poller cannot be made or the descriptor registered.
    pub fn new(fd: RawFd) -> io::Result<Registered> {
        let shared = Shared::current().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "hoare: socket readiness needs a runtime (call this from a process)",
            )
        })?;
        let d = Driver::get_or_init(&shared)?;
        let readiness = Arc::new(Readiness::new());
        let (index, gen) = {
            let mut slab = lock(&d.sources);
            let index = match slab.free.pop() {
                Some(i) => i,
                None => {
                    slab.entries.push((0, None));
                    slab.entries.len() - 1
                }
            };
            let e = &mut slab.entries[index];
            e.0 = e.0.wrapping_add(1) & 0x7fff_ffff;
            e.1 = Some(readiness.clone());
            (index, e.0)
        };
        if let Err(e) = d.registry.register(
            &mut SourceFd(&fd),
            token(index, gen),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            let mut slab = lock(&d.sources);
            slab.entries[index].1 = None;
            slab.free.push(index);
            return Err(io::Error::new(
                e.kind(),
                format!("hoare: cannot register a socket with the I/O poller: {e}"),
            ));
        }
        Ok(Registered {
            shared,
            fd,
            index,
            readiness,
        })
    }

    /// The readiness the poller reports for this descriptor.
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let Some(d) = self.shared.io.get() else {
            return;
        };
        let _ = d.registry.deregister(&mut SourceFd(&self.fd));
        let mut slab = lock(&d.sources);
        slab.entries[self.index].1 = None;
        slab.free.push(self.index);
    }
}
