//! The key-value store on the real cluster: a task writes a key that a second
//! task waits for and reads, each with its container's own KV key (`yarn-am kv` inside the
//! container); the driver lists by prefix with `yarn-am kv list APP` from outside; an
//! oversized value is a 413 with nothing stored; and after a `kill -9` of the AM the next
//! attempt has every value (replayed from the journal), and a task whose AM died reaches
//! the new one.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use am::{wait_for, Driver};
use serde_json::json;

/// Three tasks on one three-core executor, so all run at once: `reader` waits for the key
/// `writer` puts; `hold` keeps the app alive, and after the AM's restart waits for a key the
/// driver puts then, and answers it.
fn job(name: &str) -> serde_json::Value {
    let kv = r#""$YARN_AM_EXE" kv"#;
    let reader = format!(r#"v=$({kv} wait kvtest/addr --wait-timeout 120) && echo "read: $v""#);
    let writer = format!(
        r#"sleep 2 && {kv} put kvtest/addr "tcp://writer:8786" && {kv} put kvtest/other 'two words'"#
    );
    let hold = format!(
        r#"go=$({kv} wait kvtest/go --wait-timeout 300) && {kv} put kvtest/ack "ack $go" && sleep 600"#
    );
    json!({"name": name,
    "executor": {"cores": 3, "memory_mb": 256, "min_executors": 1, "max_executors": 1,
                 "idle_timeout_ms": 600000},
    "locality_wait_ms": {"node": 0, "rack": 0},
    "tasks": [
        {"id": "reader", "command": reader},
        {"id": "writer", "command": writer},
        {"id": "hold", "command": hold},
    ]})
}

/// `yarn-am kv ARGS` from outside, as the driver.
fn kv(c: &cluster::Cluster, args: &[&str]) -> Output {
    am::yarn_am(c).arg("kv").args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The file `task-<id>.0.<ext>` in any of the app's container log folders.
fn task_file(c: &cluster::Cluster, app: &str, task: &str, ext: &str) -> Option<String> {
    let name = format!("task-{task}.0.{ext}");
    c.container_log_dirs(app)
        .into_iter()
        .map(|d: PathBuf| d.join(&name))
        .find_map(|p| std::fs::read_to_string(p).ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_share_keys_the_driver_lists_them_and_they_survive_an_am_kill() {
    let _turn = gate::shared();
    let t0 = Instant::now();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let name = "it-kv";
    let app = am::submit_job_two_attempts(c, name, &job(name), &[]);
    let d = Driver::find(c, &app).await;

    // A task writes, another waits for it and reads it.
    wait_for(
        "reader and writer to succeed",
        Duration::from_secs(120),
        || async {
            let s = d.state().await;
            let tasks = s["job"]["tasks"].as_array()?.clone();
            let ok = |id: &str| {
                tasks
                    .iter()
                    .any(|t| t["task_id"] == id && t["exit_code"] == 0)
            };
            (ok("reader") && ok("writer")).then_some(())
        },
    )
    .await;
    let read = wait_for("the reader's output", Duration::from_secs(30), || async {
        task_file(c, &app, "reader", "stdout").filter(|s| !s.is_empty())
    })
    .await;
    assert_eq!(read.trim(), "read: tcp://writer:8786");

    // The driver lists by prefix, from outside.
    let listed = kv(c, &["list", &app, "kvtest/"]);
    assert!(listed.status.success(), "{}", am::text(&listed));
    let map: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(
        map,
        json!({"kvtest/addr": "tcp://writer:8786", "kvtest/other": "two words"})
    );

    // Over the limit: 413, nothing stored (through the driver API itself).
    let big = "x".repeat((64 << 10) + 1);
    let resp = d
        .http
        .put(format!("{}/v1/kv/kvtest/big", d.url))
        .bearer_auth(&d.secret)
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    let missing = kv(c, &["get", &app, "kvtest/big"]);
    assert_eq!(missing.status.code(), Some(1), "{}", am::text(&missing));
    let put = kv(c, &["put", &app, "kvtest/driver", "from the driver"]);
    assert!(put.status.success(), "{}", am::text(&put));
    let version_before: u64 = stdout(&put).trim().parse().unwrap();

    // kill -9 of the AM: the next attempt has every value.
    am::kill9_am(c, &app);
    let killed_at = Instant::now();
    // The CLI finds the next attempt through the RM (it retries while none answers).
    let got = kv(c, &["get", &app, "kvtest/addr"]);
    assert!(got.status.success(), "{}", am::text(&got));
    assert_eq!(stdout(&got), "tcp://writer:8786");
    eprintln!(
        "the next attempt answered {:?} after the kill",
        killed_at.elapsed()
    );
    let listed = kv(c, &["list", &app, "kvtest/"]);
    let map: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(map["kvtest/driver"], "from the driver", "{map}");
    assert_eq!(map["kvtest/other"], "two words", "{map}");
    assert!(map.get("kvtest/big").is_none(), "{map}");
    // Versions go on from the journal's.
    let put = kv(c, &["put", &app, "kvtest/go", "after the crash"]);
    assert!(put.status.success(), "{}", am::text(&put));
    let version_after: u64 = stdout(&put).trim().parse().unwrap();
    assert!(
        version_after > version_before,
        "{version_after} <= {version_before}"
    );

    // The task whose AM died found the next one (staging folder) and answers.
    let ack = kv(c, &["wait", &app, "kvtest/ack", "--wait-timeout", "120"]);
    assert!(
        ack.status.success(),
        "{}\nhold's stderr:\n{:?}",
        am::text(&ack),
        task_file(c, &app, "hold", "stderr")
    );
    assert_eq!(stdout(&ack), "ack after the crash");

    let log = std::fs::read_to_string(
        c.container_log_dirs(&app)
            .into_iter()
            .find(|d| d.to_string_lossy().ends_with("_02_000001"))
            .expect("AM attempt 2 ran")
            .join("stderr"),
    )
    .unwrap_or_default();
    assert!(
        log.contains("restored the key-value store from the journal"),
        "{log}"
    );
    let killed = am::yarn_am(c).args(["kill", &app]).output().unwrap();
    assert!(killed.status.success(), "{}", am::text(&killed));
    eprintln!("it_kv took {:?}", t0.elapsed());
}

/// The Dask/Ray shape: an executors-only app whose containers run a plain command that
/// registers itself under a prefix and waits for the driver's go (`./yarn-am kv`, the binary
/// `submit` ships to such executors); the driver lists them and says go; the app then
/// ends SUCCEEDED by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_executors_register_and_wait_for_the_driver() {
    let _turn = gate::shared();
    let t0 = Instant::now();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let command = r#"./yarn-am kv put "workers/$YARN_AM_EXECUTOR_ID" "$(hostname)" >/dev/null && test "$(./yarn-am kv wait go --wait-timeout 120)" = "go go""#;
    let app = am::submit(
        c,
        "it-kv-executors",
        &[
            "--executors",
            "2",
            "--executor-memory",
            "256",
            "--executor-command",
            command,
        ],
    );
    let workers = wait_for("two workers listed", Duration::from_secs(120), || async {
        let out = kv(c, &["list", &app, "workers/"]);
        let map: serde_json::Value = serde_json::from_str(&stdout(&out)).ok()?;
        (map.as_object()?.len() == 2).then_some(map)
    })
    .await;
    assert!(
        workers
            .as_object()
            .unwrap()
            .keys()
            .all(|k| k.starts_with("workers/")),
        "{workers}"
    );
    let put = kv(c, &["put", &app, "go", "go go"]);
    assert!(put.status.success(), "{}", am::text(&put));
    let report = am::wait_succeeded(c, &app, Duration::from_secs(120)).await;
    assert!(
        report.diagnostics.contains("all 2 executors exited 0"),
        "{}",
        report.diagnostics
    );
    eprintln!("plain executors: {:?}", t0.elapsed());
}
