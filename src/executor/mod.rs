//! `yarn-am executor`: the process the AM starts in each executor container when it runs a
//! job itself (the embedded driver).
//!
//! It polls the AM's driver API for tasks, runs each as `bash -c <command>` with stdout and
//! stderr in the container's log dir, and reports exit codes on the next poll. Polling over
//! the same authenticated HTTP API keeps the executor simple (no listening socket, nothing
//! to register) and lets it ride out a short AM hiccup: results that could not be reported
//! are kept and sent again, so none is lost. If the AM stays silent for [`AM_LOST_AFTER`]
//! (timeouts, 5xx), the executor exits non-zero naming the URL and the last error; if nobody
//! listens on the AM's port any more (connection refused for [`AM_GONE_AFTER`]: the AM
//! exited) it exits within seconds; a reply that can never get better (401, 400, 404) ends it
//! at once.
//!
//! # Trust
//! The executor and the AM authenticate each other ([`crate::protocol::poll`]): each poll is
//! signed with this executor's own key, and every reply must carry the AM's MAC over the
//! poll's nonce and the reply, checked before anything in it is run. A reply without a valid
//! MAC (another process on a dead AM's port, a tampered reply) ends the executor at once,
//! naming why, with nothing run.
//!
//! The key comes from the container's token file (`HADOOP_TOKEN_FILE_LOCATION`), where the
//! NodeManager put the credentials the AM launched us with; nothing secret is in the
//! environment or on the command line. Tasks must not get the key: they run in the same
//! working directory as the same user, so the executor rewrites that token file without any
//! yarn-am secret before it runs a task (keeping other tokens, e.g. HDFS delegation tokens,
//! for the tasks), and makes itself non-dumpable so that tasks cannot read its memory through
//! `/proc` or ptrace. (Rewriting the file in place, rather than giving tasks a second file,
//! also leaves no copy of the key on disk where a task could read it.)
//!
//! # Task processes
//! Each task runs in its own process group, so that the executor can end the task *and
//! everything it started* (a `bash -c 'a | b'` forks; killing only bash leaves the rest
//! running with no one to reap them). The group is killed (SIGKILL) when the task's bash
//! exits (leftover background processes), and whenever the executor stops:
//! - the AM says shut down: SIGTERM to every group, [`STOP_GRACE`] to exit, then SIGKILL;
//! - the NodeManager stops the container (SIGTERM to the executor's group, which no longer
//!   holds the tasks; SIGKILL 250 ms later by default): SIGTERM to every group,
//!   [`TERM_GRACE`], then SIGKILL, and exit 143;
//! - the AM cannot be reached, or anything else ends the executor: SIGKILL;
//! - the AM says kill one attempt (past its `timeout_ms`): SIGTERM to that task's group,
//!   [`STOP_GRACE`], then SIGKILL; its exit is reported like any other (the AM, which
//!   already counted the attempt failed, ignores it).
//!
//! A SIGKILL of the executor itself (the OOM killer) cannot be handled; its tasks then
//! outlive it until the NodeManager or the node cleans up.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;
use tracing::{info, warn};

use crate::protocol::poll::{self, RequestAuth};
use yarn_client::credentials::{Credentials, Format, TOKEN_FILE_ENV};
use yarn_client::webhdfs::WebHdfs;

use crate::protocol::poll::{PollReply, PollRequest, TaskAssignment, TaskAttempt, TaskResult};

