//! The Rust end of the Rust/C++ network channel test (`cpp/tests/net_interop.cpp`,
//! ctest `net.rust_cpp`): a Rust program and a C++ program exchange strings and
//! bytes over network channels, both ways, on loopback.
//!
//! `cargo run --release --example net_peer -- SECRET`
//!
//! It binds a node on `127.0.0.1:0`, publishes `to_rust` (`String`) and
//! `bytes_to_rust` (`Vec<u8>`), and prints `net_peer: addr=HOST:PORT`. The first
//! string on `to_rust` is the address of the peer's node; it connects to that
//! node's `to_cpp` (`String`) and `bytes_to_cpp` (`Vec<u8>`), then answers every
//! later string with it upper-cased on `to_cpp` and every byte vector with it
//! reversed on `bytes_to_cpp`, until the peer poisons `to_rust` (and
//! `bytes_to_rust`). Then it poisons its writers (`to_cpp` last, once both
//! directions are done) and prints `net_peer: ok N strings, M byte vectors`.

use hoare::net::Node;
use std::io::Write;

fn main() {
    let secret = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "hoare-net-peer".into());
    let rt = hoare::Runtime::builder().workers(2).build();
    let (strings, bytes) = rt.run(move || {
        let node = Node::bind("127.0.0.1:0", secret.as_bytes()).expect("bind");
        let to_rust = node.publish::<String>("to_rust").expect("publish to_rust");
        let bytes_in = node
            .publish::<Vec<u8>>("bytes_to_rust")
            .expect("publish bytes_to_rust");
        println!("net_peer: addr={}", node.local_addr());
        std::io::stdout().flush().expect("stdout");

        let peer = to_rust.recv().expect("the peer's address");
        let to_cpp = node
            .connect::<String>(&format!("{peer}/to_cpp"))
            .expect("connect to_cpp");
        let bytes_out = node
            .connect::<Vec<u8>>(&format!("{peer}/bytes_to_cpp"))
            .expect("connect bytes_to_cpp");

        // Bytes on a process of their own, strings here: both directions of both
        // channel types at once.
        let b = hoare::spawn(move || {
            let mut n = 0u64;
            for mut v in bytes_in.iter() {
                v.reverse();
                if bytes_out.send(v).is_err() {
                    break;
                }
                n += 1;
            }
            bytes_out.poison();
            n
        });
        let mut n = 0u64;
        for s in to_rust.iter() {
            if to_cpp.send(s.to_uppercase()).is_err() {
                break;
            }
            n += 1;
        }
        // The last value on `to_cpp` is this poison, sent once the bytes process
        // has had its last acknowledgement: the peer drops its node (closing the
        // connection) only after it sees the poison. (A dropped node writes the
        // acknowledgements it owes first; this order also keeps a send from
        // failing on a peer that exits without dropping its node.)
        let m = b.join().expect("the bytes process");
        to_cpp.poison();
        (n, m)
    });
    println!("net_peer: ok {strings} strings, {bytes} byte vectors");
}
