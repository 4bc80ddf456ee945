//! `yarn-am submit --webhdfs` on the real cluster: the binary, spec and files are staged on
//! the test cluster's HDFS through WebHDFS, the NodeManagers localise them as `hdfs://`
//! URLs, and the staging folder is gone when the application ends: removed by the AM on
//! success and on kill, by `submit --wait` when no AM ever ran, and by `submit` itself when
//! the RM refuses the submission. A wrong WebHDFS address fails fast with a message naming it.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use am::{text, wait_for, write_job, yarn_am, Driver};
use yarn_client::rest::RmRest;
use yarn_client::webhdfs::WebHdfs;

/// The user the apps run as (and whose HDFS home holds the staging root).
const USER: &str = "yarn-am-it";
/// Where `submit` stages for [`USER`] by default.
const STAGING_ROOT: &str = "/user/yarn-am-it/.yarn-am-staging";

fn rest(c: &cluster::Cluster) -> RmRest {
    RmRest::new(&c.rm_web, "yarn-am-test", Duration::from_secs(20)).unwrap()
}

fn hdfs(c: &cluster::Cluster) -> WebHdfs {
    WebHdfs::new(&c.webhdfs, USER, Duration::from_secs(20)).unwrap()
}

/// `yarn-am submit --webhdfs <cluster> --user USER <args>`.
fn submit_webhdfs(c: &cluster::Cluster, args: &[&str]) -> Output {
    yarn_am(c)
        .args(["submit", "--webhdfs", &c.webhdfs, "--user", USER])
        .args(args)
        .output()
        .unwrap()
}

/// The staging folder `submit` printed, checked against the documented default.
fn staging_of(out: &Output, app: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("staging folder: "))
        .unwrap_or_else(|| panic!("no staging folder in {}", text(out)));
    let dir = format!("{STAGING_ROOT}/{app}");
    assert_eq!(
        line,
        format!("{dir} on HDFS (WebHDFS {})", "http://rm:9870"),
        "{}",
        text(out)
    );
    dir
}

async fn assert_gone(c: &cluster::Cluster, dir: &str) {
    let err = hdfs(c)
        .status(dir)
        .await
        .expect_err("the staging folder is still on HDFS");
    assert!(err.is_not_found(), "GETFILESTATUS {dir}: {err}");
}

/// NodeManager log lines saying which URLs a container of `app` localised.
fn localizing_lines(c: &cluster::Cluster, app: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for nm in ["nm1", "nm2", "nm3"] {
        let log = std::fs::read_to_string(c.path(format!("logs/{nm}.log"))).unwrap_or_default();
        lines.extend(
            log.lines()
                .filter(|l| {
                    l.contains("is localizing:")
                        && l.split_whitespace()
                            .any(|w| cluster::is_container_of(w, app))
                })
                .map(str::to_string),
        );
    }
    lines
}

