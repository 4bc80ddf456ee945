//! Submission settings of production clusters, on the real cluster: priority,
//! application type and a lifetime, each as the RM reports it, and the lifetime ending the
//! app at its deadline with diagnostics that say so; resources for the executors and for
//! the AM's own container (the latter submitted over the RM's client port).

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::{Duration, Instant};

#[tokio::test]
async fn priority_type_and_a_lifetime_that_ends_the_app() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let t0 = Instant::now();
    let app = am::submit(
        c,
        "it-lifetime",
        &[
            "--executors",
            "1",
            "--keep-running",
            "--priority",
            "5",
            "--lifetime",
            "15",
            "--application-type",
            "YARN-AM-IT",
            "--attempt-failures-validity-interval",
            "60000",
        ],
    );
    let rest = am::rest(c);
    let r = rest.app(&app).await.unwrap();
    assert_eq!((r.priority, r.application_type.as_str()), (5, "YARN-AM-IT"));
    let timeouts = rest
        .get_value(&format!("/ws/v1/cluster/apps/{app}/timeouts"))
        .await
        .unwrap();
    let lifetime = &timeouts["timeouts"]["timeout"][0];
    assert_eq!(lifetime["type"], "LIFETIME", "{timeouts}");
    assert_ne!(lifetime["expiryTime"], "UNLIMITED", "{timeouts}");
    let end = rest
        .wait_final(&app, Duration::from_secs(90))
        .await
        .unwrap();
    let took = t0.elapsed();
    eprintln!(
        "killed by its lifetime {took:?} after submit: {}",
        end.diagnostics
    );
    assert_eq!(end.state, "KILLED", "{}", end.diagnostics);
    assert!(end.diagnostics.contains("lifetime"), "{}", end.diagnostics);
    assert!(
        took >= Duration::from_secs(14),
        "killed before its lifetime: {took:?}"
    );
}

/// ACLs and a log-aggregation context travel with the submission: the RM takes both (the
/// ACLs are not in its report and are enforced only under yarn.acl.enable, off on the test
/// cluster), every container launches with the ACLs in its context, and the NodeManagers
/// aggregate only the files the include pattern names: the task's stdout reaches HDFS, its
/// stderr does not.
#[tokio::test]
async fn acls_and_a_log_include_pattern() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let job = am::one_task_job(
        "it-log-pattern",
        "echo kept-line-5521; echo dropped-line >&2",
    );
    let path = am::write_job(c, "it-log-pattern", &job);
    let app = am::submit(
        c,
        "it-log-pattern",
        &[
            "--job",
            path.to_str().unwrap(),
            "--view-acl",
            "bob,carol ops",
            "--modify-acl",
            "carol",
            "--log-include-pattern",
            "stdout$",
        ],
    );
    let r = am::wait_succeeded(c, &app, Duration::from_secs(120)).await;
    assert_eq!(r.final_status, "SUCCEEDED", "{}", r.diagnostics);
    let out = am::yarn_am(c)
        .args(["logs", &app, "--task", "t0"])
        .output()
        .unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "kept-line-5521\n"),
        "{}",
        am::text(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("read from the aggregated logs"),
        "{}",
        am::text(&out)
    );
    let err = am::yarn_am(c)
        .args(["logs", &app, "--task", "t0", "--file", "stderr"])
        .output()
        .unwrap();
    let all = am::text(&err);
    assert_eq!(err.status.code(), Some(1), "{all}");
    assert!(!all.contains("dropped-line"), "{all}");
    assert!(all.contains("its aggregated logs have none"), "{all}");
}

/// Gives a node the exclusive node label `it` (the test cluster's queue may use that
/// partition, see conf/cluster/capacity-scheduler.xml) for one test, and takes it back when
/// dropped, also when the test fails: while labelled, the node takes no unlabelled request.
struct Labelled {
    c: &'static cluster::Cluster,
    node_id: &'static str,
}

