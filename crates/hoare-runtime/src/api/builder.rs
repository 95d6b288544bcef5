//! Spawning: the [`Builder`] and its options, [`spawn`], [`spawn_blocking`], and
//! what a failed spawn gives back.

use super::error::spawn_error;
use super::join::{run_body, ChildCount, Finish, JoinHandle, Process, SlotRef};
use crate::context;
use crate::proc;
use crate::shared::{Shared, ThreadRt};
use crate::spawn::{self, SpawnError, SpawnOpts};
use crate::stack;
use std::io;
use std::panic::Location;
use std::ptr;

/// Default usable stack size of a process: 128 KiB.
///
/// Only the pages a process touches cost memory: a blocked process that never
/// went deep costs one resident 4 KiB page whatever the size (its header shares
/// the top page of its stack), plus its share of the page tables that map its
/// slot, which grows with the size. Measured with `examples/spawn` (100,000 and
/// 1,000,000 blocked processes, 1 worker): 4,165 bytes resident per process at
/// 64 KiB and at 256 KiB alike; page tables 143 bytes per process at 64 KiB, 273 at
/// 128 KiB, 529 at 256 KiB (2,069 at 1 MiB); spawn and join CPU time the same
/// within noise up to 256 KiB (+15% system time at 1 MiB). Address space: 136 KiB
/// per process (guard page, stack, header page). Larger stacks spread a network's
/// stack tops over more page tables: the 503-process ring ran about 10% slower
/// with 256 KiB stacks than with 64 KiB (more misses in the TLB and the caches of
/// the page walk), 4% with 128 KiB.
///
/// # Large values
/// Channel operations move a value by pointer, once into the channel and once
/// out: a send keeps no copy on the stack besides the caller's value and the
/// `Result` it returns (which gives the value back on failure), a receive one
/// besides the caller's `Result`, and an alt's receive guard (or `recv_any`) one
/// more. So in an optimised build a process with the default stack can send and
/// receive values of up to **32 KiB** by every operation (`send`/`recv`, their
/// `try_`, `_timeout` and `_deadline` forms, `recv_with`,
/// [`alt!`](hoare_core::alt!) and [`Alt`](hoare_core::alt::Alt) guards,
/// `recv_any`) on every kind of channel, with room left for a few copies in its
/// own code (a value it holds, a pattern that binds it, a retry loop): the tests
/// send and receive 32 KiB values through each of them. A debug build copies a
/// value many times more (up to about 20 times through an alt): there, or for
/// larger values, give the process a larger stack ([`Builder::stack_size`],
/// [`RuntimeBuilder::stack_size`]) or send a `Box`.
///
/// [`RuntimeBuilder::stack_size`]: crate::RuntimeBuilder::stack_size
pub const DEFAULT_STACK_SIZE: usize = 128 * 1024;

/// The largest usable stack size a process (or a runtime's default) may have:
/// 1 GiB, Go's limit for a goroutine. A larger [`Builder::stack_size`] makes
/// [`Builder::spawn`] fail, and a larger [`RuntimeBuilder::stack_size`] makes
/// [`RuntimeBuilder::build`] fail, with [`io::ErrorKind::InvalidInput`].
///
/// [`RuntimeBuilder::stack_size`]: crate::RuntimeBuilder::stack_size
/// [`RuntimeBuilder::build`]: crate::RuntimeBuilder::build
pub const MAX_STACK_SIZE: usize = stack::MAX_STACK;

fn no_runtime() -> ! {
    panic!("hoare: spawn called outside a runtime (use hoare::run)")
}

/// A failed spawn: the error, and a handle that reports the process `Cancelled`
/// (its body was dropped without running).
pub(crate) struct Failed<T> {
    pub(crate) error: io::Error,
    shut_down: bool,
    handle: JoinHandle<T>,
}

impl<T> Failed<T> {
    pub(crate) fn new(e: SpawnError, handle: JoinHandle<T>) -> Self {
        Self {
            shut_down: matches!(e, SpawnError::ShutDown),
            error: spawn_error(e),
            handle,
        }
    }

