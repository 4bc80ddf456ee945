//! YARN keys an AM needs, Hadoop's defaults for them, and RM address resolution
//! including ResourceManager HA.
//!
//! Defaults follow `yarn-default.xml`: every RM address derives from
//! `yarn.resourcemanager.hostname` (default `0.0.0.0`, i.e. "you forgot to configure
//! it"), so setting the hostname alone moves all of them.
//!
//! With HA (`yarn.resourcemanager.ha.enabled`), each id in `yarn.resourcemanager.ha.rm-ids`
//! gets its address from `<service key>.<id>` or else from
//! `yarn.resourcemanager.hostname.<id>` plus the service's default port (the two ways
//! Hadoop's ResourceManagerHA guide documents). Callers try the candidates in order and
//! move on at a connection failure or `StandbyException`.

use super::addr::HostPort;
use super::configuration::Configuration;
use super::error::ConfError;

pub const RM_HOSTNAME: &str = "yarn.resourcemanager.hostname";
pub const RM_ADDRESS: &str = "yarn.resourcemanager.address";
pub const RM_SCHEDULER_ADDRESS: &str = "yarn.resourcemanager.scheduler.address";
pub const RM_WEBAPP_ADDRESS: &str = "yarn.resourcemanager.webapp.address";
pub const RM_WEBAPP_HTTPS_ADDRESS: &str = "yarn.resourcemanager.webapp.https.address";
/// `HTTP_ONLY` (default), `HTTPS_ONLY` or `HTTP_AND_HTTPS`: which of the two web addresses
/// the RM serves ([`rm_web_urls`]).
pub const YARN_HTTP_POLICY: &str = "yarn.http.policy";
pub const RM_HA_ENABLED: &str = "yarn.resourcemanager.ha.enabled";
pub const RM_HA_IDS: &str = "yarn.resourcemanager.ha.rm-ids";
pub const NM_HOSTNAME: &str = "yarn.nodemanager.hostname";
pub const NM_ADDRESS: &str = "yarn.nodemanager.address";

/// `yarn-default.xml` values for the keys above.
pub const YARN_DEFAULTS: &[(&str, &str)] = &[
    (RM_HOSTNAME, "0.0.0.0"),
    (RM_ADDRESS, "${yarn.resourcemanager.hostname}:8032"),
    (
        RM_SCHEDULER_ADDRESS,
        "${yarn.resourcemanager.hostname}:8030",
    ),
    (RM_WEBAPP_ADDRESS, "${yarn.resourcemanager.hostname}:8088"),
    (
        RM_WEBAPP_HTTPS_ADDRESS,
        "${yarn.resourcemanager.hostname}:8090",
    ),
    (YARN_HTTP_POLICY, "HTTP_ONLY"),
    (RM_HA_ENABLED, "false"),
    (NM_HOSTNAME, "0.0.0.0"),
    // Port 0: the NM picks an ephemeral port unless configured (docs/hadoop-rpc-facts.md 7.3).
    (NM_ADDRESS, "${yarn.nodemanager.hostname}:0"),
];

/// Add [`YARN_DEFAULTS`] as the lowest-precedence resource (call before site files).
pub fn with_yarn_defaults(mut conf: Configuration) -> Configuration {
    for (key, value) in YARN_DEFAULTS {
        if conf.get_raw(key).is_none() {
            conf.set_from(*key, *value, "yarn-default (built in)");
        }
    }
    conf
}

/// The RM services an AM or client talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RmService {
    /// ApplicationClientProtocol (submission), port 8032.
    Client,
    /// ApplicationMasterProtocol (register/allocate/finish), port 8030.
    Scheduler,
    /// REST and web UI, port 8088.
    WebApp,
    /// REST and web UI over TLS, port 8090 (`yarn.http.policy` `HTTPS_ONLY`).
    WebAppHttps,
}

