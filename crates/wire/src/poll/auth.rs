//! How an executor and its ApplicationMaster prove themselves to each other on the poll
//! endpoint (`POST /v1/executors/poll`). Sans-IO: clocks and nonces come in as arguments.
//!
//! # Keys
//! `yarn-am submit` makes the application's *master secret* and ships it only in the AM
//! container's credentials (a secret key beside the tokens; the NodeManager writes it to the
//! container's 0600 token file and never to a log) and in the submitting user's
//! `~/.yarn-am/<app>.secret` for the driver. The master secret opens every driver endpoint
//! (`Authorization: Bearer`).
//!
//! An executor never sees it. The AM gives each executor its own key,
//! [`executor_key`] = HMAC-SHA256(master, executor id + container id), in that executor's
//! launch credentials. So a task that steals its executor's key can at most speak for that one
//! executor (report fake results for its own tasks); it cannot call `/v1/finish`, change the
//! demand, kill executors, or pose as another executor. The container id is in the key so that
//! executor ids reused by a later AM attempt (the registry counts from 1 again) get new keys.
//! The AM derives keys on demand and keeps none: a MAC that verifies under the key for a pair
//! proves the pair was one the AM launched, since nobody else can derive it.
//!
//! # A poll
//! The request carries [`AUTH_HEADER`]: the executor id and container id, a sequence number
//! (strictly increasing per executor), the executor's clock, a fresh random nonce, the SHA-256
//! of the body, and an HMAC under the executor key over all of those, the method and the path.
//! Because the body's digest is in the header, the AM checks the MAC before it reads a byte
//! of the body ([`Verifier::verify_header`]): anyone who can reach the AM's port can make it
//! read headers, never a body; the body is then read under a deadline and a small limit and
//! must match the digest ([`Verifier::accept_body`]). No key or secret goes over the wire, so a fake AM that takes over a dead AM's port learns
//! nothing it can reuse. The AM refuses a sequence number it has seen (a replay) and a clock
//! more than [`MAX_SKEW_MS`] away from its own (a replay to a new AM with no memory of the old
//! sequence numbers; the same tolerance Kerberos asks of a cluster).
//!
//! Every reply the AM sends after authenticating a poll carries [`REPLY_MAC_HEADER`], an HMAC
//! under the same key over the request's nonce, the status and the SHA-256 of the body. The
//! executor checks it before it reads the body: an old reply cannot be replayed (the nonce is
//! fresh), and nobody without the key can make the executor run a command.
//!
//! What this does not do: the transport is plain HTTP, so someone on the path sees tasks and
//! results (never a key); and a process of the same user on the executor's node can read the
//! executor's key from its memory where the kernel allows (see README, "Security").

use std::collections::HashMap;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// The endpoint executors poll (its path is part of what they sign).
pub const POLL_PATH: &str = "/v1/executors/poll";
/// Request header with the executor's signed claim.
pub const AUTH_HEADER: &str = "x-yarn-am-executor-auth";
/// Reply header with the AM's MAC over the reply.
pub const REPLY_MAC_HEADER: &str = "x-yarn-am-reply-mac";
/// How far an executor's clock may be from the AM's.
pub const MAX_SKEW_MS: u64 = 120_000;

/// The scheme's version: v2 carries the body's digest in the header, so that the AM can check
/// the MAC before it reads a byte of the body (v1 covered the digest without sending it).
const VERSION: &str = "v2";

/// Why a poll's authentication was refused. The message goes back to the executor (it tells
/// nothing the requester did not send).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("no {AUTH_HEADER} header: executors sign their polls")]
    Missing,
    #[error("malformed {AUTH_HEADER} header: {0}")]
    Malformed(String),
    #[error("the poll's MAC does not verify (not signed with this executor's key, or changed on the way)")]
    BadMac,
    #[error("the poll's body is not the one its MAC covers (changed on the way)")]
    BodyMismatch,
    #[error("replayed poll: sequence number {seq} of executor {executor} is not above {last}")]
    Replay {
        executor: String,
        seq: u64,
        last: u64,
    },
    #[error(
        "stale poll: its clock {time_ms} ms is {skew_ms} ms from the AM's (limit {MAX_SKEW_MS} ms)"
    )]
    Stale { time_ms: u64, skew_ms: u64 },
}