impl Labelled {
    fn new(c: &'static cluster::Cluster, node_id: &'static str) -> Labelled {
        // Adding a label that exists already is refused: then it is there, which is the point.
        let _ = c.rm_post(
            "/ws/v1/cluster/add-node-labels",
            Some(r#"{"nodeLabelInfo":[{"name":"it","exclusivity":true}]}"#),
        );
        c.rm_post(
            &format!("/ws/v1/cluster/nodes/{node_id}/replace-labels?labels=it"),
            None,
        )
        .expect("labelling the node");
        Labelled { c, node_id }
    }
}

impl Drop for Labelled {
    fn drop(&mut self) {
        let path = format!(
            "/ws/v1/cluster/nodes/{}/replace-labels?labels=",
            self.node_id
        );
        if let Err(e) = self.c.rm_post(&path, None) {
            eprintln!("could not take the label back from {}: {e}", self.node_id);
        }
    }
}

/// Executors and the AM asked with a node label land only on the node of that partition,
/// though two other nodes have room; the RM reports the AM's label expression.
#[tokio::test]
async fn executors_asked_with_a_node_label_land_only_in_its_partition() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let _label = Labelled::new(c, "nm3:45454");
    let app = am::submit(
        c,
        "it-node-label",
        &[
            "--executors",
            "3",
            "--keep-running",
            "--node-label",
            "it",
            "--am-node-label",
            "it",
        ],
    );
    let d = am::Driver::find(c, &app).await;
    d.wait_running(3, Duration::from_secs(90)).await;
    let hosts: Vec<String> = am::placements(&d.state().await)
        .into_iter()
        .map(|(h, _)| h)
        .collect();
    let report = am::rest(c)
        .get_value(&format!("/ws/v1/cluster/apps/{app}"))
        .await
        .unwrap();
    let _ = am::yarn_am(c).args(["kill", &app]).output();
    assert_eq!(
        hosts,
        ["nm3", "nm3", "nm3"],
        "executors outside the partition"
    );
    let a = &report["app"];
    assert_eq!(a["amNodeLabelExpression"], "it", "{report}");
    assert!(
        a["amHostHttpAddress"]
            .as_str()
            .unwrap_or("")
            .starts_with("nm3:"),
        "the AM outside the partition: {report}"
    );
}

/// Executors asking a countable resource of the cluster's own (`example.com/accelerator`, two
/// per NodeManager on the test cluster) fit two a node though memory and vcores would take
/// more: of 7 asked, 6 run, 2 a node; each learns what it got; the RM counts the resource in
/// the app's report.
#[tokio::test]
async fn executors_asking_a_custom_resource_get_it_and_fit_as_many_as_the_nodes_have() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let app = am::submit(
        c,
        "it-resources",
        &[
            "--executors",
            "7",
            "--keep-running",
            "--executor-resource",
            "example.com/accelerator=1",
            "--executor-command",
            "echo \"got=$YARN_AM_EXECUTOR_RESOURCES\"; sleep 600",
        ],
    );
    let d = am::Driver::find(c, &app).await;
    d.wait_running(6, Duration::from_secs(90)).await;
    // Memory and vcores would take all 7 at once (11 slots): the seventh waits for a node's
    // accelerator. Several NodeManager heartbeats (500 ms) give the RM the chance to err.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut per_host = std::collections::BTreeMap::new();
    for (h, _) in am::placements(&d.state().await) {
        *per_host.entry(h).or_insert(0) += 1;
    }
    let logs = am::wait_for("six executors' lines", Duration::from_secs(30), || async {
        let out = am::yarn_am(c).args(["logs", &app]).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (text.matches("got=example.com/accelerator=1").count() >= 6).then_some(text)
    })
    .await;
    let _ = am::yarn_am(c).args(["kill", &app]).output();
    assert_eq!(
        per_host.values().copied().collect::<Vec<_>>(),
        [2, 2, 2],
        "{per_host:?}"
    );
    assert!(!logs.contains("got=\n"), "{logs}");
    let (counted, xml) = am::accelerator_seconds(c, &app);
    assert!(
        counted.is_some_and(|n| n > 0),
        "the RM did not count the resource: {xml}"
    );
}

/// The AM's own container asks the cluster's resource (`--am-resource`), which only the
/// submission over the RM's client port carries (the REST one drops it): the app runs and
/// succeeds, and the RM counts accelerator-seconds though no executor asks any, so they are
/// the AM's. The other settings travel in the same submission (priority, type, lifetime).
/// Asking 3 where every node has 2 is refused at submission, naming the maximum, and no app
/// is left behind.
#[tokio::test]
async fn the_am_container_asks_a_custom_resource_over_the_client_port() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let app = am::submit(
        c,
        "it-am-resource",
        &[
            "--executors",
            "1",
            "--executor-command",
            "echo ok",
            "--am-resource",
            "example.com/accelerator=1",
            "--priority",
            "3",
            "--application-type",
            "YARN-AM-IT",
            "--lifetime",
            "600",
            "--wait",
            "--wait-timeout",
            "120",
        ],
    );
    let rest = am::rest(c);
    let r = rest.app(&app).await.unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{}",
        r.diagnostics
    );
    assert_eq!((r.priority, r.application_type.as_str()), (3, "YARN-AM-IT"));
    let timeouts = rest
        .get_value(&format!("/ws/v1/cluster/apps/{app}/timeouts"))
        .await
        .unwrap();
    eprintln!("timeouts of an app submitted over IPC: {timeouts}");
    let lifetime = &timeouts["timeouts"]["timeout"][0];
    assert_eq!(lifetime["type"], "LIFETIME", "{timeouts}");
    assert_ne!(lifetime["expiryTime"], "UNLIMITED", "{timeouts}");
    let (counted, xml) = am::accelerator_seconds(c, &app);
    eprintln!("accelerator-seconds of the AM: {counted:?}");
    assert!(
        counted.is_some_and(|n| n > 0),
        "the RM did not count the AM's resource: {xml}"
    );

    let out = am::yarn_am(c)
        .args([
            "submit",
            "--name",
            "it-am-resource-3",
            "--max-attempts",
            "1",
        ])
        .args(["--executors", "1", "--executor-command", "echo ok"])
        .args(["--am-resource", "example.com/accelerator=3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("asking 3: {}", am::text(&out));
    // 2: `submit` itself failed (no app to report on).
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("InvalidResourceRequestException")
            && err.contains("example.com/accelerator: 2"),
        "{err}"
    );
    let refused = err
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .find(|w| w.starts_with("application_"))
        .unwrap_or_else(|| panic!("no app id in {err}"));
    assert!(
        rest.app(refused).await.is_err(),
        "the RM kept the refused {refused}"
    );
}

