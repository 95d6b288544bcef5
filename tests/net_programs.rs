//! Network channels between real OS processes on loopback (issue 14, N1).
//!
//! Each test starts this test binary again as child programs (`HOARE_NET_ROLE`
//! names the role a child plays, see `roles`); children print `addr ADDR` once
//! their node is up and report what they did on stdout. Ports are chosen by
//! the OS. No timing is asserted; a child still running after two minutes is
//! killed (a hang fails the test instead of blocking CI).
#![cfg(feature = "net")]

mod common_net;

use hoare::net::Node;
use hoare::Receiver;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

const SECRET: &str = "test-cookie";

/// A child program playing `role`, with `vars` in its environment.
struct Prog {
    child: Option<Child>,
    out: Option<BufReader<ChildStdout>>,
}

/// Runs `f`, which blocks its OS thread (reading a child's output, waiting for
/// it), on a thread process when called from a process: a process that blocks
/// its worker's thread would keep that worker from running the processes it
/// woke (the ones that carry this program's network traffic, say).
fn blocking<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    if hoare::in_process() {
        hoare::spawn_blocking(f).join().unwrap()
    } else {
        f()
    }
}

impl Prog {
    fn start(role: &str, vars: &[(&str, String)]) -> Prog {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.args(["--exact", "child_entry", "--nocapture", "--test-threads=1"]);
        c.env("HOARE_NET_ROLE", role);
        for (k, v) in vars {
            c.env(k, v);
        }
        c.stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = c.spawn().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let pid = child.id();
        // Watchdog: a hung child is killed.
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(120));
            // SAFETY: sending a signal to a pid; harmless if it exited.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        });
        Prog {
            child: Some(child),
            out: Some(out),
        }
    }

    /// The next line the child printed that starts with `key `, without it.
    fn expect(&mut self, key: &str) -> String {
        let mut out = self.out.take().unwrap();
        let key = key.to_owned();
        let (v, out) = blocking(move || {
            let mut line = String::new();
            loop {
                line.clear();
                if out.read_line(&mut line).unwrap() == 0 {
                    panic!("child ended before printing {key:?}");
                }
                if let Some(v) = line.trim_end().strip_prefix(&format!("{key} ")) {
                    return (v.to_owned(), out);
                }
            }
        });
        self.out = Some(out);
        v
    }

    fn wait_ok(mut self) {
        let mut child = self.child.take().unwrap();
        let st = blocking(move || child.wait().unwrap());
        assert!(st.success(), "child failed: {st}");
    }

    fn kill(&mut self) {
        let mut child = self.child.take().unwrap();
        let child = blocking(move || {
            child.kill().unwrap();
            child.wait().unwrap();
            child
        });
        self.child = Some(child);
    }
}

/// A test that fails leaves no child behind.
impl Drop for Prog {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn var(k: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| panic!("{k} not set"))
}

fn say(key: &str, v: impl std::fmt::Display) {
    let mut o = std::io::stdout().lock();
    // On a line of its own: the child's test harness has printed
    // "test child_entry ... " without a newline before it.
    writeln!(o, "\n{key} {v}").unwrap();
    o.flush().unwrap();
}

/// What the child programs do.
mod roles {
    use super::*;

    /// Publishes "in" and prints every value until poison, then the count.
    pub fn sink() {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let rx = node.publish::<u64>("in").unwrap();
        if let Ok(ns) = std::env::var("NAMES") {
            node.register(&ns, &var("NAME")).unwrap();
        }
        say("addr", node.local_addr());
        let mut n = 0u64;
        let mut sum = 0u64;
        for v in rx.iter() {
            n += 1;
            sum += v;
        }
        say("done", format!("{n} {sum}"));
    }

    /// Publishes "in", takes `COUNT` values, printing each inside its
    /// extended rendezvous (so before its writer can see it acknowledged),
    /// then stops taking values and waits to be killed.
    pub fn stalling_sink() {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let rx = node.publish::<u64>("in").unwrap();
        say("addr", node.local_addr());
        let count: u64 = var("COUNT").parse().unwrap();
        for _ in 0..count {
            rx.recv_with(|v| say("got", v)).unwrap();
        }
        say("stalled", "ok");
        loop {
            hoare::sleep_for(Duration::from_secs(1));
        }
    }

