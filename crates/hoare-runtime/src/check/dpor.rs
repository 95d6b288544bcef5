//! Exhaustive exploration: Source-DPOR with sleep sets (Abdulla, Aronis, Jonsson,
//! Sagonas, POPL 2014), stateless.
//!
//! Each execution replays a prefix of the previous one and branches at its
//! deepest node with an unexplored backtrack choice. After an execution the
//! happens-before relation of its trace is computed with vector clocks (program
//! order, the dependence of the steps' accesses, and "woke or spawned": a process
//! another step woke continued inside that step), every race `i ⋖ j` (dependent,
//! different processes, `i` happens before `j` directly) adds an initial of
//! `notdep(i).j` to the backtrack set of the node before `i` unless one is there,
//! and a step that woke a process whose timeout could fire there adds that
//! timeout (a disabled timer is never seen by race detection). Sleep sets: a
//! choice explored at a node, and every sleeping choice the chosen step is
//! independent of, sleeps in the child; an execution whose every enabled choice
//! sleeps is cut (it is equivalent to one explored already).

use super::exec::{conflict, End, Event, Exec};
use super::{Access, Choice, Strategy};

struct Node {
    enabled: Vec<Choice>,
    backtrack: Vec<Choice>,
    /// Choices explored here, with the accesses their steps made.
    done: Vec<(Choice, Acc)>,
    sleep: Vec<(Choice, Acc)>,
    chosen: Choice,
}

/// The accesses of a step, shared between the trace and the sleep sets.
type Acc = super::exec::Accs;

/// The exploration tree's current branch.
#[derive(Default)]
pub(crate) struct Dpor {
    stack: Vec<Node>,
    /// Nodes popped off the branch, kept for their buffers (a step allocates
    /// nothing once the tree has been as deep).
    pool: Vec<Node>,
    /// The buffers of `analyse`, kept between executions.
    vc: Vec<u32>,
    pclock: Vec<u32>,
    hist: Vec<Vec<(usize, Access)>>,
    cands: Vec<usize>,
    races: Vec<(usize, usize)>,
    v: Vec<usize>,
    initials: Vec<Choice>,
    seen: Vec<u32>,
    /// How many leading steps of the current branch were analysed already,
    /// their clocks in `vc` (of width `vc_w`): see `analyse`.
    known: usize,
    vc_w: usize,
    /// How to take `pclock` back to its state before a step: the rows each
    /// analysed step changed, as `[row, old values (vc_w of them)]`, and where
    /// each step's entries begin.
    undo: Vec<u32>,
    undo_at: Vec<usize>,
}

fn dependent(a: &[(u32, Access)], b: &[(u32, Access)]) -> bool {
    a.iter()
        .any(|&(o, x)| b.iter().any(|&(p, y)| o == p && conflict(x, y)))
}

fn proc_of(c: Choice) -> u32 {
    match c {
        Choice::Run(p) | Choice::Fire(p) => p,
    }
}

impl Strategy for Dpor {
    fn choose(&mut self, step: usize, en: &[Choice], ex: &Exec) -> Result<Choice, End> {
        if step < self.stack.len() {
            let n = &self.stack[step];
            if n.enabled != en {
                return Err(End::Nondeterministic(format!(
                    "step {step}: enabled {:?}, before {:?}",
                    en, n.enabled
                )));
            }
            return Ok(n.chosen);
        }
        let mut node = self.pool.pop().unwrap_or_else(|| Node {
            enabled: Vec::new(),
            backtrack: Vec::new(),
            done: Vec::new(),
            sleep: Vec::new(),
            chosen: en[0],
        });
        node.sleep.clear();
        if let (Some(pi), Some(last)) = (step.checked_sub(1), ex.trace.borrow().last()) {
            let parent = &self.stack[pi];
            node.sleep.extend(
                parent
                    .sleep
                    .iter()
                    .chain(parent.done.iter())
                    .filter(|(c, a)| proc_of(*c) != last.proc && !dependent(a, &last.acc))
                    .cloned(),
            );
        }
        let Some(&c) = en.iter().find(|c| !node.sleep.iter().any(|(s, _)| s == *c)) else {
            self.pool.push(node);
            return Err(End::Pruned);
        };
        node.enabled.clear();
        node.enabled.extend_from_slice(en);
        node.backtrack.clear();
        node.backtrack.push(c);
        node.done.clear();
        node.chosen = c;
        self.stack.push(node);
        Ok(c)
    }
}

