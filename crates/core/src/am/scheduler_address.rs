//! Which scheduler address the AM talks ApplicationMasterProtocol to, sans-IO: the RM's
//! (as `submit` found it and wrote it into the spec), or the AMRMProxy of the NodeManager
//! that launched the AM container.
//!
//! Why it matters: a NodeManager whose configuration enables the AMRMProxy
//! (`yarn.nodemanager.amrmproxy.enabled`, or distributed scheduling, which implies it)
//! replaces the RM's AMRM token in every AM container it starts with a token of its own
//! secret manager. The RM refuses that token, so such an AM must register, allocate and
//! unregister through the proxy, which forwards to the RM (or, under federation, to several
//! sub-clusters). Nothing in the token tells the two apart: both are issued with an empty
//! service and sit under the same alias, so the NM's token replaces the RM's. What does tell
//! is the NodeManager's configuration, which the container sees through `HADOOP_CONF_DIR`
//! (in the NM's default environment whitelist); a Java AM finds the proxy the same way,
//! through the NM-side `yarn.resourcemanager.scheduler.address`. The facts and where they
//! were read: docs/hadoop-rpc-facts.md, "AMRMProxy".
//!
//! The proxy is a service of the AM's own NodeManager, so its host is that node
//! (`NM_HOST`): the configured host is used only when it names a host concretely (not a
//! wildcard, not an unexpanded `${...}` such as a per-daemon system property the container
//! does not have). The submitter's address stays the fallback: it is tried after the proxy
//! fails, so that a container whose configuration is not its NodeManager's still registers.

use std::fmt;

/// `yarn.nodemanager.amrmproxy.enabled`.
pub const AMRMPROXY_ENABLED_KEY: &str = "yarn.nodemanager.amrmproxy.enabled";
/// `yarn.nodemanager.distributed-scheduling.enabled`: the NodeManager starts the proxy for
/// it too (`ContainerManagerImpl.serviceInit`).
pub const DISTRIBUTED_SCHEDULING_KEY: &str = "yarn.nodemanager.distributed-scheduling.enabled";
/// `yarn.nodemanager.amrmproxy.address`.
pub const AMRMPROXY_ADDRESS_KEY: &str = "yarn.nodemanager.amrmproxy.address";
/// `YarnConfiguration.DEFAULT_AMRM_PROXY_PORT`.
pub const DEFAULT_AMRMPROXY_PORT: u16 = 8049;

/// What the container's Hadoop configuration (its NodeManager's) says about the proxy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeProxyConf {
    pub amrmproxy_enabled: bool,
    pub distributed_scheduling: bool,
    /// The raw value of [`AMRMPROXY_ADDRESS_KEY`], `None` when unset.
    pub address: Option<String>,
}

/// Why the AM uses the address it uses (logged at start-up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// No Hadoop configuration in the container: nothing says a proxy runs.
    NoNodeConf,
    /// The container's configuration leaves the proxy off.
    ProxyOff,
    /// The configuration turns the proxy on with this key.
    ProxyOn { key: &'static str },
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::NoNodeConf => f.write_str(
                "no Hadoop configuration in the container: the submitter's RM scheduler address",
            ),
            Why::ProxyOff => f.write_str(
                "the NodeManager's configuration runs no AMRMProxy: the submitter's RM \
                 scheduler address",
            ),
            Why::ProxyOn { key } => write!(
                f,
                "the NodeManager's configuration sets {key}: its AMRMProxy holds this \
                 container's AMRM token"
            ),
        }
    }
}

/// The address to register at, and the one to try when that fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerChoice {
    pub address: String,
    /// The submitter's RM address when `address` is the proxy's.
    pub fallback: Option<String>,
    pub via_proxy: bool,
    pub why: Why,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    #[error("the spec names no RM scheduler address and no AMRMProxy runs on this node")]
    NoAddress,
    #[error("the NodeManager's {AMRMPROXY_ADDRESS_KEY} {0:?} has no port number")]
    BadProxyAddress(String),
}

/// Chooses the scheduler address: the NodeManager's AMRMProxy when its configuration
/// (`node`, `None` without one) turns it on, else the submitter's first RM address.
/// `nm_host` is the container's `NM_HOST`.
pub fn choose(
    submitter: &[String],
    nm_host: &str,
    node: Option<&NodeProxyConf>,
) -> Result<SchedulerChoice, ChoiceError> {
    let rm = submitter.first().cloned();
    let key = match node {
        None => None,
        Some(c) if c.amrmproxy_enabled => Some(AMRMPROXY_ENABLED_KEY),
        Some(c) if c.distributed_scheduling => Some(DISTRIBUTED_SCHEDULING_KEY),
        Some(_) => None,
    };
    let Some(key) = key else {
        let why = if node.is_some() {
            Why::ProxyOff
        } else {
            Why::NoNodeConf
        };
        return Ok(SchedulerChoice {
            address: rm.ok_or(ChoiceError::NoAddress)?,
            fallback: None,
            via_proxy: false,
            why,
        });
    };
    let configured = node.and_then(|c| c.address.as_deref());
    Ok(SchedulerChoice {
        address: proxy_address(configured, nm_host)?,
        fallback: rm,
        via_proxy: true,
        why: Why::ProxyOn { key },
    })
}

