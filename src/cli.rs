//! The command line: one subcommand per task a YARN user has.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "yarn-am",
    version,
    about = "Run elastic, locality-aware work on Hadoop YARN"
)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug). YARN_AM_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the cluster's NodeManagers with their racks and capacity.
    Nodes(NodesArgs),
    /// Print the container requests the allocator makes for one allocator state (JSON).
    Plan(PlanArgs),
}

/// Where the ResourceManager's web address comes from: the flag, then
/// `yarn.resourcemanager.webapp.address` in `$YARN_CONF_DIR`/`$HADOOP_CONF_DIR`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// ResourceManager web address (host:port or URL).
    #[arg(long, env = "YARN_AM_RM_WEB")]
    pub rm_web: Option<String>,
    /// User name the RM sees (simple auth). Defaults to $USER.
    #[arg(long)]
    pub user: Option<String>,
    /// Seconds to wait for any one RM call before giving up.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct NodesArgs {
    #[command(flatten)]
    pub rm: RmArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Allocation strategy: `spark` (Spark's exact placement) or `default` (ours).
    #[arg(long, default_value = "default")]
    pub strategy: String,
    /// Allocator state as JSON; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
}
