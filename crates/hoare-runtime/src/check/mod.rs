//! The checking runtime: explores the interleavings of a process network's CSP
//! events on one thread, and reports a deadlock, a panic, a failed assertion or
//! processes left blocked with the schedule that reproduces it.
//!
//! ```
//! use hoare_runtime::check::Builder;
//!
//! let stats = Builder::new()
//!     .exhaustive()
//!     .run(|| {
//!         let (tx, rx) = hoare_core::chan::one2one::<u32>();
//!         let h = hoare_runtime::spawn(move || tx.send(7).unwrap());
//!         assert_eq!(rx.recv(), Ok(7));
//!         h.join().unwrap();
//!     });
//! assert!(stats.complete());
//! ```
//!
//! The processes of the network are coroutines on the calling thread; the
//! checker chooses, at each step, which process performs its next hoare
//! operation (send, receive, alt, poison, dropping an end, a barrier's sync,
//! enroll or resign, join, a process's exit, a sleep) and which timeout fires.
//! Everything between two operations of a process runs without interruption, so
//! what the checker cannot see is anything shared by other means (shared memory,
//! atomics, plain threads: use loom for those). Time is virtual. See
//! `docs/checking.md` in the repository for the guide.
//!
//! * **Exhaustive** ([`Builder::exhaustive`]): Source-DPOR with sleep sets over
//!   the independence of CSP events (a plain send and a plain receive on one
//!   rendezvous channel commute; two sends do not; dropping an end commutes with
//!   plain sends, receives and drops; a blocked alt's wait is touched by every
//!   step on its channels; timed operations and timeouts touch a clock, and a
//!   step that disables a due timeout races with it). Objects are identified in
//!   order of first appearance within an execution, never by address.
//! * **Random** ([`Builder::random`]) and **PCT** ([`Builder::pct`], Burckhardt
//!   et al., ASPLOS 2010) for networks too big to exhaust, and **delay-bounded**
//!   search ([`Builder::delay_bound`], Emmi et al., POPL 2011): every schedule
//!   within `d` deviations from a deterministic round-robin one.
//! * **Replay** ([`Builder::replay`], or `HOARE_CHECK_REPLAY=<schedule>`): runs
//!   the one execution of a report's schedule, checking on the way that the
//!   network is deterministic (the same choices are enabled).

mod dpor;
mod exec;
mod report;

pub use report::{Report, ReportKind};

use corosensei::stack::DefaultStack;
use exec::{End, Exec, Names};
use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) use hoare_core::step::Access;

/// One scheduling choice: run a process's next operation, or fire the timeout of
/// the timed wait it is parked in. Processes are numbered in order of creation
/// within an execution (the root is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Choice {
    Run(u32),
    Fire(u32),
}

/// An object as the checker names it within one execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    /// A channel or barrier (by its `ObjInfo` id), a process's join (by the
    /// process's index), a scope (by address), the clock: by class and key.
    Obj(hoare_core::step::Class, usize),
    /// The wait of a process (an alt's, a timed operation's).
    Wait(u32),
    /// A channel, barrier or scope made within the execution: (its maker's
    /// index << 32) | (how many objects its maker had made before).
    Made(u64),
}

/// A fast hasher for the checker's small integer keys (FxHash's mix).
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl std::hash::Hasher for Fx {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_isize(&mut self, x: isize) {
        self.write_u64(x as u64);
    }
}

/// A map with the [`Fx`] hasher.
pub(crate) type FxMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

/// Chooses the next step.
pub(crate) trait Strategy {
    /// Whether it wants the ready processes sorted (a deterministic order over
    /// executions; random choice does not need it).
    fn sorted(&self) -> bool {
        true
    }
    /// The choice at `step` among `en` (non-empty).
    fn choose(&mut self, step: usize, en: &[Choice], ex: &Exec) -> Result<Choice, End>;
    /// Whether it chooses by index alone ([`pick`](Self::pick)), without
    /// looking at the choices.
    fn by_index(&self) -> bool {
        false
    }
    /// The index of the choice among `n` (the ready processes in the ready
    /// set's order, then the timeouts that may fire).
    fn pick(&mut self, n: usize) -> usize {
        let _ = n;
        0
    }
}

/// The schedule string of a sequence of choices: `2.0.t1` runs process 2, then
/// 0, then fires the timeout of process 1.
fn schedule_string(s: &[Choice]) -> String {
    let v: Vec<String> = s
        .iter()
        .map(|c| match c {
            Choice::Run(p) => p.to_string(),
            Choice::Fire(p) => format!("t{p}"),
        })
        .collect();
    v.join(".")
}

