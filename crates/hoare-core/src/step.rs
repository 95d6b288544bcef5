//! Scheduling points for a checking runtime (built only with the `check` feature).
//!
//! Before each hoare operation the core calls [`step`] with a description of the
//! operation (an [`Op`]: its kind and the objects it touches). A checking runtime
//! (`hoare::check`) that runs the party suspends it there and decides which party
//! performs its next operation; everywhere else (a runtime's processes, plain
//! threads) [`Park::step`](crate::park::Park::step) does nothing. Without the
//! `check` feature none of this exists and the call sites compile to nothing (see
//! the crate-private `check_step!` macro).
//!
//! The clock goes through [`crate::park::now`], which a checking runtime makes
//! virtual.

use std::cell::Cell;
use std::time::Instant;

/// What kind of operation a party is about to perform.
///
/// ```
/// use hoare_core::step::OpKind;
/// assert_ne!(OpKind::Send, OpKind::Recv);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A blocking send without a deadline.
    Send,
    /// A blocking receive without a deadline.
    Recv,
    /// An extended receive (`recv_with`: the writer is held until the
    /// reader's function returns) without a deadline.
    ExtRecv,
    /// An extended receive with a deadline (`recv_with_deadline`).
    TimedExtRecv,
    /// A `try_send` (never blocks).
    TrySend,
    /// A `try_recv` (never blocks).
    TryRecv,
    /// A send with a deadline.
    TimedSend,
    /// A receive with a deadline.
    TimedRecv,
    /// Poisoning a channel.
    Poison,
    /// Dropping the last end of one side of a channel (which poisons it).
    DropEnd,
    /// An alternation over the listed guards.
    Alt,
    /// A barrier sync.
    Sync,
    /// Enrolling on a barrier.
    Enroll,
    /// Resigning from a barrier (dropping an end).
    Resign,
    /// Joining a process (or waiting for a scope's processes).
    Join,
    /// A process ending (completing its join slot).
    Exit,
    /// Sleeping until a deadline.
    Sleep,
}

/// How an operation touches one object (for the checker's independence relation).
///
/// ```
/// use hoare_core::step::Access;
/// assert_ne!(Access::Send, Access::Other);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// A plain blocking send on a rendezvous channel.
    Send,
    /// A plain blocking receive on a rendezvous channel.
    Recv,
    /// Dropping an end.
    Drop,
    /// An alt that found none of its guards ready and registered on the channel
    /// (the checker records this once the alt has blocked): it commutes with
    /// plain sends, receives and drops, which it would otherwise have found
    /// ready or met later.
    Register,
    /// Anything else (conflicts with every access to the object).
    Other,
}

/// What class of object an [`Obj`] is (for reports).
///
/// ```
/// use hoare_core::step::Class;
/// assert_ne!(Class::Chan, Class::Clock);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// A channel.
    Chan,
    /// A barrier or an alting barrier.
    Barrier,
    /// A process's join slot, or a scope.
    Join,
    /// The clock (armed or read by timed operations).
    Clock,
}

/// One object an operation touches: its key (a channel's or barrier's
/// [`ObjInfo`](crate::wait::ObjInfo) id, a joined process's id, else an
/// address; the checker numbers objects in order of first appearance within an
/// execution), its class, and how it is touched.
///
/// ```
/// use hoare_core::step::{Access, Class, Obj};
/// let o = Obj { addr: 7, class: Class::Chan, access: Access::Send, info: None };
/// assert_eq!(o.access, Access::Send);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Obj {
    /// The object's key within its class (the checker never keeps it across
    /// executions).
    pub addr: usize,
    /// Its class.
    pub class: Class,
    /// How it is touched.
    pub access: Access,
    /// Its identity (name, creation site) for reports, where the operation knows
    /// it.
    pub info: Option<crate::wait::ObjInfo>,
}

