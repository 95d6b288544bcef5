//! Pooled, guarded process stacks carved from big slabs.
//!
//! A slab is one `mmap(MAP_NORESERVE)` holding many slots. Each slot is
//! `[guard page][usable stack ... ][Proc header][colour]`: the process's header
//! lives at the top of its own stack slot, so a spawn allocates nothing else and a
//! blocked process touches one page for both. The header, and so the stack below
//! it, starts at one of 31 offsets in the top page (its colour), and slots are an
//! odd number of pages apart, so that the headers and top frames of many processes
//! spread over the caches' sets (see `colour`). Guard pages are installed as
//! slots are first carved, in batches, outside the pool's lock, with
//! `MADV_GUARD_INSTALL` (no VMA per guard, so a million stacks fit under
//! `vm.max_map_count`), falling back to `mprotect(PROT_NONE)` on kernels without it
//! (before Linux 6.13). Which of the two is decided once per OS process by a probe
//! on a mapping of its own: a failure on a real slab (out of memory, say) fails
//! that spawn alone and never changes how later guards are installed.
//!
//! A pool has a thread of its own (`hoare-stacks`, started the first time it has
//! work, at idle priority: see `idle_priority`) that does the pool's system
//! calls off the workers:
//! * *Trimming.* Free slots above [`KEEP_RESIDENT`] give their memory back to the
//!   OS there, not on the worker that freed them: a burst of processes ending (a
//!   join of many) does not wait for the `MADV_DONTNEED` of each one's stack. It
//!   waits [`TRIM_DELAY`] (a second) after the excess arises before it starts, as
//!   Go's scavenger returns freed stacks lazily: a burst of spawns that follows
//!   reuses them resident. Idle memory is back to `KEEP_RESIDENT` slots' worth a
//!   little after that.
//! * *Preparing ahead.* The first write to a new slot's top page (its header) is a
//!   page fault costing about half a spawn on the VMs measured (BENCHMARKS.md,
//!   "Spawn: where the time goes"). Once a pool has handed out [`PREP_START`] slots
//!   that were not resident, the thread keeps up to `ahead` slots carved, guarded
//!   and with their top pages made resident (written once) in the `ready`
//!   list, so that a burst of spawns takes slots that do not fault while another
//!   core pays for the next ones. `ahead` doubles (from [`PREP_MIN`] to
//!   [`PREP_MAX`]) each time a refill finds `ready` empty, and drops to 0 (the
//!   prepared slots given back to the OS) when `TRIM_DELAY` passes with no refill
//!   taking from it: an idle pool keeps no prepared slots, and its thread sleeps.
//!   Idle workers help (see [`Pool::help_prepare`]): at idle priority the
//!   thread gets no core while a worker spins, and on 2 workers a burst's
//!   spawner took three quarters of the faults itself. Whoever prepares also
//!   carves and guards slots in bulk ahead of the refills, which then carve
//!   only what they lack: a burst's spawner seldom installs a guard.
//!
//! Sizes are checked: a stack larger than [`MAX_STACK`] (or one whose slot size
//! would overflow) is refused with [`std::io::ErrorKind::InvalidInput`], and a
//! failed `mmap` or guard installation comes back as the OS error.

use crate::sync::lock;
use corosensei::stack::valgrind::ValgrindStackRegistration;
use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(crate) const PAGE: usize = 4096;
pub(crate) const GUARD: usize = PAGE;
const MADV_GUARD_INSTALL: libc::c_int = 102;
/// Ranges per `process_madvise` call (the kernel's `UIO_MAXIOV`).
const IOV_MAX: usize = 1024;
/// Free slots kept resident in a pool; the trimmer gives the memory of further
/// ones back to the OS.
const KEEP_RESIDENT: usize = 4096;
/// Slots the trimmer takes out of the free list at a time (one or a few
/// `process_madvise` calls), so that the pool's lock is never held for long.
const TRIM_BATCH: usize = 1024;
/// How long free slots above `KEEP_RESIDENT` stay resident before the trimmer
/// gives their memory back.
const TRIM_DELAY: Duration = Duration::from_millis(1000);
/// Slots handed out unprepared (not resident) before the pool's thread starts
/// preparing slots ahead: a runtime that spawns fewer processes at once (a
/// thousand, say) gets no prepared memory and no thread for it (a thread
/// started for a short-lived runtime costs more than it saves). As many as the
/// free slots that start it for trimming.
const PREP_START: usize = KEEP_RESIDENT;
/// The least and most slots the pool's thread keeps prepared once it does: at
/// most 4 MiB of top pages (a few milliseconds of spawns; the buffer only has to
/// cover the moments the thread waits for a core).
const PREP_MIN: usize = 256;
const PREP_MAX: usize = 1024;
/// Slots the pool's thread prepares between two looks at its lists.
const PREP_BATCH: usize = 128;
/// Slots an idle worker prepares between two looks for processes (see
/// [`Pool::help_prepare`]): some 40 µs of page faults on the VMs measured.
const HELP_BATCH: usize = 32;
/// Bytes below a stack's base that are populated with its top page (the first
/// frames of the coroutine, where they cross into the page below).
const PREP_BELOW: usize = 256;
/// New slots are carved, and their guards installed (one `process_madvise`),
/// this many at a time at least; those not needed yet are listed as released.
/// Small batches (a refill's 128) cost no more in all, but paused a burst's
/// spawner more often, and a second worker took more of the burst meanwhile:
/// StressedAlt on 2 workers then settled far more often in its slow mode, its
/// writers split across the cores (BENCHMARKS.md, "Spawn: the address space's
/// locks"). 512 is about what one 64 MiB slab held before slabs grew.
const CARVE_BATCH: usize = 512;
/// Virtual bytes per slab (slabs are `MAP_NORESERVE`, so this costs address space
/// only): about 7,700 default stacks. Large, so that a burst of spawns rarely maps
/// one: mapping a slab (and advising it `MADV_NOHUGEPAGE`) changes the address
/// space's mappings, which stalls every page fault in flight on it, the other
/// workers' and the pool thread's included (BENCHMARKS.md, "Spawn: the address
/// space's locks"). Where the OS refuses that much (strict overcommit, an address
/// space limit), a slab is mapped smaller (see `Geometry::new_slab`).
const SLAB_BYTES: usize = 1 << 30;
/// The largest usable stack a process may ask for: 1 GiB (Go's limit for a
/// goroutine's stack on 64-bit systems). Only the pages a process touches cost
/// memory, but each stack's slot costs its size in address space.
pub(crate) const MAX_STACK: usize = 1 << 30;
/// The smallest usable stack (smaller requests are rounded up to it).
const MIN_STACK: usize = 16 * 1024;

/// How guard pages are installed: 0 not probed yet, 1 madvise guard, 2 mprotect.
static GUARD_MODE: AtomicU8 = AtomicU8::new(0);
const MODE_MADVISE: u8 = 1;
const MODE_MPROTECT: u8 = 2;

/// How far below the top of its slot a slot's header (and so its stack) starts.
///
/// Stack colouring: slots are a whole number of pages apart, so at one offset in
/// every slot the headers and the stacks' top frames of all processes would map
/// to the same few cache sets (L1 is indexed by the offset in the page, L2 by a
/// few bits more), and a network of a few hundred processes would miss in L2 on
/// every header it wakes. Each slot starts at one of 31 offsets, 64 bytes apart.
/// Measured with callgrind's cache simulation (32 KiB L1, 512 KiB L2, as this
/// machine's cores), ring of 503 processes, per hop: see BENCHMARKS.md.
#[inline]
fn colour(slot: usize) -> usize {
    ((slot >> 12) % 31) * 64 + 64
}

