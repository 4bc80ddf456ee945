//! A task's process: `bash -c <command>` in its own process group, output in the container's
//! log dir, stopped with the group (see the module doc of [`super`], "Task processes").

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;
use tracing::{info, warn};

use super::STOP_GRACE;
use yarn_am_wire::poll::{TaskAssignment, TaskResult};

/// What a task runner hands back: its result, or nothing when it was stopped.
pub(super) type Ran = (Option<TaskResult>, u32);

/// A task runner ended: its cpus are free again, its result goes out with the next poll.
pub(super) fn collect(
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
pub(super) async fn stop_tasks(
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

/// Runs one task; its output goes to `<log dir>/task-<id>.<attempt>.stdout|stderr`.
/// `None` when the executor stopped it (its result is not reported).
pub(super) async fn run_task(
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
pub(super) fn output_name(task_id: &str, attempt: u32) -> String {
    format!("task-{task_id}.{attempt}")
}

/// A task's process group; killed (SIGKILL) when dropped, so no way out of a task runner
/// (finished, stopped, aborted) leaves processes behind.
pub(super) struct ProcessGroup(libc::pid_t);

impl ProcessGroup {
    /// The group led by `pid` (a child started with `process_group(0)`). `None` for ids
    /// that would name a group other than the task's (0 is our own, 1 is init's).
    pub(super) fn of(pid: Option<u32>) -> Option<Self> {
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
pub(super) async fn spawn(
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
    let mut cmd = tokio::process::Command::new("bash");
    // `{split.cat}` runs this binary (`yarn-am split cat`), wherever the task has cd'd to.
    if let Ok(exe) = std::env::current_exe() {
        cmd.env(yarn_am_core::inputs::split::BIN_ENV, exe);
    }
    let mut child = cmd
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
