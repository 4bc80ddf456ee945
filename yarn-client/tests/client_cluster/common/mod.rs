//! Thin helpers over the shared cluster fixture (`tests/cluster/support/cluster.rs`) for this
//! crate's IPC integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

#[path = "../../../../tests/cluster/support/cluster.rs"]
pub mod cluster;

pub use cluster::{cluster, LogsOnFailure};

/// Starts the cluster if needed (the fixture does this once per test binary).
pub fn ensure_cluster() {
    let _ = cluster();
}

pub fn cluster_dir() -> PathBuf {
    cluster().dir.clone()
}

pub fn rm_web() -> String {
    cluster().rm_web.clone()
}

pub fn rm_scheduler() -> String {
    cluster().rm_scheduler.clone()
}

/// The RM client port (ApplicationClientProtocol, 8032) on the scheduler's host.
pub fn rm_client() -> String {
    let s = rm_scheduler();
    let host = s.rsplit_once(':').map(|(h, _)| h).unwrap_or(&s);
    format!("{host}:8032")
}

/// The node the test AM asks for, and its rack (see conf/cluster/topology.table).
pub fn it_node() -> String {
    "nm2".into()
}

pub fn it_rack() -> String {
    "/rack1".into()
}
