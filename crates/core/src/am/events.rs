//! The inputs the AM's shell feeds [`super::am_core::AmCore`]: a driver command (from the
//! HTTP face), the outcome of a launch (from the launcher), the outcome of an allocate call
//! (from the RM session). They live here, beside the core, so that the core never imports
//! from the I/O files; the shell builds them and hands them in.
//!
//! A command whose caller waits for an answer names it by a [`ReplyTo`]: the core queues
//! `(ReplyTo, Reply)` for the shell to drain ([`super::am_core::AmCore::poll_reply`]) and
//! the shell, which keeps each caller's channel under its id, sends the answer on. So the
//! core holds no channel (the quinn-proto shape: inputs in, outputs polled out).

use yarn_client::amrm::Allocation;
use yarn_client::token::Token;

use super::pool::DeclareError;
use crate::kv::{KvAnswer, KvRequest};
use yarn_am_wire::driver_api::{Demand, FinishRequest, KillOutcome, KindDeclared};
use yarn_am_wire::poll::{PollReply, PollRequest};

/// Names the caller waiting for the answer to one command: the shell picks it (unique among
/// the calls it waits on) and keeps the caller's channel under it until the core's
/// [`Reply`] for it comes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplyTo(pub u64);

/// What the API asks of the AM loop.
#[derive(Debug)]
pub enum DriverCommand {
    SetDemand(Demand),
    /// Declare an executor kind while the app runs (`POST /v1/kinds`, already checked).
    /// Answered with [`Reply::KindDeclared`].
    DeclareKind {
        declaration: yarn_am_wire::driver_api::KindDeclaration,
        reply: ReplyTo,
    },
    /// Answered with [`Reply::Killed`].
    Kill {
        executor_ids: Vec<String>,
        reply: ReplyTo,
    },
    /// End the application: unregister with this status and stop.
    Finish(FinishRequest),
    /// An external driver's own measure of how far the app has come (0 to 1), for the RM.
    Progress(f32),
    /// A key-value store request (see [`crate::kv`]), from a driver or a container.
    /// Answered with [`Reply::Kv`]: a read at once, a write once its journal entry is
    /// durable (see `AmCore::handle_journaled`).
    Kv {
        request: KvRequest,
        reply: ReplyTo,
    },
    /// An executor of the embedded driver reports results and asks for work. Answered with
    /// [`Reply::Poll`].
    ExecutorPoll {
        request: PollRequest,
        reply: ReplyTo,
    },
}

impl DriverCommand {
    /// The caller waiting for this command's answer, if one does.
    pub fn reply_to(&self) -> Option<ReplyTo> {
        match self {
            DriverCommand::DeclareKind { reply, .. }
            | DriverCommand::Kill { reply, .. }
            | DriverCommand::Kv { reply, .. }
            | DriverCommand::ExecutorPoll { reply, .. } => Some(*reply),
            DriverCommand::SetDemand(_) | DriverCommand::Finish(_) | DriverCommand::Progress(_) => {
                None
            }
        }
    }
}

/// The core's answer to a command that named a [`ReplyTo`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    KindDeclared(Result<KindDeclared, DeclareError>),
    Killed(KillOutcome),
    Kv(KvAnswer),
    Poll(PollReply),
}

/// Each answer's own type from a [`Reply`] (the caller knows which it asked for); the
/// reply itself back when it is another.
macro_rules! reply_as {
    ($($variant:ident => $t:ty),* $(,)?) => {$(
        impl From<$t> for Reply {
            fn from(answer: $t) -> Self {
                Reply::$variant(answer)
            }
        }

        impl TryFrom<Reply> for $t {
            type Error = Reply;

            fn try_from(reply: Reply) -> Result<Self, Reply> {
                match reply {
                    Reply::$variant(answer) => Ok(answer),
                    other => Err(other),
                }
            }
        }
    )*};
}

reply_as! {
    KindDeclared => Result<KindDeclared, DeclareError>,
    Killed => KillOutcome,
    Kv => KvAnswer,
    Poll => PollReply,
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
pub fn job_diagnostics_line(summary: &crate::driver::report::JobSummary) -> String {
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