fn parse_schedule(s: &str) -> Result<Vec<Choice>, String> {
    s.trim()
        .split('.')
        .filter(|x| !x.is_empty())
        .map(|x| {
            let (fire, n) = match x.strip_prefix('t') {
                Some(n) => (true, n),
                None => (false, x),
            };
            let p: u32 = n
                .parse()
                .map_err(|_| format!("hoare::check: bad schedule element {x:?}"))?;
            Ok(if fire {
                Choice::Fire(p)
            } else {
                Choice::Run(p)
            })
        })
        .collect()
}

/// Follows a schedule; `strict`: a choice that is not enabled is a determinism
/// failure (else it is skipped). After the schedule: the first enabled choice.
/// With `expect` (the enabled sets of the execution being replayed), every
/// step's enabled set must be the same as there: the determinism check.
struct Replay {
    s: Vec<Choice>,
    at: usize,
    strict: bool,
    expect: Option<exec::EnSets>,
}

impl Replay {
    fn new(s: Vec<Choice>, strict: bool) -> Self {
        Replay {
            s,
            at: 0,
            strict,
            expect: None,
        }
    }
}

/// A set of choices as schedule elements: `[0, 2, t1]`.
fn choices_string(en: &[Choice]) -> String {
    format!("[{}]", schedule_string(en).replace('.', ", "))
}

impl Strategy for Replay {
    fn choose(&mut self, step: usize, en: &[Choice], _ex: &Exec) -> Result<Choice, End> {
        if let Some(first) = self.expect.as_mut().and_then(|e| e.at(step)) {
            let mut now = en.to_vec();
            now.sort_unstable();
            if now != first {
                return Err(End::Nondeterministic(format!(
                    "at step {step} the enabled set was {} on the first run and {} on replay \
                     (the network depends on something outside hoare that changed between \
                     the runs: a static or global counter, the real clock, `HashMap` \
                     iteration order, a random number)",
                    choices_string(&first),
                    choices_string(&now)
                )));
            }
        }
        while let Some(&c) = self.s.get(self.at) {
            self.at += 1;
            if en.contains(&c) {
                return Ok(c);
            }
            if self.strict {
                return Err(End::Nondeterministic(format!(
                    "step {step}: the schedule chooses {c:?}, but the enabled choices are {en:?}"
                )));
            }
        }
        Ok(en[0])
    }
}

/// A small, fast generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

struct Random(Rng);

impl Strategy for Random {
    fn sorted(&self) -> bool {
        false
    }
    fn choose(&mut self, _step: usize, en: &[Choice], _ex: &Exec) -> Result<Choice, End> {
        Ok(en[self.0.below(en.len())])
    }
    fn by_index(&self) -> bool {
        true
    }
    fn pick(&mut self, n: usize) -> usize {
        self.0.below(n)
    }
}

/// PCT: random distinct priorities per process, `depth - 1` change points at
/// which the running highest-priority process drops to a low priority.
struct Pct {
    rng: Rng,
    prio: Vec<u64>,
    changes: Vec<usize>,
}

impl Pct {
    fn new(seed: u64, depth: u32, len: usize) -> Self {
        let mut rng = Rng::new(seed);
        let changes = (1..depth.max(1)).map(|_| rng.below(len.max(1))).collect();
        Pct {
            rng,
            prio: Vec::new(),
            changes,
        }
    }
    fn prio(&mut self, p: u32) -> u64 {
        while self.prio.len() <= p as usize {
            let r = (self.rng.next() >> 8) | (1 << 60);
            self.prio.push(r);
        }
        self.prio[p as usize]
    }
}

impl Strategy for Pct {
    fn sorted(&self) -> bool {
        false
    }
    fn choose(&mut self, step: usize, en: &[Choice], _ex: &Exec) -> Result<Choice, End> {
        let best = |s: &mut Self| {
            let mut b = en[0];
            let mut bp = 0;
            for &c in en {
                let (Choice::Run(p) | Choice::Fire(p)) = c;
                let pr = s.prio(p);
                if pr > bp {
                    bp = pr;
                    b = c;
                }
            }
            b
        };
        if let Some(k) = self.changes.iter().position(|&x| x == step) {
            let (Choice::Run(p) | Choice::Fire(p)) = best(self);
            self.prio[p as usize] = k as u64 + 1;
        }
        Ok(best(self))
    }
}

/// Delay-bounded search (Emmi, Qadeer and Rakamarić, POPL 2011): a
/// deterministic round-robin scheduler (it runs the process it ran last for
/// as long as that process is enabled, else the next enabled one in index
/// order, cyclically), and every schedule that deviates from it at most
/// `bound` times. Taking the `k`-th enabled choice after the scheduler's own
/// (in its cyclic order) costs `k` delays. Stateless: each execution replays
/// the previous one's choices up to the deepest step where one more delay is
/// still within the bound, and takes the next choice there.
struct Delay {
    bound: u32,
    /// The current execution's choices: (index in the cyclic order, how many
    /// choices were enabled).
    path: Vec<(u32, u32)>,
    /// The process the scheduler runs.
    cur: u32,
    /// Whether a schedule was left out for exceeding the bound (the search
    /// is then not complete).
    cut: bool,
    ord: Vec<Choice>,
}

