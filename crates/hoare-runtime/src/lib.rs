//! hoare runtime.