    /// Publishes "in", sends each value doubled to `NEXT` until poison.
    pub fn doubler() {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let rx = node.publish::<u64>("in").unwrap();
        let tx = node.connect::<u64>(&var("NEXT")).unwrap();
        say("addr", node.local_addr());
        for v in rx.iter() {
            tx.send(2 * v).unwrap();
        }
        say("done", "ok");
        // Dropping `tx` poisons the next stage.
    }

    /// Sends 1..=COUNT to `TO`, then drops its end (poison).
    pub fn source() {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let tx = match std::env::var("NAMES") {
            Ok(ns) => node.connect_named::<u64>(&ns, &var("NAME")).unwrap(),
            Err(_) => node.connect::<u64>(&var("TO")).unwrap(),
        };
        let count: u64 = var("COUNT").parse().unwrap();
        for i in 1..=count {
            tx.send(i).unwrap();
        }
        say("done", "ok");
    }

    /// Sends 0, 1, 2, … to `TO` and prints each value once its send returned,
    /// until a send fails; then prints the value it got back.
    pub fn counter() {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let tx = node.connect::<u64>(&var("TO")).unwrap();
        let mut i = 0u64;
        loop {
            match tx.send(i) {
                Ok(()) => say("acked", i),
                Err(e) => {
                    say("refused", e.into_inner());
                    return;
                }
            }
            i += 1;
        }
    }

    /// 8 processes share one network channel to `TO`, 12,500 values each.
    pub fn eight_writers() {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let tx = node.connect::<u64>(&var("TO")).unwrap();
        let hs: Vec<_> = (0..8u64)
            .map(|w| {
                let tx = tx.clone();
                hoare::spawn(move || {
                    for i in 0..12_500u64 {
                        tx.send(w * 12_500 + i).unwrap();
                    }
                })
            })
            .collect();
        drop(tx);
        for h in hs {
            h.join().unwrap();
        }
        say("done", "ok");
    }

    /// A client of the accepter `TO`: 100 requests, each reply checked.
    pub fn client() {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let (req, rep) = node.connect_pair::<u64, u64>(&var("TO")).unwrap();
        let base: u64 = var("BASE").parse().unwrap();
        for i in 0..100 {
            req.send(base + i).unwrap();
            assert_eq!(rep.recv().unwrap(), 2 * (base + i));
        }
        say("done", "ok");
    }

    /// Tries to connect to `TO` with the wrong secret.
    pub fn intruder() {
        let node = Node::bind("127.0.0.1:0", "not-the-secret").unwrap();
        match node.connect::<u64>(&var("TO")) {
            Ok(_) => say("result", "connected"),
            Err(e) => say("result", format!("refused {:?}", e.kind())),
        }
    }
}

/// The entry point of the child programs (a test that does nothing when run
/// as a test).
#[test]
fn child_entry() {
    let Ok(role) = std::env::var("HOARE_NET_ROLE") else {
        return;
    };
    hoare::run(move || match role.as_str() {
        "sink" => roles::sink(),
        "doubler" => roles::doubler(),
        "source" => roles::source(),
        "counter" => roles::counter(),
        "eight_writers" => roles::eight_writers(),
        "client" => roles::client(),
        "intruder" => roles::intruder(),
        "stalling_sink" => roles::stalling_sink(),
        #[cfg(feature = "tls")]
        "tls_sink" => tls::sink(),
        r => panic!("unknown role {r}"),
    });
}

fn url(addr: &str, name: &str) -> String {
    format!("{addr}/{name}")
}