#[tokio::test]
async fn a_job_staged_through_webhdfs_runs_from_hdfs_and_the_am_removes_the_folder() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // Executors run the staged yarn-am binary; the task lists it and takes 20 s,
    // so the staged files can be looked at while the app runs (with a few seconds, a loaded
    // machine's submit outlasted the job and the folder was gone before the look). The comment makes the spec
    // larger than the credentials carry, so it travels as a file (small ones: the second
    // submit of `a_second_submit_uploads_nothing...`).
    let padding = "x".repeat(yarn_am_wire::spec::INLINE_SPEC_LIMIT);
    let job = am::one_task_job(
        "it-webhdfs-job",
        &format!("ls -lL yarn-am && sleep 20 && echo staged-binary-ran # {padding}"),
    );
    let path = write_job(c, "it-webhdfs-job", &job);
    let started = Instant::now();
    let out = submit_webhdfs(
        c,
        &[
            "--name",
            "it-webhdfs-job",
            "--max-attempts",
            "1",
            "--job",
            path.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "submit failed: {}", text(&out));
    let app = am::submitted_app(&out);
    let dir = staging_of(&out, &app);
    eprintln!("{app}: staged and submitted in {:?}", started.elapsed());

    // While it runs: the spec is in the app's folder on HDFS, the binary in the staging
    // cache under its digest, byte for byte as long as ours.
    let binary = am::exe();
    let ours = std::fs::metadata(&binary).unwrap().len();
    let staged = hdfs(c)
        .status(&cache_path(&binary, "yarn-am"))
        .await
        .unwrap();
    assert_eq!(staged.length, ours);
    hdfs(c)
        .status(&format!("{dir}/yarn-am-spec.json"))
        .await
        .unwrap();

    let r = rest(c)
        .wait_final(&app, Duration::from_secs(180))
        .await
        .unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{app}: {}",
        r.diagnostics
    );
    let summary = am::summary_of(&r.diagnostics);
    assert_eq!((summary.tasks_total, summary.tasks_succeeded), (1, 1));

    // The NMs localised hdfs:// URLs, for the AM container and for the executor.
    // The NodeManager localised the spec from the app's folder on HDFS. The binary comes
    // from the staging cache as a PRIVATE resource: a node that localised it for an earlier
    // app of this user (another test here) reuses its copy and logs nothing for it.
    let lines = localizing_lines(c, &app);
    let am_line = lines
        .iter()
        .find(|l| l.contains("_01_000001 is localizing"))
        .unwrap_or_else(|| panic!("no AM localisation in the NM logs: {lines:?}"));
    assert!(
        am_line.contains(&format!("hdfs://rm:8020{dir}/yarn-am-spec.json")),
        "{am_line}"
    );

    // The executor really ran the task with the binary localised from HDFS.
    let task_out: String = c
        .container_log_dirs(&app)
        .iter()
        .filter_map(|d| std::fs::read_to_string(d.join("task-t0.0.stdout")).ok())
        .collect();
    assert!(
        task_out.contains("staged-binary-ran"),
        "task stdout: {task_out:?}"
    );
    assert!(
        task_out.contains(&ours.to_string()),
        "ls -lL did not show a file of {ours} bytes: {task_out:?}"
    );

    // Nobody but the AM removes it here (no --wait): the AM does so before unregistering.
    assert_gone(c, &dir).await;
    let am_stderr = std::fs::read_to_string(am::am_log_dir(c, &app).unwrap().join("stderr"))
        .unwrap_or_default();
    assert!(
        am_stderr.contains("staging folder removed from HDFS"),
        "AM stderr: {am_stderr}"
    );
}

#[tokio::test]
async fn killing_the_app_removes_the_hdfs_staging_folder() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let extra = c.dir.join("jobs/it-webhdfs-extra.txt");
    std::fs::create_dir_all(extra.parent().unwrap()).unwrap();
    std::fs::write(&extra, "shipped through HDFS\n").unwrap();
    let out = submit_webhdfs(
        c,
        &[
            "--name",
            "it-webhdfs-kill",
            "--max-attempts",
            "1",
            "--executors",
            "1",
            "--file",
            extra.to_str().unwrap(),
            "--executor-command",
            "cat it-webhdfs-extra.txt > \"$YARN_AM_LOG_DIR/extra.out\"; sleep 600",
        ],
    );
    assert!(out.status.success(), "submit failed: {}", text(&out));
    let app = am::submitted_app(&out);
    let dir = staging_of(&out, &app);
    let d = Driver::find(c, &app).await;
    d.wait_running(1, Duration::from_secs(90)).await;
    // The --file went through HDFS too (the staging cache), and the executor read it.
    assert!(
        text(&out).contains("staged 2 file(s)"),
        "the binary and the --file: {}",
        text(&out)
    );
    wait_for(
        "the executor's copy of --file",
        Duration::from_secs(30),
        || async {
            c.container_log_dirs(&app)
                .iter()
                .filter_map(|d| std::fs::read_to_string(d.join("extra.out")).ok())
                .find(|s| s.contains("shipped through HDFS"))
        },
    )
    .await;

    // Through the RM: the NM sends the AM SIGTERM, then SIGKILL 250 ms later.
    let kill = yarn_am(c).args(["kill", &app]).output().unwrap();
    assert!(kill.status.success(), "kill failed: {}", text(&kill));
    wait_for(
        "the staging folder to leave HDFS",
        Duration::from_secs(20),
        || async {
            match hdfs(c).status(&dir).await {
                Err(e) if e.is_not_found() => Some(()),
                _ => None,
            }
        },
    )
    .await;
    let r = rest(c).app(&app).await.unwrap();
    assert_eq!(r.state, "KILLED", "{}", r.diagnostics);
    // Only the AM could have removed it (no --wait): on SIGTERM, before unregistering. Its
    // "staging folder removed" line may be cut off: the NM's SIGKILL comes 250 ms after
    // SIGTERM, and on a loaded machine it can land after the NameNode deleted the folder but
    // before the AM logged the reply (seen once in CI), so the log must show the SIGTERM.
    let am_stderr = std::fs::read_to_string(am::am_log_dir(c, &app).unwrap().join("stderr"))
        .unwrap_or_default();
    assert!(am_stderr.contains("SIGTERM"), "AM stderr: {am_stderr}");
}