struct Slab {
    base: usize,
    /// Slots the slab holds: it maps `slots` times the pool's slot size.
    slots: usize,
    carved: usize,
    _valgrind: Vec<ValgrindStackRegistration>,
}

// SAFETY: the registration is an id with a no-op outside valgrind; moving it between
// threads is fine.
unsafe impl Send for Slab {}

/// A pool's slot layout (what its thread needs to carve and advise slots).
#[derive(Clone, Copy)]
struct Geometry {
    /// Bytes from slot start to slot end.
    slot: usize,
    /// Offset of the top of the usable range within the slot: the header (and
    /// the stack below it) starts a colour lower (see `header_at`).
    header_offset: usize,
    /// Slots per slab, when the OS maps it whole.
    per_slab: usize,
    /// A test's stand-in for an OS that refuses mappings larger than this.
    #[cfg(test)]
    refuse_above: usize,
}

impl Geometry {
    /// Where the process header of `slot` lives (see [`Pool::header_at`]).
    #[inline]
    fn header_at(&self, slot: usize) -> usize {
        slot + self.header_offset - colour(slot)
    }

    /// The range of a slot that a new process touches first (its header and the
    /// top of its stack), in whole pages: what preparing a slot populates.
    fn top_range(&self, slot: usize) -> (usize, usize) {
        let low = self.header_at(slot) - PREP_BELOW;
        let start = (low & !(PAGE - 1)).max(slot + GUARD);
        (start, slot + self.slot - start)
    }

    /// Maps a new slab: `per_slab` slots, or fewer where the OS refuses that
    /// much address space (`ENOMEM`: strict overcommit accounting, which
    /// ignores `MAP_NORESERVE`, or an address space limit), halving down to one
    /// slot. Its guard pages are installed as its slots are carved (see
    /// `take_unprepared`).
    fn new_slab(&self) -> io::Result<Slab> {
        let mut slots = self.per_slab;
        let base = loop {
            // Cannot overflow: `per_slab` slots take at most `SLAB_BYTES`, or
            // `per_slab` is 1 and `layout` keeps a slot under 2 GiB.
            let len = slots * self.slot;
            #[cfg(test)]
            if len > self.refuse_above && slots > 1 {
                slots /= 2;
                continue;
            }
            // SAFETY: a fresh anonymous private mapping; checked for failure below.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if base != libc::MAP_FAILED {
                break base as usize;
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOMEM) && slots > 1 {
                slots /= 2;
                continue;
            }
            return Err(io::Error::new(
                e.kind(),
                format!("hoare: cannot map {len} bytes for process stacks: {e}"),
            ));
        };
        let len = slots * self.slot;
        // Transparent huge pages would make every stack top in a 2 MiB range
        // resident at once; a blocked process should cost one 4 KiB page.
        // SAFETY: advice on a mapping we own; failure is harmless.
        unsafe { libc::madvise(base as *mut libc::c_void, len, libc::MADV_NOHUGEPAGE) };
        Ok(Slab {
            base,
            slots,
            carved: 0,
            _valgrind: Vec::new(),
        })
    }

    /// Takes `n` never-used slots: released ones (guarded) into `out`, then
    /// unguarded ones into `bare` (see [`guard_bare`]): those whose guards the
    /// OS refused before, then new ones carved (see [`carve`](Self::carve)), at
    /// least `min_carve` of them (or a slab's worth, if less). On failure (the
    /// OS refused a mapping) both may have received some.
    ///
    /// Guards are installed by the caller, outside the pool's lock: a batch of
    /// them holds the address space's lock for reading, and with it held the
    /// pool's lock stalled the other party (spawner or pool thread) for as long.
    fn take_unprepared(
        &self,
        g: &mut Inner,
        out: &mut Vec<usize>,
        bare: &mut Vec<usize>,
        n: usize,
        min_carve: usize,
    ) -> io::Result<()> {
        let take = n.min(g.released.len());
        let at = g.released.len() - take;
        out.extend(g.released.drain(at..));
        let mut missing = n - take;
        let take = missing.min(g.unguarded.len());
        let at = g.unguarded.len() - take;
        bare.extend(g.unguarded.drain(at..));
        missing -= take;
        if missing > 0 {
            // Never more than a slab's worth beyond the need: a pool of huge
            // stacks (one per slab) carves only what it is asked for.
            missing = missing.max(min_carve.min(self.per_slab));
        }
        self.carve(g, bare, missing)
    }

    /// Carves `missing` new slots into `bare`, mapping a new slab when the last
    /// is used up. On failure (the OS refused a mapping) `bare` may have
    /// received some.
    fn carve(&self, g: &mut Inner, bare: &mut Vec<usize>, mut missing: usize) -> io::Result<()> {
        while missing > 0 {
            if g.slabs.last().is_none_or(|s| s.carved == s.slots) {
                let slab = self.new_slab()?;
                g.slabs.push(slab);
            }
            let slab = g.slabs.last_mut().expect("slab");
            let k = (slab.slots - slab.carved).min(missing);
            for _ in 0..k {
                let slot = slab.base + slab.carved * self.slot;
                slab.carved += 1;
                slab._valgrind.push(ValgrindStackRegistration::new(
                    (slot + GUARD) as *mut u8,
                    self.header_offset - GUARD,
                ));
                bare.push(slot);
            }
            missing -= k;
        }
        Ok(())
    }
}

struct Inner {
    /// Free slots whose pages may still be resident, oldest first; handed out
    /// newest first. The trimmer takes the oldest of those above `KEEP_RESIDENT`.
    free: VecDeque<usize>,
    /// Slots the pool's thread prepared (top pages populated), never used since;
    /// handed out after `free`.
    ready: Vec<usize>,
    /// Free slots whose memory went back to the OS (guards kept); handed out
    /// before new slots are carved.
    released: Vec<usize>,
    /// Carved slots whose guard pages the OS refused (see `guard_bare`): taken,
    /// and their guards tried again, before new slots are carved.
    unguarded: Vec<usize>,
    slabs: Vec<Slab>,
    /// How many slots the pool's thread keeps in `ready` (0: it prepares none).
    ahead: usize,
    /// Slots out of every list being prepared (by the pool's thread or an idle
    /// worker, see [`Pool::help_prepare`]): they count towards `ahead`.
    preparing: usize,
    /// Slots handed out unprepared since `ahead` was last 0 (see `PREP_START`).
    fresh: usize,
    /// Counts the refills that took slots beyond `free`: the pool's thread gives
    /// the prepared slots back when it has not changed for `TRIM_DELAY`.
    demand: u64,
    thread: Thread,
    /// The pool's thread waits for work (a notify is needed to wake it early).
    thread_idle: bool,
    /// The pool is going away: its thread stops.
    stop: bool,
}

/// Whether the pool's thread runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Thread {
    NotStarted,
    Running,
    /// The OS refused the thread: `free_batch` releases the excess itself, and
    /// nothing is prepared ahead.
    Failed,
}

/// What a pool shares with its thread.
struct Lists {
    inner: Mutex<Inner>,
    /// Wakes the pool's thread (free slots above `KEEP_RESIDENT`, `ready` below
    /// `ahead`, or `stop`).
    wake: Condvar,
    /// `ready` and `preparing` were below `ahead` when last looked at: an idle
    /// worker's hint that it may help (see [`Pool::help_prepare`]), read
    /// without the lock and checked again under it.
    behind: AtomicBool,
    /// `TRIM_DELAY` (shorter in tests).
    delay: Duration,
    /// `PREP_START` (other in tests).
    prep_start: usize,
    /// The OS "refuses" the pool its thread: how a test reaches the
    /// fallback, which otherwise needs thread or memory limits that a test
    /// cannot set without harming the other tests of its process.
    #[cfg(test)]
    refuse_thread: bool,
}

