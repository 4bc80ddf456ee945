//! Who the submitter is to a secure cluster: a Kerberos login (the `kinit` ticket cache, or
//! `--principal`/`--keytab`) when the cluster uses Kerberos, else the simple user name.
//!
//! The login is checked before anything else happens, so "no ticket" fails the command with
//! nothing staged and nothing submitted.

use std::sync::Arc;

use anyhow::Context;
use yarn_client::conf::Configuration;
use yarn_client::gssapi::{Credential, CredentialSource};
use yarn_client::http_auth::HttpAuth;

use crate::cli::RmArgs;
use crate::tools::nodes::user_name;

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
