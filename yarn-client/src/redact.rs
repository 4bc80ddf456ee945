//! Credentials out of errors and logs. WebHDFS and RM REST carry a delegation token
//! (`delegation=`) or the caller's name (`user.name=`) in the query string, and the URLs of
//! DataNode redirects carry the token too; an error that names its URL (so an operator can
//! repeat the call) would write the token, password included, into container logs, which the
//! NodeManager's web UI serves and log aggregation keeps. So every URL an error or a log line
//! holds is a [`RedactedUrl`], which can only be made by removing those values, and free text
//! from a server (an error page may echo the URL) goes through [`redact`].

use std::fmt;

/// Query parameters whose values never appear in an error or a log.
pub const SECRET_PARAMS: [&str; 2] = ["delegation", "user.name"];

/// What a removed value is replaced with.
pub const REDACTED: &str = "REDACTED";

/// `text` with the value of every `delegation=` and `user.name=` replaced by [`REDACTED`],
/// wherever it occurs (a URL's query, or a URL quoted in a server's error page). A value ends
/// at `&`, `#`, whitespace, a quote, `<`, `>`, `;`, `,` or `)`.
pub fn redact(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    'scan: while i < text.len() {
        for key in SECRET_PARAMS {
            let at_boundary = i == 0
                || !matches!(lower.as_bytes()[i - 1], b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-');
            if at_boundary
                && lower[i..].starts_with(key)
                && lower.as_bytes().get(i + key.len()) == Some(&b'=')
            {
                let start = i + key.len() + 1;
                out.push_str(&text[i..start]);
                let len = text[start..]
                    .find(|c: char| {
                        c.is_whitespace()
                            || matches!(c, '&' | '#' | '"' | '\'' | '<' | '>' | ';' | ',' | ')')
                    })
                    .unwrap_or(text.len() - start);
                if len > 0 {
                    out.push_str(REDACTED);
                }
                i = start + len;
                continue 'scan;
            }
        }
        // Whole characters: the text may hold any UTF-8.
        let c = text[i..].chars().next().expect("i is on a char boundary");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// A URL fit for an error or a log: its `delegation=` and `user.name=` values removed
/// ([`redact`]). The only way to make one is to redact, so a type that holds these holds no
/// credential.
#[derive(Clone, PartialEq, Eq)]
pub struct RedactedUrl(String);

impl RedactedUrl {
    pub fn new(url: &str) -> RedactedUrl {
        RedactedUrl(redact(url))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl From<&str> for RedactedUrl {
    fn from(url: &str) -> Self {
        RedactedUrl::new(url)
    }
}

impl From<String> for RedactedUrl {
    fn from(url: String) -> Self {
        RedactedUrl::new(&url)
    }
}

impl From<&String> for RedactedUrl {
    fn from(url: &String) -> Self {
        RedactedUrl::new(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delegation_and_user_name_values_are_removed_wherever_they_are() {
        assert_eq!(
            redact("http://nn:9870/webhdfs/v1/a?op=APPEND&delegation=EW93bmVy-_x&noredirect=true"),
            "http://nn:9870/webhdfs/v1/a?op=APPEND&delegation=REDACTED&noredirect=true"
        );
        assert_eq!(
            redact("http://rm:8088/ws/v1/cluster/apps?user.name=alice"),
            "http://rm:8088/ws/v1/cluster/apps?user.name=REDACTED"
        );
        assert_eq!(
            redact("<a href=\"http://dn:9864/x?DELEGATION=abc#f\">moved</a> user.name=bob, ok"),
            "<a href=\"http://dn:9864/x?DELEGATION=REDACTED#f\">moved</a> user.name=REDACTED, ok"
        );
        // Other parameters, look-alike names, empty values and other text stay as they were.
        for same in [
            "http://nn/webhdfs/v1/a?op=OPEN&offset=4",
            "x?nodelegation=keep&my.user.name=keep",
            "?delegation=&user.name",
            "naïve délégation=é",
            "",
        ] {
            assert_eq!(redact(same), same);
        }
        assert_eq!(
            RedactedUrl::from("http://nn/?delegation=t").to_string(),
            "http://nn/?delegation=REDACTED"
        );
    }
}