/// `host:port` of the proxy from the configured value (Hadoop's default `0.0.0.0:8049` when
/// unset): the port as configured (8049 when the value names none, as `getSocketAddr` with
/// a default port), the host as configured only when it names one concretely.
fn proxy_address(configured: Option<&str>, nm_host: &str) -> Result<String, ChoiceError> {
    let value = configured.map(str::trim).filter(|v| !v.is_empty());
    let Some(value) = value else {
        return Ok(format!("{nm_host}:{DEFAULT_AMRMPROXY_PORT}"));
    };
    let (host, port) =
        split_host_port(value).ok_or_else(|| ChoiceError::BadProxyAddress(value.to_string()))?;
    let host = if concrete_host(host) { host } else { nm_host };
    Ok(format!("{host}:{port}"))
}

/// `host[:port]`, an IPv6 host in brackets; `None` when a port is there but is not one.
fn split_host_port(value: &str) -> Option<(&str, u16)> {
    let (host, port) = if let Some(rest) = value.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let host = &value[..inside.len() + 2];
        match after.strip_prefix(':') {
            Some(p) => (host, Some(p)),
            None if after.is_empty() => (host, None),
            None => return None,
        }
    } else {
        match value.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (value, None),
        }
    };
    let port = match port {
        None => DEFAULT_AMRMPROXY_PORT,
        Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0)?,
    };
    Some((host, port))
}

/// Whether `host` names one machine: not empty, not a wildcard bind address, not a
/// variable left unexpanded.
fn concrete_host(host: &str) -> bool {
    !(host.is_empty() || host.contains("${") || matches!(host, "0.0.0.0" | "::" | "[::]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rm() -> Vec<String> {
        vec!["rm:8030".into(), "rm2:8030".into()]
    }

    fn on(address: Option<&str>) -> NodeProxyConf {
        NodeProxyConf {
            amrmproxy_enabled: true,
            distributed_scheduling: false,
            address: address.map(Into::into),
        }
    }

    #[test]
    fn without_a_node_configuration_the_submitters_address_is_used() {
        let c = choose(&rm(), "nm1", None).unwrap();
        assert_eq!(c.address, "rm:8030");
        assert_eq!(
            (c.fallback, c.via_proxy, c.why),
            (None, false, Why::NoNodeConf)
        );
    }

    #[test]
    fn a_configuration_without_the_proxy_keeps_the_submitters_address() {
        let node = NodeProxyConf {
            address: Some("nm1:8049".into()),
            ..Default::default()
        };
        let c = choose(&rm(), "nm1", Some(&node)).unwrap();
        assert_eq!((c.address.as_str(), c.via_proxy), ("rm:8030", false));
        assert_eq!(c.why, Why::ProxyOff);
    }

    #[test]
    fn the_proxy_on_the_default_address_is_reached_on_the_nodemanagers_host() {
        let c = choose(&rm(), "nm2", Some(&on(None))).unwrap();
        assert_eq!(c.address, "nm2:8049");
        assert_eq!(c.fallback.as_deref(), Some("rm:8030"));
        assert!(c.via_proxy);
        assert_eq!(
            c.why,
            Why::ProxyOn {
                key: AMRMPROXY_ENABLED_KEY
            }
        );
    }

    #[test]
    fn wildcards_and_unexpanded_variables_mean_the_nodemanagers_host() {
        for v in [
            "0.0.0.0:8049",
            "${it.host}:8049",
            ":8049",
            "[::]:8049",
            "  0.0.0.0:8049 ",
        ] {
            assert_eq!(proxy_address(Some(v), "nm3").unwrap(), "nm3:8049", "{v:?}");
        }
        assert_eq!(
            proxy_address(Some("0.0.0.0:9049"), "nm3").unwrap(),
            "nm3:9049"
        );
    }

    #[test]
    fn a_concrete_configured_host_is_kept() {
        assert_eq!(
            proxy_address(Some("10.0.0.7:8049"), "nm3").unwrap(),
            "10.0.0.7:8049"
        );
        assert_eq!(
            proxy_address(Some("localhost"), "nm3").unwrap(),
            "localhost:8049"
        );
        assert_eq!(
            proxy_address(Some("[fe80::1]:7000"), "nm3").unwrap(),
            "[fe80::1]:7000"
        );
    }

    #[test]
    fn a_proxy_address_without_a_usable_port_is_an_error() {
        for v in ["nm1:${port}", "nm1:0", "nm1:70000", "nm1:", "[fe80::1]x"] {
            assert_eq!(
                choose(&rm(), "nm1", Some(&on(Some(v)))),
                Err(ChoiceError::BadProxyAddress(v.to_string())),
                "{v:?}"
            );
        }
    }

    #[test]
    fn distributed_scheduling_starts_the_proxy_too() {
        let node = NodeProxyConf {
            distributed_scheduling: true,
            ..Default::default()
        };
        let c = choose(&rm(), "nm1", Some(&node)).unwrap();
        assert_eq!(c.address, "nm1:8049");
        assert_eq!(
            c.why,
            Why::ProxyOn {
                key: DISTRIBUTED_SCHEDULING_KEY
            }
        );
    }

    #[test]
    fn no_address_at_all_is_an_error_but_the_proxy_alone_suffices() {
        assert_eq!(choose(&[], "nm1", None), Err(ChoiceError::NoAddress));
        let c = choose(&[], "nm1", Some(&on(None))).unwrap();
        assert_eq!((c.address.as_str(), c.fallback), ("nm1:8049", None));
    }
}