/// A pipeline stretched over three programs: source → doubler → sink; the
/// source's end of stream (poison) travels down it.
#[test]
fn pipeline_over_three_programs() {
    let mut sink = Prog::start("sink", &[]);
    let sink_addr = sink.expect("addr");
    let mut dbl = Prog::start("doubler", &[("NEXT", url(&sink_addr, "in"))]);
    let dbl_addr = dbl.expect("addr");
    let mut src = Prog::start(
        "source",
        &[("TO", url(&dbl_addr, "in")), ("COUNT", "1000".into())],
    );
    assert_eq!(src.expect("done"), "ok");
    assert_eq!(dbl.expect("done"), "ok");
    assert_eq!(sink.expect("done"), format!("1000 {}", 1000 * 1001));
    src.wait_ok();
    dbl.wait_ok();
    sink.wait_ok();
}

/// A name service in this program; a reader program registers its channel
/// under a name, a writer program resolves the name and sends through it.
#[test]
fn writer_finds_reader_through_the_name_service() {
    hoare::run(|| {
        let ns = Node::bind("127.0.0.1:0", SECRET).unwrap();
        hoare::net::serve_names(&ns).unwrap();
        let names = ns.local_addr().to_string();
        let mut sink = Prog::start("sink", &[("NAMES", names.clone()), ("NAME", "in".into())]);
        sink.expect("addr"); // registered by now
        let mut src = Prog::start(
            "source",
            &[
                ("NAMES", names.clone()),
                ("NAME", "in".into()),
                ("COUNT", "100".into()),
            ],
        );
        assert_eq!(src.expect("done"), "ok");
        assert_eq!(sink.expect("done"), format!("100 {}", 100 * 101 / 2));
        src.wait_ok();
        sink.wait_ok();
        // An unknown name is an error that says so.
        let e = ns.resolve(&names, "nobody").unwrap_err();
        assert!(e.to_string().contains("nobody"), "{e}");
    });
}

/// Request/reply through an accepter: three client programs, each with its own
/// pair of channels.
#[test]
fn request_reply_through_an_accepter() {
    hoare::run(|| {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let clients = node.accept::<u64, u64>("double").unwrap();
        let to = url(&node.local_addr().to_string(), "double");
        let progs: Vec<Prog> = (0..3u64)
            .map(|i| {
                Prog::start(
                    "client",
                    &[("TO", to.clone()), ("BASE", (1000 * i).to_string())],
                )
            })
            .collect();
        let mut servers = Vec::new();
        for _ in 0..3 {
            let (req, rep) = clients.recv().unwrap();
            servers.push(hoare::spawn(move || {
                for x in req.iter() {
                    // A client that has its last reply exits at once, but its
                    // node (dropped at the end of its `run`) acknowledges the
                    // reply first: no reply a client took is reported failed
                    // (this failed now and then when a node closed its
                    // connections at once).
                    rep.send(2 * x).expect("a reply the client took");
                }
            }));
        }
        for mut p in progs {
            assert_eq!(p.expect("done"), "ok");
            p.wait_ok();
        }
        for s in servers {
            s.join().unwrap();
        }
    });
}

/// Poison from the writing program ends the reader's loop (the pipeline test);
/// poison from the reading side makes the remote writer's send fail with its
/// value handed back.
#[test]
fn poison_from_the_reader_reaches_the_writer() {
    hoare::run(|| {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let rx = node.publish::<u64>("in").unwrap();
        let mut w = Prog::start(
            "counter",
            &[("TO", url(&node.local_addr().to_string(), "in"))],
        );
        for i in 0..10 {
            assert_eq!(rx.recv().unwrap(), i);
        }
        rx.poison();
        // The writer's next send (10, or 11 if 10 was on its way already) fails
        // and gets its value back.
        let got: u64 = w.expect("refused").parse().unwrap();
        assert!(got == 10 || got == 11, "refused {got}");
        w.wait_ok();
    });
}

