//! Barriers with dynamic enrollment, combining per worker first (the rules:
//! `docs/semantics.md#barriers`).
//!
//! A [`Barrier`] is a shared handle; each party that takes part holds a
//! [`BarrierEnd`] (from [`Barrier::enroll`]). [`BarrierEnd::sync`] blocks until every
//! end enrolled in the current *round* has synced or resigned; then the round
//! completes, every party blocked in it is released, and the next round opens.
//!
//! # Rounds, enroll and resign (the precise semantics)
//! The barrier always has exactly one *open* round. An end is *awaited* by the open
//! round from the moment [`Barrier::enroll`] returns until it syncs in that round
//! (then it is awaited by the next round) or resigns.
//!
//! * The open round completes when no awaited end is left. Every party whose `sync`
//!   was counted in it is released; the ends that are enrolled at that moment are all
//!   awaited by the next round.
//! * **Enroll while a round is under way** is allowed. The new end is counted in the
//!   round that is open when `enroll` returns: that round cannot complete until the
//!   new end syncs or resigns. In particular, when a party that is itself enrolled and
//!   has not synced yet enrolls a new end (say, for a child it is about to spawn), the
//!   child's first `sync` and the parent's next `sync` meet in the same round. An
//!   enroll that happens after a round has completed counts in the next one.
//! * **Resign** ([`BarrierEnd::resign`], or dropping the end) removes the end from the
//!   open round and all later ones. If it was the last end the round was waiting for,
//!   the round completes right there (the resigning party does not block).
//! * A barrier with no enrolled end has nothing to wait for; a party enrolling later
//!   starts a fresh round.
//!
//! ```
//! use hoare_core::barrier::Barrier;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//!
//! let (_barrier, ends) = Barrier::with_enrolled(4);
//! let arrived = Arc::new(AtomicUsize::new(0));
//! let threads: Vec<_> = ends
//!     .into_iter()
//!     .map(|mut end| {
//!         let arrived = arrived.clone();
//!         std::thread::spawn(move || {
//!             for round in 1..=10 {
//!                 arrived.fetch_add(1, Ordering::SeqCst);
//!                 end.sync();
//!                 // Nobody passes round k before all four arrived in it.
//!                 assert!(arrived.load(Ordering::SeqCst) >= 4 * round);
//!             }
//!         })
//!     })
//!     .collect();
//! for t in threads {
//!     t.join().unwrap();
//! }
//! ```
//!
//! # The algorithm: a two-tier combining barrier
//! After C++CSP2's barrier (Brown 2007, §5) and Mellor-Crummey and Scott's combining
//! trees. The ends are split into *groups*: one per worker of the runtime (by
//! [`park::worker_index`], modulo the number of groups) and one shared by plain OS
//! threads. Each end belongs to one group at a time (its *home*).
//!
//! * Each group has one atomic word holding two counts, its enrolled ends and the
//!   ends the open round still awaits (`left`), so joining or leaving a group is one
//!   atomic operation; and a lock-free stack (Treiber push, swap-all pop) of the waiters of the parties
//!   blocked on it. A syncing party pushes a waiter node kept on its own stack,
//!   then decrements `left`. Only the party that brings `left` to zero (the group's
//!   *leader* for the round) touches shared state: it swaps the group's stack out as
//!   one *chunk*, files the chunk with the barrier (a short lock) and decrements the
//!   global count of groups the round awaits.
//! * The party that brings the global count to zero completes the round under the
//!   lock: it resets every group's `left` to its enrolled count and the global count
//!   to the number of non-empty groups **before** anyone is released (so a released
//!   party that syncs again is counted in the next round, never in this one), takes
//!   the filed chunks and releases the lock. Then it wakes the first party of each
//!   chunk with a *delegate* token; that party wakes the rest of its chunk. So the
//!   wake-ups of a round go back per group, in parallel on the workers, and a round
//!   costs one lock acquisition per group plus one to complete. The completer wakes
//!   its own group's delegate last: a runtime that runs the last-woken process next
//!   on the waking worker (and lets idle workers steal the earlier ones) then keeps
//!   each group on its worker, so fewer ends move between groups.
//! * Processes migrate. An end whose party syncs on a worker other than its home
//!   group's first moves home (lock-free): it joins the new group (re-opening it for
//!   the open round if that group had already completed its part) and then resigns
//!   from the old one. Counting is per end, so migration never miscounts; a move
//!   costs one extra atomic operation on each of the two groups.
//! * Enroll takes the barrier lock, so it never interleaves with a completion; it
//!   bumps the group's `left` and, if the group had no pending part in the round (it
//!   was empty, or its leader had already passed it), adds the group back to the
//!   global count. Resign is lock-free unless it completes the round.
//!
//! Every wait goes through one [`Waiter`]; a blocked barrier party has no timeout, so
//! a node in a chunk is alive until the one `try_wake` addressed to it.
//!
//! # Alting barriers
//! An alting barrier ([`crate::alt::AltingBarrier`]) is a structure of its own, not
//! a flavour of this one: an offer must be withdrawable (the alt may choose another
//! guard), so its completer claims every offering alt's waiter under one global
//! lock and rolls its claims back if one was taken elsewhere (see
//! `alt/barrier.rs`). This barrier keeps its claim-free, lock-free fast path.

