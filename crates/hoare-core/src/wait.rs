//! What a blocked party waits on, and the names of the things it can wait on: the
//! pieces a deadlock, stall or leak report (and the checking runtime) is built from.
//!
//! Every channel and barrier carries an [`ObjInfo`]: a process-wide id, an optional
//! name (`Channel::builder().name("fork1")`), the place in the source where it was
//! made (its constructors are `#[track_caller]`), and whether it was made outside
//! every process (then a plain thread the runtime cannot see may use it, and a wait
//! on it never counts as deadlocked). Every [`Waiter`](crate::waiter::Waiter)
//! carries a [`WaitOn`]: two words written when the wait starts, which a runtime
//! turns into a [`Wait`] description only when it builds a report, with the
//! party known to be parked.

use std::collections::HashSet;
use std::fmt;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The id counter of objects: a plain `std` atomic even under loom, since ids are
/// names, not part of any protocol.
static NEXT_OBJ: AtomicU64 = AtomicU64::new(1);

/// The identity of a channel or barrier, for reports.
#[derive(Clone, Copy, Debug)]
pub struct ObjInfo {
    id: u64,
    name: Option<&'static str>,
    site: &'static Location<'static>,
    outside: bool,
}

impl ObjInfo {
    /// A fresh identity for an object made at the caller's location, with `name`.
    #[track_caller]
    #[inline]
    pub fn here(name: Option<&'static str>) -> Self {
        Self::at(name, Location::caller())
    }

    /// A fresh identity for an object made at `site`.
    pub fn at(name: Option<&'static str>, site: &'static Location<'static>) -> Self {
        let id = NEXT_OBJ.fetch_add(1, Ordering::Relaxed);
        let outside = !crate::park::in_process();
        // A checking runtime names objects by their maker (see `Park::created`).
        #[cfg(feature = "check")]
        if !outside {
            crate::park::with_current(|p| p.created(id));
        }
        Self {
            id,
            name,
            site,
            outside,
        }
    }

    /// This identity, marked as made outside every process.
    pub(crate) fn made_outside(mut self) -> Self {
        self.outside = true;
        self
    }

    /// The process-wide id (ids count up from 1 in order of creation).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name given to it, if any.
    pub fn name(&self) -> Option<&'static str> {
        self.name
    }

    /// Where it was made.
    pub fn site(&self) -> &'static Location<'static> {
        self.site
    }

    /// Whether it was made outside every process (by a plain thread): a wait on it
    /// may be ended by a thread the runtime cannot see, so it never counts as
    /// deadlocked.
    pub fn outside(&self) -> bool {
        self.outside
    }

    /// The description of this object in a report; `key` tells objects apart (an
    /// address). An end of it holds it in an `Arc` of a type aligned to at most
    /// two words (see [`Object::arc_offset`]); [`ObjInfo::object_in_arc`] says
    /// which type.
    pub fn object(&self, kind: &'static str, key: usize) -> Object {
        self.described(kind, key, arc_offset::<usize>())
    }

    /// The description of `obj`, an object that the ends of it hold in an
    /// `Arc<T>` (a channel's or barrier's shared state): its key is its address.
    pub fn object_in_arc<T>(&self, kind: &'static str, obj: &T) -> Object {
        self.described(kind, obj as *const T as usize, arc_offset::<T>())
    }

    fn described(&self, kind: &'static str, key: usize, arc_offset: usize) -> Object {
        Object {
            key,
            kind,
            id: self.id,
            name: self.name,
            site: self.site,
            outside: self.outside,
            arc_offset,
        }
    }
}

/// How far in front of a `T` in an `Arc<T>` the `Arc`'s pointer points: at the
/// two counts that come first, padded to `T`'s alignment (`std`'s `ArcInner` is
/// `repr(C)`; the unit test `arc_offsets_match_std` checks it).
pub const fn arc_offset<T>() -> usize {
    let counts = 2 * std::mem::size_of::<usize>();
    let align = std::mem::align_of::<T>();
    counts.div_ceil(align) * align
}

/// A `&'static str` equal to `name`, allocated once per distinct name (names are
/// few: one per channel of a network, not per message).
pub fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(&s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_owned().into_boxed_str());
    set.insert(s);
    s
}

