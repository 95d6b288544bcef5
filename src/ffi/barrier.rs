//! Barriers (`hoare::Barrier`, `BarrierEnd`): the Rust ones, as C++ holds them.

use super::guard;

/// A barrier as C++ holds it.
pub struct BarrierHandle(pub hoare_core::barrier::Barrier);
/// An enrolled barrier end as C++ holds it (dropping it resigns).
pub struct BarrierEndHandle(pub hoare_core::barrier::BarrierEnd);

pub(super) fn barrier_new() -> Box<BarrierHandle> {
    Box::new(BarrierHandle(hoare_core::barrier::Barrier::new()))
}

pub(super) fn barrier_clone(b: &BarrierHandle) -> Box<BarrierHandle> {
    Box::new(BarrierHandle(b.0.clone()))
}

pub(super) fn barrier_enroll(b: &BarrierHandle) -> Result<Box<BarrierEndHandle>, String> {
    guard(|| Ok(Box::new(BarrierEndHandle(b.0.enroll()))))
}

pub(super) fn barrier_enrolled(b: &BarrierHandle) -> usize {
    b.0.enrolled()
}

pub(super) fn barrier_rounds(b: &BarrierHandle) -> Result<u64, String> {
    guard(|| Ok(b.0.rounds()))
}

pub(super) fn barrier_same(a: &BarrierHandle, b: &BarrierHandle) -> bool {
    a.0.same(&b.0)
}

pub(super) fn barrier_sync(e: &mut BarrierEndHandle) -> Result<(), String> {
    guard(|| {
        e.0.sync();
        Ok(())
    })
}

pub(super) fn barrier_of(e: &BarrierEndHandle) -> Box<BarrierHandle> {
    Box::new(BarrierHandle(e.0.barrier()))
}
