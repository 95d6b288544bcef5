//! One execution: the user's processes as coroutines on the calling thread, the
//! checker's side of the park/unpark seam (`impl Park for CProc`), and the step
//! loop that asks a [`Strategy`] which enabled choice to take next.
//!
//! A *step* is one choice: `Run(p)` resumes process `p`, parked at the scheduling
//! point before its next hoare operation, which performs that operation and runs
//! on to its next scheduling point (or parks, or ends); `Fire(p)` makes the timed
//! wait `p` is parked in time out. Every process another one wakes (or spawns)
//! during a step runs on to its next scheduling point within the same step, in
//! the order it was woken: that continuation touches nothing but its own wait (an
//! alt takes its registrations back), which the step's accesses account for.

use super::FxMap;
use super::{Access, Choice, Key, Strategy};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use hoare_core::park::{self, Park, Unparker};
use hoare_core::step::{self as hstep, Class, Op, OpKind};
use hoare_core::wait::ObjInfo;
use hoare_core::waiter::Waiter;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::BTreeSet;
use std::panic::Location;
use std::ptr::{self, NonNull};
use std::time::Instant;

/// What a process asks of the checker when it suspends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Susp {
    /// At a scheduling point (its next operation is in `pending`).
    Step,
    /// Parked until unparked.
    Park,
    /// Parked until unparked or the (virtual) deadline.
    ParkUntil(Instant),
    /// Parked; call the function with the data once off the stack.
    ParkRelease(unsafe fn(*mut ()), *mut ()),
}

type Coro = Coroutine<(), Susp, (), DefaultStack>;

/// Clears a cached stack before a process of this execution gets it. The
/// report's scan for the ends a blocked process holds reads stale words too
/// (see `stack_mark`), and a pointer an earlier execution left there could
/// match an object of this one (the allocator reuses addresses): the same
/// schedule then reported other holders and another wait-for cycle on replay.
/// With every stack cleared, what the scan finds depends on the schedule alone.
fn scrub(s: &DefaultStack) {
    use corosensei::stack::Stack;
    let (lo, hi) = (s.limit().get(), s.base().get());
    // SAFETY: `[limit, base)` is this stack's own writable mapping, and no
    // coroutine runs on it (it is in the cache, owned by the caller). Linux:
    // private anonymous pages read as zeros after `MADV_DONTNEED` (only those
    // touched again cost anything); elsewhere they are zeroed by hand.
    unsafe {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_DONTNEED) == 0 {
            return;
        }
        std::ptr::write_bytes(lo as *mut u8, 0, hi - lo);
    }
}

/// Where a process is, between steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PState {
    /// Spawned, not started yet (it starts at the end of the step).
    Fresh,
    /// Running now.
    Running,
    /// At a scheduling point: `Run(p)` is enabled.
    Ready,
    /// Parked in a wait (with a deadline: `Fire(p)` may be enabled).
    Blocked,
    /// Woken during this step; continues at its end.
    Woken,
    /// Finished.
    Done,
}

/// A process of the checker.
///
/// Laid out by hand (`repr(C)`, a cache line aligned): what every step of the
/// process touches comes first, so a ring of 10,000 processes, where each
/// step runs a process whose record is cold, misses on one or two lines of it
/// rather than on fields spread over its whole ~350 bytes.
#[repr(C, align(64))]
pub(crate) struct CProc {
    pub(crate) state: Cell<PState>,
    token: Cell<bool>,
    unwinding: Cell<bool>,
    pub(crate) idx: u32,
    yielder: Cell<*const Yielder<(), Susp>>,
    exec: *const Exec,
    /// The waiter of the wait it is parked in (null: none, or a sleep).
    pub(crate) waiting: Cell<*const Waiter>,
    /// The stack pointer when it parked last (see `stack_mark`).
    pub(crate) parked_sp: Cell<usize>,
    /// The deadline of the timed wait it is parked in.
    pub(crate) deadline: Cell<Option<Instant>>,
    coro: UnsafeCell<Option<Coro>>,
    // Recorded runs (exhaustive, reports) and reports only, from here.
    /// The operation it is about to perform (when `Ready`), or is performing
    /// (when `Running`: it stays here when chosen, rather than moving to a
    /// field of its own, and goes to `blocked_in` if the process blocks in it).
    pub(crate) pending: RefCell<Option<Op>>,
    /// The operation it blocked in (when `Blocked`).
    pub(crate) blocked_in: RefCell<Option<Op>>,
    pub(crate) name: Option<String>,
    pub(crate) site: &'static Location<'static>,
    /// How many channels and barriers it has made (see [`Park::created`]).
    made: Cell<u32>,
    /// The top of its stack (for the ends a report finds on it).
    top: usize,
    /// The lowest mapped address of its stack (the scan stops there).
    pub(crate) limit: usize,
    /// The heap memory its body owns while it runs, scanned by reports as well
    /// as its stack (see `Proc::captures`).
    pub(crate) captures: (usize, usize),
}

impl CProc {
    fn exec(&self) -> &Exec {
        // SAFETY: an execution outlives its processes (it unwinds them before it
        // goes).
        unsafe { &*self.exec }
    }

    fn suspend(&self, s: Susp) {
        let y = self.yielder.get();
        // SAFETY: set when the coroutine started; we run on its stack now.
        unsafe { (*y).suspend(s) };
    }

    /// The top of its stack (0 once it has ended).
    pub(crate) fn stack_top(&self) -> usize {
        // SAFETY: only reports call this, between steps: nobody runs the
        // coroutine.
        if unsafe { (*self.coro.get()).is_some() } {
            self.top
        } else {
            0
        }
    }

    /// The name for reports: its name, else `#idx`, with where it was spawned.
    pub(crate) fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("{n} (#{})", self.idx),
            None => format!("#{} (spawned at {})", self.idx, self.site),
        }
    }

    /// The short name for traces: its name, else `#idx`.
    pub(crate) fn short(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("#{}", self.idx),
        }
    }

    unsafe fn unpark_raw(data: *const ()) {
        // SAFETY: the unparker of a live process of a live execution.
        let p = unsafe { &*(data as *const CProc) };
        p.token.set(true);
        if p.state.get() == PState::Blocked {
            p.state.set(PState::Woken);
            p.exec().woken(p.idx);
        }
    }
}

