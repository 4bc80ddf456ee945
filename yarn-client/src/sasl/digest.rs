//! DIGEST-MD5 (RFC 2831) client with the parameters Hadoop uses for token auth: the user
//! name and password are the standard Base64 of the token's identifier and password bytes,
//! the digest-uri is `<protocol>/<serverId>` (`/default`), and only qop `auth` is offered
//! by default clusters, so there is no security layer to implement.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use md5::{Digest, Md5};
use rand::RngCore;

use super::{SaslError, SaslMechanism};

/// The directives of a server challenge that we use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DigestParams {
    pub realm: Option<String>,
    pub nonce: String,
    pub qop: Vec<String>,
    pub charset_utf8: bool,
    pub algorithm: Option<String>,
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
            "qop" => {
                params.qop = value
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
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

/// The DIGEST-MD5 client for one connection attempt.
pub struct DigestMd5Client {
    username: String,
    password: String,
    cnonce: String,
    expected_rspauth: Option<String>,
}

impl DigestMd5Client {
    /// From raw token identifier and password bytes (Base64-encoded here, as Hadoop does).
    pub fn new(identifier: &[u8], password: &[u8]) -> Self {
        let mut raw = [0u8; 24];
        rand::thread_rng().fill_bytes(&mut raw);
        Self::with_cnonce(identifier, password, B64.encode(raw))
    }

    /// Fixed cnonce, for test vectors.
    pub fn with_cnonce(identifier: &[u8], password: &[u8], cnonce: String) -> Self {
        Self {
            username: B64.encode(identifier),
            password: B64.encode(password),
            cnonce,
            expected_rspauth: None,
        }
    }

    /// Computes `(response, rspauth)` for the given challenge parameters and digest-uri.
    pub fn compute(&self, p: &DigestParams, realm: &str, uri: &str, qop: &str) -> (String, String) {
        let nc = "00000001";
        let inner = md5(&[
            self.username.as_bytes(),
            b":",
            realm.as_bytes(),
            b":",
            self.password.as_bytes(),
        ]);
        let ha1 = hex(&md5(&[
            &inner,
            b":",
            p.nonce.as_bytes(),
            b":",
            self.cnonce.as_bytes(),
        ]));
        let suffix = if qop == "auth" {
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
                qop.as_bytes(),
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
    fn method(&self) -> &str {
        "TOKEN"
    }
    fn mechanism(&self) -> &str {
        "DIGEST-MD5"
    }

    fn respond(
        &mut self,
        challenge: &[u8],
        protocol: &str,
        server_id: &str,
    ) -> Result<Vec<u8>, SaslError> {
        if self.expected_rspauth.is_some() {
            return Err(SaslError::Protocol("second DIGEST-MD5 challenge".into()));
        }
        let p = parse_challenge(challenge)?;
        if !p.qop.iter().any(|q| q == "auth") {
            return Err(SaslError::UnsupportedQop { offered: p.qop });
        }
        let realm = p.realm.clone().unwrap_or_default();
        let uri = format!("{protocol}/{server_id}");
        let (response, rspauth) = self.compute(&p, &realm, &uri, "auth");
        self.expected_rspauth = Some(rspauth);
        let mut out = format!(
            "username=\"{}\",realm=\"{}\",nonce=\"{}\",cnonce=\"{}\",nc=00000001,qop=auth,digest-uri=\"{}\",response={}",
            self.username, realm, p.nonce, self.cnonce, uri, response
        );
        if p.charset_utf8 {
            out.push_str(",charset=utf-8");
        }
        Ok(out.into_bytes())
    }

    fn verify_success(&mut self, token: Option<&[u8]>) -> Result<(), SaslError> {
        let expected = self
            .expected_rspauth
            .as_deref()
            .ok_or_else(|| SaslError::Protocol("SUCCESS before we answered a challenge".into()))?;
        let token = token.ok_or_else(|| SaslError::Protocol("SUCCESS without rspauth".into()))?;
        let text = String::from_utf8_lossy(token);
        match text.trim().strip_prefix("rspauth=") {
            Some(got) if got.eq_ignore_ascii_case(expected) => Ok(()),
            _ => Err(SaslError::BadServerProof),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The self-made vector of the facts sheet, section 2.5.
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
        let (resp, rspauth) = c.compute(&p, "default", "/default", "auth");
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
        let good = format!("rspauth={}", c.expected_rspauth.clone().unwrap());
        assert!(c.verify_success(Some(good.as_bytes())).is_ok());
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
        assert!(parse_challenge(b"realm=\"x\"").is_err());
        assert!(parse_challenge(b"nonce=\"x").is_err());
        let mut c = DigestMd5Client::new(b"i", b"p");
        assert!(matches!(
            c.respond(b"nonce=\"x\",qop=\"auth-conf\"", "", "default"),
            Err(SaslError::UnsupportedQop { .. })
        ));
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
