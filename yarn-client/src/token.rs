//! A Hadoop security token (`TokenProto`): what the token file holds, what SASL
//! authenticates with, and what the RM hands out (AMRM and NM tokens).

use crate::proto::common::TokenProto;

/// A Hadoop security token. Identifier and password are opaque bytes to us; SASL uses them.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub identifier: Vec<u8>,
    pub password: Vec<u8>,
    pub kind: String,
    pub service: String,
}

impl std::fmt::Debug for Token {
    /// Never prints the password: tokens end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("kind", &self.kind)
            .field("service", &self.service)
            .field("identifier_len", &self.identifier.len())
            .field("password_len", &self.password.len())
            .finish()
    }
}

impl From<TokenProto> for Token {
    fn from(t: TokenProto) -> Self {
        Self {
            identifier: t.identifier,
            password: t.password,
            kind: t.kind,
            service: t.service,
        }
    }
}

impl From<&Token> for TokenProto {
    fn from(t: &Token) -> Self {
        TokenProto {
            identifier: t.identifier.clone(),
            password: t.password.clone(),
            kind: t.kind.clone(),
            service: t.service.clone(),
        }
    }
}

/// Why a token's URL string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlStringError {
    #[error("token URL string is not URL-safe base64: {0}")]
    Base64(String),
    #[error("token URL string is truncated or malformed at its {0}")]
    Malformed(&'static str),
}

impl Token {
    /// Hadoop's `Token.encodeToUrlString`: the Writable form (identifier, password, kind,
    /// service, each a vint length and bytes) in URL-safe base64 without padding. This is
    /// how WebHDFS hands out tokens, how `delegation=` and the RM's
    /// `X-Hadoop-Delegation-Token` take them, and what YARN's REST submission wants in
    /// `credentials.tokens`.
    pub fn to_url_string(&self) -> String {
        use base64::Engine as _;
        let mut out = Vec::new();
        for field in [
            &self.identifier[..],
            &self.password[..],
            self.kind.as_bytes(),
            self.service.as_bytes(),
        ] {
            crate::credentials::write_vlong(&mut out, field.len() as i64);
            out.extend_from_slice(field);
        }
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(out)
    }

    /// Issue and maximum date (milliseconds since the epoch) of a Hadoop delegation token
    /// (HDFS, RM): its identifier is a version byte, owner, renewer and real user (each a
    /// vint length and UTF-8), then issue date and max date as vlongs
    /// (`AbstractDelegationTokenIdentifier`). `None` for other identifiers.
    pub fn delegation_dates(&self) -> Option<(u64, u64)> {
        let mut buf = self.identifier.get(1..)?;
        for _ in 0..3 {
            let n = usize::try_from(crate::credentials::read_vlong(&mut buf)?).ok()?;
            buf = buf.get(n..)?;
        }
        let issue = u64::try_from(crate::credentials::read_vlong(&mut buf)?).ok()?;
        let max = u64::try_from(crate::credentials::read_vlong(&mut buf)?).ok()?;
        (max >= issue).then_some((issue, max))
    }

    /// The inverse of [`Token::to_url_string`]; padding is accepted too.
    pub fn from_url_string(s: &str) -> Result<Self, UrlStringError> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(s.trim().trim_end_matches('='))
            .map_err(|e| UrlStringError::Base64(e.to_string()))?;
        let mut buf = &bytes[..];
        let mut field = |what| -> Result<Vec<u8>, UrlStringError> {
            let n =
                crate::credentials::read_vlong(&mut buf).ok_or(UrlStringError::Malformed(what))?;
            if n < 0 || n as usize > buf.len() {
                return Err(UrlStringError::Malformed(what));
            }
            let (head, rest) = buf.split_at(n as usize);
            buf = rest;
            Ok(head.to_vec())
        };
        let identifier = field("identifier")?;
        let password = field("password")?;
        let kind =
            String::from_utf8(field("kind")?).map_err(|_| UrlStringError::Malformed("kind"))?;
        let service = String::from_utf8(field("service")?)
            .map_err(|_| UrlStringError::Malformed("service"))?;
        Ok(Token {
            identifier,
            password,
            kind,
            service,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_strings_decode_a_real_hdfs_token_and_round_trip() {
        // As Hadoop 3.4.1's NameNode returned it (GETDELEGATIONTOKEN, kind HDFS_DELEGATION_TOKEN).
        let s = "GwAFYWxpY2UCcm0AigGiCklisYoBoi5V5rECAhRt2JwgZXl1beUl-EAA6g1VZjSg_BVIREZTX0RFTEVHQVRJT05fVE9LRU4PMTI3LjAuMC4xOjE4MDIw";
        let t = Token::from_url_string(s).unwrap();
        assert_eq!(t.kind, "HDFS_DELEGATION_TOKEN");
        assert_eq!(t.service, "127.0.0.1:18020");
        assert_eq!(t.identifier.len(), 27);
        assert_eq!(t.password.len(), 20);
        assert_eq!(t.to_url_string(), s);
        assert!(Token::from_url_string(&format!("{s}==")).is_ok());
        // Owner alice, renewer rm, issued 1795468858801 ms, valid for 7 days.
        let (issue, max) = t.delegation_dates().unwrap();
        assert_eq!(max - issue, 7 * 24 * 3600 * 1000);
        assert!(issue > 1_700_000_000_000, "{issue}");
        let mut other = t.clone();
        other.identifier = vec![0, 5, b'a'];
        assert_eq!(other.delegation_dates(), None);
    }

    #[test]
    fn broken_url_strings_are_errors() {
        assert!(matches!(
            Token::from_url_string("not base64 !"),
            Err(UrlStringError::Base64(_))
        ));
        assert!(matches!(
            Token::from_url_string("GwAF"),
            Err(UrlStringError::Malformed(_))
        ));
    }
}