impl Park for CProc {
    fn park(&self, w: &Waiter) {
        if self.token.replace(false) {
            return;
        }
        if self.unwinding.get() {
            // Being unwound at the end of the execution: nobody will wake it.
            return;
        }
        self.waiting.set(w);
        self.parked_sp.set(crate::stack_mark::here());
        self.suspend(Susp::Park);
        self.waiting.set(ptr::null());
        let t = self.token.replace(false);
        debug_assert!(t, "hoare::check: a process resumed without its unpark");
    }

    fn park_until(&self, deadline: Instant, w: Option<&Waiter>) -> bool {
        if self.token.replace(false) {
            return true;
        }
        if self.unwinding.get() || deadline <= self.exec().now.get() {
            return false;
        }
        self.waiting
            .set(w.map_or(ptr::null(), |w| w as *const Waiter));
        self.parked_sp.set(crate::stack_mark::here());
        self.suspend(Susp::ParkUntil(deadline));
        self.waiting.set(ptr::null());
        self.token.replace(false)
    }

    fn unparker(&self) -> Unparker {
        // SAFETY: `unpark_raw` takes a pointer to a live process (the execution
        // keeps every process until it ends) and runs on the checker's thread.
        unsafe { Unparker::from_raw(self as *const Self as *const (), Self::unpark_raw) }
    }

    unsafe fn park_releasing(
        &self,
        release: unsafe fn(*mut ()),
        data: *mut (),
        w: &Waiter,
    ) -> bool {
        if self.unwinding.get() {
            // SAFETY: the caller's contract.
            unsafe { release(data) };
            return false;
        }
        if self.token.get() {
            // SAFETY: as above; the token is consumed by `park`.
            unsafe { release(data) };
            self.park(w);
            return true;
        }
        self.waiting.set(w);
        self.parked_sp.set(crate::stack_mark::here());
        self.suspend(Susp::ParkRelease(release, data));
        self.waiting.set(ptr::null());
        let t = self.token.replace(false);
        debug_assert!(t, "hoare::check: a process resumed without its unpark");
        true
    }

    fn cancelled(&self) -> bool {
        self.unwinding.get()
    }

    fn created(&self, id: u64) {
        // Named by maker and order: the same object in every execution that
        // shares the prefix in which it was made.
        let n = self.made.get();
        self.made.set(n + 1);
        let name = (u64::from(self.idx) << 32) | u64::from(n);
        let ex = self.exec();
        ex.made.borrow_mut().insert(id, name);
        // `Exec::obj` named this key by itself if it met it before (it
        // does not, as an object is made before it is used; but stay exact).
        let mut ids = ex.ids.borrow_mut();
        let a = id as usize;
        for k in [
            Key::Obj(Class::Chan, a),
            Key::Obj(Class::Barrier, a),
            Key::Obj(Class::Join, a | super::SCOPE_BIT),
        ] {
            let s = id_slot(k);
            if ids[s].0 == k {
                ids[s] = (NO_KEY, 0);
            }
        }
    }

    fn step(&self, op: Op) {
        if self.unwinding.get() {
            return;
        }
        *self.pending.borrow_mut() = Some(op);
        self.suspend(Susp::Step);
    }

    fn step_bare(&self) {
        if self.unwinding.get() {
            return;
        }
        self.suspend(Susp::Step);
    }
}

/// A short list kept inline: up to `N` items without a heap block, more on
/// the heap. A recorded step's accesses (a channel or two, a join, the clock)
/// and the processes it woke (one or two) fit inline, so recording a step and
/// copying its accesses into the explorer's sleep sets allocate nothing (a
/// `Vec` or `Rc<[_]>` per step and list was a `malloc` and a `free` each).
#[derive(Clone, Debug)]
pub(crate) enum Small<T: Copy, const N: usize> {
    /// The first `len` are the items (the rest are filler).
    Inline(u8, [T; N]),
    Heap(Box<[T]>),
}

impl<T: Copy, const N: usize> Small<T, N> {
    /// The items of `a`; `fill` pads the inline array.
    pub(crate) fn new(a: &[T], fill: T) -> Self {
        let mut inline = [fill; N];
        match inline.get_mut(..a.len()) {
            Some(dst) => {
                dst.copy_from_slice(a);
                Small::Inline(a.len() as u8, inline)
            }
            None => Small::Heap(a.into()),
        }
    }
}

impl<T: Copy, const N: usize> std::ops::Deref for Small<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Small::Inline(n, a) => &a[..*n as usize],
            Small::Heap(b) => b,
        }
    }
}

/// The objects one step touched and how.
pub(crate) type Accs = Small<(u32, Access), 3>;

impl Accs {
    /// The accesses `a`.
    pub(crate) fn accs(a: &[(u32, Access)]) -> Self {
        Small::new(a, (0, Access::Other))
    }
}

/// Processes (a step's woken ones).
pub(crate) type Procs = Small<u32, 3>;

/// One executed step, for the explorer and the report.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub(crate) choice: Choice,
    pub(crate) proc: u32,
    /// What it was (the operation, or the timed wait that timed out).
    pub(crate) kind: Option<OpKind>,
    /// The objects it touched and how (object ids in order of first appearance).
    pub(crate) acc: Accs,
    /// The processes it woke or spawned (they continued within it).
    pub(crate) woke: Procs,
    /// The processes whose timeout was enabled before this step and which it woke
    /// (it disabled that timeout).
    pub(crate) disabled: Procs,
}

/// The network a check runs: the user's closure, and where the user called
/// `run` or `try_run` (the root process's spawn site in reports).
#[derive(Clone, Copy)]
pub(crate) struct Root<'a> {
    pub(crate) f: &'a dyn Fn(),
    pub(crate) site: &'static Location<'static>,
}

/// Why an execution ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Every process finished.
    Complete,
    /// Nobody could act while the root had not returned.
    Deadlock,
    /// The root returned; these processes were left blocked.
    LeftBlocked,
    /// A process panicked (message, process index).
    Panic(String, u32),
    /// The step limit.
    StepLimit,
    /// The strategy stopped it (every enabled choice asleep).
    Pruned,
    /// A replayed choice was not enabled, or the enabled set differed.
    Nondeterministic(String),
}

/// Object ids, kept across the executions of a check: a step's accesses are
/// compared with those of a step of an earlier execution (sleep sets), so the
/// same object must have the same id in both.
#[derive(Default)]
pub(crate) struct Names {
    ids: FxMap<Key, u32>,
    class: Vec<Class>,
    /// The length of the last execution (the next one's buffers start that
    /// large).
    hint: usize,
    /// The last execution's buffers, cleared, for the next one.
    spare: Spare,
}