/// How long the executor keeps trying to reach an AM that does not answer. Longer than one
/// blocking RM call of the AM's loop (20 s connect + 60 s call), during which polls wait.
const AM_LOST_AFTER: Duration = Duration::from_secs(120);
/// How long the AM's port may refuse connections before the executor takes the AM for gone.
/// A live AM never refuses (its listener lives as long as it does), so this only has to ride
/// out nothing; it is kept short so that executors of a dead AM go within 5 s (the AM's last
/// reply plus one idle poll plus this plus stopping tasks).
const AM_GONE_AFTER: Duration = Duration::from_secs(2);
/// How long an executor whose AM's port refuses waits for a next AM attempt to publish its
/// address in the staging folder (an AM restart: YARN starts the attempt, it registers and
/// publishes within seconds; the RM's AM liveness checks take longer only for a hung AM).
const AM_RESTART_WAIT: Duration = Duration::from_secs(60);
/// Pause between polls while nothing finished.
const IDLE_POLL: Duration = Duration::from_millis(300);
/// One poll's HTTP deadline.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// SIGTERM to SIGKILL for tasks when the AM tells the executor to shut down.
const STOP_GRACE: Duration = Duration::from_secs(3);
/// SIGTERM to SIGKILL for tasks when the executor is SIGTERMed: under the NodeManager's
/// default `sleep-delay-before-sigkill.ms` (250 ms), after which the NM kills the executor.
const TERM_GRACE: Duration = Duration::from_millis(100);

struct Config {
    url: String,
    /// This executor's own key (see [`crate::protocol::poll`]).
    key: [u8; 32],
    id: String,
    container_id: String,
    host: String,
    cpus: u32,
    log_dir: PathBuf,
    am_lost_after: Duration,
    am_gone_after: Duration,
    /// The staging folder where a next AM attempt publishes its URL (`YARN_AM_STAGING_DIR`,
    /// on HDFS with `YARN_AM_STAGING_WEBHDFS`; set by AM attempts that are not the last).
    staging_dir: Option<StagingFolder>,
    am_restart_wait: Duration,
    request_timeout: Duration,
    idle_poll: Duration,
}

fn var(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| {
        format!("{name} is not set: `yarn-am executor` runs in containers the AM starts")
    })
}

impl Config {
    fn from_env() -> anyhow::Result<Self> {
        let cores = var("YARN_AM_EXECUTOR_CORES")?;
        let token_file = PathBuf::from(var(TOKEN_FILE_ENV)?);
        Ok(Self {
            url: var("YARN_AM_DRIVER_URL")?,
            key: take_key(&token_file)?,
            id: var("YARN_AM_EXECUTOR_ID")?,
            container_id: var("YARN_AM_CONTAINER_ID")?,
            host: var("NM_HOST")?,
            cpus: cores
                .parse()
                .with_context(|| format!("YARN_AM_EXECUTOR_CORES is not a number: {cores:?}"))?,
            log_dir: var("LOG_DIRS")?
                .split(',')
                .next()
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .context("LOG_DIRS is empty")?,
            am_lost_after: AM_LOST_AFTER,
            am_gone_after: AM_GONE_AFTER,
            staging_dir: StagingFolder::from_env()?,
            am_restart_wait: AM_RESTART_WAIT,
            request_timeout: REQUEST_TIMEOUT,
            idle_poll: IDLE_POLL,
        })
    }
}

/// Reads this executor's key from the container's token file, then rewrites the file without
/// any yarn-am secret (atomically, mode 0600), so the tasks, which inherit
/// `HADOOP_TOKEN_FILE_LOCATION` and the working directory, find their other tokens there but
/// not the key. Fails closed: an executor that cannot hide its key from its tasks does not run.
fn take_key(token_file: &Path) -> anyhow::Result<[u8; 32]> {
    let creds =
        Credentials::read_file(token_file).context("reading this container's token file")?;
    let key = creds
        .secret(poll::EXECUTOR_KEY_ALIAS)
        .with_context(|| {
            format!(
                "{} has no secret {:?}: was this executor started by its AM?",
                token_file.display(),
                poll::EXECUTOR_KEY_ALIAS
            )
        })?
        .try_into()
        .with_context(|| format!("the secret {:?} is not 32 bytes", poll::EXECUTOR_KEY_ALIAS))?;
    write_task_tokens(token_file, &for_tasks(&creds))?;
    Ok(key)
}

/// The credentials tasks may have: all but yarn-am's secrets.
fn for_tasks(creds: &Credentials) -> Credentials {
    let mut c = creds.clone();
    c.secrets
        .retain(|(alias, _)| !alias.starts_with(poll::ALIAS_PREFIX));
    c
}

