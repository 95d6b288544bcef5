//! Request–reply: clients call a pool of servers through a client/server bundle,
//! and, the manual way, by sending a reply channel with each request.
//!
//! `cargo run --release --example request_reply -- --workers 2 --clients 100 --calls 1000`
//!
//! The last line is machine-readable:
//! `bench=request_reply workers=N ns_per_call=X`.

use hoare::{any2one, one2one, request_reply, Sender};
use std::time::Instant;

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers = arg(&args, "--workers", 2) as usize;
    let clients = arg(&args, "--clients", 100);
    let calls = arg(&args, "--calls", 1000);

    let rt = hoare::Runtime::builder()
        .workers(workers)
        .build()
        .expect("runtime");
    let ns = rt.run(move || {
        // The manual idiom: each request carries the end to reply on.
        let (req_tx, req_rx) = any2one::<(u64, Sender<u64>)>();
        let server = hoare::spawn(move || {
            for (x, reply) in &req_rx {
                let _ = reply.send(x * 2);
            }
        });
        let (tx, rx) = one2one();
        req_tx.send((21, tx)).unwrap();
        println!("manual reply channel: 21 * 2 = {}", rx.recv().unwrap());
        drop(req_tx);
        server.join().unwrap();

        // The bundle: a pool of 4 servers behind one ServerEnd.
        let (client, server) = request_reply::<u64, u64>();
        let servers: Vec<_> = (0..4)
            .map(|_| {
                let s = server.clone();
                hoare::spawn(move || s.serve(|x| x * 2))
            })
            .collect();
        drop(server);
        let t0 = Instant::now();
        let hs: Vec<_> = (0..clients)
            .map(|k| {
                let c = client.clone();
                hoare::spawn(move || {
                    (0..calls)
                        .map(|i| c.call(k * calls + i).expect("server gone"))
                        .sum::<u64>()
                })
            })
            .collect();
        drop(client); // the servers stop when the last client is gone
        let sum: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        let elapsed = t0.elapsed();
        let served: u64 = servers.into_iter().map(|s| s.join().unwrap()).sum();
        assert_eq!(sum, (0..clients * calls).map(|x| x * 2).sum::<u64>());
        println!("{clients} clients x {calls} calls, {served} served by 4 servers in {elapsed:?}");
        elapsed.as_nanos() as f64 / (clients * calls) as f64
    });
    println!("bench=request_reply workers={workers} ns_per_call={ns:.1}");
}