impl Delay {
    fn new(bound: u32) -> Self {
        Delay {
            bound,
            path: Vec::new(),
            cur: 0,
            cut: false,
            ord: Vec::new(),
        }
    }

    /// After an execution of `len` steps: moves to the next schedule within
    /// the bound. `false`: none is left.
    fn next(&mut self, len: usize) -> bool {
        self.path.truncate(len);
        let mut used: u32 = self.path.iter().map(|&(k, _)| k).sum();
        while let Some((k, n)) = self.path.pop() {
            used -= k;
            if k + 1 < n {
                if used + k < self.bound {
                    self.path.push((k + 1, n));
                    return true;
                }
                self.cut = true;
            }
        }
        false
    }
}

impl Strategy for Delay {
    fn choose(&mut self, step: usize, en: &[Choice], _ex: &Exec) -> Result<Choice, End> {
        if step == 0 {
            self.cur = 0;
        }
        // The scheduler's cyclic order from the process it runs (a process's
        // step before its timeout).
        let cur = self.cur;
        self.ord.clear();
        self.ord.extend_from_slice(en);
        self.ord.sort_unstable_by_key(|&c| match c {
            Choice::Run(p) => (p.wrapping_sub(cur), 0),
            Choice::Fire(p) => (p.wrapping_sub(cur), 1),
        });
        let n = en.len() as u32;
        let k = match self.path.get(step) {
            Some(&(k, m)) if m == n => k,
            Some(&(_, m)) => {
                return Err(End::Nondeterministic(format!(
                    "step {step}: {n} choices enabled, {m} in the execution before"
                )))
            }
            None => {
                self.path.push((0, n));
                0
            }
        };
        let c = self.ord[k as usize];
        let (Choice::Run(p) | Choice::Fire(p)) = c;
        self.cur = p;
        Ok(c)
    }
}

/// Counts steps for the watchdog, which reports a process that runs for too long
/// without an operation (it blocks outside hoare, or loops without one).
pub(crate) struct Watch {
    steps: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    fn new(limit: Option<Duration>) -> Self {
        let steps = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = limit.map(|limit| {
            let (s, st) = (steps.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut last = (s.load(Ordering::Relaxed), Instant::now());
                while !st.load(Ordering::Relaxed) {
                    std::thread::park_timeout(Duration::from_millis(50).min(limit));
                    let n = s.load(Ordering::Relaxed);
                    if n != last.0 {
                        last = (n, Instant::now());
                    } else if last.1.elapsed() >= limit && !st.load(Ordering::Relaxed) {
                        eprintln!(
                            "hoare::check: watchdog: no hoare operation for {limit:?} after step {n}: \
                             a process blocks outside hoare (a std::sync::Mutex, a blocking system \
                             call, a plain thread) or loops without a hoare operation; aborting"
                        );
                        std::process::abort();
                    }
                }
            })
        });
        Watch {
            steps,
            stop,
            thread,
        }
    }

    /// A step: a plain store, not a read-modify-write (only this thread
    /// writes the count; the watchdog only reads it).
    #[inline]
    pub(crate) fn step(&self) {
        let n = self.steps.load(Ordering::Relaxed);
        self.steps.store(n.wrapping_add(1), Ordering::Relaxed);
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Exhaustive,
    Random(u64),
    Pct(u32, u64),
    Delay(u32),
}

/// The default step limit per execution (see [`Builder::max_steps`]).
pub const DEFAULT_MAX_STEPS: u64 = 100_000;

/// Configures and runs a check.
///
/// ```
/// use hoare_runtime::check::Builder;
/// use std::time::Duration;
///
/// let stats = Builder::new()
///     .random(100)
///     .seed(7)
///     .max_time(Duration::from_secs(10))
///     .run(|| {
///         let (a, b) = hoare_runtime::par2(|| 1, || 2);
///         assert_eq!(a + b, 3);
///     });
/// assert_eq!(stats.executions(), 100);
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    mode: Mode,
    seed: u64,
    max_time: Option<Duration>,
    max_steps: Option<u64>,
    replay: Option<String>,
    quiescent: bool,
    stack_size: usize,
    shrink: bool,
    watchdog: Option<Duration>,
    unwind: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// What a check explored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    executions: u64,
    pruned: u64,
    cut: u64,
    steps: u64,
    complete: bool,
    elapsed: Duration,
}

