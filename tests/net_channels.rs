//! Network channels between two nodes of one program (issue 14 N1): the
//! properties that need no second program. Loopback only, ports chosen by the
//! OS; no timing is asserted.
#![cfg(feature = "net")]

mod common_net;

use hoare::net::Node;

/// A large value (4 MiB: 256 fragments) and small values on another channel of
/// the same connection: all arrive intact, and the small ones are not held up
/// by the large one's rendezvous (its reader takes it only after the 200 small
/// values). The interleaving of fragments on the wire is tested at the frame
/// level below (`a_small_reply_overtakes_a_large_one_on_the_wire`,
/// `a_small_value_is_delivered_while_a_large_one_is_incomplete`).
#[test]
fn a_large_value_does_not_hold_up_small_ones() {
    hoare::run(|| {
        let server = Node::bind("127.0.0.1:0", b"s").unwrap();
        let big_rx = server.publish::<Vec<u8>>("big").unwrap();
        let small_rx = server.publish::<u32>("small").unwrap();
        let client = Node::bind("127.0.0.1:0", b"s").unwrap();
        let base = server.local_addr().to_string();
        let big_tx = client.connect::<Vec<u8>>(&format!("{base}/big")).unwrap();
        let small_tx = client.connect::<u32>(&format!("{base}/small")).unwrap();
        let big: Vec<u8> = (0..4 << 20).map(|i: u32| (i % 251) as u8).collect();
        let expect = big.clone();
        let b = hoare::spawn(move || big_tx.send(big).unwrap());
        let s = hoare::spawn(move || {
            for i in 0..200 {
                small_tx.send(i).unwrap();
            }
        });
        // Both channels share one connection; take the small values first.
        for i in 0..200 {
            assert_eq!(small_rx.recv().unwrap(), i);
        }
        s.join().unwrap();
        assert_eq!(big_rx.recv().unwrap(), expect);
        b.join().unwrap();
    });
}

/// An extended rendezvous on the reading side: the remote `send` returns only
/// after the reader's closure has returned.
#[test]
fn send_returns_after_the_remote_readers_closure() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    hoare::run(|| {
        let server = Node::bind("127.0.0.1:0", b"s").unwrap();
        let rx = server.publish::<u32>("in").unwrap();
        let client = Node::bind("127.0.0.1:0", b"s").unwrap();
        let tx = client
            .connect::<u32>(&format!("{}/in", server.local_addr()))
            .unwrap();
        let closure_done = Arc::new(AtomicBool::new(false));
        let seen = closure_done.clone();
        let w = hoare::spawn(move || {
            tx.send(1).unwrap();
            // The reader's closure had finished when this send returned.
            assert!(seen.load(Ordering::SeqCst));
        });
        rx.recv_with(|v| {
            assert_eq!(v, 1);
            hoare::sleep_for(std::time::Duration::from_millis(20));
            closure_done.store(true, Ordering::SeqCst);
        })
        .unwrap();
        w.join().unwrap();
    });
}

/// A value over the node's limit is refused on the writing side before
/// anything is written: its `send` fails and hands it back, the error's reason
/// (the channel's `poison_reason`) names the limit, the reader's channel is
/// poisoned with it, and the connection and other channels go on. Fails on the
/// proxy that took the value and dropped it (the first `send` returned `Ok`).
#[test]
fn an_oversized_value_is_handed_back_and_poisons_its_channel_only() {
    hoare::run(|| {
        let server = Node::bind_with("127.0.0.1:0", b"s", 1024).unwrap();
        let rx = server.publish::<Vec<u8>>("in").unwrap();
        let other = server.publish::<u32>("other").unwrap();
        let client = Node::bind_with("127.0.0.1:0", b"s", 1024).unwrap();
        let base = server.local_addr().to_string();
        let tx = client.connect::<Vec<u8>>(&format!("{base}/in")).unwrap();
        let tx2 = client.connect::<u32>(&format!("{base}/other")).unwrap();
        let h = hoare::spawn(move || {
            let back = tx.send(vec![7; 4096]).unwrap_err().into_inner();
            assert_eq!(back, vec![7; 4096]);
            let why = tx.poison_reason().expect("a reason");
            assert!(why.contains("limit of 1024 bytes"), "{why}");
            assert!(tx.send(vec![1]).is_err());
        });
        assert!(rx.recv().is_err());
        let why = rx.poison_reason().expect("a reason");
        assert!(why.contains("limit of 1024 bytes"), "{why}");
        h.join().unwrap();
        let h2 = hoare::spawn(move || tx2.send(5).unwrap());
        assert_eq!(other.recv().unwrap(), 5);
        h2.join().unwrap();
    });
}

