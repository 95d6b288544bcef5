//! Spawning a process: a stack slot (from the worker's cache, or a pool of its
//! size), the header written at its top, the coroutine, and the task queued on
//! the spawner's worker (its next slot) or, from outside, the global queue.

use crate::proc::{self, Proc, Req, Task, BUDGET, HEADER, PIN_NONE, PIN_PENDING};
use crate::shared::Shared;
use crate::stack::{self, Pool, SlotStack};
use crate::sync::lock;
use crate::worker::WorkerLocal;
use corosensei::{Coroutine, Yielder};
use hoare_core::sched::ProcState;
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::panic::Location;
use std::ptr;
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
                coro: UnsafeCell::new(MaybeUninit::uninit()),
                yielder: Cell::new(ptr::null()),
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
                parked_sp: Cell::new(0),
                captures: opts.captures,
                live: Cell::new(true),
                timer: Cell::new(None),
                budget: Cell::new(BUDGET),
                slot,
            },
        );
        let hpu = hp as usize;
        let coro = Coroutine::with_stack_unchecked(
            SlotStack::new(slot, hp as usize),
            move |y: &Yielder<(), Req>, ()| {
                (*(hpu as *const Proc)).yielder.set(y);
                body();
            },
        );
        (*(*hp).coro.get()).write(coro);
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
