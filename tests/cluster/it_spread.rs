//! The default strategy's spread on the real cluster, alone on it (the cluster gate) so that
//! no other test's containers fill a node while YARN places these.
//!
//! Four tasks prefer nm1 and four prefer nm3, and the driver wants six executors (one core
//! each, so one task each at a time): each host's tasks keep three executors busy. Spark's
//! requests name both hosts in all six requests, so whichever heartbeats first takes as many
//! executors as it has room for (four, on the node without the AM); the default strategy names
//! each host three times (rule 2 in `allocator::strategy`), and YARN places three on each.
//!
//! (With two executors for two tasks on each host the spread does not survive YARN: once the
//! first node took its container, one container is left to ask for, the CapacityScheduler's
//! off-switch wait is `ANY x locations / nodes` < 1 missed offer, and the same node takes the
//! second one off-switch in the same heartbeat. The simulator models this; BENCHMARKS.md.)

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::Duration;

use am::{placements, rest, submit, Driver};
use serde_json::json;

#[tokio::test]
async fn default_strategy_spreads_executors_over_the_preferred_hosts() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    am::wait_until_no_node_runs_containers(c).await;
    let app = submit(
        c,
        "it-spread",
        &[
            "--executors",
            "0",
            "--max-executors",
            "8",
            "--executor-memory",
            "512",
            "--executor-command",
            "sleep 600",
        ],
    );
    let d = Driver::find(c, &app).await;
    d.post(
        "/v1/demand",
        json!({"target_executors": 6, "locality_aware_tasks": 8,
               "host_to_local_task_count": {"nm1": 4, "nm3": 4}}),
    )
    .await;
    d.wait_running(6, Duration::from_secs(60)).await;
    let placed = placements(&d.state().await);
    eprintln!("placement: {placed:?}");
    let on = |host: &str| {
        placed
            .iter()
            .filter(|(h, l)| h == host && l == "node")
            .count()
    };
    assert_eq!(
        (on("nm1"), on("nm3"), placed.len()),
        (3, 3, 6),
        "three executors on each preferred host, node-local: {placed:?}"
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