/// One object a blocked party waits on, as a report names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Tells objects apart within one report (an address).
    pub key: usize,
    /// `"channel"` or `"barrier"`.
    pub kind: &'static str,
    /// Its process-wide id.
    pub id: u64,
    /// Its name, if it was given one.
    pub name: Option<&'static str>,
    /// Where it was made.
    pub site: &'static Location<'static>,
    /// Whether it was made outside every process.
    pub outside: bool,
    /// How far in front of `key` an end's pointer to it points (see
    /// [`Object::arc_offset`]).
    arc_offset: usize,
}

impl Object {
    /// How far in front of `key` an end of this object points: its ends hold it
    /// in an `Arc`, whose pointer is to the counts in front of it. A deadlock
    /// report finds the ends a blocked process holds by looking for exactly
    /// `key - arc_offset` (or `key`, a reference) among its words: a word at any
    /// other distance in front of the object (a pointer to the allocation before
    /// it) is no end, and would make the report depend on the heap's layout.
    pub fn arc_offset(&self) -> usize {
        self.arc_offset
    }

    /// A short name for cycles: `fork1`, or `channel@src/main.rs:7`.
    pub fn short(&self) -> String {
        match self.name {
            Some(n) => n.to_owned(),
            None => format!("{}@{}:{}", self.kind, self.site.file(), self.site.line()),
        }
    }
}

impl fmt::Display for Object {
    /// `channel 'fork1'`, or `channel created at src/main.rs:7:13`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(n) => write!(f, "{} '{n}' (created at {})", self.kind, self.site),
            None => write!(f, "{} created at {}", self.kind, self.site),
        }
    }
}

/// What one blocked party waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A channel operation (`op`: "send", "recv", "extended recv").
    Chan {
        /// The operation.
        op: &'static str,
        /// The channel.
        chan: Object,
    },
    /// An alt, and its guards.
    Alt {
        /// The enabled guards, in order.
        guards: Vec<Guard>,
    },
    /// A barrier sync.
    Barrier {
        /// The barrier.
        barrier: Object,
        /// How many of its enrolled ends have arrived in the open round.
        arrived: usize,
        /// How many ends are enrolled.
        enrolled: usize,
    },
    /// The end of another process.
    Join {
        /// The process waited for (0: not known).
        target: u64,
    },
    /// The processes of a scope (they borrow from this one's stack).
    Scope,
    /// The reader of an extended rendezvous to return from its closure.
    HandOff,
    /// An event from outside hoare (socket readiness): never a deadlock, since the
    /// outside world may bring it.
    External(String),
    /// Anything else.
    Other(String),
}

impl Wait {
    /// The objects waited on.
    pub fn objects(&self) -> Vec<&Object> {
        match self {
            Wait::Chan { chan, .. } => vec![chan],
            Wait::Barrier { barrier, .. } => vec![barrier],
            Wait::Alt { guards } => guards
                .iter()
                .filter_map(|g| match g {
                    Guard::Chan { chan, .. } => Some(chan),
                    Guard::Barrier(b) => Some(b),
                    Guard::Other(_) => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// One guard of an alt, as a report shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guard {
    /// A receive or send guard.
    Chan {
        /// "recv" or "send".
        op: &'static str,
        /// The channel.
        chan: Object,
    },
    /// An alting-barrier guard.
    Barrier(Object),
    /// Any other guard ("timeout", "skip").
    Other(&'static str),
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Guard::Chan { op, chan } => write!(f, "{op} on {chan}"),
            Guard::Barrier(b) => write!(f, "sync on {b}"),
            Guard::Other(what) => f.write_str(what),
        }
    }
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wait::Chan { op, chan } => write!(f, "{op} on {chan}"),
            Wait::Alt { guards } => {
                f.write_str("an alt over ")?;
                for (i, g) in guards.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{g}")?;
                }
                Ok(())
            }
            Wait::Barrier {
                barrier,
                arrived,
                enrolled,
            } => write!(
                f,
                "sync on {barrier} ({arrived} of {enrolled} enrolled ends arrived)"
            ),
            Wait::Join { target: 0 } => f.write_str("the end of another process"),
            Wait::Join { target } => write!(f, "the end of process {target}"),
            Wait::Scope => f.write_str("the end of its scope's processes"),
            Wait::HandOff => f.write_str("the reader of an extended rendezvous to return"),
            Wait::External(s) | Wait::Other(s) => f.write_str(s),
        }
    }
}

