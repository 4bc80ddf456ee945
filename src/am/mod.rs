//! `yarn-am am`: the ApplicationMaster process YARN starts in the AM container: the tokio
//! shell around the sans-IO [`yarn_am_core::am::am_core::AmCore`], which makes every
//! decision. The shell owns the sockets, channels, tasks and the clock, and feeds the core
//! in the order of its calling contract.
//!
//! The files, in the order the AM runs them:
//!
//! - `start.rs`: start-up. Reads the container environment, spec and credentials, opens
//!   the driver API's listener, registers with the RM, lists the nodes, replays the journal
//!   of earlier attempts and wires the pool, the core and the launcher, so that a
//!   misconfiguration fails in the first second with a message naming it.
//! - `event_loop.rs`: the `select!` loop. Carries out what the core asks and feeds it what
//!   arrives (the allocate call in flight, deadlines, driver commands, launch reports, node
//!   lists, SIGTERM); no command ever waits on the RM.
//! - `finish.rs`: the end. Job report, unregistration (or not, for a failure with attempts
//!   left), staging clean-up, stopping the driver API.
//! - `callers.rs`: the reply channels of driver commands the core has not answered yet,
//!   kept under the id each command names, and the core's executor events sent on.
//! - `rm.rs`: the session with the RM's scheduler (register, allocate, re-register,
//!   unregister); an allocate call owns the session, so it borrows nothing of the loop.
//! - `launcher.rs`: starts executors on NodeManagers, a bounded number at a time, as tasks
//!   reporting back on a channel.
//! - `journal_store.rs`: the job journal's files in the staging folder, and `driver.url`,
//!   where executors of a crashed attempt find the next one.
//! - `token_refresh.rs`: the AM's credentials, refreshed while it runs, and the part of them
//!   every executor gets.
//! - `container_env.rs`: the environment YARN gives the AM container.
//! - `driver_process.rs`: a driver the AM runs beside itself (`submit --driver-command`),
//!   whose exit ends the app.
//!
//! The HTTP server and the launches run as tasks that only talk to the loop through channels.

mod callers;
mod container_env;
pub mod driver_process;
mod event_loop;
mod finish;
mod journal_store;
pub mod launcher;
pub mod rm;
mod start;
pub mod token_refresh;

use std::process::ExitCode;
use std::time::Duration;

use tracing::error;

use container_env::ContainerEnv;
use yarn_am_core::am::am_core::Outcome;

/// File in the AM's log dir naming the driver API's URL (the secret is not written there).
pub const DRIVER_URL_FILE: &str = "driver-api.url";
/// File in the AM's log dir with the whole job report (every task).
pub const JOB_REPORT_FILE: &str = "job-report.json";
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

/// Start-up, the loop, the finish.
async fn run_am() -> anyhow::Result<Outcome> {
    let (mut am, session) = start::start().await?;
    let mut driver = match &am.spec.driver {
        Some(d) => Some(start_driver(&am, &d.command_file)?),
        None => None,
    };
    let (ending, rm) = event_loop::run(&mut am, session, driver.as_mut()).await;
    if let Some(d) = driver {
        // Still running only when the app ended otherwise (a finish, a kill, failures).
        d.stop(driver_process::STOP_GRACE).await;
    }
    finish::finish(am, ending, rm).await
}

/// The driver of `submit --driver-command`, with the secret re-read from the container's
/// credentials (the start-up keeps none of it) and the API's URL and certificate pin.
fn start_driver(
    am: &start::Am,
    command_file: &str,
) -> anyhow::Result<driver_process::DriverProcess> {
    let creds = yarn_client::credentials::Credentials::read_file(&am.env.token_file)
        .map_err(|e| anyhow::anyhow!("reading the token file for the driver: {e}"))?;
    let secret = start::master_secret(&creds)?;
    driver_process::DriverProcess::spawn(
        command_file,
        &am.env,
        &am.api.url,
        &secret,
        am.api.tls_pin,
    )
}

/// The AM's clock: `now_ms` for the core is the time since start-up.
#[derive(Debug, Clone, Copy)]
struct Clock(tokio::time::Instant);

impl Clock {
    fn start() -> Self {
        Self(tokio::time::Instant::now())
    }

    fn now_ms(&self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }

    /// The instant `ms` after start-up.
    fn at(&self, ms: u64) -> tokio::time::Instant {
        self.0 + Duration::from_millis(ms)
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
    let Some(spec) = yarn_client::credentials::Credentials::read_file(&env.token_file)
        .ok()
        .and_then(|creds| start::read_spec(&creds).ok())
    else {
        return;
    };
    if let Some(staging) = &spec.staging {
        let auth = yarn_am_wire::credentials::AmAuth::from_container();
        crate::staging::remove_folder(staging, auth.webhdfs.as_ref()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::finish::unregisters;
    use super::start::master_secret;
    use super::*;
    use yarn_client::credentials::Credentials;

    /// Audit L2: executors (and their tasks) get neither the AMRM nor the RM token, whatever
    /// its alias, nor any yarn-am entry; HDFS and other service tokens go along.
    #[test]
    fn executors_get_the_ams_tokens_but_not_its_yarn_tokens_or_secrets() {
        use yarn_am_wire::credentials::{RM_TOKEN_ALIAS, RM_TOKEN_KIND};
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
                (RM_TOKEN_ALIAS.into(), token(RM_TOKEN_KIND)),
                // The RM token under an alias of the user's choosing: its kind still tells.
                ("rm-from-a-token-file".into(), token(RM_TOKEN_KIND)),
                ("yarn-am.anything".into(), token("SOME_KIND")),
                ("hdfs".into(), token("HDFS_DELEGATION_TOKEN")),
                ("kms".into(), token("kms-dt")),
            ],
            secrets: vec![
                ("yarn-am.master-secret".into(), b"m".to_vec()),
                ("other".into(), b"o".to_vec()),
            ],
        };
        let e = token_refresh::executor_base(&creds);
        assert_eq!(
            e.tokens,
            vec![
                ("hdfs".into(), token("HDFS_DELEGATION_TOKEN")),
                ("kms".into(), token("kms-dt"))
            ]
        );
        assert_eq!(e.secrets, vec![("other".into(), b"o".to_vec())]);
        assert_eq!(master_secret(&creds).unwrap(), "m");
        let err = master_secret(&e).unwrap_err().to_string();
        assert!(err.contains("yarn-am.master-secret"), "{err}");
    }

    /// A small spec comes from the credentials `submit` wrote (so no localizer
    /// runs for the AM container), and stays out of what executors get.
    #[test]
    fn the_spec_is_read_from_the_credentials() {
        use yarn_am_wire::spec::SPEC_ALIAS;
        let spec = yarn_am_wire::spec::tests::spec();
        let creds = Credentials {
            tokens: vec![],
            secrets: vec![(SPEC_ALIAS.into(), spec.to_json().into_bytes())],
        };
        assert_eq!(super::start::read_spec(&creds).unwrap(), spec);
        assert!(token_refresh::executor_base(&creds).secrets.is_empty());
        let bad = Credentials {
            tokens: vec![],
            secrets: vec![(SPEC_ALIAS.into(), b"{".to_vec())],
        };
        let e = format!("{:#}", super::start::read_spec(&bad).unwrap_err());
        assert!(e.contains(SPEC_ALIAS), "{e}");
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
