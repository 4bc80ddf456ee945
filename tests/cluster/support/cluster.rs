//! Test fixture: the real YARN cluster of `tests/cluster/cluster.sh`.
//!
//! Shared by the integration tests of both crates (yarn-client includes this file with
//! `#[path]`; it needs no other part of `support`). The first test that needs the cluster starts it if it is not up; the test
//! command (`make test`) starts it once before the run and stops it after, also on failure.
//! A test that panics prints the tail of every daemon log, so a CI failure shows the RM's
//! and NMs' side of the story.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Where the running cluster lives and how to reach it.
#[derive(Debug)]
pub struct Cluster {
    /// Runtime folder: `conf/`, `logs/`, one folder per daemon.
    pub dir: PathBuf,
    /// `HADOOP_CONF_DIR` of the cluster; clients and the AM read it.
    pub conf_dir: PathBuf,
    /// RM web address: `host:port` (plain), `https://host:port` under `--https`.
    pub rm_web: String,
    /// RM scheduler address (ApplicationMasterProtocol), `host:port`.
    pub rm_scheduler: String,
    /// The HDFS NameNode's web address (WebHDFS), `http://host:port` (`https://` under
    /// `--https`).
    pub webhdfs: String,
    /// The cluster CA's PEM under `--https` (`cluster.sh env`'s `YARN_AM_CA_FILE`): what the
    /// fixture's curl, the tests' clients and `yarn-am` trust.
    pub ca_file: Option<PathBuf>,
}

fn repo_root() -> PathBuf {
    // Both crates' manifests sit at or one below the repo root; find cluster.sh upwards.
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    loop {
        if dir.join("tests/cluster/cluster.sh").exists() {
            return dir;
        }
        assert!(
            dir.pop(),
            "tests/cluster/cluster.sh not found above the crate"
        );
    }
}

fn script() -> PathBuf {
    repo_root().join("tests/cluster/cluster.sh")
}

/// Runs `cluster.sh <arg>`; returns whether it exited 0.
pub fn cluster_sh(arg: &str) -> bool {
    cluster_sh_args(&[arg])
}

pub fn cluster_sh_args(args: &[&str]) -> bool {
    Command::new("bash")
        .arg(script())
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The plain cluster (`cluster.sh up` with no options), started on first use if it is not
/// already up and ready; a cluster running another profile is restarted plain.
pub fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| start_profile(&[]))
}

/// The cluster in the profile the `cluster.sh up` options name (e.g.
/// `["--rpc-protection", "privacy"]`), restarted in it if it runs another. One run of the
/// tests uses one profile (`scripts/test.sh` selects each profile's tests by name, one pass
/// each), and its tests ask for it concurrently: one switch at a time, so the first starts
/// the profile and the others find it up.
pub fn start_profile(up_args: &[&str]) -> Cluster {
    static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that panicked while switching leaves nothing to repair: the next one checks
    // the cluster afresh.
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let running = Command::new("bash")
        .arg(script())
        .arg("profile")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let ready = Command::new("bash")
        .arg(script())
        .arg("status")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let want = profile_name(up_args);
    if !ready || running != want {
        eprintln!(
            "[fixture] YARN test cluster not up in profile '{want}' (running: '{running}', ready: {ready}): starting it (stop with tests/cluster/cluster.sh down)"
        );
        let mut args = vec!["up"];
        args.extend_from_slice(up_args);
        assert!(
            cluster_sh_args(&args),
            "tests/cluster/cluster.sh {} failed; see its output above",
            args.join(" ")
        );
    }
    let dir = PathBuf::from(
        std::env::var("YARN_AM_CLUSTER_DIR").unwrap_or_else(|_| "/tmp/yarn-am-cluster".into()),
    );
    if up_args.contains(&"--https") {
        let ca = dir.join("tls/ca.pem");
        // The tests' own RM and WebHDFS clients trust what `yarn-am` is told to trust
        // (`yarn_client::tls::TlsTrust::from_env`); set before any client is built.
        std::env::set_var(yarn_client::tls::CA_FILE_ENV, &ca);
        return Cluster {
            conf_dir: dir.join("conf"),
            rm_web: "https://rm:8090".into(),
            rm_scheduler: "rm:8030".into(),
            webhdfs: "https://rm:9871".into(),
            ca_file: Some(ca),
            dir,
        };
    }
    Cluster {
        conf_dir: dir.join("conf"),
        dir,
        rm_web: "rm:8088".into(),
        rm_scheduler: "rm:8030".into(),
        webhdfs: "http://rm:9870".into(),
        ca_file: None,
    }
}

