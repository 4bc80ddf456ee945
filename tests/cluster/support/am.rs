//! Test helpers for ApplicationMasters submitted to the real cluster with `yarn-am submit`:
//! find the AM's driver API, call it, and wait for conditions with deadlines.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use yarn_client::rest::{AppReport, RmRest};
use yarn_client::webhdfs::WebHdfs;

use super::cluster::Cluster;

/// The `yarn-am` binary the tests run: `YARN_AM_BIN` if set (as for the Python client's
/// tests: a binary built elsewhere, e.g. in a target folder other builds do not overwrite),
/// else the one cargo built with this test binary.
pub fn exe() -> PathBuf {
    std::env::var_os("YARN_AM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_yarn-am")))
}

pub fn yarn_am(c: &Cluster) -> Command {
    let mut cmd = Command::new(exe());
    // Staging stays local unless a test asks for WebHDFS (`cluster.sh env` exports it).
    cmd.env("HADOOP_CONF_DIR", &c.conf_dir)
        .env_remove("YARN_CONF_DIR")
        .env_remove("YARN_AM_RM_WEB")
        .env_remove("YARN_AM_WEBHDFS")
        .env_remove("YARN_AM_STAGING_DIR");
    // On the docker backend no node sees the host's /tmp/yarn-am-staging (localisation fails:
    // "File file:/tmp/yarn-am-staging/<app>/yarn-am-spec.json does not exist"): stage on HDFS,
    // as on a real multi-host cluster.
    if c.backend() == "docker" {
        cmd.env("YARN_AM_WEBHDFS", &c.webhdfs);
    }
    // Under `--https` the cluster's CA, as `cluster.sh env` exports it; else no CA file.
    match &c.ca_file {
        Some(ca) => cmd.env(yarn_client::tls::CA_FILE_ENV, ca),
        None => cmd.env_remove(yarn_client::tls::CA_FILE_ENV),
    };
    cmd
}

/// The RM's REST API.
pub fn rest(c: &Cluster) -> RmRest {
    RmRest::new(&c.rm_web, "yarn-am-test", Duration::from_secs(20)).unwrap()
}

pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Submits `name` with one attempt (a failing test AM is not retried) and `args`, and
/// returns the application id (`yarn-am submit` without `--wait`).
pub fn submit(c: &Cluster, name: &str, args: &[&str]) -> String {
    let out = yarn_am(c)
        .args(["submit", "--name", name, "--max-attempts", "1"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "submit failed: {}", text(&out));
    submitted_app(&out)
}

/// `yarn-am submit --wait` of the sample job (`conf/examples/job.json`) as `name`, with one
/// AM attempt; asserts it exited 0. Returns all it printed and the application id.
pub fn submit_sample_job_and_wait(c: &Cluster, name: &str) -> (String, String) {
    let out = yarn_am(c)
        .args([
            "submit",
            "--wait",
            "--wait-timeout",
            "240",
            "--max-attempts",
            "1",
        ])
        .args(["--name", name, "--job"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/examples/job.json"))
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let app = submitted_app(&out);
    (all, app)
}

/// The application id from the `submitted <app>` line `yarn-am submit` prints.
/// The app is remembered so that a failing test kills it (see `cluster::track_app`).
pub fn submitted_app(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let app = stdout
        .lines()
        .find_map(|l| l.strip_prefix("submitted "))
        .unwrap_or_else(|| panic!("no app id in {stdout}"))
        .trim()
        .to_string();
    super::cluster::track_app(&app);
    app
}

/// Waits until no node runs a container: the applications of tests that ran before may still
/// hold containers for a moment after they end (the NM reports them gone on its next
/// heartbeats), and a node they fill takes fewer of ours (placement tests).
/// Only for tests that run alone (`gate::alone`): beside shared tests the nodes are seldom empty.
pub async fn wait_until_no_node_runs_containers(c: &Cluster) {
    let rm = rest(c);
    wait_for(
        "every node to run no container",
        Duration::from_secs(60),
        || async {
            let nodes = rm.nodes(&[]).await.ok()?;
            nodes.iter().all(|n| n.num_containers == 0).then_some(())
        },
    )
    .await;
}

/// The live executors of a `/v1/state` answer as `(host, locality)`, sorted.
pub fn placements(state: &serde_json::Value) -> Vec<(String, String)> {
    let execs = executors_of(state);
    let mut placed: Vec<(String, String)> = live(&execs)
        .iter()
        .map(|e| {
            (
                e["host"].as_str().unwrap().to_string(),
                e["locality"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    placed.sort();
    placed
}

/// Polls `f` every 250 ms until it returns `Some` or `limit` passes.
pub async fn wait_for<T, F, Fut>(what: &str, limit: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The AM container's log folder (attempt 1).
pub fn am_log_dir(c: &Cluster, app: &str) -> Option<PathBuf> {
    c.container_log_dirs(app)
        .into_iter()
        .find(|d| d.to_string_lossy().ends_with("_01_000001"))
}

/// A client for one running AM's driver API.
pub struct Driver {
    pub url: String,
    pub secret: String,
    /// The AM's certificate fingerprint, from the secret file.
    pub pin: Option<yarn_am_wire::tls::Fingerprint>,
    pub http: reqwest::Client,
}

impl Driver {
    /// Waits for the AM to write its URL, and reads the secret `submit` stored.
    pub async fn find(c: &Cluster, app: &str) -> Driver {
        let url = wait_for(
            "the AM's driver-api.url",
            Duration::from_secs(60),
            || async {
                let dir = am_log_dir(c, app)?;
                let s = std::fs::read_to_string(dir.join("driver-api.url")).ok()?;
                Some(s.trim().to_string()).filter(|s| !s.is_empty())
            },
        )
        .await;
        let home = std::env::var("HOME").unwrap_or_else(|_| "/tmp".into());
        let file = yarn_am_wire::driver_secret::DriverSecret::read(
            &PathBuf::from(home).join(format!(".yarn-am/{app}.secret")),
        )
        .expect("submit writes the secret");
        assert!(
            url.starts_with("https://"),
            "the driver API is not TLS: {url}"
        );
        // The AM closes a keep-alive connection idle for its header-read timeout (10 s): a
        // request sent on it just then gets no answer (seen: a POST /v1/finish after a 10 s
        // job). Idle connections are dropped well before that.
        let http = yarn_am::cluster::driver_client::for_secret(&file)
            .timeout(Duration::from_secs(15))
            .pool_idle_timeout(Duration::from_secs(3))
            .build()
            .unwrap();
        Driver {
            url,
            secret: file.secret,
            pin: file.tls_pin,
            http,
        }
    }

    /// A fresh client pinned to this AM's certificate (a new connection pool).
    pub fn client(&self) -> reqwest::Client {
        yarn_am::cluster::driver_client::pinned_http_client(self.pin.expect("a TLS AM"))
            .timeout(Duration::from_secs(15))
            .build()
            .unwrap()
    }

    /// `host:port` of the driver API.
    pub fn addr(&self) -> String {
        self.url
            .trim_start_matches("https://")
            .trim_end_matches('/')
            .to_string()
    }

    /// A raw TLS connection to the driver API, the certificate pinned (for tests that
    /// write HTTP by hand).
    pub async fn tls_connect(
        &self,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
        let config = yarn_am_wire::tls::pinned_client_config(self.pin.expect("a TLS AM"));
        let tcp = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::TcpStream::connect(self.addr()),
        )
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"))??;
        let name = rustls::pki_types::ServerName::try_from("yarn-am").unwrap();
        tokio::time::timeout(
            Duration::from_secs(5),
            tokio_rustls::TlsConnector::from(std::sync::Arc::new(config)).connect(name, tcp),
        )
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "handshake timed out"))?
    }

    async fn get_ok(&self, path: &str) -> reqwest::Response {
        let resp = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(&self.secret)
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "GET {path}: {}", resp.status());
        resp
    }

    pub async fn get(&self, path: &str) -> serde_json::Value {
        self.get_ok(path).await.json().await.unwrap()
    }

    pub async fn get_text(&self, path: &str) -> String {
        self.get_ok(path).await.text().await.unwrap()
    }

    pub async fn post(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let resp = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(&self.secret)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "POST {path}: {}", resp.status());
        resp.json().await.unwrap()
    }

    pub async fn state(&self) -> serde_json::Value {
        self.get("/v1/state").await
    }

    pub async fn running(&self) -> u64 {
        self.state().await["running"].as_u64().unwrap()
    }

    pub async fn wait_running(&self, n: u64, limit: Duration) {
        wait_for(&format!("{n} running executor(s)"), limit, || async {
            (self.running().await == n).then_some(())
        })
        .await
    }
}

/// The executors in a `/v1/state` answer.
impl Driver {
    /// The driver API answers only TLS with the certificate the secret file pins.
    /// A client pinning another certificate is refused in the handshake (its secret never
    /// sent), naming both fingerprints; plain HTTP to the port gets no HTTP reply.
    pub async fn assert_tls_only_with_its_pin(&self) {
        use yarn_am_wire::tls;
        let wrong = tls::Fingerprint([7; 32]);
        let err = yarn_am::cluster::driver_client::pinned_http_client(wrong)
            .timeout(Duration::from_secs(15))
            .build()
            .unwrap()
            .get(format!("{}/v1/state", self.url))
            .bearer_auth(&self.secret)
            .send()
            .await
            .unwrap_err();
        match tls::pin_error(&err) {
            Some(tls::TlsError::WrongCertificate { expected, seen }) => {
                assert_eq!((expected, Some(seen)), (wrong, self.pin));
            }
            other => panic!("not a pin refusal: {other:?}: {err:#}"),
        }
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(self.addr()).await.unwrap();
        s.write_all(b"GET /v1/state HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(15), s.read_to_end(&mut out)).await;
        assert!(
            !String::from_utf8_lossy(&out).contains("HTTP/1."),
            "plain HTTP was answered on the driver API's port"
        );
    }
}

pub fn executors_of(state: &serde_json::Value) -> Vec<serde_json::Value> {
    state["executors"].as_array().unwrap().clone()
}

/// Those that have not exited.
pub fn live(execs: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    execs.iter().filter(|e| e["state"] != "exited").collect()
}

/// Submits an app with one `sleep` executor and waits until it runs.
pub async fn submit_one_executor(c: &Cluster, name: &str) -> (String, Driver) {
    let app = submit(c, name, &["--executors", "1"]);
    let d = Driver::find(c, &app).await;
    d.wait_running(1, Duration::from_secs(60)).await;
    (app, d)
}

/// The AM process: the NM's pid file names the container's shell, which runs `yarn-am am`
/// as its child (or has exec'd into it).
pub fn am_pid(c: &Cluster, app: &str) -> Option<u32> {
    let container = am_log_dir(c, app)?
        .file_name()?
        .to_string_lossy()
        .to_string();
    // The node's processes show in this machine's /proc on both backends (under their host
    // pids in docker); the NM's pid file is on the node's own disk.
    container_process(&container, "yarn-am\0am")
}

/// The process of YARN container `container` (`CONTAINER_ID` in its environment) whose
/// command line contains `cmd` (arguments joined by NULs), from /proc.
fn container_process(container: &str, cmd: &str) -> Option<u32> {
    let want = format!("CONTAINER_ID={container}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        if !String::from_utf8_lossy(&cmdline).contains(cmd) {
            return None;
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        environ
            .split(|b| *b == 0)
            .any(|kv| kv == want.as_bytes())
            .then_some(pid)
    })
}

/// Submits a job of `n` `sleep 3` tasks on three two-core executors (no locality wait) with
/// `--executor-silence-timeout secs`: every executor stays busy, for the tests that silence
/// one (a stopped process, a hung node). Returns the app id.
pub fn submit_busy_job(c: &Cluster, name: &str, n: usize, silence_secs: u32) -> String {
    let tasks: Vec<_> = (0..n)
        .map(|i| serde_json::json!({"id": format!("t{i:02}"), "command": "sleep 3"}))
        .collect();
    let job = serde_json::json!({"name": name,
        "executor": {"cores": 2, "memory_mb": 256, "min_executors": 3, "max_executors": 3,
                     "idle_timeout_ms": 600000},
        "locality_wait_ms": {"node": 0, "rack": 0},
        "tasks": tasks});
    let path = write_job(c, name, &job);
    let silence = silence_secs.to_string();
    submit(
        c,
        name,
        &[
            "--job",
            path.to_str().unwrap(),
            "--executor-silence-timeout",
            &silence,
        ],
    )
}

/// `yarn-am submit --wait` (up to 300 s) of `job` as `user`, one attempt; the caller adds
/// where to stage (`--webhdfs`) and runs it.
pub fn submit_wait_cmd(c: &Cluster, name: &str, job: &serde_json::Value, user: &str) -> Command {
    let path = write_job(c, name, job);
    let mut cmd = yarn_am(c);
    cmd.args([
        "submit",
        "--name",
        name,
        "--max-attempts",
        "1",
        "--user",
        user,
    ])
    .args(["--job", path.to_str().unwrap()])
    .args(["--wait", "--wait-timeout", "300"]);
    cmd
}

/// Submits `job` as `name` with two AM attempts (and `extra` submit arguments), for the
/// tests that kill the AM; returns the application id.
pub fn submit_job_two_attempts(
    c: &Cluster,
    name: &str,
    job: &serde_json::Value,
    extra: &[&str],
) -> String {
    let path = write_job(c, name, job);
    let out = yarn_am(c)
        .args(["submit", "--name", name, "--max-attempts", "2"])
        .args(extra)
        .arg("--job")
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "submit failed: {}", text(&out));
    submitted_app(&out)
}

/// `kill -9` of the app's AM of attempt 1 (only that pid, found from its container);
/// returns the pid.
pub fn kill9_am(c: &Cluster, app: &str) -> u32 {
    let pid = am_pid(c, app).expect("the AM's pid");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(String::from_utf8_lossy(&cmdline).contains("yarn-am\0am"));
    let killed = unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert_eq!(killed, 0, "kill -9 {pid}");
    pid
}

/// Writes `job` to `<cluster>/jobs/<name>.json` for `yarn-am submit --job`.
pub fn write_job(c: &Cluster, name: &str, job: &serde_json::Value) -> PathBuf {
    let dir = c.dir.join("jobs");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(job).unwrap()).unwrap();
    path
}

/// Writes `job` (see [`write_job`]) and submits it as `name` (see [`submit`]); returns the
/// application id.
pub fn submit_job(c: &Cluster, name: &str, job: &serde_json::Value) -> String {
    let path = write_job(c, name, job);
    submit(c, name, &["--job", path.to_str().unwrap()])
}

/// The job summary the AM leaves in the app's diagnostics (second line, JSON).
pub fn summary_of(diagnostics: &str) -> yarn_am_core::driver::report::JobSummary {
    yarn_am_core::driver::report::JobSummary::from_diagnostics(diagnostics)
        .unwrap_or_else(|| panic!("no job summary in diagnostics: {diagnostics}"))
        .1
}

/// The full job report (every task) the AM writes into its log dir.
pub fn job_report(c: &Cluster, app: &str) -> yarn_am_core::driver::report::JobSummary {
    let dir = am_log_dir(c, app).expect("AM log dir");
    let text = std::fs::read_to_string(dir.join("job-report.json")).expect("job-report.json");
    serde_json::from_str(&text).unwrap()
}

/// Which NodeManager runs the AM container.
pub fn am_host(c: &Cluster, app: &str) -> String {
    let dir = am_log_dir(c, app).expect("AM log dir");
    let rel = dir.strip_prefix(&c.dir).unwrap();
    rel.components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .to_string()
}

/// Every executor container of `app` (all but the AM's `_000001`) ended because the AM told
/// it to (its log says so), and none kept polling a gone AM. Waits a little for the last
/// log lines to land.
pub async fn assert_executors_told_to_stop(c: &Cluster, app: &str) {
    let executors: Vec<PathBuf> = c
        .container_log_dirs(app)
        .into_iter()
        .filter(|d| !d.to_string_lossy().ends_with("_000001"))
        .collect();
    assert!(!executors.is_empty(), "{app} ran no executor");
    for dir in executors {
        let log = wait_for(
            &format!("{} to say the AM told it to stop", dir.display()),
            Duration::from_secs(15),
            || async {
                let log = std::fs::read_to_string(dir.join("stderr")).ok()?;
                log.contains("the AM says shut down").then_some(log)
            },
        )
        .await;
        assert!(
            !log.contains("poll failed"),
            "{} polled an AM that was gone:\n{log}",
            dir.display()
        );
    }
}

/// Milliseconds into the day of a tracing log line (`2026-11-23T23:10:01.123456Z  INFO ...`).
pub fn log_time_ms(line: &str) -> Option<u64> {
    let ts = line.split_whitespace().next()?;
    let time = ts.split_once('T')?.1.trim_end_matches('Z');
    let mut parts = time.split(':');
    let h: u64 = parts.next()?.parse().ok()?;
    let m: u64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next()?.parse().ok()?;
    Some((h * 3600 + m * 60) * 1000 + (s * 1000.0) as u64)
}

/// The AM's log (its container's stderr).
pub fn am_log(c: &Cluster, app: &str) -> String {
    let dir = am_log_dir(c, app).expect("AM log dir");
    std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
}

/// Waits (at most `limit`) for `app` to end and asserts it FINISHED with SUCCEEDED.
pub async fn wait_succeeded(c: &Cluster, app: &str, limit: Duration) -> AppReport {
    wait_succeeded_via(&rest(c), app, limit).await
}

/// [`wait_succeeded`] through a given REST client (e.g. one with Kerberos); the
/// diagnostics say why not.
pub async fn wait_succeeded_via(rest: &RmRest, app: &str, limit: Duration) -> AppReport {
    wait_finished_as(rest, app, limit, "SUCCEEDED").await
}

/// Waits (at most `limit`) for `app` to end and asserts the AM unregistered FAILED (the RM
/// reports FINISHED / FAILED, not an attempt killed or lost).
pub async fn wait_failed_via(rest: &RmRest, app: &str, limit: Duration) -> AppReport {
    wait_finished_as(rest, app, limit, "FAILED").await
}

async fn wait_finished_as(rest: &RmRest, app: &str, limit: Duration, status: &str) -> AppReport {
    let r = rest.wait_final(app, limit).await.unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", status),
        "{app}: {}",
        r.diagnostics
    );
    r
}

