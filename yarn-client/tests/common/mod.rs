//! Shared helpers for the cluster integration tests: where the cluster is, and making sure
//! it is up. (A stand-in until the lead's shared Rust fixture lands on this branch.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn knob(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

pub fn rm_web() -> String {
    knob("YARN_AM_RM_WEB", "rm:8088")
}

pub fn rm_scheduler() -> String {
    knob("YARN_AM_RM_SCHEDULER", "rm:8030")
}

pub fn it_node() -> String {
    knob("YARN_AM_IT_NODE", "nm2")
}

pub fn cluster_dir() -> PathBuf {
    PathBuf::from(std::env::var("YARN_AM_CLUSTER_DIR").unwrap_or("/tmp/yarn-am-cluster".into()))
}

/// The cluster script: ours if the repository has it, else `YARN_AM_CLUSTER_SH`, else the
/// main checkout's. (To be replaced by the lead's shared Rust fixture.)
pub fn cluster_sh() -> PathBuf {
    if let Ok(p) = std::env::var("YARN_AM_CLUSTER_SH") {
        return PathBuf::from(p);
    }
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cluster/cluster.sh");
    if ours.exists() {
        return ours;
    }
    PathBuf::from("/work/main/tests/cluster/cluster.sh")
}

/// Makes sure the cluster is up (idempotent; never stops anything).
pub fn ensure_cluster() {
    let sh = cluster_sh();
    let status = |arg: &str| {
        Command::new("bash")
            .arg(&sh)
            .arg(arg)
            .env("YARN_AM_CLUSTER_DIR", cluster_dir())
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", sh.display()))
    };
    if !status("status").success() {
        eprintln!("cluster not up; running {} up", sh.display());
        assert!(status("up").success(), "cluster.sh up failed");
    }
}

/// The RM client port (ApplicationClientProtocol), SIMPLE auth on an insecure cluster.
pub fn rm_client() -> String {
    knob("YARN_AM_RM_CLIENT", "rm:8032")
}