/// The objects of an [`Op`]: up to two kept inline (every operation but an alt
/// of more than two guards), so that a scheduling point allocates nothing (a
/// checker's step costs a few hundred instructions; `malloc` and `free` were a
/// sixth of them).
///
/// ```
/// use hoare_core::step::{Objs, CLOCK};
/// let mut o = Objs::new();
/// for _ in 0..3 {
///     o.push(CLOCK);
/// }
/// assert_eq!(o.len(), 3);
/// ```
#[derive(Clone, Debug)]
pub struct Objs(ObjsRepr);

#[derive(Clone, Debug)]
enum ObjsRepr {
    /// The first `len` are the objects (the rest are filler).
    Inline(u8, [Obj; 2]),
    Heap(Vec<Obj>),
}

impl Objs {
    /// No objects.
    ///
    /// ```
    /// assert!(hoare_core::step::Objs::new().is_empty());
    /// ```
    #[inline]
    pub const fn new() -> Self {
        Objs(ObjsRepr::Inline(0, [CLOCK; 2]))
    }

    /// One object.
    ///
    /// ```
    /// use hoare_core::step::{Objs, CLOCK};
    /// assert_eq!(Objs::one(CLOCK).len(), 1);
    /// ```
    #[inline]
    pub const fn one(o: Obj) -> Self {
        Objs(ObjsRepr::Inline(1, [o, CLOCK]))
    }

    /// Appends `o`.
    ///
    /// ```
    /// use hoare_core::step::{Objs, CLOCK};
    /// let mut o = Objs::new();
    /// o.push(CLOCK);
    /// assert_eq!(o[0].class, CLOCK.class);
    /// ```
    #[inline]
    pub fn push(&mut self, o: Obj) {
        match &mut self.0 {
            ObjsRepr::Inline(n, a) if (*n as usize) < a.len() => {
                a[*n as usize] = o;
                *n += 1;
            }
            ObjsRepr::Inline(n, a) => {
                let mut v = Vec::with_capacity(2 * a.len());
                v.extend_from_slice(&a[..*n as usize]);
                v.push(o);
                self.0 = ObjsRepr::Heap(v);
            }
            ObjsRepr::Heap(v) => v.push(o),
        }
    }
}

impl Default for Objs {
    fn default() -> Self {
        Self::new()
    }
}

impl std::ops::Deref for Objs {
    type Target = [Obj];
    #[inline]
    fn deref(&self) -> &[Obj] {
        match &self.0 {
            ObjsRepr::Inline(n, a) => &a[..*n as usize],
            ObjsRepr::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for Objs {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Obj] {
        match &mut self.0 {
            ObjsRepr::Inline(n, a) => &mut a[..*n as usize],
            ObjsRepr::Heap(v) => v,
        }
    }
}

impl From<Vec<Obj>> for Objs {
    fn from(v: Vec<Obj>) -> Self {
        let mut o = Objs::new();
        for x in v {
            o.push(x);
        }
        o
    }
}

/// An operation about to be performed: its kind and the objects it touches.
///
/// ```
/// use hoare_core::step::{Access, Class, Op, OpKind};
/// let op = Op::one(OpKind::Send, 7, Class::Chan, Access::Send);
/// assert_eq!(op.objs.len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Op {
    /// The kind.
    pub kind: OpKind,
    /// The objects, in guard order for an alt.
    pub objs: Objs,
}

impl Op {
    /// An operation on one object.
    ///
    /// ```
    /// use hoare_core::step::{Access, Class, Op, OpKind};
    /// let op = Op::one(OpKind::Join, 3, Class::Join, Access::Other);
    /// assert_eq!(op.kind, OpKind::Join);
    /// ```
    #[inline]
    pub fn one(kind: OpKind, addr: usize, class: Class, access: Access) -> Self {
        Self {
            kind,
            objs: Objs::one(Obj {
                addr,
                class,
                access,
                info: None,
            }),
        }
    }