use crate::park;
use crate::registration::{Registration, Withdraw};
use crate::sync::{self, Arc, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::wait::{ObjInfo, Wait, WaitOn};
use crate::waiter::{Outcome, Waiter};
use std::fmt;
use std::ptr;

/// Wake-up token: the round completed, go on.
const RELEASED: usize = 0;
/// Wake-up token: the round completed and this party wakes the rest of its chunk.
const DELEGATE: usize = 1;

/// One blocked party: its waiter and the link of its group's stack. Lives on the
/// party's stack for the duration of its sync.
struct Node {
    waiter: Waiter,
    next: AtomicPtr<Node>,
}

/// The ends of one worker (or of the plain threads). Cache-line aligned: the parties
/// of one worker hammer `head` and `counts` and, unless they migrate, nobody else.
#[repr(align(128))]
struct Group {
    /// Parties blocked in the open round whose chunk no leader has taken yet.
    head: AtomicPtr<Node>,
    /// Two counts in one word, so that joining or leaving a group is one atomic
    /// operation: the ends whose home is this group (`enrolled`, high half) and the
    /// ends of this group the open round still awaits (`left`, low half).
    counts: AtomicU64,
}

/// One end in [`Group::counts`]'s `left` half.
const LEFT: u64 = 1;
/// One end in [`Group::counts`]'s `enrolled` half.
const ENROLLED: u64 = 1 << 32;
/// The `left` half of [`Group::counts`].
const LEFT_MASK: u64 = ENROLLED - 1;

/// The most ends one group (one worker's share of a barrier) can hold.
pub const MAX_ENDS_PER_GROUP: usize = LEFT_MASK as usize;

impl Group {
    fn new() -> Self {
        Self {
            head: AtomicPtr::new(ptr::null_mut()),
            counts: AtomicU64::new(0),
        }
    }
}

/// A chunk of blocked parties, detached from group `.1` by its leader.
struct Chunk(*const Node, usize);

// SAFETY: a chunk is a list of nodes of parties blocked in a barrier sync; each node
// stays valid until its party is woken, which only the holder of the chunk does, and
// whichever thread holds the chunk may do it (waking is thread-safe).
unsafe impl Send for Chunk {}

/// State under the barrier lock.
struct Global {
    /// Chunks filed by the leaders of the open round.
    chunks: Vec<Chunk>,
    /// Completed rounds in which somebody synced (diagnostics).
    rounds: u64,
}

struct Inner {
    /// `groups[..n-1]`: per worker (index modulo n-1); `groups[n-1]`: plain threads.
    groups: Box<[Group]>,
    /// Groups whose part of the open round is still pending.
    left: AtomicUsize,
    global: Mutex<Global>,
    /// A party was unwound while blocked in `sync` (a runtime shutting down unwinds
    /// its blocked processes): its node may be freed while still linked, so no
    /// chunk is ever walked again (see [`BarrierEnd::sync`]).
    broken: AtomicBool,
    /// Its identity in reports.
    info: ObjInfo,
}

/// [`BarrierEnd::home`] of an end that was lost while blocked: it is counted as
/// arrived in a round that will never complete, so dropping it must not resign.
const LOST: usize = usize::MAX;

/// One group per worker the machine can run at once (at most 64; two under loom,
/// enough to model the two tiers).
fn worker_groups() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| sync::parallelism().clamp(1, 64))
}

