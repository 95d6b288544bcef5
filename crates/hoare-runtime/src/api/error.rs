//! Why a process produced no result ([`ProcessError`]), and why a spawn failed.

use crate::report::Report;
use crate::spawn::SpawnError;
use std::any::Any;
use std::fmt;
use std::io;
use std::panic::resume_unwind;

/// Why a process produced no result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessError {
    /// The process panicked; `message` is the panic message (or a placeholder when
    /// the payload was not a string).
    Panicked {
        /// The panic message.
        message: String,
    },
    /// The runtime shut down (its root process returned) before the process
    /// finished; it was unwound.
    Cancelled,
    /// Every live process of the runtime was blocked and nothing could wake any
    /// of them: the report names each, where it was spawned and what it waited
    /// on (see [`RuntimeBuilder::on_deadlock`](crate::RuntimeBuilder::on_deadlock)).
    Deadlock(Box<Report>),
}

impl ProcessError {
    /// The panic message, if the process panicked.
    pub fn message(&self) -> Option<&str> {
        match self {
            ProcessError::Panicked { message } => Some(message),
            ProcessError::Cancelled | ProcessError::Deadlock(_) => None,
        }
    }

    /// The error of a process whose body panicked with the payload `e` (its message
    /// if it is a string).
    pub fn from_panic(e: &(dyn Any + Send)) -> Self {
        let message = if let Some(s) = e.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = e.downcast_ref::<String>() {
            s.clone()
        } else {
            "<non-string panic payload>".to_owned()
        };
        ProcessError::Panicked { message }
    }

    /// Re-raises this error as a panic in the caller (used by `par` and `run`).
    pub(crate) fn resume(self) -> ! {
        match self {
            ProcessError::Panicked { message } => resume_unwind(Box::new(message)),
            ProcessError::Cancelled => panic!("hoare: process cancelled by runtime shutdown"),
            ProcessError::Deadlock(report) => panic!("{report}"),
        }
    }
}

impl fmt::Display for ProcessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessError::Panicked { message } => write!(f, "process panicked: {message}"),
            ProcessError::Cancelled => f.write_str("process cancelled by runtime shutdown"),
            ProcessError::Deadlock(report) => write!(f, "{report}"),
        }
    }
}

impl std::error::Error for ProcessError {}

/// The error of a spawn into a runtime that has shut down.
#[derive(Debug)]
struct ShutDown;

impl fmt::Display for ShutDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("hoare: cannot spawn: the runtime has shut down")
    }
}

impl std::error::Error for ShutDown {}

/// What a failed spawn reports: the OS's error, or [`ShutDown`] as
/// [`Other`](io::ErrorKind::Other).
pub(crate) fn spawn_error(e: SpawnError) -> io::Error {
    match e {
        SpawnError::ShutDown => io::Error::other(ShutDown),
        SpawnError::Io(e) => e,
    }
}
