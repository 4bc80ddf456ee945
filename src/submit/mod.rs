//! `yarn-am submit`: stage the yarn-am binary, describe the AM container, hand it to the RM
//! over REST, and optionally follow the application to its end.
//!
//! Staging (see [`crate::staging`]) is a folder per application, local (`file://`) or on
//! HDFS through WebHDFS (`hdfs://`): the binary is copied there first so that a rebuild
//! during the run cannot change the file under YARN (which checks the mtime when it
//! localises it). The AM removes the folder when the application ends; `--wait` removes it
//! too, in case the AM never started; a submission that fails after staging removes it at
//! once.

pub mod input_listing;
mod job_file;
pub mod limits;
pub mod resources;
pub mod service_data;
pub mod tokens;

use std::collections::BTreeMap;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use tracing::warn;
use yarn_client::client_rm::{ClientRm, ClientRmError};
use yarn_client::rest::{AmContainerSpec, AppReport, Resource, RestError, RmRest, Submission};
use yarn_client::rpc::{RpcConfig, RpcError};

use crate::cli::SubmitArgs;
use crate::protocol::spec::{AppSpec, ExecutorKind, ExecutorSpec, SPEC_FILE};
use crate::staging::{ResourceKind, StagedFile, Stager, StagingOptions, StagingRoot, Visibility};
use crate::tools::rm::hadoop_conf;
use crate::tools::rm::rm_rest;
use crate::tools::status::{exit_code_for, print_report};

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

/// The addresses of an RM service (the scheduler for the AM, the client port for an RPC
/// submission): the flag, then yarn-site.xml (one per RM under HA), then the RM web host with
/// the service's default port. A configuration that cannot be read is an error only here,
/// where it is needed.
fn rm_addresses(
    given: Option<&String>,
    service: yarn_client::conf::RmService,
    rest: &RmRest,
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
) -> anyhow::Result<Vec<String>> {
    if let Some(a) = given {
        return Ok(vec![a.clone()]);
    }
    let conf = conf.as_ref().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    if let Some(conf) = conf {
        let c = yarn_client::conf::rm_candidates(conf, service)?;
        return Ok(c.into_iter().map(|c| c.address.to_string()).collect());
    }
    let host = rest
        .base_url()
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .rsplit_once(':')
        .map(|(h, _)| h.to_string())
        .unwrap_or_else(|| rest.base_url().to_string());
    Ok(vec![format!("{host}:{}", service.default_port())])
}

/// The NodeManagers' heartbeat interval, for the AM's spread wait. Best effort: without a
/// readable value the AM uses YARN's default, so a bad setting is logged, not fatal.
fn nm_heartbeat_ms(conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>) -> Option<u64> {
    const KEY: &str = "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms";
    // Its default is YARN's: one second, the AM's own default spread wait.
    let default = crate::core::allocator::tracker::DEFAULT_SPREAD_WAIT_MS;
    match conf.as_ref().ok()?.as_ref()?.get_u64(KEY, default) {
        Ok(ms) => Some(ms),
        Err(e) => {
            warn!(%e, "ignoring {KEY}; the AM assumes YARN's default");
            None
        }
    }
}

/// Whether the AM may accept a switch to SIMPLE after offering a token (Hadoop's key,
/// default false). A value that is not a boolean is an error: a typo must not decide a
/// security setting. Without a readable configuration: false.
fn fallback_to_simple(
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
) -> anyhow::Result<bool> {
    let key = yarn_client::rpc::FALLBACK_TO_SIMPLE_KEY;
    match conf.as_ref().ok().and_then(Option::as_ref) {
        Some(c) => c
            .get_bool(key, false)
            .with_context(|| format!("reading {key}")),
        None => Ok(false),
    }
}

/// `hadoop.rpc.protection` from the Hadoop configuration, checked here so that a typo fails
/// the submit, not the AM. `None` without a configuration or the key (Hadoop's default,
/// `authentication`).
fn rpc_protection(
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
) -> anyhow::Result<Option<String>> {
    let key = yarn_client::rpc::PROTECTION_KEY;
    let Some(c) = conf.as_ref().ok().and_then(Option::as_ref) else {
        return Ok(None);
    };
    let Some(value) = c.get(key).with_context(|| format!("reading {key}"))? else {
        return Ok(None);
    };
    match yarn_client::rpc::Qop::minimum_from_protection(&value) {
        Some(_) => Ok(Some(value.trim().to_string())),
        None => bail!("{key} is {value:?}: expected authentication, integrity or privacy (a comma list of them)"),
    }
}

