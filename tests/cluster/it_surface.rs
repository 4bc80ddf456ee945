//! Why an app cannot run or failed, said in the user's terms, on the real
//! cluster: a container larger than the cluster's maximum allocation is refused before
//! anything is submitted, naming the limit; an executor killed for using more memory than
//! its container has (the NodeManagers check physical memory) fails the app with
//! diagnostics that name the limit; an app that cannot get executors says why in
//! `/v1/state` within seconds.
//!
//! The one that fills the cluster runs alone on it; the others beside other tests.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::Duration;

use am::{text, yarn_am, Driver};

#[tokio::test]
async fn an_executor_above_the_maximum_allocation_is_refused_before_submitting() {
    let _turn = gate::shared();
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
    let _turn = gate::shared();
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

/// A blocker takes all but 256 MB and one vcore of every node (its AM, 256 MB, and one
/// 3,840 MB executor on each node); a second app's AM takes one of those gaps, and its
/// 512 MB executor fits nowhere: `/v1/state` says the cluster is full within seconds.
#[tokio::test]
async fn an_app_that_cannot_get_executors_says_why() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    am::wait_until_no_node_runs_containers(c).await;
    let blocker = am::submit(
        c,
        "it-blocker",
        &[
            "--executors",
            "3",
            "--executor-memory",
            "3840",
            "--executor-vcores",
            "3",
        ],
    );
    Driver::find(c, &blocker)
        .await
        .wait_running(3, Duration::from_secs(90))
        .await;
    let app = am::submit(
        c,
        "it-waiting",
        &[
            "--executors",
            "1",
            "--executor-memory",
            "512",
            "--keep-running",
        ],
    );
    let d = Driver::find(c, &app).await;
    let waiting = am::wait_for(
        "the AM to say why its executor waits",
        Duration::from_secs(10),
        || async {
            let st = d.state().await;
            let w = &st["waiting"];
            w["reason"]
                .as_str()
                .map(|r| (w["executors"].clone(), r.to_string()))
        },
    )
    .await;
    eprintln!("waiting: {waiting:?}");
    assert_eq!(waiting.0, 1);
    assert!(
        waiting
            .1
            .starts_with("the cluster is full: no node has 512 MB and 1 vcores free")
            && waiting.1.contains("queue root.default uses"),
        "{}",
        waiting.1
    );
    // `yarn-am status` asks the AM too (this user has the app's secret file).
    let out = yarn_am(c).args(["status", &app]).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(4), "{all}");
    assert!(
        all.contains("waiting:     1 executor(s) waiting for")
            && all.contains("the cluster is full"),
        "{all}"
    );
    for a in [&app, &blocker] {
        am::rest(c).kill(a, "it_surface is done").await.unwrap();
    }
    for a in [&app, &blocker] {
        am::rest(c)
            .wait_final(a, Duration::from_secs(60))
            .await
            .unwrap();
    }
}

