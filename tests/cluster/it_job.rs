//! The embedded driver end to end on the real cluster: `yarn-am submit --job` runs shell
//! tasks near their preferred hosts, falls back when a host is full, follows the backlog
//! with its executor count, and survives losing a NodeManager.
//!
//! The tests here run alone on the cluster: they fill or kill nodes the others would use, or
//! count on room beside their preferred hosts.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::Duration;

use am::{job_report, rest, submit, submit_job, summary_of, wait_for, Driver};
use serde_json::json;
use yarn_am_core::driver::report::JobSummary;
use yarn_am_core::driver::scheduler::TaskLocality;

fn tasks(n: usize, hosts: &[&str], command: &str) -> Vec<serde_json::Value> {
    (0..n)
        .map(|i| {
            json!({"id": format!("t{i:02}"), "command": command,
                   "preferred_hosts": [hosts[i % hosts.len()]], "cpus": 1})
        })
        .collect()
}

/// Submits a job and waits for the app's end; returns (app, summary from diagnostics).
async fn run_job(c: &cluster::Cluster, name: &str, job: serde_json::Value) -> (String, JobSummary) {
    let app = submit_job(c, name, &job);
    let r = am::wait_succeeded(c, &app, Duration::from_secs(240)).await;
    (app, summary_of(&r.diagnostics))
}

#[tokio::test]
async fn sample_job_runs_node_local_and_reports_every_task() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let (all, app) = am::submit_sample_job_and_wait(c, "it-sample");
    assert!(all.contains("tasks by locality: NODE_LOCAL"), "{all}");
    let report = job_report(c, &app);
    assert!(report.succeeded);
    assert_eq!(report.tasks_total, 60);
    // The summary `--wait` prints as JSON is the one the AM wrote, minus the task list.
    let printed: JobSummary = all
        .lines()
        .find_map(|l| l.strip_prefix("summary JSON: "))
        .map(|j| serde_json::from_str(j).unwrap())
        .unwrap_or_else(|| panic!("no summary JSON line: {all}"));
    assert_eq!(printed.by_locality, report.by_locality);
    assert_eq!(printed.tasks_succeeded, 60);
    assert_eq!(report.tasks.len(), 60);
    let node_local = report.by_locality.node_local;
    eprintln!(
        "sample job: {node_local}/60 NODE_LOCAL in {} ms",
        report.wall_time_ms
    );
    assert!(
        node_local >= 54,
        "only {node_local}/60 NODE_LOCAL: {:?}",
        report.by_locality
    );
    let job: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/examples/job.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for t in &report.tasks {
        assert_eq!(t.exit_code, 0, "{t:?}");
        let spec = job["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == t.task_id.as_str())
            .unwrap();
        if t.locality == TaskLocality::NodeLocal {
            assert_eq!(spec["preferred_hosts"][0], t.host.as_str(), "{t:?}");
        }
    }
    // Task output lands in the executor's container log dir, and ran on the host reported.
    let t = &report.tasks[0];
    let out_file = c
        .container_log_dirs(&app)
        .into_iter()
        .map(|d| d.join(format!("task-{}.0.stdout", t.task_id)))
        .find(|p| p.exists())
        .expect("the task's stdout in some container log dir");
    let text = std::fs::read_to_string(out_file).unwrap();
    assert_eq!(text.trim(), format!("{} done on {}", t.task_id, t.host));
}

#[tokio::test]
async fn tasks_for_a_full_host_fall_back_after_the_wait_instead_of_stalling() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // Fill nm3: a blocker app whose one executor takes what is left of the node. With the
    // blocker's AM elsewhere, 256 MB stay free on nm3, but 3 of its 4 vcores are taken, so
    // no 2-vcore job executor fits there either way.
    let blocker = submit(
        c,
        "it-blocker",
        &[
            "--executors",
            "0",
            "--max-executors",
            "1",
            "--executor-memory",
            "3840",
            "--executor-vcores",
            "3",
        ],
    );
    let d = Driver::find(c, &blocker).await;
    wait_for("the blocker on nm3", Duration::from_secs(90), || async {
        let s = d.state().await;
        let live: Vec<serde_json::Value> = s["executors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["state"] == "running")
            .cloned()
            .collect();
        match live.first() {
            Some(e) if e["host"] == "nm3" => return Some(()),
            Some(e) => {
                // Landed elsewhere: give it back and ask again.
                d.post("/v1/executors/kill", json!({"executor_ids": [e["id"]]}))
                    .await;
            }
            None => {}
        }
        d.post(
            "/v1/demand",
            json!({"target_executors": 1, "locality_aware_tasks": 1,
            "host_to_local_task_count": {"nm3": 1}}),
        )
        .await;
        None
    })
    .await;
    let nm3 = rest(c)
        .nodes(&["RUNNING"])
        .await
        .unwrap()
        .into_iter()
        .find(|n| n.node_host_name == "nm3")
        .unwrap();
    assert!(
        nm3.avail_memory_mb < 256 || nm3.available_virtual_cores < 2,
        "nm3 still fits a 256 MB, 2-vcore executor: {} MB, {} vcores free",
        nm3.avail_memory_mb,
        nm3.available_virtual_cores
    );

    let mut job_tasks = tasks(8, &["nm3"], "sleep 1");
    for (i, t) in tasks(8, &["nm1"], "sleep 1").into_iter().enumerate() {
        let mut t = t;
        t["id"] = json!(format!("n1-{i}"));
        job_tasks.push(t);
    }
    let job = json!({"name": "it-fallback",
        "executor": {"cores": 2, "memory_mb": 256, "max_executors": 4, "idle_timeout_ms": 30000},
        "locality_wait_ms": {"node": 2000, "rack": 2000},
        "tasks": job_tasks});
    let (app, summary) = run_job(c, "it-fallback", job).await;
    let report = job_report(c, &app);
    eprintln!(
        "fallback: {:?} in {} ms",
        summary.by_locality, summary.wall_time_ms
    );
    for t in report.tasks.iter().filter(|t| t.task_id.starts_with('t')) {
        assert_ne!(t.host, "nm3", "{t:?}");
        assert!(
            matches!(t.locality, TaskLocality::RackLocal | TaskLocality::Any),
            "{t:?}"
        );
    }
    d.post("/v1/finish", json!({"status": "succeeded"})).await;
    rest(c)
        .wait_final(&blocker, Duration::from_secs(60))
        .await
        .unwrap();
}