async fn submit(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    if args.max_executors.unwrap_or(args.executors) < args.min_executors {
        bail!("--max-executors is below --min-executors");
    }
    let am_env = parse_env(&args.env, "--env")?;
    let mut job = match &args.job {
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
    service_data::check_unique(&args.service_data).map_err(anyhow::Error::msg)?;
    // Kinds clash with a job, or repeat a name: said before anything is asked of the RM.
    executor_kinds(&args, job.as_ref())?;
    // The Kerberos login (if the cluster wants one) is checked here, before anything exists.
    let rest = rm_rest(&args.rm)?;
    check_am_resources_allowed(&args, &rest)?;
    let auth = rest.auth().clone();
    let user = crate::tools::rm::rm_user(&rest, &args.rm);
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
        crate::submit::input_listing::expand(j, root.webhdfs(), &rest)
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
    let secret = match stage_and_submit(
        &args,
        &rest,
        &app_id,
        &mut stager,
        job,
        Environments {
            am: am_env,
            executor: executor_env,
        },
        shipped,
    )
    .await
    {
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
            staging.remove_with(Some(&auth)).await;
            return Err(e);
        }
    };
    println!("submitted {app_id}");
    println!("driver API secret: {}", secret.display());
    println!("staging folder: {}", staging.describe());
    let report = rest.app(&app_id).await.context("reading back the app")?;
    if let Some(url) = &report.tracking_url {
        println!("tracking URL: {url}");
    }
    if !args.wait {
        return Ok(ExitCode::SUCCESS);
    }
    let report = follow(&rest, &app_id, Duration::from_secs(args.wait_timeout)).await?;
    if !report.is_final() {
        // `--wait-timeout` passed: the app keeps running (and needs its staging folder).
        eprintln!(
            "{app_id} still {} after {} s; it keeps running (yarn-am kill {app_id} stops it)",
            report.state, args.wait_timeout
        );
        print_report(&report);
        return Ok(exit_code_for(&report));
    }
    staging.remove_with(Some(&auth)).await;
    print_report(&report);
    if args.job.is_some() {
        print_job_summary(&report.diagnostics);
    }
    Ok(exit_code_for(&report))
}

/// The executors' container size: the job's, else the flags'.
fn executor_size(
    args: &SubmitArgs,
    job: Option<&crate::core::driver::job::Job>,
) -> anyhow::Result<Resource> {
    Ok(match job {
        Some(j) => Resource {
            memory: i64::from(j.executor.memory_mb),
            vcores: i32::try_from(j.executor.cores).context("executor.cores above i32::MAX")?,
        },
        None => Resource {
            memory: args.executor_memory,
            vcores: args.executor_vcores,
        },
    })
}

/// The AM's and the executors' container sizes, with the flag or job field that sets each.
fn container_sizes(
    args: &SubmitArgs,
    job: Option<&crate::core::driver::job::Job>,
) -> anyhow::Result<Vec<limits::Asked>> {
    let am = limits::Asked {
        who: "AM".into(),
        size: Resource {
            memory: args.am_memory,
            vcores: args.am_vcores,
        },
        memory_flag: "--am-memory".into(),
        vcores_flag: "--am-vcores".into(),
    };
    let (memory_flag, vcores_flag) = match job {
        Some(_) => (
            "executor.memory_mb in the job file",
            "executor.cores in the job file",
        ),
        None => ("--executor-memory", "--executor-vcores"),
    };
    let executor = limits::Asked {
        who: "executor".into(),
        size: executor_size(args, job)?,
        memory_flag: memory_flag.into(),
        vcores_flag: vcores_flag.into(),
    };
    let mut all = vec![am, executor];
    for k in executor_kinds(args, job)? {
        let (memory_flag, vcores_flag) = match job {
            Some(_) => (
                format!("kinds.{}.memory_mb in the job file", k.name),
                format!("kinds.{}.cores in the job file", k.name),
            ),
            None => (
                format!("--executor-kind {}:memory=", k.name),
                format!("--executor-kind {}:vcores=", k.name),
            ),
        };
        all.push(limits::Asked {
            who: format!("executor kind {}", k.name),
            size: Resource {
                memory: k.memory_mb,
                vcores: k.vcores,
            },
            memory_flag,
            vcores_flag,
        });
    }
    Ok(all)
}

/// The host exclusion settings when any flag sets one (the others keep their defaults).
fn host_exclusion(args: &SubmitArgs) -> Option<crate::protocol::spec::HostExclusion> {
    use crate::core::am::held_back as d;
    if args.host_exclusion_failures.is_none()
        && args.host_exclusion_window.is_none()
        && args.host_exclusion_timeout.is_none()
    {
        return None;
    }
    Some(crate::protocol::spec::HostExclusion {
        max_failures: args
            .host_exclusion_failures
            .unwrap_or(d::DEFAULT_MAX_FAILURES_PER_HOST),
        window_ms: args
            .host_exclusion_window
            .map_or(d::DEFAULT_FAILURE_WINDOW_MS, |s| s * 1000),
        exclude_ms: args
            .host_exclusion_timeout
            .map_or(d::DEFAULT_EXCLUDE_MS, |s| s * 1000),
    })
}

