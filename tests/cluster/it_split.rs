//! `yarn-am split cat` on the real cluster: the example job
//! (`conf/examples/hdfs-job.json`, a word count over `{split.cat}`) over text whose lines
//! straddle every split boundary and every block boundary, with `\r\n` lines and a last line
//! without a newline. Checked against the data itself: the words the tasks count add up to
//! `wc -w` of the files, each task's count is that of the lines starting in its split (the
//! sans-IO rule, `records_of`), reads went to a local DataNode, and no container log holds a
//! delegation token.
//!
//! Also: the same job file on the Kerberized profile (`secure_cluster_*`, run with it_secure's
//! profile by `make test`), and a DataNode killed mid-read (brought back after).

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use am::{job_report, submitted_app, text, write_job, yarn_am};
use yarn_am_core::inputs::records::{records_of, RecordFormat, DEFAULT_MAX_LINE};

const USER: &str = "yarn-am-it";
const DIR: &str = "/user/yarn-am-it/it-split";
/// 1 MiB blocks: 47 more than a multiple of the 61-byte lines, so no block starts a line.
const BLOCK: u64 = 1 << 20;
/// Splits of 300,000 bytes: 2 more than a multiple of 61, so no split starts a line.
const SPLIT: u64 = 300_000;

/// Lines of exactly 61 bytes (61 is prime, so neither the block nor the split size puts a
/// boundary on a line start below 61 splits), words of 1 to 12 letters, every 7th line
/// ending in `\r\n`; then a last line of words without a newline.
fn text_file(lines: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines * 61 + 32);
    let mut x = seed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..lines {
        let crlf = i % 7 == 3;
        let body = if crlf { 59 } else { 60 };
        let mut line = Vec::with_capacity(61);
        while line.len() < body {
            let w = 1 + (next() % 12) as usize;
            for _ in 0..w.min(body - line.len()) {
                line.push(b'a' + (next() % 26) as u8);
            }
            if line.len() < body {
                line.push(b' ');
            }
        }
        out.extend_from_slice(&line);
        out.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
    }
    out.extend_from_slice(b"the last line has no newline");
    out
}

