//! `yarn-am am`: the ApplicationMaster process YARN starts in the AM container.
//!
//! Start-up reads everything it needs up front (container environment, spec file, token
//! file, node list) so that a misconfiguration fails in the first second with a message
//! naming it. Then one loop owns all state: it waits for the next heartbeat, a driver
//! command, a launch report or a signal, and handles each in turn. The HTTP server and the
//! launches run as tasks that only talk to the loop through channels.

mod deliveries;
mod env;
mod executors;
mod heartbeat;
mod interval;
mod job;
mod launcher;
mod token_refresh;
mod topology;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::signal::unix::{signal, SignalKind};
use tracing::{error, info, warn};
use yarn_am::allocator::tracker::{Allocator, AllocatorConfig, DEFAULT_SPREAD_WAIT_MS};
use yarn_client::amrm::{AmRmClient, FinalStatus};
use yarn_client::credentials::Credentials;
use yarn_client::request_table::{AmrmState, MapRackResolver};
use yarn_client::rest::RmRest;
use yarn_client::rpc::RpcConfig;

use crate::api::model::{FinalOutcome, KillOutcome};
use crate::api::{self, Command};
use crate::spec::{AppSpec, SPEC_FILE};
use env::ContainerEnv;
use executors::Registry;
use heartbeat::{Heartbeat, Stop};
use interval::Interval;
use launcher::{DriverContact, Launcher};
use token_refresh::SharedTokens;

/// Environment variable with the driver-API secret, set by `yarn-am submit`.
pub const ENV_SECRET: &str = "YARN_AM_SECRET";
/// File in the AM's log dir naming the driver API's URL (the secret is not written there).
pub const DRIVER_URL_FILE: &str = "driver-api.url";
/// Executor launches in flight at once.
const LAUNCH_PARALLELISM: usize = 8;

pub fn run() -> ExitCode {
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("yarn-am am: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run_am()) {
        Ok(Outcome::Succeeded) => ExitCode::SUCCESS,
        Ok(Outcome::Killed) => ExitCode::from(3),
        Ok(Outcome::Failed) => ExitCode::from(1),
        Err(e) => {
            // Printed to the container's stderr, which YARN shows in the app diagnostics.
            eprintln!("yarn-am am: error: {e:#}");
            error!("{e:#}");
            rt.block_on(remove_staging_after_error());
            ExitCode::from(1)
        }
    }
}

