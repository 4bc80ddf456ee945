//! The DIGEST-MD5 security layer: integrity (`auth-int`, RFC 2831 §2.3) and confidentiality
//! (`auth-conf` with `3des`, §2.4). A Hadoop server is a JDK SASL server, so where the RFC
//! leaves room the JDK's `DigestMD5Base` decides: keys from the full 16-byte H(A1) for
//! `3des`, a DES key per 7 key bytes spread over 8 bytes with parity bits, the IV taken from
//! the last 8 bytes of the sealing key, and one CBC chain per direction that runs on across
//! messages (the JDK keeps a single `Cipher` and calls `update`).
//!
//! Pure functions of keys and bytes: no I/O, no clock. The tests use vectors that the JDK's
//! own DIGEST-MD5 client and server produced (`scripts/digest-vectors/`).

use cbc::cipher::generic_array::GenericArray;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use hmac::{Hmac, Mac};
use md5::{Digest, Md5};

use super::{LayerError, Qop, Seal, Unseal};

type TdesEnc = cbc::Encryptor<des::TdesEde2>;
type TdesDec = cbc::Decryptor<des::TdesEde2>;

const KIC_MAGIC: &[u8] = b"Digest session key to client-to-server signing key magic constant";
const KIS_MAGIC: &[u8] = b"Digest session key to server-to-client signing key magic constant";
const KCC_MAGIC: &[u8] = b"Digest H(A1) to client-to-server sealing key magic constant";
const KCS_MAGIC: &[u8] = b"Digest H(A1) to server-to-client sealing key magic constant";

/// The only message type RFC 2831 defines; it sits in every wrapped token's trailer.
const MESSAGE_TYPE: [u8; 2] = [0, 1];
/// HMAC-MD5 truncated to this many bytes.
const MAC_LEN: usize = 10;
/// Message type (2) plus sequence number (4), sent in clear after the (sealed) body.
const TRAILER_LEN: usize = 6;
const DES_BLOCK: usize = 8;
/// Most bytes a token adds to its message: padding (up to one block), MAC, trailer.
pub const MAX_OVERHEAD: usize = DES_BLOCK + MAC_LEN + TRAILER_LEN;

/// Which end of the connection the layer serves: the client seals with the client-to-server
/// keys and opens with the server-to-client ones, the server the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    /// The tests play the server end with it.
    #[cfg_attr(not(test), allow(dead_code))]
    Server,
}

fn md5_of(parts: &[&[u8]]) -> [u8; 16] {
    let mut h = Md5::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// `(Kic, Kis)`: the signing keys, client-to-server and server-to-client.
pub fn integrity_keys(ha1: &[u8; 16]) -> ([u8; 16], [u8; 16]) {
    (md5_of(&[ha1, KIC_MAGIC]), md5_of(&[ha1, KIS_MAGIC]))
}

/// `(Kcc, Kcs)`: the sealing keys for `3des` (and `rc4`), which use all 16 bytes of H(A1).
pub fn sealing_keys(ha1: &[u8; 16]) -> ([u8; 16], [u8; 16]) {
    (md5_of(&[ha1, KCC_MAGIC]), md5_of(&[ha1, KCS_MAGIC]))
}

/// Spreads 7 key bytes (56 bits) over 8 bytes, 7 bits each in the high bits, and sets each
/// byte's low bit for odd parity (DES ignores it; the JDK sets it, so we do too).
fn des_key_with_parity(seven: &[u8]) -> [u8; 8] {
    let mut wide = [0u8; 8];
    wide[1..].copy_from_slice(&seven[..7]);
    let bits = u64::from_be_bytes(wide);
    let mut out = [0u8; 8];
    for (i, b) in out.iter_mut().enumerate() {
        let seven_bits = ((bits >> (49 - 7 * i)) & 0x7F) as u8;
        let byte = seven_bits << 1;
        *b = byte | u8::from(byte.count_ones() & 1 == 0);
    }
    out
}

/// The two-key triple-DES key (K1, K2; K3 = K1) made from the first 14 bytes of a sealing key.
pub fn des_ede2_key(kc: &[u8; 16]) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&des_key_with_parity(&kc[..7]));
    key[8..].copy_from_slice(&des_key_with_parity(&kc[7..14]));
    key
}

/// `HMAC-MD5(Ki, seq || msg)[0..10]`.
fn mac10(ki: &[u8; 16], seq: u32, msg: &[u8]) -> [u8; MAC_LEN] {
    let mut h = <Hmac<Md5> as Mac>::new_from_slice(ki).expect("HMAC takes keys of any length");
    h.update(&seq.to_be_bytes());
    h.update(msg);
    let full = h.finalize().into_bytes();
    let mut out = [0u8; MAC_LEN];
    out.copy_from_slice(&full[..MAC_LEN]);
    out
}

