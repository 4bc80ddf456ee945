//! `yarn-am executor`: the process the AM starts in each executor container when it runs a
//! job itself (the embedded driver).
//!
//! It polls the AM's driver API for tasks, runs each as `bash -c <command>` with stdout and
//! stderr in the container's log dir, and reports exit codes on the next poll. Polling over
//! the same authenticated HTTP API keeps the executor simple (no listening socket, nothing
//! to register) and lets it ride out a short AM hiccup: results that could not be reported
//! are kept and sent again, so none is lost. If the AM stays unreachable, the executor
//! exits, and YARN or the AM deals with the lost container.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::task::JoinSet;
use tracing::{info, warn};

use crate::api::model::{PollReply, PollRequest, TaskAssignment, TaskResult};

/// How long the executor keeps trying to reach an AM that does not answer.
const AM_LOST_AFTER: Duration = Duration::from_secs(60);
/// Pause between polls while nothing finished.
const IDLE_POLL: Duration = Duration::from_millis(300);

struct Config {
    url: String,
    secret: String,
    id: String,
    host: String,
    cpus: u32,
    log_dir: PathBuf,
}

fn var(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| {
        format!("{name} is not set: `yarn-am executor` runs in containers the AM starts")
    })
}

impl Config {
    fn from_env() -> anyhow::Result<Self> {
        Ok(Self {
            url: var("YARN_AM_DRIVER_URL")?,
            secret: var("YARN_AM_SECRET")?,
            id: var("YARN_AM_EXECUTOR_ID")?,
            host: var("NM_HOST")?,
            cpus: var("YARN_AM_EXECUTOR_CORES")?
                .parse()
                .context("YARN_AM_EXECUTOR_CORES is not a number")?,
            log_dir: var("LOG_DIRS")?
                .split(',')
                .next()
                .map(PathBuf::from)
                .context("LOG_DIRS is empty")?,
        })
    }
}

pub fn run() -> ExitCode {
    let result = tokio::runtime::Runtime::new()
        .context("starting the async runtime")
        .and_then(|rt| rt.block_on(run_executor()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("yarn-am executor: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn run_executor() -> anyhow::Result<()> {
    let cfg = Config::from_env()?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()?;
    info!(executor = %cfg.id, url = %cfg.url, cpus = cfg.cpus, "executor starting");
    let mut running: JoinSet<(TaskResult, u32)> = JoinSet::new();
    let mut busy_cpus = 0u32;
    let mut finished: Vec<TaskResult> = Vec::new();
    let mut last_contact = Instant::now();
    loop {
        while let Some(done) = running.try_join_next() {
            let (result, cpus) = done.context("a task runner panicked")?;
            busy_cpus -= cpus;
            finished.push(result);
        }
        let req = PollRequest {
            executor_id: cfg.id.clone(),
            host: cfg.host.clone(),
            free_cpus: cfg.cpus.saturating_sub(busy_cpus),
            finished: finished.clone(),
        };
        match poll(&http, &cfg, &req).await {
            Ok(reply) => {
                last_contact = Instant::now();
                finished.clear();
                if reply.shutdown {
                    info!("the AM says shut down");
                    running.shutdown().await;
                    return Ok(());
                }
                for t in reply.tasks {
                    busy_cpus += t.cpus;
                    let log_dir = cfg.log_dir.clone();
                    running.spawn(async move {
                        let cpus = t.cpus;
                        (run_task(t, &log_dir).await, cpus)
                    });
                }
            }
            Err(e) => {
                if last_contact.elapsed() > AM_LOST_AFTER {
                    anyhow::bail!("lost the AM at {}: {e:#}", cfg.url);
                }
                warn!("poll failed (results kept for the next one): {e:#}");
            }
        }
        // Wake early when a task finishes, so its result goes out at once.
        tokio::select! {
            Some(done) = running.join_next() => {
                let (result, cpus) = done.context("a task runner panicked")?;
                busy_cpus -= cpus;
                finished.push(result);
            }
            _ = tokio::time::sleep(IDLE_POLL) => {}
        }
    }
}

async fn poll(
    http: &reqwest::Client,
    cfg: &Config,
    req: &PollRequest,
) -> anyhow::Result<PollReply> {
    let resp = http
        .post(format!("{}/v1/executors/poll", cfg.url))
        .bearer_auth(&cfg.secret)
        .json(req)
        .send()
        .await
        .context("sending the poll")?;
    let status = resp.status();
    if !status.is_success() {
        let body = resp.text().await.unwrap_or_default();
        anyhow::bail!("the AM answered {status}: {body}");
    }
    resp.json().await.context("reading the AM's reply")
}

/// Runs one task; its output goes to `<log dir>/task-<id>.<attempt>.stdout|stderr`.
async fn run_task(t: TaskAssignment, log_dir: &std::path::Path) -> TaskResult {
    let start = Instant::now();
    let exit_code = match spawn(&t, log_dir).await {
        Ok(code) => code,
        Err(e) => {
            warn!(task = %t.task_id, "could not run the task: {e:#}");
            127
        }
    };
    info!(task = %t.task_id, attempt = t.attempt, exit_code, "task finished");
    TaskResult {
        task_id: t.task_id,
        attempt: t.attempt,
        exit_code,
        duration_ms: start.elapsed().as_millis() as u64,
    }
}

async fn spawn(t: &TaskAssignment, log_dir: &std::path::Path) -> anyhow::Result<i32> {
    use std::os::unix::process::ExitStatusExt;
    let name = format!("task-{}.{}", t.task_id, t.attempt);
    let stdout = std::fs::File::create(log_dir.join(format!("{name}.stdout")))?;
    let stderr = std::fs::File::create(log_dir.join(format!("{name}.stderr")))?;
    let status = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(&t.command)
        .env("YARN_AM_TASK_ID", &t.task_id)
        .env("YARN_AM_TASK_ATTEMPT", t.attempt.to_string())
        .stdout(stdout)
        .stderr(stderr)
        .kill_on_drop(true)
        .status()
        .await?;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