/// `wc -w` of `data`, by the real `wc`.
fn wc_w(data: &[u8]) -> u64 {
    let path = std::env::temp_dir().join(format!("it-split-wc-{}", std::process::id()));
    std::fs::write(&path, data).unwrap();
    let out = Command::new("wc").arg("-w").arg(&path).output().unwrap();
    let _ = std::fs::remove_file(&path);
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn words(data: &[u8]) -> u64 {
    data.split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .count() as u64
}

/// Writes `data` to `path` on HDFS in blocks of `block` bytes (CREATE's `blocksize`), as
/// `USER`, simple auth.
async fn put(webhdfs: &str, path: &str, data: &[u8], block: u64) {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let url = format!(
        "{webhdfs}/webhdfs/v1{path}?op=CREATE&overwrite=true&blocksize={block}&noredirect=true&user.name={USER}"
    );
    let v: serde_json::Value = http.put(&url).send().await.unwrap().json().await.unwrap();
    let dn = v["Location"].as_str().unwrap_or_else(|| panic!("{v}"));
    let r = http.put(dn).body(data.to_vec()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201, "{path}");
}

/// The example job over `paths`, one executor per node (as it_hdfs_input: executors of
/// 2560 MB), with `split` and its size as given.
fn job(paths: &[String], split: Option<u64>) -> serde_json::Value {
    let mut job: serde_json::Value =
        serde_json::from_str(include_str!("../../conf/examples/hdfs-job.json")).unwrap();
    job["inputs"]["paths"] = serde_json::json!(paths);
    if let Some(size) = split {
        job["inputs"]["split"] = serde_json::json!("size");
        job["inputs"]["split_size_bytes"] = serde_json::json!(size);
    }
    job["executor"]["memory_mb"] = serde_json::json!(2560);
    job["executor"]["min_executors"] = serde_json::json!(3);
    job["executor"]["max_executors"] = serde_json::json!(3);
    job
}

/// `yarn-am submit --wait` of `job` as the test user, staged on HDFS.
fn submit_cmd(c: &cluster::Cluster, name: &str, job: &serde_json::Value) -> Command {
    let mut cmd = am::submit_wait_cmd(c, name, job, USER);
    cmd.args(["--webhdfs", &c.webhdfs]);
    cmd
}

fn submit_job(c: &cluster::Cluster, name: &str, job: &serde_json::Value) -> Output {
    submit_cmd(c, name, job).output().unwrap()
}

/// What the job's tasks said, checked: every task's word count is that of the lines
/// starting in its split, the counts add up to `wc -w` of every file, every read's summary
/// is there; returns (tasks, requests, of them to a local DataNode).
fn check_counts(
    c: &cluster::Cluster,
    app: &str,
    files: &BTreeMap<String, Vec<u8>>,
) -> (usize, u64, u64) {
    let report = job_report(c, app);
    let dirs = c.container_log_dirs(app);
    let (mut total, mut requests, mut local) = (0u64, 0u64, 0u64);
    for t in &report.tasks {
        assert_eq!(t.exit_code, 0, "{t:?}");
        let file = |ext: &str| -> PathBuf {
            dirs.iter()
                .map(|d| d.join(format!("task-{}.{}.{ext}", t.task_id, t.attempts - 1)))
                .find(|p| p.exists())
                .unwrap_or_else(|| panic!("no {ext} of {t:?}"))
        };
        let line = std::fs::read_to_string(file("stdout")).unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "{line:?}");
        let (path, offset, length, n): (&str, u64, u64, u64) = (
            f[0],
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        let data = &files[path];
        let want = records_of(
            data,
            RecordFormat::Text,
            offset,
            length,
            DEFAULT_MAX_LINE,
            1 << 16,
        )
        .unwrap();
        assert_eq!(n, words(&want), "{t:?}: {line}");
        total += n;
        let err = std::fs::read_to_string(file("stderr")).unwrap();
        let summary = err
            .lines()
            .find(|l| l.starts_with("yarn-am split cat: "))
            .unwrap_or_else(|| panic!("no summary in the stderr of {t:?}: {err}"));
        // "... N of M requests to a local DataNode, R retried"
        let nums: Vec<u64> = summary
            .split(|ch: char| !ch.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let k = nums.len();
        local += nums[k - 3];
        requests += nums[k - 2];
    }
    let want: u64 = files.values().map(|d| wc_w(d)).sum();
    assert_eq!(total, want, "the tasks' words against wc -w of the files");
    (report.tasks.len(), requests, local)
}

/// The test data: a 2.5 MB file of straddling lines and a tiny one, on HDFS and here.
async fn data(c: &cluster::Cluster) -> BTreeMap<String, Vec<u8>> {
    let big = text_file(43_000, 29);
    for (every, what) in [(SPLIT, "split"), (BLOCK, "block")] {
        for b in (1..)
            .map(|k| k * every)
            .take_while(|&b| b < big.len() as u64)
        {
            assert_ne!(
                big[b as usize - 1],
                b'\n',
                "{what} boundary {b} on a line start"
            );
        }
    }
    let small = b"x y\r\n z".to_vec();
    let mut files = BTreeMap::new();
    files.insert(format!("{DIR}/part-a.txt"), big);
    files.insert(format!("{DIR}/part-b.txt"), small);
    for (path, bytes) in &files {
        put(&c.webhdfs, path, bytes, BLOCK).await;
    }
    files
}

#[tokio::test]
async fn a_word_count_over_splits_cutting_every_line_equals_wc_w() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let files = data(c).await;
    let paths = [format!("{DIR}/part-*.txt")];

    // The example as it is: one split per block (3 + 1).
    let out = submit_job(c, "it-split-block", &job(&paths, None));
    let app = submitted_app(&out);
    assert!(out.status.success(), "{}", text(&out));
    let (tasks, requests, local) = check_counts(c, &app, &files);
    eprintln!("blocks: {tasks} tasks, {local} of {requests} reads from a local DataNode");
    assert_eq!(tasks, 4);
    // A task reads its own block, the byte before it and the rest of its last line (the
    // neighbouring blocks, elsewhere perhaps): at least half the tasks' own blocks local.
    assert!(local * 2 >= tasks as u64, "{local} of {requests} local");
    am::assert_no_delegation_token_in_logs(c, &app);

    // Splits of 300,000 bytes, each reading across block boundaries (9 + 1).
    let out = submit_job(c, "it-split-size", &job(&paths, Some(SPLIT)));
    let app = submitted_app(&out);
    assert!(out.status.success(), "{}", text(&out));
    let (tasks, requests, local) = check_counts(c, &app, &files);
    eprintln!("sized: {tasks} tasks, {local} of {requests} reads from a local DataNode");
    assert_eq!(tasks, 10);
    am::assert_no_delegation_token_in_logs(c, &app);
}

/// The same job file on the Kerberized profile: the tasks read with the HDFS delegation
/// token of their token file. Not yet run on the shared cluster (switching it to
/// `--secure` restarts it).
#[tokio::test]
async fn secure_cluster_the_same_job_file_counts_the_same_words() {
    let _turn = gate::shared();
    let c = cluster::start_profile(&["--secure"]);
    let kdc = c.dir.join("kdc");
    std::env::set_var("KRB5_CONFIG", kdc.join("krb5.conf"));
    // alice's data: uploaded with her ticket (simple auth is refused), default block size,
    // so the sized splits carry the test.
    let big = text_file(43_000, 29);
    let dir = "/user/alice/it-split";
    let mut files = BTreeMap::new();
    files.insert(format!("{dir}/part-a.txt"), big);
    files.insert(format!("{dir}/part-b.txt"), b"x y\r\n z".to_vec());
    let cache = format!("FILE:{}", kdc.join("alice.cc").display());
    for (path, bytes) in &files {
        let local = std::env::temp_dir().join(format!("it-split-{}", std::process::id()));
        std::fs::write(&local, bytes).unwrap();
        // curl's SPNEGO, as an operator would upload.
        let loc = Command::new("curl")
            .args(["-sf", "--negotiate", "-u", ":", "-X", "PUT"])
            .env("KRB5CCNAME", &cache)
            .arg(format!(
                "{}/webhdfs/v1{path}?op=CREATE&overwrite=true&noredirect=true",
                c.webhdfs
            ))
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&loc.stdout).unwrap();
        let put = Command::new("curl")
            .args(["-sf", "-X", "PUT", "-T"])
            .arg(&local)
            .arg(v["Location"].as_str().unwrap())
            .status()
            .unwrap();
        assert!(put.success());
    }
    let job = job(&[format!("{dir}/part-*.txt")], Some(SPLIT));
    let path = write_job(&c, "it-split-secure", &job);
    let out = yarn_am(&c)
        .env("KRB5CCNAME", &cache)
        .args(["submit", "--name", "it-split-secure", "--max-attempts", "1"])
        .args(["--webhdfs", &c.webhdfs, "--job", path.to_str().unwrap()])
        .args(["--wait", "--wait-timeout", "300"])
        .output()
        .unwrap();
    let app = submitted_app(&out);
    assert!(out.status.success(), "{}", text(&out));
    let (tasks, _, _) = check_counts(&c, &app, &files);
    assert_eq!(tasks, 10);
    am::assert_no_delegation_token_in_logs(&c, &app);
}

