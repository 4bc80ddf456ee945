//! `yarn-am submit`: stage the yarn-am binary, describe the AM container, hand it to the RM
//! over REST, and optionally follow the application to its end.
//!
//! Staging (see [`crate::staging`]) is a folder per application, local (`file://`) or on
//! HDFS through WebHDFS (`hdfs://`): the binary is copied there first so that a rebuild
//! during the run cannot change the file under YARN (which checks the mtime when it
//! localises it). The AM removes the folder when the application ends; `--wait` removes it
//! too, in case the AM never started; a submission that fails after staging removes it at
//! once.

mod cluster_conf;
mod executors;
mod follow;
mod job_file;
pub mod limits;
pub mod resources;
mod secret;
mod send;
mod stage;
pub mod tokens;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use tracing::warn;
use yarn_client::http_auth::HttpAuth;
use yarn_client::rest::RmRest;

use crate::cli::SubmitArgs;
use crate::cluster::app_report::{exit_code_for, print_report};
use crate::cluster::rm::rm_rest;
use crate::staging::{StagingDir, StagingOptions, StagingRoot};
use yarn_am_core::driver::job::Job;

pub use follow::follow;

use executors::{container_sizes, executor_kinds};
use follow::print_job_summary;
use send::{check_am_resources_allowed, submission_outcome_unknown};
use stage::{stage_and_submit, Environments};

/// Name of the binary inside every container's working directory.
pub const BINARY_NAME: &str = "yarn-am";

/// Name of the script holding `--executor-command`, localised into every executor's
/// working directory and run with bash. A file, not the launch context's command: the
/// NodeManager writes commands into `launch_container.sh` inside `bash -c "..."`, which
/// expands `$(...)`, backticks, `$VAR` and its own `<LOG_DIR>`/`{{...}}` markers before the
/// container's bash sees them (`yarn_client::launch_script`). The file's bytes are exactly
/// what the user typed (Skein ships its scripts the same way).
pub const COMMAND_FILE: &str = "yarn-am-command.sh";

/// The file an executor kind's own command travels in (kind names are plain words, see
/// `core::driver::job::valid_kind_name`).
pub fn kind_command_file(kind: &str) -> String {
    format!("yarn-am-command-{kind}.sh")
}
/// The AM container's copy of `--driver-command` (see `crate::am::driver_process`).
pub const DRIVER_COMMAND_FILE: &str = "yarn-am-driver.sh";
/// Name of the cluster's CA file (`YARN_AM_CA_FILE` at submit) in the AM's and the job's
/// executors' working directories.
pub const CA_FILE: &str = "yarn-am-ca.pem";

/// The launch command of executors that run `--executor-command`: the script, with its
/// output in the container's log directory.
fn command_file_launch() -> String {
    format!("/bin/bash {COMMAND_FILE}")
}

pub fn run(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(submit(args))
}

/// `KEY=VALUE` pairs; the value is taken literally (see `launch_script::literal_env_value`),
/// the key must be a shell variable name (the NodeManager writes `export KEY="VALUE"`).
fn parse_env(pairs: &[String], flag: &str) -> anyhow::Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if yarn_client::launch_script::is_env_name(k) => {
                Ok((k.to_string(), v.to_string()))
            }
            Some((k, _)) if !k.is_empty() => bail!(
                "{flag}: {k:?} is not an environment variable name (letters, digits and _, \
                 not starting with a digit)"
            ),
            _ => bail!("{flag} wants KEY=VALUE, got {p:?}"),
        })
        .collect()
}

/// What the command line asks for, checked before anything is asked of the RM.
struct Asked {
    job: Option<Job>,
    envs: Environments,
    shipped: Vec<resources::ShippedResource>,
}

/// Reads and checks the flags, the job file and the shipped files.
fn check_args(args: &SubmitArgs) -> anyhow::Result<Asked> {
    if args.max_executors.unwrap_or(args.executors) < args.min_executors {
        bail!("--max-executors is below --min-executors");
    }
    let am_env = parse_env(&args.env, "--env")?;
    let job = match &args.job {
        Some(path) => {
            let job =
                job_file::read(path).with_context(|| format!("job file {}", path.display()))?;
            Some(job)
        }
        None => None,
    };
    let executor_env = parse_env(&args.executor_env, "--executor-env")?;
    let shipped = resources::parse_all(&args.file, &args.archive)?;
    if args.public {
        resources::check_public(&shipped, args.rm.keytab.as_deref())?;
        if args.webhdfs.is_none() {
            bail!(
                "--public needs staging on HDFS (--webhdfs): a local staging folder is \
                 private to its user, and a NodeManager's public cache serves every user"
            );
        }
    }
    yarn_am_wire::service_data::check_unique(&args.service_data).map_err(anyhow::Error::msg)?;
    // Kinds clash with a job, or repeat a name: said before anything is asked of the RM.
    executor_kinds(args, job.as_ref())?;
    Ok(Asked {
        job,
        envs: Environments {
            am: am_env,
            executor: executor_env,
        },
        shipped,
    })
}

