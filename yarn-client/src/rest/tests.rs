use super::*;
use crate::credentials::Credentials;

/// The shape Hadoop 3.4.1's Capacity Scheduler answers with (fields trimmed): leaves
/// are found by short name or path at any depth; a parent is not a leaf.
#[test]
fn leaf_queues_are_found_by_name_or_path_at_any_depth() {
    let info = serde_json::json!({
        "type": "capacityScheduler", "queueName": "root", "queuePath": "root",
        "queues": {"queue": [
            {"type": "capacitySchedulerLeafQueueInfo", "queueName": "default",
             "queuePath": "root.default", "state": "RUNNING",
             "absoluteUsedCapacity": 87.5, "absoluteMaxCapacity": 100.0,
             "numPendingApplications": 1},
            {"queueName": "team", "queuePath": "root.team", "queues": {"queue": [
                {"queueName": "etl", "queuePath": "root.team.etl", "state": "STOPPED",
                 "absoluteUsedCapacity": 0.0, "absoluteMaxCapacity": 20.0}]}}
        ]}
    });
    let d = find_leaf_queue(&info, "default").unwrap();
    assert_eq!(
        (d.state.as_str(), d.absolute_used_capacity),
        ("RUNNING", 87.5)
    );
    assert_eq!(d.num_pending_applications, 1);
    let etl = find_leaf_queue(&info, "root.team.etl").unwrap();
    assert_eq!(
        (etl.queue_name.as_str(), etl.absolute_max_capacity),
        ("etl", 20.0)
    );
    assert!(find_leaf_queue(&info, "team").is_none());
    assert!(find_leaf_queue(&info, "root").is_none());
    assert!(find_leaf_queue(&serde_json::json!({"type": "fifoScheduler"}), "default").is_none());
}

#[test]
fn submission_json_uses_jaxb_entry_maps() {
    let mut am = AmContainerSpec {
        command: "./am 1><LOG_DIR>/stdout".into(),
        ..Default::default()
    };
    am.environment.insert("A".into(), "1".into());
    am.local_resources.insert(
        "am".into(),
        LocalResource {
            resource: "file:///x/am".into(),
            kind: "FILE".into(),
            visibility: "APPLICATION".into(),
            size: 10,
            timestamp: 1234,
        },
    );
    let sub = Submission {
        application_id: "application_1_0001".into(),
        name: "t".into(),
        queue: "default".into(),
        application_type: "YARN-AM".into(),
        tags: vec!["x".into()],
        max_app_attempts: 1,
        keep_containers: true,
        am_resource: Resource {
            memory: 256,
            vcores: 1,
        },
        am,
        priority: None,
        attempt_failures_validity_interval_ms: None,
        log_aggregation: LogAggregation::default(),
        am_node_label: None,
        am_resources: Vec::new(),
        lifetime: None,
    };
    let v = sub.to_json();
    assert!(
        v.get("priority").is_none()
            && v.get("attempt-failures-validity-interval").is_none()
            && v.get("log-aggregation-context").is_none()
            && v["am-container-spec"].get("application-acls").is_none()
            && v.get("am-container-node-label-expression").is_none()
    );
    let mut with = sub.clone();
    with.am_node_label = Some("gpu".into());
    with.am.acls.view = Some("bob ops".into());
    with.log_aggregation = LogAggregation {
        include: Some("^stdout$".into()),
        rolled_exclude: Some("gc.*".into()),
        ..LogAggregation::default()
    };
    let w = with.to_json();
    assert_eq!(
        w["am-container-spec"]["application-acls"],
        serde_json::json!({"entry": [{"key": "VIEW_APP", "value": "bob ops"}]})
    );
    assert_eq!(w["am-container-node-label-expression"], "gpu");
    assert_eq!(
        w["log-aggregation-context"],
        serde_json::json!({"log-include-pattern": "^stdout$", "rolled-log-exclude-pattern": "gc.*"})
    );
    let v2 = Submission {
        priority: Some(5),
        attempt_failures_validity_interval_ms: Some(60_000),
        ..sub.clone()
    }
    .to_json();
    assert_eq!(
        (
            v2["priority"].clone(),
            v2["attempt-failures-validity-interval"].clone()
        ),
        (5.into(), 60_000.into())
    );
    assert_eq!(v["keep-containers-across-application-attempts"], true);
    let env = &v["am-container-spec"]["environment"]["entry"][0];
    assert_eq!(env["key"], "A");
    assert_eq!(env["value"], "1");
    let lr = &v["am-container-spec"]["local-resources"]["entry"][0]["value"];
    assert_eq!(lr["type"], "FILE");
    assert_eq!(lr["timestamp"], 1234);
    assert_eq!(v["resource"]["vCores"], 1);
    let none = &v["am-container-spec"]["credentials"];
    assert_eq!(none["secrets"]["entry"], serde_json::json!([]));
}

#[test]
fn times_in_hadoops_iso_8601() {
    use std::time::{Duration, UNIX_EPOCH};
    assert_eq!(iso8601_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000+0000");
    // 2026-11-27T12:10:05.123Z; and a leap day.
    assert_eq!(
        iso8601_utc(UNIX_EPOCH + Duration::from_millis(1_795_781_405_123)),
        "2026-11-27T12:10:05.123+0000"
    );
    assert_eq!(
        iso8601_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)),
        "2000-02-29T00:00:00.000+0000"
    );
}

#[test]
fn credentials_render_as_the_rm_decodes_them() {
    use base64::Engine;
    let token = crate::token::Token {
        identifier: vec![1, 2, 3],
        password: vec![0xff; 20],
        kind: "HDFS_DELEGATION_TOKEN".into(),
        service: "127.0.0.1:8020".into(),
    };
    let c = Credentials {
        tokens: vec![("hdfs".into(), token)],
        secrets: vec![("app.key".into(), vec![0xfb, 0xff, 0x00, b'k'])],
    };
    let v = credentials_json(&c);
    let secret = &v["secrets"]["entry"][0];
    assert_eq!(secret["key"], "app.key");
    assert_eq!(secret["value"], "+/8Aaw==");
    let t = &v["tokens"]["entry"][0];
    assert_eq!(t["key"], "hdfs");
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(t["value"].as_str().unwrap())
        .unwrap();
    let mut want = vec![3, 1, 2, 3, 20];
    want.extend([0xff; 20]);
    want.push(21);
    want.extend_from_slice(b"HDFS_DELEGATION_TOKEN");
    want.push(14);
    want.extend_from_slice(b"127.0.0.1:8020");
    assert_eq!(raw, want);
    // The secret's value is in the JSON for the RM, but never in a Debug print.
    let spec = AmContainerSpec {
        credentials: c,
        ..Default::default()
    };
    assert!(!format!("{spec:?}").contains("251"), "{spec:?}");
}

#[test]
fn node_info_parses_rm_json() {
    let json = r#"{"rack":"/rack1","state":"RUNNING","id":"nm1:45454","nodeHostName":"nm1",
        "nodeHTTPAddress":"nm1:8042","numContainers":0,"usedMemoryMB":0,"availMemoryMB":4096,
        "usedVirtualCores":0,"availableVirtualCores":4,"healthReport":""}"#;
    let n: NodeInfo = serde_json::from_str(json).unwrap();
    assert_eq!(n.node_host_name, "nm1");
    assert_eq!(n.memory_mb(), 4096);
    assert_eq!(n.vcores(), 4);
}