impl Stats {
    /// Executions run to their end (including those cut at the step limit,
    /// not those pruned as equivalent to one explored already).
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().run(|| ());
    /// assert_eq!(s.executions(), 1);
    /// ```
    pub fn executions(&self) -> u64 {
        self.executions
    }
    /// Executions abandoned by the sleep sets of exhaustive mode (their every
    /// enabled choice led to an execution equivalent to one explored already).
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().run(|| ());
    /// assert_eq!(s.pruned(), 0);
    /// ```
    pub fn pruned(&self) -> u64 {
        self.pruned
    }
    /// Executions cut at an explicit [`Builder::max_steps`].
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().run(|| ());
    /// assert_eq!(s.cut(), 0);
    /// ```
    pub fn cut(&self) -> u64 {
        self.cut
    }
    /// Steps run, over all executions.
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().run(|| ());
    /// assert_eq!(s.steps(), 0);
    /// ```
    pub fn steps(&self) -> u64 {
        self.steps
    }
    /// Whether every distinct interleaving was explored (exhaustive mode, within
    /// the time limit, with no execution cut at the step limit).
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().random(3).run(|| ());
    /// assert!(!s.complete());
    /// ```
    pub fn complete(&self) -> bool {
        self.complete
    }
    /// How long the check took.
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().run(|| ());
    /// assert!(s.elapsed() < std::time::Duration::from_secs(60));
    /// ```
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}

impl Builder {
    /// Exhaustive mode, no time limit, the default step limit, racing time.
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new();
    /// ```
    pub fn new() -> Self {
        Builder {
            mode: Mode::Exhaustive,
            seed: 0,
            max_time: None,
            max_steps: None,
            replay: None,
            quiescent: false,
            stack_size: 64 * 1024,
            shrink: true,
            watchdog: Some(Duration::from_secs(10)),
            unwind: true,
        }
    }
    /// Explores every distinct interleaving (Source-DPOR with sleep sets). The
    /// default.
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().exhaustive().run(|| ());
    /// assert!(s.complete());
    /// ```
    pub fn exhaustive(mut self) -> Self {
        self.mode = Mode::Exhaustive;
        self
    }
    /// Runs `executions` executions, each choosing uniformly among the enabled
    /// steps (seeded by [`seed`](Self::seed)).
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().random(5).run(|| ());
    /// assert_eq!(s.executions(), 5);
    /// ```
    pub fn random(mut self, executions: u64) -> Self {
        self.mode = Mode::Random(executions);
        self
    }
    /// Runs `executions` executions of PCT with bug depth `depth` (random
    /// process priorities and `depth - 1` priority change points).
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().pct(3, 5).run(|| ());
    /// assert_eq!(s.executions(), 5);
    /// ```
    pub fn pct(mut self, depth: u32, executions: u64) -> Self {
        self.mode = Mode::Pct(depth, executions);
        self
    }
    /// Delay-bounded search (Emmi, Qadeer and Rakamarić, POPL 2011): every
    /// schedule that deviates at most `delays` times from a deterministic
    /// round-robin scheduler (which runs the process it ran last while that
    /// process can act, else the next one that can in index order,
    /// cyclically; taking the `k`-th choice after the scheduler's own costs
    /// `k` delays). Systematic like [`exhaustive`](Self::exhaustive) but
    /// without its reduction, and bounded: bugs that need few deviations from
    /// an ordinary schedule are found in few executions. [`Stats::complete`]
    /// is true only when no schedule was left out for the bound.
    ///
    /// ```
    /// use hoare_runtime::check::Builder;
    /// let none = Builder::new().delay_bound(0).run(|| hoare_runtime::par2(|| 1, || 2));
    /// assert_eq!(none.executions(), 1);
    /// let more = Builder::new().delay_bound(2).run(|| hoare_runtime::par2(|| 1, || 2));
    /// assert!(more.executions() > 1);
    /// ```
    pub fn delay_bound(mut self, delays: u32) -> Self {
        self.mode = Mode::Delay(delays);
        self
    }
    /// The seed of random and PCT modes (default 0).
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new().random(10).seed(42);
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Stops exploring after `d` (the [`Stats`] then say the exploration was not
    /// complete).
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new().max_time(std::time::Duration::from_secs(5));
    /// ```
    pub fn max_time(mut self, d: Duration) -> Self {
        self.max_time = Some(d);
        self
    }
    /// Cuts each execution after `n` steps (for networks that do not terminate).
    /// Without it an execution that reaches [`DEFAULT_MAX_STEPS`] is reported
    /// ([`ReportKind::StepLimit`]); with it such executions are cut and counted
    /// ([`Stats::cut`]).
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().max_steps(100).run(|| ());
    /// assert_eq!(s.cut(), 0);
    /// ```
    pub fn max_steps(mut self, n: u64) -> Self {
        self.max_steps = Some(n);
        self
    }
    /// Runs only the execution of `schedule` (a report's schedule string),
    /// checking that the network chooses deterministically on the way.
    /// `HOARE_CHECK_REPLAY=<schedule>` in the environment does the same for
    /// every check.
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().replay("").run(|| ());
    /// assert_eq!(s.executions(), 1);
    /// ```
    pub fn replay(mut self, schedule: &str) -> Self {
        self.replay = Some(schedule.to_owned());
        self
    }
    /// Quiescent time: a timeout fires only when no process can run. Faster than
    /// the default "racing" time (where the earliest timeout may fire before any
    /// ready step), and blind to races between a timeout and a communication.
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new().quiescent_time();
    /// ```
    pub fn quiescent_time(mut self) -> Self {
        self.quiescent = true;
        self
    }
    /// The stack size of each process (default 64 KiB).
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new().stack_size(256 * 1024);
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes;
        self
    }
    /// Whether to shrink a failing schedule (delete choices while it still
    /// fails the same way) before reporting it (default: yes).
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new().shrink(false);
    /// ```
    pub fn shrink(mut self, shrink: bool) -> Self {
        self.shrink = shrink;
        self
    }
    /// How long a process may run without a hoare operation before the
    /// watchdog reports it and aborts the program (default 10 s; `None`: no
    /// watchdog). One thread runs the whole network, so such a process would
    /// hang the test.
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new().watchdog(None);
    /// ```
    pub fn watchdog(mut self, limit: Option<Duration>) -> Self {
        self.watchdog = limit;
        self
    }

