//! Failover on the real cluster: the ResourceManager restarted (work-preserving recovery)
//! or a NodeManager restarted (NM recovery) in the middle of a job. The job must succeed
//! with no executor lost and no task run twice.
//!
//! Each test runs alone on the cluster: it restarts a daemon every other test relies on.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::collections::BTreeMap;
use std::time::Duration;

use am::{job_report, wait_for, Driver};
use serde_json::json;

/// A job of `sleep 5` tasks on three fixed executors (no idle release while it runs), long
/// enough for a daemon restart in its middle.
fn job(name: &str) -> serde_json::Value {
    let tasks: Vec<_> = (0..36)
        .map(|i| {
            let host = ["nm1", "nm2", "nm3"][i % 3];
            json!({"id": format!("t{i:02}"), "command": "sleep 5", "cpus": 1,
                   "preferred_hosts": [host]})
        })
        .collect();
    json!({"name": name,
        "executor": {"cores": 2, "memory_mb": 256, "min_executors": 3, "max_executors": 3,
                     "idle_timeout_ms": 600000},
        "tasks": tasks})
}

/// Runs the job with `submit --wait`, runs `cluster.sh disrupt` once its executors run and
/// tasks have finished (`{host}` in `disrupt`: a node running an executor, `prefer` if it
/// does), and checks the result: SUCCEEDED, no executor lost, every task run
/// exactly once, executors told to stop by the AM, and `--wait` rode out the disruption.
async fn survives(name: &str, prefer: Option<&str>, disrupt: &[&str]) {
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let path = am::write_job(c, name, &job(name));
    let mut waiting = am::yarn_am(c)
        .args([
            "submit",
            "--wait",
            "--wait-timeout",
            "300",
            "--max-attempts",
            "1",
        ])
        .args(["--name", name, "--job"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(waiting.stdout.take().unwrap());
    let app = tokio::task::block_in_place(|| {
        let mut line = String::new();
        loop {
            line.clear();
            let n = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
            assert!(n > 0, "submit --wait printed no app id");
            if let Some(app) = line.strip_prefix("submitted ") {
                break app.trim().to_string();
            }
        }
    });
    cluster::track_app(&app);
    let d = Driver::find(c, &app).await;
    let hosts: Vec<String> = wait_for(
        "3 running executors and finished tasks",
        Duration::from_secs(120),
        || async {
            let s = d.state().await;
            let live = am::live(&am::executors_of(&s))
                .iter()
                .filter(|e| e["state"] == "running")
                .map(|e| e["host"].as_str().unwrap().to_string())
                .collect::<Vec<_>>();
            let done = s["job"]["tasks_succeeded"].as_u64().unwrap_or(0);
            (live.len() == 3 && done >= 3).then_some(live)
        },
    )
    .await;
    // The node to restart: `prefer` if it runs an executor, else one that does.
    let victim = match prefer {
        Some(p) if hosts.iter().any(|h| h == p) => p.to_string(),
        Some(_) => hosts[0].clone(),
        None => String::new(),
    };
    let disrupt: Vec<String> = disrupt
        .iter()
        .map(|a| a.replace("{host}", &victim))
        .collect();
    // Executors seen, by id, with their state; one that exits before the job ends is lost.
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let sh = tokio::task::spawn_blocking({
        let args = disrupt.clone();
        move || cluster::cluster_sh_args(&args.iter().map(String::as_str).collect::<Vec<_>>())
    });
    // Watch the AM while the daemon restarts and until the job is over.
    let mut restarted = None;
    let mut sh = Some(sh);
    loop {
        if let Some(h) = sh.as_mut().filter(|h| h.is_finished()) {
            restarted = Some(h.await.unwrap());
            sh = None;
        }
        let Ok(resp) = d
            .http
            .get(format!("{}/v1/state", d.url))
            .bearer_auth(&d.secret)
            .send()
            .await
        else {
            break; // the AM is gone: the job is over
        };
        let Ok(s) = resp.json::<serde_json::Value>().await else {
            break;
        };
        for e in am::executors_of(&s) {
            seen.insert(
                e["id"].as_str().unwrap().to_string(),
                format!("{} {}", e["state"], e["reason"]),
            );
        }
        let job = &s["job"];
        if job["tasks_succeeded"] == job["tasks_total"] || job["failure"].is_string() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if let Some(h) = sh {
        restarted = Some(h.await.unwrap());
    }
    assert_eq!(restarted, Some(true), "cluster.sh {disrupt:?} failed");
    am::wait_succeeded(c, &app, Duration::from_secs(240)).await;
    let lost: Vec<_> = seen
        .iter()
        .filter(|(_, s)| s.starts_with("\"exited\""))
        .collect();
    assert!(
        lost.is_empty(),
        "executors lost during {disrupt:?}: {lost:?}"
    );
    assert_eq!(seen.len(), 3, "executors: {seen:?}");
    let out = tokio::task::block_in_place(|| {
        let mut rest_of_stdout = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest_of_stdout).unwrap();
        let out = waiting.wait_with_output().unwrap();
        format!(
            "{}{rest_of_stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        out.starts_with("exit status: 0"),
        "submit --wait did not ride out {disrupt:?}: {out}"
    );
    let report = job_report(c, &app);
    assert!(report.succeeded);
    let twice: Vec<_> = report.tasks.iter().filter(|t| t.attempts != 1).collect();
    assert!(twice.is_empty(), "tasks run more than once: {twice:?}");
    eprintln!(
        "{disrupt:?} mid-job: {} tasks once each, executors {seen:?}",
        report.tasks.len()
    );
    am::assert_executors_told_to_stop(c, &app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_survives_a_resourcemanager_restart() {
    let _turn = gate::alone();
    survives("it-failover-rm", None, &["restart-rm"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_survives_a_nodemanager_restart() {
    let _turn = gate::alone();
    survives("it-failover-nm", Some("nm2"), &["restart-nm", "{host}"]).await;
}
