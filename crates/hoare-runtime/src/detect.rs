//! Deadlock detection (docs/semantics.md#deadlock): a thread per runtime that
//! waits until every worker sleeps without a deadline, checks (with the workers
//! held asleep) that nothing can wake any process, and then ends `run` with a
//! report naming each blocked process and what it waits on. Also the stall
//! report and the leak report, which describe blocked processes the same way.
//!
//! Why a report can be trusted (no false deadlock):
//! * every worker of every runtime of the program must be asleep (a channel may
//!   link two runtimes);
//! * a worker counts asleep only while it sleeps without a deadline, so a pending
//!   timer (a `sleep_for`, a timeout) keeps the runtime awake; and a notifier
//!   counts the worker it wakes awake again before it wakes it, under the lock
//!   the detector holds while it looks (`hoare_core::sched::Idle`);
//! * a plain OS thread that blocked in or woke through hoare, and every thread
//!   process, counts awake unless parked in a hoare wait without a deadline
//!   (`hoare_core::park::threads_awake`), and the party that wakes it counts it
//!   awake first; a thread process that has not started yet counts awake;
//! * a process whose wait is being ended (its waiter is claimed) is not blocked;
//! * a wait on a channel or barrier made outside every process is never counted as
//!   deadlocked: a plain thread the runtime cannot see may end it.
//!
//! What it cannot see: a plain OS thread that holds an end of a channel made
//! inside a process and has not yet used hoare (it may send later) — use
//! `spawn_blocking` for such threads, make the channel outside, or set
//! `OnDeadlock::Warn`.

use crate::proc::Proc;
use crate::report::{Blocked, Report, ReportKind};
use crate::shared::Shared;
use crate::sync::lock;
use hoare_core::sched::Watch;
use hoare_core::wait::Wait;
use hoare_core::waiter::Waiter;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// What the runtime does when it finds a deadlock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnDeadlock {
    /// End `run` with the report (the default): `try_run` returns
    /// [`ProcessError::Deadlock`](crate::ProcessError::Deadlock), `run` panics
    /// with the report's text, and the blocked processes are unwound.
    #[default]
    Fail,
    /// Print the report on standard error once and keep waiting (for programs fed
    /// by threads the runtime cannot see).
    Warn,
    /// Do not look.
    Ignore,
}

/// How long the detector lets "every worker asleep" last before it looks: a
/// process that is about to be woken by a thread which has just registered gets
/// this long.
const DEBOUNCE: Duration = Duration::from_millis(2);

/// The longest the detector sleeps between looks while a registered thread is
/// awake (it may be about to wake a process, or never).
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The verdict of one look.
enum Look {
    /// A deadlock: the report.
    Deadlock(Report),
    /// Not now, but look again soon if nothing changes (a thread is awake, a
    /// thread process has not started, a wake is under way).
    NotYet,
    /// No deadlock in this state (a wait on an object made outside, the root has
    /// returned): look again only once the workers have run.
    No,
}

/// Starts the detector thread of a runtime (when deadlocks or stalls are looked
/// for). It holds the runtime weakly and ends at shutdown.
///
/// Returns once the thread runs: what a new thread allocates to start (its
/// thread-locals) happens before `run` begins, not in the middle of the program
/// (a program that counts its allocations in a steady state would see it).
pub(crate) fn start(sh: &Arc<Shared>) -> std::io::Result<std::thread::JoinHandle<()>> {
    let weak = Arc::downgrade(sh);
    let started = Arc::new(std::sync::Barrier::new(2));
    let s = started.clone();
    let t = std::thread::Builder::new()
        .name(format!("{}-detector", sh.thread_name))
        .spawn(move || detector(weak, s))?;
    started.wait();
    Ok(t)
}

