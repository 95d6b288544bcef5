//! Alting barriers (`hoare::AltingBarrier`, `AltingBarrierEnd`): the Rust ones, as
//! C++ holds them. An end is an alt guard through `AltKind::Barrier` (see `alt`).

use super::guard;

/// An alting barrier as C++ holds it.
pub struct AltingBarrierHandle(pub hoare_core::alt::AltingBarrier);
/// An enrolled alting-barrier end as C++ holds it (dropping it resigns).
pub struct AltingBarrierEndHandle(pub hoare_core::alt::AltingBarrierEnd);

pub(super) fn alting_barrier_new() -> Box<AltingBarrierHandle> {
    Box::new(AltingBarrierHandle(hoare_core::alt::AltingBarrier::new()))
}

pub(super) fn alting_barrier_clone(b: &AltingBarrierHandle) -> Box<AltingBarrierHandle> {
    Box::new(AltingBarrierHandle(b.0.clone()))
}

pub(super) fn alting_barrier_enroll(
    b: &AltingBarrierHandle,
) -> Result<Box<AltingBarrierEndHandle>, String> {
    guard(|| Ok(Box::new(AltingBarrierEndHandle(b.0.enroll()))))
}

pub(super) fn alting_barrier_enrolled(b: &AltingBarrierHandle) -> Result<usize, String> {
    guard(|| Ok(b.0.enrolled()))
}

pub(super) fn alting_barrier_rounds(b: &AltingBarrierHandle) -> Result<u64, String> {
    guard(|| Ok(b.0.rounds()))
}

pub(super) fn alting_barrier_sync(e: &mut AltingBarrierEndHandle) -> Result<(), String> {
    guard(|| {
        e.0.sync();
        Ok(())
    })
}

pub(super) fn alting_barrier_of(e: &AltingBarrierEndHandle) -> Box<AltingBarrierHandle> {
    Box::new(AltingBarrierHandle(e.0.barrier()))
}