/// An execution's buffers, kept (cleared, with their capacity) from one
/// execution to the next: an exhaustive check runs thousands of executions of
/// a few dozen steps, and allocating these afresh for each one was a fifth of
/// its instructions (malloc and free).
#[derive(Default)]
struct Spare {
    #[allow(clippy::vec_box)]
    procs: Vec<Box<CProc>>,
    /// Process records of ended executions, for the next one's processes (a
    /// `malloc` and a `free` each otherwise).
    #[allow(clippy::vec_box)]
    free: Vec<Box<CProc>>,
    en: Vec<Choice>,
    fires: Vec<u32>,
    woken: Vec<u32>,
    ready: ReadySet,
    log: EnLog,
    alts_on: FxMap<u32, Vec<u32>>,
    made: FxMap<u64, u64>,
    shown: FxMap<u32, u32>,
    obj_info: Vec<Option<ObjInfo>>,
    trace: Vec<Event>,
    schedule: Vec<Choice>,
    cur_acc: Vec<(u32, Access)>,
    cur_woke: Vec<u32>,
}

impl Names {
    fn id(&mut self, k: Key, class: Class) -> u32 {
        let n = self.class.len() as u32;
        *self.ids.entry(k).or_insert_with(|| {
            self.class.push(class);
            n
        })
    }
}

/// The state of one execution.
pub(crate) struct Exec {
    // Boxed: a process's header must not move (unparkers and coroutines point
    // at it) when the vector grows.
    #[allow(clippy::vec_box)]
    pub(crate) procs: RefCell<Vec<Box<CProc>>>,
    /// Records of processes of ended executions, to reuse (see `Spare`).
    #[allow(clippy::vec_box)]
    free: RefCell<Vec<Box<CProc>>>,
    /// The step loop's buffers (see `Spare`).
    en_buf: RefCell<Vec<Choice>>,
    fires_buf: RefCell<Vec<u32>>,
    pub(crate) now: Cell<Instant>,
    pub(crate) base: Instant,
    /// Processes to continue at the end of the step, in order.
    woken: RefCell<Vec<u32>>,
    /// The ready set (processes at a scheduling point).
    ready: RefCell<ReadySet>,
    /// How the enabled set changed (for the determinism check of replays).
    pub(crate) log: RefCell<EnLog>,
    /// Blocked processes with a deadline, by deadline.
    timers: RefCell<BTreeSet<(Instant, u32)>>,
    /// Channels with a blocked alt on them: object → the alts' processes.
    alts_on: RefCell<FxMap<u32, Vec<u32>>>,
    /// Objects made in this execution: `ObjInfo` id → (maker, order).
    made: RefCell<FxMap<u64, u64>>,
    /// Object ids, kept across executions.
    names: *const RefCell<Names>,
    /// The ids `obj` found in this execution, by the key it was given: a
    /// direct-mapped cache (a few instructions where the two hash lookups
    /// of a miss take a hundred or two).
    ids: RefCell<[(Key, u32); ID_SLOTS]>,
    /// Object ids → the numbers reports show (see [`shown`](Self::shown)).
    shown: RefCell<FxMap<u32, u32>>,
    /// The identity (name, creation site) of each object, where known.
    pub(crate) obj_info: RefCell<Vec<Option<ObjInfo>>>,
    pub(crate) trace: RefCell<Vec<Event>>,
    pub(crate) schedule: RefCell<Vec<Choice>>,
    pub(crate) panic: RefCell<Option<(String, u32)>>,
    pub(crate) root_done: Cell<bool>,
    /// The process running now (`u32::MAX`: none).
    running: Cell<u32>,
    stacks: *const RefCell<Vec<DefaultStack>>,
    stack_size: usize,
    /// Whether steps are recorded (their accesses and the trace: exhaustive
    /// search and reports need them; random and PCT runs do not).
    pub(crate) record: bool,
    /// Accesses of the step being executed.
    cur_acc: RefCell<Vec<(u32, Access)>>,
    cur_woke: RefCell<Vec<u32>>,
}

/// The processes at a scheduling point: constant time to add, remove and pick
/// one by index, whatever the number of processes (no scan per step).
#[derive(Default)]
pub(crate) struct ReadySet {
    items: Vec<u32>,
    /// Each process's position in `items` (`u32::MAX`: not in it).
    pos: Vec<u32>,
}

impl ReadySet {
    /// Adds `idx`; whether it was not in the set.
    #[inline]
    fn insert(&mut self, idx: u32) -> bool {
        let at = &mut self.pos[idx as usize];
        if *at != u32::MAX {
            return false;
        }
        *at = self.items.len() as u32;
        self.items.push(idx);
        true
    }

    /// Removes `idx`; whether it was in the set.
    #[inline]
    fn remove(&mut self, idx: u32) -> bool {
        let at = std::mem::replace(&mut self.pos[idx as usize], u32::MAX);
        if at == u32::MAX {
            return false;
        }
        self.items.swap_remove(at as usize);
        if let Some(&moved) = self.items.get(at as usize) {
            self.pos[moved as usize] = at;
        }
        true
    }
}

/// How the enabled set changed over an execution, in constant time per change
/// (so a random run of 10,000 processes can keep it): the changes of the ready
/// set and of the timed waits, and where each step's choice was made. A replay
/// rebuilds the enabled set of every step from it and the schedule
/// ([`EnSets`]) and compares it with its own: the determinism check.
///
/// A step's chosen process leaving the ready set is not logged: every step
/// `Run(p)` removes `p` first thing after its choice, so the schedule says it
/// (one entry fewer per step).
#[derive(Clone, Debug, Default)]
pub(crate) struct EnLog {
    /// `READY_IN | p`, or `TIMER_IN | p` / `TIMER_OUT | p`
    /// followed by the deadline (nanoseconds after the execution's start).
    deltas: Vec<u64>,
    /// For each step, how many deltas came before its choice.
    marks: Vec<u32>,
}

const READY_IN: u64 = 0;
const TIMER_IN: u64 = 2 << 62;
const TIMER_OUT: u64 = 3 << 62;
const KIND: u64 = 3 << 62;