/// A DataNode killed while the tasks read: each task whose DataNode died goes on from the
/// next replica and the counts still equal `wc -w`. `cluster.sh up` brings it back.
#[tokio::test]
async fn a_datanode_killed_mid_read_does_not_fail_the_tasks() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let files = data(c).await;
    let mut job = job(&[format!("{DIR}/part-*.txt")], None);
    // The reader blocks on a full pipe while `wc` sleeps, holding its DataNode connection
    // open across the kill.
    job["inputs"]["command"] = serde_json::json!(
        "set -o pipefail; n=$({split.cat} | (sleep 8; wc -w)) && echo \"$YARN_AM_SPLIT_PATH $YARN_AM_SPLIT_OFFSET $YARN_AM_SPLIT_LENGTH $n\""
    );
    let child = submit_cmd(c, "it-split-dn-kill", &job)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Tasks start within ~15 s and sleep 8 s with their reads open: kill nm1's DataNode
    // (its JVM, seen in this machine's /proc on both backends) in that window.
    tokio::time::sleep(Duration::from_secs(15)).await;
    // The DataNode JVMs carry their runtime folder: `-Dit.dir=<cluster>/dn1`.
    let mark = format!("-Dit.dir={}\0", c.dir.join("dn1").display());
    let dn = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .find_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd);
            (cmd.contains("datanode.DataNode") && cmd.contains(&mark)).then_some(pid)
        })
        .expect("nm1's DataNode process");
    // SAFETY: kill(2) of the one pid found above.
    assert_eq!(
        unsafe { libc::kill(dn, libc::SIGKILL) },
        0,
        "killing the DataNode {dn}"
    );
    let out = child.wait_with_output().unwrap();
    // Back for whoever comes next (on docker a new dn1 container, its blocks re-replicated).
    assert!(cluster::cluster_sh("up"), "bringing dn1 back");
    let app = submitted_app(&out);
    assert!(out.status.success(), "{}", text(&out));
    let (tasks, _, _) = check_counts(c, &app, &files);
    assert_eq!(tasks, 4);
}