    /// Whether the processes left over at the end of an execution (a failing
    /// or cut one) are unwound, dropping what they hold (the default), or
    /// abandoned, leaking it. Abandon them only when they may be suspended
    /// inside foreign frames a Rust unwind must not cross (the C++ API does).
    ///
    /// ```
    /// let _ = hoare_runtime::check::Builder::new().unwind(false);
    /// ```
    pub fn unwind(mut self, unwind: bool) -> Self {
        self.unwind = unwind;
        self
    }

    /// Checks `f` (the network, written with ordinary hoare calls; run once per
    /// execution) and returns what was explored.
    ///
    /// # Panics
    /// With the report's text, on the first failure found.
    ///
    /// ```
    /// let s = hoare_runtime::check::Builder::new().run(|| ());
    /// assert!(s.complete());
    /// ```
    #[track_caller]
    pub fn run<F, R>(&self, f: F) -> Stats
    where
        F: Fn() -> R,
    {
        match self.try_run(f) {
            Ok(s) => s,
            Err(r) => panic!("{r}"),
        }
    }

    /// This builder with `spec` applied: the grammar of the `HOARE_CHECK`
    /// environment variable, which [`try_run`](Self::try_run) and
    /// [`run`](Self::run) apply over the builder's own settings, so that CI
    /// can deepen a test's check without changing its code:
    ///
    /// ```text
    /// spec   := [mode] ("," option)*
    /// mode   := "exhaustive" | "random:" N | "pct:" DEPTH ":" N | "delay:" D
    /// option := "seed=" N | "max_steps=" N | "max_time=" SECONDS ("s" | "ms")?
    ///         | "quiescent" | "racing"
    /// ```
    ///
    /// e.g. `HOARE_CHECK=random:1000,seed=7`, `pct:3:500`, `delay:2`,
    /// `exhaustive,max_time=60`.
    /// An empty value changes nothing.
    ///
    /// # Errors
    /// A value outside the grammar, with what is wrong with it.
    ///
    /// ```
    /// use hoare_runtime::check::Builder;
    /// let b = Builder::new().apply_spec("random:20,seed=7").unwrap();
    /// assert_eq!(b.run(|| ()).executions(), 20);
    /// assert!(Builder::new().apply_spec("randm:20").is_err());
    /// ```
    pub fn apply_spec(mut self, spec: &str) -> Result<Self, String> {
        fn num<T: std::str::FromStr>(what: &str, v: &str) -> Result<T, String> {
            v.trim()
                .parse()
                .map_err(|_| format!("{what}: {v:?} is not a number"))
        }
        for (i, part) in spec.split(',').map(str::trim).enumerate() {
            if part.is_empty() {
                continue;
            }
            let mut f = part.split(':');
            let head = f.next().unwrap_or("");
            let args: Vec<&str> = f.collect();
            match (head, args.as_slice()) {
                ("exhaustive", []) if i == 0 => self.mode = Mode::Exhaustive,
                ("random", [n]) if i == 0 => self.mode = Mode::Random(num("random", n)?),
                ("pct", [d, n]) if i == 0 => {
                    self.mode = Mode::Pct(num("pct depth", d)?, num("pct executions", n)?)
                }
                ("delay", [d]) if i == 0 => self.mode = Mode::Delay(num("delay", d)?),
                ("quiescent", []) => self.quiescent = true,
                ("racing", []) => self.quiescent = false,
                (opt, []) if opt.contains('=') => {
                    let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
                    match k.trim() {
                        "seed" => self.seed = num("seed", v)?,
                        "max_steps" => self.max_steps = Some(num("max_steps", v)?),
                        "max_time" => {
                            let v = v.trim();
                            let d = if let Some(ms) = v.strip_suffix("ms") {
                                Duration::from_millis(num("max_time", ms)?)
                            } else {
                                let secs: f64 = num("max_time", v.strip_suffix('s').unwrap_or(v))?;
                                if !(secs.is_finite() && secs >= 0.0) {
                                    return Err(format!("max_time: {v:?} is not a duration"));
                                }
                                Duration::from_secs_f64(secs)
                            };
                            self.max_time = Some(d);
                        }
                        _ => return Err(format!("unknown option {k:?}")),
                    }
                }
                _ => {
                    return Err(format!(
                    "{part:?} is not a mode (exhaustive, random:N, pct:DEPTH:N, delay:D, first) \
                         or an option (seed=N, max_steps=N, max_time=SECONDS, quiescent, racing)"
                ))
                }
            }
        }
        Ok(self)
    }