/// A pool of stack slots of one size.
pub(crate) struct Pool {
    geo: Geometry,
    lists: Arc<Lists>,
    /// The pool's thread, joined when the pool goes.
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Slots leaked on purpose (a process unwound at shutdown whose stack another
    /// party may still write to): while any is, the slabs are never unmapped.
    kept: std::sync::atomic::AtomicUsize,
}

impl Pool {
    /// A pool whose stacks have `usable` bytes (rounded up to pages, at least
    /// 16 KiB) and a header of `header` bytes on top. Refuses (`InvalidInput`) a
    /// `usable` above [`MAX_STACK`].
    pub(crate) fn new(usable: usize, header: usize) -> io::Result<Self> {
        let (slot, header_offset) = layout(usable, header)?;
        Ok(Self {
            geo: Geometry {
                slot,
                header_offset,
                // Huge stacks get slabs of their own (a slab of several would cost
                // several times their size in address space).
                per_slab: (SLAB_BYTES / slot).max(1),
                #[cfg(test)]
                refuse_above: usize::MAX,
            },
            lists: Arc::new(Lists {
                inner: Mutex::new(Inner {
                    free: VecDeque::new(),
                    ready: Vec::new(),
                    released: Vec::new(),
                    unguarded: Vec::new(),
                    slabs: Vec::new(),
                    ahead: 0,
                    preparing: 0,
                    fresh: 0,
                    demand: 0,
                    thread: Thread::NotStarted,
                    thread_idle: false,
                    stop: false,
                }),
                wake: Condvar::new(),
                behind: AtomicBool::new(false),
                delay: TRIM_DELAY,
                prep_start: PREP_START,
                #[cfg(test)]
                refuse_thread: false,
            }),
            thread: Mutex::new(None),
            kept: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    pub(crate) fn usable(&self) -> usize {
        self.geo.header_offset - GUARD
    }

    /// Where the process header of `slot` lives: near the top of the slot, at
    /// its colour (see [`colour`]); its stack grows down from there.
    #[inline]
    pub(crate) fn header_at(&self, slot: usize) -> usize {
        self.geo.header_at(slot)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.lists.inner)
    }

    /// Moves `n` free slots into `out`: resident free ones first, then prepared
    /// ones, then released or new ones (mapping a new slab when none is left); on
    /// failure (the OS refused the mapping or its guard pages) `out` may have
    /// received some of them. Taking slots beyond the resident free ones is
    /// demand the pool's thread prepares for (see the module's comment).
    pub(crate) fn alloc_batch(&self, out: &mut Vec<usize>, n: usize) -> io::Result<()> {
        let want = out.len() + n;
        let mut g = self.lock();
        let take = n.min(g.free.len());
        let at = g.free.len() - take;
        out.extend(g.free.drain(at..));
        let mut missing = n - take;
        if missing == 0 {
            return Ok(());
        }
        g.demand = g.demand.wrapping_add(1);
        let take = missing.min(g.ready.len());
        let at = g.ready.len() - take;
        out.extend(g.ready.drain(at..));
        missing -= take;
        let mut r = Ok(());
        let mut bare = Vec::new();
        if missing > 0 {
            g.fresh = g.fresh.saturating_add(missing);
            if g.fresh >= self.lists.prep_start {
                g.ahead = (g.ahead * 2).clamp(PREP_MIN, PREP_MAX);
            }
            // While slots are prepared ahead (a burst), the pool's thread and
            // idle workers carve and guard in bulk (see `prepare_batch`): a
            // refill carves only what it lacks, so that a burst's spawner
            // seldom installs guards itself.
            let min_carve = if g.ahead > 0 { 0 } else { CARVE_BATCH };
            r = self
                .geo
                .take_unprepared(&mut g, out, &mut bare, missing, min_carve);
        }
        if note_behind(&self.lists, &g) {
            self.wake(g);
        } else {
            drop(g);
        }
        let guarded = guard_bare(&self.lists, &mut bare, out, want);
        r.and(guarded)
    }

    /// Gives `slots` back. They stay resident; when more than `KEEP_RESIDENT`
    /// are free, the pool's thread is woken (started the first time) to give the
    /// memory of the oldest ones back to the OS (see [`release_and_list`]). If
    /// the OS refuses the thread, the caller releases them itself.
    pub(crate) fn free_batch(&self, slots: impl Iterator<Item = usize>) {
        let mut g = self.lock();
        g.free.extend(slots);
        if g.free.len() <= KEEP_RESIDENT {
            return;
        }
        if g.thread == Thread::Failed {
            return self.release_excess(g);
        }
        self.wake(g);
    }

    /// Wakes the pool's thread if it waits, or starts it the first time.
    fn wake(&self, mut g: MutexGuard<'_, Inner>) {
        match g.thread {
            Thread::Running => {
                if g.thread_idle {
                    g.thread_idle = false;
                    drop(g);
                    self.lists.wake.notify_one();
                }
            }
            Thread::NotStarted => {
                g.thread = Thread::Running;
                drop(g);
                self.start_thread();
            }
            Thread::Failed => {}
        }
    }

    /// Starts the pool's thread, or marks it failed, prepares nothing ahead, and
    /// releases the excess here (as `free_batch` does from then on).
    #[cold]
    fn start_thread(&self) {
        match self.spawn_thread() {
            Ok(h) => *lock(&self.thread) = Some(h),
            Err(_) => {
                let mut g = self.lock();
                g.thread = Thread::Failed;
                g.ahead = 0;
                note_behind(&self.lists, &g);
                self.release_excess(g);
            }
        }
    }

    /// The pool's thread, if the OS gives it one.
    fn spawn_thread(&self) -> io::Result<JoinHandle<()>> {
        #[cfg(test)]
        if self.lists.refuse_thread {
            return Err(io::Error::other(
                "hoare: the stack pool's thread (refused by a test)",
            ));
        }
        let lists = Arc::clone(&self.lists);
        let geo = self.geo;
        std::thread::Builder::new()
            .name("hoare-stacks".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                idle_priority();
                tend(&lists, geo)
            })
    }

    /// Without the pool's thread: takes the oldest free slots above
    /// `KEEP_RESIDENT` out of the free list and gives their memory back here
    /// (see [`release_and_list`]).
    fn release_excess(&self, mut g: MutexGuard<'_, Inner>) {
        let n = g.free.len().saturating_sub(KEEP_RESIDENT);
        let rest: Vec<usize> = g.free.drain(..n).collect();
        drop(g);
        release_and_list(&self.lists, self.geo.slot, rest);
    }

    /// Prepares a few slots (`HELP_BATCH`) if the pool is behind with them (a
    /// burst of spawns outruns its thread), on the calling thread: an idle
    /// worker's, which would otherwise spin or sleep while the pool's thread,
    /// at idle priority, waits for its core (BENCHMARKS.md, "Spawn: idle
    /// workers prepare stack slots"). Returns whether it prepared any. Costs one
    /// relaxed load when the pool is not behind, and never waits for the
    /// pool's lock.
    pub(crate) fn help_prepare(&self) -> bool {
        if !self.lists.behind.load(Ordering::Relaxed) {
            return false;
        }
        let g = match self.lists.inner.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        prepare_batch(&self.lists, &self.geo, g, HELP_BATCH).1
    }

    /// Leaks one slot for good (see `kept`).
    pub(crate) fn keep_slot(&self) {
        self.kept.fetch_add(1, Ordering::Relaxed);
    }

    /// Every slot ever handed out (for the shutdown sweep).
    pub(crate) fn carved_slots(&self) -> Vec<usize> {
        let g = self.lock();
        g.slabs
            .iter()
            .flat_map(|s| (0..s.carved).map(move |k| s.base + k * self.geo.slot))
            .collect()
    }
}

/// Refuses (`InvalidInput`) a usable stack size above [`MAX_STACK`]: a process's,
/// or a thread process's thread's.
pub(crate) fn check_size(usable: usize) -> io::Result<()> {
    if usable > MAX_STACK {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "hoare: a stack of {usable} bytes is larger than the largest allowed, \
                 {MAX_STACK} bytes (1 GiB)"
            ),
        ));
    }
    Ok(())
}