/// The enabled sets of a logged execution, step by step (see [`EnLog`]).
pub(crate) struct EnSets {
    log: EnLog,
    schedule: Vec<Choice>,
    at: usize,
    /// How many steps' choices have been taken out of `ready`.
    left: usize,
    ready: BTreeSet<u32>,
    timers: BTreeSet<(u64, u32)>,
    quiescent: bool,
}

impl EnSets {
    pub(crate) fn new(log: EnLog, schedule: Vec<Choice>, quiescent: bool) -> Self {
        EnSets {
            log,
            schedule,
            at: 0,
            left: 0,
            ready: BTreeSet::new(),
            timers: BTreeSet::new(),
            quiescent,
        }
    }

    /// The enabled set of step `step` (steps asked in increasing order), sorted;
    /// `None` when the logged execution made no choice there.
    pub(crate) fn at(&mut self, step: usize) -> Option<Vec<Choice>> {
        self.log.marks.get(step)?;
        loop {
            // Up to step `left`'s choice: its changes, then (when it is
            // before `step`) its chosen process leaves the ready set.
            let i = self.left;
            self.apply(self.log.marks[i] as usize);
            if i >= step {
                break;
            }
            if let Some(&Choice::Run(p)) = self.schedule.get(i) {
                self.ready.remove(&p);
            }
            self.left += 1;
        }
        let mut v: Vec<Choice> = self.ready.iter().map(|&p| Choice::Run(p)).collect();
        if !self.quiescent || self.ready.is_empty() {
            if let Some(&(d0, _)) = self.timers.iter().next() {
                v.extend(
                    self.timers
                        .iter()
                        .take_while(|&&(d, _)| d == d0)
                        .map(|&(_, p)| Choice::Fire(p)),
                );
            }
        }
        v.sort_unstable();
        Some(v)
    }

    /// Applies the logged changes up to `end`.
    fn apply(&mut self, end: usize) {
        while self.at < end {
            let d = self.log.deltas[self.at];
            let p = (d & !KIND) as u32;
            self.at += 1;
            if d & KIND == READY_IN {
                self.ready.insert(p);
                continue;
            }
            let t = self.log.deltas[self.at];
            self.at += 1;
            if d & KIND == TIMER_IN {
                self.timers.insert((t, p));
            } else {
                self.timers.remove(&(t, p));
            }
        }
    }
}

/// The size of [`Exec::obj`]'s cache.
const ID_SLOTS: usize = 64;
/// An empty slot of that cache (no process has this index).
const NO_KEY: Key = Key::Wait(u32::MAX);

/// The slot of `k` in [`Exec::obj`]'s cache.
#[inline]
fn id_slot(k: Key) -> usize {
    let x = match k {
        Key::Obj(c, a) => (a as u64) ^ ((c as u64) << 56),
        Key::Wait(p) => u64::from(p) ^ (1 << 62),
        Key::Made(m) => m ^ (2 << 62),
    };
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - ID_SLOTS.trailing_zeros())) as usize
}

std::thread_local! {
    static CURRENT: Cell<*const Exec> = const { Cell::new(ptr::null()) };
}

/// The execution running on this thread (null: none).
#[inline(never)]
pub(crate) fn current() -> *const Exec {
    CURRENT.with(|c| c.get())
}

/// Compare how two accesses of one object conflict.
pub(crate) fn conflict(a: Access, b: Access) -> bool {
    use Access::*;
    !matches!(
        (a, b),
        (Send, Recv)
            | (Recv, Send)
            | (Drop, Send | Recv | Drop | Register)
            | (Send | Recv | Register, Drop)
            | (Register, Send | Recv)
            | (Send | Recv, Register)
    )
}

impl Exec {
    pub(crate) fn new(
        stacks: &RefCell<Vec<DefaultStack>>,
        names: &RefCell<Names>,
        stack_size: usize,
        record: bool,
    ) -> Self {
        let base = Instant::now();
        let (hint, mut sp) = {
            let mut n = names.borrow_mut();
            (n.hint.min(1 << 20), std::mem::take(&mut n.spare))
        };
        // Sized as the last execution of the check: no regrowth per step (a
        // no-op on the last execution's buffers).
        sp.log.deltas.reserve(3 * hint);
        sp.log.marks.reserve(hint + 1);
        sp.trace.reserve(if record { hint } else { 0 });
        sp.schedule.reserve(hint);
        Exec {
            procs: RefCell::new(sp.procs),
            free: RefCell::new(sp.free),
            en_buf: RefCell::new(sp.en),
            fires_buf: RefCell::new(sp.fires),
            now: Cell::new(base),
            base,
            woken: RefCell::new(sp.woken),
            ready: RefCell::new(sp.ready),
            log: RefCell::new(sp.log),
            timers: RefCell::new(BTreeSet::new()),
            alts_on: RefCell::new(sp.alts_on),
            made: RefCell::new(sp.made),
            names,
            ids: RefCell::new([(NO_KEY, 0); ID_SLOTS]),
            shown: RefCell::new(sp.shown),
            obj_info: RefCell::new(sp.obj_info),
            trace: RefCell::new(sp.trace),
            schedule: RefCell::new(sp.schedule),
            panic: RefCell::new(None),
            root_done: Cell::new(false),
            running: Cell::new(u32::MAX),
            stacks,
            stack_size,
            record,
            cur_acc: RefCell::new(sp.cur_acc),
            cur_woke: RefCell::new(sp.cur_woke),
        }
    }

    fn woken(&self, idx: u32) {
        self.woken.borrow_mut().push(idx);
    }

    pub(crate) fn proc(&self, idx: u32) -> *const CProc {
        &*self.procs.borrow()[idx as usize]
    }

    /// The object id of `k`: the same in every execution for the same object.
    /// A channel, barrier or scope made by a process of the execution is named
    /// by its maker and the order in which the maker made it (both depend only
    /// on the prefix of the execution in which it was made); an object made
    /// outside the check keeps its key (it lives across executions); a join
    /// or a wait is named by its process.
    pub(crate) fn obj(&self, key: Key, class: Class) -> u32 {
        let slot = id_slot(key);
        {
            let ids = self.ids.borrow();
            if ids[slot].0 == key {
                return ids[slot].1;
            }
        }
        let k = match key {
            Key::Obj(Class::Chan | Class::Barrier, a) => self.made_key(a).unwrap_or(key),
            Key::Obj(Class::Join, a) if a & super::SCOPE_BIT != 0 => {
                self.made_key(a & !super::SCOPE_BIT).unwrap_or(key)
            }
            k => k,
        };
        // SAFETY: the names outlive every execution of the check.
        let mut n = unsafe { (*self.names).borrow_mut() };
        let id = n.id(k, class);
        let mut infos = self.obj_info.borrow_mut();
        if infos.len() <= id as usize {
            infos.resize(id as usize + 1, None);
        }
        // Valid until `created` names an object of this key.
        self.ids.borrow_mut()[slot] = (key, id);
        id
    }

