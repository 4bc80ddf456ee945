//! Delegation tokens of a secure cluster: what the submitter collects for the application
//! and how the AM uses them.
//!
//! Inside the cluster there is no Kerberos ticket, so the submitter asks, with its own
//! login, for tokens that stand in for the user:
//!
//! - an **HDFS delegation token** (kind `HDFS_DELEGATION_TOKEN`) when staging on HDFS: the
//!   NodeManagers localise the staged `hdfs://` files with it, and the AM removes the
//!   staging folder through WebHDFS with it (`delegation=`);
//! - an **RM delegation token**: the AM lists the cluster's nodes through the RM's REST API
//!   (`X-Hadoop-Delegation-Token`).
//!
//! Both name the RM (the short name of `yarn.resourcemanager.principal`) as renewer: YARN
//! renews every token of a submission at once and for the application's life, and refuses
//! the application when it may not.

use anyhow::{bail, Context};
use yarn_client::conf::yarn::{rm_candidates, RmService};
use yarn_client::conf::Configuration;
use yarn_client::gssapi::short_name;
use yarn_client::http_auth::HttpAuth;
use yarn_client::rest::RmRest;
use yarn_client::token::Token;
use yarn_client::webhdfs::WebHdfs;

use crate::cli::RmArgs;
use crate::staging::StagedFile;
use crate::staging::Stager;
use yarn_am_wire::credentials::{HDFS_TOKEN_KIND, KEYTAB_NAME, RM_TOKEN_ALIAS};
use yarn_am_wire::spec::TokenRefresh;

const RM_PRINCIPAL_KEY: &str = "yarn.resourcemanager.principal";

/// The renewer YARN accepts: the RM principal's short name (`rm/_HOST@REALM` is `rm`).
pub fn rm_renewer(conf: Option<&Configuration>) -> anyhow::Result<String> {
    let principal = match conf {
        Some(c) => c.get_trimmed(RM_PRINCIPAL_KEY)?,
        None => None,
    };
    match principal {
        Some(p) if !p.is_empty() => Ok(short_name(&p).to_string()),
        _ => bail!(
            "{RM_PRINCIPAL_KEY} is not in the Hadoop configuration (set HADOOP_CONF_DIR): \
             delegation tokens must name the ResourceManager as their renewer"
        ),
    }
}

/// The tokens a Kerberos-authenticated submission hands to the AM container, by alias;
/// empty under simple auth. `webhdfs` is the staging client when staging on HDFS.
pub async fn collect(
    rest: &RmRest,
    webhdfs: Option<&WebHdfs>,
    conf: Option<&Configuration>,
) -> anyhow::Result<Vec<(String, Token)>> {
    let mut tokens = Vec::new();
    if !matches!(rest.auth(), HttpAuth::Kerberos(_)) {
        return Ok(tokens);
    }
    let renewer = rm_renewer(conf)?;
    if let Some(client) = webhdfs {
        let url = client
            .delegation_token(&renewer, HDFS_TOKEN_KIND)
            .await
            .with_context(|| {
                format!(
                    "getting an HDFS delegation token from {} (renewer {renewer})",
                    client.base_url()
                )
            })?;
        let token = Token::from_url_string(&url).context("the NameNode's delegation token")?;
        // Hadoop files a token under its service (the NameNode's RPC address).
        tokens.push((token.service.clone(), token));
    }
    let url = rest
        .delegation_token(&renewer)
        .await
        .with_context(|| format!("getting an RM delegation token (renewer {renewer})"))?;
    let mut token = Token::from_url_string(&url).context("the RM's delegation token")?;
    // REST hands it out with no service, but the RM renews a submission's tokens at once
    // and finds its own by the service: its client address(es), as Hadoop's
    // ClientRMProxy names them (comma-separated under HA).
    token.service = rm_token_service(conf)?;
    tokens.push((RM_TOKEN_ALIAS.to_string(), token));
    Ok(tokens)
}

/// The service of an RM delegation token: `ip:port` of each RM client address.
fn rm_token_service(conf: Option<&Configuration>) -> anyhow::Result<String> {
    use std::net::ToSocketAddrs;
    let conf = conf
        .context("no Hadoop configuration (set HADOOP_CONF_DIR) to find the RM's client address")?;
    let candidates = rm_candidates(conf, RmService::Client)?;
    let services: Vec<String> = candidates
        .iter()
        .map(|c| {
            let hp = format!("{}:{}", c.address.host, c.address.port);
            // Hadoop names token services by IP (hadoop.security.token.service.use_ip).
            (c.address.host.as_str(), c.address.port)
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.find(|a| a.is_ipv4()))
                .map(|a| a.to_string())
                .unwrap_or(hp)
        })
        .collect();
    Ok(services.join(","))
}

/// With `--principal/--keytab`, staging on HDFS: ships the keytab to the AM (into the
/// application's private staging folder, as spark-submit does) so that it can fetch new
/// HDFS delegation tokens before the first ones reach their maximum lifetime. Nothing
/// otherwise (a ticket-cache login cannot be renewed by the AM).
pub async fn stage_keytab(
    rm: &RmArgs,
    stager: &mut Stager,
    conf: Option<&Configuration>,
) -> anyhow::Result<Option<(StagedFile, TokenRefresh)>> {
    let (Some(principal), Some(keytab)) = (&rm.principal, &rm.keytab) else {
        return Ok(None);
    };
    let Some(webhdfs) = stager.webhdfs().map(|c| c.base_url().to_string()) else {
        return Ok(None);
    };
    let renewer = rm_renewer(conf)?;
    let staged = stager
        .put_file(keytab, KEYTAB_NAME)
        .await
        .context("staging the keytab for the AM's token refresh")?;
    Ok(Some((
        staged,
        TokenRefresh {
            principal: principal.clone(),
            keytab: KEYTAB_NAME.to_string(),
            renewer,
            webhdfs,
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_renewer_is_the_rm_principals_short_name() {
        let mut conf = Configuration::new();
        assert!(rm_renewer(Some(&conf)).is_err());
        assert!(rm_renewer(None).is_err());
        conf.set(RM_PRINCIPAL_KEY, "rm/_HOST@YARN.TEST");
        assert_eq!(rm_renewer(Some(&conf)).unwrap(), "rm");
    }
}