/// The slot size and header offset of stacks with `usable` bytes and a header of
/// `header` bytes, with checked arithmetic: `InvalidInput` above [`MAX_STACK`].
fn layout(usable: usize, header: usize) -> io::Result<(usize, usize)> {
    check_size(usable)?;
    // No overflow: `usable` ≤ 1 GiB and the header is a process header.
    let usable = usable.max(MIN_STACK).div_ceil(PAGE) * PAGE;
    let header = header.div_ceil(64) * 64;
    let mut slot = GUARD + (usable + header).div_ceil(PAGE) * PAGE;
    // An odd number of pages apart, slots start at every page offset modulo the
    // L2's set span (64 KiB here): an even stride (the default stack's slot is 34
    // pages) left half of the L2's sets unused by process stacks (see `colour`).
    // The extra page is stack the process may use; it costs address space only.
    if (slot / PAGE).is_multiple_of(2) {
        slot += PAGE;
    }
    Ok((slot, slot - header))
}

impl Drop for Pool {
    fn drop(&mut self) {
        // The pool's thread may be advising slab memory: it stops before any unmap.
        self.lock().stop = true;
        self.lists.wake.notify_one();
        if let Some(h) = lock(&self.thread).take() {
            let _ = h.join();
        }
        if *self.kept.get_mut() > 0 {
            // Some stack may still be written to (see `kept`): leak the slabs.
            return;
        }
        let mut g = self.lock();
        for s in g.slabs.drain(..) {
            // Deregister from valgrind before the memory goes.
            drop(s._valgrind);
            // SAFETY: the slab was mapped by `new_slab` with this length, and every
            // process on it has finished or been unwound (the runtime's shutdown).
            unsafe { libc::munmap(s.base as *mut libc::c_void, s.slots * self.geo.slot) };
        }
    }
}

/// Puts the calling thread (the pool's) in the `SCHED_IDLE` class: what it does
/// (the page faults ahead of spawns, giving memory back) is worth a core no
/// worker wants, not a worker's time. At normal priority, during a burst of
/// 200,000 spawns on 2 workers it took the cores from the workers and a 1 ms
/// sleep on the other worker woke up to 87 ms late (4.6 ms before the thread
/// prepared slots; 6.3 ms in this class: BENCHMARKS.md, "Spawn: slots prepared
/// ahead by touching them"). While it holds the pool's lock and waits for a
/// core, it does not stall a worker long: a worker that blocks on the lock
/// frees its core for it. If the OS refuses, the thread runs as it is.
fn idle_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: a plain system call on the calling thread (0), with a valid
    // parameter block; a failure changes nothing.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
}

/// The pool's thread: prepares slots ahead while `ready` is below `ahead`;
/// takes the oldest free slots above `KEEP_RESIDENT`, `TRIM_BATCH` at a time,
/// once they have been in excess for `delay`, and gives their memory back;
/// gives the prepared slots back when `delay` passes without a refill taking
/// any; otherwise sleeps (without a timeout when none of that is pending). Ends
/// when the pool goes. System calls are made outside the lock, on slots taken
/// out of every list meanwhile.
fn tend(lists: &Lists, geo: Geometry) {
    let mut g = lock(&lists.inner);
    // When the current excess of free slots may be trimmed.
    let mut trim_at: Option<Instant> = None;
    // Since when `demand` has stood at this value while slots are prepared.
    let mut unused: Option<(Instant, u64)> = None;
    loop {
        if g.stop {
            return;
        }
        let now = Instant::now();
        let (g2, prepared) = prepare_batch(lists, &geo, g, PREP_BATCH);
        g = g2;
        if prepared {
            continue;
        }
        let excess = g.free.len().saturating_sub(KEEP_RESIDENT);
        if excess == 0 {
            trim_at = None;
        } else if now >= *trim_at.get_or_insert(now + lists.delay) {
            let batch: Vec<usize> = g.free.drain(..excess.min(TRIM_BATCH)).collect();
            drop(g);
            release_and_list(lists, geo.slot, batch);
            g = lock(&lists.inner);
            continue;
        }
        if g.ahead == 0 && g.ready.is_empty() {
            unused = None;
        } else {
            match unused {
                Some((since, d)) if d == g.demand => {
                    if now >= since + lists.delay {
                        // Nothing taken for `delay`: idle, give them back.
                        unused = None;
                        g.ahead = 0;
                        g.fresh = 0;
                        note_behind(lists, &g);
                        let batch = std::mem::take(&mut g.ready);
                        drop(g);
                        release_and_list(lists, geo.slot, batch);
                        g = lock(&lists.inner);
                        continue;
                    }
                }
                _ => unused = Some((now, g.demand)),
            }
        }
        let until = trim_at
            .into_iter()
            .chain(unused.map(|(since, _)| since + lists.delay))
            .min();
        g.thread_idle = true;
        g = match until {
            None => lists.wake.wait(g).unwrap_or_else(|p| p.into_inner()),
            Some(t) => {
                lists
                    .wake
                    .wait_timeout(g, t.saturating_duration_since(now))
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
        };
        g.thread_idle = false;
    }
}

/// Whether the pool is behind with prepared slots (`ready` and those being
/// prepared below `ahead`); stores it in `behind` for idle workers.
fn note_behind(lists: &Lists, g: &Inner) -> bool {
    let behind = g.ready.len() + g.preparing < g.ahead;
    lists.behind.store(behind, Ordering::Relaxed);
    behind
}

/// Prepares up to `max` slots if the pool is behind (see [`note_behind`]):
/// takes them out of every list (carving new ones if needed), installs their
/// guards and populates their top pages outside the lock, then lists them in
/// `ready`. Returns the lock, taken again, and whether it prepared any.
fn prepare_batch<'a>(
    lists: &'a Lists,
    geo: &Geometry,
    mut g: MutexGuard<'a, Inner>,
    max: usize,
) -> (MutexGuard<'a, Inner>, bool) {
    let have = g.ready.len() + g.preparing;
    if have >= g.ahead {
        return (g, false);
    }
    let n = (g.ahead - have).min(max);
    let mut batch = Vec::with_capacity(n);
    let mut bare = Vec::with_capacity(n);
    let mut mapped = geo.take_unprepared(&mut g, &mut batch, &mut bare, n, CARVE_BATCH);
    if mapped.is_ok() && bare.len() < CARVE_BATCH && g.released.len() < CARVE_BATCH / 2 {
        // Keep guarded slots in stock for a burst's refills (see
        // `alloc_batch`): they then take released slots, not carve.
        mapped = geo.carve(&mut g, &mut bare, CARVE_BATCH.min(geo.per_slab));
    }
    g.preparing += n;
    note_behind(lists, &g);
    drop(g);
    let guarded = guard_bare(lists, &mut bare, &mut batch, n);
    populate(geo, &batch);
    let mut g = lock(&lists.inner);
    g.preparing -= n;
    if mapped.is_err() || guarded.is_err() {
        // Out of memory or mappings: prepare nothing until demand comes
        // again (the spawn that needs a slot gets the error itself).
        g.ahead = 0;
    }
    g.ready.extend(batch);
    note_behind(lists, &g);
    (g, true)
}