/// The app's further executor kinds: the job file's `kinds`, else `--executor-kind`s (their
/// commands as typed, not yet staged).
fn executor_kinds(
    args: &SubmitArgs,
    job: Option<&crate::core::driver::job::Job>,
) -> anyhow::Result<Vec<ExecutorKind>> {
    let Some(j) = job else {
        let mut seen = std::collections::HashSet::new();
        if let Some(k) = args.executor_kind.iter().find(|k| !seen.insert(&k.name)) {
            anyhow::bail!("--executor-kind {} is given twice", k.name);
        }
        if let Some(max) = args.max_executor_kinds {
            let declared = 1 + args.executor_kind.len();
            if (max as usize) < declared {
                anyhow::bail!(
                    "--max-executor-kinds {max} is fewer than the {declared} kinds the app starts with (the default and each --executor-kind)"
                );
            }
        }
        return Ok(args.executor_kind.clone());
    };
    if !args.executor_kind.is_empty() {
        anyhow::bail!("--executor-kind does not apply to a job: declare the job file's `kinds`");
    }
    if args.max_executor_kinds.is_some() {
        anyhow::bail!(
            "--max-executor-kinds does not apply to a job: a job's kinds are all in its file"
        );
    }
    j.kinds
        .iter()
        .map(|(name, e)| {
            Ok(ExecutorKind {
                name: name.clone(),
                memory_mb: i64::from(e.memory_mb),
                vcores: i32::try_from(e.cores)
                    .with_context(|| format!("kinds.{name}.cores above i32::MAX"))?,
                initial: e.initial_executors.unwrap_or(e.min_executors),
                min: e.min_executors,
                max: e.max_executors,
                node_label: e.node_label.clone(),
                resources: e.resources.clone(),
                command: None,
            })
        })
        .collect()
}

/// True when the submission call got no answer (a timeout, a dropped connection): the RM
/// may have accepted the application anyway.
fn submission_outcome_unknown(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<RestError>(),
            Some(RestError::Unreachable { .. })
        ) || c
            .downcast_ref::<ClientRmError>()
            .is_some_and(ClientRmError::outcome_unknown)
    })
}

/// `--am-resource` needs the RPC submission, which speaks SIMPLE only (no Kerberos on Hadoop
/// IPC yet): refused on a secure cluster before anything is staged or reserved.
fn check_am_resources_allowed(args: &SubmitArgs, rest: &RmRest) -> anyhow::Result<()> {
    if args.am_resource.is_empty() {
        return Ok(());
    }
    if !matches!(rest.auth(), yarn_client::http_auth::HttpAuth::Simple { .. }) {
        bail!(
            "--am-resource needs a submission over the RM's client port (the REST submission \
             drops the AM's resource types), and yarn-am speaks only SIMPLE authentication \
             there, not Kerberos: not possible on this secure cluster yet"
        );
    }
    Ok(())
}

/// Submits over ApplicationClientProtocol (the RM's client port), trying the RMs in turn
/// under HA: a standby answers `StandbyException`, a stopped RM refuses the connection;
/// both are safe to pass over (nothing was submitted there). Any other failure is final.
async fn submit_over_rpc(
    args: &SubmitArgs,
    rest: &RmRest,
    conf: &anyhow::Result<Option<yarn_client::conf::Configuration>>,
    sub: &Submission,
) -> anyhow::Result<()> {
    let addrs = rm_addresses(
        args.rm_client.as_ref(),
        yarn_client::conf::RmService::Client,
        rest,
        conf,
    )?;
    let user = crate::tools::rm::rm_user(rest, &args.rm);
    let limit = Duration::from_secs(args.rm.timeout.max(1));
    let cfg = RpcConfig {
        connect_timeout: limit,
        call_timeout: limit,
        ..RpcConfig::default()
    };
    let mut passed_over = Vec::new();
    for addr in &addrs {
        let client = ClientRm::simple(addr, &user, cfg.clone());
        match client.submit(sub).await {
            Ok(()) => return Ok(()),
            Err(ClientRmError::Refused { remote, .. }) if remote.is_class("StandbyException") => {
                passed_over.push(format!("{addr}: standby"));
            }
            Err(ClientRmError::Rpc(e @ RpcError::Connect { .. })) if addrs.len() > 1 => {
                passed_over.push(e.to_string());
            }
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("the RM client port {addr}")))
            }
        }
    }
    bail!(
        "no active RM on the client port(s): {}",
        passed_over.join("; ")
    )
}

