//! Scopes, whose processes may borrow from the enclosing frame ([`scope`]), and
//! occam's `PAR` built on them ([`par2`], [`par3`], [`par`], [`par_for`]).

use super::builder::{Builder, Failed};
use super::error::ProcessError;
use super::join::{ChildCount, JoinHandle};
use std::io;
use std::panic::Location;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A scope's children: the count its owner waits for, and how many panicked
/// without being joined.
struct ScopeData {
    children: ChildCount,
    panics: AtomicUsize,
}

/// A scope in which processes may borrow from the enclosing stack frame; see
/// [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    data: ScopeData,
    _scope: std::marker::PhantomData<&'scope mut &'scope ()>,
    _env: std::marker::PhantomData<&'env mut &'env ()>,
}

/// A handle to a process of a [`Scope`].
///
/// Not `#[must_use]`: dropping it loses nothing, since the scope joins every
/// process it spawned before it returns (and panics if one of them panicked
/// unjoined), so the idiom `s.spawn(move || …);` is the ordinary way to start a
/// scoped process and compiles without a warning (the example on [`scope`] denies
/// `unused_must_use`). Keep the handle to `join` one process early or to take its
/// result.
pub struct ScopedJoinHandle<'scope, T> {
    inner: JoinHandle<T>,
    scope: &'scope ScopeData,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the process and returns its result (a panic joined here no longer
    /// makes the scope panic).
    pub fn join(self) -> Result<T, ProcessError> {
        let r = self.inner.join();
        if matches!(r, Err(ProcessError::Panicked { .. })) {
            self.scope.panics.fetch_sub(1, Ordering::Relaxed);
        }
        r
    }
    /// The process's id.
    pub fn id(&self) -> u64 {
        self.inner.id
    }
    /// Whether the process has ended.
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns a process that may borrow anything that outlives the scope.
    ///
    /// # Panics
    /// As [`spawn`](crate::spawn).
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.spawn_with(Builder::new(), f)
    }

    /// [`spawn`](Self::spawn) with [`Builder`] options.
    ///
    /// # Panics
    /// As [`Builder::spawn`].
    #[track_caller]
    pub fn spawn_with<F, T>(&'scope self, b: Builder, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let inner = match self.spawn_inner(b, f) {
            Ok(h) => h,
            Err(f) => f.handle_or_panic(),
        };
        self.handle(inner)
    }

    /// [`spawn_with`](Self::spawn_with) that fails as [`Builder::try_spawn`]
    /// does (then `f` was dropped without running).
    #[track_caller]
    pub fn try_spawn_with<F, T>(
        &'scope self,
        b: Builder,
        f: F,
    ) -> io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let inner = self.spawn_inner(b, f).map_err(|f| f.error)?;
        Ok(self.handle(inner))
    }

    fn handle<T>(&'scope self, inner: JoinHandle<T>) -> ScopedJoinHandle<'scope, T> {
        ScopedJoinHandle {
            inner,
            scope: &self.data,
        }
    }

    #[track_caller]
    fn spawn_inner<F, T>(&'scope self, b: Builder, f: F) -> Result<JoinHandle<T>, Failed<T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.data.children.add();
        let g = PanicCounter(&self.data.panics);
        let body = move || {
            let g = g;
            match catch_unwind(AssertUnwindSafe(f)) {
                Ok(v) => v,
                Err(e) => {
                    // SAFETY: the scope outlives its children.
                    unsafe { (*g.0).fetch_add(1, Ordering::Relaxed) };
                    resume_unwind(e)
                }
            }
        };
        // SAFETY: the scope waits (in `scope`) for every child's `Finish` to count
        // down before anything the child borrows can go (a failed spawn drops it,
        // which counts down too).
        unsafe { b.spawn_unchecked(body, &self.data.children) }
    }
}

/// A child's pointer to its scope's count of panics.
struct PanicCounter(*const AtomicUsize);
// SAFETY: only used to reach the scope's atomic counter, which is Sync.
unsafe impl Send for PanicCounter {}

/// Runs `f` with a [`Scope`] whose processes may borrow from the caller; returns
/// after every one of them has ended, also when `f` panics (the panic is then
/// re-raised). If a child panicked and nobody joined it, `scope` panics.
///
/// ```
/// #![deny(unused_must_use)] // the idiom below compiles without a warning
/// let mut v = vec![1, 2, 3];
/// hoare_runtime::run(|| {
///     hoare_runtime::scope(|s| {
///         for x in v.iter_mut() {
///             s.spawn(move || *x *= 10);
///         }
///     });
/// });
/// assert_eq!(v, [10, 20, 30]);
/// ```
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    let scope = Scope {
        data: ScopeData {
            children: ChildCount::new(),
            panics: AtomicUsize::new(0),
        },
        _scope: std::marker::PhantomData,
        _env: std::marker::PhantomData,
    };
    let r = catch_unwind(AssertUnwindSafe(|| f(&scope)));
    scope.data.children.wait_all();
    match r {
        Err(e) => resume_unwind(e),
        Ok(v) => {
            if scope.data.panics.load(Ordering::Relaxed) > 0 {
                panic!("hoare: a scoped process panicked");
            }
            v
        }
    }
}