/// Why an executor refuses a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error(
        "the reply is not signed (no {REPLY_MAC_HEADER} header): not from this application's AM"
    )]
    Unsigned,
    #[error("the reply's signature does not verify: not from this application's AM, or changed on the way")]
    BadMac,
}

/// HMAC-SHA256 over `parts` joined with newlines (no part contains one: see [`valid_id`]).
fn hmac_of(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            m.update(b"\n");
        }
        m.update(p);
    }
    m
}

fn mac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    hmac_of(key, parts).finalize().into_bytes().into()
}

fn verify(key: &[u8], parts: &[&[u8]], given_hex: &str) -> bool {
    let Ok(given) = hex::decode(given_hex) else {
        return false;
    };
    // Constant time: the reply time must not tell how much of a MAC was right.
    hmac_of(key, parts).verify_slice(&given).is_ok()
}

fn body_digest(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

/// The key of one executor: only the AM (holding the master secret) can derive it.
pub fn executor_key(master: &[u8], executor_id: &str, container_id: &str) -> [u8; 32] {
    mac(
        master,
        &[
            b"yarn-am executor key v1",
            executor_id.as_bytes(),
            container_id.as_bytes(),
        ],
    )
}

/// Ids travel in a header and in the MAC'd string, joined by separators: allow only the
/// characters YARN's ids and ours use, so no id can mimic a separator.
fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// One poll's signed claim, as carried in [`AUTH_HEADER`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestAuth {
    pub executor_id: String,
    pub container_id: String,
    pub seq: u64,
    pub time_ms: u64,
    /// 16 random bytes, hex.
    pub nonce: String,
    /// Hex SHA-256 of the body: in the header, so that the MAC can be checked first.
    pub body_sha256: String,
    mac: String,
}

/// What a request's MAC covers, besides the claim itself.
pub struct SignedRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub body: &'a [u8],
}

impl RequestAuth {
    /// Signs a request as the executor `executor_id` in `container_id`.
    pub fn sign(
        key: &[u8],
        executor_id: &str,
        container_id: &str,
        seq: u64,
        time_ms: u64,
        nonce: [u8; 16],
        req: &SignedRequest<'_>,
    ) -> Self {
        let mut a = Self {
            executor_id: executor_id.to_string(),
            container_id: container_id.to_string(),
            seq,
            time_ms,
            nonce: hex::encode(nonce),
            body_sha256: body_digest(req.body),
            mac: String::new(),
        };
        a.mac = hex::encode(mac(key, &a.signed_parts(req.method, req.path).each()));
        a
    }

    /// Every field the MAC covers: the header's own fields, the method and the path. The
    /// body is covered through its digest, which the header carries.
    fn signed_parts(&self, method: &str, path: &str) -> SignedParts {
        SignedParts(vec![
            format!("yarn-am poll request {VERSION}"),
            self.executor_id.clone(),
            self.container_id.clone(),
            self.seq.to_string(),
            self.time_ms.to_string(),
            self.nonce.clone(),
            method.to_string(),
            path.to_string(),
            self.body_sha256.clone(),
        ])
    }

    pub fn header_value(&self) -> String {
        format!(
            "{VERSION} executor={} container={} seq={} time={} nonce={} body={} mac={}",
            self.executor_id,
            self.container_id,
            self.seq,
            self.time_ms,
            self.nonce,
            self.body_sha256,
            self.mac
        )
    }

