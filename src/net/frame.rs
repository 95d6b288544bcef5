//! The frames of the network channel protocol, and their incremental decoder.
//!
//! After the authentication handshake (see `auth`), both directions of a
//! connection carry frames:
//!
//! ```text
//! | channel id: u32 LE | kind: u8 | flags: u8 | length: u32 LE | payload: length bytes |
//! ```
//!
//! The channel id is the id of the channel *at the receiving node* (seed 002
//! §5.4.4), except for `OPEN`, which names the channel by its published name.
//! A payload is at most [`MAX_FRAME`] bytes: a value larger than a fragment
//! goes as several `DATA` frames, the last with [`LAST`] set, and frames of
//! other channels may come between them, so a large value does not hold up the
//! small ones. A reassembled value is at most the node's message limit.
//!
//! The decoder never panics and never buffers more than one frame: a header
//! with an unknown kind or a length over the limit is an error, after which the
//! connection is closed.

use std::fmt;

/// Bytes of a frame header.
pub const HEADER: usize = 10;
/// The largest payload of one frame.
pub const MAX_FRAME: usize = 64 * 1024;
/// The payload size values are cut into.
pub const FRAGMENT: usize = 16 * 1024;

/// Flag of the last `DATA` frame of a value.
pub const LAST: u8 = 1;

/// What a frame says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Open a channel to a published name. Payload: the opener's channel id
    /// (u32 LE), its end kind (u8, see `node::Open`), then the name (UTF-8).
    Open = 1,
    /// The open succeeded. Payload: the new channel's id at the sender (u32 LE)
    /// and, for a pair, the id of the second channel (u32 LE).
    Opened = 2,
    /// The open failed. Payload: why (UTF-8).
    Refused = 3,
    /// (A fragment of) a value.
    Data = 4,
    /// The reader took the value (and its closure, if any, returned).
    Ack = 5,
    /// The channel is poisoned from the sending side.
    Poison = 6,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Open,
            2 => Kind::Opened,
            3 => Kind::Refused,
            4 => Kind::Data,
            5 => Kind::Ack,
            6 => Kind::Poison,
            _ => return None,
        })
    }
}

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The channel at the receiving node.
    pub chan: u32,
    /// What it says.
    pub kind: Kind,
    /// Flags ([`LAST`]).
    pub flags: u8,
    /// At most [`MAX_FRAME`] bytes.
    pub payload: Vec<u8>,
}

impl Frame {
    /// A frame without payload.
    pub fn bare(chan: u32, kind: Kind) -> Frame {
        Frame {
            chan,
            kind,
            flags: 0,
            payload: Vec::new(),
        }
    }

    /// Appends the encoded frame to `out`.
    ///
    /// # Panics
    /// If the payload is over [`MAX_FRAME`] (a bug: callers fragment).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        assert!(
            self.payload.len() <= MAX_FRAME,
            "hoare: a frame payload over MAX_FRAME"
        );
        out.extend_from_slice(&self.chan.to_le_bytes());
        out.push(self.kind as u8);
        out.push(self.flags);
        out.extend_from_slice(&(self.payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.payload);
    }

    /// The encoded frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(HEADER + self.payload.len());
        self.encode_into(&mut v);
        v
    }
}

/// A malformed frame: the connection that sent it is closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// A kind byte the protocol does not have.
    UnknownKind(u8),
    /// A length over [`MAX_FRAME`].
    TooLong(u32),
    /// Flags a frame of this kind may not have.
    BadFlags(u8),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::UnknownKind(k) => write!(f, "unknown frame kind {k}"),
            FrameError::TooLong(n) => {
                write!(f, "frame of {n} bytes, over the limit of {MAX_FRAME}")
            }
            FrameError::BadFlags(b) => write!(f, "bad frame flags {b:#x}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// An incremental decoder: feed it the bytes as they come, take the frames out.
/// It holds at most one frame's worth of bytes.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already consumed.
    at: usize,
}

impl Decoder {
    /// An empty decoder.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// How many more bytes the decoder wants before it can make progress (at
    /// least 1): read at most this much, so it never holds more than one frame.
    pub fn wants(&self) -> usize {
        let have = self.buf.len() - self.at;
        if have < HEADER {
            return HEADER - have;
        }
        let len = u32::from_le_bytes(self.buf[self.at + 6..self.at + 10].try_into().unwrap());
        let len = (len as usize).min(MAX_FRAME);
        (HEADER + len).saturating_sub(have).max(1)
    }

