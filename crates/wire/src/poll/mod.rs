//! The executor <-> AM poll protocol, end to end: the one place that states it whole.
//!
//! Only the embedded job's executors (`yarn-am executor`) poll; an external driver's
//! executors run its own command. This module holds the JSON bodies (below) and, in
//! [`auth`], the MAC scheme; the other parts live with the process that plays them:
//!
//! | part | where |
//! |---|---|
//! | wire types, constants | here; MAC scheme in [`auth`] (re-exported here) |
//! | the endpoint (`POST /v1/executors/poll`) | `src/http/poll.rs` |
//! | the answers | `crates/core/src/am/am_core.rs` (AM-level refusals), `crates/core/src/am/job_run.rs` (`JobRun::poll`) |
//! | lost replies | `crates/core/src/am/deliveries.rs` |
//! | the client | `src/executor/`: `poll_client.rs` (one signed poll), `event_loop.rs` (retries, lost AMs) |
//! | next-attempt discovery | `src/am/journal_store.rs` (`publish_url`), `src/cluster/next_am.rs` |
//!
//! # Start
//! The AM launches an executor with its id, its container's id, the app's id, the driver
//! API's URL, its cores and, on AM attempts that are not the last, the staging folder in its
//! environment ([`ExecutorEnv`](crate::executor_env::ExecutorEnv), which owns the
//! variables' names, `YARN_AM_EXECUTOR_ID` and the others). Its key is in the launch
//! credentials under
//! [`EXECUTOR_KEY_ALIAS`](crate::credentials::EXECUTOR_KEY_ALIAS). The executor
//! reads the key from its token file, rewrites that file without any `yarn-am.` credential
//! (for its tasks) and makes itself non-dumpable.
//!
//! # Keys
//! `executor_key = HMAC-SHA256(master secret, executor id + container id)` ([`executor_key`]).
//! The AM derives keys on demand and stores none: a MAC that verifies proves the (executor,
//! container) pair is one this application's AM launched. The container id is in the key so
//! that ids a later attempt reuses get new keys. The driver's Bearer secret does not open the
//! poll endpoint, and executor keys open nothing else. Details and threat model: [`auth`].
//!
//! # Request
//! `POST /v1/executors/poll` with a [`PollRequest`]:
//!
//! ```json
//! {"executor_id": "7", "host": "nm2", "free_cpus": 1,
//!  "finished": [{"task_id": "t12", "attempt": 0, "exit_code": 0, "duration_ms": 1012}],
//!  "running":  [{"task_id": "t19", "attempt": 1}]}
//! ```
//!
//! `finished`: results not yet acknowledged; `running`: attempts the executor has received
//! and not yet reported. The first poll is the registration. Header [`AUTH_HEADER`]:
//! `v2 executor=7 container=container_..._000002 seq=N time=MS nonce=HEX32 body=HEX64
//! mac=HEX64`, `body` the hex SHA-256 of the body and the MAC under the executor key over the
//! newline-joined parts `yarn-am poll request v2`, executor id, container id, seq, time,
//! nonce, method, path and that digest ([`RequestAuth::sign`]). Ids are restricted to
//! `[A-Za-z0-9_.-]`, so none can mimic a separator. The body must declare its length
//! (`content-length`), at most [`POLL_BODY_LIMIT`].
//!
//! The AM checks the header before it reads a byte of the body
//! ([`Verifier::verify_header`]): the MAC under the key it derives (constant-time), the clock
//! within [`MAX_SKEW_MS`] of its own, and the sequence number strictly above the last one it
//! accepted for that (executor, container). A poll that fails is a 401 and its connection is
//! closed with the body unread, so whoever can reach the port but holds no key makes the AM
//! buffer nothing but headers. Then it reads the body (within 5 s, and a cap on the poll
//! bytes buffered at once over all connections: a 503 past it), checks it against the signed
//! digest and records the sequence number ([`Verifier::accept_body`]; recorded only for a poll
//! that verified whole, so a forger cannot block an executor). Then the body's `executor_id`
//! must equal the signed one. Failures are 401 with `{"error": ...}`; a body too large is a
//! 413, one that does not arrive in time a 408.
//!
//! # Reply
//! A [`PollReply`]: `{"tasks": [{"task_id", "attempt", "command", "cpus"}], "shutdown": bool,
//! "reason"?: "...", "kill"?: [{"task_id", "attempt"}]}`, with header [`REPLY_MAC_HEADER`] =
//! HMAC under the same key over `yarn-am poll reply v1`, the request's nonce, the HTTP status
//! and the hex SHA-256 of the exact body bytes. Every reply to an authenticated poll is
//! signed, whatever its status. The executor checks it ([`check_reply`]) before reading the
//! body: an unsigned or wrongly signed reply ends the executor at once with nothing run, so a
//! process that took over a dead AM's port cannot make it run anything or learn a key (polls
//! carry no secret).
//!
//! # What the AM answers
//! It records that it heard from the executor (silence detection); no embedded job, or the
//! AM stopping for another reason -> `shutdown` with a reason; an executor that is not a live
//! executor of this attempt -> `shutdown` ("not a live executor of this ApplicationMaster";
//! its results are not taken). Otherwise (`JobRun::poll`): a first poll registers the
//! executor with the driver (`ExecutorAdded`, or `ExecutorAdopted` with the attempts it names
//! when it ran under an earlier attempt); `finished` results become `TaskFinished` events;
//! `shutdown` is set when the job is over or the driver is releasing the executor (idle);
//! `tasks` are first the assignments lost on the way, then new ones from the driver's outbox;
//! `kill` lists attempts past their `timeout_ms`. Executors told to stop are remembered, so an
//! ending AM waits (at most 3 s) until every live executor has heard it.
//!
//! # Lost replies
//! A reply can be lost after the AM sent it (the executor's 15 s HTTP deadline, a broken
//! connection). `Deliveries` remembers what was sent to each executor; an attempt sent
//! earlier that a later poll names neither in `running` nor in `finished` never arrived and
//! is sent again (before new tasks, and not recorded twice). The executor runs each
//! [`TaskAttempt`] at most once: a duplicate assignment is skipped or, if it already finished and
//! was acknowledged, its result is reported again (an attempt that a dead AM received but had
//! not journaled).
//!
//! # Retries on the executor
//! Results that could not be delivered are kept and sent with the next poll. Connection
//! refused (nobody listens: the AM exited) for 2 s (`AM_GONE_AFTER`) ends the executor, unless
//! a next attempt appears (below); other failures (timeouts, 5xx) are retried until 120 s
//! without any answer (`AM_LOST_AFTER`); a 408 is retried too; other 4xx (400, 401, 404,
//! 413) end it at once. Idle polls are
//! 300 ms apart; a finishing task wakes the loop early. Every exit stops the tasks' process
//! groups first.
//!
//! # Finding the next AM attempt
//! With `--max-attempts` > 1 YARN keeps executors when an AM attempt dies. The new attempt
//! replays the journal, continues executor ids past every id used, adopts the containers YARN
//! hands back under their journaled ids, and writes its URL to `driver.url` in the staging
//! folder atomically (`publish_url` in `src/am/journal_store.rs`). An executor whose AM port
//! refuses reads `driver.url` (through WebHDFS with its container's HDFS token when staged on
//! HDFS) for up to 60 s (`AM_RESTART_WAIT`): a new URL -> it polls there with the same key
//! and its running attempts; the folder gone -> the application is over and it exits. The
//! new AM accepts it because the key derives from the same master secret and its container
//! id; its sequence numbers simply continue (above the old AM's last, which the new one never
//! saw).

