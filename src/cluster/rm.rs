//! How a command reaches the ResourceManager: its REST client from the flags and the Hadoop
//! configuration, and who the submitter is to a secure cluster: a Kerberos login (the
//! `kinit` ticket cache, or `--principal`/`--keytab`) when the cluster uses Kerberos, else
//! the simple user name.
//!
//! The login is checked before anything else happens, so "no ticket" fails the command with
//! nothing staged and nothing submitted.

use std::sync::Arc;

use std::time::Duration;

use anyhow::Context;
use yarn_client::conf::Configuration;
use yarn_client::gssapi::{Credential, CredentialSource};
use yarn_client::http_auth::HttpAuth;
use yarn_client::rest::RmRest;

use crate::cli::RmArgs;

/// Hadoop's switch between `simple` and `kerberos`.
pub const AUTHENTICATION_KEY: &str = "hadoop.security.authentication";

/// The Hadoop configuration of `$HADOOP_CONF_DIR` / `$YARN_CONF_DIR`, if either is set.
pub fn hadoop_conf() -> anyhow::Result<Option<Configuration>> {
    if std::env::var_os("HADOOP_CONF_DIR").is_none() && std::env::var_os("YARN_CONF_DIR").is_none()
    {
        return Ok(None);
    }
    Configuration::from_process_env()
        .map(Some)
        .context("reading the Hadoop configuration")
}

/// True when the configuration says the cluster authenticates with Kerberos.
pub fn conf_wants_kerberos(conf: Option<&Configuration>) -> anyhow::Result<bool> {
    let Some(conf) = conf else { return Ok(false) };
    let v = conf.get_trimmed(AUTHENTICATION_KEY)?;
    Ok(v.is_some_and(|v| v.eq_ignore_ascii_case("kerberos")))
}

/// How the web clients authenticate: Kerberos with `--principal`/`--keytab`, or when the
/// Hadoop configuration says `kerberos` (then from the ticket cache); else `user.name`.
pub fn http_auth(args: &RmArgs) -> anyhow::Result<HttpAuth> {
    let source = match (&args.principal, &args.keytab) {
        (Some(principal), Some(keytab)) => CredentialSource::Keytab {
            principal: principal.clone(),
            keytab: keytab.clone(),
        },
        _ => {
            let conf = hadoop_conf()?;
            if !conf_wants_kerberos(conf.as_ref())? {
                return Ok(HttpAuth::simple(&user_name(args)));
            }
            CredentialSource::TicketCache
        }
    };
    let credential = Credential::acquire(&source)?;
    tracing::info!(principal = %credential.principal(), "Kerberos login");
    Ok(HttpAuth::kerberos(Arc::new(credential)))
}

/// Builds the REST client from flags, falling back to the Hadoop config directories.
pub fn rm_rest(args: &RmArgs) -> anyhow::Result<RmRest> {
    let (web, others) = match &args.rm_web {
        // The configured RMs, if any, are still the ones a standby may redirect to.
        Some(w) => (w.clone(), web_addresses_from_conf().unwrap_or_default()),
        None => {
            let mut all = web_addresses_from_conf()?;
            let first = all.remove(0);
            (first, all)
        }
    };
    let user = user_name(args);
    let auth = http_auth(args)?;
    Ok(RmRest::new(&web, &user, Duration::from_secs(args.timeout))
        .with_context(|| format!("setting up the RM REST client for {web}"))?
        // A standby RM redirects to the active one; credentials follow only to these.
        .with_other_rms(&others)
        .with_auth(auth))
}

/// The user the RM (and WebHDFS) is told about: `--user`, else `$USER`, else `yarn`.
/// Who the RM sees `rest`'s calls as: the Kerberos login's short name, else the simple
/// user ([`user_name`]).
pub fn rm_user(rest: &yarn_client::rest::RmRest, args: &RmArgs) -> String {
    match rest.auth() {
        yarn_client::http_auth::HttpAuth::Kerberos(s) => s.credential().short_name().to_string(),
        _ => user_name(args),
    }
}

pub fn user_name(args: &RmArgs) -> String {
    args.user
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "yarn".to_string())
}

/// The RM web addresses from `$YARN_CONF_DIR` / `$HADOOP_CONF_DIR`, like every Hadoop
/// tool, never empty, as URLs: `https://` and the RM's HTTPS web address when
/// `yarn.http.policy` is `HTTPS_ONLY` (trust: `yarn_client::tls`). With RM HA the first
/// configured RM is asked first; a standby RM redirects REST calls to the active one, which
/// is among the others.
pub fn web_addresses_from_conf() -> anyhow::Result<Vec<String>> {
    if std::env::var_os("HADOOP_CONF_DIR").is_none() && std::env::var_os("YARN_CONF_DIR").is_none()
    {
        anyhow::bail!(
            "no ResourceManager given: pass --rm-web HOST:PORT, set YARN_AM_RM_WEB, \
             or set HADOOP_CONF_DIR to a folder with yarn-site.xml"
        );
    }
    let conf = Configuration::from_process_env().context("reading the Hadoop configuration")?;
    let urls = yarn_client::conf::rm_web_urls(&conf)
        .context("finding the ResourceManager web address in yarn-site.xml")?;
    anyhow::ensure!(!urls.is_empty(), "yarn-site.xml names no ResourceManager");
    Ok(urls)
}
