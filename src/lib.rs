//! hoare: a CSP runtime.
pub use hoare_core as core;
