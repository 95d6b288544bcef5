//! Reports of what blocked processes wait for: the deadlock report (SPEC R7), the
//! stall report and the leak report share one shape. Building one is the
//! runtime's business (it walks its processes with the workers stopped or
//! quiescent); this module holds the result, finds a wait-for cycle in it, and
//! prints it.

pub use hoare_core::wait::{Guard, Object, Wait};
use std::fmt;
use std::panic::Location;

/// One blocked process (or thread) of a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// Its id.
    pub(crate) id: u64,
    /// Its name, if it has one.
    pub(crate) name: Option<String>,
    /// Where it was spawned.
    pub(crate) site: Option<&'static Location<'static>>,
    /// `"process"` or `"thread process"`, `"thread"`.
    pub(crate) kind: &'static str,
    /// What it waits for.
    pub(crate) wait: Wait,
    /// The objects this party holds an end of (for the wait-for cycle).
    pub(crate) holds: Vec<usize>,
}

impl Blocked {
    /// `'phil0'` or `process 12`.
    fn short(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("{} {}", self.kind, self.id),
        }
    }

    /// The objects this party waits on (keys).
    fn waits_on(&self) -> Vec<usize> {
        self.wait.objects().iter().map(|o| o.key).collect()
    }

    fn object_short(&self, key: usize) -> Option<String> {
        self.wait
            .objects()
            .iter()
            .find(|o| o.key == key)
            .map(|o| o.short())
    }

    /// Its process id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Its name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Where it was spawned.
    pub fn site(&self) -> Option<&'static Location<'static>> {
        self.site
    }

    /// What it waits for.
    pub fn wait(&self) -> &Wait {
        &self.wait
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{} '{n}' (id {}", self.kind, self.id)?,
            None => write!(f, "{} {} (", self.kind, self.id)?,
        }
        if let Some(site) = self.site {
            if self.name.is_some() {
                f.write_str(", ")?;
            }
            write!(f, "spawned at {site}")?;
        }
        write!(f, ") waits for {}", self.wait)
    }
}

/// What a report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReportKind {
    /// Every live process is blocked and nothing can wake any of them.
    Deadlock,
    /// Processes blocked longer than the stall threshold (the program goes on).
    Stall,
    /// Processes still blocked when the root process returned.
    Leak,
}

/// A report of blocked processes: a deadlock, a stall or a leak. Its `Display`
/// is the text `run` panics with (and C++'s `hoare::Deadlock::what()`).
///
/// ```
/// let r = hoare_runtime::Runtime::builder()
///     .workers(1)
///     .build()
///     .try_run(|| {
///         let (_tx, rx) = hoare_core::chan::Channel::builder().name("never").one2one::<u32>();
///         rx.recv()
///     });
/// let report = match r {
///     Err(hoare_runtime::ProcessError::Deadlock(report)) => report,
///     other => panic!("expected a deadlock, got {other:?}"),
/// };
/// assert_eq!(report.blocked().len(), 1);
/// assert!(report.to_string().contains("recv on channel 'never'"), "{report}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub(crate) kind: ReportKind,
    pub(crate) blocked: Vec<Blocked>,
    pub(crate) cycle: Option<Cycle>,
    /// Further lines (e.g. how long a stall has lasted).
    pub(crate) notes: Vec<String>,
}

impl Report {
    pub(crate) fn new(kind: ReportKind, blocked: Vec<Blocked>) -> Self {
        let cycle = find_cycle(&blocked);
        Report {
            kind,
            blocked,
            cycle,
            notes: Vec::new(),
        }
    }

    /// What the report is about.
    pub fn kind(&self) -> ReportKind {
        self.kind
    }

    /// The blocked processes, oldest first.
    pub fn blocked(&self) -> &[Blocked] {
        &self.blocked
    }

    /// The wait-for cycle, if one was found (`phil0 → fork1 → phil1 → …`). Found
    /// from the channel and barrier ends each blocked process keeps on its stack:
    /// ends kept on the heap (in a `Vec` or a `Box`) are not seen.
    pub fn cycle(&self) -> Option<&Cycle> {
        self.cycle.as_ref()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.blocked.len();
        match self.kind {
            ReportKind::Deadlock => write!(
                f,
                "hoare: deadlock: all {n} live process(es) are blocked and nothing can wake them"
            )?,
            ReportKind::Stall => write!(f, "hoare: stall: {n} process(es) blocked for long")?,
            ReportKind::Leak => write!(
                f,
                "hoare: {n} process(es) still blocked when the root process returned (they are unwound)"
            )?,
        }
        for b in &self.blocked {
            write!(f, "\n  {b}")?;
        }
        if let Some(c) = &self.cycle {
            write!(f, "\n  wait-for cycle: {c}")?;
        }
        for note in &self.notes {
            write!(f, "\n  {note}")?;
        }
        Ok(())
    }
}

/// A wait-for cycle: party, object, party, object, ..., back to the first.
/// `parties[i]` waits on `objects[i]`, an end of which `parties[i + 1]` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub(crate) parties: Vec<String>,
    pub(crate) objects: Vec<String>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (p, o) in self.parties.iter().zip(&self.objects) {
            write!(f, "{p} → {o} → ")?;
        }
        match self.parties.first() {
            Some(p) => f.write_str(p),
            None => Ok(()),
        }
    }
}