    /// This operation, its first object's identity set to `info`.
    ///
    /// ```
    /// use hoare_core::step::{Access, Class, Op, OpKind};
    /// use hoare_core::wait::ObjInfo;
    /// let op = Op::one(OpKind::Poison, 3, Class::Chan, Access::Other)
    ///     .with_info(ObjInfo::here(Some("c")));
    /// assert_eq!(op.objs[0].info.unwrap().name(), Some("c"));
    /// ```
    #[inline]
    pub fn with_info(mut self, info: crate::wait::ObjInfo) -> Self {
        if let Some(o) = self.objs.first_mut() {
            o.info = Some(info);
        }
        self
    }
}

/// The clock object (the only object of its class).
///
/// ```
/// use hoare_core::step::{Class, CLOCK};
/// assert_eq!(CLOCK.class, Class::Clock);
/// ```
pub const CLOCK: Obj = Obj {
    addr: 1,
    class: Class::Clock,
    access: Access::Other,
    info: None,
};

std::thread_local! {
    /// The virtual time of the checking runtime running on this thread (`None`: no
    /// checker runs here).
    static VIRTUAL_NOW: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Sets (or, with `None`, clears) the virtual time of this thread: a checking
/// runtime does, for as long as it runs its processes here.
///
/// ```
/// use hoare_core::step::{set_virtual_now, virtual_now};
/// let t = std::time::Instant::now();
/// set_virtual_now(Some(t));
/// assert_eq!(hoare_core::park::now(), t);
/// set_virtual_now(None);
/// assert_eq!(virtual_now(), None);
/// ```
pub fn set_virtual_now(t: Option<Instant>) {
    VIRTUAL_NOW.with(|c| c.set(t));
}

/// The virtual time of this thread, if a checking runtime runs here.
///
/// ```
/// assert_eq!(hoare_core::step::virtual_now(), None);
/// ```
// Never inlined: a thread-local read (see `park::with_current`).
#[inline(never)]
pub fn virtual_now() -> Option<Instant> {
    VIRTUAL_NOW.with(|c| c.get())
}

/// What the scheduling points of this thread do (see [`set_steps`]).
///
/// ```
/// use hoare_core::step::Steps;
/// assert_ne!(Steps::Off, Steps::Bare);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steps {
    /// Nothing: no checking runtime runs here.
    Off,
    /// Build each operation's description and hand it to
    /// [`Park::step`](crate::park::Park::step).
    Ops,
    /// Call [`Park::step_bare`](crate::park::Park::step_bare) without building
    /// the description (a checker that chooses without looking at operations:
    /// random and PCT runs).
    Bare,
}

std::thread_local! {
    static STEPS: Cell<Steps> = const { Cell::new(Steps::Off) };
}

/// Sets what the scheduling points of this thread do: a checking runtime does,
/// for as long as it runs its processes here (and sets [`Steps::Off`] after).
///
/// ```
/// use hoare_core::step::{set_steps, step, Steps};
/// set_steps(Steps::Off);
/// step(|| unreachable!());
/// ```
pub fn set_steps(s: Steps) {
    STEPS.with(|c| c.set(s));
}

// Never inlined: a thread-local read (see `park::with_current`).
#[inline(never)]
fn steps() -> Steps {
    STEPS.with(|c| c.get())
}

/// The scheduling point: if a checking runtime runs on this thread, builds the
/// operation and hands it to the running party
/// ([`Park::step`](crate::park::Park::step)), which may suspend it until the
/// checker chooses it (or, when the checker does not look at operations, only
/// suspends: [`Steps::Bare`]).
///
/// ```
/// use hoare_core::step::{step, Access, Class, Op, OpKind};
/// // No checker runs on this thread: the operation is not even built.
/// step(|| unreachable!());
/// let _ = Op::one(OpKind::Send, 1, Class::Chan, Access::Send);
/// ```
#[inline]
pub fn step(op: impl FnOnce() -> Op) {
    match steps() {
        Steps::Off => {}
        Steps::Ops => step_slow(op()),
        Steps::Bare => step_bare(),
    }
}

#[cold]
#[inline(never)]
fn step_slow(op: Op) {
    crate::park::with_current(|p| p.step(op));
}

#[cold]
#[inline(never)]
fn step_bare() {
    crate::park::with_current(|p| p.step_bare());
}