/// A job with two executor kinds, one asking the cluster's accelerator: each task runs on an
/// executor of its own kind (a task on the wrong kind exits 3, and one failure fails the
/// job), the kinds number their executors apart (default odd, accel even), and the RM counts
/// the accelerator for the app.
#[tokio::test]
async fn a_job_of_two_executor_kinds_runs_each_task_on_its_kind() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let plain = r#"test -z "$YARN_AM_EXECUTOR_RESOURCES" && test "$YARN_AM_EXECUTOR_KIND" = default || exit 3; sleep 1"#;
    let accel = r#"case "$YARN_AM_EXECUTOR_RESOURCES" in *example.com/accelerator=1*) ;; *) exit 3;; esac; test "$YARN_AM_EXECUTOR_KIND" = accel || exit 3; sleep 1"#;
    let mut tasks = Vec::new();
    for i in 0..4 {
        tasks.push(serde_json::json!({"id": format!("plain-{i}"), "command": plain}));
        tasks.push(
            serde_json::json!({"id": format!("accel-{i}"), "command": accel, "kind": "accel"}),
        );
    }
    let job = serde_json::json!({
        "name": "it-kinds",
        "executor": {"cores": 1, "memory_mb": 256, "max_executors": 2},
        "kinds": {"accel": {"cores": 1, "memory_mb": 256, "max_executors": 2,
                            "resources": {"example.com/accelerator": 1}}},
        "task_retries": 1,
        "allocation": {"backlog_timeout_ms": 100, "sustained_backlog_timeout_ms": 100},
        "tasks": tasks,
    });
    let app = am::submit_job(c, "it-kinds", &job);
    let report = am::wait_succeeded(c, &app, Duration::from_secs(120)).await;
    let summary = am::summary_of(&report.diagnostics);
    assert_eq!((summary.tasks_total, summary.tasks_succeeded), (8, 8));
    let full = am::job_report(c, &app);
    for t in &full.tasks {
        let id = t.executor_id.get();
        let want = if t.task_id.starts_with("accel") { 0 } else { 1 };
        assert_eq!(id % 2, want, "{} ran on executor {id}", t.task_id);
    }
    let (counted, xml) = am::accelerator_seconds(c, &app);
    assert!(
        counted.is_some_and(|n| n > 0),
        "the RM did not count the accelerator: {xml}"
    );
}

/// `--executor-kind` on an app without a job: each kind runs its own command with what it
/// got, and the app ends when every kind's executors have exited 0.
#[tokio::test]
async fn executor_kinds_from_the_command_line_run_their_own_commands() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let app = am::submit(
        c,
        "it-kinds-cli",
        &[
            "--executors",
            "1",
            "--executor-command",
            "echo \"plain kind=$YARN_AM_EXECUTOR_KIND\"",
            "--executor-kind",
            "accel:memory=256,vcores=1,executors=2,resource.example.com/accelerator=1,\
             command=echo \"accel kind=$YARN_AM_EXECUTOR_KIND got=$YARN_AM_EXECUTOR_RESOURCES\"; \
             sleep 2",
        ],
    );
    am::wait_succeeded(c, &app, Duration::from_secs(90)).await;
    let logs = am::wait_for(
        "the three executors' lines",
        Duration::from_secs(30),
        || async {
            let out = am::yarn_am(c).args(["logs", &app]).output().ok()?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            (text.contains("plain kind=default")
                && text
                    .matches("accel kind=accel got=example.com/accelerator=1")
                    .count()
                    == 2)
                .then_some(text)
        },
    )
    .await;
    assert!(!logs.contains("plain kind=accel"), "{logs}");
    // Counted in whole seconds: the accel executors sleep 2 s.
    let (counted, xml) = am::accelerator_seconds(c, &app);
    assert!(counted.is_some_and(|n| n > 0), "{xml}");
}
