//! The thin layer between the bridge and hoare's Rust API: one sending and one
//! receiving end type per element type whatever the sharing kind, and one `Wait`
//! argument instead of the blocking/try/deadline method families.

use hoare_core::chan::{
    self, Any, Channel, One, Receiver, RecvTimeoutError, SendTimeoutError, Sender, TryRecvError,
    TrySendError,
};
use hoare_runtime::{Builder, JoinHandle, ProcessError, Runtime};
use std::time::Instant;

/// How long an operation may wait.
#[derive(Clone, Copy, Debug)]
pub enum Wait {
    /// Until it completes or the channel is poisoned.
    Block,
    /// Not at all.
    Try,
    /// At most until this instant.
    Until(Instant),
}

/// Why an operation did not complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fail {
    Poisoned,
    Timeout,
    WouldBlock,
}

pub use chan::Buffer as Buf;

// ---------------------------------------------------------------- processes

/// The message of a process error as C++ sees it (`hoare::Cancelled` is recognised
/// by its prefix in hoare.hpp).
pub fn process_error(e: ProcessError) -> String {
    match e {
        ProcessError::Cancelled => super::CANCELLED.to_string(),
        e => format!("hoare: {e}"),
    }
}

pub fn run<R: Send + 'static>(
    workers: usize,
    stack: usize,
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, String> {
    let mut b = Runtime::builder();
    if workers > 0 {
        b = b.workers(workers);
    }
    if stack > 0 {
        b = b.stack_size(stack);
    }
    b.try_build()
        .map_err(|e| e.to_string())?
        .try_run(f)
        .map_err(process_error)
}

pub type Proc<R> = JoinHandle<R>;

/// The error of a spawn outside a runtime.
pub const NO_RUNTIME: &str = "hoare: spawn called outside a runtime (call it inside hoare::run)";

/// `Err(NO_RUNTIME)` unless the caller runs in a runtime (a process of either
/// kind), where a spawn has somewhere to go: checked before the Rust API would
/// panic.
pub fn need_runtime() -> Result<(), String> {
    if in_process() {
        Ok(())
    } else {
        Err(NO_RUNTIME.into())
    }
}

/// Spawns a process in the caller's runtime (an error outside one).
#[cfg(feature = "cxx-test-hooks")]
pub fn spawn<R: Send + 'static>(
    pinned: bool,
    stack: usize,
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<Proc<R>, String> {
    spawn_with(pinned, stack, false, None, f)
}

/// [`spawn`] with every option: `thread` runs the process on an OS thread of its
/// own (for blocking calls), `name` names it. Refuses, instead of letting the Rust
/// API panic, a spawn outside a runtime, a pinned thread process and a name with
/// a NUL character (which an OS thread's name cannot hold).
pub fn spawn_with<R: Send + 'static>(
    pinned: bool,
    stack: usize,
    thread: bool,
    name: Option<String>,
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<Proc<R>, String> {
    need_runtime()?;
    if thread && pinned {
        return Err("hoare: a process on its own thread cannot also be pinned".into());
    }
    if name.as_deref().is_some_and(|n| n.contains('\0')) {
        return Err("hoare: a process name cannot contain a NUL character".into());
    }
    let mut b = Builder::new().pinned(pinned).thread(thread);
    if stack > 0 {
        b = b.stack_size(stack);
    }
    if let Some(n) = name {
        b = b.name(n);
    }
    b.try_spawn(f).map_err(|e| e.to_string())
}

pub fn yield_now() {
    hoare_runtime::yield_now()
}

pub fn proc_id() -> u64 {
    hoare_runtime::id()
}

/// Whether the caller is a process (on a worker or on a thread of its own).
pub fn in_process() -> bool {
    hoare_runtime::in_process()
}

// ---------------------------------------------------------------- channels

/// A Rust sending end of either sharing kind: what a C++-held end of a native
/// element type is made of (`hoare::ffi::Tx`, see [`NativeElem`](super::NativeElem)).
pub enum Tx<T> {
    /// The only writer of its channel (one2one, one2any).
    One(Sender<T, One>),
    /// One of the shared writers (any2one, any2any).
    Any(Sender<T, Any>),
}