fn unwrap_par<T>(r: Result<T, ProcessError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => e.resume(),
    }
}

/// Runs `a` and `b` in parallel (occam `PAR`) and returns both results. A panic in
/// either is re-raised after both ended.
///
/// ```
/// let (x, y) = hoare_runtime::run(|| hoare_runtime::par2(|| 1, || "two"));
/// assert_eq!((x, y), (1, "two"));
/// ```
#[track_caller]
pub fn par2<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let site = Location::caller();
    scope(|s| {
        let hb = s.spawn_with(Builder::new().at(site), b);
        let ra = catch_unwind(AssertUnwindSafe(a));
        let rb = hb.join();
        let ra = ra.unwrap_or_else(|e| resume_unwind(e));
        (ra, unwrap_par(rb))
    })
}

/// Three closures in parallel; see [`par2`].
#[track_caller]
pub fn par3<A, B, C, RA, RB, RC>(a: A, b: B, c: C) -> (RA, RB, RC)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    C: FnOnce() -> RC + Send,
    RA: Send,
    RB: Send,
    RC: Send,
{
    let site = Location::caller();
    scope(|s| {
        let hb = s.spawn_with(Builder::new().at(site), b);
        let hc = s.spawn_with(Builder::new().at(site), c);
        let ra = catch_unwind(AssertUnwindSafe(a));
        let rb = hb.join();
        let rc = hc.join();
        let ra = ra.unwrap_or_else(|e| resume_unwind(e));
        (ra, unwrap_par(rb), unwrap_par(rc))
    })
}

/// A boxed branch of a [`par`].
pub type ParFn<'a, T> = Box<dyn FnOnce() -> T + Send + 'a>;

/// Runs every closure in parallel and returns their results in order.
///
/// ```
/// use hoare_runtime::{par, ParFn};
/// let v = hoare_runtime::run(|| {
///     let fs: Vec<ParFn<u32>> = vec![Box::new(|| 1), Box::new(|| 2)];
///     par(fs)
/// });
/// assert_eq!(v, [1, 2]);
/// ```
#[track_caller]
pub fn par<'a, T: Send + 'a>(fs: Vec<ParFn<'a, T>>) -> Vec<T> {
    let site = Location::caller();
    scope(|s| {
        let mut it = fs.into_iter();
        let Some(first) = it.next() else {
            return Vec::new();
        };
        let hs: Vec<_> = it
            .map(|f| {
                let b = Builder::new().at(site).captures(boxed_range(&*f));
                s.spawn_with(b, f)
            })
            .collect();
        let r0 = catch_unwind(AssertUnwindSafe(first));
        let rest: Vec<_> = hs.into_iter().map(|h| h.join()).collect();
        let mut out = Vec::with_capacity(rest.len() + 1);
        out.push(r0.unwrap_or_else(|e| resume_unwind(e)));
        out.extend(rest.into_iter().map(unwrap_par));
        out
    })
}

/// The memory a boxed body occupies (its captures), as `start..end`.
fn boxed_range<T: ?Sized>(v: &T) -> (usize, usize) {
    let start = v as *const T as *const u8 as usize;
    (start, start + std::mem::size_of_val(v))
}

/// Replicated `PAR`: runs `f` on every item in parallel (one process per item)
/// and returns the results in order.
///
/// ```
/// let v = hoare_runtime::run(|| hoare_runtime::par_for(0..4u32, |i| i * i));
/// assert_eq!(v, [0, 1, 4, 9]);
/// ```
#[track_caller]
pub fn par_for<I, F, R>(items: I, f: F) -> Vec<R>
where
    I: IntoIterator,
    I::Item: Send,
    F: Fn(I::Item) -> R + Sync,
    R: Send,
{
    let f = &f;
    let site = Location::caller();
    scope(|s| {
        let hs: Vec<_> = items
            .into_iter()
            .map(|x| s.spawn_with(Builder::new().at(site), move || f(x)))
            .collect();
        let rs: Vec<_> = hs.into_iter().map(|h| h.join()).collect();
        rs.into_iter().map(unwrap_par).collect()
    })
}