#[tokio::test]
async fn submit_wait_removes_the_folder_when_no_am_ever_ran() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // The RM accepts the submission, then fails the app for its unknown queue: no AM runs.
    let out = submit_webhdfs(
        c,
        &[
            "--name",
            "it-webhdfs-no-am",
            "--max-attempts",
            "1",
            "--queue",
            "no-such-queue",
            "--wait",
            "--wait-timeout",
            "60",
        ],
    );
    let app = am::submitted_app(&out);
    let dir = staging_of(&out, &app);
    let r = rest(c).app(&app).await.unwrap();
    assert_eq!(r.state, "FAILED", "{}", text(&out));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        am::am_log_dir(c, &app).is_none(),
        "an AM container ran after all"
    );
    assert_gone(c, &dir).await;
}

#[tokio::test]
async fn a_refused_submission_removes_what_it_staged() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // A tag longer than the RM allows (100 characters): the RM refuses the submission
    // itself. (Container sizes are checked before staging, so they no longer reach it.)
    let long_tag = "t".repeat(101);
    let out = submit_webhdfs(c, &["--name", "it-webhdfs-refused", "--tag", &long_tag]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let app = stderr
        .split_whitespace()
        .find(|w| w.starts_with("application_"))
        .map(|w| w.trim_end_matches(|ch: char| !ch.is_ascii_alphanumeric()))
        .unwrap_or_else(|| panic!("no app id in the error: {}", text(&out)))
        .to_string();
    assert!(stderr.contains("submitting"), "{}", text(&out));
    assert_gone(c, &format!("{STAGING_ROOT}/{app}")).await;
}

/// `yarn-am submit` against an RM address that is never contacted: a bad staging place must
/// fail before the RM is asked for anything.
fn submit_without_cluster(webhdfs: &str, extra: &[&str]) -> (Output, Duration) {
    let start = Instant::now();
    let out = Command::new(am::exe())
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("YARN_CONF_DIR")
        .env_remove("YARN_AM_WEBHDFS")
        .env_remove("YARN_AM_STAGING_DIR")
        .args(["submit", "--rm-web", "127.0.0.1:9", "--webhdfs", webhdfs])
        .args(extra)
        .output()
        .unwrap();
    (out, start.elapsed())
}

#[test]
fn an_unreachable_webhdfs_address_fails_fast_and_names_it() {
    // Nothing listens on port 9 of 127.0.0.1: refused at once.
    let (out, took) = submit_without_cluster("http://127.0.0.1:9", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(stderr.contains("http://127.0.0.1:9"), "{}", text(&out));
    assert!(stderr.contains("WebHDFS"), "{}", text(&out));
    assert!(!stderr.contains("panicked"), "{}", text(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("submitted"));
}

#[test]
fn a_silent_webhdfs_server_times_out_with_a_message() {
    // Accepts connections and never answers, like a hung NameNode.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for c in listener.incoming().take(4).flatten() {
            conns.push(c);
        }
        std::thread::sleep(Duration::from_secs(30));
        drop(conns);
    });
    let url = format!("http://127.0.0.1:{port}");
    let (out, took) = submit_without_cluster(&url, &["--webhdfs-timeout", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(15),
        "took {took:?}: {}",
        text(&out)
    );
    assert!(stderr.contains(&url), "{}", text(&out));
    assert!(stderr.contains("timed out"), "{}", text(&out));
    assert!(!stderr.contains("panicked"), "{}", text(&out));
    drop(held);
}

#[test]
fn a_relative_hdfs_staging_root_is_refused() {
    // Refused before any request (nothing listens at the address anyway).
    let (out, _) = submit_without_cluster("http://127.0.0.1:9", &["--staging-dir", "rel/dir"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr.contains("absolute HDFS path"), "{}", text(&out));
}

#[tokio::test]
async fn an_am_that_fails_on_its_last_attempt_removes_the_folder() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // An executor that fails, with one failure allowed: the AM registers, then gives up.
    let out = submit_webhdfs(
        c,
        &[
            "--name",
            "it-webhdfs-am-error",
            "--max-attempts",
            "1",
            "--executors",
            "1",
            "--executor-command",
            "exit 3",
            "--max-executor-failures",
            "1",
        ],
    );
    assert!(out.status.success(), "submit failed: {}", text(&out));
    let app = am::submitted_app(&out);
    let dir = staging_of(&out, &app);
    // The AM unregisters FAILED on its last attempt.
    let r = am::wait_failed_via(&rest(c), &app, Duration::from_secs(90)).await;
    assert_gone(c, &dir).await;
    let am_stderr = std::fs::read_to_string(am::am_log_dir(c, &app).unwrap().join("stderr"))
        .unwrap_or_default();
    assert!(
        r.diagnostics.contains("executor failures (limit 1)")
            && am_stderr.contains("staging folder removed"),
        "AM stderr: {am_stderr}"
    );
}