impl RmService {
    pub fn key(self) -> &'static str {
        match self {
            RmService::Client => RM_ADDRESS,
            RmService::Scheduler => RM_SCHEDULER_ADDRESS,
            RmService::WebApp => RM_WEBAPP_ADDRESS,
            RmService::WebAppHttps => RM_WEBAPP_HTTPS_ADDRESS,
        }
    }

    pub fn default_port(self) -> u16 {
        match self {
            RmService::Client => 8032,
            RmService::Scheduler => 8030,
            RmService::WebApp => 8088,
            RmService::WebAppHttps => 8090,
        }
    }
}

/// One place a ResourceManager may be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RmCandidate {
    /// The HA id (`rm1`...), `None` without HA.
    pub rm_id: Option<String>,
    pub address: HostPort,
}

/// Addresses to try for `service`, in order: one without HA, one per RM id with HA.
pub fn rm_candidates(
    conf: &Configuration,
    service: RmService,
) -> Result<Vec<RmCandidate>, ConfError> {
    let port = Some(service.default_port());
    if !conf.get_bool(RM_HA_ENABLED, false)? {
        return Ok(vec![RmCandidate {
            rm_id: None,
            address: conf.socket_addr(service.key(), port)?,
        }]);
    }
    let ids = conf.get_strings(RM_HA_IDS)?;
    if ids.is_empty() {
        return Err(ConfError::NoRmIds);
    }
    ids.into_iter()
        .map(|id| {
            let per_id = format!("{}.{id}", service.key());
            let host_key = format!("{RM_HOSTNAME}.{id}");
            let address = if conf.get_trimmed(&per_id)?.is_some() {
                conf.socket_addr(&per_id, port)?
            } else if let Some(host) = conf.get_trimmed(&host_key)? {
                HostPort {
                    host,
                    port: service.default_port(),
                }
            } else {
                return Err(ConfError::MissingHaAddress {
                    rm_id: id,
                    key: service.key().to_string(),
                });
            };
            Ok(RmCandidate {
                rm_id: Some(id),
                address,
            })
        })
        .collect()
}

/// Whether a Hadoop `*.http.policy` value says the web server speaks only TLS. Hadoop's
/// `HttpConfig.Policy` names: `HTTP_ONLY`, `HTTPS_ONLY`, `HTTP_AND_HTTPS` (the last serves
/// both; the plain address is used then, as Hadoop's own clients do).
pub fn https_only(conf: &Configuration, key: &str) -> Result<bool, ConfError> {
    let value = conf.get_trimmed(key)?.unwrap_or_default();
    match value.to_ascii_uppercase().as_str() {
        "" | "HTTP_ONLY" | "HTTP_AND_HTTPS" => Ok(false),
        "HTTPS_ONLY" => Ok(true),
        _ => Err(ConfError::InvalidValue {
            key: key.to_string(),
            value,
            expected: "HTTP policy (HTTP_ONLY, HTTPS_ONLY or HTTP_AND_HTTPS)",
        }),
    }
}

/// The RM web app's base URLs, one per RM (HA order): `https://` and
/// `yarn.resourcemanager.webapp.https.address` when `yarn.http.policy` is `HTTPS_ONLY`,
/// else `http://` and `yarn.resourcemanager.webapp.address`.
pub fn rm_web_urls(conf: &Configuration) -> Result<Vec<String>, ConfError> {
    let (scheme, service) = if https_only(conf, YARN_HTTP_POLICY)? {
        ("https", RmService::WebAppHttps)
    } else {
        ("http", RmService::WebApp)
    };
    Ok(rm_candidates(conf, service)?
        .into_iter()
        .map(|c| format!("{scheme}://{}", c.address))
        .collect())
}