/// The connection is lost while values are in flight (the reading node is
/// dropped while each of 8 network channels has a value at its reader proxy,
/// which nobody takes): every send either returned `Ok` after the reader took
/// the value, or failed and handed its own value back with a reason that says
/// the connection was lost. Counted: every acknowledged value was received,
/// once, and every value received was acknowledged or is one handed back
/// (received, but its acknowledgement went with the connection: at most one
/// per channel). Fails on the proxy that returned `Ok` without an
/// acknowledgement when the connection went (values acknowledged and never
/// received).
#[test]
fn a_lost_connection_hands_back_every_unacknowledged_value() {
    use std::collections::HashSet;
    hoare::run(|| {
        let server = Node::bind("127.0.0.1:0", b"s").unwrap();
        let rx = server.publish::<u64>("in").unwrap();
        let client = Node::bind("127.0.0.1:0", b"s").unwrap();
        let url = format!("{}/in", server.local_addr());
        let txs = (0..8)
            .map(|_| client.connect::<u64>(&url).unwrap())
            .collect();
        let writers = common_net::writers_until_failure(txs);
        let mut got = HashSet::new();
        for _ in 0..500 {
            assert!(got.insert(rx.recv().unwrap()), "a value arrived twice");
        }
        drop(server);
        common_net::account_for_every_value(writers, &got);
    });
}

/// Poison from the reading side crosses with its reason: the writer's failed
/// send hands its value back and `poison_reason` quotes the reader's.
#[test]
fn a_remote_readers_poison_reason_reaches_the_writer() {
    hoare::run(|| {
        let server = Node::bind("127.0.0.1:0", b"s").unwrap();
        let rx = server.publish::<u32>("in").unwrap();
        let client = Node::bind("127.0.0.1:0", b"s").unwrap();
        let tx = client
            .connect::<u32>(&format!("{}/in", server.local_addr()))
            .unwrap();
        let w = hoare::spawn(move || {
            tx.send(1).unwrap();
            // Fails once the reader's poison arrived (this value is either
            // refused by the reader's proxy or never taken).
            let mut v = 2;
            loop {
                match tx.send(v) {
                    Ok(()) => v += 1,
                    Err(e) => {
                        assert_eq!(e.into_inner(), v);
                        return tx.poison_reason();
                    }
                }
            }
        });
        assert_eq!(rx.recv().unwrap(), 1);
        rx.poison_with("the reader has had enough");
        let why = w.join().unwrap().expect("a reason");
        assert!(why.contains("the reader has had enough"), "{why}");
        assert!(why.contains("remote reader"), "{why}");
    });
}

/// A channel name longer than the protocol takes is an error, not a panic.
#[test]
fn an_overlong_name_is_an_error() {
    hoare::run(|| {
        let server = Node::bind("127.0.0.1:0", b"s").unwrap();
        let long = "x".repeat(100_000);
        assert!(server.publish::<u32>(&long).is_err());
        let client = Node::bind("127.0.0.1:0", b"s").unwrap();
        let e = client
            .connect::<u32>(&format!("{}/{long}", server.local_addr()))
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    });
}

