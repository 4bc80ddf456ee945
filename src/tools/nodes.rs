//! `yarn-am nodes`: the cluster's NodeManagers as the RM sees them.

use std::time::Duration;

use anyhow::Context;
use yarn_client::conf::yarn::{rm_candidates, RmService};
use yarn_client::conf::Configuration;
use yarn_client::rest::RmRest;

use crate::cli::{NodesArgs, RmArgs};

/// Builds the REST client from flags, falling back to the Hadoop config directories.
pub fn rm_rest(args: &RmArgs) -> anyhow::Result<RmRest> {
    let web = match &args.rm_web {
        Some(w) => w.clone(),
        None => web_address_from_conf()?,
    };
    let user = user_name(args);
    let auth = crate::tools::rm::http_auth(args)?;
    Ok(RmRest::new(&web, &user, Duration::from_secs(args.timeout))
        .with_context(|| format!("setting up the RM REST client for {web}"))?
        .with_auth(auth))
}

/// The user the RM (and WebHDFS) is told about: `--user`, else `$USER`, else `yarn`.
pub fn user_name(args: &RmArgs) -> String {
    args.user
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "yarn".to_string())
}

/// The RM web address from `$YARN_CONF_DIR` / `$HADOOP_CONF_DIR`, like every Hadoop tool.
/// With RM HA the first configured RM is used; a standby RM redirects REST calls.
pub fn web_address_from_conf() -> anyhow::Result<String> {
    if std::env::var_os("HADOOP_CONF_DIR").is_none() && std::env::var_os("YARN_CONF_DIR").is_none()
    {
        anyhow::bail!(
            "no ResourceManager given: pass --rm-web HOST:PORT, set YARN_AM_RM_WEB, \
             or set HADOOP_CONF_DIR to a folder with yarn-site.xml"
        );
    }
    let conf = Configuration::from_process_env().context("reading the Hadoop configuration")?;
    let candidates = rm_candidates(&conf, RmService::WebApp)
        .context("finding the ResourceManager web address in yarn-site.xml")?;
    let first = candidates
        .first()
        .context("yarn-site.xml names no ResourceManager")?;
    Ok(first.address.to_string())
}

pub fn run(args: NodesArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let rest = rm_rest(&args.rm)?;
        let info = rest
            .cluster_info()
            .await
            .context("asking the RM for cluster info")?;
        let mut nodes = rest.nodes(&[]).await.context("listing nodes")?;
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        if args.json {
            println!("{}", serde_json::to_string_pretty(&nodes)?);
            return Ok(());
        }
        println!(
            "ResourceManager {} ({}), Hadoop {}, {} node(s)",
            rest.base_url(),
            info.state,
            info.hadoop_version.as_deref().unwrap_or("?"),
            nodes.len()
        );
        println!(
            "{:<16} {:<8} {:<9} {:>10} {:>7} {:>10}",
            "NODE", "RACK", "STATE", "MEMORY-MB", "VCORES", "CONTAINERS"
        );
        for n in &nodes {
            println!(
                "{:<16} {:<8} {:<9} {:>10} {:>7} {:>10}",
                n.id,
                n.rack,
                n.state,
                n.memory_mb(),
                n.vcores(),
                n.num_containers
            );
        }
        Ok(())
    })
}
