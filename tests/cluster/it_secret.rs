//! The application's secrets on the real cluster: a job whose tasks print everything they can
//! see (their environment, their token file, their parent's environment and command line),
//! and, while it runs and after it ends, a search for the master secret and every executor's
//! key, in raw, hex and base64 form, through every place the issue names: every file under
//! every container log dir, the NodeManagers' web pages (each log file, the container pages),
//! the RM's REST answers and pages about the app, the daemons' logs, and `/proc/*/environ` and
//! `/proc/*/cmdline` of every process. The same search finds the keys in the NodeManagers'
//! private copies of the token files, so a search that finds nothing is a search that works.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use am::{rest, submit_job, wait_for, Driver};
use base64::Engine;
use serde_json::json;
use yarn_am_wire::poll::executor_key;

/// One secret and the forms it could take in a file or a page.
struct Secret {
    name: String,
    /// Raw bytes (searched in files, where binary is possible).
    raw: Vec<u8>,
    /// Hex, and base64 (standard and URL-safe) at the three byte alignments, cut to the
    /// characters that depend only on the secret's own bytes: so a secret inside a larger
    /// base64 blob (`base64 < token_file`) is found too.
    text: Vec<String>,
}

impl Secret {
    fn new(name: String, raw: &[u8]) -> Self {
        let mut text = vec![hex::encode(raw), hex::encode_upper(raw)];
        for shift in 0..3 {
            let rest = &raw[shift..];
            let chunk = &rest[..rest.len() / 3 * 3];
            for engine in [
                &base64::engine::general_purpose::STANDARD_NO_PAD,
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ] {
                text.push(engine.encode(chunk));
            }
        }
        if let Ok(s) = std::str::from_utf8(raw) {
            text.push(s.to_string());
        }
        Self {
            name,
            raw: raw.to_vec(),
            text,
        }
    }

    /// Which form of this secret `hay` holds, if any.
    fn found_in(&self, hay: &[u8], raw_too: bool) -> Option<String> {
        let s = String::from_utf8_lossy(hay);
        if let Some(form) = self.text.iter().find(|t| s.contains(t.as_str())) {
            return Some(format!("{} as {form:?}", self.name));
        }
        (raw_too && hay.windows(self.raw.len()).any(|w| w == self.raw))
            .then(|| format!("{} (raw bytes)", self.name))
    }
}

/// Everything found: (where, which secret in which form).
#[derive(Default)]
struct Search {
    secrets: Vec<Secret>,
    leaks: Vec<(String, String)>,
    /// How many places were searched, by kind (so a search that saw nothing fails).
    searched: std::collections::BTreeMap<&'static str, usize>,
}

