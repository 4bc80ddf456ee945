//! `yarn-am am`: the ApplicationMaster process YARN starts in the AM container.
//!
//! Start-up reads everything it needs up front (container environment, spec file, token
//! file, node list) so that a misconfiguration fails in the first second with a message
//! naming it. Then one loop carries out what the sans-IO [`core::AmCore`] decides: it
//! selects over the allocate call in flight (an [`rm::RmSession`] future that borrows
//! nothing), the core's next deadline, driver commands, launch reports and SIGTERM, so no
//! command ever waits on the RM. The HTTP server and the launches run as tasks that only
//! talk to the loop through channels.

mod container_env;
mod journal_store;
pub mod launcher;
pub mod rm;
pub mod token_refresh;

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::core::allocator::tracker::{Allocator, AllocatorConfig, DEFAULT_SPREAD_WAIT_MS};
use anyhow::{bail, Context};
use tokio::signal::unix::{signal, SignalKind};
use tracing::{error, info, warn};
use yarn_client::amrm::FinalStatus;
use yarn_client::credentials::Credentials;
use yarn_client::request_table::{AllocateBatch, AmrmState};
use yarn_client::rest::RmRest;
use yarn_client::rpc::RpcConfig;

use crate::core::am::am_core::{AmCore, Ending, Outcome, DEFAULT_EXECUTOR_SILENCE};
use crate::core::am::events::RmReply;
use crate::core::am::pool::Pool;
use crate::core::am::registry::Registry;
use crate::http;
use crate::protocol::spec::{AppSpec, SPEC_FILE};
use container_env::ContainerEnv;
use launcher::{DriverContact, Launcher};
use rm::{AmEndpoint, RmSession};
use token_refresh::SharedTokens;

/// File in the AM's log dir naming the driver API's URL (the secret is not written there).
pub const DRIVER_URL_FILE: &str = "driver-api.url";
/// Executor launches in flight at once.
const LAUNCH_PARALLELISM: usize = 8;
/// Heartbeat interval with no request outstanding (Spark's
/// `spark.yarn.scheduler.heartbeat.interval-ms`); the driver's timers do not depend on it.
const IDLE_HEARTBEAT: Duration = Duration::from_secs(3);

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
        let auth = crate::submit::tokens::AmAuth::from_container();
        staging.remove_with(auth.webhdfs.as_ref()).await;
    }
}