    fn made_key(&self, id: usize) -> Option<Key> {
        self.made.borrow().get(&(id as u64)).map(|&m| Key::Made(m))
    }

    /// The number object `id` is shown by in reports: its order of first
    /// appearance in this execution's trace (the ids themselves depend on what
    /// earlier executions met first).
    pub(crate) fn shown(&self, id: u32) -> u32 {
        let mut m = self.shown.borrow_mut();
        if m.is_empty() {
            for e in self.trace.borrow().iter() {
                for &(o, _) in e.acc.iter() {
                    let n = m.len() as u32;
                    m.entry(o).or_insert(n);
                }
            }
        }
        let n = m.len() as u32;
        *m.entry(id).or_insert(n)
    }

    /// The class of object `id`.
    pub(crate) fn obj_class(&self, id: u32) -> Option<Class> {
        // SAFETY: as in `obj`.
        unsafe { (*self.names).borrow() }
            .class
            .get(id as usize)
            .copied()
    }

    /// The accesses of `op`, appended to `out` (no allocation of its own).
    fn op_acc_into(&self, op: &Op, out: &mut Vec<(u32, Access)>) {
        out.extend(op.objs.iter().map(|o| (self.obj_of(o), o.access)));
    }

    /// The object id of an operation's object (its identity noted).
    fn obj_of(&self, o: &hstep::Obj) -> u32 {
        let id = self.obj(Key::Obj(o.class, o.addr), o.class);
        if let Some(i) = o.info {
            let mut infos = self.obj_info.borrow_mut();
            if infos[id as usize].is_none() {
                infos[id as usize] = Some(i);
            }
        }
        id
    }

    /// Creates a process (started at the end of the step).
    ///
    /// # Safety
    /// Whatever `body` borrows outlives the process (the checker unwinds or
    /// finishes every process before the execution, and `run`, end).
    pub(crate) unsafe fn spawn(
        &self,
        name: Option<String>,
        site: &'static Location<'static>,
        captures: (usize, usize),
        body: Box<dyn FnOnce() + '_>,
    ) -> u32 {
        let idx = self.procs.borrow().len() as u32;
        let stack = {
            // SAFETY: the stack cache outlives every execution.
            let mut st = unsafe { (*self.stacks).borrow_mut() };
            match st.pop() {
                Some(s) => {
                    scrub(&s);
                    s
                }
                None => {
                    DefaultStack::new(self.stack_size).expect("hoare::check: no memory for a stack")
                }
            }
        };
        let rec = CProc {
            idx,
            coro: UnsafeCell::new(None),
            yielder: Cell::new(ptr::null()),
            token: Cell::new(false),
            state: Cell::new(PState::Fresh),
            pending: RefCell::new(None),
            blocked_in: RefCell::new(None),
            deadline: Cell::new(None),
            unwinding: Cell::new(false),
            waiting: Cell::new(ptr::null()),
            parked_sp: Cell::new(0),
            name,
            site,
            captures,
            exec: self,
            made: Cell::new(0),
            top: {
                use corosensei::stack::Stack;
                stack.base().get()
            },
            limit: {
                use corosensei::stack::Stack;
                stack.limit().get()
            },
        };
        let p = match self.free.borrow_mut().pop() {
            Some(mut b) => {
                *b = rec;
                b
            }
            None => Box::new(rec),
        };
        let pp = &*p as *const CProc as usize;
        // SAFETY: the caller's contract keeps `body`'s borrows alive while the
        // coroutine may run; the header is boxed and outlives the coroutine.
        let coro = unsafe {
            Coroutine::with_stack_unchecked(stack, move |y: &Yielder<(), Susp>, ()| {
                (*(pp as *const CProc)).yielder.set(y);
                body();
            })
        };
        // SAFETY: nobody else touches the new process's slot yet.
        unsafe { *p.coro.get() = Some(coro) };
        self.procs.borrow_mut().push(p);
        self.ready.borrow_mut().pos.push(u32::MAX);
        self.woken(idx);
        idx
    }

    fn set_ready(&self, idx: u32, ready: bool) {
        let mut r = self.ready.borrow_mut();
        if !ready {
            // Only ever the step's chosen process: not logged (see `EnLog`).
            r.remove(idx);
        } else if r.insert(idx) {
            self.log.borrow_mut().deltas.push(READY_IN | u64::from(idx));
        }
    }

    /// Logs a timed wait's arming or end (see [`EnLog`]).
    fn log_timer(&self, kind: u64, idx: u32, d: Instant) {
        let t = d.saturating_duration_since(self.base).as_nanos() as u64;
        let mut l = self.log.borrow_mut();
        l.deltas.push(kind | u64::from(idx));
        l.deltas.push(t);
    }

    /// Resumes process `idx` until it suspends or ends, and files it by what it
    /// asked for.
    fn resume(&self, idx: u32) {
        let p = self.proc(idx);
        // SAFETY: processes are boxed and live until the execution ends.
        let pr = unsafe { &*p };
        pr.state.set(PState::Running);
        let dynp: NonNull<dyn Park> = NonNull::from(pr);
        // SAFETY: `pr` is valid.
        let party = unsafe { park::Party::new(dynp) };
        // SAFETY: the process runs on this thread until `resume` returns, and the
        // pointer is reset right after (`party` lives until then).
        unsafe { park::set_current_party(&party) };
        // SAFETY: only this function touches the coroutine, never re-entrantly (a
        // process never resumes another: spawned and woken ones wait for the end
        // of the step).
        let coro = unsafe { (*pr.coro.get()).as_mut().expect("coroutine") };
        let outer = self.running.replace(idx);
        let r = coro.resume(());
        self.running.set(outer);
        // SAFETY: unsetting is always sound.
        unsafe { park::set_current_party(std::ptr::null()) };
        match r {
            CoroutineResult::Yield(Susp::Step) => {
                // Its next operation is in `pending` (`Park::step`).
                pr.state.set(PState::Ready);
                self.set_ready(idx, true);
            }
            CoroutineResult::Yield(Susp::Park) => self.blocked(pr, None),
            CoroutineResult::Yield(Susp::ParkUntil(d)) => self.blocked(pr, Some(d)),
            CoroutineResult::Yield(Susp::ParkRelease(f, d)) => {
                self.blocked(pr, None);
                // SAFETY: the process is off its stack now (the seam's contract).
                unsafe { f(d) };
            }
            CoroutineResult::Return(()) => {
                pr.state.set(PState::Done);
                // SAFETY: as above.
                let coro = unsafe { (*pr.coro.get()).take().expect("coroutine") };
                // SAFETY: the stack cache outlives every execution.
                unsafe { (*self.stacks).borrow_mut().push(coro.into_stack()) };
                if idx == 0 {
                    self.root_done.set(true);
                }
            }
        }
    }

