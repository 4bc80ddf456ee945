//! Liveness on the real cluster: an executor that stops polling is declared lost
//! and its work runs elsewhere; a task attempt past its `timeout_ms` is killed and retried.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::Duration;

use am::{wait_for, Driver};
use serde_json::json;

/// The value of `name` in the environment of process `pid` (None: gone, or not ours).
fn env_of(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    environ
        .split(|b| *b == 0)
        .map(String::from_utf8_lossy)
        .find_map(|kv| kv.strip_prefix(&prefix).map(str::to_string))
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).to_string())
        .unwrap_or_default()
}

/// Processes of `app` (their environment names one of its containers) for which `keep`
/// holds.
fn processes_of(app: &str, keep: impl Fn(u32) -> bool) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let ours = env_of(pid, yarn_am_wire::executor_env::CONTAINER_ID)
            .is_some_and(|c| cluster::is_container_of(&c, app));
        if ours && keep(pid) {
            out.push(pid);
        }
    }
    out
}

/// The `yarn-am executor` process of executor `id` of `app`.
fn executor_pid(app: &str, id: &str) -> Option<u32> {
    processes_of(app, |pid| {
        cmdline(pid).contains("yarn-am\0executor")
            && env_of(pid, yarn_am_wire::executor_env::EXECUTOR_ID).as_deref() == Some(id)
    })
    .into_iter()
    .next()
}

/// A process this test stopped: continued and killed however the test ends, so that
/// nothing it stopped outlives it.
struct Stopped(u32);

impl Drop for Stopped {
    fn drop(&mut self) {
        // Only if it is still the same executor process (pids are not reused this fast,
        // but a check costs nothing).
        if cmdline(self.0).contains("yarn-am\0executor") {
            unsafe {
                libc::kill(self.0 as i32, libc::SIGCONT);
                libc::kill(self.0 as i32, libc::SIGKILL);
            }
        }
    }
}

/// SIGSTOP of one executor mid-job, with a 4 s silence timeout: the AM declares it lost
/// (reason in the API), releases its container, reruns its tasks elsewhere, and the job
/// succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_executor_is_declared_lost_and_its_tasks_run_elsewhere() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // 18 `sleep 3` tasks on three two-core executors: every executor is busy when one stops.
    let app = am::submit_busy_job(c, "it-liveness-silent", 18, 4);
    let d = Driver::find(c, &app).await;
    // Wait until three executors run tasks.
    let state = wait_for("three busy executors", Duration::from_secs(120), || async {
        let s = d.state().await;
        let running = s["running"].as_u64().unwrap_or(0);
        (running >= 3 && s["job"]["tasks_succeeded"].as_u64().unwrap_or(0) >= 1).then_some(s)
    })
    .await;
    let victim = am::live(&am::executors_of(&state))
        .iter()
        .find(|e| e["state"] == "running")
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["container_id"].as_str().unwrap().to_string(),
            )
        })
        .expect("a running executor");
    let (id, container) = victim;
    let pid = executor_pid(&app, &id).expect("the victim's process");
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGSTOP) }, 0);
    let _stopped = Stopped(pid);
    let stopped_at = std::time::Instant::now();
    eprintln!("stopped executor {id} ({container}), pid {pid}");

    // The AM gives up on it after 4 s without a poll, and says why.
    let reason = wait_for("the loss reason", Duration::from_secs(60), || async {
        let r = d.get(&format!("/v1/executors/{id}/loss-reason")).await;
        r["reason"]
            .as_str()
            .filter(|s| s.starts_with("lost: no poll"))
            .map(|_| r.clone())
    })
    .await;
    let declared_after = stopped_at.elapsed();
    eprintln!("declared lost {declared_after:?} after SIGSTOP: {reason}");
    assert!(
        reason["reason"]
            .as_str()
            .unwrap()
            .contains("executor silence timeout 4000 ms"),
        "{reason}"
    );
    assert_eq!(reason["counts_against_app"], false, "{reason}");

    let report = am::wait_succeeded(c, &app, Duration::from_secs(180)).await;
    let summary = am::job_report(c, &app);
    assert!(summary.succeeded, "{}", report.diagnostics);
    assert_eq!(summary.tasks_succeeded, 18);
    // Its tasks ran again elsewhere: none succeeded on the stopped executor after the stop,
    // and at least one task needed a second attempt.
    let rerun: Vec<_> = summary.tasks.iter().filter(|t| t.attempts > 1).collect();
    assert!(!rerun.is_empty(), "no task ran again: {:?}", summary.tasks);
    assert!(
        rerun.iter().all(|t| t.executor_id.to_string() != id),
        "a rerun finished on the lost executor: {rerun:?}"
    );
    // Its container went back to YARN: the AM released it and YARN reported it completed.
    let log = am::am_log(c, &app);
    assert!(
        log.lines()
            .any(|l| l.contains("executor went silent") && l.contains(&format!("executor={id}"))),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("container completed") && l.contains(&container)),
        "the stopped executor's container never completed:\n{log}"
    );
    // Not an executor failure of the app.
    assert!(!report.diagnostics.contains("executor failures"));
    eprintln!(
        "job succeeded; {} task(s) rerun after the loss: {:?}",
        rerun.len(),
        rerun
            .iter()
            .map(|t| (&t.task_id, t.attempts, &t.executor_id))
            .collect::<Vec<_>>()
    );
}

/// A task whose first attempt hangs, with `timeout_ms` 3000: attempt 0 is killed and fails
/// naming the timeout, attempt 1 succeeds, and the hung process is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_attempt_is_killed_at_its_timeout_and_the_retry_succeeds() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let name = "it-liveness-timeout";
    // Attempts count from 0 (YARN_AM_TASK_ATTEMPT).
    let command = r#"if [ "$YARN_AM_TASK_ATTEMPT" = 0 ]; then sleep 600; fi; echo done"#;
    let mut job = am::one_task_job(name, command);
    job["task_retries"] = json!(2);
    job["tasks"][0]["timeout_ms"] = json!(3000);
    let app = am::submit_job(c, name, &job);
    let report = am::wait_succeeded(c, &app, Duration::from_secs(120)).await;
    let summary = am::job_report(c, &app);
    let t = &summary.tasks[0];
    assert_eq!((t.attempts, t.exit_code), (2, 0), "{t:?}");
    let why = t.last_failure.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("attempt 0 timed out after 3000 ms"),
        "{why} ({})",
        report.diagnostics
    );
    // The AM told the executor to kill it, and the executor did.
    let log = am::am_log(c, &app);
    assert!(log.contains("task attempt timed out; killing it"), "{log}");
    let executor_logs: String = c
        .container_log_dirs(&app)
        .into_iter()
        .filter(|d| !d.to_string_lossy().ends_with("_000001"))
        .filter_map(|d| std::fs::read_to_string(d.join("stderr")).ok())
        .collect();
    assert!(
        executor_logs.contains("the AM says kill this attempt"),
        "{executor_logs}"
    );
    // No hung attempt left running anywhere.
    let left = processes_of(&app, |pid| {
        env_of(pid, "YARN_AM_TASK_ID").is_some() && cmdline(pid).contains("sleep")
    });
    assert!(left.is_empty(), "hung task processes left: {left:?}");
    eprintln!("timed-out attempt: {why}");
}
