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
//! The executor and the AM authenticate each other ([`yarn_am_wire::poll`]): each poll is
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
//!
//! # Layout
//! - [`config`]: the configuration from the container (environment, the key from the token
//!   file, hidden from the tasks);
//! - [`poll_client`]: one signed poll and the check of the AM's reply;
//! - [`event_loop`]: the loop (poll, act on the reply, ride out a silent AM);
//! - [`task_process`]: running a task's process in its own group.
//!
//! The wire types and the protocol, end to end: [`yarn_am_wire::poll`].

mod config;
mod event_loop;
mod poll_client;
mod task_process;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use config::{not_dumpable, Config};
use event_loop::run_executor;

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

#[cfg(test)]
mod tests;
