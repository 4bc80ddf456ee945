//! The default strategy's spread on the real cluster, alone in its test binary so that no
//! other test's containers fill a node while YARN places these.
//!
//! Two tasks prefer nm1 and two prefer nm3, and the driver wants two executors (one core each,
//! so one task each at a time): each host's tasks keep one executor busy. Spark's requests
//! name both hosts in both requests, so whichever of them heartbeats first may take both
//! executors; the default strategy names each host once (rule 2 in `allocator::strategy`), and
//! YARN places one executor on each.

#[path = "support/am.rs"]
mod am;
#[path = "support/cluster.rs"]
mod cluster;

use std::time::Duration;

use am::{rest, submit, Driver};
use serde_json::json;

#[tokio::test]
async fn default_strategy_puts_one_executor_on_each_preferred_host() {
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let app = submit(
        c,
        "it-spread",
        &[
            "--executors",
            "0",
            "--max-executors",
            "4",
            "--executor-memory",
            "512",
            "--executor-command",
            "sleep 600",
        ],
    );
    let d = Driver::find(c, &app).await;
    d.post(
        "/v1/demand",
        json!({"target_executors": 2, "locality_aware_tasks": 4,
               "host_to_local_task_count": {"nm1": 2, "nm3": 2}}),
    )
    .await;
    d.wait_running(2, Duration::from_secs(60)).await;
    let state = d.state().await;
    let mut placed: Vec<(String, String)> = state["executors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["state"] != "exited")
        .map(|e| {
            (
                e["host"].as_str().unwrap().to_string(),
                e["locality"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    placed.sort();
    eprintln!("placement: {placed:?}");
    assert_eq!(
        placed,
        [("nm1".into(), "node".into()), ("nm3".into(), "node".into())],
        "one executor on each preferred host, node-local"
    );

    d.post(
        "/v1/finish",
        json!({"status": "succeeded", "diagnostics": "spread checked"}),
    )
    .await;
    let r = rest(c)
        .wait_final(&app, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED")
    );
}
