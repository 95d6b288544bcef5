//! Shrinking a failing schedule replays it dozens of times; the replays'
//! panics must not print (each would repeat the failure's message). Its own
//! test binary: it installs a panic hook, which is global.
#![cfg(feature = "check")]

use hoare::check::Builder;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Three senders, three messages each: the root insists they arrive sorted,
/// which most interleavings break.
fn net() {
    let (tx, rx) = hoare::any2one::<u32>();
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let tx = tx.clone();
            hoare::spawn(move || {
                for _ in 0..3 {
                    tx.send(i).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let v: Vec<u32> = rx.iter().collect();
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "out of order: {v:?}");
    for h in hs {
        h.join().unwrap();
    }
}

/// The panic hook is called as often with shrinking as without it.
///
/// Fails (more calls with shrinking) when the shrinking replays run with the
/// panic hook on (`Builder::try_run` calling `shrink_report` outside
/// `quietly`).
#[test]
fn shrinking_replays_print_no_panic() {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |i| {
        PANICS.fetch_add(1, SeqCst);
        prev(i)
    }));
    let count = |shrink: bool| {
        let before = PANICS.load(SeqCst);
        let r = Builder::new()
            .random(1000)
            .seed(7)
            .shrink(shrink)
            .try_run(net)
            .unwrap_err();
        (
            PANICS.load(SeqCst) - before,
            r.schedule().split('.').count(),
        )
    };
    let (plain, long) = count(false);
    let (shrunk, short) = count(true);
    assert!(plain >= 1);
    // Shrinking happened (so its replays ran), and printed nothing more.
    assert!(short < long, "{short} vs {long}");
    assert_eq!(shrunk, plain);
}