impl Inner {
    fn new(info: ObjInfo) -> Self {
        let n = worker_groups() + 1;
        Self {
            groups: (0..n).map(|_| Group::new()).collect(),
            left: AtomicUsize::new(0),
            global: Mutex::new(Global {
                chunks: Vec::new(),
                rounds: 0,
            }),
            broken: AtomicBool::new(false),
            info,
        }
    }

    /// `(arrived, enrolled)` in the open round (a snapshot, for reports).
    fn counts(&self) -> (usize, usize) {
        let (mut enrolled, mut left) = (0, 0);
        for g in self.groups.iter() {
            let c = g.counts.load(Ordering::Relaxed);
            enrolled += (c >> 32) as usize;
            left += (c & LEFT_MASK) as usize;
        }
        (enrolled.saturating_sub(left), enrolled)
    }

    /// The group of the worker (or plain thread) running now.
    #[inline]
    fn here(&self) -> usize {
        let threads = self.groups.len() - 1;
        match park::worker_index() {
            usize::MAX => threads,
            w => w % threads,
        }
    }

    /// Adds one awaited end to group `g` for the open round. Must not run
    /// concurrently with a completion: callers hold the lock, or hold an end the open
    /// round awaits (which keeps it from completing).
    fn join_group(&self, g: usize, n: usize) {
        let group = &self.groups[g];
        let n = n as u64;
        let old = group
            .counts
            .fetch_add(n * (ENROLLED + LEFT), Ordering::AcqRel);
        debug_assert!((old >> 32) + n <= LEFT_MASK, "barrier group count overflow");
        if old & LEFT_MASK == 0 {
            // The group had no pending part in the open round (empty, or its leader
            // already passed it on): it is pending again. The global count cannot be
            // completed meanwhile: see the caller's contract.
            self.left.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Removes one awaited end from group `g` for the open round: an arrival (with
    /// its node already pushed; `resign` false) or a resignation or move away (no
    /// node; `resign` true: the end also stops being enrolled there). If it was the
    /// last the group awaited, passes the group's part on, and completes the round if
    /// it was the last part.
    fn leave_group(&self, g: usize, resign: bool) {
        let group = &self.groups[g];
        let d = if resign { ENROLLED + LEFT } else { LEFT };
        if group.counts.fetch_sub(d, Ordering::AcqRel) & LEFT_MASK != 1 {
            return;
        }
        // Leader of the group for this round: every party counted in the group's part
        // pushed its node before decrementing, so the stack holds all of them.
        let head = group.head.swap(ptr::null_mut(), Ordering::AcqRel);
        let mut global = sync::lock(&self.global);
        if !head.is_null() {
            global.chunks.push(Chunk(head, g));
        }
        if self.left.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        // Complete the round. Nobody is released before the counts are reset.
        let mut pending = 0;
        for group in self.groups.iter() {
            // No group is being joined or left meanwhile (see `join_group`): every
            // enrolled end has arrived, and enroll needs the lock we hold.
            let e = group.counts.load(Ordering::Relaxed) >> 32;
            group.counts.store(e * (ENROLLED + LEFT), Ordering::Relaxed);
            pending += usize::from(e != 0);
        }
        self.left.store(pending, Ordering::Release);
        let chunks = std::mem::take(&mut global.chunks);
        // A round that ends only by resignations (nobody blocked in it) is not counted.
        global.rounds += u64::from(!chunks.is_empty());
        drop(global);
        if self.broken.load(Ordering::Acquire) {
            // Some node may be gone: leak the chunks (their parties are being
            // unwound anyway).
            return;
        }
        // Wake the delegates of the other workers' chunks first and ours last. A
        // runtime typically runs the party it woke last next on this worker and
        // leaves the earlier ones to idle workers to steal: so this worker wakes its
        // own group again, the others are free to take theirs, and fewer processes
        // change workers (and groups) from round to round.
        let here = self.here();
        let others = chunks.iter().filter(|c| c.1 != here);
        for Chunk(first, _) in others.chain(chunks.iter().filter(|c| c.1 == here)) {
            // SAFETY: the first node of a chunk belongs to a party blocked in this
            // round, which stays in its wait until woken, and this is the one wake
            // its waiter gets (each node is in exactly one chunk).
            unsafe { Waiter::try_wake(&(**first).waiter, DELEGATE, false) };
        }
    }
}

/// Wakes every node after `node` in its chunk.
///
/// # Safety
/// `node` is the caller's own node, woken with [`DELEGATE`]: the nodes after it belong
/// to parties blocked in the completed round that nobody else wakes.
unsafe fn wake_rest(node: &Node) {
    let mut p = node.next.load(Ordering::Relaxed) as *const Node;
    while !p.is_null() {
        // SAFETY: `p`'s party is still blocked (we have not woken it yet); read its
        // link before the wake, after which it may return and free the node.
        unsafe {
            let next = (*p).next.load(Ordering::Relaxed);
            let woke = Waiter::try_wake(&(*p).waiter, RELEASED, false);
            debug_assert!(woke, "hoare: a barrier waiter was woken twice");
            p = next;
        }
    }
}

/// A barrier: a shared handle parties enroll on (see the [module documentation](self)
/// for the semantics and the algorithm). Cloning the handle does not enroll anyone.
#[derive(Clone)]
pub struct Barrier {
    inner: Arc<Inner>,
}

impl Default for Barrier {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("enrolled", &self.enrolled())
            .finish()
    }
}

impl Barrier {
    /// A barrier with no party enrolled.
    #[track_caller]
    pub fn new() -> Self {
        Self::with_info(ObjInfo::here(None))
    }

    /// A barrier with no party enrolled, named `name` in deadlock, stall and leak
    /// reports (otherwise they name it by where it was made).
    ///
    /// ```
    /// use hoare_core::barrier::Barrier;
    ///
    /// let b = Barrier::named("round");
    /// assert_eq!(b.info().name(), Some("round"));
    /// ```
    #[track_caller]
    pub fn named(name: impl AsRef<str>) -> Self {
        Self::with_info(ObjInfo::here(Some(crate::wait::intern(name.as_ref()))))
    }

    fn with_info(info: ObjInfo) -> Self {
        Self {
            inner: Arc::new(Inner::new(info)),
        }
    }

    /// The barrier's identity in reports (id, name, where it was made).
    pub fn info(&self) -> &ObjInfo {
        &self.inner.info
    }

    /// A barrier with `n` ends enrolled, all awaited by its first round.
    ///
    /// ```
    /// use hoare_core::barrier::Barrier;
    ///
    /// let (barrier, ends) = Barrier::with_enrolled(3);
    /// assert_eq!(barrier.enrolled(), 3);
    /// drop(ends); // each dropped end resigns
    /// assert_eq!(barrier.enrolled(), 0);
    /// ```
    #[track_caller]
    pub fn with_enrolled(n: usize) -> (Self, Vec<BarrierEnd>) {
        let b = Self::new();
        let ends = b.enroll_many(n);
        (b, ends)
    }

    /// Enrolls a new end, awaited from the round that is open when this returns
    /// (see [Rounds, enroll and resign](self#rounds-enroll-and-resign-the-precise-semantics)).
    /// Safe to call while other parties sync.
    pub fn enroll(&self) -> BarrierEnd {
        crate::check_step!(|| crate::step::Op::one(
            crate::step::OpKind::Enroll,
            self.inner.info.id() as usize,
            crate::step::Class::Barrier,
            crate::step::Access::Other
        )
        .with_info(self.inner.info));
        let g = self.inner.here();
        let _lock = sync::lock(&self.inner.global);
        self.inner.join_group(g, 1);
        BarrierEnd {
            inner: self.inner.clone(),
            home: g,
        }
    }

    /// Enrolls `n` ends at once (one lock acquisition), all awaited from the same
    /// round.
    ///
    /// # Panics
    /// If `n` exceeds [`MAX_ENDS_PER_GROUP`]` / 2` (about two billion).
    pub fn enroll_many(&self, n: usize) -> Vec<BarrierEnd> {
        if n == 0 {
            return Vec::new();
        }
        assert!(
            n <= MAX_ENDS_PER_GROUP / 2,
            "hoare: too many ends enrolled at once on one worker's share of a barrier"
        );
        crate::check_step!(|| crate::step::Op::one(
            crate::step::OpKind::Enroll,
            self.inner.info.id() as usize,
            crate::step::Class::Barrier,
            crate::step::Access::Other
        )
        .with_info(self.inner.info));
        let g = self.inner.here();
        {
            let _lock = sync::lock(&self.inner.global);
            self.inner.join_group(g, n);
        }
        (0..n)
            .map(|_| BarrierEnd {
                inner: self.inner.clone(),
                home: g,
            })
            .collect()
    }

    /// The number of enrolled ends (a snapshot).
    pub fn enrolled(&self) -> usize {
        self.inner
            .groups
            .iter()
            .map(|g| (g.counts.load(Ordering::Relaxed) >> 32) as usize)
            .sum()
    }

    /// The number of rounds completed so far in which at least one party synced (a
    /// snapshot; a round that ends only because its ends resigned is not counted).
    pub fn rounds(&self) -> u64 {
        sync::lock(&self.inner.global).rounds
    }

    /// Whether `self` and `other` are handles to the same barrier.
    pub fn same(&self, other: &Barrier) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// One enrolled party of a [`Barrier`]. Move it to the party (process or thread)
/// that syncs with it; dropping it resigns.
pub struct BarrierEnd {
    inner: Arc<Inner>,
    /// The group this end is counted in.
    home: usize,
}

impl fmt::Debug for BarrierEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BarrierEnd")
            .field("home", &self.home)
            .finish_non_exhaustive()
    }
}

impl BarrierEnd {
    /// Blocks until every end the open round awaits has synced or resigned, then
    /// returns (the round completes). Blocks the current process, or the thread when
    /// called from a plain OS thread.
    ///
    /// ```
    /// use hoare_core::barrier::Barrier;
    ///
    /// let (_b, mut ends) = Barrier::with_enrolled(2);
    /// let mut other = ends.pop().unwrap();
    /// let t = std::thread::spawn(move || other.sync());
    /// ends[0].sync(); // returns once the other thread has synced too
    /// t.join().unwrap();
    /// ```
    ///
    /// A party the runtime is [cancelling](crate::park::Park::cancelled) (it shut
    /// down and is unwinding the party) returns at once without syncing.
    pub fn sync(&mut self) {
        crate::check_step!(|| crate::step::Op::one(
            crate::step::OpKind::Sync,
            self.inner.info.id() as usize,
            crate::step::Class::Barrier,
            crate::step::Access::Other
        )
        .with_info(self.inner.info));
        let inner = &*self.inner;
        if park::with_current(|p| p.cancelled()) {
            return;
        }
        assert!(
            !inner.broken.load(Ordering::Relaxed),
            "hoare: barrier broken: a party was unwound while blocked in sync"
        );
        let here = inner.here();
        if here != self.home {
            // Move home first (join the new group, then leave the old one: the end
            // stays awaited throughout, so the round cannot complete meanwhile).
            inner.join_group(here, 1);
            inner.leave_group(self.home, true);
            self.home = here;
        }
        /// The wait record of a party blocked in a sync.
        unsafe fn describe(inner: *const ()) -> Wait {
            // SAFETY: `WaitOn::new`'s contract: the blocked party holds an end.
            let inner = unsafe { &*(inner as *const Inner) };
            let (arrived, enrolled) = inner.counts();
            Wait::Barrier {
                barrier: inner.info.object_in_arc("barrier", inner),
                arrived,
                enrolled,
            }
        }
        // SAFETY: this end keeps `inner` alive while its party waits.
        let on = unsafe { WaitOn::new(inner as *const Inner as *const (), describe) };
        let node = Node {
            waiter: Waiter::for_current().on(on),
            next: AtomicPtr::new(ptr::null_mut()),
        };
        let me = &node as *const Node as *mut Node;
        let group = &inner.groups[here];
        let mut head = group.head.load(Ordering::Relaxed);
        loop {
            node.next.store(head, Ordering::Relaxed);
            match group
                .head
                .compare_exchange_weak(head, me, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(h) => head = h,
            }
        }
        let reg = Registration::new(
            BarrierSite {
                inner,
                node: &node,
                home: &mut self.home,
            },
            &node.waiter,
        );
        inner.leave_group(here, false);
        // Not cancellable: our arrival is counted in the round, so only its
        // completion may end the wait (a cancelled party never arrives, above).
        let outcome = node.waiter.wait_uncancellable();
        drop(reg);
        debug_assert!(
            matches!(outcome, Outcome::Done { .. }),
            "hoare: a barrier sync has no timeout"
        );
    }