    /// Checks `f` as [`run`](Self::run) does, returning the first failure as a
    /// [`Report`].
    ///
    /// ```
    /// use hoare_runtime::check::{Builder, ReportKind};
    /// let r = Builder::new()
    ///     .try_run(|| {
    ///         let (_tx, rx) = hoare_core::chan::one2one::<u32>();
    ///         let _ = rx.recv(); // nobody sends: a deadlock
    ///     })
    ///     .unwrap_err();
    /// assert_eq!(r.kind(), ReportKind::Deadlock);
    /// ```
    ///
    /// # Panics
    /// When the `HOARE_CHECK` environment variable is set to a value outside
    /// the grammar of [`apply_spec`](Self::apply_spec) (the message names the
    /// variable and what is wrong: a bad value is never ignored).
    #[track_caller]
    pub fn try_run<F, R>(&self, f: F) -> Result<Stats, Report>
    where
        F: Fn() -> R,
    {
        let site = Location::caller();
        if let Some(spec) = std::env::var_os("HOARE_CHECK") {
            let spec = spec.to_string_lossy();
            let b = self
                .clone()
                .apply_spec(&spec)
                .unwrap_or_else(|e| panic!("hoare::check: bad HOARE_CHECK={spec:?}: {e}"));
            return b.try_run_here(f, site);
        }
        self.try_run_here(f, site)
    }

