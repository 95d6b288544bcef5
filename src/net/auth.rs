//! Peer authentication: both sides prove they know the node's shared secret
//! (Erlang's cookie) before any channel traffic, by HMAC-SHA-256 over fresh
//! nonces from the OS's CSPRNG. The secret never crosses the wire, a recorded
//! exchange cannot be replayed (the other side's nonce is new each time), and
//! each side checks the other's proof in constant time (`hmac`'s `verify`).
//!
//! ```text
//! client → server   "HOARE/1\n" | client nonce (32)
//! server → client   "HOARE/1\n" | server nonce (32) | HMAC(secret, "server" | cn | sn)
//! client → server   HMAC(secret, "client" | sn | cn)
//! ```
//!
//! A peer that sends anything else, or a wrong proof, is disconnected.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{self, Read, Write};

const MAGIC: &[u8; 8] = b"HOARE/1\n";
const NONCE: usize = 32;
const TAG: usize = 32;

type HmacSha256 = Hmac<Sha256>;

fn nonce() -> io::Result<[u8; NONCE]> {
    let mut n = [0u8; NONCE];
    getrandom::fill(&mut n)
        .map_err(|e| io::Error::other(format!("hoare: no random nonce from the OS: {e}")))?;
    Ok(n)
}

fn mac(secret: &[u8], role: &[u8], a: &[u8], b: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length.
    let mut m = HmacSha256::new_from_slice(secret).expect("HMAC takes any key length");
    m.update(role);
    m.update(a);
    m.update(b);
    m
}

fn refused(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("hoare: peer authentication failed: {what}"),
    )
}

/// The connecting side of the handshake.
pub fn client<S: Read + Write>(s: &mut S, secret: &[u8]) -> io::Result<()> {
    let cn = nonce()?;
    let mut hello = Vec::with_capacity(MAGIC.len() + NONCE);
    hello.extend_from_slice(MAGIC);
    hello.extend_from_slice(&cn);
    s.write_all(&hello)?;
    let mut reply = [0u8; 8 + NONCE + TAG];
    s.read_exact(&mut reply)?;
    if &reply[..8] != MAGIC {
        return Err(refused("the peer does not speak the hoare protocol"));
    }
    let sn = &reply[8..8 + NONCE];
    mac(secret, b"server", &cn, sn)
        .verify_slice(&reply[8 + NONCE..])
        .map_err(|_| refused("the server does not know the secret"))?;
    let proof = mac(secret, b"client", sn, &cn).finalize().into_bytes();
    s.write_all(&proof)?;
    Ok(())
}

/// The accepting side of the handshake.
pub fn server<S: Read + Write>(s: &mut S, secret: &[u8]) -> io::Result<()> {
    let mut hello = [0u8; 8 + NONCE];
    s.read_exact(&mut hello)?;
    if &hello[..8] != MAGIC {
        return Err(refused("the peer does not speak the hoare protocol"));
    }
    let cn = &hello[8..];
    let sn = nonce()?;
    let mut reply = Vec::with_capacity(8 + NONCE + TAG);
    reply.extend_from_slice(MAGIC);
    reply.extend_from_slice(&sn);
    reply.extend_from_slice(&mac(secret, b"server", cn, &sn).finalize().into_bytes());
    s.write_all(&reply)?;
    let mut proof = [0u8; TAG];
    s.read_exact(&mut proof)?;
    mac(secret, b"client", &sn, cn)
        .verify_slice(&proof)
        .map_err(|_| refused("the client does not know the secret"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    fn pair(client_secret: &'static [u8], server_secret: &'static [u8]) -> (bool, bool) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            server(&mut s, server_secret).is_ok()
        });
        let mut c = TcpStream::connect(a).unwrap();
        let ok = client(&mut c, client_secret).is_ok();
        drop(c);
        (ok, t.join().unwrap())
    }

    #[test]
    fn same_secret_passes_both_ways() {
        assert_eq!(pair(b"cookie", b"cookie"), (true, true));
    }

    #[test]
    fn wrong_secret_fails_both_ways() {
        let (c, s) = pair(b"cookie", b"biscuit");
        assert!(!c);
        assert!(!s);
    }
}
