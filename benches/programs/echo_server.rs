//! An echo server with one process per connection (issue 14): each connection's
//! process reads what comes (up to 1 KiB at a time) and writes it back, until
//! the client closes. The Go twin is `benches/go/cmd/echoserver` (a goroutine
//! per connection); `benches/echo.sh` runs both against `echo_client`.
//!
//! `cargo run --release --example echo_server -- --workers 2 --port 0`
//!
//! Prints `listening ADDR` once bound, then serves until killed.

#[path = "../../examples/common/mod.rs"]
mod common;

use hoare::net::TcpListener;
use std::io::Write;

fn main() {
    let flags = common::Flags::parse(&["workers", "port"], &[]);
    let port: u16 = flags.get("port", 0);
    common::runtime(flags.workers()).run(move || {
        let l = TcpListener::bind(("127.0.0.1", port)).expect("bind");
        println!("listening {}", l.local_addr().unwrap());
        loop {
            let (mut s, _) = match l.accept() {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("echo_server: accept: {e}");
                    continue;
                }
            };
            // Detached: the process ends when its client closes.
            drop(hoare::spawn(move || {
                let mut buf = [0u8; 1024];
                loop {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if s.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    }
                }
            }));
        }
    });
}
