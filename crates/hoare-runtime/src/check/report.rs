//! What a failed check reports: the kind, each process and what it waits on, the
//! wait-for cycle, the trace of steps and the schedule that reproduces it.

use super::exec::{End, Exec, PState};
use super::{schedule_string, Choice, Key};
use hoare_core::step::{Access, Class, OpKind};
use std::fmt;

/// What kind of failure a [`Report`] is.
///
/// ```
/// use hoare_runtime::check::ReportKind;
/// assert_ne!(ReportKind::Deadlock, ReportKind::Panic);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReportKind {
    /// Nobody could act while the root process had not returned.
    Deadlock,
    /// A process panicked.
    Panic,
    /// A process failed an assertion (a panic whose message says so).
    Assertion,
    /// The root returned and processes were left blocked.
    LeftBlocked,
    /// An execution reached the default step limit (see
    /// [`Builder::max_steps`](super::Builder::max_steps)).
    StepLimit,
    /// A replay did not find the choices the schedule makes: the network does
    /// not choose deterministically (e.g. `HashMap` iteration order, the real
    /// clock, shared state outside hoare).
    Nondeterminism,
}

/// A failure found by a check: `Display` gives the whole report.
///
/// ```
/// use hoare_runtime::check::{Builder, ReportKind};
/// let r = Builder::new().try_run(|| panic!("boom")).unwrap_err();
/// assert_eq!(r.kind(), ReportKind::Panic);
/// assert!(r.to_string().contains("boom"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    kind: ReportKind,
    text: String,
    schedule: String,
}