impl Search {
    fn check(&mut self, kind: &'static str, place: &str, hay: &[u8], raw_too: bool) {
        *self.searched.entry(kind).or_default() += 1;
        for s in &self.secrets {
            if let Some(found) = s.found_in(hay, raw_too) {
                self.leaks.push((place.to_string(), found));
            }
        }
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// `(nm host, container id)` of every container of `app`, from the log dirs.
fn containers(c: &cluster::Cluster, app: &str) -> Vec<(String, String)> {
    c.container_log_dirs(app)
        .into_iter()
        .map(|d| {
            let nm = d
                .strip_prefix(&c.dir)
                .unwrap()
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .to_string();
            (nm, d.file_name().unwrap().to_string_lossy().to_string())
        })
        .collect()
}

async fn get_text(http: &reqwest::Client, url: &str) -> Vec<u8> {
    match http.get(url).send().await {
        Ok(r) => r.bytes().await.map(|b| b.to_vec()).unwrap_or_default(),
        Err(e) => panic!("GET {url}: {e}"),
    }
}

/// Searches every place the issue names. `user` is the app's user (NM log URLs name it).
async fn search_everywhere(c: &cluster::Cluster, app: &str, user: &str, search: &mut Search) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    // Every process's environment and command line, first: the executors stay only a few
    // seconds after their tasks (the job then ends), and the searches below take a while on
    // a busy machine.
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = p.file_name().to_string_lossy().to_string();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        search.check(
            "process command line",
            &format!("{}/cmdline", p.path().display()),
            &cmdline,
            true,
        );
        // Kernel threads have none; the executors (non-dumpable) are readable to root.
        if let Ok(environ) = std::fs::read(p.path().join("environ")) {
            let kind = if cmdline.windows(16).any(|w| w == b"yarn-am\0executor") {
                "executor environment"
            } else {
                "process environment"
            };
            search.check(
                kind,
                &format!("{}/environ", p.path().display()),
                &environ,
                true,
            );
        }
    }
    // Every file under every container log dir.
    let mut files = Vec::new();
    for d in c.container_log_dirs(app) {
        files_under(&d, &mut files);
    }
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        search.check("log file", &f.display().to_string(), &bytes, true);
    }
    // The NodeManagers' pages: every log file of every container, the listings, the
    // container pages.
    for (nm, container) in containers(c, app) {
        let base = format!("http://{nm}:8042");
        let mut urls = vec![
            format!("{base}/node/containerlogs/{container}/{user}"),
            format!("{base}/node/container/{container}"),
            format!("{base}/ws/v1/node/containers/{container}"),
        ];
        let dir = c.dir.join(&nm).join("logs").join(app).join(&container);
        let mut names = Vec::new();
        files_under(&dir, &mut names);
        for f in names {
            let rel = f.strip_prefix(&dir).unwrap().display().to_string();
            urls.push(format!(
                "{base}/node/containerlogs/{container}/{user}/{rel}/?start=0"
            ));
        }
        for url in urls {
            let body = get_text(&http, &url).await;
            search.check("NM page", &url, &body, false);
        }
    }
    for nm in ["nm1", "nm2", "nm3"] {
        for path in [
            "/node/allContainers",
            "/node/allApplications",
            &format!("/node/application/{app}"),
            "/ws/v1/node/containers",
            &format!("/ws/v1/node/apps/{app}"),
        ] {
            let url = format!("http://{nm}:8042{path}");
            let body = get_text(&http, &url).await;
            search.check("NM page", &url, &body, false);
        }
    }
    // The RM's answers about the app: REST and pages, every attempt and its containers.
    let rm = format!("http://{}", c.rm_web);
    let attempts = am::app_attempts(c, app).await;
    let mut urls = vec![
        format!("{rm}/ws/v1/cluster/apps/{app}"),
        format!("{rm}/ws/v1/cluster/apps/{app}/appattempts"),
        format!("{rm}/ws/v1/cluster/apps/{app}/state"),
        format!("{rm}/ws/v1/cluster/apps?applicationTypes=YARN-AM"),
        format!("{rm}/cluster/app/{app}"),
    ];
    for a in attempts["appAttempts"]["appAttempt"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        let id = a["appAttemptId"].as_str().unwrap_or_default().to_string();
        assert!(!id.is_empty(), "no appAttemptId in {a}");
        urls.push(format!(
            "{rm}/ws/v1/cluster/apps/{app}/appattempts/{id}/containers"
        ));
        urls.push(format!("{rm}/cluster/appattempt/{id}"));
    }
    for url in urls {
        let body = get_text(&http, &url).await;
        search.check("RM answer", &url, &body, false);
    }
    // The daemons' own logs.
    let mut logs = Vec::new();
    files_under(&c.dir.join("logs"), &mut logs);
    for f in logs {
        let bytes = std::fs::read(&f).unwrap_or_default();
        search.check("daemon log", &f.display().to_string(), &bytes, false);
    }
}

/// `(executor id, container id)` of every executor the AM started, from its log.
fn executors_started(c: &cluster::Cluster, app: &str) -> BTreeSet<(String, String)> {
    let dir = am::am_log_dir(c, app).expect("the AM's log dir");
    let log = std::fs::read_to_string(dir.join("stderr")).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains("executor started"))
        .filter_map(|l| {
            let field = |k: &str| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(&format!("{k}=")))
                    .map(str::to_string)
            };
            Some((field("executor")?, field("container")?))
        })
        .collect()
}

fn secrets_of(master: &str, executors: &BTreeSet<(String, String)>) -> Vec<Secret> {
    let mut s = vec![Secret::new("the master secret".into(), master.as_bytes())];
    for (id, container) in executors {
        s.push(Secret::new(
            format!("executor {id}'s key"),
            &executor_key(master.as_bytes(), id, container),
        ));
    }
    s
}

/// Where the NodeManager keeps its own copy of a container's credentials (not served, not
/// logged; on the node's own disk): the keys must be there, or the search could not find
/// them anywhere.
fn private_token_file(c: &cluster::Cluster, app: &str, nm: &str, container: &str) -> PathBuf {
    c.dir
        .join(nm)
        .join("local/nmPrivate")
        .join(app)
        .join(container)
        .join(format!("{container}.tokens"))
}

/// What the job's tasks printed (their stdout files).
fn task_outputs(c: &cluster::Cluster, app: &str) -> Vec<String> {
    let mut files = Vec::new();
    for d in c.container_log_dirs(app) {
        files_under(&d, &mut files);
    }
    files
        .iter()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("task-look") && name.ends_with(".stdout")
        })
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

const TASK: &str = r#"echo "== env"; env; echo "== token file"; base64 -w0 < "$HADOOP_TOKEN_FILE_LOCATION"; echo; echo "== work dir token file"; base64 -w0 < container_tokens; echo; echo "== executor env"; tr '\0' '\n' < /proc/$PPID/environ; echo "== executor cmdline"; tr '\0' ' ' < /proc/$PPID/cmdline; echo; echo "YARN_AM_SECRET=$YARN_AM_SECRET"; ls -la; sleep 8"#;

