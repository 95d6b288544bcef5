//! Network channels between two programs on loopback (issue 14 N1 figures).
//!
//! `--role server` opens a node, publishes `c0`…`c{chans-1}` (u64 values, one
//! reading process each), prints `listening ADDR` and serves until killed.
//! `--role client --addr ADDR` connects a writing end to each of the `--chans`
//! channels (all multiplexed over one connection) and sends `--values` values in
//! total, spread evenly over one writing process per channel. Every `send`
//! returns once the remote reader has taken the value (end-to-end
//! acknowledgement), so with one channel the time per value is the round trip
//! of a network rendezvous; with many, the rendezvous overlap.
//!
//! `benches/net.sh` runs it with 1 and 100 channels, and the Go twin
//! (`benches/go/cmd/netpingpong`: the same frames and acknowledgement over one
//! TCP connection between two Go programs).
//!
//! Last line: `bench=net_channels chans=K values=N ns_per_value=X values_per_s=Y`.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::net::Node;
use std::time::Instant;

const SECRET: &str = "bench-cookie";

fn main() {
    let flags = common::Flags::parse(&["workers", "role", "addr", "chans", "values"], &[]);
    let role: String = flags.get("role", "client".to_owned());
    let addr: String = flags.get("addr", String::new());
    let chans: usize = flags.get("chans", 1);
    let values: u64 = flags.get("values", 100_000);
    flags.require(chans >= 1, "--chans must be at least 1");
    common::runtime(flags.workers()).run(move || {
        if role == "server" {
            let node = Node::bind("127.0.0.1:0", SECRET).expect("bind");
            let readers: Vec<_> = (0..chans)
                .map(|k| {
                    let rx = node.publish::<u64>(&format!("c{k}")).expect("publish");
                    hoare::spawn(move || rx.iter().count())
                })
                .collect();
            println!("listening {}", node.local_addr());
            for r in readers {
                r.join().unwrap();
            }
            return;
        }
        let node = Node::bind("127.0.0.1:0", SECRET).expect("bind");
        let txs: Vec<_> = (0..chans)
            .map(|k| {
                node.connect::<u64>(&format!("{addr}/c{k}"))
                    .expect("connect")
            })
            .collect();
        // One value each first, so connection and proxies are warm.
        for tx in &txs {
            tx.send(0).unwrap();
        }
        let per = values / chans as u64;
        let start = Instant::now();
        let hs: Vec<_> = txs
            .into_iter()
            .map(|tx| {
                hoare::spawn(move || {
                    for i in 0..per {
                        tx.send(i).unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        let n = per * chans as u64;
        println!(
            "bench=net_channels chans={chans} values={n} ns_per_value={:.0} values_per_s={:.0}",
            secs * 1e9 / n as f64,
            n as f64 / secs
        );
    });
}
