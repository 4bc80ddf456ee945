//! Many hosts, not one (the docker backend, `tests/cluster/docker.sh`): what separate nodes
//! mean for yarn-am, on the real cluster.
//!
//! - Isolation: each node has its own file system and YARN containers run as the NM's
//!   non-root user: a file one node's container writes under `/tmp` is seen by containers of
//!   that node only, never by another node's nor on this machine, and every process of the
//!   app runs as `yarn` (uid 2000).
//! - A hung node (`docker pause`: its NM, executors and tasks frozen) past the executors'
//!   silence timeout: its executors are declared lost without counting against the app,
//!   their tasks run elsewhere, the job succeeds.
//!
//! A whole node killed mid-job is `it_job`'s `losing_a_nodemanager...` (kill-nm is a
//! `docker kill` of the node on this backend). On the native backend (one disk, one user)
//! there is nothing to prove here: the tests say so and return.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use am::{wait_for, Driver};
use serde_json::json;

/// The daemons' user in the node image (tests/cluster/docker/Dockerfile).
const YARN_UID: u32 = 2000;

fn docker_cluster() -> Option<&'static cluster::Cluster> {
    let c = cluster::cluster();
    if c.backend() == "docker" {
        Some(c)
    } else {
        eprintln!("skipped: the native backend shares this machine's disk and user");
        None
    }
}

/// Unpauses the node when the test ends, passed or not.
struct Paused(String);

impl Drop for Paused {
    fn drop(&mut self) {
        cluster::cluster_sh_args(&["unpause-node", &self.0]);
    }
}

/// What one executor container reported: its node, its /tmp listing, `id -un` and `id -u`.
#[derive(Debug)]
struct Seen {
    node: String,
    tmp: Vec<String>,
    user: String,
    uid: u32,
}

fn reports(c: &cluster::Cluster, app: &str) -> BTreeMap<String, Seen> {
    let mut seen = BTreeMap::new();
    for dir in c.container_log_dirs(app) {
        let container = dir.file_name().unwrap().to_string_lossy().to_string();
        if container.ends_with("_000001") {
            continue;
        }
        // `<runtime>/<node>/logs/<app>/<container>`
        let node = dir.ancestors().nth(3).unwrap().file_name().unwrap();
        let (Ok(tmp), Ok(id)) = (
            std::fs::read_to_string(dir.join("tmp.ls")),
            std::fs::read_to_string(dir.join("id.out")),
        ) else {
            continue;
        };
        let mut id = id.split_whitespace();
        let (Some(user), Some(Ok(uid))) = (id.next(), id.next().map(str::parse)) else {
            continue;
        };
        seen.insert(
            container,
            Seen {
                node: node.to_string_lossy().to_string(),
                tmp: tmp.split_whitespace().map(str::to_string).collect(),
                user: user.to_string(),
                uid,
            },
        );
    }
    seen
}

