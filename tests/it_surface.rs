//! Why an app cannot run or failed, said in the user's terms (issue 25), on the real
//! cluster: a container larger than the cluster's maximum allocation is refused before
//! anything is submitted, naming the limit; an executor killed for using more memory than
//! its container has (the NodeManagers check physical memory) fails the app with
//! diagnostics that name the limit.

#[path = "support/am.rs"]
mod am;
#[path = "support/cluster.rs"]
mod cluster;

use am::{text, yarn_am};

#[tokio::test]
async fn an_executor_above_the_maximum_allocation_is_refused_before_submitting() {
    let c = cluster::cluster();
    let out = yarn_am(c)
        .args(["submit", "--name", "it-too-large", "--max-attempts", "1"])
        .args(["--executors", "1", "--executor-command", "true"])
        .args(["--executor-memory", "100000"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("asks for 100000 MB, above the cluster's maximum allocation of 4096 MB")
            && all.contains("yarn.scheduler.maximum-allocation-mb")
            && all.contains("--executor-memory"),
        "{all}"
    );
    assert!(!all.contains("submitted application_"), "{all}");

    let job = am::one_task_job("it-too-many-cores", "true");
    let mut job = job;
    job["executor"]["cores"] = 9.into();
    let path = am::write_job(c, "it-too-many-cores", &job);
    let out = yarn_am(c)
        .args(["submit", "--name", "it-too-many-cores", "--job"])
        .arg(&path)
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(
        all.contains("asks for 9 vcores") && all.contains("executor.cores in the job file"),
        "{all}"
    );
}

/// A task that holds 600 MB in a 256 MB executor container: the NodeManager kills the
/// container (-104) and, with one executor failure allowed, the app fails saying so.
#[tokio::test]
async fn a_task_over_its_containers_memory_fails_the_app_naming_the_limit() {
    let c = cluster::cluster();
    // `tail -n 1` keeps a line without newlines whole, until its input ends 60 s later.
    let job = am::one_task_job(
        "it-memory",
        "{ head -c 600M /dev/zero; sleep 60; } | tail -n 1 >/dev/null",
    );
    let out = am::submit_wait_cmd(c, "it-memory", &job, "yarn-am-it")
        .args(["--max-executor-failures", "1"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let app = am::submitted_app(&out);
    let r = am::rest(c).app(&app).await.unwrap();
    assert_eq!(r.final_status, "FAILED", "{}", r.diagnostics);
    assert!(
        r.diagnostics.contains("physical memory limit (-104)")
            && r.diagnostics.contains("of 256 MB physical memory used"),
        "{}",
        r.diagnostics
    );
}