fn detector(weak: Weak<Shared>, started: Arc<std::sync::Barrier>) {
    let mut seen = 0u64;
    let mut stall = weak
        .upgrade()
        .and_then(|sh| sh.opts.stall.clone())
        .map(Stall::new);
    started.wait();
    drop(started);
    loop {
        let Some(sh) = weak.upgrade() else { return };
        // Shutdown stops the watch (and joins this thread).
        let epoch = match sh
            .idle
            .wait_all_asleep(seen, stall.as_ref().map(Stall::interval))
        {
            Watch::Stopped => return,
            Watch::TimedOut => {
                if let Some(st) = &mut stall {
                    st.look(&sh);
                }
                continue;
            }
            Watch::AllAsleep(epoch) => epoch,
        };
        if let Some(st) = &mut stall {
            st.look(&sh);
        }
        if sh.opts.on_deadlock == OnDeadlock::Ignore {
            seen = epoch;
            continue;
        }
        drop(sh);
        std::thread::sleep(DEBOUNCE);
        let mut backoff = DEBOUNCE;
        loop {
            let Some(sh) = weak.upgrade() else { return };
            let look = sh.idle.with_all_asleep(epoch, || look(&sh));
            match look {
                // The workers ran meanwhile: wait for the next time they all sleep.
                None => break,
                Some(Look::No) => {
                    seen = epoch;
                    break;
                }
                Some(Look::NotYet) => {
                    drop(sh);
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                Some(Look::Deadlock(report)) => {
                    seen = epoch;
                    match sh.opts.on_deadlock {
                        OnDeadlock::Fail => match sh.gate.deadlock(report) {
                            Ok(()) => return,
                            // Nobody to end: say it, as Warn does.
                            Err(report) => {
                                eprintln!("{report}");
                                break;
                            }
                        },
                        _ => {
                            eprintln!("{report}");
                            break;
                        }
                    }
                }
            }
        }
    }
}

/// Where a stall report goes: standard error, or the user's callback.
pub(crate) type StallSink = Option<Arc<dyn Fn(&Report) + Send + Sync>>;

/// The stall report's settings and memory: which waits it has seen since when.
struct Stall {
    threshold: Duration,
    sink: StallSink,
    /// (process id, park generation) of each wait seen open, and since when.
    since: HashMap<(u64, u64), Instant>,
    /// The waits already reported (each is reported once).
    reported: HashSet<(u64, u64)>,
}

impl Stall {
    fn new((threshold, sink): (Duration, StallSink)) -> Self {
        Stall {
            threshold,
            sink,
            since: HashMap::new(),
            reported: HashSet::new(),
        }
    }

    /// How often to look: four times per threshold, from 10 ms to 1 s.
    fn interval(&self) -> Duration {
        (self.threshold / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }

    /// Looks at the parked processes if every worker is idle right now (holding
    /// them so); reports the waits open for longer than the threshold.
    fn look(&mut self, sh: &Shared) {
        let now = Instant::now();
        let (threshold, since, reported) = (self.threshold, &mut self.since, &mut self.reported);
        let report = sh.idle.with_all_sleeping(|| {
            let mut open = HashMap::new();
            let mut blocked = Vec::new();
            let mut stacks = Vec::new();
            for p in live(sh) {
                // SAFETY: every worker is held in the sleepers' list: no process
                // runs, so a parked process's header and waiter are stable.
                let proc = unsafe { &*p };
                let w = proc.waiting.get();
                // SAFETY: as above.
                if w.is_null() || !unsafe { (*w).is_waiting() } {
                    continue;
                }
                let key = (proc.id, proc.state.next_gen());
                let first = *since.get(&key).unwrap_or(&now);
                open.insert(key, first);
                if now.duration_since(first) < threshold || reported.contains(&key) {
                    continue;
                }
                // SAFETY: as above: the process is parked in this wait.
                let Some(wait) = (unsafe { (*w).wait_on().describe() }) else {
                    continue;
                };
                reported.insert(key);
                stacks.push(scan_range(proc, w));
                let mut b = entry(proc, "process", wait);
                b.holds.clear();
                blocked.push((b, first));
            }
            *since = open;
            if blocked.is_empty() {
                return None;
            }
            let (mut list, firsts): (Vec<Blocked>, Vec<Instant>) = blocked.into_iter().unzip();
            holds(&mut list, &stacks);
            let mut r = Report::new(ReportKind::Stall, list);
            let longest = firsts.iter().map(|f| now.duration_since(*f)).max();
            r.notes.push(format!(
                "blocked for at least {:?} (stall threshold {threshold:?}); the program goes on",
                longest.unwrap_or_default().max(threshold)
            ));
            Some(r)
        });
        reported.retain(|k| since.contains_key(k));
        if let Some(Some(r)) = report {
            match &self.sink {
                Some(f) => f(&r),
                None => eprintln!("{r}"),
            }
        }
    }
}

/// One look at a runtime whose workers all sleep without a deadline (the caller
/// holds them asleep).
fn look(sh: &Shared) -> Look {
    if sh.gate.root_done() {
        return Look::No;
    }
    // Other runtimes' workers too: a channel may link processes of two runtimes.
    if hoare_core::park::threads_awake() > 0
        || hoare_core::sched::workers_awake() > 0
        || !sh.threads.all_started()
    {
        return Look::NotYet;
    }
    let mut blocked = Vec::new();
    let mut stacks = Vec::new();
    for p in live(sh) {
        // SAFETY: with every worker asleep, a live process is parked (nothing can
        // run it), so its header and the waiter it parked on are stable while the
        // caller holds the workers asleep.
        let proc = unsafe { &*p };
        let w = proc.waiting.get();
        if w.is_null() {
            // Parked outside a wait (a sleep whose timer is being handed over).
            return Look::NotYet;
        }
        // SAFETY: as above: the waiter is on the parked process's stack.
        let waiter = unsafe { &*w };
        if !waiter.is_waiting() {
            // Somebody is ending this wait right now.
            return Look::NotYet;
        }
        // SAFETY: the process is parked in this wait.
        let Some(wait) = (unsafe { waiter.wait_on().describe() }) else {
            return Look::NotYet;
        };
        if matches!(wait, Wait::External(_)) || wait.objects().iter().any(|o| o.outside) {
            return Look::No;
        }
        stacks.push(scan_range(proc, w));
        blocked.push(entry(proc, "process", wait));
    }
    if blocked.is_empty() {
        return Look::No;
    }
    holds(&mut blocked, &stacks);
    for t in sh.threads.snapshot() {
        blocked.push(Blocked {
            id: t.0,
            name: t.1,
            site: Some(t.2),
            kind: "thread process",
            wait: Wait::Other("a hoare operation on its own OS thread".into()),
            holds: Vec::new(),
        });
    }
    Look::Deadlock(Report::new(ReportKind::Deadlock, blocked))
}

/// A report entry for a process.
fn entry(proc: &Proc, kind: &'static str, wait: Wait) -> Blocked {
    Blocked {
        id: proc.id,
        name: proc.name.as_deref().map(str::to_owned),
        site: Some(proc.site),
        kind,
        wait,
        holds: Vec::new(),
    }
}

/// Every live process of the runtime, oldest first.
fn live(sh: &Shared) -> Vec<*mut Proc> {
    let mut live = crate::sweep::live_headers(sh);
    // SAFETY: the headers are written (see `live_headers`); the caller holds the
    // workers stopped or asleep.
    live.sort_by_key(|&p| unsafe { (*p).id });
    live
}

/// The part of a parked process's stack that `holds` scans: from a little below
/// its saved stack pointer (see `stack_mark`: the switch saved its registers
/// above it) or its waiter, to its header (the top).
/// And the heap memory its body owns (see `Proc::captures`).
fn scan_range(proc: &Proc, w: *const Waiter) -> [(usize, usize); 2] {
    let top = proc as *const Proc as usize;
    let limit = proc.slot + crate::stack::GUARD;
    [
        (
            crate::stack_mark::scan_from(proc.sp.get(), w as usize, limit, top),
            top,
        ),
        proc.captures,
    ]
}

/// Fills in, for each blocked process, the objects of the report it keeps an end
/// of on its stack: the words of the range `scan_range` gives (from a little
/// below where it parked to its header, the top) that point at an object (a
/// reference) or exactly where an end of it points (an end is an `Arc`, which
/// points at the counts in front of the object: `Object::arc_offset`). For the
/// wait-for cycle only: a false match could at worst show a wrong cycle, never
/// cause a report.
///
/// Only those two addresses per object: a word elsewhere in front of an object
/// (a pointer to the allocation before it, or into the allocator's header of
/// its own) is no end, and since where the allocator puts what depends on more
/// than the program (other threads, earlier allocations), matching it made a
/// replayed checker report show another cycle.
pub(crate) fn holds(blocked: &mut [Blocked], stacks: &[[(usize, usize); 2]]) {
    // (address an end or reference holds, the object's key), sorted by address.
    let mut targets: Vec<(usize, usize)> = blocked
        .iter()
        .flat_map(|b| b.wait.objects())
        .flat_map(|o| [(o.key, o.key), (o.key.wrapping_sub(o.arc_offset()), o.key)])
        .collect();
    targets.sort_unstable();
    targets.dedup();
    let (Some(&(lo, _)), Some(&(hi, _))) = (targets.first(), targets.last()) else {
        return;
    };
    for (b, ranges) in blocked.iter_mut().zip(stacks) {
        let mut found = Vec::new();
        for &(from, to) in ranges {
            let mut a = (from + 7) & !7;
            while a + 8 <= to {
                // SAFETY: the range lies within the parked process's stack slot,
                // which is mapped and not being written (the process cannot run),
                // or is the heap memory its body owns until it returns (see
                // `Proc::captures`; it has not returned: it is parked).
                let word = unsafe { std::ptr::read_volatile(a as *const usize) };
                if (lo..=hi).contains(&word) {
                    let i = targets.partition_point(|&(t, _)| t < word);
                    for &(_, k) in targets[i..].iter().take_while(|&&(t, _)| t == word) {
                        if !found.contains(&k) {
                            found.push(k);
                        }
                    }
                }
                a += 8;
            }
        }
        b.holds = found;
    }
}

/// The leak report (at shutdown, the workers stopped): the processes still
/// parked in a wait when the root returned.
pub(crate) fn leak_report(pending: &[(*mut Proc, bool)]) -> Option<Report> {
    let mut blocked = Vec::new();
    let mut stacks = Vec::new();
    for &(p, parked) in pending {
        if !parked {
            continue;
        }
        // SAFETY: the workers are stopped and the sweep owns `p`, which has not
        // been unwound yet: its header and the waiter it parked on are intact.
        let proc = unsafe { &*p };
        let w: *const Waiter = proc.waiting.get();
        // SAFETY: as above.
        let wait = (!w.is_null())
            .then(|| unsafe { (*w).wait_on().describe() })
            .flatten()
            .unwrap_or(Wait::Other("a sleep".into()));
        stacks.push(scan_range(proc, w));
        blocked.push(entry(proc, "process", wait));
    }
    if blocked.is_empty() {
        return None;
    }
    let mut order: Vec<usize> = (0..blocked.len()).collect();
    order.sort_by_key(|&i| blocked[i].id);
    let blocked: Vec<Blocked> = order.iter().map(|&i| blocked[i].clone()).collect();
    let stacks: Vec<[(usize, usize); 2]> = order.iter().map(|&i| stacks[i]).collect();
    let mut blocked = blocked;
    holds(&mut blocked, &stacks);
    Some(Report::new(ReportKind::Leak, blocked))
}

/// Where `run` waits: for its root process to return, or for the detector to
/// report a deadlock.
#[derive(Default)]
pub(crate) struct Gate {
    state: std::sync::Mutex<GateState>,
    cv: std::sync::Condvar,
}

#[derive(Default)]
struct GateState {
    /// `run` waits here (a runtime used only through handles has nobody to end).
    waiting: bool,
    root_done: bool,
    deadlock: Option<Report>,
}

impl Gate {
    /// Whether the root process has returned (then nothing is a deadlock: the
    /// runtime is about to shut down).
    pub(crate) fn root_done(&self) -> bool {
        lock(&self.state).root_done
    }

    /// The root process has returned.
    pub(crate) fn finish_root(&self) {
        lock(&self.state).root_done = true;
        self.cv.notify_all();
    }

    /// The detector found a deadlock: hands it to `run`, or gives it back if
    /// nobody runs (a runtime used through handles only, or the root returned).
    fn deadlock(&self, report: Report) -> Result<(), Report> {
        let mut st = lock(&self.state);
        if !st.waiting || st.root_done {
            return Err(report);
        }
        st.deadlock = Some(report);
        drop(st);
        self.cv.notify_all();
        Ok(())
    }

    /// Waits for the root to return (`None`) or for a deadlock report.
    pub(crate) fn wait(&self) -> Option<Report> {
        let mut st = lock(&self.state);
        st.waiting = true;
        loop {
            if let Some(r) = st.deadlock.take() {
                return Some(r);
            }
            if st.root_done {
                return None;
            }
            st = match self.cv.wait(st) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
    }
}

/// Marks the root process done when dropped (it returned, panicked or was
/// unwound).
pub(crate) struct RootDone(pub(crate) Arc<Shared>);

impl Drop for RootDone {
    fn drop(&mut self) {
        self.0.gate.finish_root();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hoare_core::wait::ObjInfo;

    fn waiting_on(id: u64, obj: &[u64; 8]) -> Blocked {
        let chan = ObjInfo::here(None).object_in_arc("channel", obj);
        Blocked {
            id,
            name: None,
            site: None,
            kind: "process",
            wait: Wait::Chan { op: "send", chan },
            holds: Vec::new(),
        }
    }

    /// An end of an object is a word that points exactly where an `Arc` of it
    /// points, or at it; a pointer a little further in front of it is another
    /// allocation's. Fails if `holds` takes any word up to some distance in front
    /// of an object for an end (what made a replayed checker report differ).
    #[test]
    fn only_exact_arc_pointers_and_references_are_ends() {
        let objs = [[0u64; 8]; 2];
        let key = |i: usize| &objs[i] as *const [u64; 8] as usize;
        let off = hoare_core::wait::arc_offset::<[u64; 8]>();
        // Process 0's memory: an Arc of object 1, and words 32, 64 and 128
        // bytes in front of object 0 (the allocator's header of its Arc's
        // allocation, an allocation before it). Process 1's: a reference to
        // object 0.
        assert_eq!(off, 16);
        let mem0 = [key(1) - off, key(0) - 32, key(0) - 64, key(0) - 128];
        let mem1 = [0usize, key(0)];
        let range = |m: &[usize]| (m.as_ptr() as usize, m.as_ptr() as usize + size_of_val(m));
        let mut blocked = [waiting_on(0, &objs[0]), waiting_on(1, &objs[1])];
        holds(
            &mut blocked,
            &[[range(&mem0), (0, 0)], [range(&mem1), (0, 0)]],
        );
        assert_eq!(blocked[0].holds, vec![key(1)]);
        assert_eq!(blocked[1].holds, vec![key(0)]);
    }
}