/// The profile name `cluster.sh profile` prints for these `up` options.
fn profile_name(up_args: &[&str]) -> String {
    let mut words = Vec::new();
    if up_args.contains(&"--secure") {
        words.push("secure".to_string());
    }
    if let Some(i) = up_args.iter().position(|a| *a == "--rpc-protection") {
        match up_args.get(i + 1) {
            Some(&"authentication") | None => {}
            Some(p) => words.push(format!("rpc-{p}")),
        }
    }
    // `--nodes N --racks R` other than the default 3 on 2 (cluster.sh's `layout_word`).
    let value = |flag: &str, default: &str| {
        up_args
            .iter()
            .position(|a| *a == flag)
            .and_then(|i| up_args.get(i + 1))
            .map_or(default.to_string(), |v| v.to_string())
    };
    let (nodes, racks) = (value("--nodes", "3"), value("--racks", "2"));
    if up_args.contains(&"--https") {
        words.push("https".to_string());
    }
    if up_args.contains(&"--amrmproxy") {
        words.push("amrmproxy".to_string());
    }
    if (nodes.as_str(), racks.as_str()) != ("3", "2") {
        words.push(format!("nodes{nodes}-racks{racks}"));
    }
    if words.is_empty() {
        "plain".into()
    } else {
        words.join(" ")
    }
}

