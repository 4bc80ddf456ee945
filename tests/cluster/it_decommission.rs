//! Graceful decommission on the real cluster: a node the AM's executors run on is
//! put into graceful decommission mid-job through the RM admin protocol (Hadoop's
//! RMAdminCLI, `cluster.sh rmadmin -refreshNodes -g 60 -server` with the host in the exclude
//! file). YARN reports the node DECOMMISSIONING in allocate's `updated_nodes`; the AM holds
//! it back (no new executor, no new task there), lets the running tasks finish, gives the
//! executors back once idle and asks for replacements at once. No task is lost or failed,
//! nothing counts against the app. The node is recommissioned before its timeout.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::{Duration, Instant};

use am::{executors_of, rest, submit_job, summary_of, Driver};
use serde_json::json;

fn exclude(c: &cluster::Cluster, hosts: &str) {
    std::fs::write(c.dir.join("conf/nodes.exclude"), hosts).unwrap();
}

/// Restores the node whatever the test did: empty exclude file, nodes refreshed, and the
/// NodeManager restarted if the RM had already decommissioned it (it shuts down then).
struct Recommission<'a>(&'a cluster::Cluster, String);

impl Drop for Recommission<'_> {
    fn drop(&mut self) {
        exclude(self.0, "");
        cluster::cluster_sh_args(&["rmadmin", "-refreshNodes"]);
        let running = node_state(self.0, &self.1).as_deref() == Some("RUNNING");
        // A decommissioned NodeManager may have exited already (on docker its container ends
        // with it): then `restart-nm` finds nothing to restart and `up` brings the node back.
        if !running && !cluster::cluster_sh_args(&["restart-nm", &self.1]) {
            cluster::cluster_sh("up");
        }
    }
}

/// An executor's id in the API's JSON (a string).
fn id_of(e: &serde_json::Value) -> u64 {
    e["id"]
        .as_u64()
        .or_else(|| e["id"].as_str()?.parse().ok())
        .unwrap_or_else(|| panic!("no id: {e}"))
}

/// Every node state: the RM lists only some by default.
const ALL_STATES: &str =
    "NEW,RUNNING,UNHEALTHY,DECOMMISSIONING,DECOMMISSIONED,LOST,REBOOTED,SHUTDOWN";

fn node_state(c: &cluster::Cluster, host: &str) -> Option<String> {
    let out = std::process::Command::new("curl")
        .args(["-s", "--max-time", "10"])
        .arg(format!(
            "{}/ws/v1/cluster/nodes?states={ALL_STATES}",
            c.rm_url()
        ))
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v["nodes"]["node"]
        .as_array()?
        .iter()
        .find(|n| n["nodeHostName"] == host)
        .and_then(|n| n["state"].as_str().map(str::to_string))
}

#[tokio::test]
async fn a_node_decommissioned_gracefully_mid_job_loses_no_task_and_gets_no_executor() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    am::wait_until_no_node_runs_containers(c).await;
    let tasks: Vec<_> = (0..48)
        .map(|i| json!({"id": format!("t{i:02}"), "command": "sleep 5"}))
        .collect();
    let job = json!({"name": "it-decommission",
        "executor": {"cores": 1, "memory_mb": 512, "min_executors": 6, "max_executors": 6,
                     "idle_timeout_ms": 600000},
        "locality_wait_ms": {"node": 0, "rack": 0},
        "tasks": tasks});
    let t0 = Instant::now();
    let app = submit_job(c, "it-decommission", &job);
    let d = Driver::find(c, &app).await;
    d.wait_running(6, Duration::from_secs(60)).await;
    // A node with executors and without the AM.
    let am_node = am::am_host(c, &app);
    let s = d.state().await;
    let live = |s: &serde_json::Value| -> Vec<serde_json::Value> {
        executors_of(s)
            .into_iter()
            .filter(|e| e["state"] != "exited")
            .collect()
    };
    let before = live(&s);
    let node = ["nm1", "nm2", "nm3"]
        .into_iter()
        .filter(|n| *n != am_node)
        .max_by_key(|n| before.iter().filter(|e| e["host"] == *n).count())
        .unwrap()
        .to_string();
    let on_node: Vec<u64> = before
        .iter()
        .filter(|e| e["host"] == node.as_str())
        .map(id_of)
        .collect();
    assert!(!on_node.is_empty(), "no executor on {node}: {before:?}");
    let max_id = executors_of(&s).iter().map(id_of).max().unwrap();
    eprintln!(
        "decommissioning {node} (executors {on_node:?}) {:?} after submit",
        t0.elapsed()
    );

    exclude(c, &format!("{node}\n"));
    let _restore = Recommission(c, node.clone());
    let t_dec = Instant::now();
    assert!(
        cluster::cluster_sh_args(&["rmadmin", "-refreshNodes", "-g", "60", "-server"]),
        "rmadmin -refreshNodes -g 60 -server failed"
    );
    let held = am::wait_for(
        "the AM holds the node back",
        Duration::from_secs(20),
        || async {
            let s = d.state().await;
            let hosts = s["held_back_hosts"].as_array().cloned().unwrap_or_default();
            hosts
                .iter()
                .any(|h| h["host"] == node.as_str() && h["why"] == "decommissioning")
                .then_some(s)
        },
    )
    .await;
    eprintln!(
        "held back {:?} after the refresh: {}",
        t_dec.elapsed(),
        held["held_back_hosts"]
    );
    assert_eq!(node_state(c, &node).as_deref(), Some("DECOMMISSIONING"));
    // Every executor there finishes its task and is given back; six run again elsewhere.
    let s = am::wait_for(
        "the node drained and replaced",
        Duration::from_secs(40),
        || async {
            let s = d.state().await;
            let l = live(&s);
            let drained = l.iter().all(|e| e["host"] != node.as_str());
            (drained && l.len() == 6).then_some(s)
        },
    )
    .await;
    eprintln!(
        "drained and 6 running elsewhere {:?} after the refresh",
        t_dec.elapsed()
    );
    let execs = executors_of(&s);
    for id in &on_node {
        let e = execs.iter().find(|e| id_of(e) == *id).unwrap();
        assert_eq!(e["counts_against_app"], false, "{e}");
        assert!(
            e["reason"].as_str().unwrap_or("").contains("decommission"),
            "{e}"
        );
    }
    let new_there: Vec<_> = execs
        .iter()
        .filter(|e| id_of(e) > max_id && e["host"] == node.as_str())
        .collect();
    assert!(
        new_there.is_empty(),
        "new executors on {node}: {new_there:?}"
    );
    assert_eq!(s["executor_failures"], 0);
    let page = d.get_text("/").await;
    assert!(page.contains("class=\"held-back\""), "page: {page}");

    let r = rest(c)
        .wait_final(&app, Duration::from_secs(180))
        .await
        .unwrap();
    eprintln!("job ended {:?} after submit", t0.elapsed());
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{}",
        r.diagnostics
    );
    let summary = summary_of(&r.diagnostics);
    assert_eq!((summary.tasks_succeeded, summary.tasks_failed), (48, 0));
    let report = am::job_report(c, &app);
    assert!(
        report.tasks.iter().all(|t| t.last_failure.is_none()),
        "a task failed: {:?}",
        report.tasks.iter().find(|t| t.last_failure.is_some())
    );
    // No task started on the node after it turned DECOMMISSIONING is checked above through
    // the executors: none new there, the old ones offered nothing new (their tasks ran to
    // the end: no re-run).
    let rerun = report.tasks.iter().filter(|t| t.attempts > 1).count();
    assert_eq!(rerun, 0, "tasks ran again: a drained executor lost one");
}