    /// What the free functions (`spawn`, `spawn_blocking`, `Scope::spawn`) make of
    /// a failure: after shutdown, a handle whose `join` reports `Cancelled` (as
    /// tokio's `spawn` after shutdown: a destructor that spawns while the shutdown
    /// sweep unwinds its process must not panic); else a panic with the error, as
    /// `std::thread::spawn` panics when the OS refuses a thread.
    #[track_caller]
    pub(crate) fn handle_or_panic(self) -> JoinHandle<T> {
        if self.shut_down {
            return self.handle;
        }
        panic!("hoare: cannot spawn a process: {}", self.error)
    }
}

/// Builds a process with options.
///
/// ```
/// use hoare_runtime::{run, Builder};
/// let n = run(|| {
///     Builder::new().name("worker").stack_size(128 * 1024)
///         .spawn(|| hoare_runtime::name().unwrap())
///         .join().unwrap()
/// });
/// assert_eq!(n, "worker");
/// ```
///
/// Bad options are errors from [`try_spawn`](Builder::try_spawn) (and a panic
/// with the same message from [`spawn`](Builder::spawn)):
///
/// ```
/// use hoare_runtime::{run, Builder};
/// let e = run(|| Builder::new().stack_size(usize::MAX).try_spawn(|| ()).unwrap_err());
/// assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
/// ```
#[derive(Debug, Default, Clone)]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
    pinned: bool,
    thread: bool,
    /// Where the process was spawned, for reports (default: the caller of the
    /// spawn function; `par` and friends pass their own caller's).
    site: Option<&'static Location<'static>>,
    /// Memory the body owns while it runs (a boxed `par` branch's captures),
    /// searched with its stack for the ends a deadlock report says it holds.
    captures: (usize, usize),
}

