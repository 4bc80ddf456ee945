//! DIGEST-MD5 (RFC 2831) client with the parameters Hadoop uses for token auth: the user
//! name and password are the standard Base64 of the token's identifier and password bytes,
//! and the digest-uri is `<protocol>/<serverId>` (`/default`). A server's qop follows its
//! `hadoop.rpc.protection` (token connections included); we take the strongest it offers,
//! and for `auth-int`/`auth-conf` hand a [`super::layer`] security layer to the connection.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use md5::{Digest, Md5};
use rand::RngCore;

use super::layer::{new_layer, Side, MAX_OVERHEAD};
use super::{Qop, SaslError, SaslMechanism, SecurityLayer};

/// The receive buffer a DIGEST-MD5 peer has when its challenge names none (RFC 2831).
const DEFAULT_MAXBUF: u32 = 65536;

/// The directives of a server challenge that we use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DigestParams {
    pub realm: Option<String>,
    pub nonce: String,
    pub qop: Vec<String>,
    pub charset_utf8: bool,
    pub algorithm: Option<String>,
    /// The ciphers offered for `auth-conf` (`3des`, `rc4`, ...).
    pub ciphers: Vec<String>,
    /// The server's receive buffer: the largest token we may send it.
    pub maxbuf: Option<u32>,
}

/// Parses `key=value,key="quoted, value",...`. Tolerates spaces and unknown keys; never
/// panics on arbitrary bytes (fuzzed below).
pub fn parse_challenge(bytes: &[u8]) -> Result<DigestParams, SaslError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| SaslError::BadChallenge("challenge is not UTF-8".into()))?;
    let mut params = DigestParams::default();
    let mut nonce = None;
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if chars.next() != Some('=') {
            return Err(SaslError::BadChallenge(format!(
                "directive `{key}` has no value"
            )));
        }
        let key = key.trim().to_ascii_lowercase();
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            let mut closed = false;
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            value.push(n);
                        }
                    }
                    '"' => {
                        closed = true;
                        break;
                    }
                    c => value.push(c),
                }
            }
            if !closed {
                return Err(SaslError::BadChallenge(format!(
                    "unterminated quote in `{key}`"
                )));
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                value.push(c);
                chars.next();
            }
            value = value.trim().to_string();
        }
        match key.as_str() {
            "realm" => params.realm = Some(value),
            "nonce" => nonce = Some(value),
            "qop" => params.qop = comma_list(&value),
            "cipher" => params.ciphers = comma_list(&value.to_ascii_lowercase()),
            "maxbuf" => {
                params.maxbuf = Some(value.parse().map_err(|_| {
                    SaslError::BadChallenge(format!("maxbuf `{value}` is not a number"))
                })?)
            }
            "charset" => params.charset_utf8 = value.eq_ignore_ascii_case("utf-8"),
            "algorithm" => params.algorithm = Some(value),
            _ => {}
        }
    }
    params.nonce = nonce.ok_or_else(|| SaslError::BadChallenge("no nonce".into()))?;
    if params.qop.is_empty() {
        // RFC 2831: an absent qop means "auth".
        params.qop.push("auth".into());
    }
    Ok(params)
}