/// A peer that opens many channels and sends each a partial value (fragments
/// without the last) cannot make the node hold more than its per-connection
/// limit: past it the node cuts the peer off, and the channels of the
/// connection are poisoned saying why. Spoken at the frame level from a raw
/// socket. Fails without the per-connection bound: the node keeps the
/// connection (the read below times out instead of seeing its end).
#[test]
fn a_peer_holding_too_much_unfinished_data_is_cut_off() {
    use hoare::net::frame::{Decoder, Frame, Kind};
    use hoare::net::{authenticate, TcpStream};
    use std::io::Write;
    hoare::run(|| {
        let server = Node::builder()
            .max_message(64 << 10)
            .max_connection_memory(1 << 20)
            .bind("127.0.0.1:0", b"s")
            .unwrap();
        let rx = server.publish::<Vec<u8>>("in").unwrap();
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        authenticate(&mut s, b"s").unwrap();
        // A hang guard only: the node must end the connection long before.
        s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        const CHANS: u32 = 100;
        for i in 1..=CHANS {
            let mut payload = i.to_le_bytes().to_vec();
            payload.push(1); // a writing end
            payload.extend_from_slice(b"in");
            let f = Frame {
                chan: 0,
                kind: Kind::Open,
                flags: 0,
                payload,
            };
            s.write_all(&f.encode()).unwrap();
        }
        let mut ids = Vec::new();
        let mut d = Decoder::new();
        let mut buf = vec![0u8; 4096];
        while ids.len() < CHANS as usize {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "the node closed before answering");
            d.feed(&buf[..n]);
            while let Some(f) = d.next_frame().unwrap() {
                assert_eq!(f.kind, Kind::Opened);
                ids.push(u32::from_le_bytes(f.payload[..4].try_into().unwrap()));
            }
        }
        // 16 KiB of an unfinished value on each: 1.6 MiB in all.
        let mut sent = 0usize;
        for id in ids {
            let f = Frame {
                chan: id,
                kind: Kind::Data,
                flags: 0,
                payload: vec![0; 16 << 10],
            };
            if s.write_all(&f.encode()).is_err() {
                break; // cut off already
            }
            sent += 16 << 10;
        }
        assert!(sent > 1 << 20, "the node cut the peer off too early");
        let end = loop {
            match s.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(_) => continue,
                Err(e) => break Err(e),
            }
        };
        assert!(
            end.as_ref()
                .map_or_else(|e| e.kind() != std::io::ErrorKind::TimedOut, |_| true),
            "the node kept the connection: {end:?}"
        );
        assert!(rx.recv().is_err());
        let why = rx.poison_reason().expect("a reason");
        assert!(
            why.contains("per-connection limit of 1048576 bytes"),
            "{why}"
        );
        let lost = server.lost_connections();
        assert_eq!(lost.len(), 1);
        assert!(lost[0].1.contains("per-connection limit"), "{lost:?}");
    });
}

/// Asks the name service at `ns` for `name` until it no longer knows it (the
/// service hears of a node's end asynchronously). A hang guard of about 10 s,
/// not a timing assertion: `false` if the name never went.
fn until_unregistered(client: &Node, ns: &str, name: &str) -> bool {
    for _ in 0..1000 {
        match client.resolve(ns, name) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
            Ok(_) => hoare::sleep_for(std::time::Duration::from_millis(10)),
            Err(e) => panic!("{e}"),
        }
    }
    false
}

/// A name goes from the name service with the node that registered it (here
/// dropped: its connection to the service ends, as when the program dies);
/// other nodes' names stay, and a name registered again by another node is not
/// removed when its first owner goes. Fails with registrations that live as
/// long as the service (the name still resolves after its node went).
#[test]
fn a_name_goes_with_its_node() {
    use hoare::net::serve_names;
    hoare::run(|| {
        let ns = Node::bind("127.0.0.1:0", b"s").unwrap();
        serve_names(&ns).unwrap();
        let ns_addr = ns.local_addr().to_string();
        let server = Node::bind("127.0.0.1:0", b"s").unwrap();
        let _rx = server.publish::<u32>("results").unwrap();
        server.register(&ns_addr, "results").unwrap();
        let other = Node::bind("127.0.0.1:0", b"s").unwrap();
        let _rx2 = other.publish::<u32>("stays").unwrap();
        other.register(&ns_addr, "stays").unwrap();
        let client = Node::bind("127.0.0.1:0", b"s").unwrap();
        assert_eq!(
            client.resolve(&ns_addr, "results").unwrap(),
            format!("{}/results", server.local_addr())
        );
        drop(server);
        assert!(until_unregistered(&client, &ns_addr, "results"));
        assert!(client.resolve(&ns_addr, "stays").is_ok());

        // "x" registered by `a`, then again by `b`: `a`'s end leaves it to `b`.
        let a = Node::bind("127.0.0.1:0", b"s").unwrap();
        a.register(&ns_addr, "x").unwrap();
        a.register(&ns_addr, "a-marker").unwrap();
        let b = Node::bind("127.0.0.1:0", b"s").unwrap();
        b.register(&ns_addr, "x").unwrap();
        drop(a);
        assert!(until_unregistered(&client, &ns_addr, "a-marker"));
        assert_eq!(
            client.resolve(&ns_addr, "x").unwrap(),
            format!("{}/x", b.local_addr())
        );
    });
}

