//! AM crash on the real cluster: `kill -9` of the AM in the middle of a 60-task
//! job submitted with two attempts. The second attempt adopts the executors still running
//! (YARN keeps them, `keep-containers-across-application-attempts`), they find it through
//! the staging folder, and the job resumes from the journal: the app succeeds in attempt 2
//! and no task that had succeeded before the kill runs again. Twice: staged in a local
//! folder, and on HDFS through WebHDFS (journal appended through WebHDFS, `driver.url` read
//! by the executors through it).

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use am::{wait_for, Driver};
use serde_json::json;

/// 60 `sleep 2` tasks on three fixed two-core executors: about 20 s of work.
fn job(name: &str) -> serde_json::Value {
    let tasks: Vec<_> = (0..60)
        .map(|i| json!({"id": format!("t{i:02}"), "command": "sleep 2", "cpus": 1}))
        .collect();
    json!({"name": name,
        "executor": {"cores": 2, "memory_mb": 256, "min_executors": 3, "max_executors": 3,
                     "idle_timeout_ms": 600000},
        "tasks": tasks})
}

/// The log folder of AM attempt `attempt` (`..._0N_000001`).
fn attempt_dir(c: &cluster::Cluster, app: &str, attempt: u32) -> Option<PathBuf> {
    let suffix = format!("_{attempt:02}_000001");
    c.container_log_dirs(app)
        .into_iter()
        .find(|d| d.to_string_lossy().ends_with(&suffix))
}

/// The two tests share the cluster's capacity: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_am_is_replaced_and_the_job_resumes_with_its_executors() {
    let _turn = gate::shared();
    let _one = SERIAL.lock().await;
    crash_and_resume("it-am-crash", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_webhdfs_staging_a_killed_am_is_replaced_and_the_job_resumes() {
    let _turn = gate::shared();
    let _one = SERIAL.lock().await;
    let c = cluster::cluster();
    let log = crash_and_resume(
        "it-am-crash-webhdfs",
        &["--webhdfs", &c.webhdfs, "--user", "yarn-am-it"],
    )
    .await;
    assert!(
        log.contains("read the job journal of earlier attempts"),
        "attempt 2 read no journal from HDFS:\n{log}"
    );
    assert!(
        log.contains("published the driver URL"),
        "attempt 2 did not publish its URL on HDFS:\n{log}"
    );
    assert!(
        !log.contains("could not append to the job journal"),
        "{log}"
    );
}

/// Submits the 60-task job as `name` with two attempts (and `extra` submit arguments),
/// kills the AM with 20 tasks done, and checks that attempt 2 finishes the job with the
/// same executors and no task run twice. Returns attempt 2's log.
async fn crash_and_resume(name: &str, extra: &[&str]) -> String {
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let app = am::submit_job_two_attempts(c, name, &job(name), extra);
    let d = Driver::find(c, &app).await;

    // Wait for 20 succeeded tasks, then note what ran where.
    let state = wait_for("20 succeeded tasks", Duration::from_secs(120), || async {
        let s = d.state().await;
        (s["job"]["tasks_succeeded"].as_u64().unwrap_or(0) >= 20).then_some(s)
    })
    .await;
    let pid = am::kill9_am(c, &app);
    // Read right after the kill: tasks that finished in between are journaled too.
    let alive: BTreeMap<String, String> = am::live(&am::executors_of(&state))
        .iter()
        .filter(|e| e["state"] == "running")
        .map(|e| {
            (
                e["container_id"].as_str().unwrap().to_string(),
                e["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let done_before: BTreeSet<String> = state["job"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["exit_code"] == 0)
        .map(|t| t["task_id"].as_str().unwrap().to_string())
        .collect();
    assert!(done_before.len() >= 20, "{done_before:?}");
    eprintln!(
        "killed AM pid {pid} with {} tasks done; executors alive: {alive:?}",
        done_before.len()
    );

    let report = am::wait_succeeded(c, &app, Duration::from_secs(240)).await;
    let second = attempt_dir(c, &app, 2).expect("AM attempt 2 ran");
    let text = std::fs::read_to_string(second.join("job-report.json")).expect("job-report.json");
    let summary: yarn_am_core::driver::report::JobSummary = serde_json::from_str(&text).unwrap();
    assert!(summary.succeeded, "{}", report.diagnostics);
    assert_eq!(summary.tasks_succeeded, 60);
    // No task that had succeeded before the kill ran again.
    let again: Vec<_> = summary
        .tasks
        .iter()
        .filter(|t| done_before.contains(&t.task_id) && t.attempts != 1)
        .collect();
    assert!(
        again.is_empty(),
        "succeeded before the kill, run again: {again:?}"
    );
    // Attempts running on the adopted executors at the kill finished there and counted: no
    // task ran twice at all. (Only an assignment sent in the last poll reply before the
    // kill and not yet journaled could run twice; that window is well under a millisecond.)
    let twice: Vec<_> = summary.tasks.iter().filter(|t| t.attempts != 1).collect();
    assert!(twice.is_empty(), "tasks run more than once: {twice:?}");
    // The executors alive at the kill were adopted under their containers and ids.
    let log = std::fs::read_to_string(second.join("stderr")).unwrap_or_default();
    for (container, id) in &alive {
        assert!(
            log.lines().any(|l| l.contains("adopting an executor")
                && l.contains(container.as_str())
                && l.contains(&format!("executor={id}"))),
            "executor {id} in {container} was not adopted:\n{log}"
        );
    }
    // They reached the new attempt and were told to stop by it at the end.
    for dir in c.container_log_dirs(&app) {
        let cid = dir.file_name().unwrap().to_string_lossy().to_string();
        if !alive.contains_key(&cid) {
            continue;
        }
        let elog = wait_for(
            &format!("{cid} to say the AM told it to stop"),
            Duration::from_secs(15),
            || async {
                let log = std::fs::read_to_string(dir.join("stderr")).ok()?;
                log.contains("the AM says shut down").then_some(log)
            },
        )
        .await;
        assert!(elog.contains("the AM moved"), "{cid}:\n{elog}");
    }
    let adopted_ran: usize = summary
        .tasks
        .iter()
        .filter(|t| {
            !done_before.contains(&t.task_id)
                && alive.values().any(|v| *v == t.executor_id.to_string())
        })
        .count();
    eprintln!(
        "{name}: attempt 2 finished the job: {} tasks done before the kill kept, {adopted_ran} tasks after it on adopted executors",
        done_before.len()
    );
    log
}