/// A Rust receiving end of either sharing kind (`hoare::ffi::Rx`, see
/// [`NativeElem`](super::NativeElem)).
pub enum Rx<T> {
    /// The only reader of its channel (one2one, any2one).
    One(Receiver<T, One>),
    /// One of the shared readers (one2any, any2any).
    Any(Receiver<T, Any>),
}

/// Makes a channel; `tx_shared`/`rx_shared` choose the sharing kind.
pub fn channel<T>(tx_shared: bool, rx_shared: bool, buf: Buf) -> (Tx<T>, Rx<T>) {
    let b = Channel::builder().buffer(buf);
    match (tx_shared, rx_shared) {
        (false, false) => {
            let (t, r) = b.one2one();
            (Tx::One(t), Rx::One(r))
        }
        (true, false) => {
            let (t, r) = b.any2one();
            (Tx::Any(t), Rx::One(r))
        }
        (false, true) => {
            let (t, r) = b.one2any();
            (Tx::One(t), Rx::Any(r))
        }
        (true, true) => {
            let (t, r) = b.any2any();
            (Tx::Any(t), Rx::Any(r))
        }
    }
}

macro_rules! on_end {
    ($e:expr, $x:ident => $body:expr) => {
        match $e {
            Self::One($x) => $body,
            Self::Any($x) => $body,
        }
    };
}

impl<T> Tx<T> {
    /// Sends `v`; on failure gives it back.
    pub(crate) fn send(&self, v: T, w: Wait) -> Result<(), (Fail, T)> {
        on_end!(self, t => match w {
            Wait::Block => t.send(v).map_err(|e| (Fail::Poisoned, e.into_inner())),
            Wait::Try => t.try_send(v).map_err(|e| match e {
                TrySendError::Full(v) => (Fail::WouldBlock, v),
                TrySendError::Poisoned(v) => (Fail::Poisoned, v),
            }),
            Wait::Until(d) => t.send_deadline(v, d).map_err(|e| match e {
                SendTimeoutError::Timeout(v) => (Fail::Timeout, v),
                SendTimeoutError::Poisoned(v) => (Fail::Poisoned, v),
            }),
        })
    }

    pub(crate) fn poison(&self) {
        on_end!(self, t => t.poison())
    }

    /// A second end of a shared (any) side; `None` for a one2one side.
    pub(crate) fn try_clone(&self) -> Option<Self> {
        match self {
            Self::One(_) => None,
            Self::Any(t) => Some(Self::Any(t.clone())),
        }
    }
}

impl<T> Rx<T> {
    /// Extended rendezvous: runs `f` on the value while its writer stays blocked.
    pub(crate) fn recv_with<R>(&self, w: Wait, f: impl FnOnce(T) -> R) -> Result<R, Fail> {
        on_end!(self, r => match w {
            Wait::Block => r.recv_with(f).map_err(|_| Fail::Poisoned),
            Wait::Try => r.try_recv_with(f).map_err(|e| match e {
                TryRecvError::Empty => Fail::WouldBlock,
                TryRecvError::Poisoned => Fail::Poisoned,
            }),
            Wait::Until(d) => r.recv_with_deadline(d, f).map_err(|e| match e {
                RecvTimeoutError::Timeout => Fail::Timeout,
                RecvTimeoutError::Poisoned => Fail::Poisoned,
            }),
        })
    }

    /// A plain receive (the writer is released as soon as the value is taken).
    pub(crate) fn recv(&self, w: Wait) -> Result<T, Fail> {
        on_end!(self, r => match w {
            Wait::Block => r.recv().map_err(|_| Fail::Poisoned),
            Wait::Try => r.try_recv().map_err(|e| match e {
                TryRecvError::Empty => Fail::WouldBlock,
                TryRecvError::Poisoned => Fail::Poisoned,
            }),
            Wait::Until(d) => r.recv_deadline(d).map_err(|e| match e {
                RecvTimeoutError::Timeout => Fail::Timeout,
                RecvTimeoutError::Poisoned => Fail::Poisoned,
            }),
        })
    }

    pub(crate) fn poison(&self) {
        on_end!(self, r => r.poison())
    }

    pub(crate) fn try_clone(&self) -> Option<Self> {
        match self {
            Self::One(_) => None,
            Self::Any(r) => Some(Self::Any(r.clone())),
        }
    }
}