/// Reads frames from `s` into `d` until one is there.
fn next_frame(
    s: &mut hoare::net::TcpStream,
    d: &mut hoare::net::frame::Decoder,
) -> hoare::net::frame::Frame {
    use std::io::Read;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        if let Some(f) = d.next_frame().unwrap() {
            return f;
        }
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "the node closed the connection");
        d.feed(&buf[..n]);
    }
}

fn frame(chan: u32, kind: hoare::net::frame::Kind, flags: u8, payload: Vec<u8>) -> Vec<u8> {
    hoare::net::frame::Frame {
        chan,
        kind,
        flags,
        payload,
    }
    .encode()
}

/// Fragment interleaving on the node's *sending* side, at the frame level: a
/// raw peer opens two request/reply pairs on one connection; the node replies
/// 32 MiB on the first (2,048 fragments) and, once that is on the wire, a small
/// value on the second. The small value's last frame reaches the peer before
/// the large value's last fragment. (The peer stops reading while the small
/// reply is queued, so the large one cannot finish meanwhile: the socket
/// buffers hold far less than 32 MiB.) Fails with a writer that holds the
/// connection for all the fragments of its value.
#[test]
fn a_small_reply_overtakes_a_large_one_on_the_wire() {
    use hoare::net::frame::{Decoder, Kind, LAST};
    use hoare::net::{authenticate, TcpStream};
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    const BIG: usize = 32 << 20;
    hoare::run(|| {
        let server = Node::builder()
            .max_message(64 << 20)
            .bind("127.0.0.1:0", b"s")
            .unwrap();
        let acc = server.accept::<u8, Vec<u8>>("acc").unwrap();
        let queued = Arc::new(AtomicBool::new(false));
        let q2 = queued.clone();
        let srv = hoare::spawn(move || {
            let (req_a, rep_a) = acc.recv().unwrap();
            let (req_b, rep_b) = acc.recv().unwrap();
            let big = hoare::spawn(move || {
                req_a.recv().unwrap();
                rep_a.send(vec![7u8; BIG]).unwrap();
            });
            req_b.recv().unwrap();
            q2.store(true, Ordering::SeqCst);
            rep_b.send(vec![1, 2, 3]).unwrap();
            big.join().unwrap();
        });
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        authenticate(&mut s, b"s").unwrap();
        // Two pairs: our writers 1 and 2, our readers 101 and 102.
        let mut ids = Vec::new();
        let mut d = Decoder::new();
        for (w, r) in [(1u32, 101u32), (2, 102)] {
            let mut p = w.to_le_bytes().to_vec();
            p.push(2); // a pair
            p.extend_from_slice(&r.to_le_bytes());
            p.extend_from_slice(b"acc");
            s.write_all(&frame(0, Kind::Open, 0, p)).unwrap();
            let f = next_frame(&mut s, &mut d);
            assert_eq!((f.kind, f.chan), (Kind::Opened, w));
            let at = |i: usize| u32::from_le_bytes(f.payload[i..i + 4].try_into().unwrap());
            ids.push((at(0), at(4))); // (its reader, its writer)
        }
        let [(reader_a, writer_a), (reader_b, writer_b)] = ids[..] else {
            unreachable!()
        };
        // The request on the first pair; wait for the first large fragment.
        s.write_all(&frame(reader_a, Kind::Data, LAST, vec![0]))
            .unwrap();
        let mut big_frags = 0usize;
        let f = loop {
            let f = next_frame(&mut s, &mut d);
            if f.kind != Kind::Ack {
                break f;
            }
            assert_eq!(f.chan, 1); // our request was taken
        };
        assert_eq!((f.kind, f.chan, f.flags & LAST), (Kind::Data, 101, 0));
        big_frags += 1;
        // Now the second request, and no reading until its reply is queued.
        s.write_all(&frame(reader_b, Kind::Data, LAST, vec![0]))
            .unwrap();
        while !queued.load(Ordering::SeqCst) {
            hoare::sleep_for(std::time::Duration::from_millis(1));
        }
        hoare::sleep_for(std::time::Duration::from_millis(20));
        let mut small_after = None;
        let mut big_len = f.payload.len();
        loop {
            let f = next_frame(&mut s, &mut d);
            if f.kind == Kind::Ack {
                assert_eq!(f.chan, 2); // our second request was taken
                continue;
            }
            assert_eq!(f.kind, Kind::Data);
            match f.chan {
                101 => {
                    big_frags += 1;
                    big_len += f.payload.len();
                    if f.flags & LAST != 0 {
                        s.write_all(&frame(writer_a, Kind::Ack, 0, vec![])).unwrap();
                        break;
                    }
                }
                102 => {
                    assert_eq!(f.flags & LAST, LAST);
                    assert_eq!(f.payload, vec![3, 1, 2, 3]); // postcard: length, bytes
                    small_after = Some(big_frags);
                    s.write_all(&frame(writer_b, Kind::Ack, 0, vec![])).unwrap();
                }
                c => panic!("a frame for channel {c}"),
            }
        }
        let small_after = small_after.expect("the small reply never came");
        assert!(
            small_after < big_frags,
            "the small reply waited for all {big_frags} fragments of the large one"
        );
        assert!(big_len > BIG); // the value and its length prefix
        srv.join().unwrap();
    });
}