/// Stages the binary, the `--file`s and the spec, then submits the AM container. Returns
/// where the driver-API secret was written.
async fn stage_and_submit(
    args: &SubmitArgs,
    rest: &RmRest,
    app_id: &str,
    stager: &mut Stager,
    job: Option<crate::core::driver::job::Job>,
    envs: Environments,
    shipped: Vec<resources::ShippedResource>,
) -> anyhow::Result<PathBuf> {
    let Environments {
        am: am_env,
        executor: executor_env,
    } = envs;
    let binary = match &args.am_binary {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("locating the yarn-am binary")?,
    };
    let mut uploads = Uploads::default();
    let (staged_binary, sent) = stager
        .put_shared(&binary, BINARY_NAME, ResourceKind::File)
        .await?;
    uploads.count(&staged_binary, sent);
    let mut local_resources = BTreeMap::new();
    local_resources.insert(BINARY_NAME.to_string(), staged_binary.local_resource());
    // The cluster's CA for https:// RM and NameNode addresses (`yarn_client::tls`): the AM
    // (node list, journal, clean-up) and the job's executors (a next attempt's URL) call
    // them too, so the file travels as a local resource and they find it under the same
    // variable, relative to their working directory.
    let ca_file = match yarn_client::tls::TlsTrust::from_env() {
        yarn_client::tls::TlsTrust::CaFile(path) => Some(stager.put_file(&path, CA_FILE).await?),
        yarn_client::tls::TlsTrust::System => None,
    };
    if let Some(ca) = &ca_file {
        local_resources.insert(CA_FILE.to_string(), ca.local_resource());
    }
    let mut files = BTreeMap::new();
    for r in shipped {
        let staged = match &r.source {
            resources::Source::Local(path) => {
                let (staged, sent) = if args.public {
                    stager.put_public(path, r.kind).await?
                } else {
                    stager.put_shared(path, &r.name, r.kind).await?
                };
                uploads.count(&staged, sent);
                staged
            }
            resources::Source::Hdfs { url, path } => {
                let visibility = if args.public {
                    Visibility::Public
                } else {
                    Visibility::Private
                };
                stager.reference_hdfs(url, path, r.kind, visibility).await?
            }
        };
        if args.driver_command.is_some() {
            // The driver beside the AM gets the executors' files too (its runtime, its app).
            local_resources.insert(r.name.clone(), staged.local_resource());
        }
        files.insert(r.name, staged);
    }
    let driver = match &args.driver_command {
        Some(cmd) => {
            let script = stager
                .put_bytes(DRIVER_COMMAND_FILE, cmd.clone().into_bytes())
                .await?;
            local_resources.insert(DRIVER_COMMAND_FILE.to_string(), script.local_resource());
            Some(crate::protocol::spec::DriverSpec {
                command_file: DRIVER_COMMAND_FILE.to_string(),
            })
        }
        None => None,
    };
    eprintln!("{}", uploads.describe());
    if job.is_none() {
        // The command travels as a file, byte for byte (see `COMMAND_FILE`).
        let script = stager
            .put_bytes(COMMAND_FILE, args.executor_command.clone().into_bytes())
            .await?;
        files.insert(COMMAND_FILE.to_string(), script);
    }
    let mut kinds = executor_kinds(args, job.as_ref())?;
    for k in &mut kinds {
        // A kind's own command travels as its own file, like the default kind's.
        if let Some(cmd) = k.command.take() {
            let file = kind_command_file(&k.name);
            let script = stager.put_bytes(&file, cmd.into_bytes()).await?;
            files.insert(file.clone(), script);
            k.command = Some(format!("/bin/bash {file}"));
        }
    }

    let acls = args.acls();
    let mut executor = ExecutorSpec {
        command: command_file_launch(),
        memory_mb: args.executor_memory,
        vcores: args.executor_vcores,
        initial: args.executors,
        min: args.min_executors,
        max: args.max_executors.unwrap_or(args.executors),
        env: executor_env,
        files,
        acls: acls.clone(),
        node_label: args.node_label.clone(),
        resources: args.executor_resource.iter().cloned().collect(),
        kinds,
        max_kinds: args.max_executor_kinds.unwrap_or(0),
    };
    if job.is_none() {
        // The executor command can reach the app's key-value store with `./yarn-am kv`.
        executor
            .files
            .insert(BINARY_NAME.into(), staged_binary.clone());
    }
    if let Some(j) = &job {
        // Executors run our own binary, which polls the AM for the job's tasks.
        executor
            .files
            .insert(BINARY_NAME.into(), staged_binary.clone());
        executor.command = format!("./{BINARY_NAME} executor");
        if let Some(ca) = &ca_file {
            executor.files.insert(CA_FILE.into(), ca.clone());
            executor
                .env
                .insert(yarn_client::tls::CA_FILE_ENV.into(), CA_FILE.into());
        }
        // Executors log what the AM told them (tasks, "shut down") like the AM does.
        executor
            .env
            .entry("YARN_AM_LOG".into())
            .or_insert_with(|| "info".into());
        let size = executor_size(args, job.as_ref())?;
        (executor.memory_mb, executor.vcores) = (size.memory, size.vcores);
        executor.initial = j.initial_executors();
        executor.min = j.executor.min_executors;
        executor.max = j.executor.max_executors;
        // The job's own resources and label for its default kind; the flags add to them.
        let flags = std::mem::take(&mut executor.resources);
        executor.resources = j.executor.resources.clone();
        executor.resources.extend(flags);
        if executor.node_label.is_none() {
            executor.node_label.clone_from(&j.executor.node_label);
        }
    }
    let max_executor_failures = args
        .max_executor_failures
        .unwrap_or_else(|| (2 * executor.max.min(1 << 20)).max(3));
    let conf = hadoop_conf();
    // On a secure cluster: delegation tokens for the AM, its executors and the NMs.
    let conf_ref = conf.as_ref().ok().and_then(Option::as_ref);
    let tokens = crate::submit::tokens::collect(rest, stager.webhdfs(), conf_ref).await?;
    let token_refresh =
        match crate::submit::tokens::stage_keytab(&args.rm, stager, conf_ref).await? {
            Some((staged_keytab, refresh)) => {
                local_resources.insert(refresh.keytab.clone(), staged_keytab.local_resource());
                Some(refresh)
            }
            None => None,
        };
    let spec = AppSpec {
        rm_scheduler: rm_addresses(
            args.rm_scheduler.as_ref(),
            yarn_client::conf::RmService::Scheduler,
            rest,
            &conf,
        )?,
        rm_web: rest.base_url().to_string(),
        executor,
        staging: Some(stager.dir()),
        max_executor_failures,
        executor_failures_validity_ms: args.executor_failures_validity_interval,
        host_exclusion: host_exclusion(args),
        job,
        nm_heartbeat_ms: nm_heartbeat_ms(&conf),
        fallback_to_simple_auth_allowed: fallback_to_simple(&conf)?,
        rpc_protection: rpc_protection(&conf)?,
        token_refresh,
        executor_silence_timeout_ms: Some(args.executor_silence_timeout.saturating_mul(1000)),
        strategy: (args.strategy != crate::core::allocator::Strategy::Default)
            .then_some(args.strategy),
        // The driver's exit ends the app, not the executors'.
        keep_running: args.keep_running || driver.is_some(),
        driver,
    };
    // In the credentials when small: no localizer for the AM container (`protocol::spec`).
    let spec_json = spec.to_json();
    let inline_spec = if crate::protocol::spec::travels_inline(&spec_json) {
        Some(spec_json.into_bytes())
    } else {
        let staged_spec = stager.put_bytes(SPEC_FILE, spec_json.into_bytes()).await?;
        local_resources.insert(SPEC_FILE.to_string(), staged_spec.local_resource());
        None
    };
    let secret = crate::http::new_secret();
    // The AM's TLS certificate, made here beside the secret so that the secret file can
    // carry its fingerprint and every AM attempt serves the same one (`protocol::tls`).
    let cert = crate::protocol::tls::AppCert::generate()?;
    let secret_file = write_secret(args, app_id, &secret, &cert)?;
    let mut environment = am_env;
    environment
        .entry("YARN_AM_LOG".into())
        .or_insert_with(|| "info".into());
    environment.insert("RUST_BACKTRACE".into(), "1".into());
    if ca_file.is_some() {
        environment.insert(yarn_client::tls::CA_FILE_ENV.into(), CA_FILE.into());
    }
    // The AM must know whether its attempt is the last (a failure unregisters only then, so
    // that YARN retries earlier ones). The RM does not put this in the AM's environment
    // (checked on Hadoop 3.4.1), so we do, under the name Hadoop's ApplicationConstants gives
    // it. If yarn.resourcemanager.am.max-attempts caps it lower, the real last attempt exits
    // 1 still registered and the RM fails the app with that exit's diagnostics.
    environment.insert("MAX_APP_ATTEMPTS".into(), args.max_attempts.to_string());
    // Values reach the AM exactly as given, whatever the launch script would expand.
    let environment = environment
        .into_iter()
        .map(|(k, v)| (k, yarn_client::launch_script::literal_env_value(&v)))
        .collect();

    let submission = Submission {
        application_id: app_id.to_string(),
        name: args.name.clone(),
        queue: args.queue.clone(),
        application_type: args.application_type.clone(),
        tags: args.tag.clone(),
        max_app_attempts: args.max_attempts,
        // A crashed AM's next attempt adopts the executors still running and resumes the
        // job from its journal (see `am::journal`), instead of YARN killing them all.
        keep_containers: args.max_attempts > 1,
        am_resource: Resource {
            memory: args.am_memory,
            vcores: args.am_vcores,
        },
        am: AmContainerSpec {
            local_resources,
            environment,
            command: format!("./{BINARY_NAME} am 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"),
            credentials: am_credentials(&secret, &cert, tokens, inline_spec, &args.service_data),
            acls: args.acls(),
        },
        priority: args.priority,
        attempt_failures_validity_interval_ms: args.attempt_failures_validity_interval,
        log_aggregation: args.log_aggregation(),
        am_node_label: args.am_node_label.clone(),
        am_resources: args.am_resource.clone(),
        lifetime: args.lifetime.map(Duration::from_secs),
    };
    let submitted_at = std::time::SystemTime::now();
    if submission.needs_rpc() {
        // The lifetime travels in the submission itself here.
        return submit_over_rpc(args, rest, &conf, &submission)
            .await
            .with_context(|| format!("submitting {app_id} over IPC (for --am-resource)"))
            .map(|()| secret_file);
    }
    rest.submit(&submission)
        .await
        .with_context(|| format!("submitting {app_id}"))?;
    if let Some(lifetime) = submission.lifetime {
        // The REST submission has no timeout field: the lifetime is set right after. An app
        // the user bounded must not run unbounded, so a refusal kills it.
        let expiry = submitted_at + lifetime;
        if let Err(e) = set_lifetime(rest, app_id, expiry).await {
            let _ = rest
                .kill(app_id, "yarn-am submit could not set its --lifetime")
                .await;
            return Err(e.context(format!("setting the lifetime of {app_id} (killed it)")));
        }
    }
    Ok(secret_file)
}