    fn blocked(&self, pr: &CProc, deadline: Option<Instant>) {
        // A token that arrived while it ran on (it woke itself): it goes on.
        // (Unrecorded executions describe no operations: nothing to move.)
        let op = if self.record {
            pr.pending.borrow_mut().take()
        } else {
            None
        };
        if pr.token.get() {
            pr.state.set(PState::Woken);
            if self.record {
                *pr.blocked_in.borrow_mut() = op;
            }
            self.woken(pr.idx);
            return;
        }
        pr.state.set(PState::Blocked);
        pr.deadline.set(deadline);
        if let Some(d) = deadline {
            self.timers.borrow_mut().insert((d, pr.idx));
            self.log_timer(TIMER_IN, pr.idx, d);
        }
        if !self.record {
            return;
        }
        if let Some(op) = op.as_ref() {
            if op.kind == OpKind::Alt {
                for o in op.objs.iter() {
                    let o = self.obj_of(o);
                    let mut m = self.alts_on.borrow_mut();
                    let v = m.entry(o).or_default();
                    if !v.contains(&pr.idx) {
                        v.push(pr.idx);
                    }
                }
            }
        }
        *pr.blocked_in.borrow_mut() = op;
    }

    /// A blocked process leaves its wait (woken, or timed out): its timer and its
    /// alt registrations go, and the step touches its wait.
    fn unblock(&self, idx: u32) {
        // SAFETY: a live process of this execution.
        let pr = unsafe { &*self.proc(idx) };
        let deadline = pr.deadline.take();
        if let Some(d) = deadline {
            self.timers.borrow_mut().remove(&(d, idx));
            self.log_timer(TIMER_OUT, idx, d);
        }
        if !self.record {
            return;
        }
        let op = pr.blocked_in.borrow_mut().take();
        let mut acc = self.cur_acc.borrow_mut();
        if let Some(op) = op {
            let is_alt = op.kind == OpKind::Alt;
            let timed = deadline.is_some() || op.objs.iter().any(|o| o.class == Class::Clock);
            if is_alt || timed {
                acc.push((self.obj(Key::Wait(idx), Class::Join), Access::Other));
                for o in op.objs.iter() {
                    let o = self.obj_of(o);
                    acc.push((o, Access::Other));
                    if is_alt {
                        if let Some(v) = self.alts_on.borrow_mut().get_mut(&o) {
                            v.retain(|&x| x != idx);
                        }
                    }
                }
            }
        }
    }

    /// Starts or continues every spawned or woken process, in order.
    fn drain(&self) {
        let mut i = 0;
        loop {
            let idx = {
                let w = self.woken.borrow();
                match w.get(i) {
                    Some(&x) => x,
                    None => break,
                }
            };
            i += 1;
            // SAFETY: a live process of this execution.
            let state = unsafe { (*self.proc(idx)).state.get() };
            if state == PState::Woken {
                self.unblock(idx);
            }
            if self.record {
                self.cur_woke.borrow_mut().push(idx);
            }
            self.resume(idx);
        }
        self.woken.borrow_mut().clear();
    }

    /// The enabled choices: the ready processes (in index order when `sorted`),
    /// then the timeouts that may fire (racing: the earliest; quiescent: the
    /// earliest, only when nobody is ready).
    pub(crate) fn enabled(&self, quiescent: bool, sorted: bool, out: &mut Vec<Choice>) {
        out.clear();
        let r = self.ready.borrow();
        out.extend(r.items.iter().map(|&p| Choice::Run(p)));
        if sorted {
            // All `Run`: by process (a plain integer compare; the derived
            // order compares the variants first).
            let key = |c: &Choice| match *c {
                Choice::Run(p) | Choice::Fire(p) => p,
            };
            // Often sorted already (the set changes by a process or two).
            if !out.is_sorted_by_key(key) {
                out.sort_unstable_by_key(key);
            }
        }
        if quiescent && !r.items.is_empty() {
            return;
        }
        let t = self.timers.borrow();
        if let Some(&(d0, _)) = t.iter().next() {
            for &(d, p) in t.iter() {
                if d != d0 {
                    break;
                }
                out.push(Choice::Fire(p));
            }
        }
    }

    /// The processes whose timeout may fire now (see [`enabled`](Self::enabled)).
    fn due_timers(&self, quiescent: bool, out: &mut Vec<u32>) {
        out.clear();
        if quiescent && !self.ready.borrow().items.is_empty() {
            return;
        }
        let t = self.timers.borrow();
        if let Some(&(d0, _)) = t.iter().next() {
            for &(d, p) in t.iter() {
                if d != d0 {
                    break;
                }
                out.push(p);
            }
        }
    }

    /// Moves the virtual time to the deadline of `p`'s timed wait (whose timeout
    /// fires now).
    fn advance_to(&self, p: u32) {
        // SAFETY: a live process of this execution.
        let d = unsafe { (*self.proc(p)).deadline.get() }.expect("a timer");
        if d > self.now.get() {
            self.now.set(d);
            hstep::set_virtual_now(Some(d));
        }
    }

