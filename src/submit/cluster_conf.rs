//! What `submit` reads from the Hadoop configuration (yarn-site.xml, core-site.xml) for the
//! AM: the RM's addresses, the NodeManagers' heartbeat, and the RPC security settings.

use anyhow::{bail, Context};
use tracing::warn;
use yarn_client::rest::RmRest;

/// The addresses of an RM service (the scheduler for the AM, the client port for an RPC
/// submission): the flag, then yarn-site.xml (one per RM under HA), then the RM web host with
/// the service's default port. A configuration that cannot be read is an error only here,
/// where it is needed.
pub(super) fn rm_addresses(
    given: Option<&String>,
    service: yarn_client::conf::RmService,
    rest: &RmRest,
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
) -> anyhow::Result<Vec<String>> {
    if let Some(a) = given {
        return Ok(vec![a.clone()]);
    }
    let conf = conf.as_ref().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    if let Some(conf) = conf {
        let c = yarn_client::conf::rm_candidates(conf, service)?;
        return Ok(c.into_iter().map(|c| c.address.to_string()).collect());
    }
    let host = rest
        .base_url()
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .rsplit_once(':')
        .map(|(h, _)| h.to_string())
        .unwrap_or_else(|| rest.base_url().to_string());
    Ok(vec![format!("{host}:{}", service.default_port())])
}

/// The NodeManagers' heartbeat interval, for the AM's spread wait. Best effort: without a
/// readable value the AM uses YARN's default, so a bad setting is logged, not fatal.
pub(super) fn nm_heartbeat_ms(
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
) -> Option<u64> {
    const KEY: &str = "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms";
    // Its default is YARN's: one second, the AM's own default spread wait.
    let default = yarn_am_core::allocator::tracker::DEFAULT_SPREAD_WAIT_MS;
    match conf.as_ref().ok()?.as_ref()?.get_u64(KEY, default) {
        Ok(ms) => Some(ms),
        Err(e) => {
            warn!(%e, "ignoring {KEY}; the AM assumes YARN's default");
            None
        }
    }
}

/// Whether the AM may accept a switch to SIMPLE after offering a token (Hadoop's key,
/// default false). A value that is not a boolean is an error: a typo must not decide a
/// security setting. Without a readable configuration: false.
pub(super) fn fallback_to_simple(
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
) -> anyhow::Result<bool> {
    let key = yarn_client::rpc::FALLBACK_TO_SIMPLE_KEY;
    match conf.as_ref().ok().and_then(Option::as_ref) {
        Some(c) => c
            .get_bool(key, false)
            .with_context(|| format!("reading {key}")),
        None => Ok(false),
    }
}

/// `hadoop.rpc.protection` from the Hadoop configuration, checked here so that a typo fails
/// the submit, not the AM. `None` without a configuration or the key (Hadoop's default,
/// `authentication`).
pub(super) fn rpc_protection(
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
) -> anyhow::Result<Option<String>> {
    let key = yarn_client::rpc::PROTECTION_KEY;
    let Some(c) = conf.as_ref().ok().and_then(Option::as_ref) else {
        return Ok(None);
    };
    let Some(value) = c.get(key).with_context(|| format!("reading {key}"))? else {
        return Ok(None);
    };
    match yarn_client::rpc::Qop::minimum_from_protection(&value) {
        Some(_) => Ok(Some(value.trim().to_string())),
        None => bail!("{key} is {value:?}: expected authentication, integrity or privacy (a comma list of them)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::submit::test_support::rest;
    use yarn_client::conf::{Configuration, RmService};
    use yarn_client::http_auth::HttpAuth;
    use yarn_client::rpc::{FALLBACK_TO_SIMPLE_KEY, PROTECTION_KEY};

    fn with(value: Option<&str>) -> anyhow::Result<Option<Configuration>> {
        let mut c = Configuration::new();
        if let Some(v) = value {
            c.set(FALLBACK_TO_SIMPLE_KEY, v);
        }
        Ok(Some(c))
    }

    #[test]
    fn fallback_to_simple_is_off_unless_the_conf_says_true() {
        assert!(!fallback_to_simple(&Ok(None)).unwrap());
        assert!(!fallback_to_simple(&Err(anyhow::anyhow!("unreadable"))).unwrap());
        assert!(!fallback_to_simple(&with(None)).unwrap());
        assert!(!fallback_to_simple(&with(Some("false"))).unwrap());
        assert!(fallback_to_simple(&with(Some(" TRUE "))).unwrap());
        let e = fallback_to_simple(&with(Some("yes"))).unwrap_err();
        assert!(format!("{e:#}").contains(FALLBACK_TO_SIMPLE_KEY), "{e:#}");
    }

    #[test]
    fn rpc_protection_is_checked_at_submit() {
        let conf = |v: &str| {
            let mut c = Configuration::new();
            c.set(PROTECTION_KEY, v);
            Ok(Some(c))
        };
        assert_eq!(super::rpc_protection(&Ok(None)).unwrap(), None);
        assert_eq!(
            super::rpc_protection(&conf(" privacy "))
                .unwrap()
                .as_deref(),
            Some("privacy")
        );
        let e = super::rpc_protection(&conf("secret")).unwrap_err();
        assert!(format!("{e:#}").contains(PROTECTION_KEY), "{e:#}");
    }

    #[test]
    fn the_client_port_comes_from_the_flag_the_conf_or_the_rm_host() {
        let r = rest(HttpAuth::simple("alice"));
        let given = "other:9032".to_string();
        assert_eq!(
            rm_addresses(Some(&given), RmService::Client, &r, &Ok(None)).unwrap(),
            ["other:9032"]
        );
        assert_eq!(
            rm_addresses(None, RmService::Client, &r, &Ok(None)).unwrap(),
            ["rm:8032"]
        );
        let mut c = Configuration::new();
        c.set("yarn.resourcemanager.address", "rm.example:18032");
        assert_eq!(
            rm_addresses(None, RmService::Client, &r, &Ok(Some(c))).unwrap(),
            ["rm.example:18032"]
        );
    }
}