/// Sets the app's lifetime once the RM has saved it: it refuses a timeout while the app is
/// NEW or NEW_SAVING ("can not update timeout"), which lasts milliseconds (waited for up to
/// 10 s).
async fn set_lifetime(
    rest: &RmRest,
    app_id: &str,
    expiry: std::time::SystemTime,
) -> anyhow::Result<()> {
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let state = rest.app(app_id).await?.state;
        if !matches!(state.as_str(), "NEW" | "NEW_SAVING") {
            break;
        }
        if std::time::Instant::now() >= give_up {
            bail!("{app_id} is still {state} after 10 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(rest.set_lifetime(app_id, expiry).await?)
}

/// The job summary the AM puts on the diagnostics' second line, for people: tasks by
/// locality level and the executor count over time.
fn print_job_summary(diagnostics: &str) {
    let Some((json, summary)) =
        crate::core::driver::report::JobSummary::from_diagnostics(diagnostics)
    else {
        println!("(no job summary in the diagnostics)");
        return;
    };
    let l = &summary.by_locality;
    println!(
        "job {}: {}/{} tasks succeeded in {:.1} s",
        summary.name,
        summary.tasks_succeeded,
        summary.tasks_total,
        summary.wall_time_ms as f64 / 1000.0
    );
    println!(
        "tasks by locality: NODE_LOCAL {}  NO_PREF {}  RACK_LOCAL {}  ANY {}",
        l.node_local, l.no_pref, l.rack_local, l.any
    );
    let timeline: Vec<String> = summary
        .executors_over_time
        .iter()
        .map(|s| format!("{:.1}s:{}", s.t_ms as f64 / 1000.0, s.executors))
        .collect();
    println!("executors over time: {}", timeline.join(" "));
    println!("summary JSON: {json}");
}

/// The AM container's credentials: everything secret the AM gets travels here, never in its
/// environment, command line or spec file (the NodeManager writes those into
/// `launch_container.sh` in the container's log dir, which its web UI serves). Today that is
/// the application's master secret (see [`crate::protocol::poll`]) and the driver API's
/// certificate with its private key (see [`crate::protocol::tls`]) and the auxiliary-service
/// data of `--service-data` (see [`service_data`]); delegation tokens for a
/// secure cluster go beside them. A small spec travels here too (not a secret: to spare the
/// AM container a localizer, see [`crate::protocol::spec`]).
fn am_credentials(
    master_secret: &str,
    cert: &crate::protocol::tls::AppCert,
    tokens: Vec<(String, yarn_client::token::Token)>,
    spec: Option<Vec<u8>>,
    service_data: &[service_data::ServiceData],
) -> yarn_client::credentials::Credentials {
    let mut secrets = vec![(
        crate::protocol::credentials::MASTER_SECRET_ALIAS.to_string(),
        master_secret.as_bytes().to_vec(),
    )];
    secrets.extend(cert.credential_secrets());
    if let Some(spec) = spec {
        secrets.push((crate::protocol::spec::SPEC_ALIAS.to_string(), spec));
    }
    // Auxiliary-service data (often a secret) for the AM to put in every executor's launch
    // context; under yarn-am aliases, so no container the AM starts gets them as credentials.
    secrets.extend(service_data.iter().map(|d| {
        (
            crate::protocol::credentials::service_data_alias(&d.name),
            d.bytes.clone(),
        )
    }));
    yarn_client::credentials::Credentials { tokens, secrets }
}

/// Keeps the driver-API secret, with the fingerprint of the certificate the AM will serve,
/// where only this user can read it (the format: [`crate::protocol::driver_secret`]).
fn write_secret(
    args: &SubmitArgs,
    app_id: &str,
    secret: &str,
    cert: &crate::protocol::tls::AppCert,
) -> anyhow::Result<PathBuf> {
    let dir = args
        .secret_dir
        .clone()
        .unwrap_or_else(crate::protocol::driver_secret::default_dir);
    // 0700 and ours; an existing folder that others could read is closed up.
    if crate::staging::private_fs::ensure_private_dir(&dir)
        .context("the secret folder is not safe")?
    {
        warn!(dir = %dir.display(), "the secret folder was readable by others; now 0700");
    }
    let path = crate::protocol::driver_secret::file_of(&dir, app_id);
    // O_NOFOLLOW: a link planted in our place is refused, not written through.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    // `mode` applies only to a new file.
    f.set_permissions(
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600),
    )
    .with_context(|| format!("setting the mode of {}", path.display()))?;
    let text = crate::protocol::driver_secret::DriverSecret::render(secret, cert.fingerprint());
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    Ok(path)
}

/// How long `--wait` rides out an RM whose REST API fails (an RM restart takes tens of
/// seconds; the application keeps running meanwhile).
const REST_OUTAGE_LIMIT: Duration = Duration::from_secs(120);

/// Whether a failed app report may well succeed a moment later: the RM unreachable or
/// restarting (5xx, or 404 while it has not yet recovered its apps), or an odd reply from
/// a half-started web server. Other statuses (401, 403) will not get better.
fn transient(e: &RestError) -> bool {
    match e {
        // Redirects in a ring: both RMs standby for a moment during an HA failover.
        RestError::Unreachable { .. }
        | RestError::BadReply { .. }
        | RestError::TooManyRedirects { .. } => true,
        RestError::Status { status, .. } => *status >= 500 || *status == 404,
        // A missing or expired ticket does not come back by waiting, nor does a server
        // that redirects to strangers or sends more than the reply limit.
        RestError::Kerberos { .. }
        | RestError::NeedsKerberos { .. }
        | RestError::ForeignRedirect { .. }
        | RestError::TooLarge { .. }
        | RestError::Tls(_) => false,
    }
}

/// Prints a line whenever the state or the number of running containers changes, until the
/// application ends or `limit` passes; returns the last report (not final when `limit`
/// passed: `exit_code_for` makes that 4, "still running"). RM REST errors that may pass
/// are ridden out for [`REST_OUTAGE_LIMIT`].
/// The application type yarn-am submits as (what the RM lists and `yarn-am list` asks).
pub const APPLICATION_TYPE: &str = "YARN-AM";

/// What `submit --wait` shows of the app while it waits: elapsed time, state, the progress
/// the AM reports (tasks done for a job) and the containers running.
fn progress_line(elapsed: Duration, app_id: &str, r: &AppReport) -> String {
    format!(
        "[{:>5.1}s] {app_id}: {} {:.0}% ({} container(s) running)",
        elapsed.as_secs_f64(),
        r.state,
        r.progress,
        r.running_containers.max(0)
    )
}

pub async fn follow(rest: &RmRest, app_id: &str, limit: Duration) -> anyhow::Result<AppReport> {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    let start = std::time::Instant::now();
    let mut last = (String::new(), -1, -1);
    let mut failing_since: Option<std::time::Instant> = None;
    loop {
        let r = match rest.app(app_id).await {
            Ok(r) => {
                if failing_since.take().is_some() {
                    eprintln!(
                        "[{:>5.1}s] the ResourceManager answers again",
                        start.elapsed().as_secs_f64()
                    );
                }
                r
            }
            Err(e) if transient(&e) => {
                let since = *failing_since.get_or_insert_with(|| {
                    eprintln!(
                        "[{:>5.1}s] {app_id}: cannot read the app's state ({e}); retrying for up to {} s",
                        start.elapsed().as_secs_f64(),
                        REST_OUTAGE_LIMIT.as_secs()
                    );
                    std::time::Instant::now()
                });
                if since.elapsed() >= REST_OUTAGE_LIMIT {
                    return Err(anyhow::Error::new(e).context(format!(
                        "the ResourceManager failed for {} s while following {app_id}",
                        REST_OUTAGE_LIMIT.as_secs()
                    )));
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let line = progress_line(start.elapsed(), app_id, &r);
        if terminal {
            // One line, drawn again every second; the final state ends it.
            eprint!("\r\x1b[K{line}");
            if r.is_final() || start.elapsed() >= limit {
                eprintln!();
            }
        } else {
            // Plain lines for logs: one per change of state, containers or tenth of progress.
            let now = (
                r.state.clone(),
                r.running_containers,
                (r.progress / 10.0) as i64,
            );
            if now != last {
                eprintln!("{line}");
                last = now;
            }
        }
        if r.is_final() {
            return Ok(r);
        }
        if start.elapsed() >= limit {
            return Ok(r);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod am_resource_tests {
    use super::*;
    use yarn_client::conf::{Configuration, RmService};
    use yarn_client::http_auth::HttpAuth;

    pub(super) fn args(extra: &[&str]) -> SubmitArgs {
        use clap::Parser;
        let mut argv = vec!["yarn-am", "submit"];
        argv.extend_from_slice(extra);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Submit(a) => *a,
            _ => unreachable!(),
        }
    }

    fn rest(auth: HttpAuth) -> RmRest {
        RmRest::new("rm:8088", "alice", Duration::from_secs(1))
            .unwrap()
            .with_auth(auth)
    }

    #[test]
    fn am_resources_parse_and_are_refused_where_ipc_would_need_kerberos() {
        let a = args(&[
            "--am-resource",
            "yarn.io/gpu=1",
            "--am-resource",
            "example.com/x=2",
        ]);
        assert_eq!(
            a.am_resource,
            [
                ("yarn.io/gpu".to_string(), 1),
                ("example.com/x".to_string(), 2)
            ]
        );
        assert!(check_am_resources_allowed(&a, &rest(HttpAuth::simple("alice"))).is_ok());
        let secure = rest(HttpAuth::Delegation {
            token: "not-a-real-token".into(),
        });
        let e = check_am_resources_allowed(&a, &secure).unwrap_err();
        assert!(e.to_string().contains("Kerberos"), "{e}");
        assert!(!e.to_string().contains("not-a-real-token"), "{e}");
        // Without --am-resource nothing changes on a secure cluster.
        assert!(check_am_resources_allowed(&args(&[]), &secure).is_ok());
        for bad in ["vcores=1", "yarn.io/gpu=0", "gpu"] {
            use clap::Parser;
            assert!(
                crate::cli::Cli::try_parse_from(["yarn-am", "submit", "--am-resource", bad])
                    .is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_client_port_comes_from_the_flag_the_conf_or_the_rm_host() {
        let r = rest(HttpAuth::simple("alice"));
        let given = "other:9032".to_string();
        assert_eq!(
            rm_addresses(Some(&given), RmService::Client, &r, &Ok(None)).unwrap(),
            ["other:9032"]
        );
        assert_eq!(
            rm_addresses(None, RmService::Client, &r, &Ok(None)).unwrap(),
            ["rm:8032"]
        );
        let mut c = Configuration::new();
        c.set("yarn.resourcemanager.address", "rm.example:18032");
        assert_eq!(
            rm_addresses(None, RmService::Client, &r, &Ok(Some(c))).unwrap(),
            ["rm.example:18032"]
        );
    }

    #[test]
    fn an_rpc_submission_without_an_answer_keeps_the_staging_folder() {
        let lost = ClientRmError::Rpc(RpcError::ConnectionLost {
            addr: "rm:8032".into(),
            reason: "reset".into(),
        });
        assert!(submission_outcome_unknown(&anyhow::Error::new(lost)));
        let refused = ClientRmError::Refused {
            method: "submitApplication".into(),
            remote: yarn_client::rpc::RemoteError {
                class: "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException".into(),
                message: "too much".into(),
                fatal: false,
                code: None,
            },
        };
        assert!(!submission_outcome_unknown(&anyhow::Error::new(refused)));
    }
}

#[cfg(test)]
mod fallback_tests {
    use super::fallback_to_simple;
    use yarn_client::conf::Configuration;
    use yarn_client::rpc::{FALLBACK_TO_SIMPLE_KEY, PROTECTION_KEY};

    fn with(value: Option<&str>) -> anyhow::Result<Option<Configuration>> {
        let mut c = Configuration::new();
        if let Some(v) = value {
            c.set(FALLBACK_TO_SIMPLE_KEY, v);
        }
        Ok(Some(c))
    }

    #[test]
    fn fallback_to_simple_is_off_unless_the_conf_says_true() {
        assert!(!fallback_to_simple(&Ok(None)).unwrap());
        assert!(!fallback_to_simple(&Err(anyhow::anyhow!("unreadable"))).unwrap());
        assert!(!fallback_to_simple(&with(None)).unwrap());
        assert!(!fallback_to_simple(&with(Some("false"))).unwrap());
        assert!(fallback_to_simple(&with(Some(" TRUE "))).unwrap());
        let e = fallback_to_simple(&with(Some("yes"))).unwrap_err();
        assert!(format!("{e:#}").contains(FALLBACK_TO_SIMPLE_KEY), "{e:#}");
    }

    #[test]
    fn rpc_protection_is_checked_at_submit() {
        let conf = |v: &str| {
            let mut c = Configuration::new();
            c.set(PROTECTION_KEY, v);
            Ok(Some(c))
        };
        assert_eq!(super::rpc_protection(&Ok(None)).unwrap(), None);
        assert_eq!(
            super::rpc_protection(&conf(" privacy "))
                .unwrap()
                .as_deref(),
            Some("privacy")
        );
        let e = super::rpc_protection(&conf("secret")).unwrap_err();
        assert!(format!("{e:#}").contains(PROTECTION_KEY), "{e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> RestError {
        RestError::Status {
            method: "GET",
            url: "http://rm:8088/ws/v1/cluster/apps/a".into(),
            status,
            body: String::new(),
        }
    }

    #[test]
    fn a_restarting_rm_is_ridden_out_but_a_refusal_is_not() {
        assert!(transient(&status(503)));
        assert!(transient(&status(500)));
        assert!(transient(&status(404)), "apps not yet recovered");
        assert!(!transient(&status(401)));
        assert!(!transient(&status(403)));
        assert!(transient(&RestError::BadReply {
            url: "u".into(),
            reason: "not JSON".into()
        }));
    }
}

/// The AM's and the executors' environments from `--env` and `--executor-env`.
struct Environments {
    am: BTreeMap<String, String>,
    executor: BTreeMap<String, String>,
}

/// What `submit` sent and what it found already staged, for the line it prints: a second
/// submit of the same binary and runtime should send nothing.
#[derive(Default)]
struct Uploads {
    sent: (usize, u64),
    reused: (usize, u64),
}

impl Uploads {
    fn count(&mut self, f: &StagedFile, sent: bool) {
        let t = if sent {
            &mut self.sent
        } else {
            &mut self.reused
        };
        t.0 += 1;
        t.1 += f.size;
    }

    fn describe(&self) -> String {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        format!(
            "staged {} file(s): {} uploaded ({:.1} MiB), {} already in the staging cache ({:.1} MiB)",
            self.sent.0 + self.reused.0,
            self.sent.0,
            mib(self.sent.1),
            self.reused.0,
            mib(self.reused.1)
        )
    }
}

#[cfg(test)]
mod max_kinds_tests {
    use super::*;

    use super::am_resource_tests::args;

    /// The reserve must hold the kinds the app starts with, and a job has all its kinds in
    /// its file.
    #[test]
    fn the_kinds_reserve_holds_the_starting_kinds_and_not_with_a_job() {
        let a = args(&[
            "--executor-kind",
            "accel:memory=512,vcores=1",
            "--max-executor-kinds",
            "1",
        ]);
        let err = executor_kinds(&a, None).unwrap_err().to_string();
        assert!(err.contains("fewer than the 2 kinds"), "{err}");
        let a = args(&[
            "--executor-kind",
            "accel:memory=512,vcores=1",
            "--max-executor-kinds",
            "2",
        ]);
        assert_eq!(executor_kinds(&a, None).unwrap().len(), 1);
        let job = crate::core::driver::job::Job::from_json(
            r#"{"name": "j", "executor": {"cores": 1, "memory_mb": 256}, "tasks": [{"id": "a", "command": "true"}]}"#,
        )
        .unwrap();
        let a = args(&["--max-executor-kinds", "4"]);
        let err = executor_kinds(&a, Some(&job)).unwrap_err().to_string();
        assert!(err.contains("does not apply to a job"), "{err}");
        for bad in ["0", "65"] {
            use clap::Parser;
            let argv = ["yarn-am", "submit", "--max-executor-kinds", bad];
            assert!(crate::cli::Cli::try_parse_from(argv).is_err(), "{bad}");
        }
    }
}