/// Killing the writing program poisons the reader's channel, and the node says
/// the connection was lost; every value the writer saw acknowledged arrived.
#[test]
fn killed_peer_poisons_and_loses_no_acknowledged_value() {
    hoare::run(|| {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let rx = node.publish::<u64>("in").unwrap();
        let mut w = Prog::start(
            "counter",
            &[("TO", url(&node.local_addr().to_string(), "in"))],
        );
        let mut got = HashSet::new();
        for _ in 0..200 {
            got.insert(rx.recv().unwrap());
        }
        w.kill();
        // The rest until poison.
        while let Ok(v) = rx.recv() {
            got.insert(v);
        }
        let lost = node.lost_connections();
        assert_eq!(lost.len(), 1, "{lost:?}");
        assert!(
            lost[0].1.contains("closed") || lost[0].1.contains("failed"),
            "{lost:?}"
        );
        for line in w.out.as_mut().unwrap().lines() {
            let line = line.unwrap();
            if let Some(v) = line.strip_prefix("acked ") {
                let v: u64 = v.parse().unwrap();
                assert!(got.contains(&v), "acknowledged {v} never arrived");
            }
        }
    });
}

/// Killing the *reading* program while 8 network channels each have a value
/// in flight (it stopped taking values): every send returns `Ok` only for a
/// value the reader took (it printed it inside its extended rendezvous, before
/// the acknowledgement), and each writer's failed send hands back its own
/// value with a reason that says the connection was lost. Fails on a writer
/// proxy that returned `Ok` without an acknowledgement (the values in flight
/// were acknowledged and never taken).
#[test]
fn killed_reader_hands_back_every_unacknowledged_value() {
    let mut r = Prog::start("stalling_sink", &[("COUNT", "300".into())]);
    let addr = r.expect("addr");
    hoare::run(move || {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let txs = (0..8)
            .map(|_| node.connect::<u64>(&url(&addr, "in")).unwrap())
            .collect();
        let writers = common_net::writers_until_failure(txs);
        // What the reader took, until it stalled.
        let mut out = r.out.take().unwrap();
        let (got, out) = blocking(move || {
            let mut got = HashSet::new();
            let mut line = String::new();
            loop {
                line.clear();
                assert!(out.read_line(&mut line).unwrap() > 0, "the reader ended");
                let l = line.trim_end();
                if l == "stalled ok" {
                    return (got, out);
                }
                if let Some(v) = l.strip_prefix("got ") {
                    assert!(got.insert(v.parse::<u64>().unwrap()), "{v} taken twice");
                }
            }
        });
        r.out = Some(out);
        assert_eq!(got.len(), 300);
        r.kill();
        common_net::account_for_every_value(writers, &got);
    });
}

/// Exactly once: 100,000 values over one network channel from 8 writer
/// processes in another program.
#[test]
fn exactly_once_with_eight_remote_writers() {
    hoare::run(|| {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let rx = node.publish::<u64>("in").unwrap();
        let mut w = Prog::start(
            "eight_writers",
            &[("TO", url(&node.local_addr().to_string(), "in"))],
        );
        let mut seen = vec![false; 100_000];
        for v in rx.iter() {
            assert!(!seen[v as usize], "{v} arrived twice");
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "values missing");
        assert_eq!(w.expect("done"), "ok");
        w.wait_ok();
    });
}

/// An alt over a network channel and a local one.
#[test]
fn alt_over_a_network_channel_and_a_local_one() {
    hoare::run(|| {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let net: Receiver<u64> = node.publish::<u64>("in").unwrap();
        let mut src = Prog::start(
            "source",
            &[
                ("TO", url(&node.local_addr().to_string(), "in")),
                ("COUNT", "300".into()),
            ],
        );
        let (tx, local) = hoare::one2one::<u64>();
        let h = hoare::spawn(move || {
            for i in 0..300 {
                tx.send(i).unwrap();
            }
        });
        let (mut from_net, mut from_local) = (0u64, 0u64);
        let (mut net_open, mut local_open) = (true, true);
        while net_open || local_open {
            hoare::alt! {
                recv(net) if net_open -> v => match v {
                    Ok(v) => from_net += v,
                    Err(_) => net_open = false,
                },
                recv(local) if local_open -> v => match v {
                    Ok(v) => from_local += v,
                    Err(_) => local_open = false,
                },
            }
        }
        assert_eq!(from_net, 300 * 301 / 2);
        assert_eq!(from_local, 299 * 300 / 2);
        h.join().unwrap();
        assert_eq!(src.expect("done"), "ok");
        src.wait_ok();
    });
}

