//! `yarn-am nodes`: the cluster's NodeManagers as the RM sees them.

use std::time::Duration;

use anyhow::Context;
use yarn_client::rest::RmRest;

use crate::cli::{NodesArgs, RmArgs};

/// Builds the REST client from flags, falling back to the Hadoop config directories.
pub fn rm_rest(args: &RmArgs) -> anyhow::Result<RmRest> {
    let web = match &args.rm_web {
        Some(w) => w.clone(),
        None => crate::nodes::web_address_from_conf()?,
    };
    let user = args
        .user
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "yarn".to_string());
    RmRest::new(&web, &user, Duration::from_secs(args.timeout))
        .with_context(|| format!("setting up the RM REST client for {web}"))
}

/// Placeholder until the Hadoop XML config reader lands: reads nothing, asks for the flag.
pub fn web_address_from_conf() -> anyhow::Result<String> {
    anyhow::bail!("no ResourceManager given: pass --rm-web HOST:PORT or set YARN_AM_RM_WEB")
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