/// A quoted comma list (`"auth-conf,auth"`), items trimmed, empty ones dropped.
fn comma_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn md5(parts: &[&[u8]]) -> [u8; 16] {
    let mut h = Md5::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// Picks the strongest qop the server offers that we can do: `auth-conf` needs `3des`
/// among the offered ciphers; an AM has no reason to ask for less than the server allows.
/// The challenge is not authenticated, so a man in the middle can strip the stronger
/// qops: anything below `minimum` (the client's `hadoop.rpc.protection`, as Java clients
/// intersect with theirs) is [`SaslError::QopBelowMinimum`].
pub fn choose_qop(
    p: &DigestParams,
    minimum: Qop,
) -> Result<(Qop, Option<&'static str>), SaslError> {
    let has_3des = p.ciphers.iter().any(|c| c == "3des");
    let best = p
        .qop
        .iter()
        .filter_map(|q| Qop::parse(q))
        .filter(|q| *q != Qop::AuthConf || has_3des)
        .max()
        .ok_or_else(|| SaslError::UnsupportedQop {
            offered: p.qop.clone(),
            ciphers: p.ciphers.clone(),
        })?;
    if best < minimum {
        return Err(SaslError::QopBelowMinimum {
            offered: p.qop.clone(),
            minimum,
        });
    }
    Ok((best, (best == Qop::AuthConf).then_some("3des")))
}

/// What the client keeps between its response and the server's SUCCESS.
struct Answered {
    expected_rspauth: String,
    ha1: [u8; 16],
    qop: Qop,
    cipher: Option<&'static str>,
    maxbuf: u32,
}

/// The DIGEST-MD5 client for one connection attempt.
pub struct DigestMd5Client {
    username: String,
    password: String,
    cnonce: String,
    answered: Option<Answered>,
    /// The weakest qop accepted (see [`choose_qop`]).
    min_qop: Qop,
}

impl DigestMd5Client {
    /// From raw token identifier and password bytes (Base64-encoded here, as Hadoop does).
    pub fn new(identifier: &[u8], password: &[u8]) -> Self {
        let mut raw = [0u8; 24];
        rand::thread_rng().fill_bytes(&mut raw);
        Self::with_cnonce(identifier, password, B64.encode(raw))
    }

    /// Fixed cnonce, for test vectors (and for a test server recomputing the client's view).
    pub fn with_cnonce(identifier: &[u8], password: &[u8], cnonce: String) -> Self {
        Self {
            username: B64.encode(identifier),
            password: B64.encode(password),
            cnonce,
            answered: None,
            min_qop: Qop::Auth,
        }
    }

    /// The same client refusing any qop below `min_qop`.
    pub fn with_min_qop(mut self, min_qop: Qop) -> Self {
        self.min_qop = min_qop;
        self
    }

    /// The raw H(A1) of `md5-sess`: `MD5(MD5(user:realm:password) ":" nonce ":" cnonce)`,
    /// the root of both the response and the security layer's keys.
    pub fn ha1(&self, realm: &str, nonce: &str) -> [u8; 16] {
        let inner = md5(&[
            self.username.as_bytes(),
            b":",
            realm.as_bytes(),
            b":",
            self.password.as_bytes(),
        ]);
        md5(&[&inner, b":", nonce.as_bytes(), b":", self.cnonce.as_bytes()])
    }

    /// Computes `(response, rspauth)` for the given challenge parameters and digest-uri.
    pub fn compute(&self, p: &DigestParams, realm: &str, uri: &str, qop: Qop) -> (String, String) {
        let nc = "00000001";
        let ha1 = hex(&self.ha1(realm, &p.nonce));
        let suffix = if qop == Qop::Auth {
            ""
        } else {
            ":00000000000000000000000000000000"
        };
        let kd = |a2: String| {
            let ha2 = hex(&md5(&[a2.as_bytes()]));
            hex(&md5(&[
                ha1.as_bytes(),
                b":",
                p.nonce.as_bytes(),
                b":",
                nc.as_bytes(),
                b":",
                self.cnonce.as_bytes(),
                b":",
                qop.as_str().as_bytes(),
                b":",
                ha2.as_bytes(),
            ]))
        };
        (
            kd(format!("AUTHENTICATE:{uri}{suffix}")),
            kd(format!(":{uri}{suffix}")),
        )
    }
}

impl SaslMechanism for DigestMd5Client {
    fn respond(
        &mut self,
        challenge: &[u8],
        protocol: &str,
        server_id: &str,
    ) -> Result<Vec<u8>, SaslError> {
        if self.answered.is_some() {
            return Err(SaslError::Protocol("second DIGEST-MD5 challenge".into()));
        }
        let p = parse_challenge(challenge)?;
        let (qop, cipher) = choose_qop(&p, self.min_qop)?;
        let maxbuf = p.maxbuf.unwrap_or(DEFAULT_MAXBUF);
        if qop != Qop::Auth && maxbuf as usize <= MAX_OVERHEAD {
            return Err(SaslError::BadChallenge(format!(
                "maxbuf {maxbuf} leaves no room for a message under {qop}"
            )));
        }
        let realm = p.realm.clone().unwrap_or_default();
        let uri = format!("{protocol}/{server_id}");
        let (response, rspauth) = self.compute(&p, &realm, &uri, qop);
        self.answered = Some(Answered {
            expected_rspauth: rspauth,
            ha1: self.ha1(&realm, &p.nonce),
            qop,
            cipher,
            maxbuf,
        });
        let mut out = format!(
            "username=\"{}\",realm=\"{}\",nonce=\"{}\",cnonce=\"{}\",nc=00000001,qop={},digest-uri=\"{}\",response={}",
            self.username, realm, p.nonce, self.cnonce, qop, uri, response
        );
        if let Some(c) = cipher {
            out.push_str(&format!(",cipher=\"{c}\""));
        }
        if p.charset_utf8 {
            out.push_str(",charset=utf-8");
        }
        Ok(out.into_bytes())
    }

    fn verify_success(&mut self, token: Option<&[u8]>) -> Result<Option<SecurityLayer>, SaslError> {
        let a = self
            .answered
            .as_ref()
            .ok_or_else(|| SaslError::Protocol("SUCCESS before we answered a challenge".into()))?;
        let token = token.ok_or_else(|| SaslError::Protocol("SUCCESS without rspauth".into()))?;
        let text = String::from_utf8_lossy(token);
        match text.trim().strip_prefix("rspauth=") {
            Some(got) if got.eq_ignore_ascii_case(&a.expected_rspauth) => {}
            _ => return Err(SaslError::BadServerProof),
        }
        Ok(
            new_layer(a.qop, &a.ha1, Side::Client).map(|(sealer, opener)| SecurityLayer {
                qop: a.qop,
                cipher: a.cipher,
                max_message: a.maxbuf as usize - MAX_OVERHEAD,
                sealer: Box::new(sealer),
                opener: Box::new(opener),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The self-made vector of docs/hadoop-rpc-facts.md, section 2.5.
    #[test]
    fn facts_sheet_test_vector() {
        let id: Vec<u8> = (1..=0x10).collect();
        let pw: Vec<u8> = (0x64..=0x77).collect();
        let c = DigestMd5Client::with_cnonce(&id, &pw, "CNONCE456".into());
        assert_eq!(c.username, "AQIDBAUGBwgJCgsMDQ4PEA==");
        assert_eq!(c.password, "ZGVmZ2hpamtsbW5vcHFyc3R1dnc=");
        let p = parse_challenge(
            b"realm=\"default\",nonce=\"NONCE123\",qop=\"auth\",charset=utf-8,algorithm=md5-sess",
        )
        .unwrap();
        let (resp, rspauth) = c.compute(&p, "default", "/default", Qop::Auth);
        assert_eq!(resp, "f91081767b491eb343baeaad701e72a8");
        assert_eq!(rspauth, "c57e60e1e3b2d55835b4a9906de4a65a");
    }

    #[test]
    fn full_exchange_checks_rspauth() {
        let mut c = DigestMd5Client::with_cnonce(&[1, 2, 3], &[4, 5], "cn".into());
        let resp = c
            .respond(
                b"realm=\"default\",nonce=\"n\",qop=\"auth\",charset=utf-8",
                "",
                "default",
            )
            .unwrap();
        let resp = String::from_utf8(resp).unwrap();
        assert!(resp.contains("digest-uri=\"/default\""), "{resp}");
        assert!(resp.contains("charset=utf-8"));
        assert!(resp.contains("qop=auth,"), "{resp}");
        assert!(!resp.contains("cipher"), "{resp}");
        let expected = c.answered.as_ref().unwrap().expected_rspauth.clone();
        let good = format!("rspauth={expected}");
        assert!(c.verify_success(Some(good.as_bytes())).unwrap().is_none());
        assert!(matches!(
            c.verify_success(Some(b"rspauth=00000000000000000000000000000000")),
            Err(SaslError::BadServerProof)
        ));
    }

    #[test]
    fn qop_lists_and_missing_nonce() {
        let p = parse_challenge(
            b"realm=\"default\",nonce=\"a\\\"b\",qop=\"auth-conf,auth\",cipher=\"3des,rc4\"",
        )
        .unwrap();
        assert_eq!(p.nonce, "a\"b");
        assert_eq!(p.qop, vec!["auth-conf", "auth"]);
        assert_eq!(p.ciphers, vec!["3des", "rc4"]);
        assert_eq!(p.maxbuf, None);
        assert!(parse_challenge(b"realm=\"x\"").is_err());
        assert!(parse_challenge(b"nonce=\"x").is_err());
        assert!(parse_challenge(b"nonce=\"x\",maxbuf=lots").is_err());
        assert_eq!(
            parse_challenge(b"nonce=x,maxbuf=\"4096\"").unwrap().maxbuf,
            Some(4096)
        );
        let mut c = DigestMd5Client::new(b"i", b"p");
        assert!(matches!(
            c.respond(
                b"nonce=\"x\",qop=\"auth-conf\",cipher=\"rc4,des\"",
                "",
                "default"
            ),
            Err(SaslError::UnsupportedQop { .. })
        ));
        let mut c = DigestMd5Client::new(b"i", b"p");
        assert!(matches!(
            c.respond(
                b"nonce=\"x\",qop=\"auth-conf,auth-int\",maxbuf=20",
                "",
                "default"
            ),
            Err(SaslError::BadChallenge(_))
        ));
    }

    /// The strongest offered qop we can do; `auth-conf` only with `3des`.
    #[test]
    fn choose_qop_prefers_the_strongest_usable() {
        let pick = |ch: &[u8]| choose_qop(&parse_challenge(ch).unwrap(), Qop::Auth).ok();
        assert_eq!(pick(b"nonce=n"), Some((Qop::Auth, None)));
        assert_eq!(
            pick(b"nonce=n,qop=\"auth,auth-int\""),
            Some((Qop::AuthInt, None))
        );
        assert_eq!(
            pick(b"nonce=n,qop=\"auth-conf,auth\",cipher=\"3des,rc4,des,rc4-56,rc4-40\""),
            Some((Qop::AuthConf, Some("3des")))
        );
        assert_eq!(
            pick(b"nonce=n,qop=\"auth-conf,auth-int\",cipher=\"rc4\""),
            Some((Qop::AuthInt, None))
        );
        assert_eq!(pick(b"nonce=n,qop=\"auth-conf\",cipher=\"rc4\""), None);
        assert_eq!(pick(b"nonce=n,qop=\"something-else\""), None);
    }

    /// Under auth-conf the response names the qop and the cipher, and the digest covers the
    /// 32-zero suffix; SUCCESS yields the layer.
    #[test]
    fn auth_conf_exchange_yields_a_layer() {
        let mut c = DigestMd5Client::with_cnonce(&[1, 2, 3], &[4, 5], "cn".into());
        let ch =
            b"realm=\"default\",nonce=\"n\",qop=\"auth-conf\",charset=utf-8,cipher=\"3des,rc4\"";
        let resp = String::from_utf8(c.respond(ch, "", "default").unwrap()).unwrap();
        assert!(resp.contains("qop=auth-conf,"), "{resp}");
        assert!(resp.contains("cipher=\"3des\""), "{resp}");
        let p = parse_challenge(ch).unwrap();
        let (want, rspauth) = c.compute(&p, "default", "/default", Qop::AuthConf);
        assert!(resp.contains(&format!("response={want}")), "{resp}");
        assert_ne!(want, c.compute(&p, "default", "/default", Qop::Auth).0);
        let layer = c
            .verify_success(Some(format!("rspauth={rspauth}").as_bytes()))
            .unwrap()
            .expect("auth-conf has a layer");
        assert_eq!(layer.qop, Qop::AuthConf);
        assert_eq!(layer.cipher, Some("3des"));
        assert_eq!(layer.max_message, 65536 - super::MAX_OVERHEAD);
    }

    proptest::proptest! {
        #[test]
        fn challenge_parser_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
            let _ = parse_challenge(&bytes);
            let mut c = DigestMd5Client::new(b"id", b"pw");
            let _ = c.respond(&bytes, "", "default");
        }

        #[test]
        fn challenge_parser_never_panics_on_text(s in "[a-z=\",\\\\ ]{0,64}") {
            let _ = parse_challenge(s.as_bytes());
        }
    }
}
