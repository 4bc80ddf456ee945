//! Finish: what the AM does once the loop has stopped. It writes the job report, then either
//! unregisters (removing the staging folder first) or, for a failure with attempts left,
//! stays registered so that YARN starts another attempt; and it stops the driver API.
//! Everything here is bounded in time: after SIGTERM the NodeManager's SIGKILL follows soon.

use std::time::Duration;

use anyhow::{bail, Context};
use tracing::{info, warn};
use yarn_client::amrm::FinalStatus;

use super::event_loop::RmState;
use super::rm::RmSession;
use super::start::{Am, Api};
use super::JOB_REPORT_FILE;
use yarn_am_core::am::am_core::{Ending, Outcome};

/// Ends the AM the way `ending` says; the outcome decides the exit code.
pub(super) async fn finish(am: Am, ending: Ending, rm: RmState) -> anyhow::Result<Outcome> {
    let (outcome, diagnostics) = match ending {
        Ending::Abort(why) => {
            // The RM will not take an unregistration from us either.
            stop_api(am.api).await;
            bail!("{why} (scheduler {})", am.rm.scheduler);
        }
        Ending::Finish {
            outcome,
            diagnostics,
        } => (outcome, diagnostics),
    };
    if let Some(summary) = am.core.job_summary() {
        write_job_report(summary, &am.env.log_dir);
    }
    info!(?outcome, %diagnostics, "finishing");
    // A failure with attempts left is not unregistered: YARN then counts the attempt as
    // failed and starts another (as Spark's AM does); unregistering FAILED would end the app.
    let Am {
        env,
        spec,
        core,
        mut journal,
        tokens,
        rm: contact,
        api,
        ..
    } = am;
    if unregisters(outcome, env.is_last_attempt()) {
        // The staging folder goes first: after SIGTERM (a kill through the RM) the
        // NodeManager sends SIGKILL soon after (yarn.nodemanager.sleep-delay-before-sigkill.ms,
        // 250 ms by default), before a slow unregistration would let us reach a later step.
        if let Some(j) = journal.take() {
            j.abandon();
        }
        if let Some(staging) = &spec.staging {
            crate::staging::remove_folder(staging, tokens.webhdfs_auth().as_ref()).await;
        }
        let status = match outcome {
            Outcome::Succeeded => FinalStatus::Succeeded,
            Outcome::Failed => FinalStatus::Failed,
            Outcome::Killed => FinalStatus::Killed,
        };
        // A call still in flight is abandoned with its connection; a fresh session with
        // the newest AMRM token unregisters.
        let RmState { session, inflight } = rm;
        drop(inflight);
        let mut session = match session {
            Some(s) => s,
            None => {
                let token = core
                    .table()
                    .amrm_token
                    .current()
                    .cloned()
                    .context("no AMRM token to unregister with")?;
                RmSession::new(&contact.scheduler, token, contact.registration, contact.rpc)
            }
        };
        if let Err(e) = session.finish(status, &diagnostics).await {
            warn!(%e, "unregistering failed (was the app killed through the RM?)");
        }
    } else {
        warn!(%diagnostics, "failed; leaving the app registered so that YARN starts another attempt");
    }
    stop_api(api).await;
    Ok(outcome)
}

/// Whether this attempt ends the application by unregistering. Success and kill always
/// do; a failure only on the last attempt YARN will make (`MAX_APP_ATTEMPTS`), so that
/// earlier failures are retried with the staged files still in place.
pub(super) fn unregisters(outcome: Outcome, last_attempt: bool) -> bool {
    outcome != Outcome::Failed || last_attempt
}

/// Stops the driver API (open event streams end with it), waiting at most 5 s: the AM must
/// still exit, and unregister if it has not, before the NodeManager's SIGKILL.
async fn stop_api(api: Api) {
    let _ = api.stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), api.server).await;
}

/// Writes the whole job report (every task) to [`JOB_REPORT_FILE`].
fn write_job_report(summary: &yarn_am_core::driver::report::JobSummary, log_dir: &std::path::Path) {
    let path = log_dir.join(JOB_REPORT_FILE);
    if let Err(e) = std::fs::write(
        &path,
        serde_json::to_string_pretty(summary).unwrap_or_default(),
    ) {
        warn!("could not write {}: {e}", path.display());
    }
}