#[tokio::test]
async fn executors_rise_with_the_backlog_and_fall_back_to_the_minimum() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let mut job_tasks = tasks(24, &["nm1", "nm2", "nm3"], "sleep 1");
    job_tasks.push(json!({"id": "long", "command": "sleep 14", "cpus": 1}));
    let job = json!({"name": "it-dynamic",
        "executor": {"cores": 2, "memory_mb": 256, "min_executors": 1, "max_executors": 6,
                     "idle_timeout_ms": 2000},
        "tasks": job_tasks});
    let app = submit_job(c, "it-dynamic", &job);
    // The RM shows the job's progress (succeeded tasks over all) while it runs: the short
    // tasks end long before the 14 s one.
    let mid = wait_for(
        "the RM to report progress mid-job",
        Duration::from_secs(120),
        || async {
            let r = rest(c).app(&app).await.ok()?;
            (r.progress > 0.0 && r.progress < 100.0).then_some(r.progress)
        },
    )
    .await;
    eprintln!("the RM's progress mid-job: {mid:.0}%");
    let summary = summary_of(
        &am::wait_succeeded(c, &app, Duration::from_secs(240))
            .await
            .diagnostics,
    );
    let samples: Vec<(u64, u32)> = summary
        .executors_over_time
        .iter()
        .map(|s| (s.t_ms, s.executors))
        .collect();
    eprintln!("executors over time: {samples:?}");
    let peak = samples.iter().map(|s| s.1).max().unwrap();
    let peak_at = samples.iter().position(|s| s.1 == peak).unwrap();
    assert!(peak >= 3, "never more than {peak} executors: {samples:?}");
    assert!(
        samples[peak_at..].iter().any(|s| s.1 == 1),
        "never back to the minimum of 1 after the peak: {samples:?}"
    );
}

#[tokio::test]
async fn losing_a_nodemanager_mid_job_reruns_its_tasks_elsewhere() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let job = json!({"name": "it-nm-loss",
        "executor": {"cores": 2, "memory_mb": 256, "max_executors": 6, "idle_timeout_ms": 60000},
        "tasks": tasks(30, &["nm1", "nm2", "nm3"], "sleep 4")});
    let app = submit_job(c, "it-nm-loss", &job);
    let d = Driver::find(c, &app).await;
    let am_host = am::am_host(c, &app);
    // Kill a node that runs executors but not the AM, once tasks are running there.
    let victim = wait_for(
        "executors on a node without the AM",
        Duration::from_secs(90),
        || async {
            let s = d.state().await;
            s["executors"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["state"] == "running" && e["host"] != am_host.as_str())
                .map(|e| e["host"].as_str().unwrap().to_string())
                .next()
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let lost: Vec<String> = am::live(&am::executors_of(&d.state().await))
        .iter()
        .filter(|e| e["host"] == victim.as_str())
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert!(
        cluster::cluster_sh_args(&["kill-nm", &victim]),
        "kill-nm {victim}"
    );
    // Whatever the loss (the NM's own process natively, the whole node on docker), its
    // executors are lost without counting against the app.
    for id in &lost {
        let reason = wait_for("the loss reason", Duration::from_secs(120), || async {
            let r = d.get(&format!("/v1/executors/{id}/loss-reason")).await;
            r["reason"].as_str().is_some().then_some(r)
        })
        .await;
        assert_eq!(
            reason["counts_against_app"], false,
            "executor {id}: {reason}"
        );
    }
    let r = rest(c)
        .wait_final(&app, Duration::from_secs(240))
        .await
        .unwrap();
    // Bring the node back for whoever comes next.
    assert!(cluster::cluster_sh("up"), "restarting {victim}");
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{}",
        r.diagnostics
    );
    let report = job_report(c, &app);
    let retried: Vec<_> = report.tasks.iter().filter(|t| t.attempts >= 2).collect();
    eprintln!(
        "killed {victim}; {} task(s) ran again: {:?}",
        retried.len(),
        retried
            .iter()
            .map(|t| (&t.task_id, t.attempts, &t.host))
            .collect::<Vec<_>>()
    );
    assert!(
        !retried.is_empty(),
        "no task ran a second time after {victim} died"
    );
    for t in &retried {
        assert_ne!(t.host, victim, "{t:?} finished on the dead node");
        assert_eq!(t.exit_code, 0);
    }
}