/// The cached copy of `local` (whose file name is `name`): `<root>/.cache/<sha256>/<name>`.
fn cache_path(local: &std::path::Path, name: &str) -> String {
    addressed_path(local, ".cache", name)
}

/// `local`'s copy in the content-addressed `area` of the staging root:
/// `<root>/<area>/<sha256>/<name>`.
fn addressed_path(local: &std::path::Path, area: &str, name: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(Sha256::digest(std::fs::read(local).unwrap()));
    format!("{STAGING_ROOT}/{area}/{digest}/{name}")
}

/// An empty work folder `jobs/NAME` of the test cluster's and a nonce for file contents no
/// earlier run staged (so the content-addressed cache must take them as new).
fn fresh_work(c: &cluster::Cluster, name: &str) -> (std::path::PathBuf, String) {
    let nonce = format!(
        "{:?}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
    );
    let work = c.dir.join("jobs").join(name);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    (work, nonce)
}

/// What the executor of `app` wrote to `extra.out`, once it holds `want`.
async fn executor_output(c: &cluster::Cluster, app: &str, want: &str) -> String {
    wait_for(
        "the executor's extra.out",
        Duration::from_secs(60),
        || async {
            c.container_log_dirs(app)
                .iter()
                .filter_map(|d| std::fs::read_to_string(d.join("extra.out")).ok())
                .find(|s| s.contains(want))
        },
    )
    .await
}

#[tokio::test]
async fn a_second_submit_uploads_nothing_and_executors_get_aliases_and_unpacked_archives() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // Bytes no earlier run staged, so the first submit must send them.
    let (work, nonce) = fresh_work(c, "it-webhdfs-cache");
    std::fs::create_dir_all(work.join("bundle-src")).unwrap();
    let extra = work.join("extra.txt");
    std::fs::write(&extra, format!("file {nonce}\n")).unwrap();
    std::fs::write(
        work.join("bundle-src/inner.txt"),
        format!("archive {nonce}\n"),
    )
    .unwrap();
    let archive = work.join("bundle.tgz");
    let tar = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(work.join("bundle-src"))
        .arg("inner.txt")
        .output()
        .unwrap();
    assert!(tar.status.success(), "tar: {}", text(&tar));
    let file_arg = format!("{}#alias.txt", extra.display());
    let archive_arg = format!("{}#bundle", archive.display());
    let run = |name: &'static str| {
        submit_webhdfs(
            c,
            &[
                "--name",
                name,
                "--max-attempts",
                "1",
                "--executors",
                "1",
                "--file",
                &file_arg,
                "--archive",
                &archive_arg,
                "--executor-command",
                "cat alias.txt bundle/inner.txt > \"$YARN_AM_LOG_DIR/extra.out\"; sleep 600",
            ],
        )
    };
    let first = run("it-webhdfs-cache-1");
    assert!(first.status.success(), "submit failed: {}", text(&first));
    let app1 = am::submitted_app(&first);
    // The binary may be cached by an earlier test already; the two new files are not.
    let staged = text(&first);
    let line = staged
        .lines()
        .find(|l| l.starts_with("staged 3 file(s): "))
        .unwrap_or_else(|| panic!("no staging line: {staged}"));
    assert!(
        !line.contains(": 0 uploaded") && !line.contains(": 1 uploaded"),
        "{line}"
    );
    let out = executor_output(c, &app1, &format!("archive {nonce}")).await;
    assert_eq!(out, format!("file {nonce}\narchive {nonce}\n"));
    let cached = [
        cache_path(&extra, "extra.txt"),
        cache_path(&archive, "bundle.tgz"),
    ];
    let mut before = Vec::new();
    for p in &cached {
        before.push(hdfs(c).status(p).await.unwrap().modification_time);
    }
    assert!(yarn_am(c).args(["kill", &app1]).status().unwrap().success());

    let second = run("it-webhdfs-cache-2");
    assert!(second.status.success(), "submit failed: {}", text(&second));
    let app2 = am::submitted_app(&second);
    assert!(
        text(&second)
            .contains("staged 3 file(s): 0 uploaded (0.0 MiB), 3 already in the staging cache"),
        "{}",
        text(&second)
    );
    let dir = staging_of(&second, &app2);
    let binary_in_app_folder = hdfs(c).status(&format!("{dir}/yarn-am")).await;
    assert!(
        matches!(&binary_in_app_folder, Err(e) if e.is_not_found()),
        "{binary_in_app_folder:?}"
    );
    // A small spec travels in the AM's credentials: nothing of the app's own to localise.
    let spec_in_app_folder = hdfs(c).status(&format!("{dir}/yarn-am-spec.json")).await;
    assert!(
        matches!(&spec_in_app_folder, Err(e) if e.is_not_found()),
        "{spec_in_app_folder:?}"
    );
    let out = executor_output(c, &app2, &format!("archive {nonce}")).await;
    assert_eq!(out, format!("file {nonce}\narchive {nonce}\n"));
    for (p, t) in cached.iter().zip(before) {
        assert_eq!(
            hdfs(c).status(p).await.unwrap().modification_time,
            t,
            "{p} was written again"
        );
    }
    assert!(yarn_am(c).args(["kill", &app2]).status().unwrap().success());
}