/// Installs the guard pages of `bare` (carved slots out of every list, see
/// `Geometry::take_unprepared`) and moves them to `out` until it holds `want`
/// slots, listing the rest as released (guarded, never used); if the OS
/// refuses, lists them all as unguarded instead (a later take tries again) and
/// returns the error.
fn guard_bare(
    lists: &Lists,
    bare: &mut Vec<usize>,
    out: &mut Vec<usize>,
    want: usize,
) -> io::Result<()> {
    if bare.is_empty() {
        return Ok(());
    }
    match guard_mode().and_then(|mode| install_guards(bare, mode)) {
        Ok(()) => {
            let have = out.len();
            let keep = want.saturating_sub(have).min(bare.len());
            let extra = bare.split_off(keep);
            out.append(bare);
            if !extra.is_empty() {
                lock(&lists.inner).released.extend(extra);
            }
            Ok(())
        }
        Err(e) => {
            lock(&lists.inner).unguarded.append(bare);
            Err(io::Error::new(
                e.kind(),
                format!("hoare: cannot install the guard pages of process stacks: {e}"),
            ))
        }
    }
}

/// Makes the top pages of `slots` (taken out of every list meanwhile) resident
/// by writing a zero byte into each: the page fault is taken here, on the pool's
/// thread, instead of by the spawn that writes the header.
///
/// A write, not `MADV_POPULATE_WRITE`: the advice holds the address space's
/// lock (`mmap_lock`) for reading through a whole batch, and every `mprotect`
/// or `mmap` of the workers meanwhile (glibc grows a thread's heap arena with
/// `mprotect`) waits for it; a worker blocked there left the spawner idle for
/// most of the spawn phase (BENCHMARKS.md, "Spawn: slots prepared ahead by
/// touching them"). A write fault takes only the mapping's own lock.
fn populate(geo: &Geometry, slots: &[usize]) {
    for &s in slots {
        let (start, len) = geo.top_range(s);
        for page in (start..start + len).step_by(PAGE) {
            // SAFETY: a page of this slot's stack or header, mapped readable and
            // writable (guard pages lie below `top_range`); the slot is out of
            // every list, so no process uses it, and it was never used or its
            // memory was given back (it reads as zeros): writing a zero changes
            // nothing but residency.
            unsafe { (page as *mut u8).write_volatile(0) };
        }
    }
}

/// Gives the memory of `rest` (slots of `slot` bytes, out of every list) back to
/// the OS with [`release_slots`], then lists them as released.
fn release_and_list(lists: &Lists, slot: usize, rest: Vec<usize>) {
    let rest = release_slots(slot, rest);
    lock(&lists.inner).released.extend(rest);
}

/// Gives the memory of free slots (of `slot` bytes each) back to the OS, their
/// guards staying, in as few system calls as possible: adjacent slots are advised
/// as one range (a guard page inside such a range keeps its guard:
/// `MADV_DONTNEED` leaves guard markers and `PROT_NONE` alike), and the ranges go
/// to the kernel in batches of `IOV_MAX` per `process_madvise` where it allows
/// that. The slots must be out of every list meanwhile (nobody may take them);
/// returns them, sorted, to be listed as released.
fn release_slots(slot: usize, mut rest: Vec<usize>) -> Vec<usize> {
    if rest.is_empty() {
        return rest;
    }
    rest.sort_unstable();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &s in &rest {
        match ranges.last_mut() {
            // `s` starts where the previous range's last slot ends.
            Some((start, len)) if *start + *len == s => *len += slot,
            _ => ranges.push((s + GUARD, slot - GUARD)),
        }
    }
    // SAFETY: the ranges are the usable memory and headers of free slots of one
    // pool (no process uses them), out of the pool's lists, so nobody can take
    // them before the caller lists them as released.
    unsafe { release_ranges(&ranges) };
    rest
}

/// A pidfd for this process (for `process_madvise`), or -1 when unavailable.
fn self_pidfd() -> libc::c_int {
    static FD: OnceLock<libc::c_int> = OnceLock::new();
    *FD.get_or_init(|| {
        // SAFETY: plain syscall; the fd is kept for the life of the process.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) };
        if fd < 0 {
            -1
        } else {
            fd as libc::c_int
        }
    })
}

/// Applies `advice` to every `(address, length)` range, batching the ranges into
/// few `process_madvise` calls (Linux 6.13+ accepts any advice for the calling
/// process). Returns whether every range was advised; on `false` the caller falls
/// back to one `madvise` per range (all our advice is idempotent). `broken`
/// remembers, per kind of advice, that the kernel refused the call.
///
/// # Safety
/// Applying `advice` to the ranges must be sound (as for `madvise`).
unsafe fn process_madvise_all(
    ranges: &[(usize, usize)],
    advice: libc::c_int,
    broken: &AtomicBool,
) -> bool {
    let fd = self_pidfd();
    if fd < 0 || broken.load(Ordering::Relaxed) {
        return false;
    }
    let mut iov: Vec<libc::iovec> = Vec::with_capacity(ranges.len().min(IOV_MAX));
    for chunk in ranges.chunks(IOV_MAX) {
        iov.clear();
        iov.extend(chunk.iter().map(|&(a, len)| libc::iovec {
            iov_base: a as *mut libc::c_void,
            iov_len: len,
        }));
        let total: usize = chunk.iter().map(|&(_, len)| len).sum();
        // SAFETY: the caller vouches for the advice on every range; the iovec
        // array is valid for `iov.len()` entries.
        let r = unsafe {
            libc::syscall(
                libc::SYS_process_madvise,
                fd,
                iov.as_ptr(),
                iov.len(),
                advice,
                0,
            )
        };
        if r != total as libc::c_long {
            // The kernel does not know the call, or not this advice through it
            // (process_madvise takes any advice only since 6.13): stop trying.
            // Other failures (out of memory) are for this call alone.
            if r < 0
                && matches!(
                    io::Error::last_os_error().raw_os_error(),
                    Some(libc::EINVAL | libc::ENOSYS | libc::EPERM | libc::EBADF)
                )
            {
                broken.store(true, Ordering::Relaxed);
            }
            return false;
        }
    }
    true
}

/// Gives the memory of `ranges` back to the OS (`MADV_DONTNEED`): a batched
/// `process_madvise` (measured on the 2-core VM with 100,000 slots, one resident
/// page each: 0.65 µs per slot against 1.25 µs with one `madvise` each; 0.09 µs
/// when 128 adjacent slots form one range), else one `madvise` per range.
///
/// # Safety
/// Every range lies inside a slab and nobody uses its memory (it reads back as
/// zeros afterwards).
unsafe fn release_ranges(ranges: &[(usize, usize)]) {
    static BROKEN: AtomicBool = AtomicBool::new(false);
    // SAFETY: per our contract the ranges' contents may be discarded.
    if unsafe { process_madvise_all(ranges, libc::MADV_DONTNEED, &BROKEN) } {
        return;
    }
    for &(a, len) in ranges {
        // SAFETY: as above.
        unsafe { libc::madvise(a as *mut libc::c_void, len, libc::MADV_DONTNEED) };
    }
}