/// Compares without an early exit, so timing does not tell how much of a MAC was right.
fn same_mac(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Builds both halves of the layer for `qop` from the raw 16-byte H(A1) of the exchange.
/// `None` for `auth`, which has no layer.
pub fn new_layer(qop: Qop, ha1: &[u8; 16], side: Side) -> Option<(DigestSealer, DigestOpener)> {
    let (kic, kis) = integrity_keys(ha1);
    let (my_ki, peer_ki) = match side {
        Side::Client => (kic, kis),
        Side::Server => (kis, kic),
    };
    let (enc, dec) = match qop {
        Qop::Auth => return None,
        Qop::AuthInt => (None, None),
        Qop::AuthConf => {
            let (kcc, kcs) = sealing_keys(ha1);
            let (mine, peer) = match side {
                Side::Client => (kcc, kcs),
                Side::Server => (kcs, kcc),
            };
            let enc = TdesEnc::new_from_slices(&des_ede2_key(&mine), &mine[8..])
                .expect("16-byte key and 8-byte IV");
            let dec = TdesDec::new_from_slices(&des_ede2_key(&peer), &peer[8..])
                .expect("16-byte key and 8-byte IV");
            (Some(enc), Some(dec))
        }
    };
    Some((
        DigestSealer {
            ki: my_ki,
            seq: 0,
            cipher: enc,
        },
        DigestOpener {
            ki: peer_ki,
            seq: 0,
            cipher: dec,
        },
    ))
}

/// The outgoing half: MACs (and, under `auth-conf`, encrypts) each message.
pub struct DigestSealer {
    ki: [u8; 16],
    seq: u32,
    cipher: Option<TdesEnc>,
}

impl Seal for DigestSealer {
    /// `msg || MAC || 0x0001 || seq` (integrity) or `3DES(msg || pad || MAC) || 0x0001 || seq`
    /// (confidentiality). An empty message gives an empty token and uses no sequence number,
    /// as in the JDK.
    fn seal(&mut self, msg: &[u8]) -> Vec<u8> {
        if msg.is_empty() {
            return Vec::new();
        }
        let mac = mac10(&self.ki, self.seq, msg);
        let mut out = Vec::with_capacity(msg.len() + MAX_OVERHEAD);
        out.extend_from_slice(msg);
        match &mut self.cipher {
            None => out.extend_from_slice(&mac),
            Some(enc) => {
                // 1..=8 bytes, each holding the pad length, so msg || pad || MAC fills blocks.
                let pad = DES_BLOCK - (msg.len() + MAC_LEN) % DES_BLOCK;
                out.resize(msg.len() + pad, pad as u8);
                out.extend_from_slice(&mac);
                for block in out.chunks_exact_mut(DES_BLOCK) {
                    enc.encrypt_block_mut(GenericArray::from_mut_slice(block));
                }
            }
        }
        out.extend_from_slice(&MESSAGE_TYPE);
        out.extend_from_slice(&self.seq.to_be_bytes());
        self.seq = self.seq.wrapping_add(1);
        out
    }
}

/// The incoming half: checks (and decrypts) each token, in order.
pub struct DigestOpener {
    ki: [u8; 16],
    seq: u32,
    cipher: Option<TdesDec>,
}

impl Unseal for DigestOpener {
    fn unseal(&mut self, token: &[u8]) -> Result<Vec<u8>, LayerError> {
        if token.is_empty() {
            return Ok(Vec::new());
        }
        let min = match self.cipher {
            None => MAC_LEN + TRAILER_LEN,
            Some(_) => 2 * DES_BLOCK + TRAILER_LEN,
        };
        if token.len() < min {
            return Err(LayerError::TooShort {
                len: token.len(),
                min,
            });
        }
        let (body, trailer) = token.split_at(token.len() - TRAILER_LEN);
        let msg_type = [trailer[0], trailer[1]];
        let seq = u32::from_be_bytes([trailer[2], trailer[3], trailer[4], trailer[5]]);
        let (msg, mac) = match &mut self.cipher {
            None => {
                let (m, mac) = body.split_at(body.len() - MAC_LEN);
                (m.to_vec(), mac.to_vec())
            }
            Some(dec) => {
                if body.len() % DES_BLOCK != 0 {
                    return Err(LayerError::NotBlockAligned { len: body.len() });
                }
                let mut plain = body.to_vec();
                for block in plain.chunks_exact_mut(DES_BLOCK) {
                    dec.decrypt_block_mut(GenericArray::from_mut_slice(block));
                }
                let mac = plain.split_off(plain.len() - MAC_LEN);
                let pad = usize::from(*plain.last().expect("at least 6 bytes remain"));
                if pad == 0 || pad > DES_BLOCK || pad > plain.len() {
                    return Err(LayerError::BadPadding { pad });
                }
                plain.truncate(plain.len() - pad);
                (plain, mac)
            }
        };
        if !same_mac(&mac, &mac10(&self.ki, seq, &msg)) {
            return Err(LayerError::BadMac { seq });
        }
        if seq != self.seq {
            return Err(LayerError::BadSequence {
                expected: self.seq,
                got: seq,
            });
        }
        if msg_type != MESSAGE_TYPE {
            return Err(LayerError::BadMessageType(u16::from_be_bytes(msg_type)));
        }
        self.seq = self.seq.wrapping_add(1);
        Ok(msg)
    }
}

#[cfg(test)]
mod tests;
