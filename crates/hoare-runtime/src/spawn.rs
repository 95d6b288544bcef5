//! Spawning a process: a stack slot (from the worker's cache, or a pool of its
//! size), the header written at its top, its first context (`start`), and the
//! task queued on the spawner's worker (its next slot) or, from outside, the global queue.

use crate::ctx;
use crate::proc::{
    self, Proc, ProcTag, Task, BUDGET, FINISHED, HEADER, PIN_NONE, PIN_PENDING, UNWIND,
};
use crate::shared::Shared;
use crate::stack::{self, Pool};
use crate::sync::lock;
use crate::worker::WorkerLocal;
use hoare_core::sched::ProcState;
use std::cell::Cell;
use std::panic::Location;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a new process needs besides its body.
pub(crate) struct SpawnOpts<'a> {
    pub(crate) name: Option<Box<str>>,
    pub(crate) stack_size: Option<usize>,
    pub(crate) pinned: bool,
    /// Where it was spawned (for reports).
    pub(crate) site: &'static Location<'static>,
    /// See `Proc::captures`.
    pub(crate) captures: (usize, usize),
    pub(crate) shared: &'a Arc<Shared>,
}

/// Why a spawn failed: the runtime has shut down, or the spawn itself failed (a
/// stack size out of range, the OS refused memory).
#[derive(Debug)]
pub(crate) enum SpawnError {
    ShutDown,
    Io(std::io::Error),
}

impl From<std::io::Error> for SpawnError {
    fn from(e: std::io::Error) -> Self {
        SpawnError::Io(e)
    }
}

/// Takes one stack slot of size `size` (`None`: the runtime's default).
fn take_slot(
    shared: &Shared,
    local: Option<&WorkerLocal>,
    size: Option<usize>,
) -> std::io::Result<(*const Pool, usize)> {
    let custom =
        size.filter(|&s| s.div_ceil(stack::PAGE) != shared.default_stack.div_ceil(stack::PAGE));
    match (custom, local) {
        (None, Some(l)) => Ok((&shared.pool, l.take_slot()?)),
        (None, None) => {
            let mut v = Vec::with_capacity(1);
            shared.pool.alloc_batch(&mut v, 1)?;
            Ok((&shared.pool, v[0]))
        }
        (Some(size), _) => {
            let mut pools = lock(&shared.pools);
            let pool = match pools
                .iter()
                .find(|p| p.usable() >= size && p.usable() - size < stack::PAGE * 2)
            {
                Some(p) => &**p as *const Pool,
                None => {
                    // Checks the size (`InvalidInput` when absurd) before any
                    // memory is mapped.
                    pools.push(Box::new(Pool::new(size, HEADER)?));
                    &**pools.last().expect("pool") as *const Pool
                }
            };
            drop(pools);
            let mut v = Vec::with_capacity(1);
            // SAFETY: pools are boxed and live as long as the runtime.
            unsafe { (*pool).alloc_batch(&mut v, 1)? };
            Ok((pool, v[0]))
        }
    }
}