/// Owners (uid) of this machine's processes that belong to `app`'s containers: a node's
/// processes show in the host's /proc under their host pids.
fn process_uids(app: &str) -> BTreeMap<u32, BTreeSet<String>> {
    let tail = app.trim_start_matches("application_");
    let mut uids: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(environ) = std::fs::read(p.path().join("environ")) else {
            continue;
        };
        let ours = environ.split(|b| *b == 0).any(|kv| {
            kv.starts_with(b"CONTAINER_ID=container_") && String::from_utf8_lossy(kv).contains(tail)
        });
        let Ok(meta) = std::fs::metadata(p.path()) else {
            continue;
        };
        if ours {
            let cmd = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
            let first = cmd.split(|b| *b == 0).next().unwrap_or_default();
            uids.entry(meta.uid())
                .or_default()
                .insert(String::from_utf8_lossy(first).to_string());
        }
    }
    uids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_node_has_its_own_tmp_and_containers_run_as_yarn() {
    let Some(c) = docker_cluster() else { return };
    let _turn = gate::shared();
    let _logs = cluster::LogsOnFailure(c);
    // The command runs literally; NM_HOST, CONTAINER_ID and LOG_DIRS (the container's log
    // folder) are its environment. 1536 MB each spreads 3 executors over 2+ nodes.
    let cmd = "log=${LOG_DIRS%%,*}; id -un > /tmp/yarn-am-iso-$NM_HOST-$CONTAINER_ID; sleep 10; \
               ls /tmp > $log/tmp.ls; id -un > $log/id.out; id -u >> $log/id.out; sleep 600";
    let app = am::submit(
        c,
        "it-nodes-isolation",
        &[
            "--executors",
            "3",
            "--max-executors",
            "3",
            "--executor-memory",
            "1536",
            "--executor-command",
            cmd,
        ],
    );
    let d = Driver::find(c, &app).await;
    d.wait_running(3, Duration::from_secs(90)).await;
    let seen = wait_for(
        "three executors' reports",
        Duration::from_secs(90),
        || async {
            let seen = reports(c, &app);
            (seen.len() >= 3).then_some(seen)
        },
    )
    .await;
    let uids = process_uids(&app);
    let tail = app.trim_start_matches("application_");
    let on_host: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("yarn-am-iso-") && n.contains(tail))
        .collect();
    d.post(
        "/v1/finish",
        json!({"status": "succeeded", "diagnostics": "it-nodes-isolation done"}),
    )
    .await;

    eprintln!("reports: {seen:#?}\nprocesses by uid: {uids:?}");
    let nodes: BTreeSet<_> = seen.values().map(|s| s.node.clone()).collect();
    assert!(
        nodes.len() >= 2,
        "all executors on {nodes:?}: nothing shown about other nodes"
    );
    for (container, s) in &seen {
        assert_eq!((s.user.as_str(), s.uid), ("yarn", YARN_UID), "{container}");
        let own = format!("yarn-am-iso-{}-{container}", s.node);
        assert!(
            s.tmp.contains(&own),
            "{container} does not see its own marker: {s:?}"
        );
        let foreign: Vec<_> = s
            .tmp
            .iter()
            .filter(|f| f.starts_with("yarn-am-iso-") && f.contains(tail))
            .filter(|f| !f.starts_with(&format!("yarn-am-iso-{}-", s.node)))
            .collect();
        assert!(
            foreign.is_empty(),
            "{container} on {} sees another node's files: {foreign:?}",
            s.node
        );
    }
    assert!(
        on_host.is_empty(),
        "markers in this machine's /tmp: {on_host:?}"
    );
    assert!(!uids.is_empty(), "no process of {app} found in /proc");
    assert_eq!(
        uids.keys().copied().collect::<Vec<_>>(),
        vec![YARN_UID],
        "processes of {app} by uid: {uids:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_node_past_the_silence_timeout_loses_its_executors_not_the_job() {
    let Some(c) = docker_cluster() else { return };
    let _turn = gate::alone();
    let _logs = cluster::LogsOnFailure(c);
    // 30 `sleep 3` tasks on 3 two-core executors; a 5 s silence timeout.
    let app = am::submit_busy_job(c, "it-nodes-hung", 30, 5);
    let d = Driver::find(c, &app).await;
    let am_host = am::am_host(c, &app);
    // A node without the AM whose executor is running tasks.
    let (victim, node) = wait_for(
        "a busy executor on a node without the AM",
        Duration::from_secs(120),
        || async {
            let s = d.state().await;
            if s["job"]["tasks_succeeded"].as_u64().unwrap_or(0) < 1 {
                return None;
            }
            am::live(&am::executors_of(&s))
                .iter()
                .find(|e| e["state"] == "running" && e["host"] != am_host.as_str())
                .map(|e| {
                    (
                        e["id"].as_str().unwrap().to_string(),
                        e["host"].as_str().unwrap().to_string(),
                    )
                })
        },
    )
    .await;
    assert!(
        cluster::cluster_sh_args(&["pause-node", &node]),
        "pause-node {node}"
    );
    let paused = Paused(node.clone());
    eprintln!("paused {node} (executor {victim}; the AM is on {am_host})");

    let reason = wait_for("the loss reason", Duration::from_secs(60), || async {
        let r = d.get(&format!("/v1/executors/{victim}/loss-reason")).await;
        r["reason"]
            .as_str()
            .filter(|s| s.starts_with("lost: no poll"))
            .map(|_| r.clone())
    })
    .await;
    assert_eq!(reason["counts_against_app"], false, "{reason}");

    // The job ends while the node is still hung.
    let report = am::wait_succeeded(c, &app, Duration::from_secs(240)).await;
    drop(paused);
    let summary = am::job_report(c, &app);
    assert!(summary.succeeded, "{}", report.diagnostics);
    assert_eq!(summary.tasks_succeeded, 30);
    let rerun: Vec<_> = summary.tasks.iter().filter(|t| t.attempts > 1).collect();
    assert!(!rerun.is_empty(), "no task ran again: {:?}", summary.tasks);
    for t in &rerun {
        assert_ne!(t.host, node, "{t:?} finished on the hung node");
        assert_eq!(t.exit_code, 0);
    }
    assert!(
        !report.diagnostics.contains("executor failures"),
        "{}",
        report.diagnostics
    );
    eprintln!(
        "{node} hung: executor {victim} lost ({}), {} task(s) rerun elsewhere",
        reason["reason"],
        rerun.len()
    );
}

/// Local (`file://`) staging on nodes that do not share this machine's disk: YARN fails the
/// attempt at localisation, and `submit --wait` says why and what to do (exit 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_staging_that_no_node_sees_fails_with_a_hint() {
    let Some(c) = docker_cluster() else { return };
    let _turn = gate::shared();
    let out = am::yarn_am(c)
        .env_remove("YARN_AM_WEBHDFS")
        .args([
            "submit",
            "--name",
            "it-nodes-local-staging",
            "--max-attempts",
            "1",
        ])
        .args(["--wait", "--wait-timeout", "120"])
        .args(["--executors", "1", "--executor-command", "true"])
        .output()
        .unwrap();
    let text = am::text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("hint:")
            && text.contains("local file:// staging")
            && text.contains("--webhdfs"),
        "{text}"
    );
    assert!(text.contains("/tmp/yarn-am-staging/application_"), "{text}");
}