    /// Adds bytes that came in.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.at > 0 && self.at == self.buf.len() {
            self.buf.clear();
            self.at = 0;
        } else if self.at > MAX_FRAME {
            self.buf.drain(..self.at);
            self.at = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, `Ok(None)` if more bytes are needed, or the error
    /// that makes the stream unusable.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        let b = &self.buf[self.at..];
        if b.len() < HEADER {
            return Ok(None);
        }
        let chan = u32::from_le_bytes(b[0..4].try_into().unwrap());
        let kind = Kind::from_u8(b[4]).ok_or(FrameError::UnknownKind(b[4]))?;
        let flags = b[5];
        if flags & !LAST != 0 || (flags != 0 && kind != Kind::Data) {
            return Err(FrameError::BadFlags(flags));
        }
        let len = u32::from_le_bytes(b[6..10].try_into().unwrap());
        if len as usize > MAX_FRAME {
            return Err(FrameError::TooLong(len));
        }
        let end = HEADER + len as usize;
        if b.len() < end {
            return Ok(None);
        }
        let payload = b[HEADER..end].to_vec();
        self.at += end;
        Ok(Some(Frame {
            chan,
            kind,
            flags,
            payload,
        }))
    }

    /// Bytes held (for tests: never more than a frame and a read).
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic PRNG (xorshift64*), so the property tests need no
    /// dependency and run the same cases every time.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_frame(r: &mut Rng) -> Frame {
        let kinds = [
            Kind::Open,
            Kind::Opened,
            Kind::Refused,
            Kind::Data,
            Kind::Ack,
            Kind::Poison,
        ];
        let kind = kinds[r.below(6) as usize];
        let len = match r.below(10) {
            0 => MAX_FRAME,
            1..=3 => 0,
            _ => r.below(300) as usize,
        };
        Frame {
            chan: r.next() as u32,
            kind,
            flags: if kind == Kind::Data {
                (r.below(2)) as u8
            } else {
                0
            },
            payload: (0..len).map(|_| r.next() as u8).collect(),
        }
    }

    /// Property: any sequence of frames, encoded and fed in chunks of any sizes,
    /// decodes to the same frames, with at most one frame buffered.
    #[test]
    fn round_trip_in_any_chunks() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let frames: Vec<Frame> = (0..r.below(20)).map(|_| random_frame(&mut r)).collect();
            let mut bytes = Vec::new();
            for f in &frames {
                f.encode_into(&mut bytes);
            }
            let mut d = Decoder::new();
            let mut got = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                let n = (1 + r.below(2 * d.wants() as u64) as usize).min(d.wants());
                let n = n.min(bytes.len() - i);
                d.feed(&bytes[i..i + n]);
                i += n;
                assert!(d.buffered() <= HEADER + MAX_FRAME);
                while let Some(f) = d.next_frame().unwrap() {
                    got.push(f);
                }
            }
            assert_eq!(got, frames);
            assert_eq!(d.buffered(), 0);
        }
    }

    /// Property: arbitrary bytes never make the decoder panic, buffer more than
    /// a frame, or yield a frame that breaks the limits; a bad header is an
    /// error.
    #[test]
    fn garbage_never_panics() {
        let mut r = Rng(42);
        for _ in 0..2000 {
            let len = r.below(400) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
            // Sometimes a plausible header, to get past the first checks.
            if r.below(2) == 0 && bytes.len() >= HEADER {
                bytes[4] = 1 + r.below(6) as u8;
                bytes[5] = 0;
                let l = r.below(2 * MAX_FRAME as u64) as u32;
                bytes[6..10].copy_from_slice(&l.to_le_bytes());
            }
            let mut d = Decoder::new();
            let mut i = 0;
            'stream: while i < bytes.len() {
                let n = d.wants().min(bytes.len() - i);
                d.feed(&bytes[i..i + n]);
                i += n;
                assert!(d.buffered() <= HEADER + MAX_FRAME);
                loop {
                    match d.next_frame() {
                        Ok(Some(f)) => assert!(f.payload.len() <= MAX_FRAME),
                        Ok(None) => break,
                        Err(_) => break 'stream,
                    }
                }
            }
        }
    }

    #[test]
    fn oversized_and_unknown_are_errors() {
        let mut d = Decoder::new();
        let mut h = vec![0u8; HEADER];
        h[4] = Kind::Data as u8;
        h[6..10].copy_from_slice(&(MAX_FRAME as u32 + 1).to_le_bytes());
        d.feed(&h);
        assert_eq!(
            d.next_frame(),
            Err(FrameError::TooLong(MAX_FRAME as u32 + 1))
        );
        let mut d = Decoder::new();
        h[4] = 200;
        d.feed(&h);
        assert_eq!(d.next_frame(), Err(FrameError::UnknownKind(200)));
    }
}