    fn try_run_here<F, R>(&self, f: F, site: &'static Location<'static>) -> Result<Stats, Report>
    where
        F: Fn() -> R,
    {
        let root = move || {
            let _ = f();
        };
        let root = exec::Root { f: &root, site };
        let t0 = Instant::now();
        let stacks = RefCell::new(Vec::new());
        let names = RefCell::new(Names::default());
        let watch = Watch::new(self.watchdog);
        let mut stats = Stats {
            executions: 0,
            pruned: 0,
            cut: 0,
            steps: 0,
            complete: false,
            elapsed: Duration::ZERO,
        };
        let limit = self.max_steps.unwrap_or(DEFAULT_MAX_STEPS);
        let replay = self
            .replay
            .clone()
            .or_else(|| std::env::var("HOARE_CHECK_REPLAY").ok());
        let run_one = |strat: &mut dyn Strategy, stats: &mut Stats, record: bool| {
            let ex = Exec::new(&stacks, &names, self.stack_size, record);
            let end = ex.run(root, strat, self.quiescent, limit, &watch);
            stats.steps += ex.schedule.borrow().len() as u64;
            (ex, end)
        };
        // A failing execution is replayed (recorded, for the report) before
        // it is reported, and the replay must meet the same enabled set at
        // every step: a network that depends on something outside hoare is
        // reported as not deterministic, not as failing. Returns the report,
        // the failing schedule and how the replay ended; the failing
        // execution is torn down.
        let fail = |ex: &Exec,
                    end: &End,
                    stats: &mut Stats|
         -> Option<(Report, Vec<Choice>, End)> {
            match end {
                End::Complete | End::Pruned => return None,
                End::StepLimit if self.max_steps.is_some() => {
                    stats.cut += 1;
                    return None;
                }
                _ => {}
            }
            let schedule = ex.schedule.borrow().clone();
            let mut st = Replay::new(schedule.clone(), true);
            st.expect = Some(exec::EnSets::new(
                ex.log.borrow().clone(),
                schedule.clone(),
                self.quiescent,
            ));
            // One execution at a time: the first one's leftover processes go
            // before the replay runs the network again (the caller's later
            // teardown then finds nothing left).
            ex.teardown(self.unwind);
            let again = Exec::new(&stacks, &names, self.stack_size, true);
            let mut e = again.run(root, &mut st, self.quiescent, limit, &watch);
            if !matches!(e, End::Nondeterministic(_)) && report::kind_of(&e) != report::kind_of(end)
            {
                e = End::Nondeterministic(format!(
                    "the first run ended in {:?} after {} steps, the replay of its schedule in {:?} \
                     after {}",
                    report::kind_of(end),
                    ex.schedule.borrow().len(),
                    report::kind_of(&e),
                    again.schedule.borrow().len()
                ));
            }
            let r = report::build(&again, &e);
            again.teardown(self.unwind);
            Some((r, schedule, e))
        };
        if let Some(s) = replay {
            let sched = parse_schedule(&s).unwrap_or_else(|e| panic!("{e}"));
            let mut st = Replay::new(sched, true);
            let (ex, end) = run_one(&mut st, &mut stats, true);
            stats.executions = 1;
            let r = match end {
                // The replay itself found the schedule's choices not enabled.
                End::Nondeterministic(_) => Some(report::build(&ex, &end)),
                _ => fail(&ex, &end, &mut stats).map(|(r, _, _)| r),
            };
            ex.teardown(self.unwind);
            stats.elapsed = t0.elapsed();
            return match r {
                Some(r) => Err(r),
                None => Ok(stats),
            };
        }
        let out_of_time = |stats: &Stats| {
            self.max_time.is_some_and(|m| t0.elapsed() >= m) && stats.executions > 0
        };
        let mut found: Option<(Report, Vec<Choice>, End)> = None;
        match self.mode {
            Mode::Exhaustive => {
                let mut d = dpor::Dpor::default();
                loop {
                    let (ex, end) = run_one(&mut d, &mut stats, true);
                    if end == End::Pruned {
                        stats.pruned += 1;
                    } else {
                        stats.executions += 1;
                    }
                    if let Some(f) = fail(&ex, &end, &mut stats) {
                        found = Some(f);
                        break;
                    }
                    let nprocs = ex.procs.borrow().len();
                    {
                        let trace = ex.trace.borrow();
                        d.analyse(&trace, nprocs);
                    }
                    let more = d.next(&ex.trace.borrow());
                    ex.teardown(self.unwind);
                    if !more {
                        stats.complete = stats.cut == 0;
                        break;
                    }
                    if out_of_time(&stats) {
                        break;
                    }
                }
            }
            Mode::Delay(bound) => {
                let mut st = Delay::new(bound);
                loop {
                    let (ex, end) = run_one(&mut st, &mut stats, false);
                    stats.executions += 1;
                    if let Some(f) = fail(&ex, &end, &mut stats) {
                        found = Some(f);
                        break;
                    }
                    let len = ex.schedule.borrow().len();
                    ex.teardown(self.unwind);
                    if !st.next(len) {
                        stats.complete = !st.cut && stats.cut == 0;
                        break;
                    }
                    if out_of_time(&stats) {
                        break;
                    }
                }
            }
            Mode::Random(n) | Mode::Pct(_, n) => {
                let mut len = 64;
                for i in 0..n {
                    let seed = self.seed.wrapping_add(i.wrapping_mul(0x9E37_79B9));
                    let (ex, end) = match self.mode {
                        Mode::Pct(depth, _) => {
                            run_one(&mut Pct::new(seed, depth, len), &mut stats, false)
                        }
                        _ => run_one(&mut Random(Rng::new(seed)), &mut stats, false),
                    };
                    stats.executions += 1;
                    len = len.max(ex.schedule.borrow().len());
                    if let Some(f) = fail(&ex, &end, &mut stats) {
                        found = Some(f);
                        break;
                    }
                    ex.teardown(self.unwind);
                    if out_of_time(&stats) {
                        break;
                    }
                }
            }
        }
        stats.elapsed = t0.elapsed();
        let Some((report, sched, end)) = found else {
            return Ok(stats);
        };
        if !self.shrink || matches!(end, End::Nondeterministic(_)) {
            return Err(report);
        }
        Err(quietly(|| {
            self.shrink_report(report, sched, &end, root, (&stacks, &names), &watch)
        }))
    }

