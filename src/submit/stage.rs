//! Staging an application's files and building what the RM is handed: the executors' and
//! the AM's specs, the AM's container and the submission. Steps in the order they run, so
//! that the uploads (and the WebHDFS calls) happen as they always did.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use yarn_client::rest::{AmContainerSpec, LocalResource, Resource, RmRest, Submission};

use super::cluster_conf::{fallback_to_simple, nm_heartbeat_ms, rm_addresses, rpc_protection};
use super::executors::{executor_kinds, executor_size, host_exclusion};
use super::secret::{am_credentials, write_secret};
use super::{
    command_file_launch, kind_command_file, resources, send, tokens, BINARY_NAME, CA_FILE,
    COMMAND_FILE, DRIVER_COMMAND_FILE,
};
use crate::cli::SubmitArgs;
use crate::cluster::rm::hadoop_conf;
use crate::staging::{ResourceKind, StagedFile, Stager, Visibility};
use yarn_am_core::driver::job::Job;
use yarn_am_wire::spec::{AppSpec, DriverSpec, ExecutorKind, ExecutorSpec, SPEC_FILE};

/// The AM's and the executors' environments from `--env` and `--executor-env`.
pub(super) struct Environments {
    pub(super) am: BTreeMap<String, String>,
    pub(super) executor: BTreeMap<String, String>,
}

/// What staging put in the app's folder so far, for the specs and the AM's container.
struct Staged {
    binary: StagedFile,
    /// The cluster's CA (`YARN_AM_CA_FILE`), when it has its own.
    ca_file: Option<StagedFile>,
    /// The AM container's local resources.
    local_resources: BTreeMap<String, LocalResource>,
    /// The executors' files (taken for their spec).
    files: BTreeMap<String, StagedFile>,
    driver: Option<DriverSpec>,
}

/// Stages the binary, the `--file`s and the spec, then submits the AM container. Returns
/// where the driver-API secret was written.
pub(super) async fn stage_and_submit(
    args: &SubmitArgs,
    rest: &RmRest,
    app_id: &str,
    stager: &mut Stager,
    job: Option<Job>,
    envs: Environments,
    shipped: Vec<resources::ShippedResource>,
) -> anyhow::Result<PathBuf> {
    let mut staged = stage_files(args, stager, shipped).await?;
    let kinds = stage_commands(args, stager, job.as_ref(), &mut staged.files).await?;
    let files = std::mem::take(&mut staged.files);
    let executor = executor_spec(args, job.as_ref(), envs.executor, files, &staged, kinds)?;
    let max_executor_failures = args
        .max_executor_failures
        .unwrap_or_else(|| (2 * executor.max.min(1 << 20)).max(3));
    let conf = hadoop_conf();
    // On a secure cluster: delegation tokens for the AM, its executors and the NMs.
    let conf_ref = conf.as_ref().ok().and_then(Option::as_ref);
    let tokens = tokens::collect(rest, stager.webhdfs(), conf_ref).await?;
    let token_refresh = match tokens::stage_keytab(&args.rm, stager, conf_ref).await? {
        Some((staged_keytab, refresh)) => {
            let keytab = staged_keytab.local_resource();
            staged
                .local_resources
                .insert(refresh.keytab.clone(), keytab);
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
        strategy: (args.strategy != yarn_am_core::allocator::Strategy::Default)
            .then_some(args.strategy),
        // The driver's exit ends the app, not the executors'.
        keep_running: args.keep_running || staged.driver.is_some(),
        driver: staged.driver.take(),
    };
    let inline_spec = stage_spec(stager, &spec, &mut staged.local_resources).await?;
    let secret = yarn_am_wire::driver_secret::new_secret();
    // The AM's TLS certificate, made here beside the secret so that the secret file can
    // carry its fingerprint and every AM attempt serves the same one (`protocol::tls`).
    let cert = yarn_am_wire::tls::AppCert::generate()?;
    let secret_file = write_secret(args, app_id, &secret, &cert)?;
    let am = AmContainerSpec {
        environment: am_environment(args, envs.am, staged.ca_file.is_some()),
        local_resources: staged.local_resources,
        command: format!("./{BINARY_NAME} am 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"),
        credentials: am_credentials(&secret, &cert, tokens, inline_spec, &args.service_data),
        acls: args.acls(),
    };
    send::send(args, rest, &conf, &submission(args, app_id, am)).await?;
    Ok(secret_file)
}

/// Stages what the AM's container and the executors localise: the binary, the cluster's
/// CA, the `--file`s and `--archive`s, and the `--driver-command` script; prints what was
/// uploaded and what the cache already held.
async fn stage_files(
    args: &SubmitArgs,
    stager: &mut Stager,
    shipped: Vec<resources::ShippedResource>,
) -> anyhow::Result<Staged> {
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
        let staged = stage_shipped(args, stager, &r, &mut uploads).await?;
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
            Some(DriverSpec {
                command_file: DRIVER_COMMAND_FILE.to_string(),
            })
        }
        None => None,
    };
    eprintln!("{}", uploads.describe());
    Ok(Staged {
        binary: staged_binary,
        ca_file,
        local_resources,
        files,
        driver,
    })
}

