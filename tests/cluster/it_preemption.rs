//! CapacityScheduler preemption on the real cluster: a job in queue `default`
//! fills the cluster beyond its 70% guarantee; an app in queue `high` (30%, empty until then)
//! makes the RM's preemption policy mark containers of the job. The AM answers the RM's
//! `PreemptionMessage` by giving back executors of its own choice before the RM's wait
//! (`max_wait_before_kill`, 10 s on the test cluster) runs out: their tasks run again on the
//! executors left, no failure is counted, and the job succeeds; the app in `high` gets its
//! containers. Queues and the policy: `conf/cluster/capacity-scheduler.xml`, `yarn-site.xml`.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::{Duration, Instant};

use am::{executors_of, rest, submit, submit_job, summary_of, Driver};

use serde_json::json;

#[tokio::test]
async fn an_app_in_the_high_queue_makes_the_am_give_back_executors_before_the_kill() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    am::wait_until_no_node_runs_containers(c).await;
    // Ten 1-core, 1 GB executors and the AM: 11 of 12 vcores, far over default's 70%.
    let tasks: Vec<_> = (0..60)
        .map(|i| json!({"id": format!("t{i:02}"), "command": "sleep 4"}))
        .collect();
    let job = json!({"name": "it-preempt",
        "executor": {"cores": 1, "memory_mb": 1024, "min_executors": 10, "max_executors": 10,
                     "idle_timeout_ms": 600000},
        "locality_wait_ms": {"node": 0, "rack": 0},
        "tasks": tasks});
    let t0 = Instant::now();
    let app = submit_job(c, "it-preempt", &job);
    let d = Driver::find(c, &app).await;
    d.wait_running(10, Duration::from_secs(60)).await;
    eprintln!("10 executors running {:?} after submit", t0.elapsed());

    // Two 1 GB executors in high: the free vcore takes its AM, the two must be preempted.
    let high = submit(
        c,
        "it-preempt-high",
        &[
            "--queue",
            "high",
            "--executors",
            "2",
            "--executor-memory",
            "1024",
            "--executor-command",
            "sleep 600",
            "--keep-running",
        ],
    );
    let t_high = Instant::now();
    let rest = rest(c);
    let given = am::wait_for("executors given back", Duration::from_secs(40), || async {
        let s = d.state().await;
        let n = s["preemption"]["given_back"].as_u64().unwrap_or(0);
        (n >= 2).then_some(s)
    })
    .await;
    eprintln!(
        "given back {:?} after the high app's submit: {}",
        t_high.elapsed(),
        given["preemption"]
    );
    am::wait_for(
        "the high app's executors",
        Duration::from_secs(40),
        || async {
            let r = rest.app(&high).await.ok()?;
            (r.running_containers >= 3).then_some(())
        },
    )
    .await;
    eprintln!(
        "high app runs AM + 2 {:?} after its submit",
        t_high.elapsed()
    );

    // What the AM's API and page say, before the job ends.
    let s = d.state().await;
    assert_eq!(s["executor_failures"], 0, "{}", s["preemption"]);
    let execs = executors_of(&s);
    let back: Vec<_> = execs
        .iter()
        .filter(|e| {
            e["reason"]
                .as_str()
                .is_some_and(|r| r.contains("preemption request"))
        })
        .collect();
    assert!(back.len() >= 2, "executors given back: {execs:?}");
    for e in &back {
        assert_eq!(e["counts_against_app"], false, "{e}");
    }
    let killed_by_rm = execs.iter().filter(|e| e["exit_status"] == -102).count();
    assert_eq!(killed_by_rm, 0, "the RM killed executors: {execs:?}");
    let page = d.get_text("/").await;
    assert!(page.contains("id=\"preemption\""), "page: {page}");

    let r = rest
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
    assert_eq!((summary.tasks_succeeded, summary.tasks_failed), (60, 0));
    // The tasks that ran on the executors given back ran again elsewhere, without a
    // failure: as many as the give-back reasons said were running there.
    let lost: u32 = back
        .iter()
        .filter_map(|e| {
            let r = e["reason"].as_str()?;
            let (_, after) = r.split_once('(')?;
            after.split_once(" running task")?.0.parse::<u32>().ok()
        })
        .sum();
    let report = am::job_report(c, &app);
    let rerun: Vec<_> = report.tasks.iter().filter(|t| t.attempts > 1).collect();
    assert!(
        rerun.iter().all(|t| t.last_failure.is_none()),
        "re-run tasks: {rerun:?}"
    );
    assert_eq!(rerun.len() as u32, lost, "re-run tasks: {rerun:?}");
    eprintln!("{} task(s) ran again after a give-back", rerun.len());
    let _ = am::yarn_am(c).args(["kill", &high]).output();
}