    /// Deletes choices from a failing schedule while it still fails the same
    /// way (a bounded number of tries), and reports the shortest.
    fn shrink_report(
        &self,
        mut best: Report,
        mut sched: Vec<Choice>,
        end: &End,
        root: exec::Root<'_>,
        (stacks, names): (&RefCell<Vec<DefaultStack>>, &RefCell<Names>),
        watch: &Watch,
    ) -> Report {
        let kind = report::kind_of(end);
        let limit = self.max_steps.unwrap_or(DEFAULT_MAX_STEPS);
        let t0 = Instant::now();
        let mut tries = 0;
        let mut i = sched.len();
        while i > 0 && tries < 4 * sched.len().max(16) && t0.elapsed() < Duration::from_secs(2) {
            i -= 1;
            tries += 1;
            let mut cand = sched.clone();
            cand.remove(i);
            let ex = Exec::new(stacks, names, self.stack_size, true);
            let mut st = Replay::new(cand, false);
            let e = ex.run(root, &mut st, self.quiescent, limit, watch);
            let same = !matches!(e, End::Complete | End::Pruned | End::Nondeterministic(_))
                && report::kind_of(&e) == kind
                && (e != End::StepLimit || self.max_steps.is_none());
            if same {
                let s = ex.schedule.borrow().clone();
                if s.len() <= sched.len() {
                    best = report::build(&ex, &e);
                    sched = s;
                    i = i.min(sched.len());
                }
            }
            ex.teardown(self.unwind);
        }
        best
    }
}

std::thread_local! {
    /// Set while this thread shrinks a failing schedule: the panic hook stays
    /// silent (see [`quietly`]).
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the panic output of this thread silenced: shrinking replays
/// a failing schedule dozens of times, and each replay's panic would print
/// its message again (the report carries the one that counts, and the
/// execution that found it printed it already). A hook that defers to the
/// one before it, except while [`QUIET`] is set on the panicking thread, is
/// installed once for the program; other threads' panics print as before.
fn quietly<R>(f: impl FnOnce() -> R) -> R {
    static HOOK: std::sync::Once = std::sync::Once::new();
    if std::thread::panicking() {
        // `take_hook` may not be called while panicking: stay noisy.
        return f();
    }
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                prev(info);
            }
        }));
    });
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            QUIET.with(|q| q.set(self.0));
        }
    }
    let _reset = Reset(QUIET.with(|q| q.replace(true)));
    f()
}

/// Whether a checker runs a process on this thread now.
#[inline(never)]
pub(crate) fn active() -> bool {
    !exec::current().is_null()
}

/// Spawns a process of the running check (the runtime's spawn comes here when
/// [`active`]): returns its id (its index within the execution).
///
/// # Safety
/// Whatever `body` borrows outlives the process (a scope joins it first; the
/// checker unwinds every process before the execution ends).
pub(crate) unsafe fn spawn(
    name: Option<String>,
    site: &'static Location<'static>,
    captures: (usize, usize),
    body: Box<dyn FnOnce() + Send + '_>,
) -> u64 {
    // SAFETY: `active()`; the execution outlives the call.
    let ex = unsafe { &*exec::current() };
    // SAFETY: forwarded.
    u64::from(unsafe { ex.spawn(name, site, captures, body) })
}

/// A process of the check ends: its exit is a step (touching its join slot and
/// its scope), and a panic is recorded as the execution's failure.
pub(crate) fn exit(slot: usize, scope: usize, panic: Option<&crate::ProcessError>) {
    use hoare_core::step::{Class, Obj, Objs, Op, OpKind};
    let ex = exec::current();
    if ex.is_null() {
        return;
    }
    // A join names the process it joins by id (its index here); the slot's
    // address only when the id is not known.
    let _ = slot;
    let me = exec::current_proc().unwrap_or(0) as usize;
    let mut objs = Objs::one(Obj {
        addr: me,
        class: Class::Join,
        access: Access::Other,
        info: None,
    });
    if scope != 0 {
        // Counting a scope down commutes with other count-downs (only the
        // owner's wait, a join step on the scope, conflicts with them).
        objs.push(Obj {
            addr: scope,
            class: Class::Join,
            access: Access::Drop,
            info: None,
        });
    }
    hoare_core::step::step(|| Op {
        kind: OpKind::Exit,
        objs,
    });
    if let Some(e) = panic {
        // SAFETY: a running execution.
        let ex = unsafe { &*ex };
        ex.record_panic(e.clone(), exec::current_proc().unwrap_or(0));
    }
}

/// The key a scope is known by in its `Join`-class steps: an
/// [`ObjInfo`](hoare_core::wait::ObjInfo) id (which a checker's process maps to
/// a name stable across executions, see `Park::created`) with the top bit set,
/// so it never collides with a joined process's id.
pub(crate) fn scope_key() -> usize {
    let id = hoare_core::wait::ObjInfo::here(None).id() as usize;
    id | SCOPE_BIT
}

/// Marks a scope's key (see [`scope_key`]).
pub(crate) const SCOPE_BIT: usize = 1 << (usize::BITS - 1);

/// The id of the running process of a check on this thread.
pub(crate) fn current_id() -> Option<u64> {
    exec::current_proc().map(u64::from)
}