    pub fn parse(header: &str) -> Result<Self, AuthError> {
        let bad = |why: &str| AuthError::Malformed(why.to_string());
        let mut words = header.split_ascii_whitespace();
        if words.next() != Some(VERSION) {
            return Err(AuthError::Malformed(format!(
                "it does not start with the scheme version {VERSION}"
            )));
        }
        let mut fields: HashMap<&str, &str> = HashMap::new();
        for w in words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| bad("a field is not key=value"))?;
            if fields.insert(k, v).is_some() {
                return Err(AuthError::Malformed(format!("field {k} given twice")));
            }
        }
        let field = |k: &str| {
            fields
                .get(k)
                .copied()
                .ok_or_else(|| AuthError::Malformed(format!("no {k}= field")))
        };
        let number = |k: &str| -> Result<u64, AuthError> {
            field(k)?
                .parse()
                .map_err(|_| AuthError::Malformed(format!("{k} is not a number")))
        };
        let hex_of = |k: &str, len: usize| -> Result<String, AuthError> {
            let v = field(k)?;
            if v.len() == len && v.bytes().all(|b| b.is_ascii_hexdigit()) {
                Ok(v.to_ascii_lowercase())
            } else {
                Err(AuthError::Malformed(format!("{k} is not {len} hex digits")))
            }
        };
        let id = |k: &str| -> Result<String, AuthError> {
            let v = field(k)?;
            if valid_id(v) {
                Ok(v.to_string())
            } else {
                Err(AuthError::Malformed(format!("{k} is not a valid id")))
            }
        };
        const KNOWN: [&str; 7] = [
            "executor",
            "container",
            "seq",
            "time",
            "nonce",
            "body",
            "mac",
        ];
        if let Some(k) = fields.keys().find(|k| !KNOWN.contains(k)) {
            return Err(AuthError::Malformed(format!(
                "unknown field {k} (want executor, container, seq, time, nonce, body, mac)"
            )));
        }
        Ok(Self {
            executor_id: id("executor")?,
            container_id: id("container")?,
            seq: number("seq")?,
            time_ms: number("time")?,
            nonce: hex_of("nonce", 32)?,
            body_sha256: hex_of("body", 64)?,
            mac: hex_of("mac", 64)?,
        })
    }
}

/// The parts of a signed string, in order (joined with newlines by [`mac`]).
struct SignedParts(Vec<String>);

impl SignedParts {
    fn each(&self) -> Vec<&[u8]> {
        self.0.iter().map(|s| s.as_bytes()).collect()
    }
}

/// A poll whose claim verified: who sent it, and how to sign the answer. From
/// [`Verifier::verify_header`] its body is still unread; [`Verifier::accept_body`] checks it.
#[derive(Clone)]
pub struct Verified {
    pub executor_id: String,
    pub container_id: String,
    seq: u64,
    nonce: String,
    body_sha256: String,
    key: [u8; 32],
}

impl std::fmt::Debug for Verified {
    /// Never prints the key: values end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verified")
            .field("executor_id", &self.executor_id)
            .field("container_id", &self.container_id)
            .finish_non_exhaustive()
    }
}

impl Verified {
    /// The [`REPLY_MAC_HEADER`] value for a reply with this status and body.
    pub fn sign_reply(&self, status: u16, body: &[u8]) -> String {
        hex::encode(mac(
            &self.key,
            &reply_parts(&self.nonce, status, body).each(),
        ))
    }
}

fn reply_parts(nonce: &str, status: u16, body: &[u8]) -> SignedParts {
    SignedParts(vec![
        format!("yarn-am poll reply {VERSION}"),
        nonce.to_string(),
        status.to_string(),
        body_digest(body),
    ])
}

/// The executor's check of a reply to the request it signed as `sent`.
pub fn check_reply(
    key: &[u8],
    sent: &RequestAuth,
    status: u16,
    body: &[u8],
    header: Option<&str>,
) -> Result<(), ReplyError> {
    let given = header.ok_or(ReplyError::Unsigned)?;
    if verify(key, &reply_parts(&sent.nonce, status, body).each(), given) {
        Ok(())
    } else {
        Err(ReplyError::BadMac)
    }
}

/// The AM's side: derives executor keys from the master secret and remembers each executor's
/// last sequence number.
pub struct Verifier {
    master: Vec<u8>,
    last_seq: HashMap<(String, String), u64>,
}