/// Creates a process running `body` and queues it. On failure `body` is dropped
/// (without running).
///
/// # Safety
/// Everything `body` borrows must outlive the process (the scope joins it first).
pub(crate) unsafe fn spawn_raw<F>(opts: SpawnOpts<'_>, body: F) -> Result<u64, SpawnError>
where
    F: FnOnce(),
{
    let shared: &Shared = opts.shared;
    let w = WorkerLocal::current();
    // SAFETY: a non-null worker pointer is this thread's live worker.
    let local = (!w.is_null())
        .then(|| unsafe { &*w })
        .filter(|w| ptr::eq(w.shared, shared));
    if shared.refuses_spawns(local.is_some() && !proc::current().is_null()) {
        return Err(SpawnError::ShutDown);
    }
    let (pool, slot) = take_slot(shared, local, opts.stack_size)?;
    shared.count_live(local.map(|l| l.index), 1);
    let cur = proc::current();
    let depth = if cur.is_null() {
        0
    } else {
        // SAFETY: the running process's header is valid while it runs.
        unsafe { (*cur).depth.saturating_add(1) }
    };
    let id = match local {
        Some(l) => l.next_id(),
        None => proc::fresh_ids(1),
    };
    // SAFETY: pools outlive the runtime's processes.
    let hp = unsafe { (*pool).header_at(slot) } as *mut Proc;
    // SAFETY: the slot is ours (just taken from the pool); the header range is
    // inside it, aligned to 64 and unused.
    unsafe {
        ptr::write(
            hp,
            Proc {
                state: ProcState::new(),
                sp: Cell::new(0),
                parent: Cell::new(0),
                worker: Cell::new(ptr::null()),
                shared: Arc::as_ptr(opts.shared).cast(),
                pool,
                id,
                depth,
                name: opts.name,
                site: opts.site,
                pin: Cell::new(if opts.pinned { PIN_PENDING } else { PIN_NONE }),
                timed_out: Cell::new(false),
                unwinding: Cell::new(false),
                waiting: Cell::new(ptr::null()),
                party: Proc::party_at(hp),
                captures: opts.captures,
                live: Cell::new(true),
                timer: Cell::new(None),
                budget: Cell::new(BUDGET),
                slot,
            },
        );
        // Atomic stores only (see `ProcTag`): shutdown may read a stale tag.
        let tag = &*ProcTag::of(hp);
        tag.id.store(id, Ordering::Relaxed);
        tag.site.store(
            opts.site as *const Location<'static> as *mut _,
            Ordering::Relaxed,
        );
        start(hp, body);
    }
    // SAFETY: fully initialised above; we hold the only reference.
    let t = unsafe { Task::from_ptr(hp) };
    match local {
        Some(l) if !proc::current().is_null() => {
            if !l.push_next(t) && !l.solo {
                // Its spawner may go on computing: a worker that sleeps for want of
                // work should come and look (after `GRACE` it takes the process).
                shared.idle.notify_weak();
            }
        }
        _ => shared.push_remote(t),
    }
    Ok(id)
}

/// A new process's body and header, placed at the top of its stack for its
/// first run (see `start`).
struct Start<F> {
    proc: *const Proc,
    body: F,
}

/// Bodies larger than this are boxed rather than placed on the new stack.
const MAX_INLINE_BODY: usize = 4096;

/// Prepares the context of the process at `hp`: its body at the top of its
/// stack, and a first switch that runs `entry::<F>`.
///
/// # Safety
/// `hp` is a freshly written header at the top of its slot's stack.
unsafe fn start<F: FnOnce()>(hp: *mut Proc, body: F) {
    if std::mem::size_of::<F>() > MAX_INLINE_BODY {
        let b: Box<dyn FnOnce() + '_> = Box::new(body);
        // SAFETY: forwarded.
        return unsafe { place(hp, b) };
    }
    // SAFETY: forwarded.
    unsafe { place(hp, body) }
}

/// `start` for a body placed on the stack.
///
/// # Safety
/// As `start`.
unsafe fn place<F: FnOnce()>(hp: *mut Proc, body: F) {
    let top = hp as usize;
    let at =
        (top - std::mem::size_of::<Start<F>>()) & !(std::mem::align_of::<Start<F>>().max(16) - 1);
    // SAFETY: the slot's stack lies below the header and is larger than
    // `MAX_INLINE_BODY` plus the initial frame; nothing uses it yet.
    unsafe {
        (at as *mut Start<F>).write(Start { proc: hp, body });
        (*hp).sp.set(ctx::init(at, entry::<F>, at));
    }
}

/// The base of every process's stack: completes the first switch's handoff,
/// runs the body (the shutdown sweep's forced unwinding ends here), and returns
/// to its worker (or the sweep) for good.
unsafe extern "C" fn entry<F: FnOnce()>(obj: usize, arg: usize) -> ! {
    // SAFETY: `start` placed it there; it is read once.
    let Start { proc, body } = unsafe { (obj as *const Start<F>).read() };
    if arg == UNWIND {
        // Never started: dropping the body is all its unwinding.
        if catch_unwind(AssertUnwindSafe(move || drop(body))).is_err() {
            std::process::abort();
        }
    } else {
        let r = catch_unwind(AssertUnwindSafe(move || {
            // SAFETY: what the first switch into us passed.
            unsafe { proc::landed(arg) };
            body()
        }));
        // Only the sweep's forced unwinding gets here (bodies catch their panics);
        // a payload whose drop panics must not unwind past the stack's base.
        if catch_unwind(AssertUnwindSafe(move || drop(r))).is_err() {
            std::process::abort();
        }
    }
    // SAFETY: the header is valid until whoever we switch to releases it, and we
    // never run again.
    unsafe {
        let p = &*proc;
        ctx::switch(p.sp.as_ptr(), p.parent.get(), FINISHED);
    }
    std::process::abort()
}
