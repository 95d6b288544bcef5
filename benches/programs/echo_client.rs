//! Load for an echo server (`echo_server` or its Go twin): opens `--conns`
//! connections (all held open at once), one process each; measures the
//! server's resident memory (from `/proc/PID/status`, `--server-pid`) before
//! and with every connection open and used once; then every connection sends a
//! `--size`-byte request and reads the echo back, in a loop, for `--secs`
//! seconds.
//!
//! `cargo run --release --example echo_client -- --addr 127.0.0.1:PORT --conns 10000 --secs 5 --server-pid PID`
//!
//! Last line: `bench=echo server=LABEL conns=N size=B rss_base_kb=X rss_conns_kb=Y
//! bytes_per_conn=Z requests=R reqs_per_s=Q errors=E`.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::net::TcpStream;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn rss_kb(pid: u32) -> i64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(-1)
}

fn main() {
    let flags = common::Flags::parse(
        &[
            "workers",
            "addr",
            "conns",
            "secs",
            "size",
            "server-pid",
            "label",
        ],
        &[],
    );
    let addr: String = flags.get("addr", "127.0.0.1:7000".to_owned());
    let conns: usize = flags.get("conns", 10_000);
    let secs: f64 = flags.get("secs", 5.0);
    let size: usize = flags.get("size", 64);
    let pid: u32 = flags.get("server-pid", 0);
    let label: String = flags.get("label", "?".to_owned());
    flags.require((1..=1024).contains(&size), "--size must be 1 to 1024");

    common::runtime(flags.workers()).run(move || {
        let base = rss_kb(pid);
        let addr: std::net::SocketAddr = addr.parse().expect("--addr must be IP:PORT");
        // Connect in batches of processes, so connects overlap.
        let mut streams = Vec::with_capacity(conns);
        for chunk in (0..conns).collect::<Vec<_>>().chunks(500) {
            let hs: Vec<_> = chunk
                .iter()
                .map(|_| hoare::spawn(move || TcpStream::connect(addr)))
                .collect();
            for h in hs {
                streams.push(h.join().unwrap().expect("connect"));
            }
        }
        // One round trip each, so every server process has run and holds its
        // buffers; then measure the server.
        let msg = vec![b'x'; size];
        let hs: Vec<_> = streams
            .into_iter()
            .map(|mut s| {
                let msg = msg.clone();
                hoare::spawn(move || {
                    s.set_nodelay(true).unwrap();
                    s.write_all(&msg).unwrap();
                    let mut back = vec![0; msg.len()];
                    s.read_exact(&mut back).unwrap();
                    s
                })
            })
            .collect();
        let streams: Vec<TcpStream> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        hoare::sleep_for(Duration::from_millis(200));
        let with = rss_kb(pid);

        let stop = Arc::new(AtomicBool::new(false));
        let start = Instant::now();
        let hs: Vec<_> = streams
            .into_iter()
            .map(|mut s| {
                let (msg, stop) = (msg.clone(), stop.clone());
                hoare::spawn(move || {
                    let mut back = vec![0; msg.len()];
                    let (mut n, mut errors) = (0u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        if s.write_all(&msg).is_err() || s.read_exact(&mut back).is_err() {
                            errors += 1;
                            break;
                        }
                        n += 1;
                    }
                    (n, errors)
                })
            })
            .collect();
        hoare::sleep_for(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        let (mut total, mut errors) = (0u64, 0u64);
        for h in hs {
            let (n, e) = h.join().unwrap();
            total += n;
            errors += e;
        }
        let elapsed = start.elapsed().as_secs_f64();
        println!(
            "bench=echo server={label} conns={conns} size={size} rss_base_kb={base} \
             rss_conns_kb={with} bytes_per_conn={} requests={total} reqs_per_s={:.0} errors={errors}",
            (with - base) * 1024 / conns as i64,
            total as f64 / elapsed
        );
    });
}