/// The record of what a wait is for, kept in its [`Waiter`](crate::waiter::Waiter):
/// a pointer to the blocking operation's own data and the function that describes
/// it. Writing it costs two stores; describing it is left to the rare report.
#[derive(Clone, Copy)]
pub struct WaitOn {
    data: *const (),
    describe: Option<unsafe fn(*const ()) -> Wait>,
}

// SAFETY: `data` is only dereferenced by `describe`, whose caller promises the
// waiting party is parked (so the data is not being changed); `WaitOn::new`'s
// caller promises it stays valid that long. The record itself is plain words.
unsafe impl Send for WaitOn {}
// SAFETY: as for `Send`: shared references only read the words.
unsafe impl Sync for WaitOn {}

impl fmt::Debug for WaitOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitOn")
            .field("data", &self.data)
            .finish_non_exhaustive()
    }
}

impl WaitOn {
    /// No record (a wait the core does not describe).
    pub const UNKNOWN: WaitOn = WaitOn {
        data: std::ptr::null(),
        describe: None,
    };

    /// A record that `describe(data)` turns into a description.
    ///
    /// # Safety
    /// `describe(data)` must be sound to call while the waiting party is parked in
    /// this wait: `data` must stay valid (and the objects it reaches alive) for as
    /// long as the waiter exists.
    #[inline]
    pub const unsafe fn new(data: *const (), describe: unsafe fn(*const ()) -> Wait) -> Self {
        Self {
            data,
            describe: Some(describe),
        }
    }

    /// A record without data: the wait is always described as `describe()`.
    pub const fn fixed(describe: unsafe fn(*const ()) -> Wait) -> Self {
        Self {
            data: std::ptr::null(),
            describe: Some(describe),
        }
    }

    /// Whether the wait involves an object made outside every process, or an
    /// event from outside hoare (so something the runtime cannot see may end
    /// it). Allocates: for slow paths.
    ///
    /// # Safety
    /// As [`describe`](Self::describe).
    pub unsafe fn outside(&self) -> bool {
        // SAFETY: the caller's contract.
        unsafe { self.describe() }.is_some_and(|w| {
            matches!(w, Wait::External(_)) || w.objects().iter().any(|o| o.outside)
        })
    }

    /// The description of the wait.
    ///
    /// # Safety
    /// The waiting party must be parked in this wait, and stay so until this returns.
    pub unsafe fn describe(&self) -> Option<Wait> {
        // SAFETY: the caller's contract, and `new`'s.
        self.describe.map(|d| unsafe { d(self.data) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails if `arc_offset` is not where `std`'s `Arc` keeps its value (the
    /// deadlock report would then find no end of the object at all).
    #[test]
    fn arc_offsets_match_std() {
        fn check<T>(v: T) {
            let a = std::sync::Arc::new(v);
            assert_eq!(
                std::mem::size_of::<std::sync::Arc<T>>(),
                std::mem::size_of::<usize>()
            );
            // SAFETY: an `Arc<T>` of a sized `T` is one pointer (asserted above);
            // reading it as a `usize` copies its bits.
            let ptr: usize = unsafe { std::mem::transmute_copy(&a) };
            let value = std::sync::Arc::as_ptr(&a) as usize;
            assert_eq!(
                value - ptr,
                arc_offset::<T>(),
                "{}",
                std::any::type_name::<T>()
            );
        }
        #[repr(align(64))]
        struct A64;
        #[repr(align(128))]
        struct A128;
        check(1u8);
        check(1u64);
        check(1u128);
        check(A64);
        check(A128);
        assert_eq!(arc_offset::<A128>(), 128);
    }

    #[test]
    fn objects_are_named_or_located() {
        let named = ObjInfo::here(Some(intern("fork1"))).object("channel", 1);
        assert!(named
            .to_string()
            .starts_with("channel 'fork1' (created at "));
        assert_eq!(named.short(), "fork1");
        let anon = ObjInfo::here(None);
        let o = anon.object("barrier", 2);
        assert!(o.to_string().starts_with("barrier created at "));
        assert!(o.short().starts_with("barrier@"), "{}", o.short());
        assert!(anon.outside(), "made by a plain thread");
        assert!(anon.id() > 0);
    }

    #[test]
    fn interning_returns_one_copy() {
        let a = intern(&format!("n{}", 7));
        let b = intern("n7");
        assert!(std::ptr::eq(a, b));
    }
}