/// Replaces `path` with `creds` (written beside it, mode 0600, then renamed over it).
fn write_task_tokens(path: &Path, creds: &Credentials) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("yarn-am-tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&creds.encode(Format::Writable))?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // The NodeManager writes the file through Hadoop's checksummed local file system,
        // which leaves `.<name>.crc` beside it; a Java task reading the new file through that
        // file system would fail on the old checksum, and reads it unchecked without one.
        if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
            let crc = dir.join(format!(".{}.crc", name.to_string_lossy()));
            match std::fs::remove_file(crc) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    };
    write().with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!(
            "rewriting {} without this executor's key (tasks must not read it)",
            path.display()
        )
    })
}

/// Makes this process non-dumpable: processes of the same user (our tasks) can then neither
/// ptrace it nor read its memory or environment through `/proc`. Tasks get the default back
/// (exec resets it). Best effort: a kernel that refuses leaves the README's caveat.
fn not_dumpable() {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's dumpable flag.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        warn!(
            "could not make the executor non-dumpable: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// How the executor ended, when it ended by itself.
#[derive(Debug, PartialEq, Eq)]
enum Exit {
    /// The AM said shut down.
    Done,
    /// SIGTERM (the NodeManager stopping the container).
    Terminated,
}

pub fn run() -> ExitCode {
    let result = tokio::runtime::Runtime::new()
        .context("starting the async runtime")
        .and_then(|rt| {
            rt.block_on(async {
                not_dumpable();
                let cfg = Config::from_env()?;
                let mut term =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                        .context("installing the SIGTERM handler")?;
                run_executor(cfg, async move {
                    term.recv().await;
                })
                .await
            })
        });
    match result {
        Ok(Exit::Done) => ExitCode::SUCCESS,
        Ok(Exit::Terminated) => ExitCode::from(143),
        Err(e) => {
            eprintln!("yarn-am executor: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// What a task runner hands back: its result, or nothing when it was stopped.
type Ran = (Option<TaskResult>, u32);

async fn run_executor(
    mut cfg: Config,
    terminate: impl Future<Output = ()>,
) -> anyhow::Result<Exit> {
    let http = reqwest::Client::builder()
        .timeout(cfg.request_timeout)
        .build()?;
    info!(executor = %cfg.id, url = %cfg.url, cpus = cfg.cpus, "executor starting");
    tokio::pin!(terminate);
    // Tells running tasks to stop, with the grace they get between SIGTERM and SIGKILL.
    let (stop, stopping) = watch::channel(None::<Duration>);
    let mut running: JoinSet<Ran> = JoinSet::new();
    let mut busy_cpus = 0u32;
    let mut finished: Vec<TaskResult> = Vec::new();
    // Attempts started here: an assignment sent twice runs once.
    let mut started: HashSet<TaskAttempt> = HashSet::new();
    // Results the AM received. One assigned again was received by an AM attempt that died
    // before it recorded it: the next attempt still thinks it runs here and sends it again,
    // so it is reported again instead of run again (or never reported: a job that never
    // ends).
    let mut delivered: HashMap<TaskAttempt, TaskResult> = HashMap::new();
    // Attempts started whose result the AM has not received yet: each poll names them, so
    // the AM can tell an assignment that never arrived from one that runs.
    let mut active: HashSet<TaskAttempt> = HashSet::new();
    // How to kill each running attempt on its own (the AM's `kill`).
    let mut killers: HashMap<TaskAttempt, oneshot::Sender<()>> = HashMap::new();
    let mut last_contact = Instant::now();
    // Since when the AM's port has refused every poll, if it does.
    let mut refused_since: Option<Instant> = None;
    let mut seq = 0u64;
    loop {
        while let Some(done) = running.try_join_next() {
            collect(done, &mut busy_cpus, &mut finished)?;
        }
        for r in &finished {
            killers.remove(&r.task_attempt());
        }
        let req = PollRequest {
            executor_id: cfg.id.clone(),
            host: cfg.host.clone(),
            free_cpus: cfg.cpus.saturating_sub(busy_cpus),
            finished: finished.clone(),
            running: active.iter().cloned().collect(),
        };
        seq += 1;
        let reply = tokio::select! {
            _ = &mut terminate => {
                warn!("SIGTERM: stopping {} running task(s)", running.len());
                stop_tasks(&mut running, &stop, TERM_GRACE).await;
                return Ok(Exit::Terminated);
            }
            r = poll(&http, &cfg, seq, &req) => r,
        };
        if !matches!(reply, Err(PollError::Gone(_))) {
            refused_since = None;
        }
        match reply {
            Ok(reply) => {
                last_contact = Instant::now();
                for r in finished.drain(..) {
                    let key = r.task_attempt();
                    active.remove(&key);
                    delivered.insert(key, r);
                }
                if reply.shutdown {
                    info!(
                        reason = reply.reason.as_deref().unwrap_or("work done"),
                        tasks = running.len(),
                        "the AM says shut down"
                    );
                    stop_tasks(&mut running, &stop, STOP_GRACE).await;
                    return Ok(Exit::Done);
                }
                for k in reply.kill {
                    match killers.remove(&k) {
                        Some(kill) => {
                            warn!(task = %k.task_id, attempt = k.attempt, "the AM says kill this attempt (timed out)");
                            let _ = kill.send(());
                        }
                        None => {
                            info!(task = %k.task_id, attempt = k.attempt, "asked to kill an attempt not running here")
                        }
                    }
                }
                for t in reply.tasks {
                    let key = t.task_attempt();
                    if !started.insert(key.clone()) {
                        match delivered.get(&key) {
                            Some(r) if !finished.iter().any(|f| f.task_attempt() == key) => {
                                warn!(task = %t.task_id, attempt = t.attempt, "assigned again; it already ran here: reporting its result again");
                                finished.push(r.clone());
                            }
                            _ => {
                                warn!(task = %t.task_id, attempt = t.attempt, "assigned again; already started here")
                            }
                        }
                        continue;
                    }
                    active.insert(key.clone());
                    busy_cpus += t.cpus;
                    let log_dir = cfg.log_dir.clone();
                    let stopping = stopping.clone();
                    let (kill, killed) = oneshot::channel();
                    killers.insert(key, kill);
                    running.spawn(async move {
                        let cpus = t.cpus;
                        (run_task(t, &log_dir, stopping, killed).await, cpus)
                    });
                }
            }
            Err(PollError::Refused(why)) => {
                stop_tasks(&mut running, &stop, TERM_GRACE).await;
                anyhow::bail!("the AM at {} refused this executor: {why}", cfg.url);
            }
            Err(PollError::Forged(why)) => {
                stop_tasks(&mut running, &stop, TERM_GRACE).await;
                anyhow::bail!(
                    "refusing the reply from {}: {why}; something else may answer on the AM's \
                     port. Nothing in it was run",
                    cfg.url
                );
            }
            Err(PollError::Gone(e)) => {
                let since = *refused_since.get_or_insert_with(Instant::now);
                // An AM attempt that died may have a successor: it publishes its address in
                // the staging folder, which goes when the application ends.
                let (limit, next) = match &cfg.staging_dir {
                    None => (cfg.am_gone_after, NextAm::Unchanged),
                    Some(dir) => (cfg.am_restart_wait, dir.next_am(&cfg.url).await),
                };
                match next {
                    NextAm::Moved(url) => {
                        info!(old = %cfg.url, new = %url, "the AM moved (a new attempt); polling it");
                        cfg.url = url;
                        refused_since = None;
                        continue;
                    }
                    NextAm::AppOver => {
                        stop_tasks(&mut running, &stop, TERM_GRACE).await;
                        anyhow::bail!(
                            "the AM at {} is gone and the application is over (its staging \
                             folder is gone): {e:#}",
                            cfg.url
                        );
                    }
                    NextAm::Unchanged => {}
                }
                if since.elapsed() >= limit {
                    stop_tasks(&mut running, &stop, TERM_GRACE).await;
                    anyhow::bail!(
                        "the AM at {} is gone (connection refused for {} ms): {e:#}",
                        cfg.url,
                        since.elapsed().as_millis()
                    );
                }
                warn!("the AM's port refuses connections (results kept for the next poll): {e:#}");
            }
            Err(PollError::Unreachable(e)) => {
                if last_contact.elapsed() > cfg.am_lost_after {
                    stop_tasks(&mut running, &stop, TERM_GRACE).await;
                    anyhow::bail!(
                        "no answer from the AM at {} for {} s; last error: {e:#}",
                        cfg.url,
                        last_contact.elapsed().as_secs()
                    );
                }
                warn!("poll failed (results kept for the next one): {e:#}");
            }
        }
        // Wake early when a task finishes, so its result goes out at once.
        tokio::select! {
            _ = &mut terminate => {
                warn!("SIGTERM: stopping {} running task(s)", running.len());
                stop_tasks(&mut running, &stop, TERM_GRACE).await;
                return Ok(Exit::Terminated);
            }
            Some(done) = running.join_next() => collect(done, &mut busy_cpus, &mut finished)?,
            _ = tokio::time::sleep(cfg.idle_poll) => {}
        }
    }
}

/// Where to poll after the AM's port refused.
#[derive(Debug, PartialEq, Eq)]
enum NextAm {
    /// A newer AM attempt published this address.
    Moved(String),
    /// Nothing new (yet): keep trying the same address for a while.
    Unchanged,
    /// The staging folder is gone: the application ended; no attempt will follow.
    AppOver,
}

/// The application's staging folder, as an executor reaches it.
enum StagingFolder {
    Local(PathBuf),
    /// On HDFS, through WebHDFS with the container's HDFS delegation token (`user.name`
    /// without security).
    Webhdfs {
        client: WebHdfs,
        dir: String,
    },
}

/// Any one WebHDFS call while looking for a next AM attempt.
const WEBHDFS_TIMEOUT: Duration = Duration::from_secs(5);

impl StagingFolder {
    fn from_env() -> anyhow::Result<Option<Self>> {
        let Some(dir) = std::env::var_os("YARN_AM_STAGING_DIR") else {
            return Ok(None);
        };
        let Ok(url) = std::env::var("YARN_AM_STAGING_WEBHDFS") else {
            return Ok(Some(StagingFolder::Local(PathBuf::from(dir))));
        };
        let user = var("YARN_AM_STAGING_USER")?;
        let client = WebHdfs::new(&url, &user, WEBHDFS_TIMEOUT)
            .with_context(|| format!("YARN_AM_STAGING_WEBHDFS {url:?}"))?;
        // Read after `take_key` rewrote the token file: it keeps the HDFS tokens.
        let client = match crate::submit::tokens::AmAuth::from_container().webhdfs {
            Some(auth) => client.with_auth(auth),
            None => client,
        };
        Ok(Some(StagingFolder::Webhdfs {
            client,
            dir: dir.to_string_lossy().trim_end_matches('/').to_string(),
        }))
    }

    async fn next_am(&self, current: &str) -> NextAm {
        match self {
            StagingFolder::Local(dir) => next_am(dir, current),
            StagingFolder::Webhdfs { client, dir } => {
                match client.status(dir).await {
                    Err(e) if e.is_not_found() => return NextAm::AppOver,
                    Err(e) => {
                        warn!("could not look at the staging folder {dir} on HDFS: {e}");
                        return NextAm::Unchanged;
                    }
                    Ok(_) => {}
                }
                match client.read_to_string(&format!("{dir}/driver.url")).await {
                    Ok(text) => moved(&text, current),
                    Err(_) => NextAm::Unchanged,
                }
            }
        }
    }
}

/// What a `driver.url` reading says, against the URL polled now.
fn moved(text: &str, current: &str) -> NextAm {
    let url = text.trim();
    if url.starts_with("http") && url != current {
        NextAm::Moved(url.to_string())
    } else {
        NextAm::Unchanged
    }
}

/// Reads the driver URL a next AM attempt publishes in `staging_dir` (see the AM's
/// `journal::publish_url`). The staging folder rather than the RM: an executor holds no RM
/// credentials (the AMRM token is the AM's alone, and RM REST needs SPNEGO on a secure
/// cluster), the folder is already readable to every container of the app, and its removal
/// at the app's end tells the executor at once that no attempt will follow.
fn next_am(staging_dir: &Path, current: &str) -> NextAm {
    if !staging_dir.is_dir() {
        return NextAm::AppOver;
    }
    match std::fs::read_to_string(staging_dir.join("driver.url")) {
        Ok(text) => moved(&text, current),
        Err(_) => NextAm::Unchanged,
    }
}

/// A task runner ended: its cpus are free again, its result goes out with the next poll.
fn collect(
    done: Result<Ran, tokio::task::JoinError>,
    busy: &mut u32,
    finished: &mut Vec<TaskResult>,
) -> anyhow::Result<()> {
    let (result, cpus) = done.context("a task runner panicked")?;
    *busy = busy.saturating_sub(cpus);
    finished.extend(result);
    Ok(())
}

/// Stops every running task: SIGTERM to its process group, `grace` to end, then SIGKILL.
async fn stop_tasks(
    running: &mut JoinSet<Ran>,
    stop: &watch::Sender<Option<Duration>>,
    grace: Duration,
) {
    if running.is_empty() {
        return;
    }
    stop.send_replace(Some(grace));
    let all_done = async { while running.join_next().await.is_some() {} };
    if tokio::time::timeout(grace + Duration::from_secs(1), all_done)
        .await
        .is_err()
    {
        warn!("task runners did not stop in time; aborting them (their groups get SIGKILL)");
    }
    running.shutdown().await;
}

enum PollError {
    /// The AM answered and will not take this poll however often it is sent.
    Refused(String),
    /// A reply that does not carry this application's AM's signature.
    Forged(poll::ReplyError),
    /// Nobody listens on the AM's port (connection refused).
    Gone(anyhow::Error),
    /// No answer, or one that may change (5xx, a broken reply).
    Unreachable(anyhow::Error),
}

/// Whether the connection was refused: nobody listens on the AM's port any more.
fn connection_refused(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = s.source();
    }
    false
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// One poll: signed as this executor, and its reply checked for the AM's signature before
/// anything in it is read.
async fn poll(
    http: &reqwest::Client,
    cfg: &Config,
    seq: u64,
    req: &PollRequest,
) -> Result<PollReply, PollError> {
    let body = serde_json::to_vec(req)
        .context("encoding the poll")
        .map_err(PollError::Unreachable)?;
    let auth = RequestAuth::sign(
        &cfg.key,
        &cfg.id,
        &cfg.container_id,
        seq,
        now_ms(),
        rand::random(),
        &poll::Request {
            method: "POST",
            path: poll::POLL_PATH,
            body: &body,
        },
    );
    let resp = http
        .post(format!("{}{}", cfg.url, poll::POLL_PATH))
        .header(poll::AUTH_HEADER, auth.header_value())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| {
            if connection_refused(&e) {
                PollError::Gone(anyhow::Error::new(e).context("sending the poll"))
            } else {
                PollError::Unreachable(anyhow::Error::new(e).context("sending the poll"))
            }
        })?;
    let status = resp.status();
    let mac = resp
        .headers()
        .get(poll::REPLY_MAC_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = resp
        .bytes()
        .await
        .context("reading the AM's reply")
        .map_err(PollError::Unreachable)?;
    let signed = poll::check_reply(&cfg.key, &auth, status.as_u16(), &bytes, mac.as_deref());
    if status.is_success() {
        signed.map_err(PollError::Forged)?;
        return serde_json::from_slice(&bytes)
            .context("reading the AM's reply")
            .map_err(PollError::Unreachable);
    }
    // An error reply is only text shown to people; a wrong signature on it still means
    // someone else answers.
    if let (Some(_), Err(e)) = (&mac, &signed) {
        return Err(PollError::Forged(e.clone()));
    }
    let body = String::from_utf8_lossy(&bytes);
    let body = body.trim();
    Err(match status.as_u16() {
        401 => PollError::Refused(format!(
            "{status}: {body} (this executor's key or clock is not one the AM accepts)"
        )),
        404 => PollError::Refused(format!(
            "{status}: {body} (is YARN_AM_DRIVER_URL this application's driver API?)"
        )),
        400..=499 => PollError::Refused(format!("{status}: {body}")),
        _ => PollError::Unreachable(anyhow::anyhow!("the AM answered {status}: {body}")),
    })
}

/// Runs one task; its output goes to `<log dir>/task-<id>.<attempt>.stdout|stderr`.
/// `None` when the executor stopped it (its result is not reported).
async fn run_task(
    t: TaskAssignment,
    log_dir: &Path,
    stopping: watch::Receiver<Option<Duration>>,
    killed: oneshot::Receiver<()>,
) -> Option<TaskResult> {
    let start = Instant::now();
    let exit_code = match spawn(&t, log_dir, stopping, killed).await {
        Ok(Some(code)) => code,
        Ok(None) => {
            info!(task = %t.task_id, attempt = t.attempt, "task stopped");
            return None;
        }
        Err(e) => {
            // 127 as bash gives for a command it cannot run; the why is in our own stderr.
            warn!(task = %t.task_id, attempt = t.attempt, "could not run the task: {e:#}");
            127
        }
    };
    info!(task = %t.task_id, attempt = t.attempt, exit_code, "task finished");
    Some(TaskResult {
        task_id: t.task_id,
        attempt: t.attempt,
        exit_code,
        duration_ms: start.elapsed().as_millis() as u64,
    })
}

/// The base name of a task attempt's output files.
fn output_name(task_id: &str, attempt: u32) -> String {
    format!("task-{task_id}.{attempt}")
}

/// A task's process group; killed (SIGKILL) when dropped, so no way out of a task runner
/// (finished, stopped, aborted) leaves processes behind.
struct ProcessGroup(libc::pid_t);

impl ProcessGroup {
    /// The group led by `pid` (a child started with `process_group(0)`). `None` for ids
    /// that would name a group other than the task's (0 is our own, 1 is init's).
    fn of(pid: Option<u32>) -> Option<Self> {
        let pid = libc::pid_t::try_from(pid?).ok()?;
        // `then`, not `then_some`: a `Self` built and dropped would SIGKILL group `pid`.
        (pid > 1).then(|| Self(pid))
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: killpg only sends a signal; `self.0 > 1` is a process group we created.
        unsafe {
            libc::killpg(self.0, sig);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

/// The task's exit code, or `None` when it was stopped (the executor is ending). A kill of
/// this attempt alone (`killed`) ends its group too, and gives the exit code it caused.
async fn spawn(
    t: &TaskAssignment,
    log_dir: &Path,
    mut stopping: watch::Receiver<Option<Duration>>,
    mut killed: oneshot::Receiver<()>,
) -> anyhow::Result<Option<i32>> {
    use std::os::unix::process::ExitStatusExt;
    let name = output_name(&t.task_id, t.attempt);
    let create = |ext: &str| {
        let path = log_dir.join(format!("{name}.{ext}"));
        std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))
    };
    let (stdout, stderr) = (create("stdout")?, create("stderr")?);
    let mut child = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(&t.command)
        .env("YARN_AM_TASK_ID", &t.task_id)
        .env("YARN_AM_TASK_ATTEMPT", t.attempt.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .context("starting bash")?;
    let mut group = ProcessGroup::of(child.id());
    let status = tokio::select! {
        status = child.wait() => status.context("waiting for the task")?,
        grace = async { stopping.wait_for(Option::is_some).await.ok().and_then(|g| *g) } => {
            let grace = grace.unwrap_or_default();
            if let Some(g) = &group {
                g.signal(libc::SIGTERM);
            }
            let _ = tokio::time::timeout(grace, child.wait()).await;
            // `group` drops here: SIGKILL for whatever is left.
            return Ok(None);
        }
        // A dropped sender (the executor is ending) is no kill: that is `stopping`'s.
        Ok(()) = &mut killed => {
            if let Some(g) = &group {
                g.signal(libc::SIGTERM);
            }
            let ended = tokio::time::timeout(STOP_GRACE, child.wait()).await;
            // SIGKILL for whatever is left.
            drop(group.take());
            match ended {
                Ok(status) => status.context("waiting for the killed task")?,
                Err(_) => child.wait().await.context("waiting for the killed task")?,
            }
        }
    };
    drop(group);
    Ok(Some(
        status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
    ))
}

#[cfg(test)]
mod tests;