    /// Executes one choice (which must be enabled).
    fn exec_step(&self, c: Choice, fires_before: &[u32]) {
        if !self.record {
            // Random and PCT: no operations described (`Steps::Bare`), no
            // accesses, no trace.
            match c {
                Choice::Run(p) => {
                    self.set_ready(p, false);
                    self.resume(p);
                }
                Choice::Fire(p) => {
                    self.advance_to(p);
                    self.unblock(p);
                    self.resume(p);
                }
            }
            self.drain();
            self.schedule.borrow_mut().push(c);
            return;
        }
        self.cur_acc.borrow_mut().clear();
        self.cur_woke.borrow_mut().clear();
        let (proc, kind) = match c {
            Choice::Run(p) => {
                // SAFETY: a live process of this execution.
                let pr = unsafe { &*self.proc(p) };
                let mut acc = std::mem::take(&mut *self.cur_acc.borrow_mut());
                // The operation stays in `pending` while it is performed.
                let (nobjs, kind, clock) = {
                    let op = pr.pending.borrow();
                    let op = op.as_ref().expect("a ready process has an operation");
                    self.op_acc_into(op, &mut acc);
                    let clock = op.objs.iter().any(|o| o.class == Class::Clock);
                    (op.objs.len(), op.kind, clock)
                };
                // Any step on a channel of a blocked alt touches that alt's wait.
                {
                    let m = self.alts_on.borrow();
                    if !m.is_empty() {
                        for k in 0..acc.len() {
                            if let Some(v) = m.get(&acc[k].0) {
                                for &x in v {
                                    if x != p {
                                        acc.push((
                                            self.obj(Key::Wait(x), Class::Join),
                                            Access::Other,
                                        ));
                                    }
                                }
                            }
                        }
                    }
                }
                if clock {
                    acc.push((self.obj(Key::Wait(p), Class::Join), Access::Other));
                }
                *self.cur_acc.borrow_mut() = acc;
                self.set_ready(p, false);
                self.resume(p);
                // An alt that blocked only registered on its channels.
                if kind == OpKind::Alt && pr.state.get() == PState::Blocked {
                    for a in self.cur_acc.borrow_mut().iter_mut().take(nobjs) {
                        if self.obj_class(a.0) == Some(Class::Chan) {
                            a.1 = Access::Register;
                        }
                    }
                }
                (p, Some(kind))
            }
            Choice::Fire(p) => {
                // SAFETY: as above.
                let pr = unsafe { &*self.proc(p) };
                self.advance_to(p);
                let kind = pr.blocked_in.borrow().as_ref().map(|o| o.kind);
                let clock = self.obj(Key::Obj(Class::Clock, hstep::CLOCK.addr), Class::Clock);
                self.cur_acc.borrow_mut().push((clock, Access::Other));
                self.unblock(p);
                self.resume(p);
                (p, kind)
            }
        };
        self.drain();
        let (woke, disabled) = {
            let cw = self.cur_woke.borrow();
            let woke = Procs::new(&cw, 0);
            // Usually none: no buffer of its own.
            let disabled = if fires_before.is_empty() {
                Procs::new(&[], 0)
            } else {
                let d: Vec<u32> = cw
                    .iter()
                    .copied()
                    .filter(|w| fires_before.contains(w) && Choice::Fire(*w) != c)
                    .collect();
                Procs::new(&d, 0)
            };
            (woke, disabled)
        };
        let acc = Accs::accs(&self.cur_acc.borrow());
        self.trace.borrow_mut().push(Event {
            choice: c,
            proc,
            kind,
            acc,
            woke,
            disabled,
        });
        self.schedule.borrow_mut().push(c);
    }