impl Builder {
    /// Default options: unnamed, the runtime's stack size, not pinned, a coroutine.
    pub fn new() -> Self {
        Self::default()
    }
    /// Names the process (shown by [`name`] and in overflow reports).
    ///
    /// [`name`]: crate::name
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Usable stack size in bytes (rounded up to pages, at least 16 KiB; at most
    /// [`MAX_STACK_SIZE`], else [`spawn`](Self::spawn) fails with
    /// [`InvalidInput`](io::ErrorKind::InvalidInput)). Only the pages a process
    /// touches cost memory. For a thread process ([`thread`](Self::thread)) it is
    /// the thread's stack size.
    ///
    /// With the default ([`DEFAULT_STACK_SIZE`], 128 KiB) a process can send
    /// and receive values of up to 32 KiB by every channel operation (in an
    /// optimised build; see there); one that moves larger values, or recurses
    /// deeply, needs more.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }
    /// Pins the process to the worker it first runs on (for thread-local state).
    pub fn pinned(mut self, pinned: bool) -> Self {
        self.pinned = pinned;
        self
    }
    /// Records `site` as where the process was spawned (for `par` and friends,
    /// which spawn on their caller's behalf).
    pub(crate) fn at(mut self, site: &'static Location<'static>) -> Self {
        self.site = Some(site);
        self
    }
    /// The heap memory of a boxed body (`start..end`), which stays allocated
    /// until the body returns: see `Proc::captures`.
    pub(crate) fn captures(mut self, range: (usize, usize)) -> Self {
        self.captures = range;
        self
    }
    /// Runs the process on its own OS thread (for blocking system calls); channel
    /// operations there block the thread.
    pub fn thread(mut self, thread: bool) -> Self {
        self.thread = thread;
        self
    }

    /// Spawns `p` in the caller's runtime.
    ///
    /// # Panics
    /// Outside a runtime, and where [`try_spawn`](Self::try_spawn) fails (an
    /// absurd stack size, no memory for the stack), with the error's message.
    /// After the runtime has shut down it does not panic: the handle reports
    /// [`ProcessError::Cancelled`] (a destructor that spawns while the shutdown
    /// sweep unwinds its process must not panic).
    ///
    /// [`ProcessError::Cancelled`]: crate::ProcessError::Cancelled
    #[track_caller]
    #[inline]
    pub fn spawn<P>(self, p: P) -> JoinHandle<P::Output>
    where
        P: Process + 'static,
    {
        // SAFETY: 'static: nothing borrowed can dangle.
        match unsafe { self.spawn_unchecked(p, ptr::null()) } {
            Ok(h) => h,
            Err(f) => f.handle_or_panic(),
        }
    }

    /// Spawns `p` in the caller's runtime, like `std::thread::Builder::spawn`: an
    /// error, and `p` dropped without running, if
    /// * the stack size is above [`MAX_STACK_SIZE`], or, for a thread process, the
    ///   name holds a NUL byte ([`InvalidInput`](io::ErrorKind::InvalidInput));
    /// * the OS refuses the memory for its stack, or the thread of a thread
    ///   process (the OS error: [`OutOfMemory`](io::ErrorKind::OutOfMemory), …);
    /// * the runtime has shut down (its root returned) and the caller is not one
    ///   of its processes still running on a worker
    ///   ([`Other`](io::ErrorKind::Other)): a thread process that outlived
    ///   [`Runtime::run`], or a destructor running during the shutdown sweep.
    ///
    /// # Panics
    /// Outside a runtime.
    ///
    /// [`Runtime::run`]: crate::Runtime::run
    #[track_caller]
    pub fn try_spawn<P>(self, p: P) -> io::Result<JoinHandle<P::Output>>
    where
        P: Process + 'static,
    {
        // SAFETY: 'static: nothing borrowed can dangle.
        unsafe { self.spawn_unchecked(p, ptr::null()) }.map_err(|f| f.error)
    }

    /// Spawns `p`, counted as a child of `scope` (null: none).
    ///
    /// # Safety
    /// Everything `p` borrows outlives the process (the scope joins it first).
    #[track_caller]
    #[inline]
    pub(crate) unsafe fn spawn_unchecked<P: Process>(
        self,
        p: P,
        scope: *const ChildCount,
    ) -> Result<JoinHandle<P::Output>, Failed<P::Output>> {
        // Not `unwrap_or_else(Location::caller)`: that would report the closure
        // call inside `unwrap_or_else`.
        let site = match self.site {
            Some(site) => site,
            None => Location::caller(),
        };
        let (slot, mine) = SlotRef::pair();
        let fin = Finish {
            slot: Some(mine),
            scope,
        };
        #[cfg(feature = "check")]
        if crate::check::active() {
            // Under the checking runtime every process (a thread process too) is
            // one of its coroutines.
            // SAFETY: forwarded from our caller.
            let id = unsafe {
                crate::check::spawn(
                    self.name,
                    site,
                    self.captures,
                    Box::new(move || run_body(p, fin)),
                )
            };
            return Ok(JoinHandle { slot, id });
        }
        if self.thread {
            // SAFETY: forwarded from our caller.
            return unsafe { self.spawn_thread(p, fin, slot, site) };
        }
        let Builder {
            name,
            stack_size,
            pinned,
            captures,
            ..
        } = self;
        let r = Shared::with_current(|sh| {
            let opts = SpawnOpts {
                name: name.map(String::into_boxed_str),
                stack_size,
                pinned,
                site,
                captures,
                shared: sh,
            };
            // SAFETY: forwarded from our caller.
            unsafe { spawn::spawn_raw(opts, move || run_body(p, fin)) }
        })
        .unwrap_or_else(|| no_runtime());
        match r {
            Ok(id) => Ok(JoinHandle { slot, id }),
            Err(e) => Err(Failed::new(e, JoinHandle { slot, id: 0 })),
        }
    }

    /// Spawns `p` as a thread process: on an OS thread of its own, registered
    /// with its runtime (whose shutdown cancels its waits and waits for it).
    ///
    /// # Safety
    /// As [`spawn_unchecked`](Self::spawn_unchecked).
    // Out of line: it costs a thread anyway, and the spawn of a coroutine is lean.
    #[cold]
    #[inline(never)]
    unsafe fn spawn_thread<P: Process>(
        self,
        p: P,
        fin: Finish<P::Output>,
        slot: SlotRef<P::Output>,
        site: &'static Location<'static>,
    ) -> Result<JoinHandle<P::Output>, Failed<P::Output>> {
        let sh = Shared::current().unwrap_or_else(|| no_runtime());
        let id = proc::fresh_ids(1);
        let handle = JoinHandle { slot, id };
        let mut b = std::thread::Builder::new();
        let checked = if sh.refuses_spawns(false) {
            Err(SpawnError::ShutDown)
        } else if self.name.as_ref().is_some_and(|n| n.contains('\0')) {
            Err(SpawnError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "hoare: a thread process's name may not contain a NUL byte",
            )))
        } else {
            self.stack_size
                .map_or(Ok(()), stack::check_size)
                .map_err(SpawnError::Io)
        };
        if let Err(e) = checked {
            // `fin` reports `Cancelled` (and counts a scope down) as it goes.
            drop((p, fin));
            return Err(Failed::new(e, handle));
        }
        if let Some(n) = &self.name {
            b = b.name(n.clone());
        }
        if let Some(s) = self.stack_size {
            b = b.stack_size(s);
        }
        // Counted before its thread exists: a shutdown that begins meanwhile
        // waits for it too.
        sh.threads.register(id, self.name, site);
        let registry = sh.clone();
        let body = move || {
            let rt = ThreadRt::enter(sh);
            context::set_thread_id(id);
            registry.threads.started(id);
            run_body(p, fin);
            drop(rt);
            registry.threads.ended(id);
        };
        let body: Box<dyn FnOnce() + Send + '_> = Box::new(body);
        // SAFETY: lifetime erased; the caller's contract keeps borrows alive
        // until the process finishes (the scope waits for `fin`).
        let body: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(body) };
        // On failure `spawn` drops `body` (so `fin`: the handle reports
        // `Cancelled` and a scope is counted down).
        match b.spawn(body) {
            Ok(_) => Ok(handle),
            Err(e) => {
                if let Some(sh) = Shared::current() {
                    sh.threads.ended(id);
                }
                let e = io::Error::new(
                    e.kind(),
                    format!("hoare: cannot start a thread process: {e}"),
                );
                Err(Failed::new(SpawnError::Io(e), handle))
            }
        }
    }
}

