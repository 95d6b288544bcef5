//! Idle CPU: a runtime whose processes are all blocked (one in `accept` on a
//! socket, so the runtime has its I/O poller, with `--io`; one on a channel;
//! the root in a sleep) should use no CPU. Measures the OS process's CPU time
//! (`getrusage`) over `--secs` seconds of such idleness.
//!
//! `cargo run --release --example idle -- --workers 2 --secs 2 --io`
//!
//! Last line: `bench=idle workers=N io=B secs=S cpu_ms=X cpu_percent=Y`.

#[path = "../../examples/common/mod.rs"]
mod common;

use std::time::Duration;

fn cpu() -> Duration {
    // SAFETY: `getrusage` fills the struct we pass.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(r.ru_utime) + tv(r.ru_stime)
}

fn main() {
    let flags = common::Flags::parse(&["workers", "secs"], &["io"]);
    let workers = flags.workers();
    let secs: f64 = flags.get("secs", 2.0);
    let io = flags.bool("io", true);
    let used = common::runtime(workers).run(move || {
        let (tx, rx) = hoare::one2one::<()>();
        let blocked = hoare::spawn(move || rx.recv().is_err());
        #[cfg(feature = "net")]
        let listener = io.then(|| {
            let l = hoare::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = l.local_addr().unwrap();
            let h = hoare::spawn(move || l.accept().map(|_| ()));
            (h, addr)
        });
        // Let everything block, then measure.
        hoare::sleep_for(Duration::from_millis(100));
        let before = cpu();
        hoare::sleep_for(Duration::from_secs_f64(secs));
        let used = cpu() - before;
        drop(tx);
        assert!(blocked.join().unwrap());
        #[cfg(feature = "net")]
        if let Some((h, addr)) = listener {
            drop(std::net::TcpStream::connect(addr).unwrap());
            h.join().unwrap().unwrap();
        }
        used
    });
    println!(
        "bench=idle workers={workers} io={io} secs={secs} cpu_ms={:.3} cpu_percent={:.4}",
        used.as_secs_f64() * 1e3,
        used.as_secs_f64() / secs * 100.0
    );
}
