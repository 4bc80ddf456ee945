//! How a process reaches the cluster: I/O that more than one process needs, so that no
//! process reaches into another for it.
//!
//! - [`rm`]: the ResourceManager's REST client from a command's flags and the Hadoop
//!   configuration, and who the caller is to a secure cluster (`submit`, the small
//!   commands; the AM reads the Hadoop configuration through it too);
//! - [`hdfs_listing`]: listing HDFS through WebHDFS: a job's input splits (`submit`) and
//!   folders page by page (`submit`, `logs`);
//! - [`app_report`]: the RM's report of an application as the commands show it, and the
//!   exit code it makes (`submit --wait`, `status`, `kill`);
//! - [`driver_client`]: an HTTP client for an AM's driver API, pinned to its certificate;
//! - [`next_am`]: a next AM attempt's address, found in the staging folder (an executor
//!   following its app across attempts, `yarn-am kv` in a container).
//!
//! It may use the contracts ([`crate::protocol`]), the core and the command line's
//! definitions ([`crate::cli`]), never a process module.

pub mod app_report;
pub mod driver_client;
pub mod hdfs_listing;
pub mod next_am;
pub mod rm;