/// Spawns a process (a closure or a [`Process`]) in the caller's runtime.
///
/// ```
/// let v = hoare_runtime::run(|| hoare_runtime::spawn(|| 6 * 7).join().unwrap());
/// assert_eq!(v, 42);
/// ```
///
/// After the runtime has shut down (from a thread process that outlived it, or a
/// destructor running in the shutdown sweep), `p` is dropped without running and
/// the handle's [`join`](JoinHandle::join) reports [`ProcessError::Cancelled`], as
/// tokio's `spawn` does; [`Builder::spawn`] reports it as an error.
///
/// # Panics
/// Outside a runtime, or if the OS refuses the memory for the process's stack (as
/// `std::thread::spawn` panics when it cannot start a thread; [`Builder::spawn`]
/// returns the error instead).
///
/// [`ProcessError::Cancelled`]: crate::ProcessError::Cancelled
#[track_caller]
pub fn spawn<P>(p: P) -> JoinHandle<P::Output>
where
    P: Process + 'static,
{
    Builder::new().spawn(p)
}

/// Runs `f` on its own OS thread as a process of the caller's runtime (for
/// blocking system calls); joined like any process.
///
/// # Panics
/// As [`spawn`] (here: if the OS cannot start the thread).
#[track_caller]
pub fn spawn_blocking<P>(p: P) -> JoinHandle<P::Output>
where
    P: Process + 'static,
{
    Builder::new().thread(true).spawn(p)
}
