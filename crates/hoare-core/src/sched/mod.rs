//! Scheduler protocols (process park/notify state, worker idle/notify), model-checked with loom.