/// A peer with the wrong secret and a peer that sends garbage are refused
/// while good traffic goes on.
#[test]
fn bad_peers_are_refused_while_good_traffic_continues() {
    hoare::run(|| {
        let node = Node::bind("127.0.0.1:0", SECRET).unwrap();
        let rx = node.publish::<u64>("in").unwrap();
        let to = url(&node.local_addr().to_string(), "in");
        let mut good = Prog::start("source", &[("TO", to.clone()), ("COUNT", "2000".into())]);
        let mut bad = Prog::start("intruder", &[("TO", to)]);
        // Garbage from a raw socket: the node closes it.
        let addr = node.local_addr();
        let garbage = hoare::spawn(move || {
            let mut s = hoare::net::TcpStream::connect(addr).unwrap();
            let junk: Vec<u8> = (0..4096u32)
                .map(|i| (i.wrapping_mul(2654435761u32) >> 13) as u8)
                .collect();
            let _ = s.write_all(&junk);
            let mut buf = [0u8; 256];
            // Read until the node closes the connection (EOF or reset).
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        });
        let mut sum = 0u64;
        for v in rx.iter() {
            sum += v;
        }
        assert_eq!(sum, 2000 * 2001 / 2);
        garbage.join().unwrap();
        let r = bad.expect("result");
        assert!(r.starts_with("refused"), "{r}");
        assert_eq!(good.expect("done"), "ok");
        good.wait_ok();
        bad.wait_ok();
    });
}

/// TLS (feature `tls`): certificates made here with rcgen (a CA and one
/// certificate for 127.0.0.1 that both nodes present, the CA checking both
/// ways: client certificates required), passed to child programs as PEM.
#[cfg(feature = "tls")]
mod tls {
    use super::*;
    use hoare::net::rustls::pki_types::pem::PemObject;
    use hoare::net::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use hoare::net::rustls::server::WebPkiClientVerifier;
    use hoare::net::rustls::{ClientConfig, RootCertStore, ServerConfig};
    use hoare::net::NodeBuilder;
    use std::sync::Arc;

    /// PEMs of a fresh CA's certificate, and of a certificate for 127.0.0.1
    /// it signed with its key.
    pub fn make_pems() -> Vec<(&'static str, String)> {
        make_pems_for("127.0.0.1")
    }

    /// PEMs of a fresh CA's certificate, and of a certificate for `name` (a DNS
    /// name or an IP address) it signed with its key.
    pub fn make_pems_for(name: &str) -> Vec<(&'static str, String)> {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_key = KeyPair::generate().unwrap();
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let leaf = CertificateParams::new(vec![name.to_owned()]).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = leaf.signed_by(&key, &ca_cert, &ca_key).unwrap();
        vec![
            ("TLS_CA", ca_cert.pem()),
            ("TLS_CERT", cert.pem()),
            ("TLS_KEY", key.serialize_pem()),
        ]
    }

    /// `b` requiring TLS with the certificates in `pems` (or the environment).
    pub fn with_tls(b: NodeBuilder, pems: &[(&str, String)]) -> NodeBuilder {
        let get = |k: &str| {
            pems.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| var(k))
        };
        let ca = CertificateDer::from_pem_slice(get("TLS_CA").as_bytes()).unwrap();
        let cert = CertificateDer::from_pem_slice(get("TLS_CERT").as_bytes()).unwrap();
        let key = || PrivateKeyDer::from_pem_slice(get("TLS_KEY").as_bytes()).unwrap();
        let mut roots = RootCertStore::empty();
        roots.add(ca).unwrap();
        let roots = Arc::new(roots);
        let verifier = WebPkiClientVerifier::builder(roots.clone())
            .build()
            .unwrap();
        let server = ServerConfig::builder()
            .with_client_cert_verifier(verifier)
            .with_single_cert(vec![cert.clone()], key())
            .unwrap();
        let client = ClientConfig::builder()
            .with_root_certificates(roots)
            .with_client_auth_cert(vec![cert], key())
            .unwrap();
        b.tls(Arc::new(server), Arc::new(client))
    }

    /// A TLS node that publishes "in" and prints the count and sum of what
    /// arrives until poison.
    pub fn sink() {
        let node = with_tls(Node::builder(), &[])
            .bind("127.0.0.1:0", SECRET)
            .unwrap();
        let rx: Receiver<u64> = node.publish("in").unwrap();
        say("addr", node.local_addr());
        let (mut n, mut sum) = (0u64, 0u64);
        for v in rx.iter() {
            n += 1;
            sum += v;
        }
        say("done", format!("{n} {sum}"));
    }
}