async fn submit(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let Asked {
        mut job,
        envs,
        shipped,
    } = check_args(&args)?;
    // The Kerberos login (if the cluster wants one) is checked here, before anything exists.
    let rest = rm_rest(&args.rm)?;
    check_am_resources_allowed(&args, &rest)?;
    let auth = rest.auth().clone();
    let user = crate::cluster::rm::rm_user(&rest, &args.rm);
    // Before the RM hands out an id: a wrong staging place fails with nothing created.
    let root = StagingRoot::open(&StagingOptions {
        webhdfs: args.webhdfs.clone(),
        hdfs_uri: args.hdfs_uri.clone(),
        root: args.staging_dir.clone(),
        user,
        auth: auth.clone(),
        timeout: Duration::from_secs(args.webhdfs_timeout),
    })
    .await?;
    // HDFS inputs become tasks here, before the RM hands out an id: a bad input (no match,
    // missing, empty, unreadable) fails with nothing submitted.
    if let Some(j) = job.as_mut() {
        crate::cluster::hdfs_listing::expand(j, root.webhdfs(), &rest)
            .await
            .context("listing the job's HDFS inputs")?;
    }

    let new_app = rest
        .new_application()
        .await
        .context("asking the RM for a new application id")?;
    let app_id = new_app.application_id;
    if let Some(max) = new_app.maximum_resource_capability {
        // The id is only reserved: an app never submitted leaves nothing behind.
        limits::check(&container_sizes(&args, job.as_ref())?, max)?;
    }
    let mut stager = root.app_folder(&app_id).await?;
    let staging = stager.dir();
    let submitted = stage_and_submit(&args, &rest, &app_id, &mut stager, job, envs, shipped).await;
    let secret = match submitted {
        Ok(secret) => secret,
        Err(e) if submission_outcome_unknown(&e) => {
            // The RM may have taken the app after all; its AM would need the files.
            warn!(
                "keeping the staging folder {} (the RM may have accepted {app_id})",
                staging.describe()
            );
            return Err(e);
        }
        Err(e) => {
            // The RM refused the app or never heard of it: nobody else will clean up.
            crate::staging::remove_folder(&staging, Some(&auth)).await;
            return Err(e);
        }
    };
    println!("submitted {app_id}");
    println!("driver API secret: {}", secret.display());
    println!("staging folder: {}", staging.describe());
    report_and_wait(&args, &rest, &app_id, &staging, &auth).await
}

/// Shows the app's tracking URL and, with `--wait`, follows it to its end, then removes its
/// staging folder and reports how it ended.
async fn report_and_wait(
    args: &SubmitArgs,
    rest: &RmRest,
    app_id: &str,
    staging: &StagingDir,
    auth: &HttpAuth,
) -> anyhow::Result<ExitCode> {
    let report = rest.app(app_id).await.context("reading back the app")?;
    if let Some(url) = &report.tracking_url {
        println!("tracking URL: {url}");
    }
    if !args.wait {
        return Ok(ExitCode::SUCCESS);
    }
    let report = follow(rest, app_id, Duration::from_secs(args.wait_timeout)).await?;
    if !report.is_final() {
        // `--wait-timeout` passed: the app keeps running (and needs its staging folder).
        eprintln!(
            "{app_id} still {} after {} s; it keeps running (yarn-am kill {app_id} stops it)",
            report.state, args.wait_timeout
        );
        print_report(&report);
        return Ok(exit_code_for(&report));
    }
    crate::staging::remove_folder(staging, Some(auth)).await;
    print_report(&report);
    if args.job.is_some() {
        print_job_summary(&report.diagnostics);
    }
    Ok(exit_code_for(&report))
}

/// Helpers for the tests of `submit`'s parts.
#[cfg(test)]
pub(crate) mod test_support {
    use std::time::Duration;

    use yarn_client::http_auth::HttpAuth;
    use yarn_client::rest::RmRest;

    use crate::cli::SubmitArgs;

    /// `yarn-am submit` with `extra` flags, as parsed.
    pub(crate) fn args(extra: &[&str]) -> SubmitArgs {
        use clap::Parser;
        let mut argv = vec!["yarn-am", "submit"];
        argv.extend_from_slice(extra);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Submit(a) => *a,
            _ => unreachable!(),
        }
    }

    /// An RM REST client authenticating with `auth` (never called).
    pub(crate) fn rest(auth: HttpAuth) -> RmRest {
        RmRest::new("rm:8088", "alice", Duration::from_secs(1))
            .unwrap()
            .with_auth(auth)
    }
}