    /// Leaves the barrier. If the open round was waiting only for this end, it
    /// completes now. Same as dropping the end.
    pub fn resign(self) {}

    /// A handle to the barrier this end is enrolled on (to enroll more parties).
    pub fn barrier(&self) -> Barrier {
        Barrier {
            inner: self.inner.clone(),
        }
    }
}

impl Drop for BarrierEnd {
    fn drop(&mut self) {
        if self.home != LOST {
            crate::check_step!(|| crate::step::Op::one(
                crate::step::OpKind::Resign,
                self.inner.info.id() as usize,
                crate::step::Class::Barrier,
                crate::step::Access::Other
            )
            .with_info(self.inner.info));
            self.inner.leave_group(self.home, true);
        }
    }
}

/// A blocked party's registration: its node in its group's stack (or, once the
/// group's leader took the stack, in a chunk filed for the round).
///
/// A node cannot be unlinked from a lock-free stack or a chunk, so if the wait is
/// left while nobody has woken the party (the runtime unwinds processes still
/// blocked when it shuts down), withdrawing marks the barrier *broken*: no chunk is
/// walked again (the other blocked parties are never released; `sync` panics from
/// then on), and the end is marked lost so dropping it does not resign from a round
/// it has already been counted in. If the party had been woken, the barrier is
/// fine; a delegate still wakes the rest of its chunk.
struct BarrierSite<'a> {
    inner: &'a Inner,
    node: &'a Node,
    home: &'a mut usize,
}

impl Withdraw for BarrierSite<'_> {
    // The waiter is the node's (`self.node.waiter`).
    fn withdraw(&mut self, _: Option<&Waiter>) -> bool {
        if self.node.waiter.is_waiting() {
            self.inner.broken.store(true, Ordering::Release);
            *self.home = LOST;
            // Nobody walks a chunk of a broken barrier again. (A completer that
            // took the chunk just before, on a plain thread, could still wake the
            // node: not covered. Processes cannot: the runtime unwinds them only
            // with its workers stopped.)
            return false;
        }
        // Woken as its chunk's delegate: wake the rest (on a normal return, and
        // also when the party is unwound before it could run again), unless some
        // node of the chunk may be gone.
        if let Outcome::Done {
            token: DELEGATE, ..
        } = self.node.waiter.outcome()
        {
            if !self.inner.broken.load(Ordering::Acquire) {
                // SAFETY: woken with DELEGATE, and no node of the chunk was freed
                // (that would have marked the barrier broken first).
                unsafe { wake_rest(self.node) }
            }
        }
        false
    }
}