/// `yarn-am logs` by task id while the job runs, `--follow` streaming a task's lines as it
/// writes them and returning when the app ends, the AM's log, and the same task's output
/// after the end (the NodeManagers keep logs without aggregation).
#[tokio::test]
async fn logs_by_task_while_running_following_and_after_the_end() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let mut job = am::one_task_job("it-logs", "echo first-task-output; sleep 20");
    job["executor"]["max_executors"] = 2.into();
    job["executor"]["initial_executors"] = 2.into();
    job["tasks"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
        "id": "t1", "cpus": 1,
        "command": "for i in 1 2 3 4 5; do echo follow-line-$i; sleep 2; done"}));
    let app = am::submit_job(c, "it-logs", &job);
    let logs = |args: &[&str]| {
        let mut cmd = yarn_am(c);
        cmd.args(["logs", &app]).args(args);
        cmd
    };
    let first = am::wait_for("task t0's stdout", Duration::from_secs(90), || async {
        let out = logs(&["--task", "t0"]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        (out.status.success() && stdout.contains("first-task-output")).then_some(stdout)
    })
    .await;
    assert_eq!(first, "first-task-output\n");
    let listed = |all: bool| {
        let mut cmd = yarn_am(c);
        cmd.arg("list");
        if all {
            cmd.arg("--all");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.starts_with(&app))
            .map(str::to_string)
    };
    let running = listed(false).expect("yarn-am list shows the running app");
    assert!(
        running.contains("RUNNING") && running.ends_with("it-logs"),
        "{running}"
    );
    let follow = logs(&["--task", "t1", "--follow"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let r = am::wait_succeeded(c, &app, Duration::from_secs(120)).await;
    let out = tokio::task::spawn_blocking(move || follow.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(
        lines,
        (1..=5)
            .map(|i| format!("follow-line-{i}"))
            .collect::<Vec<_>>(),
        "{all}"
    );
    assert_eq!(r.final_status, "SUCCEEDED");
    assert_eq!(
        listed(false),
        None,
        "an ended app is listed only with --all"
    );
    let ended = listed(true).expect("yarn-am list --all shows the ended app");
    assert!(
        ended.contains("FINISHED") && ended.contains("SUCCEEDED") && ended.contains("100%"),
        "{ended}"
    );
    // After the end: the same task, the AM's stderr, and a task that never was.
    let after = logs(&["--task", "t0"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&after.stdout),
        "first-task-output\n",
        "{}",
        text(&after)
    );
    let am_log = logs(&["--am", "--file", "stderr"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&am_log.stdout).contains("ApplicationMaster starting"),
        "{}",
        text(&am_log)
    );
    let none = logs(&["--task", "no-such-task"]).output().unwrap();
    assert_eq!(none.status.code(), Some(1), "{}", text(&none));
    assert!(
        text(&none).contains("no logs of task no-such-task"),
        "{}",
        text(&none)
    );
}

/// After the end, with log aggregation on (the test cluster's setting): `yarn-am logs
/// --task` waits for the NodeManagers to finish and reads the task's stdout from the
/// aggregated TFile on HDFS. That it came from there: no NodeManager lists a container of
/// the app any more, and the CLI names the HDFS folder it read.
#[tokio::test]
async fn logs_by_task_after_the_end_come_from_the_aggregated_files() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let started = std::time::Instant::now();
    let job = am::one_task_job(
        "it-agg-logs",
        "echo aggregated-line-4711; echo to-stderr >&2",
    );
    let app = am::submit_job(c, "it-agg-logs", &job);
    let r = am::wait_succeeded(c, &app, Duration::from_secs(120)).await;
    assert_eq!(r.final_status, "SUCCEEDED");
    let ended = started.elapsed();
    // Right after the end: the CLI itself waits for aggregation (its progress line).
    let out = yarn_am(c)
        .args(["logs", &app, "--task", "t0"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "aggregated-line-4711\n",
        "{all}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("read from the aggregated logs in /tmp/logs/")
            && stderr.contains(&format!(
                "/bucket-logs-tfile/{}/{app}",
                &app[app.len() - 4..]
            ))
            && stderr.contains("(SUCCEEDED)"),
        "{all}"
    );
    let status = am::rest(c).app(&app).await.unwrap().log_aggregation_status;
    assert_eq!(status, "SUCCEEDED");
    // No NodeManager has a container of the app now: the live path had nothing to read.
    let rest = am::rest(c);
    for node in rest.nodes(&[]).await.unwrap() {
        let v = rest
            .node_value(&node.node_http_address, "/ws/v1/node/containers")
            .await
            .unwrap();
        assert!(
            !v.to_string().contains(&app[app.find('_').unwrap()..]),
            "{} still lists a container of {app}: {v}",
            node.node_http_address
        );
    }
    let err = yarn_am(c)
        .args(["logs", &app, "--task", "t0", "--file", "stderr"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&err.stdout),
        "to-stderr\n",
        "{}",
        text(&err)
    );
    let am_log = yarn_am(c)
        .args(["logs", &app, "--am", "--file", "stderr"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&am_log.stdout).contains("ApplicationMaster starting"),
        "{}",
        text(&am_log)
    );
    eprintln!(
        "app ended after {:.1}s, aggregated logs read by {:.1}s",
        ended.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// The tracking page through the RM's proxy, in headless Chromium: it has a progress bar
/// and, without reloading, its script polls `live.json` and redraws the chart (the page
/// counts both in `#updates`); the RM reports progress above 0 mid-job meanwhile.
#[tokio::test]
async fn the_tracking_page_is_live_in_a_browser() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let mut job = am::one_task_job("it-page", "sleep 1");
    let tasks: Vec<_> = (0..30)
        .map(|i| serde_json::json!({"id": format!("t{i:02}"), "cpus": 1, "command": "sleep 1"}))
        .collect();
    job["tasks"] = tasks.into();
    let app = am::submit_job(c, "it-page", &job);
    Driver::find(c, &app)
        .await
        .wait_running(1, Duration::from_secs(60))
        .await;
    let url = am::rest(c).app(&app).await.unwrap().tracking_url.unwrap();
    assert!(url.contains("/proxy/"), "{url}");
    let profile = c.path("chromium-profile");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(["--virtual-time-budget=9000", "--dump-dom", &url])
            .output()
    })
    .await
    .unwrap()
    .expect("chromium runs (scripts/prereqs.sh installs it)");
    let dom = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(dom.contains("<progress id=\"progress\""), "{}", text(&out));
    let attr = |name: &str| -> u32 {
        let at = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("no {name}: {dom}"));
        let rest = &dom[at + name.len() + 2..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    };
    let (updates, changes) = (attr("data-count"), attr("data-chart-changes"));
    eprintln!("the page updated itself {updates} times, its chart changed {changes} times");
    assert!(updates >= 2 && changes >= 2, "{dom}");
    am::wait_succeeded(c, &app, Duration::from_secs(120)).await;
}
