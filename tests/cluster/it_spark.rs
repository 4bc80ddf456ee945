//! Spark on yarn-am, end to end on the real cluster with a real Spark (pyspark 4.0.1 from
//! PyPI, installed by `scripts/spark-env.sh`) and the plugin in `spark/`: a 60-partition job
//! whose partitions prefer nm1..nm3, with dynamic allocation, survives the loss of one
//! executor's JVM mid-job, and ends with the app FINISHED/SUCCEEDED on the RM with yarn-am as
//! its AM. Spark itself missing is a skip outside CI (a message says so) and a failure in CI.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// SPARK_HOME of the pinned Spark, installed if needed; None (outside CI) when it cannot be.
fn spark_home() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(repo().join("scripts/spark-env.sh"))
        .output()
        .expect("run scripts/spark-env.sh");
    if out.status.success() {
        return Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    }
    let why = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run the Spark test, but Spark could not be installed: {why}"
    );
    eprintln!("SKIP it_spark: Spark could not be installed (scripts/spark-env.sh): {why}");
    None
}

/// Builds the plugin and the test job jars (`spark/build.sh`); returns them.
fn build(home: &Path) -> (PathBuf, PathBuf) {
    let out = Command::new("bash")
        .arg(repo().join("spark/build.sh"))
        .env("SPARK_HOME", home)
        .env("JAVA_HOME", java_home())
        .output()
        .unwrap();
    assert!(out.status.success(), "spark/build.sh: {}", am::text(&out));
    let t = repo().join("spark/target");
    (
        t.join("yarn-am-spark.jar"),
        t.join("yarn-am-spark-tests.jar"),
    )
}

/// A Java 17 JDK (Spark 4 and the cluster's JVMs use 17), as cluster.sh finds it.
fn java_home() -> PathBuf {
    std::fs::read_dir("/usr/lib/jvm")
        .expect("/usr/lib/jvm")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            (n.starts_with("java-17-openjdk") || n.starts_with("temurin-17"))
                && p.join("bin/javac").exists()
        })
        .min()
        .expect("a Java 17 JDK under /usr/lib/jvm (scripts/prereqs.sh installs one)")
}

/// The plugin's pure parts (sizes, executor command, loss reasons): no cluster needed.
#[test]
fn plugin_plan_and_loss_reasons() {
    let Some(home) = spark_home() else { return };
    let (plugin, tests) = build(&home);
    let cp = format!(
        "{}/jars/*:{}:{}",
        home.display(),
        plugin.display(),
        tests.display()
    );
    let out = Command::new(java_home().join("bin/java"))
        .args(["-cp", &cp, "io.yarnam.spark.PlanCheck"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", am::text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" passed, 0 failed"),
        "{}",
        am::text(&out)
    );
}

/// The plugin's `AmClient` pins the AM's certificate. yarn-am's own driver API
/// (the real server, TLS with a fresh application certificate) on loopback; `PinCheck` reads
/// `/v1/state` with the right pin and is refused with a wrong one. No cluster needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_pins_the_ams_certificate() {
    use yarn_am_wire::driver_secret::DriverSecret;
    use yarn_am_wire::tls::AppCert;
    let Some(home) = spark_home() else { return };
    let (plugin, tests) = build(&home);
    let secret = yarn_am_wire::driver_secret::new_secret();
    let view = yarn_am_wire::driver_api::StateView {
        app_id: "application_1_0001".into(),
        ..Default::default()
    };
    let (shared, _handle) = yarn_am::http::channel(&secret, view);
    let cert = AppCert::generate().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(yarn_am::http::serve(
        listener,
        None,
        shared,
        cert.server_config().unwrap(),
        std::future::pending(),
    ));
    let dir = std::env::temp_dir().join(format!("yarn-am-pin-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wrong = AppCert::generate().unwrap().fingerprint();
    let (good_file, wrong_file) = (dir.join("good.secret"), dir.join("wrong.secret"));
    std::fs::write(
        &good_file,
        DriverSecret::render(&secret, cert.fingerprint()),
    )
    .unwrap();
    std::fs::write(&wrong_file, DriverSecret::render(&secret, wrong)).unwrap();
    let cp = format!(
        "{}/jars/*:{}:{}",
        home.display(),
        plugin.display(),
        tests.display()
    );
    let args = [
        "-cp".to_string(),
        cp,
        "io.yarnam.spark.PinCheck".into(),
        url,
        good_file.display().to_string(),
        wrong_file.display().to_string(),
        cert.fingerprint().to_string(),
        wrong.to_string(),
    ];
    let java = java_home().join("bin/java");
    let out = tokio::task::spawn_blocking(move || Command::new(java).args(args).output())
        .await
        .unwrap()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", am::text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" passed, 0 failed"),
        "{}",
        am::text(&out)
    );
}

/// Executor JVMs of `app` on this host: (pid, Spark executor id).
fn executor_jvms(app: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).to_string())
            .collect();
        let after = |flag: &str| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1).cloned())
        };
        if args
            .iter()
            .any(|a| a.ends_with("CoarseGrainedExecutorBackend"))
            && after("--app-id").as_deref() == Some(app)
        {
            if let Some(id) = after("--executor-id") {
                found.push((pid, id));
            }
        }
    }
    found
}

