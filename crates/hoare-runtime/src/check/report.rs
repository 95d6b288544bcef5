//! What a failed check reports: the kind, each process and what it waits on, the
//! wait-for cycle, the trace of steps and the schedule that reproduces it.

use super::exec::{End, Exec, PState};
use super::{schedule_string, Choice, Key};
use hoare_core::step::{Class, OpKind};
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
    match ex.obj_class.borrow().get(id as usize) {
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
                            .map(|x| ex.obj(Key::Addr(x.addr), x.class))
                            .collect()
                    })
                    .unwrap_or_default();
                waits.push((p.idx, objs));
                let mut s = match op.as_ref() {
                    Some(op) => format!("blocked in {}", describe(ex, op.kind, &op.objs)),
                    None => "blocked".to_owned(),
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
    // The wait-for graph: p waits for q when q touched an object p waits on
    // and q is blocked too.
    if matches!(end, End::Deadlock | End::LeftBlocked) {
        let trace = ex.trace.borrow();
        let touched = |q: u32, o: u32| {
            trace
                .iter()
                .any(|e| e.proc == q && e.acc.iter().any(|&(x, _)| x == o))
        };
        let edges: Vec<(u32, Vec<u32>)> = waits
            .iter()
            .map(|(p, objs)| {
                let to = waits
                    .iter()
                    .filter(|(q, _)| q != p && objs.iter().any(|&o| touched(*q, o)))
                    .map(|(q, _)| *q)
                    .collect();
                (*p, to)
            })
            .collect();
        if let Some(cycle) = find_cycle(&edges) {
            let names: Vec<String> = cycle.iter().map(|&p| procs[p as usize].label()).collect();
            let _ = writeln!(
                t,
                "wait-for cycle: {} -> (back to the first)",
                names.join(" -> ")
            );
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
                        ex.obj_class.borrow()[*o as usize] != Class::Join
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
        .map(|o| obj_name(ex, ex.obj(Key::Addr(o.addr), o.class)))
        .collect();
    format!("{} {}", op_name(kind), names.join(", "))
}

/// A cycle in the graph `edges` (each node's successors), if there is one.
fn find_cycle(edges: &[(u32, Vec<u32>)]) -> Option<Vec<u32>> {
    let idx = |p: u32| edges.iter().position(|(q, _)| *q == p);
    for start in 0..edges.len() {
        let mut path = vec![start];
        let mut cur = start;
        let mut seen = vec![false; edges.len()];
        seen[start] = true;
        loop {
            let Some(&n) = edges[cur].1.first() else {
                break;
            };
            let Some(ni) = idx(n) else { break };
            if let Some(pos) = path.iter().position(|&x| x == ni) {
                return Some(path[pos..].iter().map(|&i| edges[i].0).collect());
            }
            if seen[ni] {
                break;
            }
            seen[ni] = true;
            path.push(ni);
            cur = ni;
        }
    }
    None
}
