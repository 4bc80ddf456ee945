//! Proves the test cluster is a real, multi-node, rack-aware YARN: asked over the RM REST API.

use crate::common::cluster;

use std::time::Duration;

use yarn_client::rest::RmRest;

fn rest(c: &cluster::Cluster) -> RmRest {
    RmRest::new(&c.rm_web, "yarn-am-test", Duration::from_secs(20)).unwrap()
}

#[tokio::test]
async fn resource_manager_is_started_and_active() {
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let info = rest(c).cluster_info().await.unwrap();
    assert_eq!(info.state, "STARTED");
    assert_eq!(info.ha_state.as_deref(), Some("ACTIVE"));
    let version = info.hadoop_version.unwrap_or_default();
    assert!(version.starts_with("3.4"), "Hadoop version {version}");
}

#[tokio::test]
async fn three_running_nodemanagers_with_distinct_hosts_racks_and_capacity() {
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let mut nodes = rest(c).nodes(&["RUNNING"]).await.unwrap();
    nodes.sort_by(|a, b| a.node_host_name.cmp(&b.node_host_name));
    let seen: Vec<(&str, &str, &str)> = nodes
        .iter()
        .map(|n| (n.id.as_str(), n.node_host_name.as_str(), n.rack.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("nm1:45454", "nm1", "/rack1"),
            ("nm2:45454", "nm2", "/rack1"),
            ("nm3:45454", "nm3", "/rack2"),
        ]
    );
    for n in &nodes {
        assert_eq!(n.state, "RUNNING");
        assert_eq!(n.memory_mb(), 4096, "{} memory", n.id);
        assert_eq!(n.vcores(), 4, "{} vcores", n.id);
        assert_eq!(n.node_http_address, format!("{}:8042", n.node_host_name));
    }
}

#[tokio::test]
async fn unreachable_rm_is_a_clear_error_within_the_timeout() {
    // 127.0.0.9 is on loopback but nothing listens there: connection refused, fast.
    let rest = RmRest::new("127.0.0.9:8088", "x", Duration::from_secs(3)).unwrap();
    let start = std::time::Instant::now();
    let err = rest.cluster_info().await.unwrap_err().to_string();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(
        err.contains("cannot reach the ResourceManager at http://127.0.0.9:8088"),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_application_is_a_status_error_naming_the_url() {
    let c = cluster::cluster();
    let err = rest(c)
        .app("application_1_9999")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/ws/v1/cluster/apps/application_1_9999"),
        "{err}"
    );
    assert!(err.contains("answered 4"), "{err}");
}