impl Verifier {
    pub fn new(master: &[u8]) -> Self {
        Self {
            master: master.to_vec(),
            last_seq: HashMap::new(),
        }
    }

    /// Checks one poll's header, before its body is read: the MAC under the key it derives
    /// (over every header field, the method, the path and the body's digest as claimed), the
    /// clock, and that the sequence number is above the last accepted one. Records nothing:
    /// the sequence number is recorded by [`Verifier::accept_body`], once the body matched.
    /// `now_ms` is the AM's clock (ms since the epoch).
    pub fn verify_header(
        &self,
        header: Option<&str>,
        method: &str,
        path: &str,
        now_ms: u64,
    ) -> Result<Verified, AuthError> {
        let auth = RequestAuth::parse(header.ok_or(AuthError::Missing)?)?;
        let key = executor_key(&self.master, &auth.executor_id, &auth.container_id);
        if !verify(&key, &auth.signed_parts(method, path).each(), &auth.mac) {
            return Err(AuthError::BadMac);
        }
        let skew_ms = now_ms.abs_diff(auth.time_ms);
        if skew_ms > MAX_SKEW_MS {
            return Err(AuthError::Stale {
                time_ms: auth.time_ms,
                skew_ms,
            });
        }
        self.above_last(&auth.executor_id, &auth.container_id, auth.seq)?;
        Ok(Verified {
            executor_id: auth.executor_id,
            container_id: auth.container_id,
            seq: auth.seq,
            nonce: auth.nonce,
            body_sha256: auth.body_sha256,
            key,
        })
    }

