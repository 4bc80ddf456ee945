//! `yarn-am nodes` against the real cluster: finds the RM through HADOOP_CONF_DIR (as every
//! Hadoop tool does) and prints each NodeManager with its rack.

use crate::support::cluster;
use crate::support::gate;

use std::process::Command;

fn yarn_am() -> Command {
    let mut cmd = Command::new(crate::support::am::exe());
    cmd.env_remove("YARN_AM_RM_WEB")
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("YARN_CONF_DIR");
    cmd
}

#[test]
fn nodes_reads_the_rm_address_from_hadoop_conf_dir() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let out = yarn_am()
        .arg("nodes")
        .env("HADOOP_CONF_DIR", &c.conf_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("http://rm:8088 (STARTED)"), "{stdout}");
    for (node, rack) in [("nm1", "/rack1"), ("nm2", "/rack1"), ("nm3", "/rack2")] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{node}:45454")))
            .unwrap_or_else(|| panic!("no line for {node} in\n{stdout}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[1..5], [rack, "RUNNING", "4096", "4"], "{line}");
    }
}

#[test]
fn nodes_json_lists_three_nodes() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let out = yarn_am()
        .args(["nodes", "--json", "--rm-web", &c.rm_web])
        .output()
        .unwrap();
    assert!(out.status.success());
    let nodes: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut hosts: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["nodeHostName"].as_str().unwrap())
        .collect();
    hosts.sort();
    assert_eq!(hosts, ["nm1", "nm2", "nm3"]);
}

#[test]
fn nodes_without_any_rm_configured_explains_what_to_set() {
    let out = yarn_am().arg("nodes").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--rm-web") && err.contains("HADOOP_CONF_DIR"),
        "{err}"
    );
}

#[test]
fn nodes_with_a_dead_rm_fails_with_the_address_in_the_message() {
    let out = yarn_am()
        .args(["nodes", "--rm-web", "127.0.0.9:8088", "--timeout", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.9:8088"), "{err}");
}