impl Cluster {
    /// The last `lines` lines of every daemon log, for failure reports.
    pub fn log_tails(&self, lines: usize) -> String {
        let mut out = String::new();
        let Ok(entries) = std::fs::read_dir(self.dir.join("logs")) else {
            return out;
        };
        let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let all: Vec<&str> = text.lines().collect();
            let tail = &all[all.len().saturating_sub(lines)..];
            out.push_str(&format!("===== {} (last {lines} lines)\n", f.display()));
            for l in tail {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    /// The backend running the cluster (`cluster.sh backend`): `native` (every daemon a JVM
    /// on this machine, sharing its disk) or `docker` (each node its own file system).
    pub fn backend(&self) -> String {
        std::fs::read_to_string(self.dir.join("backend"))
            .map(|b| b.trim().to_string())
            .unwrap_or_else(|_| "native".into())
    }

    /// The container log folders of an application (`<runtime>/nmX/logs/<app>/<container>`
    /// on the host). Read as a user reads them, through the NodeManagers' web services, on
    /// either backend (on the docker one the nodes' disks are not the host's); each call
    /// fetches the app's current logs into those folders, so tests read them as files. Under
    /// Kerberos the NM cannot serve logs without Hadoop's native library (the Maven jars have
    /// none), and an ended app's are on HDFS once aggregated: then they are copied off the
    /// nodes (`copy_from_node`), as an operator would.
    pub fn container_log_dirs(&self, app_id: &str) -> Vec<PathBuf> {
        let profile = std::fs::read_to_string(self.dir.join("profile")).unwrap_or_default();
        // With log aggregation on (the plain profile), the NodeManagers stop listing an ended
        // app's containers once they have moved its logs to HDFS; the nodes keep the files
        // (`yarn.nodemanager.delete.debug-delay-sec`), so an ended app's are copied off them.
        if !profile.contains("secure") && !self.app_ended(app_id) {
            return self.fetch_container_logs(app_id);
        }
        let mut dirs = Vec::new();
        for nm in ["nm1", "nm2", "nm3"] {
            let app_dir = self.dir.join(nm).join("logs").join(app_id);
            self.copy_from_node(nm, &app_dir);
            if let Ok(entries) = std::fs::read_dir(&app_dir) {
                dirs.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
            }
        }
        dirs.sort();
        dirs
    }

    /// Whether the RM reports `app_id` FINISHED, FAILED or KILLED.
    fn app_ended(&self, app_id: &str) -> bool {
        let url = format!("{}/ws/v1/cluster/apps/{app_id}", self.rm_url());
        self.web_json(&url).is_some_and(|v| {
            matches!(
                v["app"]["state"].as_str(),
                Some("FINISHED" | "FAILED" | "KILLED")
            )
        })
    }

    /// The app's containers as a user finds them: each attempt's AM (RM web services), every
    /// container its AM's log names, and those the NMs list now; then each container's log
    /// files from the NM that has them.
    fn fetch_container_logs(&self, app_id: &str) -> Vec<PathBuf> {
        const NMS: [&str; 3] = ["nm1", "nm2", "nm3"];
        let nm_base = |nm: &str| format!("{}/ws/v1/node", self.nm_web(nm));
        let mut ids = std::collections::BTreeSet::new();
        let attempts = self
            .web_json(&format!(
                "{}/ws/v1/cluster/apps/{app_id}/appattempts",
                self.rm_url()
            ))
            .unwrap_or_default();
        for a in one_or_many(&attempts["appAttempts"]["appAttempt"]) {
            let (Some(am), Some(node)) = (a["containerId"].as_str(), a["nodeHttpAddress"].as_str())
            else {
                continue;
            };
            ids.insert(am.to_string());
            let url = format!(
                "{}://{node}/ws/v1/node/containerlogs/{am}/stderr",
                self.web_scheme()
            );
            let log = self.web_log(&url, "stderr").unwrap_or_default();
            let log = String::from_utf8_lossy(&log);
            for word in log.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')) {
                if is_container_of(word, app_id) {
                    ids.insert(word.to_string());
                }
            }
        }
        for nm in NMS {
            let list = self
                .web_json(&format!("{}/containers", nm_base(nm)))
                .unwrap_or_default();
            for c in one_or_many(&list["containers"]["container"]) {
                if let Some(id) = c["id"].as_str().filter(|id| is_container_of(id, app_id)) {
                    ids.insert(id.to_string());
                }
            }
        }
        let mut dirs = Vec::new();
        for id in &ids {
            for nm in NMS {
                let base = nm_base(nm);
                let files = self
                    .web_json(&format!("{base}/containers/{id}/logs"))
                    .unwrap_or_default();
                let names: Vec<String> = one_or_many(&files["containerLogsInfo"])
                    .iter()
                    .flat_map(|info| one_or_many(&info["containerLogInfo"]))
                    .filter_map(|f| f["fileName"].as_str().map(str::to_string))
                    .collect();
                if names.is_empty() {
                    continue;
                }
                let dir = self.dir.join(nm).join("logs").join(app_id).join(id);
                let _ = std::fs::create_dir_all(&dir);
                for name in names {
                    if let Some(text) =
                        self.web_log(&format!("{base}/containerlogs/{id}/{name}"), &name)
                    {
                        let _ = std::fs::write(dir.join(&name), text);
                    }
                }
                dirs.push(dir);
                break;
            }
        }
        dirs.sort();
        dirs
    }

    /// Makes `path` (under the runtime folder, on `node`'s own disk) readable at the same
    /// path here: `cluster.sh from-node` copies it off a docker node; natively the node's
    /// disk is this machine's. What the node does not have stays absent.
    pub fn copy_from_node(&self, node: &str, path: &Path) {
        cluster_sh_args(&["from-node", node, &path.to_string_lossy()]);
    }

    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.dir.join(rel)
    }

    /// `http` or `https` (`--https`: every web server of the cluster speaks TLS only).
    pub fn web_scheme(&self) -> &'static str {
        if self.ca_file.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// The RM web app's base URL.
    pub fn rm_url(&self) -> String {
        if self.rm_web.contains("://") {
            self.rm_web.clone()
        } else {
            format!("http://{}", self.rm_web)
        }
    }

    /// A NodeManager's web app base URL (8042, or 8044 over TLS).
    pub fn nm_web(&self, nm: &str) -> String {
        match self.ca_file {
            Some(_) => format!("https://{nm}:8044"),
            None => format!("http://{nm}:8042"),
        }
    }

    /// curl (the fixture has no runtime of its own) with a 10 s limit, failing on HTTP
    /// errors. Once the secure profile has run, with SPNEGO as alice (the ticket `cluster.sh
    /// up` got her; the tests' apps are hers there): a plain cluster never asks for it.
    fn curl(&self) -> Command {
        let mut curl = Command::new("curl");
        curl.args(["-sf", "-m", "10"]);
        if let Some(ca) = &self.ca_file {
            curl.arg("--cacert").arg(ca);
        }
        let kdc = self.dir.join("kdc");
        if kdc.join("alice.cc").exists() {
            curl.env("KRB5_CONFIG", kdc.join("krb5.conf"))
                .env(
                    "KRB5CCNAME",
                    format!("FILE:{}", kdc.join("alice.cc").display()),
                )
                .args(["--negotiate", "-u", ":"]);
        }
        curl
    }