/// Finds a cycle in the wait-for graph of `blocked`: party P → object O (P
/// waits on O) → party Q (Q holds an end of O, Q ≠ P) → ... A depth-first search
/// from each party in order (linear in the size of the graph, so a report on
/// 10,000 processes stays cheap); the first cycle found is returned, starting at
/// the party the search entered it by.
pub(crate) fn find_cycle(blocked: &[Blocked]) -> Option<Cycle> {
    let mut holders: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for (j, q) in blocked.iter().enumerate() {
        for &o in &q.holds {
            holders.entry(o).or_default().push(j);
        }
    }
    // Edges: for each party, (object, next party).
    let edges: Vec<Vec<(usize, usize)>> = blocked
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut out = Vec::new();
            for o in p.waits_on() {
                for &j in holders.get(&o).map_or(&[][..], |v| &v[..]) {
                    if j != i {
                        out.push((o, j));
                    }
                }
            }
            out
        })
        .collect();
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let mut colour = vec![WHITE; blocked.len()];
    // The edge each party on the current path was entered by: (party, object).
    let mut via: Vec<(usize, usize)> = vec![(usize::MAX, 0); blocked.len()];
    for root in 0..blocked.len() {
        if colour[root] != WHITE {
            continue;
        }
        // Stack of (party, next edge index).
        let mut stack = vec![(root, 0usize)];
        colour[root] = GREY;
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            if let Some(&(o, j)) = edges[i].get(*next) {
                *next += 1;
                match colour[j] {
                    WHITE => {
                        colour[j] = GREY;
                        via[j] = (i, o);
                        stack.push((j, 0));
                    }
                    GREY => {
                        // A cycle: j → ... → i → o → j.
                        let mut chain = vec![(i, o)];
                        let mut k = i;
                        while k != j {
                            let (pk, po) = via[k];
                            chain.push((pk, po));
                            k = pk;
                        }
                        chain.reverse();
                        return Some(Cycle {
                            parties: chain.iter().map(|&(p, _)| blocked[p].short()).collect(),
                            objects: chain
                                .iter()
                                .map(|&(p, o)| {
                                    blocked[p]
                                        .object_short(o)
                                        .unwrap_or_else(|| format!("{o:#x}"))
                                })
                                .collect(),
                        });
                    }
                    _ => {}
                }
            } else {
                colour[i] = BLACK;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chan(key: usize, name: &'static str) -> Object {
        hoare_core::wait::ObjInfo::here(Some(name)).object("channel", key)
    }

    fn party(id: u64, name: &str, waits: Wait, holds: &[usize]) -> Blocked {
        Blocked {
            id,
            name: Some(name.to_owned()),
            site: None,
            kind: "process",
            wait: waits,
            holds: holds.to_vec(),
        }
    }

    #[test]
    fn a_two_process_cycle_is_found() {
        // P1 sends on a (P2 holds a's reader); P2 sends on b (P1 holds b's reader).
        let ps = [
            party(
                1,
                "p1",
                Wait::Chan {
                    op: "send",
                    chan: chan(10, "a"),
                },
                &[10, 20],
            ),
            party(
                2,
                "p2",
                Wait::Chan {
                    op: "send",
                    chan: chan(20, "b"),
                },
                &[20, 10],
            ),
        ];
        let c = find_cycle(&ps).expect("a cycle");
        assert_eq!(c.to_string(), "p1 → a → p2 → b → p1");
    }

    #[test]
    fn no_cycle_when_nobody_else_holds_the_object() {
        let ps = [party(
            1,
            "main",
            Wait::Chan {
                op: "recv",
                chan: chan(10, "c"),
            },
            &[10],
        )];
        assert_eq!(find_cycle(&ps), None);
    }

    #[test]
    fn the_shortest_cycle_through_an_alt() {
        let ps = [
            party(
                1,
                "p0",
                Wait::Alt {
                    guards: vec![
                        Guard::Chan {
                            op: "recv",
                            chan: chan(10, "x"),
                        },
                        Guard::Other("timeout"),
                    ],
                },
                &[30],
            ),
            party(
                2,
                "p1",
                Wait::Chan {
                    op: "recv",
                    chan: chan(20, "y"),
                },
                &[10],
            ),
            party(
                3,
                "p2",
                Wait::Chan {
                    op: "recv",
                    chan: chan(30, "z"),
                },
                &[20],
            ),
        ];
        let c = find_cycle(&ps).expect("a cycle");
        assert_eq!(c.to_string(), "p0 → x → p1 → y → p2 → z → p0");
        assert_eq!(
            ps[0].to_string(),
            format!("process 'p0' (id 1) waits for an alt over recv on channel 'x' (created at {}), timeout",
            match &ps[0].wait {
                Wait::Alt { guards } => match &guards[0] {
                    Guard::Chan { chan, .. } => chan.site,
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            })
        );
    }
}