/// An AM that fails outside its normal finish (a bad spec, a refused registration, the RM
/// dropping it) ends the application when this is its last attempt, and then only a
/// `submit --wait` would be left to remove the staging folder. Earlier attempts keep it:
/// YARN's next attempt localises the same files.
async fn remove_staging_after_error() {
    let Ok(env) = ContainerEnv::from_process() else {
        return;
    };
    if !env.is_last_attempt() {
        return;
    }
    let Some(spec) = std::fs::read_to_string(SPEC_FILE)
        .ok()
        .and_then(|t| AppSpec::from_json(&t).ok())
    else {
        return;
    };
    if let Some(staging) = &spec.staging {
        let auth = crate::tokens::AmAuth::from_container();
        staging.remove_with(auth.webhdfs.as_ref()).await;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Succeeded,
    Failed,
    Killed,
}

async fn run_am() -> anyhow::Result<Outcome> {
    let env = ContainerEnv::from_process()?;
    let spec_text = std::fs::read_to_string(SPEC_FILE)
        .with_context(|| format!("reading {SPEC_FILE} from the container's working directory"))?;
    let spec = AppSpec::from_json(&spec_text).with_context(|| format!("parsing {SPEC_FILE}"))?;
    let creds = Credentials::read_file(&env.token_file)
        .with_context(|| format!("reading the token file {}", env.token_file.display()))?;
    let amrm_token = creds
        .require_kind("YARN_AM_RM_TOKEN")
        .context("the token file has no AMRM token")?
        .clone();
    let secret = std::env::var(ENV_SECRET).unwrap_or_else(|_| api::new_secret());
    info!(app = %env.app_id, attempt = env.attempt, "ApplicationMaster starting");

    // The driver API listens on this container's host, on a free port.
    let listener = tokio::net::TcpListener::bind((env.nm_host.as_str(), 0))
        .await
        .with_context(|| format!("binding the driver API on {}", env.nm_host))?;
    let port = listener.local_addr()?.port();
    let url = format!("http://{}:{port}", env.nm_host);
    std::fs::write(env.log_dir.join(DRIVER_URL_FILE), format!("{url}\n"))
        .with_context(|| format!("writing {DRIVER_URL_FILE} into {}", env.log_dir.display()))?;
    info!(%url, "driver API listening");

    let scheduler = spec
        .rm_scheduler
        .first()
        .context("the spec names no RM scheduler address")?;
    let mut amrm = AmRmClient::new(scheduler, amrm_token.clone(), RpcConfig::default());
    let registered = amrm
        .register(&env.nm_host, i32::from(port), &format!("{url}/"))
        .await
        .with_context(|| format!("registering with the RM at {scheduler}"))?;
    if let Some(max) = registered.maximum_capability {
        if spec.executor.memory_mb > max.memory.unwrap_or(i64::MAX) {
            bail!(
                "executors want {} MB but the cluster's largest container is {} MB",
                spec.executor.memory_mb,
                max.memory.unwrap_or(0)
            );
        }
    }

    // Racks and capacities, for the allocator and for the request table's rack lookups.
    // On a secure cluster the submitter gave us delegation tokens for the RM and WebHDFS.
    let am_auth = crate::tokens::AmAuth::from_credentials(&creds);
    let mut rest = RmRest::new(&spec.rm_web, "yarn-am", Duration::from_secs(20))?;
    if let Some(auth) = &am_auth.rm {
        rest = rest.with_auth(auth.clone());
    }
    let nodes = rest
        .nodes(&[])
        .await
        .context("listing the cluster's nodes")?;
    let (topo, cluster) =
        topology::from_nodes(&nodes, spec.executor.memory_mb, spec.executor.vcores);
    let racks = nodes
        .iter()
        .map(|n| (n.node_host_name.clone(), n.rack.clone()))
        .collect();
    let allocator = Allocator::new(AllocatorConfig {
        spread_wait_ms: spec.nm_heartbeat_ms.unwrap_or(DEFAULT_SPREAD_WAIT_MS),
        ..AllocatorConfig::default()
    })
    .with_cluster(topo.clone(), cluster);
    let table = AmrmState::new(MapRackResolver::new(racks), Some(amrm_token));

    let (shared, mut handle) = api::channel(&secret, Default::default());
    let registry = Registry::new(handle.events.clone());
    let contact = DriverContact {
        app_id: env.app_id.clone(),
        url: url.clone(),
        secret: secret.clone(),
    };
    let (launcher, mut launches) =
        Launcher::new(spec.executor.clone(), contact, LAUNCH_PARALLELISM);
    let shared_tokens = SharedTokens::new(creds.clone());
    let launcher = launcher.with_tokens(shared_tokens.clone());
    // Runs until the AM's runtime ends.
    if let Some(r) = spec.token_refresh.clone() {
        token_refresh::spawn(r, shared_tokens.clone());
    }
    let mut hb = Heartbeat::new(
        allocator,
        amrm,
        table,
        registry,
        launcher,
        topo,
        spec.executor.clone(),
        env.app_id.clone(),
        (env.nm_host.clone(), i32::from(port), format!("{url}/")),
    );
    let mut job = match &spec.job {
        Some(j) => {
            let host_to_rack = nodes
                .iter()
                .map(|n| (n.node_host_name.clone(), n.rack.clone()))
                .collect();
            let driver = yarn_am::driver::Driver::new(j.clone(), host_to_rack)
                .context("the job in the spec is not valid")?;
            info!(job = %j.name, tasks = j.tasks.len(), "running a job with the embedded driver");
            Some(job::JobRun::new(driver))
        }
        None => None,
    };
    match job.as_mut() {
        Some(j) => j.tick(&mut hb),
        None => hb.set_demand(api::model::Demand {
            target_executors: spec.executor.initial,
            ..Default::default()
        }),
    }

    let (stop_server, api_stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::serve(listener, shared, async {
        let _ = api_stopped.await;
    }));

    let mut sigterm = signal(SignalKind::terminate())?;
    // A job's locality waits and idle timeouts are checked on each round: keep them short.
    let idle_wait = if job.is_some() { 1 } else { 3 };
    let mut interval = Interval::new(Duration::from_millis(200), Duration::from_secs(idle_wait));
    let mut next = tokio::time::Instant::now();
    let (outcome, diagnostics) = loop {
        handle.state.send_replace(Arc::new(view(&hb, job.as_ref())));
        tokio::select! {
            _ = tokio::time::sleep_until(next) => {
                // A round can wait on the RM for up to its call timeout; the NodeManager's
                // SIGKILL follows SIGTERM within 250 ms, so SIGTERM must not wait for it.
                let round = tokio::select! {
                    r = hb.round() => r,
                    _ = sigterm.recv() => {
                        warn!("SIGTERM during a heartbeat: abandoning it, unregistering as KILLED");
                        break (Outcome::Killed, "the ApplicationMaster received SIGTERM".to_string());
                    }
                };
                if let Err(stop) = round {
                    // The RM will not take an unregistration from us either.
                    stop_api(stop_server, server).await;
                    match stop {
                        Stop::Rm(why) => bail!("the ResourceManager stopped accepting this AM: {why}"),
                        Stop::Lost(why) => bail!("lost the ResourceManager at {scheduler}: {why}"),
                    }
                }
                if let Some(j) = job.as_mut() {
                    j.sync_lost(&mut hb);
                    j.tick(&mut hb);
                    if let Some(summary) = j.finished() {
                        let outcome = if summary.succeeded { Outcome::Succeeded } else { Outcome::Failed };
                        let diagnostics = job_diagnostics(summary, &env.log_dir);
                        break (outcome, diagnostics);
                    }
                }
                let failures = hb.failures();
                if failures >= spec.max_executor_failures as usize {
                    break (Outcome::Failed, format!(
                        "{failures} executor failures (limit {}); last: {}",
                        spec.max_executor_failures, last_failure(&hb)));
                }
                next = tokio::time::Instant::now() + interval.next(hb.has_pending());
            }
            Some(cmd) = handle.commands.recv() => match cmd {
                Command::SetDemand(d) => {
                    info!(target = d.target_executors, hosts = d.host_to_local_task_count.len(), "new demand");
                    hb.set_demand(d);
                    interval.reset();
                    next = tokio::time::Instant::now();
                }
                Command::Kill { executor_ids, reply } => {
                    let (killed, unknown) = hb.kill(executor_ids);
                    let _ = reply.send(KillOutcome { killed, unknown });
                    next = tokio::time::Instant::now();
                }
                Command::ExecutorPoll { request, reply } => {
                    // Only `yarn-am executor` processes poll, and only job runs start them.
                    let answer = match job.as_mut() {
                        Some(j) => j.poll(request, &mut hb),
                        None => api::model::PollReply {
                            shutdown: true,
                            reason: Some("this application runs no embedded job".into()),
                            ..Default::default()
                        },
                    };
                    // A reply the executor never gets (its call timed out) is found on its
                    // next poll, which does not name those attempts (see `deliveries`).
                    let _ = reply.send(answer);
                }
                Command::Finish(f) => {
                    let outcome = match f.status {
                        FinalOutcome::Succeeded => Outcome::Succeeded,
                        FinalOutcome::Failed => Outcome::Failed,
                        FinalOutcome::Killed => Outcome::Killed,
                    };
                    break (outcome, f.diagnostics);
                }
            },
            Some(report) = launches.recv() => hb.on_launch(report),
            _ = sigterm.recv() => {
                warn!("SIGTERM: unregistering as KILLED");
                break (Outcome::Killed, "the ApplicationMaster received SIGTERM".to_string());
            }
        }
    };
    handle.state.send_replace(Arc::new(view(&hb, job.as_ref())));
    info!(?outcome, %diagnostics, "finishing");
    // A failure with attempts left is not unregistered: YARN then counts the attempt as
    // failed and starts another (as Spark's AM does); unregistering FAILED would end the app.
    if unregisters(outcome, env.is_last_attempt()) {
        // The staging folder goes first: after SIGTERM (a kill through the RM) the
        // NodeManager sends SIGKILL soon after (yarn.nodemanager.sleep-delay-before-sigkill.ms,
        // 250 ms by default), before a slow unregistration would let us reach a later step.
        if let Some(staging) = &spec.staging {
            staging
                .remove_with(shared_tokens.webhdfs_auth().as_ref())
                .await;
        }
        let status = match outcome {
            Outcome::Succeeded => FinalStatus::Succeeded,
            Outcome::Failed => FinalStatus::Failed,
            Outcome::Killed => FinalStatus::Killed,
        };
        if let Err(e) = hb
            .amrm
            .finish(
                status,
                &diagnostics,
                &format!("{url}/"),
                Duration::from_secs(20),
            )
            .await
        {
            warn!(%e, "unregistering failed (was the app killed through the RM?)");
        }
    } else {
        warn!(%diagnostics, "failed; leaving the app registered so that YARN starts another attempt");
    }
    stop_api(stop_server, server).await;
    Ok(outcome)
}

/// Whether this attempt ends the application by unregistering. Success and kill always
/// do; a failure only on the last attempt YARN will make (`MAX_APP_ATTEMPTS`), so that
/// earlier failures are retried with the staged files still in place.
fn unregisters(outcome: Outcome, last_attempt: bool) -> bool {
    outcome != Outcome::Failed || last_attempt
}

/// Stops the driver API (open event streams end with it), waiting at most 5 s: the AM must
/// still exit, and unregister if it has not, before the NodeManager's SIGKILL.
async fn stop_api<T>(stop: tokio::sync::oneshot::Sender<()>, server: tokio::task::JoinHandle<T>) {
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
}

fn view(hb: &Heartbeat, job: Option<&job::JobRun>) -> api::model::StateView {
    let mut v = hb.view();
    v.job = job.map(job::JobRun::report);
    v
}

/// File in the AM's log dir with the whole job report (every task).
pub const JOB_REPORT_FILE: &str = "job-report.json";

/// The application's final diagnostics for a job: one line for people, then the summary
/// JSON (without the per-task list, which goes to [`JOB_REPORT_FILE`]) for `submit --wait`.
fn job_diagnostics(
    summary: &yarn_am::driver::report::JobSummary,
    log_dir: &std::path::Path,
) -> String {
    let path = log_dir.join(JOB_REPORT_FILE);
    if let Err(e) = std::fs::write(
        &path,
        serde_json::to_string_pretty(summary).unwrap_or_default(),
    ) {
        warn!("could not write {}: {e}", path.display());
    }
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

fn last_failure(hb: &Heartbeat) -> String {
    hb.view()
        .executors
        .iter()
        .rev()
        .find(|e| e.counts_against_app == Some(true))
        .and_then(|e| e.reason.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_failure_with_attempts_left_stays_registered_for_a_retry() {
        assert!(!unregisters(Outcome::Failed, false));
        assert!(unregisters(Outcome::Failed, true));
        for last in [false, true] {
            assert!(unregisters(Outcome::Succeeded, last));
            assert!(unregisters(Outcome::Killed, last));
        }
    }
}