/// This node's NM address as configured (port 0 = ephemeral; then use the `NM_PORT`
/// environment variable the NM sets in containers instead).
pub fn nodemanager_address(conf: &Configuration) -> Result<HostPort, ConfError> {
    conf.socket_addr(NM_ADDRESS, Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(props: &[(&str, &str)]) -> Configuration {
        let mut c = with_yarn_defaults(Configuration::new());
        for (k, v) in props {
            c.set(*k, *v);
        }
        c
    }

    fn addrs(c: &Configuration, s: RmService) -> Vec<String> {
        rm_candidates(c, s)
            .unwrap()
            .into_iter()
            .map(|c| format!("{}={}", c.rm_id.unwrap_or_default(), c.address))
            .collect()
    }

    #[test]
    fn defaults_derive_from_hostname() {
        let c = conf(&[]);
        assert_eq!(addrs(&c, RmService::Scheduler), vec!["=0.0.0.0:8030"]);
        assert_eq!(c.source(RM_HOSTNAME), Some("yarn-default (built in)"));
        let c = conf(&[(RM_HOSTNAME, "rm.example")]);
        assert_eq!(addrs(&c, RmService::Client), vec!["=rm.example:8032"]);
        assert_eq!(addrs(&c, RmService::Scheduler), vec!["=rm.example:8030"]);
        assert_eq!(addrs(&c, RmService::WebApp), vec!["=rm.example:8088"]);
        assert_eq!(nodemanager_address(&c).unwrap().to_string(), "0.0.0.0:0");
    }

    #[test]
    fn https_only_moves_the_rm_web_address_to_the_https_one() {
        let c = conf(&[(RM_HOSTNAME, "rm")]);
        assert_eq!(rm_web_urls(&c).unwrap(), ["http://rm:8088"]);
        let c = conf(&[(RM_HOSTNAME, "rm"), (YARN_HTTP_POLICY, "HTTPS_ONLY")]);
        assert_eq!(rm_web_urls(&c).unwrap(), ["https://rm:8090"]);
        let c = conf(&[
            (YARN_HTTP_POLICY, "https_only"),
            (RM_HA_ENABLED, "true"),
            (RM_HA_IDS, "rm1,rm2"),
            ("yarn.resourcemanager.hostname.rm1", "a"),
            ("yarn.resourcemanager.webapp.https.address.rm2", "b:9443"),
        ]);
        assert_eq!(
            rm_web_urls(&c).unwrap(),
            ["https://a:8090", "https://b:9443"]
        );
        // Both served: the plain one, as Hadoop's clients use it.
        let c = conf(&[(RM_HOSTNAME, "rm"), (YARN_HTTP_POLICY, "HTTP_AND_HTTPS")]);
        assert_eq!(rm_web_urls(&c).unwrap(), ["http://rm:8088"]);
        let e = rm_web_urls(&conf(&[(YARN_HTTP_POLICY, "TLS")])).unwrap_err();
        assert!(e.to_string().contains(YARN_HTTP_POLICY), "{e}");
    }

    #[test]
    fn explicit_address_wins_over_hostname() {
        let c = conf(&[(RM_HOSTNAME, "rm"), (RM_SCHEDULER_ADDRESS, "sched:9999")]);
        assert_eq!(addrs(&c, RmService::Scheduler), vec!["=sched:9999"]);
    }

    #[test]
    fn ha_candidates_per_id() {
        let c = conf(&[
            (RM_HA_ENABLED, "true"),
            (RM_HA_IDS, "rm1, rm2"),
            ("yarn.resourcemanager.hostname.rm1", "a.example"),
            ("yarn.resourcemanager.hostname.rm2", "b.example"),
            (
                "yarn.resourcemanager.scheduler.address.rm2",
                "b-sched.example:7030",
            ),
        ]);
        assert_eq!(
            addrs(&c, RmService::Scheduler),
            vec!["rm1=a.example:8030", "rm2=b-sched.example:7030"]
        );
        assert_eq!(
            addrs(&c, RmService::WebApp),
            vec!["rm1=a.example:8088", "rm2=b.example:8088"]
        );
    }

    #[test]
    fn ha_misconfiguration_is_reported() {
        let c = conf(&[(RM_HA_ENABLED, "true")]);
        assert!(matches!(
            rm_candidates(&c, RmService::Scheduler),
            Err(ConfError::NoRmIds)
        ));
        let c = conf(&[(RM_HA_ENABLED, "true"), (RM_HA_IDS, "rm1")]);
        let err = rm_candidates(&c, RmService::Scheduler).unwrap_err();
        assert!(err.to_string().contains("rm1"), "{err}");
    }
}