/// How this OS process installs guard pages, probed once: `MADV_GUARD_INSTALL` if
/// the kernel has it (Linux 6.13+), else `mprotect`. The probe advises a page of a
/// mapping of its own, so its outcome depends on the kernel alone: only `EINVAL`
/// (the kernel does not know the advice) selects `mprotect`. Any other failure
/// (the probe's own mapping failing for want of memory, say) is returned and the
/// question stays open for the next spawn.
fn guard_mode() -> io::Result<u8> {
    let mode = GUARD_MODE.load(Ordering::Relaxed);
    if mode != 0 {
        return Ok(mode);
    }
    // SAFETY: a fresh anonymous private mapping of two pages; checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            2 * PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the first page of the mapping we just made, which nothing uses.
    let r = unsafe { libc::madvise(p, PAGE, MADV_GUARD_INSTALL) };
    let err = io::Error::last_os_error();
    // SAFETY: our probe mapping; nothing refers to it any more.
    unsafe { libc::munmap(p, 2 * PAGE) };
    let mode = match r {
        0 => MODE_MADVISE,
        _ if err.raw_os_error() == Some(libc::EINVAL) => MODE_MPROTECT,
        _ => return Err(err),
    };
    GUARD_MODE.store(mode, Ordering::Relaxed);
    Ok(mode)
}