/// A pipeline over TLS between two programs (the writer here, the reader a
/// child), with client certificates required: every value arrives, and the
/// end of the stream (poison) too. Fails with a node that does not run TLS on
/// the connections it accepts (the handshake fails).
#[cfg(feature = "tls")]
#[test]
fn tls_pipeline_across_two_programs() {
    let pems = tls::make_pems();
    let mut sink = Prog::start("tls_sink", &pems);
    let addr = sink.expect("addr");
    hoare::run(move || {
        let node = tls::with_tls(Node::builder(), &pems)
            .bind("127.0.0.1:0", SECRET)
            .unwrap();
        let tx = node.connect::<u64>(&url(&addr, "in")).unwrap();
        for i in 1..=1000 {
            tx.send(i).unwrap();
        }
    });
    assert_eq!(sink.expect("done"), format!("1000 {}", 1000 * 1001 / 2));
    sink.wait_ok();
}

/// A node that requires TLS refuses a plaintext peer (its connect fails), and
/// a TLS peer whose certificate its CA did not sign; good TLS traffic goes on.
/// Fails with a node that lets plaintext peers in.
#[cfg(feature = "tls")]
#[test]
fn a_tls_node_refuses_plaintext_and_unknown_peers() {
    let pems = tls::make_pems();
    let mut sink = Prog::start("tls_sink", &pems);
    let addr = sink.expect("addr");
    hoare::run(move || {
        let plain = Node::bind("127.0.0.1:0", SECRET).unwrap();
        assert!(plain.connect::<u64>(&url(&addr, "in")).is_err());
        // Another CA's certificate: refused both ways.
        let other = tls::make_pems();
        let stranger = tls::with_tls(Node::builder(), &other)
            .bind("127.0.0.1:0", SECRET)
            .unwrap();
        assert!(stranger.connect::<u64>(&url(&addr, "in")).is_err());
        let good = tls::with_tls(Node::builder(), &pems)
            .bind("127.0.0.1:0", SECRET)
            .unwrap();
        let tx = good.connect::<u64>(&url(&addr, "in")).unwrap();
        tx.send(5).unwrap();
    });
    assert_eq!(sink.expect("done"), "1 5");
    sink.wait_ok();
}

/// A URL that names its host by a DNS name checks the peer's certificate for
/// that name: a certificate for "localhost" is good for "localhost:PORT/in" and
/// not for the same node reached as 127.0.0.1. Fails with a client that checks
/// the certificate against the IP address whatever the URL said.
#[cfg(feature = "tls")]
#[test]
fn tls_checks_the_certificate_for_the_urls_host_name() {
    let pems = tls::make_pems_for("localhost");
    hoare::run(move || {
        let server = tls::with_tls(Node::builder(), &pems)
            .bind("localhost:0", SECRET)
            .unwrap();
        let rx: Receiver<u64> = server.publish("in").unwrap();
        let port = server.local_addr().port();
        let client = tls::with_tls(Node::builder(), &pems)
            .bind("localhost:0", SECRET)
            .unwrap();
        let ip = server.local_addr().ip();
        assert!(client.connect::<u64>(&format!("{ip}:{port}/in")).is_err());
        let tx = client
            .connect::<u64>(&format!("localhost:{port}/in"))
            .unwrap();
        let w = hoare::spawn(move || tx.send(7));
        assert_eq!(rx.recv(), Ok(7));
        w.join().unwrap().unwrap();
    });
}
