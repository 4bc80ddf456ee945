//! Three executors asked at once (or one, then two more), each host's tasks wanting one, on NodeManagers with room for
//! several executors each: the default strategy must put one on each of nm1..nm3, not pack
//! them on the node that heartbeats first (often the AM's own, where the CapacityScheduler
//! assigns several containers in one heartbeat). Alone on the cluster, like `it_spread`, so
//! that no other test's containers fill a node while YARN places these.
//!
//! Each round submits an app, posts the demand, records the RM's view of the app's asks while
//! the executors come (printed, the evidence when a round packs), and checks the placement.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::{Duration, Instant};

use am::{placements, rest, submit, Driver};
use serde_json::json;

/// Rounds of each kind per run: placement depends on the order in which nodes heartbeat, so one lucky
/// round proves little.
const ROUNDS: usize = 2;

/// The RM's table of the app's outstanding asks, one `location=count` item per entry
/// (`/ws/v1/cluster/apps/{id}` lists them as `resourceRequests`).
async fn rm_asks(http: &reqwest::Client, c: &cluster::Cluster, app: &str) -> String {
    let url = format!("http://{}/ws/v1/cluster/apps/{app}", c.rm_web);
    let Ok(resp) = http.get(&url).send().await else {
        return "?".into();
    };
    let Ok(v) = resp.json::<serde_json::Value>().await else {
        return "?".into();
    };
    let mut items: Vec<String> = v["app"]["resourceRequests"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    format!(
                        "{}={}",
                        r["resourceName"].as_str().unwrap_or("?"),
                        r["numContainers"]
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    items.sort();
    items.join(" ")
}

/// The demand for `target` executors, 8 tasks on each of nm1..nm3.
fn demand(target: u32) -> serde_json::Value {
    json!({"target_executors": target, "locality_aware_tasks": 24,
           "host_to_local_task_count": {"nm1": 8, "nm2": 8, "nm3": 8}})
}

/// One app: three 1024 MB executors for 8 tasks on each of nm1..nm3, asked at once, or (with
/// `ramp`) one first and two more once it runs, as Spark's dynamic allocation does. Returns
/// the executors' `(host, locality)`, sorted.
async fn one_round(c: &cluster::Cluster, strategy: &str, ramp: bool) -> Vec<(String, String)> {
    am::wait_until_no_node_runs_containers(c).await;
    let app = submit(
        c,
        "it-spread-all",
        &[
            "--strategy",
            strategy,
            "--executors",
            "0",
            "--max-executors",
            "6",
            "--executor-memory",
            "1024",
            "--executor-command",
            "sleep 600",
        ],
    );
    let d = Driver::find(c, &app).await;
    let am_host = am::am_host(c, &app);
    if ramp {
        d.post("/v1/demand", demand(1)).await;
        d.wait_running(1, Duration::from_secs(60)).await;
    }
    d.post("/v1/demand", demand(3)).await;
    // The RM's asks as they change, until three executors run.
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let t0 = Instant::now();
    let mut last = String::new();
    while d.running().await < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "three executors did not start within 60 s"
        );
        let asks = rm_asks(&http, c, &app).await;
        if asks != last {
            eprintln!("  {:>5} ms  RM asks: {asks}", t0.elapsed().as_millis());
            last = asks;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let placed = placements(&d.state().await);
    eprintln!("strategy {strategy}, ramp {ramp}, AM on {am_host}: placement {placed:?}");
    d.post(
        "/v1/finish",
        json!({"status": "succeeded", "diagnostics": "spread checked"}),
    )
    .await;
    rest(c)
        .wait_final(&app, Duration::from_secs(60))
        .await
        .unwrap();
    placed
}

/// Rounds alternate: three executors asked at once, then one and two more (the ramp).
#[tokio::test]
async fn three_executors_asked_at_once_or_ramped_land_one_per_preferred_host() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let strategy = std::env::var("IT_SPREAD_STRATEGY").unwrap_or_else(|_| "default".into());
    let rounds = std::env::var("IT_SPREAD_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    let mut results = Vec::new();
    for i in 0..2 * rounds {
        results.push(one_round(c, &strategy, i % 2 == 1).await);
    }
    let one_each = |p: &Vec<(String, String)>| {
        ["nm1", "nm2", "nm3"].iter().all(|h| {
            p.iter()
                .filter(|(host, loc)| host == h && loc == "node")
                .count()
                == 1
        })
    };
    if strategy == "default" {
        for p in &results {
            assert!(
                one_each(p),
                "one node-local executor on each of nm1..nm3 in every round: {results:?}"
            );
        }
    } else {
        let spread = results.iter().filter(|p| one_each(p)).count();
        eprintln!(
            "strategy {strategy}: {spread} of {} rounds one per host",
            results.len()
        );
    }
}
