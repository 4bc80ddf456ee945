//! The inputs the AM's shell feeds [`super::am_core::AmCore`]: a driver command (from the
//! HTTP face), the outcome of a launch (from the launcher), the outcome of an allocate call
//! (from the RM session). They live here, beside the core, so that the core never imports
//! from the I/O files; the shell builds them and hands them in.

use tokio::sync::oneshot;
use yarn_client::amrm::Allocation;
use yarn_client::token::Token;

use crate::core::kv::{KvAnswer, KvRequest};
use crate::protocol::driver_api::{Demand, FinishRequest, KillOutcome};
use crate::protocol::poll::{PollReply, PollRequest};

/// What the API asks of the AM loop.
#[derive(Debug)]
pub enum DriverCommand {
    SetDemand(Demand),
    /// Declare an executor kind while the app runs (`POST /v1/kinds`, already checked).
    DeclareKind {
        declaration: crate::protocol::driver_api::KindDeclaration,
        reply: oneshot::Sender<
            Result<crate::protocol::driver_api::KindDeclared, super::pool::DeclareError>,
        >,
    },
    Kill {
        executor_ids: Vec<String>,
        reply: oneshot::Sender<KillOutcome>,
    },
    /// End the application: unregister with this status and stop.
    Finish(FinishRequest),
    /// An external driver's own measure of how far the app has come (0 to 1), for the RM.
    Progress(f32),
    /// A key-value store request (see [`crate::core::kv`]), from a driver or a container.
    Kv {
        request: KvRequest,
        reply: oneshot::Sender<KvAnswer>,
    },
    /// An executor of the embedded driver reports results and asks for work.
    ExecutorPoll {
        request: PollRequest,
        reply: oneshot::Sender<PollReply>,
    },
}

/// The outcome of one launch.
#[derive(Debug)]
pub enum LaunchReport {
    Started { container: String },
    Failed { container: String, error: String },
}

/// What became of one allocate call.
#[derive(Debug)]
pub enum RmReply {
    /// The RM answered.
    Allocated(Box<Allocation>),
    /// The call failed in a way a later call may not (network, RM busy). `answered`: the
    /// RM itself replied with an error, so it is there.
    Failed { error: String, answered: bool },
    /// The RM had lost our registration (restart, failover); we registered again. The core
    /// must resend everything. Carries the NM tokens of containers kept across the restart.
    Reregistered { nm_tokens: Vec<(String, Token)> },
    /// The RM will not take this AM any more (attempt gone, credentials refused, bad
    /// request): the AM must stop.
    Refused(String),
}

/// The application's final diagnostics for a job: one line for people, then the summary
/// JSON (without the per-task list, which goes to the job report file) for `submit --wait`.
pub fn job_diagnostics_line(summary: &crate::core::driver::report::JobSummary) -> String {
    let mut brief = summary.clone();
    brief.tasks.clear();
    format!(
        "job {} {}: {}/{} tasks succeeded in {:.1} s{}\n{}",
        summary.name,
        if summary.succeeded {
            "succeeded"
        } else {
            "failed"
        },
        summary.tasks_succeeded,
        summary.tasks_total,
        summary.wall_time_ms as f64 / 1000.0,
        summary
            .failure
            .as_deref()
            .map(|f| format!(" ({f})"))
            .unwrap_or_default(),
        serde_json::to_string(&brief).unwrap_or_default()
    )
}
