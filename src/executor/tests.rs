//! The executor against the AM's real driver API (router, auth, JSON) on a loopback socket;
//! a small loop stands in for the AM's poll handling, answering each poll from a script.
//! Task commands are real bash processes.

use std::sync::{Arc, Mutex};

use super::config::take_key;
use super::task_process::{output_name, ProcessGroup};
use super::*;
use crate::cluster::next_am::{next_am, NextAm};
use crate::http::{self, Call, DriverCommand, Reply};
use std::path::{Path, PathBuf};
use std::time::Instant;
use yarn_am_wire::driver_secret::new_secret;
use yarn_am_wire::poll::{self, PollReply, PollRequest, TaskAssignment, TaskAttempt, TaskResult};
use yarn_am_wire::tls::{AppCert, Fingerprint};
use yarn_client::credentials::{Credentials, Format};

type Script = Box<dyn FnMut(&PollRequest) -> PollReply + Send>;

struct FakeAm {
    url: String,
    secret: String,
    /// The fingerprint of the certificate it serves.
    pin: Fingerprint,
    polls: Arc<Mutex<Vec<PollRequest>>>,
}

async fn am(mut script: Script) -> FakeAm {
    let secret = new_secret();
    let (shared, mut handle) = http::channel(&secret, Default::default());
    let polls = Arc::new(Mutex::new(Vec::new()));
    let seen = polls.clone();
    tokio::spawn(async move {
        while let Some(Call { command, reply }) = handle.commands.recv().await {
            if let (DriverCommand::ExecutorPoll { request, .. }, Some(reply)) = (command, reply) {
                let answer = script(&request);
                seen.lock().unwrap().push(request);
                let _ = reply.send(Reply::Poll(answer));
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let cert = AppCert::generate().unwrap();
    let tls = cert.server_config().unwrap();
    tokio::spawn(http::serve(
        listener,
        None,
        shared,
        tls,
        std::future::pending(),
    ));
    FakeAm {
        url,
        secret,
        pin: cert.fingerprint(),
        polls,
    }
}

fn log_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("yarn-am-exec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const CONTAINER: &str = "container_1_0001_01_000002";

/// An executor "1" whose key derives from the AM's master `secret`, pinning `pin`.
fn config(url: &str, secret: &str, pin: Fingerprint, log_dir: &Path) -> Config {
    Config {
        url: url.to_string(),
        key: poll::executor_key(secret.as_bytes(), "1", CONTAINER),
        tls_pin: pin,
        id: "1".into(),
        container_id: CONTAINER.into(),
        host: "localhost".into(),
        cpus: 2,
        log_dir: log_dir.to_path_buf(),
        am_lost_after: Duration::from_secs(1),
        am_gone_after: Duration::from_secs(1),
        staging_dir: None,
        am_restart_wait: Duration::from_secs(1),
        request_timeout: Duration::from_secs(2),
        idle_poll: Duration::from_millis(20),
    }
}

fn task(id: &str, command: &str) -> TaskAssignment {
    TaskAssignment {
        task_id: id.into(),
        attempt: 0,
        command: command.into(),
        cpus: 1,
    }
}

fn shutdown() -> PollReply {
    PollReply {
        shutdown: true,
        ..Default::default()
    }
}

/// Whether `pid` is still a running process (a zombie awaiting its reaper counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// Reads a pid a task wrote, waiting for the file to appear.
async fn read_pid(path: &Path) -> i32 {
    for _ in 0..200 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no pid in {}", path.display());
}

/// A task whose bash forks a grandchild (`sleep`) and records the grandchild's pid.
fn forking_task(pid_file: &Path) -> String {
    format!("sleep 300 & echo $! > {}; wait", pid_file.display())
}

async fn never() {
    std::future::pending::<()>().await
}

#[tokio::test]
async fn a_key_the_am_did_not_derive_ends_the_executor_at_once_naming_the_401() {
    let am = am(Box::new(|_| PollReply::default())).await;
    let dir = log_dir("secret");
    let mut cfg = config(&am.url, "not-the-secret", am.pin, &dir);
    cfg.am_lost_after = Duration::from_secs(60);
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(10), run_executor(cfg, never()))
        .await
        .expect("no retrying for a minute on a 401")
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(started.elapsed() < Duration::from_secs(5), "{msg}");
    assert!(msg.contains("401") && msg.contains("MAC"), "{msg}");
    assert!(msg.contains(&am.url), "{msg}");
    assert!(am.polls.lock().unwrap().is_empty());
}

/// A server that answers every poll with `reply` (status 200, JSON) and the given extra
/// header, standing in for whatever took over the AM's port, over TLS with `cert`. Returns
/// its URL.
async fn impostor(
    reply: PollReply,
    header: Option<(&'static str, String)>,
    cert: &AppCert,
) -> String {
    use axum::response::IntoResponse;
    let app = axum::Router::new().route(
        "/v1/executors/poll",
        axum::routing::post(move || {
            let reply = reply.clone();
            let header = header.clone();
            async move {
                let mut resp = axum::Json(reply).into_response();
                if let Some((k, v)) = header {
                    resp.headers_mut().insert(k, v.parse().unwrap());
                }
                resp
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(http::serve_router_tls(
        listener,
        app,
        cert.server_config().unwrap(),
    ));
    url
}

#[tokio::test]
async fn a_fake_am_reply_is_refused_and_nothing_in_it_runs() {
    let dir = log_dir("impostor");
    let marker = dir.join("ran");
    let reply = PollReply {
        tasks: vec![task("evil", &format!("touch {}", marker.display()))],
        ..Default::default()
    };
    // Unsigned, and signed with a MAC that is not the AM's (a guess, or another key's).
    let wrong = hex::encode([0u8; 32]);
    for (header, says) in [
        (None, "not signed"),
        (Some((poll::REPLY_MAC_HEADER, wrong)), "does not verify"),
    ] {
        // Even one that holds the certificate's key (so TLS alone would let it in) cannot
        // sign a reply without the executor's key.
        let cert = AppCert::generate().unwrap();
        let url = impostor(reply.clone(), header, &cert).await;
        let mut cfg = config(&url, &new_secret(), cert.fingerprint(), &dir);
        cfg.am_lost_after = Duration::from_secs(60);
        let err = tokio::time::timeout(Duration::from_secs(10), run_executor(cfg, never()))
            .await
            .expect("an executor answered by a fake AM exits at once")
            .unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("refusing the reply") && msg.contains(says),
            "{msg}"
        );
        assert!(
            msg.contains(&url) && msg.contains("Nothing in it was run"),
            "{msg}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!marker.exists(), "the fake AM's task ran");
        assert!(!dir.join("task-evil.0.stdout").exists());
    }
}

/// A server with another certificate than the AM's (whatever took over its port)
/// ends the executor at once in the TLS handshake, before a poll is sent, naming both
/// fingerprints.
#[tokio::test]
async fn a_server_with_another_certificate_ends_the_executor_at_once() {
    let dir = log_dir("wrong-cert");
    let marker = dir.join("ran");
    let reply = PollReply {
        tasks: vec![task("evil", &format!("touch {}", marker.display()))],
        ..Default::default()
    };
    let theirs = AppCert::generate().unwrap();
    let ours = AppCert::generate().unwrap().fingerprint();
    let url = impostor(reply, None, &theirs).await;
    let mut cfg = config(&url, &new_secret(), ours, &dir);
    cfg.am_lost_after = Duration::from_secs(60);
    let err = tokio::time::timeout(Duration::from_secs(10), run_executor(cfg, never()))
        .await
        .expect("an executor answered with another certificate exits at once")
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("refusing the AM") && msg.contains(&url),
        "{msg}"
    );
    assert!(
        msg.contains(&ours.to_string()) && msg.contains(&theirs.fingerprint().to_string()),
        "{msg}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!marker.exists(), "the impostor's task ran");
}

#[tokio::test]
async fn an_executor_whose_am_is_gone_exits_within_5_s() {
    // The real API (signed replies) until it stops, as when the AM exits.
    let secret = new_secret();
    let (shared, mut handle) = http::channel(&secret, Default::default());
    let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = polls.clone();
    tokio::spawn(async move {
        while let Some(Call { command, reply }) = handle.commands.recv().await {
            if let (DriverCommand::ExecutorPoll { .. }, Some(reply)) = (command, reply) {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = reply.send(Reply::Poll(PollReply::default()));
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let cert = AppCert::generate().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(
        listener,
        None,
        shared,
        cert.server_config().unwrap(),
        async {
            let _ = stopped.await;
        },
    ));
    let dir = log_dir("gone");
    let mut cfg = config(&url, &secret, cert.fingerprint(), &dir);
    // The production settings: silence would take 2 minutes, refusal must not.
    cfg.am_lost_after = AM_LOST_AFTER;
    cfg.am_gone_after = AM_GONE_AFTER;
    cfg.idle_poll = IDLE_POLL;
    let run = tokio::spawn(run_executor(cfg, never()));
    while polls.load(std::sync::atomic::Ordering::SeqCst) < 3 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let gone = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the executor exits")
        .unwrap()
        .unwrap_err();
    let took = gone.elapsed();
    let msg = format!("{err:#}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {msg}");
    assert!(msg.contains("is gone") && msg.contains(&url), "{msg}");
}

#[tokio::test]
async fn a_silent_am_ends_the_executor_after_the_limit_naming_the_url() {
    // Accepts connections and never answers: a live but stuck AM gets the long limit.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = listener.accept().await {
            held.push(conn);
        }
    });
    let dir = log_dir("silent");
    let mut cfg = config(&url, "s", Fingerprint([0; 32]), &dir);
    cfg.request_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(10), run_executor(cfg, never()))
        .await
        .expect("the executor gives up")
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(started.elapsed() >= Duration::from_secs(1), "{msg}");
    assert!(
        msg.contains("no answer from the AM at") && msg.contains(&url),
        "{msg}"
    );
}

#[test]
fn the_key_is_taken_from_the_token_file_and_removed_from_it_for_the_tasks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = log_dir("tokens");
    let path = dir.join("container_tokens");
    let hdfs = yarn_client::token::Token {
        identifier: vec![1],
        password: vec![2],
        kind: "HDFS_DELEGATION_TOKEN".into(),
        service: "nn:8020".into(),
    };
    let key = [9u8; 32];
    // An RM token in the file (an older AM put it there): tasks must not get it (audit L2).
    let rm = yarn_client::token::Token {
        kind: yarn_am_wire::credentials::RM_TOKEN_KIND.into(),
        service: String::new(),
        ..hdfs.clone()
    };
    let creds = Credentials {
        tokens: vec![
            ("hdfs".into(), hdfs.clone()),
            (yarn_am_wire::credentials::RM_TOKEN_ALIAS.into(), rm),
        ],
        secrets: vec![
            (
                yarn_am_wire::credentials::EXECUTOR_KEY_ALIAS.into(),
                key.to_vec(),
            ),
            ("user.secret".into(), b"theirs".to_vec()),
            (yarn_am_wire::tls::PIN_ALIAS.into(), vec![5; 32]),
            (yarn_am_wire::kv::KV_KEY_ALIAS.into(), vec![7; 32]),
        ],
    };
    std::fs::write(&path, creds.encode(Format::Writable)).unwrap();
    let crc = dir.join(".container_tokens.crc");
    std::fs::write(&crc, b"crc of the old file").unwrap();
    assert_eq!(take_key(&path).unwrap(), (key, Fingerprint([5; 32])));
    assert!(!crc.exists(), "a stale checksum of the old file is left");
    let left = Credentials::read_file(&path).unwrap();
    assert_eq!(left.tokens, vec![("hdfs".to_string(), hdfs)]);
    // The container's key-value key stays: the tasks use it (`yarn-am kv`).
    assert_eq!(
        left.secrets,
        vec![
            ("user.secret".to_string(), b"theirs".to_vec()),
            (yarn_am_wire::kv::KV_KEY_ALIAS.to_string(), vec![7; 32])
        ]
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary file left"
    );
    // Read again (the key is gone now): a clear error, not a panic.
    let err = format!("{:#}", take_key(&path).unwrap_err());
    assert!(
        err.contains(yarn_am_wire::credentials::EXECUTOR_KEY_ALIAS),
        "{err}"
    );
}

#[tokio::test]
async fn a_missing_command_is_reported_as_127_with_bash_message_in_the_task_stderr() {
    let (mut n, mut results) = (0, 0);
    let am = am(Box::new(move |req| {
        n += 1;
        results += req.finished.len();
        match n {
            1 => PollReply {
                tasks: vec![task("t/1", "no-such-command-xyz"), task("ok", "echo hi")],
                ..Default::default()
            },
            _ if results == 2 => shutdown(),
            _ => PollReply::default(),
        }
    }))
    .await;
    let dir = log_dir("missing");
    let cfg = config(&am.url, &am.secret, am.pin, &dir);
    run_until_done(cfg).await;
    let polls = am.polls.lock().unwrap();
    let done: Vec<&TaskResult> = polls.iter().flat_map(|p| &p.finished).collect();
    assert_eq!(done.len(), 2, "{done:?}");
    let code = |id: &str| done.iter().find(|r| r.task_id == id).unwrap().exit_code;
    // A task id with a slash cannot name a file in the log dir: the attempt fails (127)
    // rather than writing outside it.
    assert_eq!(code("t/1"), 127);
    assert_eq!(code("ok"), 0);
    assert_eq!(
        std::fs::read_to_string(dir.join("task-ok.0.stdout")).unwrap(),
        "hi\n"
    );
}

#[tokio::test]
async fn a_command_that_does_not_exist_exits_127_and_says_so_in_its_stderr_file() {
    let mut n = 0;
    let am = am(Box::new(move |req| {
        n += 1;
        match n {
            1 => PollReply {
                tasks: vec![task("t1", "no-such-command-xyz")],
                ..Default::default()
            },
            _ if !req.finished.is_empty() => shutdown(),
            _ => PollReply::default(),
        }
    }))
    .await;
    let dir = log_dir("notfound");
    let cfg = config(&am.url, &am.secret, am.pin, &dir);
    run_until_done(cfg).await;
    let polls = am.polls.lock().unwrap();
    let r = &polls.last().unwrap().finished[0];
    assert_eq!((r.task_id.as_str(), r.attempt, r.exit_code), ("t1", 0, 127));
    let stderr = std::fs::read_to_string(dir.join("task-t1.0.stderr")).unwrap();
    assert!(
        stderr.contains("no-such-command-xyz") && stderr.contains("not found"),
        "{stderr}"
    );
}

#[tokio::test]
async fn shutdown_from_the_am_kills_the_tasks_whole_process_group() {
    let dir = log_dir("shutdown");
    let pid_file = dir.join("grandchild.pid");
    let command = forking_task(&pid_file);
    // The AM says shut down once the test has seen the task's grandchild running.
    let seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen_by_am = seen.clone();
    let mut n = 0;
    let am = am(Box::new(move |_| {
        n += 1;
        if n == 1 {
            PollReply {
                tasks: vec![task("long", &command)],
                ..Default::default()
            }
        } else if seen_by_am.load(std::sync::atomic::Ordering::SeqCst) {
            shutdown()
        } else {
            PollReply::default()
        }
    }))
    .await;
    let cfg = config(&am.url, &am.secret, am.pin, &dir);
    let run = tokio::spawn(run_executor(cfg, never()));
    let grandchild = read_pid(&pid_file).await;
    assert!(alive(grandchild));
    seen.store(true, std::sync::atomic::Ordering::SeqCst);
    exits_and_kills(run, Duration::from_secs(10), Exit::Done, grandchild).await;
    // A stopped task's result is not reported as a failure.
    assert!(am
        .polls
        .lock()
        .unwrap()
        .iter()
        .all(|p| p.finished.is_empty()));
}

#[tokio::test]
async fn sigterm_kills_running_tasks_and_exits_as_terminated() {
    let dir = log_dir("sigterm");
    let pid_file = dir.join("grandchild.pid");
    let command = forking_task(&pid_file);
    let mut n = 0;
    let am = am(Box::new(move |_| {
        n += 1;
        PollReply {
            tasks: if n == 1 {
                vec![task("long", &command)]
            } else {
                Vec::new()
            },
            ..Default::default()
        }
    }))
    .await;
    let cfg = config(&am.url, &am.secret, am.pin, &dir);
    let (term, termed) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(run_executor(cfg, async move {
        let _ = termed.await;
    }));
    let grandchild = read_pid(&pid_file).await;
    assert!(alive(grandchild));
    term.send(()).unwrap();
    exits_and_kills(run, Duration::from_secs(5), Exit::Terminated, grandchild).await;
}

#[tokio::test]
async fn leftover_background_processes_of_a_finished_task_are_killed() {
    let dir = log_dir("leftover");
    let pid_file = dir.join("bg.pid");
    let command = format!("sleep 300 & echo $! > {}", pid_file.display());
    let mut n = 0;
    let am = am(Box::new(move |req| {
        n += 1;
        match n {
            1 => PollReply {
                tasks: vec![task("bg", &command)],
                ..Default::default()
            },
            _ if !req.finished.is_empty() => shutdown(),
            _ => PollReply::default(),
        }
    }))
    .await;
    let cfg = config(&am.url, &am.secret, am.pin, &dir);
    run_until_done(cfg).await;
    let bg = read_pid(&pid_file).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !alive(bg),
        "background process {bg} of a finished task still runs"
    );
    assert_eq!(
        am.polls.lock().unwrap().last().unwrap().finished[0].exit_code,
        0
    );
}

#[tokio::test]
async fn an_assignment_sent_twice_runs_once() {
    let dir = log_dir("twice");
    let count = dir.join("count");
    let command = format!("echo x >> {}", count.display());
    let (mut n, mut results) = (0, 0);
    let am = am(Box::new(move |req| {
        n += 1;
        results += req.finished.len();
        match n {
            1 | 2 => PollReply {
                tasks: vec![task("once", &command)],
                ..Default::default()
            },
            _ if results > 0 => shutdown(),
            _ => PollReply::default(),
        }
    }))
    .await;
    let cfg = config(&am.url, &am.secret, am.pin, &dir);
    run_until_done(cfg).await;
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "x\n");
}

#[test]
fn output_files_are_named_by_task_and_attempt() {
    assert_eq!(output_name("t07", 0), "task-t07.0");
    assert_eq!(output_name("a.1", 2), "task-a.1.2");
}

#[test]
fn process_group_refuses_ids_that_would_signal_someone_else() {
    assert!(ProcessGroup::of(None).is_none());
    assert!(ProcessGroup::of(Some(0)).is_none());
    assert!(ProcessGroup::of(Some(1)).is_none());
    assert!(ProcessGroup::of(Some(u32::MAX)).is_none());
}

/// Waits (at most `limit`) for the executor to end with `expected`, then checks that the
/// task's grandchild did not outlive it.
async fn exits_and_kills(
    run: tokio::task::JoinHandle<anyhow::Result<Exit>>,
    limit: Duration,
    expected: Exit,
    grandchild: i32,
) {
    let exit = tokio::time::timeout(limit, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(exit, expected);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !alive(grandchild),
        "task process {grandchild} outlived the executor ({expected:?})"
    );
}

/// Runs the executor until the AM tells it to stop (at most 10 s) and checks it ended so.
async fn run_until_done(cfg: Config) {
    let exit = tokio::time::timeout(Duration::from_secs(10), run_executor(cfg, never()))
        .await
        .expect("the executor ends within 10 s")
        .unwrap();
    assert_eq!(exit, Exit::Done);
}

#[tokio::test]
async fn polls_name_the_attempts_it_runs_until_their_results_are_delivered() {
    let dir = log_dir("running");
    let (mut n, mut results) = (0, 0);
    let am = am(Box::new(move |req| {
        n += 1;
        results += req.finished.len();
        match n {
            1 => PollReply {
                tasks: vec![task("slow", "sleep 1")],
                ..Default::default()
            },
            // One more poll after the result went out, then stop.
            _ if results > 0 && req.finished.is_empty() => shutdown(),
            _ => PollReply::default(),
        }
    }))
    .await;
    let mut cfg = config(&am.url, &am.secret, am.pin, &dir);
    cfg.idle_poll = Duration::from_millis(100);
    run_until_done(cfg).await;
    let polls = am.polls.lock().unwrap();
    let slow = yarn_am_wire::poll::TaskAttempt {
        task_id: "slow".into(),
        attempt: 0,
    };
    let reported = polls
        .iter()
        .position(|p| p.finished.iter().any(|r| r.task_id == "slow"))
        .expect("the result was reported");
    assert!(
        polls[1..reported]
            .iter()
            .any(|p| p.running == [slow.clone()]),
        "no poll named the running attempt: {polls:?}"
    );
    assert!(polls[0].running.is_empty(), "{polls:?}");
    assert!(
        polls[reported + 1..].iter().all(|p| p.running.is_empty()),
        "still named after its result was delivered: {polls:?}"
    );
}

#[test]
fn a_new_am_attempt_is_found_in_the_staging_folder_and_a_removed_folder_ends_the_app() {
    let dir = log_dir("next-am");
    let old = "https://nm1:4000";
    assert_eq!(
        next_am(&dir, old),
        NextAm::Unchanged,
        "nothing published yet"
    );
    std::fs::write(dir.join("driver.url"), format!("{old}\n")).unwrap();
    assert_eq!(
        next_am(&dir, old),
        NextAm::Unchanged,
        "still the dead attempt's"
    );
    std::fs::write(dir.join("driver.url"), "https://nm2:5000\n").unwrap();
    assert_eq!(next_am(&dir, old), NextAm::Moved("https://nm2:5000".into()));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(next_am(&dir, old), NextAm::AppOver);
}

/// The AM says kill one attempt (timed out): that task's whole group ends (its forked
/// grandchild too), its exit is reported, and the other task runs on untouched.
#[tokio::test]
async fn a_kill_ends_one_attempts_group_and_reports_its_exit() {
    let dir = log_dir("kill-one");
    let pid_file = dir.join("grandchild.pid");
    let hang = forking_task(&pid_file);
    let seen_pid = pid_file.clone();
    let (mut sent, mut killed) = (false, false);
    let am = am(Box::new(move |req: &PollRequest| {
        if !sent {
            sent = true;
            return PollReply {
                tasks: vec![task("hang", &hang), task("other", "sleep 1; exit 3")],
                ..Default::default()
            };
        }
        // Once the hung task runs (its grandchild is up), kill it, once.
        if !killed && seen_pid.exists() {
            killed = true;
            return PollReply {
                kill: vec![TaskAttempt {
                    task_id: "hang".into(),
                    attempt: 0,
                }],
                ..Default::default()
            };
        }
        if req.finished.iter().any(|r| r.task_id == "other") {
            shutdown()
        } else {
            PollReply::default()
        }
    }))
    .await;
    let grandchild = {
        let cfg = config(&am.url, &am.secret, am.pin, &dir);
        let run = tokio::spawn(run_executor(cfg, never()));
        let pid = read_pid(&pid_file).await;
        let exit = tokio::time::timeout(Duration::from_secs(20), run)
            .await
            .expect("the executor ends once both tasks reported")
            .unwrap()
            .unwrap();
        assert_eq!(exit, Exit::Done);
        pid
    };
    assert!(!alive(grandchild), "the killed task's group outlived it");
    let polls = am.polls.lock().unwrap();
    let results: Vec<(String, i32)> = polls
        .iter()
        .flat_map(|p| p.finished.iter())
        .map(|r| (r.task_id.clone(), r.exit_code))
        .collect();
    // bash ends on the SIGTERM: 128 + 15; the other task's own exit stands.
    assert!(results.contains(&("hang".to_string(), 143)), "{results:?}");
    assert!(results.contains(&("other".to_string(), 3)), "{results:?}");
}

/// An attempt assigned again after its result was delivered (the AM attempt that got it
/// died before recording it) is not run again: its result is reported again.
#[tokio::test]
async fn an_attempt_assigned_again_after_its_result_went_out_is_reported_again() {
    let dir = log_dir("report-again");
    let marker = dir.join("runs");
    let command = format!("echo x >> {}", marker.display());
    let mut step = 0;
    let am = am(Box::new(move |req: &PollRequest| {
        let reported = req.finished.iter().any(|r| r.task_id == "a");
        step += 1;
        match step {
            1 => PollReply {
                tasks: vec![task("a", &command)],
                ..Default::default()
            },
            // The result arrives; "the next AM attempt" hands the attempt out again.
            _ if reported && step < 50 => PollReply {
                tasks: vec![task("a", &command)],
                ..Default::default()
            },
            _ => PollReply::default(),
        }
    }))
    .await;
    let cfg = config(&am.url, &am.secret, am.pin, &dir);
    let run = tokio::spawn(run_executor(cfg, never()));
    wait_until(|| {
        am.polls
            .lock()
            .unwrap()
            .iter()
            .filter(|p| p.finished.iter().any(|r| r.task_id == "a"))
            .count()
            >= 2
    })
    .await;
    run.abort();
    let polls = am.polls.lock().unwrap();
    let reports: Vec<i32> = polls
        .iter()
        .flat_map(|p| p.finished.iter())
        .filter(|r| r.task_id == "a")
        .map(|r| r.exit_code)
        .collect();
    assert!(
        reports.len() >= 2 && reports.iter().all(|c| *c == 0),
        "{reports:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "x\n",
        "ran twice"
    );
}

async fn wait_until(mut ok: impl FnMut() -> bool) {
    for _ in 0..400 {
        if ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("condition not met in 10 s");
}