impl Report {
    /// The kind of failure.
    ///
    /// ```
    /// use hoare_runtime::check::{Builder, ReportKind};
    /// let r = Builder::new().try_run(|| assert_eq!(1, 2)).unwrap_err();
    /// assert_eq!(r.kind(), ReportKind::Assertion);
    /// ```
    pub fn kind(&self) -> ReportKind {
        self.kind
    }
    /// The schedule string that reproduces the failing execution (give it to
    /// [`Builder::replay`](super::Builder::replay) or `HOARE_CHECK_REPLAY`).
    ///
    /// ```
    /// use hoare_runtime::check::Builder;
    /// let r = Builder::new().try_run(|| panic!("x")).unwrap_err();
    /// let again = Builder::new().replay(r.schedule()).try_run(|| panic!("x")).unwrap_err();
    /// assert_eq!(r, again);
    /// ```
    pub fn schedule(&self) -> &str {
        &self.schedule
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Report {}

pub(crate) fn kind_of(end: &End) -> ReportKind {
    match end {
        End::Deadlock => ReportKind::Deadlock,
        End::LeftBlocked => ReportKind::LeftBlocked,
        End::Panic(m, _) if m.contains("assert") => ReportKind::Assertion,
        End::Panic(..) => ReportKind::Panic,
        End::StepLimit => ReportKind::StepLimit,
        End::Nondeterministic(_) => ReportKind::Nondeterminism,
        End::Complete | End::Pruned => ReportKind::Panic,
    }
}

fn op_name(k: OpKind) -> &'static str {
    match k {
        OpKind::Send => "send",
        OpKind::Recv => "recv",
        OpKind::TrySend => "try_send",
        OpKind::TryRecv => "try_recv",
        OpKind::TimedSend => "send (timed)",
        OpKind::TimedRecv => "recv (timed)",
        OpKind::Poison => "poison",
        OpKind::DropEnd => "drop end",
        OpKind::Alt => "alt",
        OpKind::Sync => "barrier sync",
        OpKind::Enroll => "enroll",
        OpKind::Resign => "resign",
        OpKind::Join => "join",
        OpKind::Exit => "exit",
        OpKind::Sleep => "sleep",
    }
}

fn obj_name(ex: &Exec, id: u32) -> String {
    let shown = ex.shown(id);
    if let Some(Some(i)) = ex.obj_info.borrow().get(id as usize) {
        return match i.name() {
            Some(n) => n.to_owned(),
            None => format!("chan#{shown}@{}:{}", i.site().file(), i.site().line()),
        };
    }
    let class = ex.obj_class(id);
    let id = shown;
    match class {
        Some(Class::Chan) => format!("chan#{id}"),
        Some(Class::Barrier) => format!("barrier#{id}"),
        Some(Class::Join) => format!("join#{id}"),
        Some(Class::Clock) => "clock".to_owned(),
        None => format!("obj#{id}"),
    }
}

/// The report of execution `ex`, which ended with `end`.
pub(crate) fn build(ex: &Exec, end: &End) -> Report {
    use std::fmt::Write;
    let kind = kind_of(end);
    let sched = schedule_string(&ex.schedule.borrow());
    let mut t = String::new();
    let what = match end {
        End::Deadlock => "deadlock: no process can act".to_owned(),
        End::LeftBlocked => "processes left blocked when the root returned".to_owned(),
        End::Panic(m, p) => {
            let who = ex.procs.borrow().get(*p as usize).map(|p| p.label());
            format!(
                "{} in process {}: {m}",
                if kind == ReportKind::Assertion {
                    "failed assertion"
                } else {
                    "panic"
                },
                who.unwrap_or_default()
            )
        }
        End::StepLimit => "step limit reached (a livelock, or a network that does not end: \
                           set max_steps to bound it)"
            .to_owned(),
        End::Nondeterministic(m) => format!("the network is not deterministic: {m}"),
        End::Complete | End::Pruned => "no failure".to_owned(),
    };
    let _ = writeln!(
        t,
        "hoare::check: {what} ({} steps)",
        ex.schedule.borrow().len()
    );
    // Processes and what they wait on.
    let procs = ex.procs.borrow();
    let mut waits: Vec<(u32, Vec<u32>)> = Vec::new();
    let _ = writeln!(t, "processes:");
    for p in procs.iter() {
        let st = match p.state.get() {
            PState::Done => continue,
            PState::Ready => {
                let op = p.pending.borrow();
                match op.as_ref() {
                    Some(op) => format!("ready to {}", describe(ex, op.kind, &op.objs)),
                    None => "ready".to_owned(),
                }
            }
            PState::Blocked => {
                let op = p.blocked_in.borrow();
                let objs: Vec<u32> = op
                    .as_ref()
                    .map(|o| {
                        o.objs
                            .iter()
                            .map(|x| ex.obj(Key::Obj(x.class, x.addr), x.class))
                            .collect()
                    })
                    .unwrap_or_default();
                waits.push((p.idx, objs));
                let w = p.waiting.get();
                // SAFETY: the process is parked in the wait of this waiter.
                let wait = (!w.is_null())
                    .then(|| unsafe { (*w).wait_on().describe() })
                    .flatten();
                let mut s = match (wait, op.as_ref()) {
                    (Some(w), _) => format!("blocked in {w}"),
                    (None, Some(op)) => format!("blocked in {}", describe(ex, op.kind, &op.objs)),
                    (None, None) => "blocked".to_owned(),
                };
                if let Some(d) = p.deadline.get() {
                    let _ = write!(s, " until t+{:?}", d.duration_since(ex.base));
                }
                s
            }
            PState::Fresh | PState::Woken | PState::Running => "running".to_owned(),
        };
        let _ = writeln!(t, "  {}: {st}", p.label());
    }
    // The wait-for graph. A process blocked on a channel waits for the blocked
    // processes that used it in the other direction (the receivers of a blocked
    // send, the senders of a blocked receive) or, if none did yet, for the one
    // it last communicated with (the one that holds the other end, as a
    // philosopher holds the fork it picked up).
    if matches!(end, End::Deadlock | End::LeftBlocked) {
        let trace = ex.trace.borrow();
        let mut partner: Vec<Option<u32>> = vec![None; procs.len()];
        for e in trace.iter() {
            if let Choice::Run(_) = e.choice {
                if let Some(&q) = e.woke.iter().find(|&&q| q != e.proc) {
                    partner[e.proc as usize] = Some(q);
                }
                for &q in &e.woke {
                    if q != e.proc {
                        partner[q as usize] = Some(e.proc);
                    }
                }
            }
        }
        let blocked = |q: u32| waits.iter().any(|(b, _)| *b == q);
        let edges: Vec<(u32, Vec<u32>)> = waits
            .iter()
            .map(|(p, objs)| {
                let dir = procs[*p as usize]
                    .blocked_in
                    .borrow()
                    .as_ref()
                    .map(|o| o.kind);
                let want = match dir {
                    Some(OpKind::Send) => Some(Access::Recv),
                    Some(OpKind::Recv) => Some(Access::Send),
                    _ => None,
                };
                let mut to: Vec<u32> = trace
                    .iter()
                    .filter(|e| e.proc != *p && blocked(e.proc))
                    .filter(|e| {
                        e.acc.iter().any(|&(o, a)| {
                            objs.contains(&o) && a != Access::Drop && want.is_none_or(|w| a == w)
                        })
                    })
                    .map(|e| e.proc)
                    .collect();
                to.dedup();
                if to.is_empty() {
                    if let Some(q) = partner[*p as usize].filter(|&q| blocked(q)) {
                        to.push(q);
                    }
                }
                (*p, to)
            })
            .collect();
        if let Some(cycle) = find_cycle(&edges) {
            let mut names: Vec<String> = cycle.iter().map(|&p| procs[p as usize].short()).collect();
            names.push(names[0].clone());
            let _ = writeln!(t, "wait-for cycle: {}", names.join(" -> "));
        }
    }
    let trace = ex.trace.borrow();
    const SHOWN: usize = 200;
    let skip = trace.len().saturating_sub(SHOWN);
    if skip > 0 {
        let _ = writeln!(t, "trace (the last {SHOWN} of {} steps):", trace.len());
    } else {
        let _ = writeln!(t, "trace ({} steps):", trace.len());
    }
    for (i, e) in trace.iter().enumerate().skip(skip) {
        let who = procs[e.proc as usize].short();
        let what = match (e.choice, e.kind) {
            (Choice::Fire(_), Some(k)) => format!("timeout of {}", op_name(k)),
            (Choice::Fire(_), None) => "timeout".to_owned(),
            (Choice::Run(_), Some(k)) => {
                let objs: Vec<String> = e
                    .acc
                    .iter()
                    .filter(|(o, _)| {
                        ex.obj_class(*o) != Some(Class::Join)
                            || k == OpKind::Join
                            || k == OpKind::Exit
                    })
                    .map(|(o, _)| obj_name(ex, *o))
                    .collect();
                format!("{} {}", op_name(k), objs.join(", "))
            }
            (Choice::Run(_), None) => "start".to_owned(),
        };
        let woke: Vec<String> = e.woke.iter().map(|w| format!("#{w}")).collect();
        if woke.is_empty() {
            let _ = writeln!(t, "  {i:>4}: {who}: {what}");
        } else {
            let _ = writeln!(t, "  {i:>4}: {who}: {what} (continues {})", woke.join(", "));
        }
    }
    let _ = writeln!(t, "schedule: {sched}");
    let _ = write!(
        t,
        "replay with HOARE_CHECK_REPLAY={sched} (or Builder::replay)"
    );
    Report {
        kind,
        text: t,
        schedule: sched,
    }
}

fn describe(ex: &Exec, kind: OpKind, objs: &[hoare_core::step::Obj]) -> String {
    let names: Vec<String> = objs
        .iter()
        .map(|o| obj_name(ex, ex.obj(Key::Obj(o.class, o.addr), o.class)))
        .collect();
    format!("{} {}", op_name(kind), names.join(", "))
}

/// A cycle in the graph `edges` (each node's successors), if there is one.
fn find_cycle(edges: &[(u32, Vec<u32>)]) -> Option<Vec<u32>> {
    fn dfs(
        edges: &[(u32, Vec<u32>)],
        i: usize,
        state: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<u32>> {
        state[i] = 1;
        path.push(i);
        for &n in &edges[i].1 {
            let Some(ni) = edges.iter().position(|(q, _)| *q == n) else {
                continue;
            };
            if state[ni] == 1 {
                let pos = path.iter().position(|&x| x == ni).unwrap_or(0);
                return Some(path[pos..].iter().map(|&x| edges[x].0).collect());
            }
            if state[ni] == 0 {
                if let Some(c) = dfs(edges, ni, state, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        state[i] = 2;
        None
    }
    let mut state = vec![0u8; edges.len()];
    for i in 0..edges.len() {
        if state[i] == 0 {
            if let Some(c) = dfs(edges, i, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}
