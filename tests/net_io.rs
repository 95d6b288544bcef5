//! Sockets from processes (issue 14, I1): operations park the process, not its
//! worker; the poller wakes it; timeouts, alt guards, plain threads, shutdown.
//! Loopback only, ports chosen by the OS. No timing is asserted.
#![cfg(feature = "net")]

use hoare::net::{TcpListener, TcpStream, UdpSocket};
use hoare::Runtime;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::time::Duration;

fn rt(workers: usize) -> Runtime {
    Runtime::builder().workers(workers).build()
}

/// An echo server with one process per connection: each connection's request
/// is echoed, many connections at once on few workers (far more connections
/// than workers: every reader parks its process).
fn echo_many(workers: usize, conns: usize) {
    rt(workers).run(move || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = hoare::spawn(move || {
            let mut hs = Vec::new();
            for _ in 0..conns {
                let (s, _) = l.accept().unwrap();
                hs.push(hoare::spawn(move || {
                    let mut s = s;
                    let mut buf = [0u8; 64];
                    loop {
                        let n = s.read(&mut buf).unwrap();
                        if n == 0 {
                            return;
                        }
                        s.write_all(&buf[..n]).unwrap();
                    }
                }));
            }
            for h in hs {
                h.join().unwrap();
            }
        });
        // Every client connects first, so all connections are open at once.
        let clients: Vec<TcpStream> = (0..conns)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        let hs: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, mut c)| {
                hoare::spawn(move || {
                    for round in 0..5u32 {
                        let msg = format!("{i}:{round};");
                        c.write_all(msg.as_bytes()).unwrap();
                        let mut back = vec![0; msg.len()];
                        c.read_exact(&mut back).unwrap();
                        assert_eq!(back, msg.as_bytes());
                    }
                    c.shutdown(Shutdown::Write).unwrap();
                    let mut rest = Vec::new();
                    c.read_to_end(&mut rest).unwrap();
                    assert!(rest.is_empty());
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        server.join().unwrap();
    });
}

#[test]
fn echo_many_connections_one_worker() {
    echo_many(1, 300);
}

#[test]
fn echo_many_connections_two_workers() {
    echo_many(2, 300);
}

/// A reader parked on its socket gets its data while the only worker is kept
/// busy by a process that only yields: the busy worker polls at its periodic
/// look.
#[test]
fn busy_worker_still_notices_readiness() {
    rt(1).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let spinner = hoare::spawn(move || {
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                hoare::yield_now();
            }
        });
        // The writer is a plain thread, so nothing on the worker wakes the reader.
        let writer = std::thread::spawn(move || {
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            std::thread::sleep(Duration::from_millis(20));
            c.write_all(b"ready").unwrap();
            c
        });
        let (mut s, _) = l.accept().unwrap();
        let mut buf = [0; 5];
        s.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ready");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.join().unwrap();
        drop(writer.join().unwrap());
    });
}

#[test]
fn read_timeout_and_accept_timeout() {
    rt(2).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let e = l.accept_timeout(Duration::from_millis(10)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut, "{e}");
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        assert_eq!(s.read_timeout().unwrap(), Some(Duration::from_millis(10)));
        let mut buf = [0; 4];
        let e = s.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains("read timed out"), "{e}");
        // The socket still works after a timeout.
        (&c).write_all(b"late").unwrap();
        (&s).read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"late");
        assert_eq!(
            s.set_read_timeout(Some(Duration::ZERO)).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    });
}

#[test]
fn connect_refused_is_an_error() {
    rt(1).run(|| {
        // A port that was just free: bind, read it, close.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let e = TcpStream::connect(addr).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
    });
}

/// Plain OS threads use the same types (they block the thread), against a
/// process on the other side.
#[test]
fn plain_threads_and_processes_talk() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut buf = [0; 3];
        s.read_exact(&mut buf).unwrap();
        s.write_all(&buf).unwrap();
        let e = l.accept_timeout(Duration::from_millis(5)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
    });
    rt(1).run(move || {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"abc").unwrap();
        let mut buf = [0; 3];
        c.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"abc");
    });
    t.join().unwrap();
}

/// One process serves a channel and a socket together: the alt guard fires for
/// whichever is ready.
#[test]
fn alt_over_a_socket_and_a_channel() {
    rt(2).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let (tx, rx) = hoare::one2one::<u32>();
        let client = hoare::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            for i in 0..20u8 {
                tx.send(u32::from(i)).unwrap();
                c.write_all(&[i]).unwrap();
            }
            (tx, c)
        });
        let (s, _) = l.accept().unwrap();
        let (mut from_chan, mut from_sock) = (Vec::new(), Vec::new());
        let mut buf = [0; 64];
        while from_chan.len() < 20 || from_sock.len() < 20 {
            hoare::alt! {
                recv(rx) if from_chan.len() < 20 -> v => from_chan.push(v.unwrap() as u8),
                recv(s.readable().unwrap()) => match s.try_read(&mut buf) {
                    Ok(n) => from_sock.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{e}"),
                },
            }
        }
        let want: Vec<u8> = (0..20).collect();
        assert_eq!(from_chan, want);
        assert_eq!(from_sock, want);
        drop(client.join().unwrap());
    });
}

/// The accept guard: a listener in an alt with a timeout.
#[test]
fn alt_accept_guard_and_timeout() {
    rt(1).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let timed_out = hoare::alt! {
            recv(l.readable().unwrap()) => false,
            after(Duration::from_millis(5)) => true,
        };
        assert!(timed_out);
        let _c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        loop {
            let got = hoare::alt! {
                recv(l.readable().unwrap()) => l.try_accept().ok(),
            };
            if got.is_some() {
                break;
            }
        }
    });
}

