//! Selection policies: pri (the first ready guard in order) and fair.

use super::case::Case;

/// The state of a fair alt: where its next selection starts.
///
/// A fair alt tries its guards in order starting just after the guard it chose
/// last time, so the guard it just served becomes the least preferred. Under
/// sustained load, a guard that is always ready is chosen at least once every
/// `n` alts over `n` guards: no ready guard starves.
///
/// Keep one `Fair` per alt (per loop) in the process that alts; it is a plain
/// counter, not shared.
///
/// ```
/// use hoare_core::alt::Fair;
/// use hoare_core::chan::{Channel, Receiver};
///
/// let (tx_a, rx_a) = Channel::builder().unbounded().one2one::<u32>();
/// let (tx_b, rx_b) = Channel::builder().unbounded().one2one::<u32>();
/// for i in 0..4 {
///     tx_a.send(i).unwrap();
///     tx_b.send(i).unwrap();
/// }
/// let mut fair = Fair::new();
/// let mut from_a = 0;
/// for _ in 0..4 {
///     hoare_core::fair_alt! { fair;
///         recv(rx_a) -> _v => from_a += 1,
///         recv(rx_b) -> _v => {},
///     }
/// }
/// assert_eq!(from_a, 2); // both ready all along: served in turn
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fair {
    next: usize,
}

impl Fair {
    /// A fair policy that starts with the first guard.
    pub const fn new() -> Self {
        Self { next: 0 }
    }

    /// The index the next selection starts at.
    pub fn next_start(&self) -> usize {
        self.next
    }

    /// Records that guard `chosen` was chosen: the next selection starts after it.
    pub fn chosen(&mut self, chosen: usize) {
        self.next = chosen.wrapping_add(1);
    }

    /// Runs a fair selection over `cases` (the [`fair_alt!`](crate::fair_alt!)
    /// macro's entry point).
    #[doc(hidden)]
    #[inline]
    pub fn __select<'c>(&mut self, cases: &mut [&mut (dyn Case + 'c)]) -> usize {
        let i = super::engine::select(cases, self.next);
        self.chosen(i);
        i
    }

    /// A fair selection over any case set.
    pub(crate) fn select_set<S: super::engine::CaseSet + ?Sized>(
        &mut self,
        cases: &mut S,
    ) -> usize {
        let i = super::engine::select_set(cases, self.next);
        self.chosen(i);
        i
    }
}