#[test]
fn bad_file_and_archive_arguments_fail_before_anything_is_submitted() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let out = submit_webhdfs(c, &["--file", "/etc/hostname#yarn-am"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("its own binary"), "{}", text(&out));
    assert!(!text(&out).contains("submitted "), "{}", text(&out));
}

/// `--public`: two apps of one user name the same local file; it is staged once, readable
/// by all, under `<root>/.public/<sha256>/`, declared PUBLIC, and each executor finds it as
/// a link into its NodeManager's public cache (`<local-dir>/filecache/...`, not
/// `usercache/<user>/filecache/...`), which each node fills at most once.
#[tokio::test]
async fn public_files_are_localised_into_the_nodes_shared_cache_once() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let (work, nonce) = fresh_work(c, "it-webhdfs-public");
    let shared = work.join("shared.txt");
    std::fs::write(&shared, format!("public {nonce}\n")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let on_hdfs = addressed_path(&shared, ".public", "shared.txt");
    let url = format!("hdfs://rm:8020{on_hdfs}");
    let file_arg = format!("{}#alias.txt", shared.display());
    let run = |name: &'static str| {
        submit_webhdfs(
            c,
            &[
                "--name",
                name,
                "--max-attempts",
                "1",
                "--executors",
                "1",
                "--public",
                "--file",
                &file_arg,
                "--executor-command",
                "{ cat alias.txt; readlink -f alias.txt; } > \"$YARN_AM_LOG_DIR/extra.out\"; sleep 600",
            ],
        )
    };
    let mut apps = Vec::new();
    for name in ["it-webhdfs-public-1", "it-webhdfs-public-2"] {
        let out = run(name);
        assert!(out.status.success(), "submit failed: {}", text(&out));
        let app = am::submitted_app(&out);
        let got = executor_output(c, &app, &format!("public {nonce}")).await;
        let mut lines = got.lines();
        assert_eq!(
            lines.next(),
            Some(format!("public {nonce}").as_str()),
            "{got}"
        );
        let target = lines.next().unwrap_or_default();
        // The public cache: <nm-local-dir>/filecache/<n>/shared.txt, no user's folder.
        assert!(
            target.contains("/filecache/")
                && !target.contains("/usercache/")
                && target.ends_with("/shared.txt"),
            "{app}: alias.txt links to {target:?}, not into the public cache"
        );
        apps.push(app);
    }
    // Staged once, readable by all, and only the first submit sent it.
    let st = hdfs(c).status(&on_hdfs).await.unwrap();
    assert_eq!(st.permission, "644");
    let dir_mode = hdfs(c)
        .status(on_hdfs.trim_end_matches("/shared.txt"))
        .await
        .unwrap()
        .permission;
    assert_eq!(dir_mode, "755");
    // Each node downloads a PUBLIC resource through its public localizer, at most once
    // however many apps name it.
    let mut downloads = 0;
    for nm in ["nm1", "nm2", "nm3"] {
        let log = std::fs::read_to_string(c.path(format!("logs/{nm}.log"))).unwrap_or_default();
        let n = log
            .lines()
            .filter(|l| l.contains("Downloading public resource") && l.contains(&url))
            .count();
        assert!(n <= 1, "{nm} downloaded {url} {n} times");
        downloads += n;
    }
    assert!(downloads >= 1, "no NodeManager logged downloading {url}");
    for app in &apps {
        assert!(yarn_am(c).args(["kill", app]).status().unwrap().success());
    }
}
