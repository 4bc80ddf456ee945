//! `yarn-am nodes`: the cluster's NodeManagers as the RM sees them.

use anyhow::Context;

use crate::cli::NodesArgs;
use crate::cluster::rm::rm_rest;

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