pub mod auth;

use serde::{Deserialize, Serialize};

pub use auth::{
    check_reply, executor_key, AuthError, ReplyError, RequestAuth, SignedRequest, Verified,
    Verifier, AUTH_HEADER, MAX_SKEW_MS, POLL_PATH, REPLY_MAC_HEADER,
};

/// Largest poll body the AM reads. A poll lists the executor's unacknowledged results and
/// running attempts, which its cpus bound (task ids are at most 200 bytes): a few KiB.
pub const POLL_BODY_LIMIT: usize = 1 << 20;

/// One attempt of one task: the driver's type is the wire's (see its doc).
pub use crate::ids::TaskAttempt;

#[cfg(doc)]
use crate::ids::ExecutorId;

/// An executor's heartbeat to the AM: what finished since the last one, and room for more.
/// The first poll of an executor is its registration. `executor_id` is the executor's claim
/// as it sent it: the AM reads it as an [`ExecutorId`] and answers one that is not (or that
/// names no live executor) with a refusal telling it to stop, not a 400.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PollRequest {
    pub executor_id: String,
    pub host: String,
    pub free_cpus: u32,
    #[serde(default)]
    pub finished: Vec<TaskResult>,
    /// Attempts this executor has received and not yet reported finished. Lets the AM see
    /// an assignment that never arrived (a reply lost on the way) and send it again.
    #[serde(default)]
    pub running: Vec<TaskAttempt>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskResult {
    pub task_id: String,
    pub attempt: u32,
    /// The command's exit code; 128 + signal when a signal ended it.
    pub exit_code: i32,
    pub duration_ms: u64,
}

/// Work for one executor; `shutdown` tells it to exit (its work is done or it was released).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PollReply {
    pub tasks: Vec<TaskAssignment>,
    pub shutdown: bool,
    /// Why the executor should shut down, when the AM knows more than "work done".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Attempts to kill now (past their `timeout_ms`; the AM already counted them failed).
    /// The executor ends each one's process group and reports its exit as usual.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kill: Vec<TaskAttempt>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskAssignment {
    pub task_id: String,
    pub attempt: u32,
    pub command: String,
    pub cpus: u32,
}

impl TaskAssignment {
    /// Which attempt this is.
    pub fn task_attempt(&self) -> TaskAttempt {
        TaskAttempt::new(self.task_id.clone(), self.attempt)
    }
}

impl TaskResult {
    /// Which attempt this is the result of.
    pub fn task_attempt(&self) -> TaskAttempt {
        TaskAttempt::new(self.task_id.clone(), self.attempt)
    }
}
