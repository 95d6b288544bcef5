//! Helpers shared by the network channel tests (tests/net_channels.rs and
//! tests/net_programs.rs): writers that send until their connection fails, and
//! the check that every value they sent is accounted for.
#![allow(dead_code)]

use hoare::JoinHandle;
use hoare::{Any, Sender};
use std::collections::HashSet;

/// What one writer ends with: the values acknowledged, the value its failed
/// send handed back, and the channel's poison reason.
pub type WriterEnd = (Vec<u64>, u64, Option<hoare::Reason>);

/// One process per sender, each sending `w * 1_000_000 + i` for i = 0, 1, …
/// until a send fails (the value it hands back must be the one it sent).
pub fn writers_until_failure(txs: Vec<Sender<u64, Any>>) -> Vec<JoinHandle<WriterEnd>> {
    txs.into_iter()
        .zip(0u64..)
        .map(|(tx, w)| {
            hoare::spawn(move || {
                let mut acked = Vec::new();
                for i in 0.. {
                    let v = w * 1_000_000 + i;
                    match tx.send(v) {
                        Ok(()) => acked.push(v),
                        Err(e) => {
                            assert_eq!(e.into_inner(), v, "another value came back");
                            return (acked, v, tx.poison_reason());
                        }
                    }
                }
                unreachable!()
            })
        })
        .collect()
}

/// Joins the writers and checks that no value was lost: every acknowledged
/// value was taken (`got`), every taken value was acknowledged or handed back,
/// and each writer's channel says its connection was lost.
pub fn account_for_every_value(writers: Vec<JoinHandle<WriterEnd>>, got: &HashSet<u64>) {
    let mut accounted = HashSet::new();
    for h in writers {
        let (acked, back, why) = h.join().unwrap();
        for v in acked {
            assert!(got.contains(&v), "{v} was acknowledged and never taken");
            accounted.insert(v);
        }
        assert!(
            accounted.insert(back),
            "{back} both acknowledged and handed back"
        );
        let why = why.expect("a reason");
        assert!(why.contains("lost"), "{why}");
    }
    for v in got {
        assert!(
            accounted.contains(v),
            "{v} was taken and neither acknowledged nor handed back"
        );
    }
}