/// The lines `child` prints on its stdout, as they come (read on a thread of their own).
fn stdout_lines(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("stdout piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// `spark-submit-yarn-am` in client mode with dynamic allocation (1 executor at first, at most
/// `max_executors`, 512 MB and 2 cores each), set up for this cluster's backend: on docker the
/// plugin ships Spark through HDFS staging, natively the executors use this host's Spark.
fn dynamic_allocation_submit(c: &cluster::Cluster, home: &Path, max_executors: u32) -> Command {
    let max_executors = format!("spark.dynamicAllocation.maxExecutors={max_executors}");
    let mut submit = Command::new(repo().join("spark/bin/spark-submit-yarn-am"));
    if c.backend() == "docker" {
        // Separate hosts, none with Spark installed: yarn-am stages on HDFS, and the plugin
        // ships a zip of SPARK_HOME/jars through its staging cache.
        submit.env("YARN_AM_WEBHDFS", &c.webhdfs);
    } else {
        // One host: the executors use this machine's Spark in place (Spark "installed on
        // every node"), without copying 440 MB of jars into a local staging folder.
        submit
            .env_remove("YARN_AM_WEBHDFS")
            .arg("--conf")
            .arg(format!(
                "spark.yarnam.executor.jars={}/jars",
                home.display()
            ));
    }
    submit
        .env("SPARK_HOME", home)
        .env("JAVA_HOME", java_home())
        .env("HADOOP_CONF_DIR", &c.conf_dir)
        .env("YARN_AM_BIN", am::exe())
        .env("YARN_AM_RM_WEB", &c.rm_web)
        .env_remove("YARN_CONF_DIR")
        .env_remove("YARN_AM_STAGING_DIR")
        .args([
            "--driver-memory",
            "512m",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.yarn.maxAppAttempts=1",
            "--conf",
            "spark.executor.memory=512m",
            "--conf",
            "spark.executor.cores=2",
            "--conf",
            "spark.dynamicAllocation.enabled=true",
            "--conf",
            "spark.dynamicAllocation.shuffleTracking.enabled=true",
            "--conf",
            "spark.dynamicAllocation.initialExecutors=1",
            "--conf",
            "spark.dynamicAllocation.minExecutors=0",
            "--conf",
            &max_executors,
            "--conf",
            "spark.dynamicAllocation.schedulerBacklogTimeout=1s",
            "--conf",
            "spark.dynamicAllocation.executorIdleTimeout=5s",
        ]);
    submit
}

#[tokio::test(flavor = "multi_thread")]
async fn spark_job_with_locality_and_dynamic_allocation_survives_an_executor_kill() {
    let Some(home) = spark_home() else { return };
    let _turn = gate::alone();
    let (_plugin, tests) = build(&home);
    // IT_SPARK_HTTPS=1: on the HTTPS-only profile (`cluster.sh up --https`), the plugin asking
    // the RM at its https:// address with the cluster's CA (`YARN_AM_CA_FILE`, set by the
    // fixture); by hand only, `make test` runs the plain profile.
    let c: &'static cluster::Cluster = if std::env::var("IT_SPARK_HTTPS").as_deref() == Ok("1") {
        Box::leak(Box::new(cluster::start_profile(&["--https"])))
    } else {
        cluster::cluster()
    };
    let _logs = cluster::LogsOnFailure(c);
    let started = Instant::now();
    let log_path = std::env::temp_dir().join(format!("it_spark-driver-{}.log", std::process::id()));
    let mut child = dynamic_allocation_submit(c, &home, 3)
        .args(["--class", "io.yarnam.spark.LocalityJob"])
        .arg(&tests)
        .args(["60", "1500", "60"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .expect("run spark/bin/spark-submit-yarn-am");
    let rx = stdout_lines(&mut child);
    let driver_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let tail = |s: &str| {
        s.lines()
            .rev()
            .take(80)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    };

    let deadline = Instant::now() + Duration::from_secs(420);
    let mut app = None;
    let mut killed: Option<String> = None;
    let mut result: Option<Value> = None;
    while result.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = match rx.recv_timeout(left) {
            Ok(l) => l,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "the Spark job gave no result within 420 s; driver log:\n{}",
                    tail(&driver_log())
                );
            }
        };
        if let Some(id) = line.strip_prefix("APP_ID ") {
            cluster::track_app(id.trim());
            app = Some(id.trim().to_string());
        } else if let Some(n) = line.strip_prefix("TASK_END ") {
            // Mid-job (10 of 60 tasks done, a backlog left): kill one executor's JVM.
            if killed.is_none() && n.trim().parse::<u32>().unwrap_or(0) >= 10 {
                let jvms = executor_jvms(app.as_deref().unwrap());
                let (pid, id) = jvms.first().cloned().expect("a running executor JVM");
                assert!(Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status()
                    .unwrap()
                    .success());
                eprintln!("killed executor {id} (pid {pid}) after {n} tasks");
                killed = Some(id);
            }
        } else if let Some(j) = line.strip_prefix("RESULT ") {
            result = Some(serde_json::from_str(j).unwrap());
        }
    }
    let status = child.wait().unwrap();
    let log = driver_log();
    assert!(
        status.success(),
        "spark-submit exited {status}; driver log:\n{}",
        tail(&log)
    );
    let app = app.expect("the job printed its application id");
    let r = result.unwrap();
    let killed = killed.expect("an executor was killed mid-job");
    eprintln!(
        "Spark job on yarn-am took {:?} in all; job {} ms; by locality {}",
        started.elapsed(),
        r["job_ms"],
        r["by_locality"]
    );

    // Every partition's result came back, and every task's locality was recorded.
    assert_eq!(r["results"], 60, "{r}");
    let tasks = r["tasks"].as_array().unwrap();
    let ok: BTreeSet<u64> = tasks
        .iter()
        .filter(|t| t["successful"] == true)
        .map(|t| t["partition"].as_u64().unwrap())
        .collect();
    assert_eq!(ok.len(), 60, "every partition succeeded once: {r}");
    for t in tasks {
        let l = t["locality"].as_str().unwrap();
        assert!(
            ["PROCESS_LOCAL", "NODE_LOCAL", "RACK_LOCAL", "ANY"].contains(&l),
            "{t}"
        );
    }
    assert!(
        r["by_locality"]["NODE_LOCAL"].as_u64().unwrap_or(0) > 0,
        "some tasks ran node-local: {r}"
    );

    // The kill: Spark lost the executor with yarn-am's reason (the container's exit status
    // 137: a crash, counted against the app) and re-ran its tasks elsewhere.
    let events = r["executor_events"].as_array().unwrap();
    let removed: BTreeMap<&str, &str> = events
        .iter()
        .filter(|e| e["event"] == "removed")
        .map(|e| {
            (
                e["executor"].as_str().unwrap(),
                e["reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let why = removed
        .get(killed.as_str())
        .unwrap_or_else(|| panic!("executor {killed} removed: {r}"));
    eprintln!("Spark's loss reason for executor {killed}: {why}");
    assert!(
        why.contains("yarn-am") && why.contains("exit status 137"),
        "loss reason of {killed}: {why}"
    );
    let lost: Vec<&Value> = tasks
        .iter()
        .filter(|t| t["successful"] == false && t["executor"] == killed.as_str())
        .collect();
    assert!(
        !lost.is_empty(),
        "the killed executor's running tasks failed: {r}"
    );
    for t in &lost {
        assert!(
            t["reason"]
                .as_str()
                .unwrap()
                .contains("ExecutorLostFailure"),
            "{t}"
        );
        assert!(
            ok.contains(&t["partition"].as_u64().unwrap()),
            "re-run: {t}"
        );
    }

    // Dynamic allocation through yarn-am: Spark's ExecutorAllocationManager asked for more
    // executors than the initial one, and removed the idle ones at the end (kills by the
    // driver), leaving none.
    let added = events.iter().filter(|e| e["event"] == "added").count();
    assert!(
        added >= 3,
        "executors added by Spark's allocation manager (1 initial, up to 3): {r}"
    );
    assert!(
        removed.values().any(|w| w.contains("killed by driver")),
        "idle executors removed by Spark through yarn-am: {r}"
    );
    assert_eq!(r["live_executors_at_end"], 0, "{r}");

    // The RM: a yarn-am AM, ended by the driver's /v1/finish as SUCCEEDED.
    let report = am::rest(c)
        .wait_final(&app, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        (report.state.as_str(), report.final_status.as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{report:?}"
    );
    assert!(
        report.diagnostics.contains("stopped with exit code 0"),
        "{report:?}"
    );
    let raw: Value = am::rest(c)
        .get_value(&format!("/ws/v1/cluster/apps/{app}"))
        .await
        .unwrap();
    assert_eq!(raw["app"]["applicationType"], "YARN-AM", "{raw}");

    // The driver-API secret is in no output of the driver.
    let home_dir = std::env::var("HOME").unwrap();
    let secret = yarn_am_wire::driver_secret::DriverSecret::read(std::path::Path::new(&format!(
        "{home_dir}/.yarn-am/{app}.secret"
    )))
    .unwrap()
    .secret;
    assert!(!secret.trim().is_empty());
    assert!(
        !log.contains(secret.trim()),
        "the secret leaked into the driver log"
    );
    if c.backend() == "docker" {
        shipped_runtime_is_reused(c, &home, &log).await;
    }
    let _ = std::fs::remove_file(&log_path);
}

/// Stage-level scheduling: a stage of a resource profile with other executor cores
/// and memory runs on executors of its own yarn-am kind (`rp<id>`, declared by the plugin
/// while the app runs), which register with Spark under that profile; the default profile's
/// stage on the default kind's. Kind 0 of 8 (the plugin's reserve) numbers its executors 1,
/// 9, ...; kind 1 numbers 2, 10, ...
#[tokio::test(flavor = "multi_thread")]
async fn a_resource_profile_stage_runs_on_executors_of_its_own_kind() {
    let Some(home) = spark_home() else { return };
    let _turn = gate::alone();
    let (_plugin, tests) = build(&home);
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let log_path =
        std::env::temp_dir().join(format!("it_spark-profile-{}.log", std::process::id()));
    let mut child = dynamic_allocation_submit(c, &home, 2)
        .args(["--class", "io.yarnam.spark.ProfileJob"])
        .arg(&tests)
        .args(["1", "1g"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .expect("run spark/bin/spark-submit-yarn-am");
    let rx = stdout_lines(&mut child);
    let driver_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut app = None;
    let mut result: Option<Value> = None;
    while result.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            let _ = child.kill();
            let log = driver_log();
            let tail: Vec<&str> = log.lines().rev().take(80).collect();
            panic!(
                "no result within 300 s; driver log (last lines first):\n{}",
                tail.join("\n")
            );
        };
        if let Some(id) = line.strip_prefix("APP_ID ") {
            cluster::track_app(id.trim());
            app = Some(id.trim().to_string());
        } else if let Some(j) = line.strip_prefix("RESULT ") {
            result = Some(serde_json::from_str(j).unwrap());
        }
    }
    let status = child.wait().unwrap();
    let log = driver_log();
    assert!(
        status.success(),
        "spark-submit exited {status}; driver log:\n{log}"
    );
    let app = app.expect("the job printed its application id");
    let r = result.unwrap();
    let profile = r["profile_id"].as_u64().unwrap();
    assert!(profile > 0, "a profile other than the default: {r}");
    assert!(
        log.contains(&format!(
            "resource profile {profile} runs on yarn-am executor kind rp{profile}"
        )),
        "the plugin declared the profile as a kind; driver log:\n{log}"
    );
    // Results: every element once, from each stage.
    let values = |stage: &str| -> Vec<u64> {
        let mut v: Vec<u64> = r[stage]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["value"].as_u64().unwrap())
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(
        values("plain"),
        (1..=40).map(|i| i * 2).collect::<Vec<u64>>()
    );
    assert_eq!(
        values("profiled"),
        (1..=40).map(|i| i * 3).collect::<Vec<u64>>()
    );
    // Where they ran: the profile's stage on executors that registered under the profile, in
    // kind 1's id stripe, with the profile's 1 GB heap; the default's on kind 0's with 512 MB.
    let execs = |stage: &str| -> BTreeSet<(u64, u64, u64)> {
        r[stage]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["executor"].as_str().unwrap().parse::<u64>().unwrap(),
                    t["executor_profile"].as_u64().unwrap_or(u64::MAX),
                    t["heap_mb"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let (plain, profiled) = (execs("plain"), execs("profiled"));
    eprintln!("default-profile executors (id, profile, heap MB): {plain:?}; profile {profile}'s: {profiled:?}");
    for &(id, p, heap) in &plain {
        assert_eq!(((id - 1) % 8, p), (0, 0), "default kind's stripe: {r}");
        assert!(heap < 600, "512 MB heap: {heap}");
    }
    for &(id, p, heap) in &profiled {
        assert_eq!(
            ((id - 1) % 8, p),
            (1, profile),
            "kind rp{profile}'s stripe: {r}"
        );
        assert!((800..=1024).contains(&heap), "1 GB heap: {heap}");
    }
    let report = am::rest(c)
        .wait_final(&app, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        (report.state.as_str(), report.final_status.as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{report:?}"
    );
    let _ = std::fs::remove_file(&log_path);
}

/// On the docker cluster no node has Spark: the plugin shipped a zip of SPARK_HOME/jars
/// through yarn-am's staging cache. Submitting that zip again uploads nothing, and the
/// executor finds every jar unpacked under `__spark_libs__`.
async fn shipped_runtime_is_reused(c: &cluster::Cluster, home: &Path, driver_log: &str) {
    let staged = driver_log
        .lines()
        .find(|l| l.contains("yarn-am staged "))
        .unwrap_or_else(|| panic!("no staging line in the driver log"));
    eprintln!("the Spark job's submit: {staged}");
    let cache = PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/yarn-am");
    let zip = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.starts_with("spark-libs-") && name.ends_with(".zip")
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .expect("the plugin's zip of Spark's jars");
    let jars = std::fs::read_dir(home.join("jars"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jar") && e.path().is_file())
        .count();
    let out = am::yarn_am(c)
        .env("YARN_AM_WEBHDFS", &c.webhdfs)
        .args([
            "submit",
            "--name",
            "it-spark-runtime-again",
            "--max-attempts",
            "1",
            "--executors",
            "1",
            "--archive",
            &format!("{}#__spark_libs__", zip.display()),
            "--executor-command",
            "ls __spark_libs__ | grep -c '[.]jar$' > \"$YARN_AM_LOG_DIR/jars.out\"; sleep 600",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", am::text(&out));
    let app = am::submitted_app(&out);
    assert!(
        am::text(&out)
            .contains("staged 2 file(s): 0 uploaded (0.0 MiB), 2 already in the staging cache"),
        "the binary and the zip were staged already: {}",
        am::text(&out)
    );
    let seen = am::wait_for(
        "the executor's jar count",
        Duration::from_secs(90),
        || async {
            c.container_log_dirs(&app)
                .iter()
                .filter_map(|d| std::fs::read_to_string(d.join("jars.out")).ok())
                .find(|s| !s.trim().is_empty())
        },
    )
    .await;
    assert_eq!(seen.trim(), jars.to_string(), "jars unpacked on the node");
    assert!(am::yarn_am(c)
        .args(["kill", &app])
        .status()
        .unwrap()
        .success());
}

/// `spark/bin/spark-submit-yarn-am` with the cluster's environment; Spark's jars reach the
/// nodes as on a cluster without Spark (shipped on docker, in place natively).
fn wrapper(c: &cluster::Cluster, home: &Path) -> Command {
    let mut submit = Command::new(repo().join("spark/bin/spark-submit-yarn-am"));
    if c.backend() == "docker" {
        submit.env("YARN_AM_WEBHDFS", &c.webhdfs);
    } else {
        submit
            .env_remove("YARN_AM_WEBHDFS")
            .arg("--conf")
            .arg(format!(
                "spark.yarnam.executor.jars={}/jars",
                home.display()
            ));
    }
    submit
        .env("SPARK_HOME", home)
        .env("JAVA_HOME", java_home())
        .env("HADOOP_CONF_DIR", &c.conf_dir)
        .env("YARN_AM_BIN", am::exe())
        .env("YARN_AM_RM_WEB", &c.rm_web)
        .env_remove("YARN_CONF_DIR")
        .env_remove("YARN_AM_STAGING_DIR")
        .args([
            "--driver-memory",
            "512m",
            "--conf",
            "spark.yarn.maxAppAttempts=1",
            "--conf",
            "spark.executor.memory=512m",
            "--conf",
            "spark.executor.instances=2",
            "--conf",
            "spark.sql.shuffle.partitions=6",
            "--conf",
            "spark.ui.enabled=false",
        ]);
    submit
}

/// One run of the wrapper: its exit, the app, and the job's `RESULT` (from the wrapper's
/// stdout in client mode, from the driver's stdout among the AM's logs in cluster mode).
struct Run {
    ok: bool,
    app: String,
    result: Option<Value>,
    log: String,
}

async fn run_wrapper(c: &'static cluster::Cluster, mut cmd: Command, what: &str) -> Run {
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .expect("run spark/bin/spark-submit-yarn-am");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let log = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let app = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("APP_ID ")
                .or_else(|| l.strip_prefix("submitted "))
                .map(|a| a.trim().to_string())
        })
        .unwrap_or_else(|| panic!("{what}: no application id in its output:\n{log}"));
    let mut result = result_line(&stdout);
    if result.is_none() {
        // Cluster mode: the driver ran in the AM's container.
        if let Some(dir) = am::am_log_dir(c, &app) {
            let driver = std::fs::read_to_string(dir.join("driver.stdout")).unwrap_or_default();
            result = result_line(&driver);
        }
    }
    eprintln!(
        "{what}: {app} took {:.1} s, exit {}",
        started.elapsed().as_secs_f64(),
        out.status
    );
    Run {
        ok: out.status.success(),
        app,
        result,
        log,
    }
}

fn result_line(text: &str) -> Option<Value> {
    text.lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .map(|j| serde_json::from_str(j).unwrap())
}

/// The RM's final state, status and diagnostics of `app`.
async fn final_report(c: &cluster::Cluster, app: &str) -> (String, String, String) {
    let r = am::rest(c)
        .wait_final(app, Duration::from_secs(60))
        .await
        .unwrap();
    (r.state, r.final_status, r.diagnostics)
}

/// A JVM job with shuffles (reduceByKey to fewer partitions, a join, a SQL
/// groupBy) and a PySpark job (a word count with reduceByKey, a DataFrame aggregation,
/// --py-files, a Python shipped with --archives as spark.pyspark.python) each succeed in
/// client and in cluster deploy mode, on nodes with neither Spark nor Python; a cluster-mode
/// driver that fails makes the app FAILED with its exception and the client exit 1. The JVM
/// runs' AM containers ask `example.com/accelerator` (`spark.yarn.am.resource.*` in client
/// mode, `spark.yarn.driver.resource.*` in cluster mode) and the RM counts it.
#[tokio::test(flavor = "multi_thread")]
async fn shuffles_and_pyspark_in_client_and_cluster_mode() {
    let Some(home) = spark_home() else { return };
    let _turn = gate::alone();
    let (_plugin, tests) = build(&home);
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let pyenv = Command::new("bash")
        .arg(repo().join("scripts/python-env.sh"))
        .output()
        .unwrap();
    assert!(pyenv.status.success(), "{}", am::text(&pyenv));
    let pyenv = String::from_utf8_lossy(&pyenv.stdout).trim().to_string();
    let py = repo().join("spark/src/test/python");

    let jvm = |mode: &str, arg: &str| {
        let mut cmd = wrapper(c, &home);
        // The AM's own container asks the test cluster's resource, Spark's way for each mode
        // (yarn-am then submits over the RM's client port; checked below).
        let am_resource = match mode {
            "client" => "spark.yarn.am.resource.example.com/accelerator.amount=1",
            _ => "spark.yarn.driver.resource.example.com/accelerator.amount=1",
        };
        cmd.args([
            "--conf",
            am_resource,
            "--deploy-mode",
            mode,
            "--class",
            "io.yarnam.spark.ShuffleJob",
        ])
        .arg(&tests)
        .arg(arg);
        cmd
    };
    let pyspark = |mode: &str| {
        let mut cmd = wrapper(c, &home);
        cmd.args(["--deploy-mode", mode])
            .arg("--py-files")
            .arg(py.join("wordlib.py"))
            .arg("--archives")
            .arg(format!("{pyenv}#pyenv"))
            .args(["--conf", "spark.pyspark.python=./pyenv/bin/python3"]);
        if mode == "client" {
            // The driver's Python is this machine's (the shipped one's version); in cluster
            // mode the driver runs on a node and uses the shipped one too.
            cmd.args(["--conf", "spark.pyspark.driver.python=/usr/bin/python3"]);
        }
        cmd.arg(py.join("shuffle_job.py")).arg("2000");
        cmd
    };
    // A cluster-mode driver that fails at once (a bad argument), with no executors.
    let mut failing = jvm("cluster", "not-a-number");
    failing.args(["--conf", "spark.executor.instances=0"]);

    // The JVM job in client mode first, alone: its submit stages Spark's jars (450 MiB) if
    // the cluster's staging cache does not have them yet, which the others then reuse. Then
    // the rest at once (the cluster holds them; the failing one may wait for room).
    let started = Instant::now();
    let first = run_wrapper(c, jvm("client", "20000"), "JVM job, client mode").await;
    cluster::track_app(&first.app);
    let runs = [
        ("JVM job, cluster mode", jvm("cluster", "20000")),
        ("PySpark job, client mode", pyspark("client")),
        ("PySpark job, cluster mode", pyspark("cluster")),
        ("failing JVM job, cluster mode", failing),
    ]
    .map(|(what, cmd)| tokio::spawn(run_wrapper(c, cmd, what)));
    let mut done = vec![first];
    for r in runs {
        done.push(r.await.unwrap());
    }
    for r in &done {
        cluster::track_app(&r.app);
    }
    eprintln!(
        "the five Spark runs took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let [jvm_client, jvm_cluster, py_client, py_cluster, failed] = done.try_into().ok().unwrap();

    // Expected answers of ShuffleJob's SQL groupBy: id % 7 over 0..10,000.
    let groups: Vec<Value> = (0..7u64)
        .map(|g| {
            let ids: Vec<u64> = (0..10_000u64).filter(|i| i % 7 == g).collect();
            serde_json::json!([g, ids.len(), ids.iter().sum::<u64>()])
        })
        .collect();
    let py_groups: Vec<Value> = (0..5u64)
        .map(|g| {
            let vs: Vec<u64> = (0..1000u64).filter(|i| i % 5 == g).collect();
            serde_json::json!([g, vs.len(), vs.iter().sum::<u64>()])
        })
        .collect();
    for (mode, r) in [("client", jvm_client), ("cluster", jvm_cluster)] {
        assert!(r.ok, "JVM job in {mode} mode failed:\n{}", r.log);
        let res = r
            .result
            .unwrap_or_else(|| panic!("no RESULT ({mode}):\n{}", r.log));
        assert_eq!(res["keys"], 50, "{res}");
        assert_eq!(res["total"], 20000, "{res}");
        assert_eq!(res["k7"], 400, "{res}");
        assert_eq!(res["reduce_partitions"], 4, "{res}");
        assert_eq!(res["joined"], 50, "{res}");
        assert_eq!(res["groups"], Value::Array(groups.clone()), "{res}");
        let (state, status, diag) = final_report(c, &r.app).await;
        assert_eq!(
            (state.as_str(), status.as_str()),
            ("FINISHED", "SUCCEEDED"),
            "{diag}"
        );
        // No executor asks the resource: what the RM counts is the AM's.
        let (counted, xml) = am::accelerator_seconds(c, &r.app);
        assert!(
            counted.is_some_and(|n| n > 0),
            "{mode} mode: the RM counted no accelerator for the AM: {xml}"
        );
        if mode == "cluster" {
            assert!(diag.contains("the driver exited 0"), "{diag}");
            let dir = am::am_log_dir(c, &r.app).expect("the AM's log folder");
            let driver_log = std::fs::read_to_string(dir.join("driver.stderr")).unwrap();
            assert!(
                driver_log.contains("yarn-am shuffle job"),
                "Spark's driver log is among the AM's logs"
            );
        }
    }
    for (mode, r) in [("client", py_client), ("cluster", py_cluster)] {
        assert!(r.ok, "PySpark job in {mode} mode failed:\n{}", r.log);
        let res = r
            .result
            .unwrap_or_else(|| panic!("no RESULT ({mode}):\n{}", r.log));
        assert_eq!(res["words"], 37, "{res}");
        assert_eq!(res["total"], 20000, "{res}");
        assert_eq!(res["matches"], true, "{res}");
        assert_eq!(res["reduce_partitions"], 3, "{res}");
        assert_eq!(res["groups"], Value::Array(py_groups.clone()), "{res}");
        // spark.pyspark.python: every worker ran the shipped Python.
        for p in res["worker_pythons"].as_array().unwrap() {
            let p = p.as_str().unwrap();
            assert!(p.ends_with("/pyenv/bin/python3 3.11"), "worker Python {p}");
        }
        let (state, status, diag) = final_report(c, &r.app).await;
        assert_eq!(
            (state.as_str(), status.as_str()),
            ("FINISHED", "SUCCEEDED"),
            "{diag}"
        );
    }

    // The failing driver: the app FAILED with the driver's exception, the client exits 1.
    assert!(
        !failed.ok,
        "the client reports the failure:\n{}",
        failed.log
    );
    let (state, status, diag) = final_report(c, &failed.app).await;
    assert_eq!(
        (state.as_str(), status.as_str()),
        ("FINISHED", "FAILED"),
        "{diag}"
    );
    assert!(
        diag.contains("the driver exited with code")
            && diag.contains("ShuffleJob threw an exception")
            && diag.contains("NumberFormatException"),
        "{diag}"
    );
}

/// Kerberos: on the secure profile (`cluster.sh up --secure`), as alice, a word
/// count reads an HDFS file the test wrote and writes its counts to HDFS with
/// `saveAsTextFile`, in client mode (alice's `kinit` ticket cache) and in cluster mode
/// (`--principal`/`--keytab`, which the plugin passes to `yarn-am submit`: its AM gets the
/// keytab to refresh its tokens, and the driver in the AM container logs in from it); in both
/// Spark's own token manager also fetches an HDFS token for the executors
/// (`spark.kerberos.access.hadoopFileSystems`). Every task
/// holds an HDFS delegation token from its container's token file and none of the AM's own
/// (AMRM, RM delegation); the files on HDFS are alice's and hold the right counts; no log holds
/// a token. Runs in `make test`'s secure pass (`secure_cluster`).
#[tokio::test(flavor = "multi_thread")]
async fn secure_cluster_word_count_reads_and_writes_hdfs_as_alice() {
    let _turn = gate::alone();
    use std::sync::Arc;
    use yarn_client::gssapi::{Credential, CredentialSource};
    use yarn_client::http_auth::HttpAuth;
    use yarn_client::rest::RmRest;
    use yarn_client::webhdfs::WebHdfs;

    let Some(home) = spark_home() else { return };
    let (_plugin, tests) = build(&home);
    let c: &'static cluster::Cluster = Box::leak(Box::new(cluster::start_profile(&["--secure"])));
    let _logs = cluster::LogsOnFailure(c);
    let started = Instant::now();
    let kdc = c.dir.join("kdc");
    let krb5 = kdc.join("krb5.conf");
    let keytab = kdc.join("keytabs/alice.keytab");
    // This process's own Kerberos calls (alice's WebHDFS and RM clients) use the test realm.
    std::env::set_var("KRB5_CONFIG", &krb5);
    let cred = Arc::new(
        Credential::acquire(&CredentialSource::Keytab {
            principal: "alice@YARN.TEST".into(),
            keytab: keytab.clone(),
        })
        .expect("alice's keytab login"),
    );
    let hdfs = WebHdfs::new(&c.webhdfs, "alice", Duration::from_secs(30))
        .unwrap()
        .with_auth(HttpAuth::kerberos(cred.clone()));
    let rest = RmRest::new(&c.rm_web, "alice", Duration::from_secs(20))
        .unwrap()
        .with_auth(HttpAuth::kerberos(cred));

    // alice's input: 2,000 lines of 10 words over 23 distinct ones.
    let dir = format!("/user/alice/it-spark-secure-{}", std::process::id());
    let _ = hdfs.delete(&dir, true).await;
    let mut text = String::new();
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    for line in 0..2000u64 {
        let words: Vec<String> = (0..10u64)
            .map(|i| format!("w{}", (line * 10 + i) * 7 % 23))
            .collect();
        for w in &words {
            *expected.entry(w.clone()).or_default() += 1;
        }
        text.push_str(&words.join(" "));
        text.push('\n');
    }
    hdfs.create(&format!("{dir}/in.txt"), text.into_bytes(), true, None)
        .await
        .expect("alice writes the input");
    let url = |p: &str| format!("hdfs://rm:8020{dir}/{p}");

    let job = |mode: &str, out: &str| {
        let mut cmd = wrapper(c, &home);
        // The test cluster's fs.defaultFS is file:///: Spark's token manager is told of HDFS.
        cmd.env("KRB5_CONFIG", &krb5).args([
            "--deploy-mode",
            mode,
            "--conf",
            "spark.kerberos.access.hadoopFileSystems=hdfs://rm:8020",
        ]);
        if mode == "client" {
            cmd.env(
                "KRB5CCNAME",
                format!("FILE:{}", kdc.join("alice.cc").display()),
            );
        } else {
            // No ticket cache: the keytab is the only login.
            cmd.env("KRB5CCNAME", "FILE:/nonexistent/it-spark-secure.cc")
                .args(["--principal", "alice@YARN.TEST", "--keytab"])
                .arg(&keytab)
                // The AM finds the test KDC through the same krb5.conf (a real cluster's
                // nodes have it in /etc).
                .arg("--conf")
                .arg(format!(
                    "spark.yarnam.am.env.KRB5_CONFIG={}",
                    krb5.display()
                ));
        }
        cmd.args(["--class", "io.yarnam.spark.HdfsWordCount"])
            .arg(&tests)
            .arg(url("in.txt"))
            .arg(url(out));
        cmd
    };
    let runs = [
        ("word count, client mode", job("client", "out-client")),
        ("word count, cluster mode", job("cluster", "out-cluster")),
    ]
    .map(|(what, cmd)| tokio::spawn(run_wrapper(c, cmd, what)));
    let mut done = Vec::new();
    for r in runs {
        let r = r.await.unwrap();
        cluster::track_app(&r.app);
        done.push(r);
    }
    eprintln!(
        "the two Kerberos Spark runs took {:.1} s",
        started.elapsed().as_secs_f64()
    );

    for (r, mode, out) in [
        (&done[0], "client", "out-client"),
        (&done[1], "cluster", "out-cluster"),
    ] {
        assert!(r.ok, "word count in {mode} mode failed:\n{}", r.log);
        let res = r
            .result
            .clone()
            .unwrap_or_else(|| panic!("no RESULT ({mode}):\n{}", r.log));
        assert_eq!(res["words"], expected.len(), "{res}");
        // Every task's Hadoop user has an HDFS delegation token and none of the AM's own.
        let tasks = res["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 4, "{res}");
        for t in tasks {
            assert_eq!(t["token_file"], true, "{mode}: {t}");
            let kinds: Vec<&str> = t["kinds"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|k| k.as_str())
                .collect();
            assert!(kinds.contains(&"HDFS_DELEGATION_TOKEN"), "{mode}: {t}");
            for own in ["YARN_AM_RM_TOKEN", "RM_DELEGATION_TOKEN"] {
                assert!(!kinds.contains(&own), "{mode}: {own} in a task: {t}");
            }
        }
        // The driver logged in with Kerberos: on this host from the ticket cache (client
        // mode), in the AM container from the keytab yarn-am staged for the AM (cluster mode,
        // with the client's Hadoop configuration shipped).
        eprintln!("{mode} mode: {res}");
        assert_eq!(res["driver_security"], true, "{res}");
        assert_eq!(res["driver_kerberos"], true, "{res}");
        // Spark's own token manager fetched one (spark.kerberos.access.hadoopFileSystems)
        // and gave it to the driver's user, as it gives it to every executor.
        let driver_kinds = res["driver_token_kinds"].as_array().unwrap();
        assert!(
            driver_kinds.iter().any(|k| k == "HDFS_DELEGATION_TOKEN"),
            "{res}"
        );
        if mode == "cluster" {
            let am_log = am::am_log_dir(c, &r.app)
                .map(|d| std::fs::read_to_string(d.join("stderr")).unwrap_or_default())
                .unwrap_or_default();
            assert!(
                am_log.contains("next HDFS delegation token refresh"),
                "the AM has the keytab to refresh the tokens with:\n{am_log}"
            );
        }
        let report = am::wait_succeeded_via(&rest, &r.app, Duration::from_secs(60)).await;
        assert_eq!(report.user, "alice");

        // The result on HDFS, written as alice: the counts of the input.
        let listing = hdfs.list_page(&format!("{dir}/{out}"), None).await.unwrap();
        let names: BTreeSet<&str> = listing
            .entries
            .iter()
            .map(|e| e.path_suffix.as_str())
            .collect();
        assert!(names.contains("_SUCCESS"), "{mode}: {names:?}");
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for name in names.iter().filter(|n| n.starts_with("part-")) {
            let path = format!("{dir}/{out}/{name}");
            assert_eq!(hdfs.status(&path).await.unwrap().owner, "alice", "{path}");
            for line in hdfs.read_to_string(&path).await.unwrap().lines() {
                let (w, n) = line.split_once('\t').unwrap();
                counts.insert(w.to_string(), n.parse().unwrap());
            }
        }
        assert_eq!(counts, expected, "{mode}: the counts on HDFS");
        am::assert_no_delegation_token_in_logs(c, &r.app);
    }
    hdfs.delete(&dir, true).await.unwrap();
}

/// The wrapper refuses a master (it is master yarn-am) and a deploy mode it does not know,
/// before starting anything.
#[test]
fn wrapper_refuses_a_master_and_unknown_deploy_modes() {
    let Some(home) = spark_home() else { return };
    build(&home);
    for args in [
        &["--master", "yarn", "app.py"][..],
        &["--conf", "spark.master=local", "app.py"],
        &["--deploy-mode", "nowhere", "app.py"],
        &["--class", "Main"],
    ] {
        let out = Command::new(repo().join("spark/bin/spark-submit-yarn-am"))
            .env("SPARK_HOME", &home)
            .args(args)
            .output()
            .unwrap();
        let text = am::text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains("spark-submit-yarn-am: "), "{args:?}: {text}");
    }
}