#[tokio::test]
async fn no_secret_is_in_any_log_page_rest_answer_environment_or_command_line() {
    // Alone: the search of the executors' environments must fit in the seconds their tasks
    // sleep after printing, which beside other tests' load it did not (searched no executor).
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let tasks: Vec<serde_json::Value> = ["nm1", "nm2", "nm3"]
        .iter()
        .enumerate()
        .map(|(i, h)| json!({"id": format!("look{i}"), "command": TASK, "preferred_hosts": [h], "cpus": 1}))
        .collect();
    let job = json!({"name": "it-secret",
        "executor": {"cores": 1, "memory_mb": 256, "max_executors": 3, "idle_timeout_ms": 60000},
        "tasks": tasks});
    let app = submit_job(c, "it-secret", &job);
    let home = std::env::var("HOME").unwrap_or_else(|_| "/tmp".into());
    let master = yarn_am_wire::driver_secret::DriverSecret::read(
        &PathBuf::from(home).join(format!(".yarn-am/{app}.secret")),
    )
    .expect("submit keeps the master secret for the driver")
    .secret;
    assert_eq!(master.len(), 64, "{master:?} is not 32 bytes of hex");
    let d = Driver::find(c, &app).await;
    // While it runs: the tasks sleep after printing, so every executor is up and has run one.
    wait_for("3 tasks printing", Duration::from_secs(120), || async {
        (task_outputs(c, &app)
            .iter()
            .filter(|t| t.contains("YARN_AM_SECRET="))
            .count()
            >= 3)
            .then_some(())
    })
    .await;
    let running = d.state().await;
    let report = rest(c).app(&app).await.unwrap();
    let mut executors = executors_started(c, &app);
    for e in am::executors_of(&running) {
        executors.insert((
            e["id"].as_str().unwrap().to_string(),
            e["container_id"].as_str().unwrap().to_string(),
        ));
    }
    assert!(
        !executors.is_empty(),
        "no executor found in the AM's log or state"
    );

    let mut search = Search {
        secrets: secrets_of(&master, &executors),
        ..Default::default()
    };
    search_everywhere(c, &app, &report.user, &mut search).await;

    // The control: the same search finds the master secret in the AM's private copy of its
    // credentials and each executor's key in its own, where the NodeManager keeps them.
    for (nm, container) in containers(c, &app) {
        let path = private_token_file(c, &app, &nm, &container);
        c.copy_from_node(&nm, &path);
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{} of a running container: {e}", path.display()));
        let mut control = Search {
            secrets: secrets_of(&master, &executors),
            ..Default::default()
        };
        control.check("control", &path.display().to_string(), &bytes, true);
        let expected = if container.ends_with("_000001") {
            "the master secret".to_string()
        } else {
            let id = &executors
                .iter()
                .find(|(_, c)| *c == container)
                .expect("a known executor")
                .0;
            format!("executor {id}'s key")
        };
        assert!(
            control
                .leaks
                .iter()
                .any(|(_, found)| found.starts_with(&expected)),
            "the search does not find {expected} in {}: {:?}",
            path.display(),
            control.leaks
        );
    }
    let while_running = std::mem::take(&mut search.leaks);
    let searched_running = std::mem::take(&mut search.searched);

    am::wait_succeeded(c, &app, Duration::from_secs(180)).await;
    let executors = executors_started(c, &app);
    search.secrets = secrets_of(&master, &executors);
    search_everywhere(c, &app, &report.user, &mut search).await;
    eprintln!(
        "searched while running: {searched_running:?}; after: {:?}; {} secrets",
        search.searched,
        search.secrets.len()
    );
    assert!(
        while_running.is_empty() && search.leaks.is_empty(),
        "secrets found while running: {while_running:#?}\nafter the job: {:#?}",
        search.leaks
    );
    for kind in [
        "log file",
        "NM page",
        "RM answer",
        "process environment",
        "executor environment",
    ] {
        assert!(
            searched_running.get(kind).copied().unwrap_or(0) > 0,
            "searched no {kind}"
        );
    }

    // The tasks saw a token file, without yarn-am secrets but a valid one (base64 of "HDTS").
    let outputs = task_outputs(c, &app);
    assert_eq!(outputs.len(), 3, "{outputs:#?}");
    for o in &outputs {
        let tokens = o
            .lines()
            .skip_while(|l| *l != "== token file")
            .nth(1)
            .unwrap_or_default();
        assert!(
            tokens.starts_with("SERUU"),
            "no token file for the task: {o}"
        );
        assert!(o.contains("YARN_AM_DRIVER_URL="), "{o}");
        // The NodeManager's checksum of the original file went with it.
        assert!(!o.contains(".container_tokens.crc"), "{o}");
    }
}