    /// A POST to the RM's web services (`path` with its query) as the cluster's admin
    /// (`user.name`, a simple-auth cluster's identity), with a JSON body or none; whether the
    /// RM answered 2xx, with its answer or curl's error for the message.
    pub fn rm_post(&self, path: &str, json: Option<&str>) -> Result<String, String> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = format!("{}{path}{sep}user.name=root", self.rm_url());
        let mut curl = self.curl();
        curl.args(["-X", "POST", "-H", "Content-Type: application/json"]);
        curl.args(["-d", json.unwrap_or("")]);
        let out = curl.arg(&url).output().map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            Ok(text)
        } else {
            Err(format!("POST {url}: {:?} {text}", out.status.code()))
        }
    }

    /// A GET of the RM's web services as XML, for the maps its JSON shows only the last
    /// entry of (Hadoop 3.4.1's `resourceSecondsMap`, ...).
    pub fn rm_get_xml(&self, path: &str) -> Option<String> {
        let mut curl = self.curl();
        curl.args(["-H", "Accept: application/xml"]);
        let out = curl.arg(format!("{}{path}", self.rm_url())).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn curl_get(&self, url: &str, accept_json: bool) -> Option<Vec<u8>> {
        let mut curl = self.curl();
        if accept_json {
            curl.args(["-H", "Accept: application/json"]);
        }
        let out = curl.arg(url).output().ok()?;
        out.status.success().then_some(out.stdout)
    }

    /// A GET parsed as JSON.
    fn web_json(&self, url: &str) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.curl_get(url, true)?).ok()
    }

    /// One container log file from the NM's `containerlogs` service, without the header and
    /// footer the service wraps it in (`LogContents:` .. `End of LogType:<name>.`).
    fn web_log(&self, url: &str, name: &str) -> Option<Vec<u8>> {
        let body = self.curl_get(url, false)?;
        let head = b"LogContents:\n";
        let start = body.windows(head.len()).position(|w| w == head)? + head.len();
        let foot = format!("End of LogType:{name}.");
        let end = body
            .windows(foot.len())
            .rposition(|w| w == foot.as_bytes())
            .filter(|&e| e >= start)?;
        // The footer follows the file's last byte directly (NMWebServices.getLogs).
        Some(body[start..end].to_vec())
    }
}

/// Whether a word is a container id of an app (with or without the RM's epoch).
pub use yarn_client::node_logs::is_container_of;

/// Guard for one test: prints the daemon logs if the test panics while it is alive.
pub struct LogsOnFailure(pub &'static Cluster);

impl Drop for LogsOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.0.log_tails(60));
            self.0.kill_tracked_apps();
        }
    }
}

thread_local! {
    /// Applications the current test submitted. Each test runs on its own thread (also under
    /// `#[tokio::test]`, whose runtime is current-thread), so this is per test.
    static TRACKED_APPS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Remembers an application the current test submitted, so that [`LogsOnFailure`] kills it if
/// the test fails: a failed test must not leave executors holding the cluster's capacity,
/// or every later test that needs it fails too.
pub fn track_app(app: &str) {
    TRACKED_APPS.with(|t| t.borrow_mut().push(app.to_string()));
}

impl Cluster {
    /// Kills (RM REST, through curl: this runs inside a panic, with no runtime at hand) every
    /// tracked application of this test that is not final yet.
    fn kill_tracked_apps(&self) {
        for app in TRACKED_APPS.with(|t| std::mem::take(&mut *t.borrow_mut())) {
            let url = format!(
                "{}/ws/v1/cluster/apps/{app}/state?user.name=yarn-am-test",
                self.rm_url()
            );
            let killed = self
                .curl()
                .args(["-X", "PUT", "-H"])
                .arg("Content-Type: application/json")
                .args(["-d", r#"{"state":"KILLED"}"#, &url])
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            eprintln!(
                "test failed: killing {app}: {}",
                if killed { "asked" } else { "failed" }
            );
        }
    }
}

/// A JSON value that is one object or a list of them (Hadoop's web services give either).
fn one_or_many(v: &serde_json::Value) -> Vec<serde_json::Value> {
    match v {
        serde_json::Value::Array(a) => a.clone(),
        serde_json::Value::Null => Vec::new(),
        other => vec![other.clone()],
    }
}
