//! `host:port` values, parsed the way Hadoop's `NetUtils.createSocketAddr` accepts them:
//! `host`, `host:port`, `[v6]:port` or a URI `scheme://host:port/path`. No DNS here:
//! resolving is the connecting code's job (and must be redone on reconnect).

use std::fmt;

/// An unresolved network address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Parse `target`; a missing port takes `default_port`. `Err` holds a reason.
pub(crate) fn parse_host_port(
    target: &str,
    default_port: Option<u16>,
) -> Result<HostPort, &'static str> {
    let target = target.trim();
    let authority = match target.find("://") {
        Some(i) => {
            let rest = &target[i + 3..];
            rest.split(['/', '?', '#']).next().unwrap_or(rest)
        }
        None => target,
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, rest) = v6.split_once(']').ok_or("unclosed '[' in IPv6 address")?;
        match rest {
            "" => (host, None),
            r => (host, Some(r.strip_prefix(':').ok_or("junk after ']'")?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("no host");
    }
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| "port is not a number in 0..=65535")?,
        None => default_port.ok_or("no port")?,
    };
    Ok(HostPort {
        host: host.to_string(),
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(host: &str, port: u16) -> HostPort {
        HostPort {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn accepts_hadoop_forms() {
        assert_eq!(parse_host_port("rm:8030", None), Ok(hp("rm", 8030)));
        assert_eq!(parse_host_port(" rm ", Some(8030)), Ok(hp("rm", 8030)));
        assert_eq!(
            parse_host_port("hdfs://nn:9000/x", None),
            Ok(hp("nn", 9000))
        );
        assert_eq!(parse_host_port("[::1]:8030", None), Ok(hp("::1", 8030)));
        assert_eq!(parse_host_port("[::1]", Some(1)), Ok(hp("::1", 1)));
        assert_eq!(hp("::1", 8030).to_string(), "[::1]:8030");
    }

    #[test]
    fn rejects_bad_forms() {
        for bad in ["", ":8030", "rm:", "rm:99999", "rm:x", "[::1", "[::1]x"] {
            assert!(parse_host_port(bad, Some(1)).is_err(), "{bad:?}");
        }
        assert!(parse_host_port("rm", None).is_err());
    }
}