    /// Checks the body of a poll whose header verified against the digest the MAC covers,
    /// then records its sequence number (checked again: another poll with the same number
    /// may have been accepted while this body was read). Only a poll that verified whole is
    /// recorded, so a forger cannot block an executor.
    pub fn accept_body(&mut self, poll: &Verified, body: &[u8]) -> Result<(), AuthError> {
        let digest = body_digest(body);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(
            digest.as_bytes(),
            poll.body_sha256.as_bytes(),
        )) {
            return Err(AuthError::BodyMismatch);
        }
        self.above_last(&poll.executor_id, &poll.container_id, poll.seq)?;
        self.last_seq.insert(
            (poll.executor_id.clone(), poll.container_id.clone()),
            poll.seq,
        );
        Ok(())
    }

    /// Checks one whole poll: [`Verifier::verify_header`], then [`Verifier::accept_body`].
    pub fn verify(
        &mut self,
        header: Option<&str>,
        req: &SignedRequest<'_>,
        now_ms: u64,
    ) -> Result<Verified, AuthError> {
        let verified = self.verify_header(header, req.method, req.path, now_ms)?;
        self.accept_body(&verified, req.body)?;
        Ok(verified)
    }

    fn above_last(&self, executor: &str, container: &str, seq: u64) -> Result<(), AuthError> {
        let last = self
            .last_seq
            .get(&(executor.to_string(), container.to_string()))
            .copied()
            .unwrap_or(0);
        if seq <= last {
            return Err(AuthError::Replay {
                executor: executor.to_string(),
                seq,
                last,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASTER: &[u8] = b"0123456789abcdef0123456789abcdef";
    const NOW: u64 = 1_800_000_000_000;
    const CONTAINER: &str = "container_1_0001_01_000002";

    fn req(body: &[u8]) -> SignedRequest<'_> {
        SignedRequest {
            method: "POST",
            path: "/v1/executors/poll",
            body,
        }
    }

    fn signed(seq: u64, body: &[u8]) -> RequestAuth {
        let key = executor_key(MASTER, "1", CONTAINER);
        RequestAuth::sign(&key, "1", CONTAINER, seq, NOW, [7; 16], &req(body))
    }

    #[test]
    fn a_signed_poll_verifies_and_its_reply_checks() {
        let mut v = Verifier::new(MASTER);
        let a = signed(1, b"{}");
        let ok = v.verify(Some(&a.header_value()), &req(b"{}"), NOW).unwrap();
        assert_eq!(
            (ok.executor_id.as_str(), ok.container_id.as_str()),
            ("1", CONTAINER)
        );
        let body = br#"{"tasks":[],"shutdown":false}"#;
        let mac = ok.sign_reply(200, body);
        let key = executor_key(MASTER, "1", CONTAINER);
        assert_eq!(check_reply(&key, &a, 200, body, Some(&mac)), Ok(()));
    }

    #[test]
    fn tampered_body_path_or_claim_is_refused() {
        let a = signed(1, b"{}");
        let header = a.header_value();
        let mut v = Verifier::new(MASTER);
        assert_eq!(
            v.verify(Some(&header), &req(b"{ }"), NOW).unwrap_err(),
            AuthError::BodyMismatch
        );
        let other_path = SignedRequest {
            path: "/v1/finish",
            ..req(b"{}")
        };
        assert_eq!(
            v.verify(Some(&header), &other_path, NOW).unwrap_err(),
            AuthError::BadMac
        );
        // Claiming to be another executor, or changing any field, breaks the MAC.
        for (from, to) in [
            ("executor=1 ", "executor=2 "),
            ("seq=1 ", "seq=2 "),
            (
                &format!("time={NOW}") as &str,
                &format!("time={}", NOW + 1) as &str,
            ),
            ("nonce=0707", "nonce=0807"),
            (
                &format!("body={}", body_digest(b"{}")) as &str,
                &format!("body={}", body_digest(b"{ }")) as &str,
            ),
            ("container_1_0001_01_000002", "container_1_0001_01_000003"),
        ] {
            let forged = header.replacen(from, to, 1);
            assert_ne!(forged, header);
            assert_eq!(
                v.verify(Some(&forged), &req(b"{}"), NOW).unwrap_err(),
                AuthError::BadMac,
                "{forged}"
            );
        }
        // Nothing of the above was recorded: the genuine poll still passes.
        assert!(v.verify(Some(&header), &req(b"{}"), NOW).is_ok());
    }

    #[test]
    fn another_key_is_refused_and_the_master_secret_itself_does_not_sign_polls() {
        let mut v = Verifier::new(MASTER);
        for key in [
            executor_key(b"another master secret", "1", CONTAINER).to_vec(),
            executor_key(MASTER, "2", CONTAINER).to_vec(),
            MASTER.to_vec(),
        ] {
            let a = RequestAuth::sign(&key, "1", CONTAINER, 1, NOW, [1; 16], &req(b""));
            assert_eq!(
                v.verify(Some(&a.header_value()), &req(b""), NOW)
                    .unwrap_err(),
                AuthError::BadMac
            );
        }
    }

    #[test]
    fn a_replayed_or_older_sequence_number_is_refused() {
        let mut v = Verifier::new(MASTER);
        let first = signed(5, b"a").header_value();
        assert!(v.verify(Some(&first), &req(b"a"), NOW).is_ok());
        assert!(matches!(
            v.verify(Some(&first), &req(b"a"), NOW),
            Err(AuthError::Replay {
                seq: 5,
                last: 5,
                ..
            })
        ));
        let older = signed(4, b"a").header_value();
        assert!(matches!(
            v.verify(Some(&older), &req(b"a"), NOW),
            Err(AuthError::Replay { seq: 4, .. })
        ));
        assert!(v
            .verify(Some(&signed(6, b"a").header_value()), &req(b"a"), NOW)
            .is_ok());
        // Sequence numbers are per executor container: another one starts afresh.
        let key = executor_key(MASTER, "1", "container_1_0001_02_000002");
        let a = RequestAuth::sign(
            &key,
            "1",
            "container_1_0001_02_000002",
            1,
            NOW,
            [0; 16],
            &req(b""),
        );
        assert!(v.verify(Some(&a.header_value()), &req(b""), NOW).is_ok());
    }

    #[test]
    fn a_clock_too_far_off_is_refused() {
        let mut v = Verifier::new(MASTER);
        let h = signed(1, b"").header_value();
        let err = v
            .verify(Some(&h), &req(b""), NOW + MAX_SKEW_MS + 1)
            .unwrap_err();
        assert!(matches!(err, AuthError::Stale { .. }), "{err}");
        assert!(v.verify(Some(&h), &req(b""), NOW - MAX_SKEW_MS).is_ok());
    }

    #[test]
    fn tampered_replies_and_replies_to_another_request_are_refused() {
        let key = executor_key(MASTER, "1", CONTAINER);
        let mut v = Verifier::new(MASTER);
        let a = signed(1, b"");
        let ok = v.verify(Some(&a.header_value()), &req(b""), NOW).unwrap();
        let body = br#"{"tasks":[],"shutdown":true}"#;
        let mac = ok.sign_reply(200, body);
        assert_eq!(
            check_reply(
                &key,
                &a,
                200,
                br#"{"tasks":[],"shutdown":false}"#,
                Some(&mac)
            ),
            Err(ReplyError::BadMac)
        );
        assert_eq!(
            check_reply(&key, &a, 503, body, Some(&mac)),
            Err(ReplyError::BadMac)
        );
        assert_eq!(
            check_reply(&key, &a, 200, body, None),
            Err(ReplyError::Unsigned)
        );
        assert_eq!(
            check_reply(&key, &a, 200, body, Some("zz")),
            Err(ReplyError::BadMac)
        );
        // An old reply does not answer a new request (its nonce differs).
        let b = RequestAuth::sign(&key, "1", CONTAINER, 2, NOW, [8; 16], &req(b""));
        assert_eq!(
            check_reply(&key, &b, 200, body, Some(&mac)),
            Err(ReplyError::BadMac)
        );
        // Nor does a reply signed with another executor's key.
        let other = executor_key(MASTER, "2", CONTAINER);
        assert_eq!(
            check_reply(&other, &a, 200, body, Some(&mac)),
            Err(ReplyError::BadMac)
        );
    }

    #[test]
    fn malformed_headers_are_named() {
        let mut v = Verifier::new(MASTER);
        let good = signed(1, b"").header_value();
        assert_eq!(
            v.verify(None, &req(b""), NOW).unwrap_err(),
            AuthError::Missing
        );
        for (header, says) in [
            ("Bearer abc", "v2"),
            (&good.replace("v2 ", "v1 ") as &str, "v2"),
            ("v2 executor=1", "no container= field"),
            (
                &good.replace("body=", "body=0") as &str,
                "body is not 64 hex digits",
            ),
            (
                &good.replace("seq=1", "seq=x") as &str,
                "seq is not a number",
            ),
            (
                &good.replace("nonce=", "nonce=00") as &str,
                "nonce is not 32 hex digits",
            ),
            (
                &good.replace("executor=1", "executor=1%0A") as &str,
                "not a valid id",
            ),
            (
                &good.replace("executor=1", "executor=a;b") as &str,
                "not a valid id",
            ),
            (&format!("{good} extra=1") as &str, "unknown field extra"),
            (&format!("{good} seq=2") as &str, "seq given twice"),
        ] {
            match v.verify(Some(header), &req(b""), NOW) {
                Err(AuthError::Malformed(why)) => assert!(why.contains(says), "{header}: {why}"),
                other => panic!("{header}: {other:?}"),
            }
        }
    }

    #[test]
    fn executor_keys_differ_per_executor_container_and_master() {
        let k = executor_key(MASTER, "1", CONTAINER);
        assert_ne!(k, executor_key(MASTER, "2", CONTAINER));
        assert_ne!(k, executor_key(MASTER, "1", "container_1_0001_02_000002"));
        assert_ne!(k, executor_key(b"x", "1", CONTAINER));
        assert_eq!(k, executor_key(MASTER, "1", CONTAINER));
        // Field boundaries are part of the input: "1"+"2x" is not "12"+"x".
        assert_ne!(
            executor_key(MASTER, "1", "2x"),
            executor_key(MASTER, "12", "x")
        );
    }
}