/// A job of one task on one one-core executor.
pub fn one_task_job(name: &str, command: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "executor": {"cores": 1, "memory_mb": 256, "min_executors": 0, "max_executors": 1,
                     "initial_executors": 1, "idle_timeout_ms": 5000},
        "task_retries": 1,
        "locality_wait_ms": {"node": 0, "rack": 0},
        "allocation": {"backlog_timeout_ms": 1000, "sustained_backlog_timeout_ms": 1000,
                       "executor_allocation_ratio": 1.0},
        "tasks": [{"id": "t0", "cpus": 1, "command": command}]
    })
}

/// The RM's `appattempts` answer for `app` (`{"appAttempts": {"appAttempt": [...]}}`).
pub async fn app_attempts(c: &Cluster, app: &str) -> serde_json::Value {
    reqwest::Client::new()
        .get(format!(
            "{}/ws/v1/cluster/apps/{app}/appattempts",
            rest(c).base_url()
        ))
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Where `submit` staged the app (its `staging folder:` line): this machine's disk natively,
/// HDFS on the docker backend (no node sees this disk there: `am::yarn_am`).
pub enum Staged {
    Local(PathBuf),
    Hdfs(WebHdfs, String),
}

impl Staged {
    pub fn of(c: &Cluster, submit_output: &str) -> Staged {
        let line = submit_output
            .lines()
            .find_map(|l| l.strip_prefix("staging folder: "))
            .unwrap_or_else(|| panic!("no staging folder in {submit_output}"));
        match line.split_once(" on HDFS") {
            Some((path, _)) => {
                let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
                let hdfs = WebHdfs::new(&c.webhdfs, &user, Duration::from_secs(20)).unwrap();
                Staged::Hdfs(hdfs, path.to_string())
            }
            None => Staged::Local(PathBuf::from(line)),
        }
    }

    /// The folder only its owner may enter; locally, files only the owner reads too (0700
    /// for the binary). HDFS file modes belong to the staging tests of the WebHDFS path.
    pub async fn assert_private(&self) {
        match self {
            Staged::Local(dir) => {
                let mode = |p: &std::path::Path| {
                    use std::os::unix::fs::PermissionsExt;
                    let md = std::fs::symlink_metadata(p);
                    md.unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                        .permissions()
                        .mode()
                        & 0o7777
                };
                assert_eq!(mode(dir), 0o700, "{}", dir.display());
                assert_eq!(mode(&dir.join("yarn-am")), 0o700);
                // A small spec travels in the AM's credentials (`protocol::spec`); a large
                // one is here, for its owner alone.
                let spec = dir.join("yarn-am-spec.json");
                if spec.exists() {
                    assert_eq!(mode(&spec), 0o600);
                }
            }
            Staged::Hdfs(hdfs, dir) => {
                let st = hdfs.status(dir).await.expect("the HDFS staging folder");
                assert_eq!(st.permission, "700", "{dir} on HDFS: {st:?}");
            }
        }
    }

    pub async fn exists(&self) -> bool {
        match self {
            Staged::Local(dir) => dir.exists(),
            Staged::Hdfs(hdfs, dir) => hdfs.status(dir).await.is_ok(),
        }
    }
}

/// The audit's M2: no container log of the app holds a delegation token's value (every
/// `delegation=` in them is followed by `REDACTED`).
pub fn assert_no_delegation_token_in_logs(c: &Cluster, app: &str) {
    for dir in c.container_log_dirs(app) {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let text = String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap_or_default())
                .to_string();
            for (at, _) in text.match_indices("delegation=") {
                assert!(
                    text[at + "delegation=".len()..].starts_with("REDACTED"),
                    "{}: a token in the log",
                    entry.path().display()
                );
            }
        }
    }
}

/// The accelerator-seconds the RM counts for `app` (its `resourceSecondsMap`), read from
/// the report as XML: the RM's JSON shows one entry of that map. Also the XML, for messages.
pub fn accelerator_seconds(c: &Cluster, app: &str) -> (Option<u64>, String) {
    let xml = c
        .rm_get_xml(&format!("/ws/v1/cluster/apps/{app}"))
        .expect("the app's report as XML");
    let counted = xml
        .split("<key>example.com/accelerator</key><value>")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .and_then(|n| n.parse::<u64>().ok());
    (counted, xml)
}
