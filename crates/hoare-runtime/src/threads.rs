//! The thread processes of a runtime (`spawn_blocking`, `Builder::thread`): each
//! runs on an OS thread of its own, and the runtime's shutdown cancels their waits
//! and waits for them to end.

use crate::sync::lock;
use hoare_core::park::ThreadParker;
use std::panic::Location;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// A thread process that has not ended.
pub(crate) struct ThreadProc {
    pub(crate) id: u64,
    pub(crate) name: Option<String>,
    pub(crate) site: &'static Location<'static>,
    /// Its thread's parker, once the thread has started.
    parker: Option<Arc<ThreadParker>>,
}

#[derive(Default)]
struct State {
    live: Vec<ThreadProc>,
    /// The runtime shuts down: a thread that starts now is cancelled at once.
    cancelling: bool,
}

/// The live thread processes of one runtime.
#[derive(Default)]
pub(crate) struct ThreadProcs {
    state: Mutex<State>,
    ended: Condvar,
}

impl ThreadProcs {
    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Counts a thread process about to be started (before its thread exists, so
    /// a shutdown that begins meanwhile still waits for it).
    pub(crate) fn register(&self, id: u64, name: Option<String>, site: &'static Location<'static>) {
        self.lock().live.push(ThreadProc {
            id,
            name,
            site,
            parker: None,
        });
    }

    /// Called on the thread process's own thread when it starts.
    pub(crate) fn started(&self, id: u64) {
        // Counted awake for the deadlock detector until it parks (see
        // `hoare_core::park::threads_awake`).
        hoare_core::park::register_thread();
        let me = ThreadParker::current();
        let mut st = self.lock();
        if st.cancelling {
            me.cancel();
        }
        if let Some(t) = st.live.iter_mut().find(|t| t.id == id) {
            t.parker = Some(me);
        }
    }

    /// Whether every thread process has started (one that has not is not counted
    /// by `hoare_core::park::threads_awake` yet, and may still wake a process).
    pub(crate) fn all_started(&self) -> bool {
        self.lock().live.iter().all(|t| t.parker.is_some())
    }

    /// The live thread processes: id, name, spawn site (for reports).
    pub(crate) fn snapshot(&self) -> Vec<(u64, Option<String>, &'static Location<'static>)> {
        self.lock()
            .live
            .iter()
            .map(|t| (t.id, t.name.clone(), t.site))
            .collect()
    }

    /// Called when the thread process has ended (or its thread could not start).
    pub(crate) fn ended(&self, id: u64) {
        let mut st = self.lock();
        st.live.retain(|t| t.id != id);
        if st.live.is_empty() {
            self.ended.notify_all();
        }
    }

    /// Cancels the waits of every thread process, now and when it starts (see
    /// `ThreadParker::cancel`).
    pub(crate) fn cancel_all(&self) {
        let mut st = self.lock();
        st.cancelling = true;
        for t in &st.live {
            if let Some(p) = &t.parker {
                p.cancel();
            }
        }
    }

    /// Waits until every thread process has ended, or `until` passes (then
    /// returns `false`). `report` is called once with the ones still running if
    /// they have not all ended by `grace`.
    pub(crate) fn wait(
        &self,
        grace: Instant,
        until: Option<Instant>,
        report: impl FnOnce(&[ThreadProc]),
    ) -> bool {
        let mut report = Some(report);
        let mut st = self.lock();
        loop {
            if st.live.is_empty() {
                return true;
            }
            let now = Instant::now();
            if until.is_some_and(|u| now >= u) {
                return false;
            }
            if now >= grace {
                if let Some(r) = report.take() {
                    r(&st.live);
                }
            }
            let next = if report.is_some() { Some(grace) } else { until };
            st = match next {
                Some(t) => {
                    let d = t.saturating_duration_since(now);
                    self.ended
                        .wait_timeout(st, d)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.ended.wait(st).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    /// Describes the thread processes that have not ended (for reports).
    pub(crate) fn describe(&self) -> Vec<String> {
        self.lock().live.iter().map(ThreadProc::describe).collect()
    }
}

impl ThreadProc {
    /// "thread process 'name' (id 7, spawned at src/main.rs:3:5)".
    pub(crate) fn describe(&self) -> String {
        match &self.name {
            Some(n) => format!(
                "thread process '{n}' (id {}, spawned at {})",
                self.id, self.site
            ),
            None => format!("thread process {} (spawned at {})", self.id, self.site),
        }
    }
}