    /// Runs the execution of `root` under `strat` until it ends.
    pub(crate) fn run(
        &self,
        root: Root<'_>,
        strat: &mut dyn Strategy,
        quiescent: bool,
        max_steps: u64,
        watch: &super::Watch,
    ) -> End {
        let prev = CURRENT.with(|c| c.replace(self));
        hstep::set_virtual_now(Some(self.now.get()));
        hstep::set_steps(if self.record {
            hstep::Steps::Ops
        } else {
            hstep::Steps::Bare
        });
        let body = move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(root.f));
            if let Err(e) = r {
                // Null when the root is unwound at the end of the execution
                // (`teardown`): not a failure.
                let ex = current();
                if !ex.is_null() {
                    // SAFETY: the execution outlives its processes.
                    unsafe { (*ex).record_panic(crate::ProcessError::from_panic(&*e), 0) };
                }
            }
        };
        // SAFETY: every process is finished, or unwound by `teardown` while `root` lives.
        unsafe { self.spawn(Some("root".into()), root.site, (0, 0), Box::new(body)) };
        self.drain();
        let mut en = std::mem::take(&mut *self.en_buf.borrow_mut());
        let mut fires = std::mem::take(&mut *self.fires_buf.borrow_mut());
        // A strategy that picks by index (random) does not need the enabled
        // set spelled out: no copy of the ready set per step.
        let fast = strat.by_index();
        // Set once the strategy pruned the execution: it is run on to its end
        // (first enabled choice, up to this step) rather than unwound, which
        // costs far more than the steps (a DWARF unwind of every frame of
        // every process left). Whatever it meets is equivalent to an execution
        // explored already, so its end is `Pruned` whatever it is.
        let mut finish: Option<usize> = None;
        let end = loop {
            if self.panic.borrow().is_some() {
                if let Some((m, p)) = self.panic.borrow().clone() {
                    break End::Panic(m, p);
                }
            }
            let (nready, nfire) = if fast {
                self.due_timers(quiescent, &mut fires);
                (self.ready.borrow().items.len(), fires.len())
            } else {
                self.enabled(quiescent, strat.sorted(), &mut en);
                (en.len(), 0)
            };
            {
                let mut l = self.log.borrow_mut();
                let n = l.deltas.len() as u32;
                l.marks.push(n);
            }
            if nready + nfire == 0 {
                let blocked = self
                    .procs
                    .borrow()
                    .iter()
                    .any(|p| p.state.get() == PState::Blocked);
                break if !blocked {
                    End::Complete
                } else if self.root_done.get() {
                    End::LeftBlocked
                } else {
                    End::Deadlock
                };
            }
            let step = self.schedule.borrow().len();
            if step as u64 >= max_steps || finish.is_some_and(|f| step >= f) {
                break End::StepLimit;
            }
            let c = if fast {
                let k = strat.pick(nready + nfire);
                if k < nready {
                    Choice::Run(self.ready.borrow().items[k])
                } else {
                    Choice::Fire(fires[k - nready])
                }
            } else if finish.is_some() {
                en[0]
            } else {
                match strat.choose(step, &en, self) {
                    Ok(c) => c,
                    Err(End::Pruned) => {
                        finish = Some(step + step.max(64));
                        en[0]
                    }
                    Err(e) => break e,
                }
            };
            if !fast {
                fires.clear();
            }
            // (The timeouts come last in `en`.)
            if self.record && !fast && matches!(en.last(), Some(Choice::Fire(_))) {
                fires.extend(en.iter().filter_map(|c| match c {
                    Choice::Fire(p) => Some(*p),
                    Choice::Run(_) => None,
                }));
            }
            watch.step();
            self.exec_step(c, &fires);
        };
        CURRENT.with(|c| c.set(prev));
        en.clear();
        fires.clear();
        (*self.en_buf.borrow_mut(), *self.fires_buf.borrow_mut()) = (en, fires);
        if finish.is_some() {
            return End::Pruned;
        }
        end
    }

    pub(crate) fn record_panic(&self, e: crate::ProcessError, idx: u32) {
        let mut p = self.panic.borrow_mut();
        if p.is_none() {
            let m = e.message().unwrap_or("<panic>").to_owned();
            *p = Some((m, idx));
        }
    }

    /// Unwinds every process that has not finished (a failing or cut execution
    /// leaves some blocked or ready): their frames are dropped as a panic
    /// would drop them (the ends they hold, their heap values), children
    /// before the processes that made them (a scope's owner waits for its
    /// children's count-down as it unwinds). Then returns the stacks to the
    /// cache and frees the processes.
    ///
    /// With `unwind` false the leftover processes are abandoned instead (their
    /// frames and headers leaked: a leaked object may still hold an unparker
    /// pointing at a header).
    pub(crate) fn teardown(&self, unwind: bool) {
        // SAFETY: the names outlive every execution of the check.
        unsafe { (*self.names).borrow_mut().hint = self.schedule.borrow().len() + 16 };
        hstep::set_virtual_now(None);
        hstep::set_steps(hstep::Steps::Off);
        let procs: Vec<*const CProc> = self
            .procs
            .borrow()
            .iter()
            .map(|p| &**p as *const CProc)
            .collect();
        for &p in procs.iter().rev() {
            // SAFETY: the processes live until the end of this function.
            let pr = unsafe { &*p };
            // SAFETY: nothing else runs the coroutine any more, and the
            // reference ends before the next process's.
            let Some(c) = (unsafe { (*pr.coro.get()).as_mut() }) else {
                continue;
            };
            if c.done() {
                continue;
            }
            // Every hoare operation it performs now returns at once (its
            // scheduling points, parks and joins see `unwinding`).
            pr.unwinding.set(true);
            if !unwind {
                if c.started() {
                    // SAFETY: the frames are abandoned, not unwound: whatever
                    // they own is leaked, and nothing refers to them (every
                    // object that could point into the stack is owned by one
                    // of these frames too, or leaked with them).
                    unsafe { c.force_reset() };
                } else {
                    c.force_unwind();
                }
                continue;
            }
            let dynp: NonNull<dyn Park> = NonNull::from(pr);
            // SAFETY: `pr` is valid.
            let party = unsafe { park::Party::new(dynp) };
            // SAFETY: the process runs on this thread until `force_unwind`
            // returns, and the pointer is reset right after (`party` lives
            // until then).
            unsafe { park::set_current_party(&party) };
            // Not started: drops its closure; suspended: unwinds from the
            // suspension point (again at every later suspension, should a
            // `catch_unwind` in it stop the unwinding) until it returns.
            c.force_unwind();
            // SAFETY: unsetting is always sound.
            unsafe { park::set_current_party(std::ptr::null()) };
        }
        self.woken.borrow_mut().clear();
        let mut procs = std::mem::take(&mut *self.procs.borrow_mut());
        for p in procs.drain(..) {
            // SAFETY: nothing runs the coroutine any more.
            if let Some(c) = unsafe { (*p.coro.get()).take() } {
                // SAFETY: the stack cache outlives every execution.
                unsafe { (*self.stacks).borrow_mut().push(c.into_stack()) };
            }
            if !unwind && p.unwinding.get() {
                std::mem::forget(p);
            } else {
                self.free.borrow_mut().push(p);
            }
        }
        // Empty, its capacity kept for the next execution (see `Spare`).
        *self.procs.borrow_mut() = procs;
    }
}

impl Drop for Exec {
    /// Hands the buffers, cleared, to the next execution (see [`Spare`]).
    fn drop(&mut self) {
        // The processes go first, as they did when they were the first field
        // dropped (after `teardown` there are none).
        self.procs.get_mut().clear();
        let mut sp = Spare {
            procs: std::mem::take(self.procs.get_mut()),
            free: std::mem::take(self.free.get_mut()),
            en: std::mem::take(self.en_buf.get_mut()),
            fires: std::mem::take(self.fires_buf.get_mut()),
            woken: std::mem::take(self.woken.get_mut()),
            ready: std::mem::take(self.ready.get_mut()),
            log: std::mem::take(self.log.get_mut()),
            alts_on: std::mem::take(self.alts_on.get_mut()),
            made: std::mem::take(self.made.get_mut()),
            shown: std::mem::take(self.shown.get_mut()),
            obj_info: std::mem::take(self.obj_info.get_mut()),
            trace: std::mem::take(self.trace.get_mut()),
            schedule: std::mem::take(self.schedule.get_mut()),
            cur_acc: std::mem::take(self.cur_acc.get_mut()),
            cur_woke: std::mem::take(self.cur_woke.get_mut()),
        };
        sp.woken.clear();
        sp.ready.items.clear();
        sp.ready.pos.clear();
        sp.log.deltas.clear();
        sp.log.marks.clear();
        sp.alts_on.clear();
        sp.made.clear();
        sp.shown.clear();
        sp.obj_info.clear();
        sp.trace.clear();
        sp.schedule.clear();
        sp.cur_acc.clear();
        sp.cur_woke.clear();
        // SAFETY: the names outlive every execution of the check. Two
        // executions may be alive at once (a failure and its replay): the one
        // dropped last leaves its buffers, the other's are freed.
        if let Ok(mut n) = unsafe { (*self.names).try_borrow_mut() } {
            n.spare = sp;
        }
    }
}

/// The id of the running process of the checker on this thread, if any.
pub(crate) fn current_proc() -> Option<u32> {
    let e = current();
    if e.is_null() {
        return None;
    }
    // SAFETY: a running execution.
    let r = unsafe { (*e).running.get() };
    (r != u32::MAX).then_some(r)
}