/// Fragment interleaving on the node's *receiving* side, at the frame level:
/// a raw peer sends the first half of a large value on one channel, then a
/// small value on another: the small one is delivered while the large one is
/// incomplete, and the large one arrives intact once the peer sends the rest.
/// Fails with a node that waits for one value's last fragment before it
/// reassembles another channel's (the small `recv` would never return).
#[test]
fn a_small_value_is_delivered_while_a_large_one_is_incomplete() {
    use hoare::net::frame::{Decoder, Kind, FRAGMENT, LAST};
    use hoare::net::{authenticate, TcpStream};
    use std::io::Write;
    hoare::run(|| {
        let server = Node::bind("127.0.0.1:0", b"s").unwrap();
        let big_rx = server.publish::<Vec<u8>>("big").unwrap();
        let small_rx = server.publish::<u32>("small").unwrap();
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        authenticate(&mut s, b"s").unwrap();
        let mut d = Decoder::new();
        let mut ids = Vec::new();
        for (w, name) in [(1u32, &b"big"[..]), (2, &b"small"[..])] {
            let mut p = w.to_le_bytes().to_vec();
            p.push(1);
            p.extend_from_slice(name);
            s.write_all(&frame(0, Kind::Open, 0, p)).unwrap();
            let f = next_frame(&mut s, &mut d);
            assert_eq!((f.kind, f.chan), (Kind::Opened, w));
            ids.push(u32::from_le_bytes(f.payload[..4].try_into().unwrap()));
        }
        let big: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
        let bytes = postcard::to_stdvec(&big).unwrap();
        let chunks: Vec<&[u8]> = bytes.chunks(FRAGMENT).collect();
        let half = chunks.len() / 2;
        for c in &chunks[..half] {
            s.write_all(&frame(ids[0], Kind::Data, 0, c.to_vec()))
                .unwrap();
        }
        s.write_all(&frame(
            ids[1],
            Kind::Data,
            LAST,
            postcard::to_stdvec(&9u32).unwrap(),
        ))
        .unwrap();
        assert_eq!(small_rx.recv().unwrap(), 9);
        let f = next_frame(&mut s, &mut d);
        assert_eq!((f.kind, f.chan), (Kind::Ack, 2));
        for (i, c) in chunks[half..].iter().enumerate() {
            let last = half + i + 1 == chunks.len();
            let flags = if last { LAST } else { 0 };
            s.write_all(&frame(ids[0], Kind::Data, flags, c.to_vec()))
                .unwrap();
        }
        assert_eq!(big_rx.recv().unwrap(), big);
        let f = next_frame(&mut s, &mut d);
        assert_eq!((f.kind, f.chan), (Kind::Ack, 1));
    });
}
