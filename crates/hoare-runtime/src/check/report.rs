//! What a failed check reports: the kind, each process and what it waits on, the
//! wait-for cycle, the trace of steps and the schedule that reproduces it.

use super::exec::{CProc, End, Exec, PState};
use super::{schedule_string, Choice, Key};
use hoare_core::step::{Class, OpKind};
use hoare_core::wait::Wait;
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
#[derive(Clone, Debug)]
pub struct Report {
    kind: ReportKind,
    text: String,
    schedule: String,
    blocked: Option<Box<crate::report::Report>>,
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
    /// For a deadlock, or processes left blocked: the blocked processes, what
    /// each waits for and the wait-for cycle, as the runtime's deadlock
    /// detector reports them ([`crate::report::Report`]: a deadlock found by
    /// the checker reads like one found at run time).
    ///
    /// ```
    /// use hoare_runtime::check::Builder;
    /// let r = Builder::new()
    ///     .try_run(|| {
    ///         let (_tx, rx) = hoare_core::chan::one2one::<u32>();
    ///         let _ = rx.recv();
    ///     })
    ///     .unwrap_err();
    /// let b = r.blocked().unwrap();
    /// assert_eq!(b.blocked().len(), 1);
    /// assert_eq!(b.kind(), hoare_runtime::report::ReportKind::Deadlock);
    /// ```
    pub fn blocked(&self) -> Option<&crate::report::Report> {
        self.blocked.as_deref()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Report {}

/// Two reports are equal when they say the same (their kind, text and
/// schedule): the runtime report inside names objects by address, which
/// differs between runs of one execution.
impl PartialEq for Report {
    fn eq(&self, o: &Self) -> bool {
        (self.kind, &self.text, &self.schedule) == (o.kind, &o.text, &o.schedule)
    }
}

impl Eq for Report {}

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
        OpKind::ExtRecv => "extended recv (recv_with)",
        OpKind::TimedExtRecv => "extended recv (recv_with, timed)",
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
    let procs = ex.procs.borrow();
    let blocked =
        matches!(end, End::Deadlock | End::LeftBlocked).then(|| Box::new(runtime_report(ex, end)));
    if let Some(r) = &blocked {
        // What the runtime's detector would say (the blocked processes, what
        // each waits for, the wait-for cycle from the ends each holds).
        let _ = writeln!(t, "{r}");
    } else {
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
                    let mut s = match (wait_of(p), op.as_ref()) {
                        (Some(w), _) => format!("blocked in {w}"),
                        (None, Some(op)) => {
                            format!("blocked in {}", describe(ex, op.kind, &op.objs))
                        }
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
        blocked,
    }
}

/// What process `p`, parked, waits for (its waiter's record), if it has one.
fn wait_of(p: &CProc) -> Option<Wait> {
    let w = p.waiting.get();
    // SAFETY: the process is parked in the wait of this waiter, which lives in
    // its (suspended) frame.
    (!w.is_null())
        .then(|| unsafe { (*w).wait_on().describe() })
        .flatten()
}

/// The runtime's report of the processes blocked at the end of `ex`: each with
/// what it waits for, and the ends it holds (found on its stack, from where it
/// parked to the top, and in its boxed body's captures, by the detector's own
/// search) for the wait-for cycle.
fn runtime_report(ex: &Exec, end: &End) -> crate::report::Report {
    use crate::report::{Blocked, ReportKind as K};
    let procs = ex.procs.borrow();
    let mut blocked = Vec::new();
    let mut stacks = Vec::new();
    for p in procs.iter().filter(|p| p.state.get() == PState::Blocked) {
        let wait = wait_of(p).unwrap_or_else(|| {
            let what = p.blocked_in.borrow().as_ref().map_or_else(
                || "a sleep".to_owned(),
                |op| describe(ex, op.kind, &op.objs),
            );
            Wait::Other(what)
        });
        let top = p.stack_top();
        let w = p.waiting.get() as usize;
        let from = crate::stack_mark::scan_from(p.parked_sp.get(), w, p.limit, top);
        stacks.push([(from, top), p.captures]);
        blocked.push(Blocked {
            id: u64::from(p.idx),
            name: p.name.clone(),
            site: Some(p.site),
            kind: "process",
            wait,
            holds: Vec::new(),
        });
    }
    crate::detect::holds(&mut blocked, &stacks);
    let kind = if *end == End::Deadlock {
        K::Deadlock
    } else {
        K::Leak
    };
    crate::report::Report::new(kind, blocked)
}

fn describe(ex: &Exec, kind: OpKind, objs: &[hoare_core::step::Obj]) -> String {
    let names: Vec<String> = objs
        .iter()
        .map(|o| obj_name(ex, ex.obj(Key::Obj(o.class, o.addr), o.class)))
        .collect();
    format!("{} {}", op_name(kind), names.join(", "))
}