/// One `try_accept` per firing of the guard accepts every pending connection:
/// a successful operation puts the token back while the socket may still be
/// readable (the second connection's edge came before the first accept).
/// Before `Readiness::rearm` the alt waited for an edge that had already come.
#[test]
fn one_accept_per_guard_firing_takes_every_pending_connection() {
    rt(1).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        l.readable().unwrap();
        let cs: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let mut accepted = 0;
        while accepted < cs.len() {
            let got = hoare::alt! {
                recv(l.readable().unwrap()) => l.try_accept().is_ok(),
            };
            accepted += usize::from(got);
        }
    });
}

#[test]
fn udp_round_trips() {
    rt(2).run(|| {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let h = hoare::spawn(move || {
            let mut buf = [0; 32];
            for _ in 0..100 {
                let (n, from) = b.recv_from(&mut buf).unwrap();
                assert_eq!(from, a_addr);
                b.send_to(&buf[..n], from).unwrap();
            }
        });
        let mut buf = [0; 32];
        for i in 0..100u32 {
            a.send_to(&i.to_le_bytes(), b_addr).unwrap();
            let (n, _) = a.recv_from(&mut buf).unwrap();
            assert_eq!(&buf[..n], i.to_le_bytes());
        }
        h.join().unwrap();
        a.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        assert_eq!(a.recv(&mut buf).unwrap_err().kind(), ErrorKind::TimedOut);
    });
}

/// Processes parked on sockets when the root returns are cancelled and unwound;
/// their sockets deregister and close; nothing hangs.
#[test]
fn shutdown_cancels_processes_parked_on_sockets() {
    rt(2).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let c = TcpStream::connect(addr).unwrap();
        let (s, _) = l.accept().unwrap();
        drop(hoare::spawn(move || {
            let mut buf = [0; 1];
            let _ = s.read(&mut buf);
        }));
        drop(hoare::spawn(move || {
            let _ = l.accept();
        }));
        hoare::sleep_for(Duration::from_millis(5));
        drop(c);
    });
}

/// Many readers on one socket (through clones) and writers on another: data
/// arrives intact in total.
#[test]
fn cloned_streams_split_reading_and_writing() {
    rt(2).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        let c2 = c.try_clone().unwrap();
        let writer = hoare::spawn(move || {
            let mut c2 = c2;
            for i in 0..10_000u32 {
                c2.write_all(&i.to_le_bytes()).unwrap();
            }
            c2.shutdown(Shutdown::Write).unwrap();
        });
        let reader = hoare::spawn(move || {
            let mut s = s;
            let mut all = Vec::new();
            s.read_to_end(&mut all).unwrap();
            all
        });
        let all = reader.join().unwrap();
        writer.join().unwrap();
        assert_eq!(all.len(), 40_000);
        for (i, ch) in all.chunks(4).enumerate() {
            assert_eq!(u32::from_le_bytes(ch.try_into().unwrap()), i as u32);
        }
        drop(c);
    });
}

/// Spins (never yielding its worker) until `flag` is set or `limit` passes.
fn spin_until(flag: &std::sync::atomic::AtomicBool, limit: Duration) -> bool {
    let t = std::time::Instant::now();
    while !flag.load(std::sync::atomic::Ordering::Acquire) {
        if t.elapsed() > limit {
            return false;
        }
        std::hint::spin_loop();
    }
    true
}

/// A timer armed by a hand-off on a worker that its poller woke (no notify
/// wakes anyone then), which then computes without yielding, must fire on time
/// although the other worker sleeps deeply until a later deadline (2 s): arming
/// a timer earlier than every sleeper's published deadline wakes one (issue
/// 16), which then watches the busy worker and fires it. The 500 ms bound is 50
/// times the timer and a quarter of the sleeper's deadline: only a timer left to
/// that deadline (or to the computing worker's 3 s) misses it. (On main before
/// the fix: fired after 1.8 s, the sleeper's deadline less the 200 ms before.)
#[test]
fn timer_armed_after_a_poller_wake_fires_on_time() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let late = rt(2).run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        // Writes one byte once every worker has long been asleep.
        let writer = std::thread::spawn(move || {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            s.write_all(b"x").unwrap();
            s
        });
        let (mut s, _) = l.accept().unwrap();
        // Gives a sleeping worker a deadline 2 s away.
        let far = hoare::spawn(|| hoare::sleep_for(Duration::from_secs(2)));
        let done = Arc::new(AtomicBool::new(false));
        let d2 = done.clone();
        let (go_tx, go_rx) = hoare::one2one::<()>();
        let (armed_tx, armed_rx) = hoare::one2one::<()>();
        let child = hoare::spawn(move || {
            go_rx.recv().unwrap();
            armed_tx.send(()).unwrap();
            let t = std::time::Instant::now();
            hoare::sleep_for(Duration::from_millis(10));
            d2.store(true, Ordering::Release);
            t.elapsed()
        });
        // Parks on the socket: both workers go to sleep, one in the poller,
        // which then wakes this process into its own next slot.
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
        // Hand-offs only from here: the child arms its timer on this worker,
        // which then computes.
        go_tx.send(()).unwrap();
        armed_rx.recv().unwrap();
        spin_until(&done, Duration::from_secs(3));
        let slept = child.join().unwrap();
        far.join().unwrap();
        drop(writer.join().unwrap());
        slept
    });
    assert!(
        late < Duration::from_millis(500),
        "a 10 ms timer armed after a poller wake fired after {late:?}"
    );
}