/// An allocate call in flight: owns its session, borrows nothing of the loop.
type InFlight = Pin<Box<dyn Future<Output = (RmSession, AllocateBatch, RmReply)> + Send>>;

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
    let secret = master_secret(&creds)?;
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
    // Served from now on, while registration (which a slow RM can make take a while) runs:
    // reads answer at once, commands wait in the channel for the loop.
    let (shared, mut handle) = http::channel(&secret, Default::default());
    let (stop_server, api_stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(listener, shared, async {
        let _ = api_stopped.await;
    }));

    let scheduler = spec
        .rm_scheduler
        .first()
        .context("the spec names no RM scheduler address")?
        .clone();
    let registration = AmEndpoint {
        host: env.nm_host.clone(),
        rpc_port: i32::from(port),
        tracking_url: format!("{url}/"),
    };
    let rpc = RpcConfig {
        fallback_to_simple_auth_allowed: spec.fallback_to_simple_auth_allowed,
        ..RpcConfig::default()
    };
    let mut session = RmSession::new(
        &scheduler,
        amrm_token.clone(),
        registration.clone(),
        rpc.clone(),
    );
    let registered = session
        .register()
        .await
        .with_context(|| format!("registering with the RM at {scheduler}"))?;
    if let Some(max) = registered.max_memory_mb {
        if spec.executor.memory_mb > max {
            bail!(
                "executors want {} MB but the cluster's largest container is {max} MB",
                spec.executor.memory_mb,
            );
        }
    }

    // Racks and capacities, for the allocator and for the request table's rack lookups.
    // On a secure cluster the submitter gave us delegation tokens for the RM and WebHDFS.
    let am_auth = crate::submit::tokens::AmAuth::from_credentials(&creds);
    let mut rest = RmRest::new(&spec.rm_web, "yarn-am", Duration::from_secs(20))?;
    if let Some(auth) = &am_auth.rm {
        rest = rest.with_auth(auth.clone());
    }
    let nodes = rest
        .nodes(&[])
        .await
        .context("listing the cluster's nodes")?;
    // The one topology: the allocator, the request table, the pool and the driver hold
    // handles to the same map.
    let (topo, cluster) = crate::core::am::cluster_view::from_nodes(
        &nodes,
        spec.executor.memory_mb,
        spec.executor.vcores,
    );
    let job = match &spec.job {
        Some(j) => {
            let driver = crate::core::driver::Driver::new(j.clone(), topo.clone())
                .context("the job in the spec is not valid")?;
            info!(job = %j.name, tasks = j.tasks.len(), "running a job with the embedded driver");
            Some(crate::core::am::job_run::JobRun::new(driver))
        }
        None => None,
    };
    // The journal of earlier attempts: the job resumes where a crashed attempt left it, and
    // executor ids continue past every id it used.
    let shared_tokens = SharedTokens::new(creds.clone());
    let webhdfs_auth: journal_store::HttpAuthSource = {
        let t = shared_tokens.clone();
        Arc::new(move || t.webhdfs_auth())
    };
    let opened = match &spec.job {
        Some(_) => {
            journal_store::Journal::open(spec.staging.as_ref(), env.attempt, webhdfs_auth.clone())
                .await?
        }
        None => None,
    };
    let mut first_executor_id = crate::core::ids::ExecutorId::new(1);
    let mut job = job;
    let mut journal = None;
    let mut earlier_executors = std::collections::HashMap::new();
    let mut in_flight = Vec::new();
    if let Some((file, entries)) = opened {
        earlier_executors = crate::core::driver::journal::executors(&entries);
        in_flight = crate::core::driver::journal::in_flight(&entries);
        if let (Some(j), false) = (job.as_mut(), entries.is_empty()) {
            let r = j.replay(&entries);
            info!(succeeded = r.succeeded, failed = r.failed, earlier_attempts = ?r.am_attempts,
                  max_executor_id = %r.max_executor_id, "resuming the job from the journal");
            first_executor_id = r.max_executor_id.next();
        }
        journal = Some(file);
    }
    if let Some(j) = journal.as_mut() {
        j.append(&[crate::core::driver::journal::Entry::AmAttempt {
            attempt: env.attempt,
        }]);
    }
    let strategy = spec.strategy.unwrap_or_default();
    info!(%strategy, "allocation strategy");
    let allocator = Allocator::new(AllocatorConfig {
        strategy,
        spread_wait_ms: spec.nm_heartbeat_ms.unwrap_or(DEFAULT_SPREAD_WAIT_MS),
        // Executors run one task per vcore.
        tasks_per_executor: spec.executor.vcores.max(1) as u32,
        ..AllocatorConfig::default()
    })
    .with_first_executor_id(first_executor_id)
    .with_cluster(topo.clone(), cluster);
    let mut table = AmrmState::new(
        crate::core::am::cluster_view::rack_resolver(&topo),
        Some(amrm_token),
    );
    table.on_registered(registered.nm_tokens_from_previous_attempts.clone());

    let registry = Registry::new(handle.events.clone());
    // Runs until the AM's runtime ends.
    if let Some(r) = spec.token_refresh.clone() {
        token_refresh::spawn(r, shared_tokens.clone());
    }
    let contact = DriverContact {
        app_id: env.app_id.clone(),
        url: url.clone(),
        master_secret: secret.as_bytes().into(),
        tokens: shared_tokens.clone(),
        // Where an executor finds the next attempt's address if this one dies; the last
        // attempt has no next, and its executors go as soon as it is gone.
        staging_dir: spec.staging.clone().filter(|_| !env.is_last_attempt()),
    };
    let (mut launcher, mut launches) =
        Launcher::new(spec.executor.clone(), contact, LAUNCH_PARALLELISM);
    launcher.allow_simple_fallback(rpc.fallback_to_simple_auth_allowed);
    let pool = Pool::new(
        allocator,
        table,
        registry,
        spec.executor.clone(),
        env.app_id.clone(),
    );
    let mut core = AmCore::new(
        pool,
        job,
        IDLE_HEARTBEAT,
        spec.max_executor_failures as usize,
    )
    .with_executor_silence(
        spec.executor_silence_timeout_ms
            .map_or(DEFAULT_EXECUTOR_SILENCE, Duration::from_millis),
    );

    let start = tokio::time::Instant::now();
    let now_ms = || start.elapsed().as_millis() as u64;
    if !registered.containers_from_previous_attempts.is_empty() {
        // Before the first demand: the adopted executors count towards it.
        let adopted = core.handle_adopt(
            now_ms(),
            &registered.containers_from_previous_attempts,
            &earlier_executors,
            &in_flight,
        );
        info!(
            adopted,
            handed_back = registered.containers_from_previous_attempts.len(),
            "containers of earlier attempts"
        );
    }
    // Executors of an earlier attempt find this one here (see `journal_store::publish_url`).
    // In the background: on HDFS it takes two calls, which must not hold up the first
    // demand (those executors keep looking for a minute).
    if let Some(staging) = spec.staging.clone() {
        let (url, auth) = (url.clone(), webhdfs_auth.clone());
        tokio::spawn(async move { journal_store::publish_url(&staging, &url, &auth).await });
    }

    let mut sigterm = signal(SignalKind::terminate())?;
    core.handle_start(now_ms(), spec.executor.initial);
    let mut session = Some(session);
    let mut inflight: Option<InFlight> = None;
    // The node list fetched again when a container lands on a host of unknown rack: a
    // task of its own, so the loop never waits on RM REST (bounded by the client's timeout).
    let (listed_tx, mut listed) = tokio::sync::mpsc::channel(1);
    let mut listing = false;
    // The loop never waits on the RM: the allocate call is one more thing it selects on.
    let ending = loop {
        let launches_now = core.poll_launches();
        if let Some(j) = journal.as_mut() {
            // Before the executors start: their ids are in the journal before any of them
            // can poll. Task starts and ends of the last input are written here too, right
            // after the reply that carried them; a crash in between only reruns that task.
            let entries = core.poll_journal(&launches_now);
            if launches_now.is_empty() {
                j.append(&entries);
            } else {
                j.append_durable(&entries, journal_store::DURABLE_WAIT)
                    .await;
            }
        }
        for l in launches_now {
            launcher.launch(l.executor, l.container, l.nm_token);
        }
        if inflight.is_none() {
            if let Some(batch) = core.poll_allocate(now_ms()) {
                if let Some(s) = session.take() {
                    inflight = Some(Box::pin(s.allocate(batch)));
                }
            }
        }
        if !listing && core.poll_nodes_wanted() {
            listing = true;
            let (rest, tx) = (rest.clone(), listed_tx.clone());
            tokio::spawn(async move {
                let _ = tx.send(rest.nodes(&[]).await).await;
            });
        }
        handle.state.send_replace(Arc::new(core.view()));
        if let Some(ending) = core.ending() {
            if core.drained(now_ms()) {
                break ending.clone();
            }
        }
        let wake = core
            .poll_timeout()
            .map(|ms| start + Duration::from_millis(ms))
            .unwrap_or_else(|| tokio::time::Instant::now() + IDLE_HEARTBEAT);
        tokio::select! {
            (s, batch, reply) = async { inflight.as_mut().expect("guarded").await }, if inflight.is_some() => {
                inflight = None;
                session = Some(s);
                core.handle_allocated(now_ms(), batch, reply);
            }
            _ = tokio::time::sleep_until(wake) => core.handle_timeout(now_ms()),
            Some(cmd) = handle.commands.recv() => core.handle_command(now_ms(), cmd),
            Some(report) = launches.recv() => core.handle_launched(now_ms(), report),
            Some(nodes) = listed.recv() => {
                listing = false;
                match nodes {
                    Ok(nodes) => core.handle_nodes_listed(now_ms(), Some(&nodes)),
                    Err(e) => {
                        warn!(%e, "fetching the node list for a new host's rack failed");
                        core.handle_nodes_listed(now_ms(), None);
                    }
                }
            }
            // The NodeManager's SIGKILL follows SIGTERM within 250 ms: no drain, no waiting
            // for a call in flight.
            _ = sigterm.recv() => {
                warn!("SIGTERM: unregistering as KILLED");
                break Ending::Finish {
                    outcome: Outcome::Killed,
                    diagnostics: "the ApplicationMaster received SIGTERM".to_string(),
                };
            }
        }
    };
    handle.state.send_replace(Arc::new(core.view()));
    let (outcome, diagnostics) = match ending {
        Ending::Abort(why) => {
            // The RM will not take an unregistration from us either.
            stop_api(stop_server, server).await;
            bail!("{why} (scheduler {scheduler})");
        }
        Ending::Finish {
            outcome,
            diagnostics,
        } => (outcome, diagnostics),
    };
    if let Some(summary) = core.job_summary() {
        write_job_report(summary, &env.log_dir);
    }
    info!(?outcome, %diagnostics, "finishing");
    // A failure with attempts left is not unregistered: YARN then counts the attempt as
    // failed and starts another (as Spark's AM does); unregistering FAILED would end the app.
    if unregisters(outcome, env.is_last_attempt()) {
        // The staging folder goes first: after SIGTERM (a kill through the RM) the
        // NodeManager sends SIGKILL soon after (yarn.nodemanager.sleep-delay-before-sigkill.ms,
        // 250 ms by default), before a slow unregistration would let us reach a later step.
        if let Some(j) = journal.take() {
            j.abandon();
        }
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
        // A call still in flight is abandoned with its connection; a fresh session with
        // the newest AMRM token unregisters.
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
                RmSession::new(&scheduler, token, registration, rpc)
            }
        };
        if let Err(e) = session.finish(status, &diagnostics).await {
            warn!(%e, "unregistering failed (was the app killed through the RM?)");
        }
    } else {
        warn!(%diagnostics, "failed; leaving the app registered so that YARN starts another attempt");
    }
    stop_api(stop_server, server).await;
    Ok(outcome)
}