/// One `--file` or `--archive`: a local one staged (PUBLIC with `--public`, else through
/// the cache), one on HDFS shipped by reference.
async fn stage_shipped(
    args: &SubmitArgs,
    stager: &mut Stager,
    r: &resources::ShippedResource,
    uploads: &mut Uploads,
) -> anyhow::Result<StagedFile> {
    match &r.source {
        resources::Source::Local(path) => {
            let (staged, sent) = if args.public {
                stager.put_public(path, r.kind).await?
            } else {
                stager.put_shared(path, &r.name, r.kind).await?
            };
            uploads.count(&staged, sent);
            Ok(staged)
        }
        resources::Source::Hdfs { url, path } => {
            let visibility = if args.public {
                Visibility::Public
            } else {
                Visibility::Private
            };
            stager.reference_hdfs(url, path, r.kind, visibility).await
        }
    }
}

/// Stages the executors' commands, each as a file byte for byte (see [`COMMAND_FILE`]):
/// `--executor-command` without a job, and every kind's own; returns the kinds, their
/// commands now running those files.
async fn stage_commands(
    args: &SubmitArgs,
    stager: &mut Stager,
    job: Option<&Job>,
    files: &mut BTreeMap<String, StagedFile>,
) -> anyhow::Result<Vec<ExecutorKind>> {
    if job.is_none() {
        let script = stager
            .put_bytes(COMMAND_FILE, args.executor_command.clone().into_bytes())
            .await?;
        files.insert(COMMAND_FILE.to_string(), script);
    }
    let mut kinds = executor_kinds(args, job)?;
    for k in &mut kinds {
        // A kind's own command travels as its own file, like the default kind's.
        if let Some(cmd) = k.command.take() {
            let file = kind_command_file(&k.name);
            let script = stager.put_bytes(&file, cmd.into_bytes()).await?;
            files.insert(file.clone(), script);
            k.command = Some(format!("/bin/bash {file}"));
        }
    }
    Ok(kinds)
}

/// The executors' spec: the flags', with a job's executor settings over them.
fn executor_spec(
    args: &SubmitArgs,
    job: Option<&Job>,
    env: BTreeMap<String, String>,
    files: BTreeMap<String, StagedFile>,
    staged: &Staged,
    kinds: Vec<ExecutorKind>,
) -> anyhow::Result<ExecutorSpec> {
    let mut executor = ExecutorSpec {
        command: command_file_launch(),
        memory_mb: args.executor_memory,
        vcores: args.executor_vcores,
        initial: args.executors,
        min: args.min_executors,
        max: args.max_executors.unwrap_or(args.executors),
        env,
        files,
        acls: args.acls(),
        node_label: args.node_label.clone(),
        resources: args.executor_resource.iter().cloned().collect(),
        kinds,
        max_kinds: args.max_executor_kinds.unwrap_or(0),
    };
    // Without a job the executor command can reach the app's key-value store with
    // `./yarn-am kv`; a job's executors run our own binary, which polls the AM for tasks.
    executor
        .files
        .insert(BINARY_NAME.into(), staged.binary.clone());
    if let Some(j) = job {
        executor.command = format!("./{BINARY_NAME} executor");
        if let Some(ca) = &staged.ca_file {
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
        let size = executor_size(args, job)?;
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
    Ok(executor)
}

/// The spec's bytes for the AM's credentials when small (no localizer for the AM container,
/// see `protocol::spec`), else staged as a file the AM container localises.
async fn stage_spec(
    stager: &mut Stager,
    spec: &AppSpec,
    local_resources: &mut BTreeMap<String, LocalResource>,
) -> anyhow::Result<Option<Vec<u8>>> {
    let spec_json = spec.to_json();
    if yarn_am_wire::spec::travels_inline(&spec_json) {
        return Ok(Some(spec_json.into_bytes()));
    }
    let staged_spec = stager.put_bytes(SPEC_FILE, spec_json.into_bytes()).await?;
    local_resources.insert(SPEC_FILE.to_string(), staged_spec.local_resource());
    Ok(None)
}

/// The AM's environment: `--env`, with the logging, the CA file and the attempt limit.
fn am_environment(
    args: &SubmitArgs,
    am_env: BTreeMap<String, String>,
    ca_file: bool,
) -> BTreeMap<String, String> {
    let mut environment = am_env;
    environment
        .entry("YARN_AM_LOG".into())
        .or_insert_with(|| "info".into());
    environment.insert("RUST_BACKTRACE".into(), "1".into());
    if ca_file {
        environment.insert(yarn_client::tls::CA_FILE_ENV.into(), CA_FILE.into());
    }
    // The AM must know whether its attempt is the last (a failure unregisters only then, so
    // that YARN retries earlier ones). The RM does not put this in the AM's environment
    // (checked on Hadoop 3.4.1), so we do, under the name Hadoop's ApplicationConstants gives
    // it. If yarn.resourcemanager.am.max-attempts caps it lower, the real last attempt exits
    // 1 still registered and the RM fails the app with that exit's diagnostics.
    environment.insert("MAX_APP_ATTEMPTS".into(), args.max_attempts.to_string());
    // Values reach the AM exactly as given, whatever the launch script would expand.
    environment
        .into_iter()
        .map(|(k, v)| (k, yarn_client::launch_script::literal_env_value(&v)))
        .collect()
}

/// The application as the RM takes it, with the AM's container `am`.
fn submission(args: &SubmitArgs, app_id: &str, am: AmContainerSpec) -> Submission {
    Submission {
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
        am,
        priority: args.priority,
        attempt_failures_validity_interval_ms: args.attempt_failures_validity_interval,
        log_aggregation: args.log_aggregation(),
        am_node_label: args.am_node_label.clone(),
        am_resources: args.am_resource.clone(),
        lifetime: args.lifetime.map(Duration::from_secs),
    }
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