impl Dpor {
    /// Race analysis of the execution just run (its trace is `trace`).
    ///
    /// Only the steps after the prefix it replayed are analysed: the races
    /// whose later step lies in that prefix were found when the prefix was
    /// analysed (by the execution that first took it, or a later one), and
    /// adding them again would add nothing (the first addition put a choice of
    /// one of the race's initials, or every enabled one, in the backtrack set,
    /// and a race whose node has one is skipped). The prefix's vector clocks
    /// are kept from that analysis (they depend on the prefix alone), the
    /// per-process clocks are taken back to their state after the prefix (an
    /// undo log), and the access history is cut back to the prefix.
    pub(crate) fn analyse(&mut self, trace: &[Event], nprocs: usize) {
        let n = trace.len().min(self.stack.len());
        // Vector clocks, flat: event j's is `vc[j * w..(j + 1) * w]`.
        let w = nprocs;
        let from = if w == self.vc_w { self.known.min(n) } else { 0 };
        let mut vc = std::mem::take(&mut self.vc);
        vc.truncate(from * w);
        vc.reserve(n * w);
        let mut pclock = std::mem::take(&mut self.pclock);
        let mut hist = std::mem::take(&mut self.hist);
        let (mut undo, mut undo_at) = (
            std::mem::take(&mut self.undo),
            std::mem::take(&mut self.undo_at),
        );
        if from == 0 {
            pclock.clear();
            pclock.resize(nprocs * w, 0);
            for h in &mut hist {
                h.clear();
            }
            undo.clear();
            undo_at.clear();
        } else {
            // Back to the state after step `from - 1`.
            let keep = undo_at.get(from).copied().unwrap_or(undo.len());
            while undo.len() > keep {
                let at = undo.len() - (w + 1);
                let r = undo[at] as usize;
                pclock[r * w..(r + 1) * w].copy_from_slice(&undo[at + 1..]);
                undo.truncate(at);
            }
            undo_at.truncate(from);
            for h in &mut hist {
                while h.last().is_some_and(|&(i, _)| i >= from) {
                    h.pop();
                }
            }
        }
        let mut cands = std::mem::take(&mut self.cands);
        let mut races = std::mem::take(&mut self.races);
        races.clear();
        let (mut v, mut initials, mut seen) = (
            std::mem::take(&mut self.v),
            std::mem::take(&mut self.initials),
            std::mem::take(&mut self.seen),
        );
        for (j, e) in trace.iter().enumerate().take(n).skip(from) {
            let p = e.proc as usize;
            cands.clear();
            for &(o, a) in e.acc.iter() {
                if let Some(h) = hist.get(o as usize) {
                    for &(i, b) in h {
                        if trace[i].proc != e.proc && conflict(a, b) {
                            cands.push(i);
                        }
                    }
                }
            }
            cands.sort_unstable_by(|a, b| b.cmp(a));
            cands.dedup();
            let start = vc.len();
            vc.extend_from_slice(&pclock[p * w..(p + 1) * w]);
            for &i in &cands {
                let q = trace[i].proc as usize;
                // A race whose first step was forced (one enabled choice) is not
                // kept: it cannot be reversed there, and the loop over the races
                // below would add nothing (a backtrack set holds only enabled
                // choices, and the forced one is in it already).
                if (vc[start + q] as usize) < i + 1 && self.stack[i].enabled.len() > 1 {
                    races.push((i, j));
                }
                for k in 0..w {
                    vc[start + k] = vc[start + k].max(vc[i * w + k]);
                }
            }
            vc[start + p] = (j + 1) as u32;
            undo_at.push(undo.len());
            for &x in e.woke.iter() {
                let x = x as usize;
                undo.push(x as u32);
                undo.extend_from_slice(&pclock[x * w..(x + 1) * w]);
                for k in 0..w {
                    pclock[x * w + k] = pclock[x * w + k].max(vc[start + k]);
                }
            }
            undo.push(p as u32);
            undo.extend_from_slice(&pclock[p * w..(p + 1) * w]);
            pclock[p * w..(p + 1) * w].copy_from_slice(&vc[start..start + w]);
            for &(o, a) in e.acc.iter() {
                let o = o as usize;
                if hist.len() <= o {
                    hist.resize_with(o + 1, Vec::new);
                }
                hist[o].push((j, a));
            }
            // A step that disabled a due timeout races with it.
            for &d in e.disabled.iter() {
                let f = Choice::Fire(d);
                let node = &mut self.stack[j];
                if node.enabled.contains(&f) && !node.backtrack.contains(&f) {
                    node.backtrack.push(f);
                }
            }
        }
        for &(i, j) in &races {
            let pi = trace[i].proc as usize;
            // v = notdep(i).j; its initials.
            v.clear();
            v.extend(((i + 1)..j).filter(|&k| (vc[k * w + pi] as usize) < i + 1));
            v.push(j);
            initials.clear();
            seen.clear();
            for (x, &k) in v.iter().enumerate() {
                let pk = trace[k].proc;
                if seen.contains(&pk) {
                    continue;
                }
                seen.push(pk);
                let first = v[..x]
                    .iter()
                    .all(|&k2| (vc[k * w + trace[k2].proc as usize] as usize) < k2 + 1);
                if first {
                    initials.push(trace[k].choice);
                }
            }
            let node = &mut self.stack[i];
            if node
                .backtrack
                .iter()
                .any(|b| initials.iter().any(|c| proc_of(*c) == proc_of(*b)))
            {
                continue;
            }
            let pick = initials
                .iter()
                .copied()
                .filter(|c| node.enabled.contains(c))
                .min_by_key(|c| (proc_of(*c) != trace[j].proc) as u8);
            match pick {
                Some(c) => node.backtrack.push(c),
                None => {
                    // Not expected; stay sound: every enabled choice.
                    for &c in &node.enabled {
                        if !node.backtrack.contains(&c) {
                            node.backtrack.push(c);
                        }
                    }
                }
            }
        }
        (self.vc, self.pclock, self.hist) = (vc, pclock, hist);
        (self.cands, self.races) = (cands, races);
        (self.known, self.vc_w) = (n, w);
        (self.undo, self.undo_at) = (undo, undo_at);
        (self.v, self.initials, self.seen) = (v, initials, seen);
    }

    /// Moves to the next branch: the deepest node with a backtrack choice not yet
    /// explored and not asleep. `false`: the exploration is complete.
    pub(crate) fn next(&mut self, trace: &[Event]) -> bool {
        while !self.stack.is_empty() {
            let depth = self.stack.len() - 1;
            let node = &mut self.stack[depth];
            let acc = trace
                .get(depth)
                .filter(|e| e.choice == node.chosen)
                .map(|e| e.acc.clone())
                .unwrap_or_else(|| Acc::accs(&[]));
            if !node.done.iter().any(|(c, _)| *c == node.chosen) {
                node.done.push((node.chosen, acc));
            }
            let next = node.backtrack.iter().copied().find(|c| {
                !node.done.iter().any(|(d, _)| d == c) && !node.sleep.iter().any(|(s, _)| s == c)
            });
            if let Some(c) = next {
                node.chosen = c;
                // Step `depth` changes: the steps before it stay analysed.
                self.known = self.known.min(depth);
                return true;
            }
            if let Some(n) = self.stack.pop() {
                self.pool.push(n);
            }
        }
        false
    }
}