/// The application's master secret, from the AM container's credentials (where `submit` put
/// it: never in an environment, see [`crate::protocol::poll`]).
fn master_secret(creds: &Credentials) -> anyhow::Result<String> {
    use crate::protocol::poll::MASTER_SECRET_ALIAS;
    let bytes = creds.secret(MASTER_SECRET_ALIAS).with_context(|| {
        format!(
            "the token file has no secret {MASTER_SECRET_ALIAS:?}: submit with `yarn-am submit`"
        )
    })?;
    let secret = String::from_utf8(bytes.to_vec())
        .ok()
        .filter(|s| !s.is_empty())
        .with_context(|| format!("the secret {MASTER_SECRET_ALIAS:?} is empty or not text"))?;
    Ok(secret)
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

/// File in the AM's log dir with the whole job report (every task).
pub const JOB_REPORT_FILE: &str = "job-report.json";

/// Writes the whole job report (every task) to [`JOB_REPORT_FILE`].
fn write_job_report(summary: &crate::core::driver::report::JobSummary, log_dir: &std::path::Path) {
    let path = log_dir.join(JOB_REPORT_FILE);
    if let Err(e) = std::fs::write(
        &path,
        serde_json::to_string_pretty(summary).unwrap_or_default(),
    ) {
        warn!("could not write {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executors_get_the_ams_tokens_but_not_its_amrm_token_or_secrets() {
        use yarn_client::token::Token;
        let token = |kind: &str| Token {
            identifier: vec![1],
            password: vec![2],
            kind: kind.into(),
            service: String::new(),
        };
        let creds = Credentials {
            tokens: vec![
                ("amrm".into(), token("YARN_AM_RM_TOKEN")),
                ("hdfs".into(), token("HDFS_DELEGATION_TOKEN")),
            ],
            secrets: vec![
                ("yarn-am.master-secret".into(), b"m".to_vec()),
                ("other".into(), b"o".to_vec()),
            ],
        };
        let e = token_refresh::executor_base(&creds);
        assert_eq!(
            e.tokens,
            vec![("hdfs".into(), token("HDFS_DELEGATION_TOKEN"))]
        );
        assert_eq!(e.secrets, vec![("other".into(), b"o".to_vec())]);
        assert_eq!(master_secret(&creds).unwrap(), "m");
        let err = master_secret(&e).unwrap_err().to_string();
        assert!(err.contains("yarn-am.master-secret"), "{err}");
    }

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