/// Installs a guard page at the start of each slot of `slots`, in the way `mode`
/// says (see [`guard_mode`]). With `MADV_GUARD_INSTALL`: in batches of `IOV_MAX`
/// ranges per `process_madvise` call where the kernel allows it (measured on the
/// 2-core VM: 0.48 µs per guard against 0.62 µs with one `madvise` each), else
/// one `madvise` per slot. Both ways are idempotent: slots whose guards failed
/// are tried again whole. A failure is returned and changes nothing for later
/// slots.
fn install_guards(slots: &[usize], mode: u8) -> io::Result<()> {
    if mode == MODE_MADVISE {
        static BROKEN: AtomicBool = AtomicBool::new(false);
        let ranges: Vec<(usize, usize)> = slots.iter().map(|&s| (s, GUARD)).collect();
        // SAFETY: each range is the first page of a slot of a mapping we own, not
        // in use yet; a guard over it is what the slot layout expects.
        if unsafe { process_madvise_all(&ranges, MADV_GUARD_INSTALL, &BROKEN) } {
            return Ok(());
        }
        for &s in slots {
            // SAFETY: the range is the first page of a slot in a mapping we own.
            let r = unsafe { libc::madvise(s as *mut libc::c_void, GUARD, MADV_GUARD_INSTALL) };
            if r != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        return Ok(());
    }
    for &s in slots {
        // SAFETY: as above; PROT_NONE on a page of our own mapping.
        let r = unsafe { libc::mprotect(s as *mut libc::c_void, GUARD, libc::PROT_NONE) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_sizes_are_refused_without_overflow() {
        for size in [usize::MAX, usize::MAX - 4095, 1 << 62, MAX_STACK + 1] {
            let e = Pool::new(size, 256).err().expect("refused");
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{size}: {e}");
            assert!(e.to_string().contains("larger than the largest"), "{e}");
        }
        let p = Pool::new(MAX_STACK, 256).expect("the largest allowed");
        assert!(p.usable() >= MAX_STACK);
        assert_eq!(p.geo.per_slab, 1);
        let p = Pool::new(0, 256).expect("rounded up");
        // Guard, 16 KiB and the header's page: 6 pages, made odd (see `layout`).
        assert_eq!(p.usable(), MIN_STACK + PAGE + (PAGE - 256));
        assert_eq!(p.geo.slot % (2 * PAGE), PAGE);
    }

    /// Every slot's header is 64-byte aligned, inside the slot's top page, above
    /// its stack and the colour the stack starts at, and the colours of
    /// consecutive slots differ (see `colour`).
    #[test]
    fn headers_are_coloured_inside_their_top_page() {
        let p = Pool::new(0, std::mem::size_of::<crate::proc::Proc>()).expect("pool");
        let mut slots = Vec::new();
        p.alloc_batch(&mut slots, 64).expect("slots");
        let mut offsets = std::collections::HashSet::new();
        for &s in &slots {
            let h = p.header_at(s);
            assert_eq!(h % 64, 0);
            assert_eq!(
                h / PAGE,
                (s + p.geo.slot - 1) / PAGE,
                "header in the top page"
            );
            assert!(h + std::mem::size_of::<crate::proc::Proc>() <= s + p.geo.slot);
            assert!(h - s - GUARD >= MIN_STACK);
            offsets.insert(h % PAGE);
        }
        assert_eq!(offsets.len(), 31, "every colour in 64 slots");
        p.free_batch(slots.iter().copied());
    }

    /// The trimmer gives back the memory of the oldest free slots above
    /// `KEEP_RESIDENT` (they read as zeros afterwards and are handed out again
    /// after the resident ones), keeps the newest `KEEP_RESIDENT` resident, and
    /// a pool whose trimmer waits out its delay can be dropped.
    #[test]
    fn trimmer_releases_the_oldest_excess() {
        let mut p = Pool::new(0, 256).expect("pool");
        let lists = Arc::get_mut(&mut p.lists).expect("no thread yet");
        lists.delay = Duration::from_millis(10);
        // Trimming alone here (see `prepares_ahead_...` for preparing).
        lists.prep_start = usize::MAX;
        let n = KEEP_RESIDENT + 100;
        let mut slots = Vec::new();
        p.alloc_batch(&mut slots, n).expect("slots");
        let top = |s: usize| p.header_at(s) as *mut u8;
        for &s in &slots {
            // SAFETY: the header range of a slot we hold.
            unsafe { top(s).write(1) };
        }
        p.free_batch(slots.iter().copied());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while p.lock().released.len() < 100 {
            assert!(
                std::time::Instant::now() < deadline,
                "the trimmer never ran"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let g = p.lock();
        assert_eq!(g.free.len(), KEEP_RESIDENT);
        let mut released = g.released.clone();
        released.sort_unstable();
        assert_eq!(released, slots[..100], "the oldest ones go");
        drop(g);
        for &s in &slots[..100] {
            // SAFETY: a released slot of this pool, nobody else's.
            let v = unsafe { top(s).read() };
            assert_eq!(v, 0, "released memory reads as zeros");
        }
        // SAFETY: as above, a resident free slot.
        let v = unsafe { top(slots[100]).read() };
        assert_eq!(v, 1, "kept resident");
        let mut again = Vec::new();
        p.alloc_batch(&mut again, KEEP_RESIDENT + 1).expect("slots");
        assert_eq!(again.iter().filter(|s| slots[..100].contains(s)).count(), 1);
        p.free_batch(again.into_iter());
        // Above the bound again: the trimmer sleeps out its delay; dropping the
        // pool stops it (a hang here is the failure).
        drop(p);
    }

    /// When the OS refuses the trimmer its thread, the caller of `free_batch`
    /// gives back the memory of the oldest free slots above `KEEP_RESIDENT`
    /// itself, at once, then and on every later `free_batch` (the pool is
    /// marked `Failed`, no thread is started): they are listed as released and
    /// read as zeros, the newest `KEEP_RESIDENT` stay resident. Catches a
    /// fallback that leaves the excess resident (the free list stays above
    /// the bound for good).
    #[test]
    fn a_refused_trimmer_leaves_the_caller_to_release_the_excess() {
        let mut p = Pool::new(0, 256).expect("pool");
        Arc::get_mut(&mut p.lists)
            .expect("no thread yet")
            .refuse_thread = true;
        let n = KEEP_RESIDENT + 100;
        let mut slots = Vec::new();
        p.alloc_batch(&mut slots, n).expect("slots");
        let top = |s: usize| p.header_at(s) as *mut u8;
        for &s in &slots {
            // SAFETY: the header range of a slot we hold.
            unsafe { top(s).write(1) };
        }
        p.free_batch(slots.iter().copied());
        {
            let g = p.lock();
            assert!(g.thread == Thread::Failed, "the refusal is recorded");
            assert_eq!(g.free.len(), KEEP_RESIDENT, "the excess left the free list");
            let mut released = g.released.clone();
            released.sort_unstable();
            assert_eq!(released, slots[..100], "the oldest ones go");
        }
        assert!(lock(&p.thread).is_none(), "no thread");
        for &s in &slots[..100] {
            // SAFETY: a released slot of this pool, nobody else's.
            let v = unsafe { top(s).read() };
            assert_eq!(v, 0, "released memory reads as zeros");
        }
        // SAFETY: as above, a resident free slot.
        let v = unsafe { top(slots[100]).read() };
        assert_eq!(v, 1, "kept resident");
        // Later frees above the bound: released by their caller too.
        let mut again = Vec::new();
        p.alloc_batch(&mut again, KEEP_RESIDENT + 10)
            .expect("slots");
        for &s in &again {
            // SAFETY: as above, a slot we hold.
            unsafe { top(s).write(2) };
        }
        p.free_batch(again.iter().copied());
        let g = p.lock();
        assert_eq!(g.free.len(), KEEP_RESIDENT);
        assert_eq!(g.released.len(), 100);
        let gone: Vec<usize> = again
            .iter()
            .copied()
            .filter(|s| !g.free.contains(s))
            .collect();
        drop(g);
        assert_eq!(gone.len(), 10);
        for s in gone {
            // SAFETY: as above, a released slot.
            let v = unsafe { top(s).read() };
            assert_eq!(v, 0, "released memory reads as zeros");
        }
    }

    /// Whether every page of `(start, len)` is resident (`mincore`).
    fn resident((start, len): (usize, usize)) -> bool {
        let mut v = vec![0u8; len.div_ceil(PAGE)];
        // SAFETY: a page-aligned range inside a slab of ours; `v` has one byte
        // per page.
        let r = unsafe { libc::mincore(start as *mut libc::c_void, len, v.as_mut_ptr()) };
        assert_eq!(r, 0, "mincore: {}", io::Error::last_os_error());
        v.iter().all(|b| b & 1 == 1)
    }

    /// Waits (up to 30 s) until `f` holds of the pool's lists.
    fn wait_for(p: &Pool, what: &str, f: impl Fn(&Inner) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !f(&p.lock()) {
            assert!(Instant::now() < deadline, "never: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Preparing ahead: nothing is prepared (and no thread started) until
    /// `PREP_START` slots have been handed out unprepared; then the pool's
    /// thread keeps `PREP_MIN` slots whose top pages are resident, which are
    /// handed out next; when `delay` passes without a refill taking any, they go
    /// back to the OS (not resident any more, listed as released) and `ahead` to
    /// 0. Fails when `populate` does nothing (not resident) and when the thread
    /// never gives them back (both checked).
    #[test]
    fn prepares_ahead_on_demand_and_gives_back_when_unused() {
        let mut p = Pool::new(0, 256).expect("pool");
        Arc::get_mut(&mut p.lists).expect("no thread yet").delay = Duration::from_millis(50);
        let mut held = Vec::new();
        p.alloc_batch(&mut held, PREP_START - 1).expect("slots");
        {
            let g = p.lock();
            assert_eq!(g.ahead, 0);
            assert!(g.thread == Thread::NotStarted, "no thread for a few slots");
        }
        p.alloc_batch(&mut held, 1).expect("slots");
        assert_eq!(p.lock().ahead, PREP_MIN);
        wait_for(&p, "prepared", |g| g.ready.len() >= PREP_MIN);
        let ready = p.lock().ready.clone();
        for &s in &ready {
            assert!(resident(p.geo.top_range(s)), "a prepared slot is resident");
            assert!(!held.contains(&s));
        }
        let mut more = Vec::new();
        p.alloc_batch(&mut more, 10).expect("slots");
        assert!(
            more.iter().all(|s| ready.contains(s)),
            "prepared slots are handed out before new ones"
        );
        // No more demand: the prepared ones go back. They are listed as
        // released only after the system call, outside the lock: wait for that.
        let unused: Vec<usize> = ready
            .iter()
            .copied()
            .filter(|s| !more.contains(s))
            .collect();
        wait_for(&p, "given back", |g| {
            g.ahead == 0 && g.ready.is_empty() && unused.iter().all(|s| g.released.contains(s))
        });
        for &s in &unused {
            assert!(!resident(p.geo.top_range(s)), "given back to the OS");
        }
        p.free_batch(held.into_iter().chain(more));
        drop(p);
    }

    /// A pool whose thread has started preparing slots, and the 16 slots taken
    /// from it: two refills that found nothing prepared (`PREP_START` at 1),
    /// so `ahead` went to `PREP_MIN` and then doubled.
    fn preparing_pool() -> (Pool, Vec<usize>) {
        let mut p = Pool::new(0, 256).expect("pool");
        Arc::get_mut(&mut p.lists)
            .expect("no thread yet")
            .prep_start = 1;
        let mut held = Vec::new();
        p.alloc_batch(&mut held, 8).expect("slots");
        p.alloc_batch(&mut held, 8).expect("slots");
        (p, held)
    }

    /// A pool dropped while its thread prepares slots: the drop stops the
    /// thread and waits for the batch it has in hand (`populate` writes to slab
    /// memory the drop unmaps) before unmapping. Catches a drop that unmaps
    /// first (a segfault in `populate`: checked once, three runs of three)
    /// and a thread that misses `stop` (a hang).
    #[test]
    fn a_pool_dropped_while_its_thread_prepares() {
        for _ in 0..20 {
            let (p, held) = preparing_pool();
            // Until the first batch is in: the thread is then populating the
            // next ones (`ahead` is at least two batches).
            let deadline = Instant::now() + Duration::from_secs(30);
            while p.lock().ready.is_empty() {
                assert!(Instant::now() < deadline, "never prepared");
                std::hint::spin_loop();
            }
            p.free_batch(held.into_iter());
            drop(p);
        }
    }

    /// The pool's thread runs in the `SCHED_IDLE` class (see `idle_priority`).
    /// Catches a thread left at normal priority, which delays the workers'
    /// timers during a burst of spawns (checked once: "never: ... SCHED_IDLE").
    #[test]
    fn the_pools_thread_runs_at_idle_priority() {
        let (p, held) = preparing_pool();
        // The pools' threads of this test binary, by name, and their class
        // (other tests' threads too: each one lowers itself when it starts).
        let classes = || -> Vec<libc::c_int> {
            std::fs::read_dir("/proc/self/task")
                .expect("tasks")
                .flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.trim() == "hoare-stacks")
                })
                .filter_map(|t| t.file_name().to_str()?.parse::<libc::pid_t>().ok())
                // SAFETY: a plain query of a thread of this process.
                .map(|tid| unsafe { libc::sched_getscheduler(tid) })
                .collect()
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let c = classes();
            if !c.is_empty() && c.iter().all(|&k| k == libc::SCHED_IDLE) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "never: every hoare-stacks thread in SCHED_IDLE ({c:?})"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        p.free_batch(held.into_iter());
        drop(p);
    }

    /// Whether the page at `a` is a guard: populating it for reading fails
    /// (`EFAULT`) on a guard marker or a `PROT_NONE` page, and maps the zero
    /// page (harmless) on an ordinary one. Touching it would kill the test.
    fn is_guard(a: usize) -> bool {
        // SAFETY: advice on a page of a slab we own; at worst it maps the zero page.
        unsafe { libc::madvise(a as *mut libc::c_void, PAGE, libc::MADV_POPULATE_READ) != 0 }
    }

    /// Slabs the OS refuses at full size are mapped smaller (halving), and every
    /// slot handed out has its guard page, whether a refill carved it or the
    /// pool's thread prepared it, in the first slab and in later ones; the page
    /// above each guard is the slot's own and writable. Catches slots carved
    /// without their guards (guards left to `new_slab`, which no longer installs
    /// them: checked once) and a refused slab that fails the spawn.
    #[test]
    fn every_slot_has_its_guard_in_slabs_mapped_smaller() {
        let mut p = Pool::new(0, 256).expect("pool");
        // The "OS" refuses slabs of more than 100 slots: they halve to 51–100.
        p.geo.refuse_above = 100 * p.geo.slot;
        Arc::get_mut(&mut p.lists)
            .expect("no thread yet")
            .prep_start = 1;
        let mut held = Vec::new();
        // Refills (carved on this thread) and, once the thread prepares, slots
        // from `ready`: several slabs of each.
        for _ in 0..40 {
            p.alloc_batch(&mut held, 16).expect("slots");
            std::thread::sleep(Duration::from_millis(1));
        }
        wait_for(&p, "prepared", |g| g.ready.len() >= PREP_MIN);
        p.alloc_batch(&mut held, 2 * PREP_MIN).expect("slots");
        {
            let g = p.lock();
            assert!(g.slabs.len() >= 5, "{} slabs", g.slabs.len());
            let mut want = p.geo.per_slab;
            while want > 100 {
                want /= 2;
            }
            assert!(want > 50 && want <= 100);
            assert!(g.slabs.iter().all(|s| s.slots == want));
        }
        let mut sorted = held.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), held.len(), "a slot handed out twice");
        for &s in &held {
            assert!(is_guard(s), "slot {s:#x} has no guard page");
            assert!(
                !is_guard(s + GUARD),
                "slot {s:#x}: the page above its guard"
            );
            // SAFETY: the slot's header, ours (handed out, never used).
            unsafe { (p.header_at(s) as *mut u8).write_volatile(1) };
        }
        p.free_batch(held.into_iter());
        drop(p);
    }

    /// An idle worker's help (`help_prepare`): nothing while the pool is not
    /// behind; while it is, batches of `HELP_BATCH` guarded slots whose top
    /// pages are resident, until `ready` holds `ahead`; then nothing again, the
    /// hint cleared. Two helpers at once never prepare more than `ahead`
    /// between them (the slots being prepared count: without `preparing`, both
    /// took the last batch and `ready` ended above `ahead`: one round caught
    /// it in 3 of 5 runs, 8 rounds in 4 of 5).
    /// Fails if a helper's slots lack their guards or residency.
    #[test]
    fn idle_workers_help_prepare_up_to_ahead() {
        // Several rounds: the two helpers meet at the last batch in most.
        for _ in 0..8 {
            let p = Pool::new(0, 256).expect("pool");
            assert!(!p.help_prepare(), "not behind: nothing to do");
            let ahead = 8 * HELP_BATCH;
            {
                // As a burst's refill would set it, without starting the thread.
                let mut g = p.lock();
                g.ahead = ahead;
                assert!(note_behind(&p.lists, &g));
            }
            assert!(p.lists.behind.load(Ordering::Relaxed));
            std::thread::scope(|s| {
                for _ in 0..2 {
                    // On through the other's turns at the lock (`help_prepare`
                    // does not wait for it) while the pool is behind.
                    s.spawn(|| while p.help_prepare() || p.lists.behind.load(Ordering::Relaxed) {});
                }
            });
            let g = p.lock();
            assert_eq!(g.ready.len(), ahead, "prepared exactly `ahead`");
            assert_eq!(g.preparing, 0);
            assert_eq!(g.thread, Thread::NotStarted, "helpers need no thread");
            let ready = g.ready.clone();
            drop(g);
            assert!(
                !p.lists.behind.load(Ordering::Relaxed),
                "the hint is cleared"
            );
            assert!(!p.help_prepare());
            let mut sorted = ready.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), ready.len(), "a slot prepared twice");
            for &s in &ready {
                assert!(is_guard(s), "slot {s:#x} has no guard page");
                assert!(resident(p.geo.top_range(s)), "slot {s:#x} not resident");
            }
            let g = p.lock();
            assert!(
                g.released.len() >= CARVE_BATCH / 2,
                "helpers keep guarded slots in stock: {}",
                g.released.len()
            );
            for &s in &g.released {
                assert!(is_guard(s), "released slot {s:#x} has no guard page");
            }
        }
    }

    /// While slots are prepared ahead, a refill that finds nothing prepared or
    /// released carves only what it lacks (the helpers carve in bulk);
    /// otherwise at least `CARVE_BATCH`. Fails if a burst's spawner carves
    /// (and guards) `CARVE_BATCH` at a time.
    #[test]
    fn refills_during_a_burst_carve_only_what_they_lack() {
        let carved = |ahead: usize| {
            let mut p = Pool::new(0, 256).expect("pool");
            // No thread: it would carve meanwhile.
            Arc::get_mut(&mut p.lists)
                .expect("no thread yet")
                .refuse_thread = true;
            p.lock().ahead = ahead;
            let mut held = Vec::new();
            p.alloc_batch(&mut held, 16).expect("slots");
            assert_eq!(held.len(), 16);
            for &s in &held {
                assert!(is_guard(s), "slot {s:#x} has no guard page");
            }
            let g = p.lock();
            g.slabs.iter().map(|s| s.carved).sum::<usize>()
        };
        assert_eq!(carved(PREP_MIN), 16);
        assert_eq!(carved(0), CARVE_BATCH);
    }

    /// A pool of the largest stacks (one slot per slab) carves and maps only
    /// the slots it is asked for: `CARVE_BATCH` of them would reserve 512 GiB
    /// of address space for one spawn (checked once: 512 slabs).
    #[test]
    fn huge_stacks_are_carved_one_at_a_time() {
        let p = Pool::new(MAX_STACK, 256).expect("pool");
        let mut held = Vec::new();
        p.alloc_batch(&mut held, 1).expect("a slot");
        {
            let g = p.lock();
            assert_eq!(g.slabs.len(), 1);
            assert_eq!(g.slabs[0].carved, 1);
            assert!(g.released.is_empty());
        }
        assert!(is_guard(held[0]));
        p.free_batch(held.into_iter());
    }

    #[test]
    fn guard_mode_is_probed_once() {
        let m = guard_mode().expect("probe");
        assert!(m == MODE_MADVISE || m == MODE_MPROTECT);
        assert_eq!(guard_mode().unwrap(), m);
    }
}
