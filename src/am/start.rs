//! Start-up: everything the AM needs is read, checked and wired before the loop's first
//! pass, so that a misconfiguration fails in the first second with a message naming it.
//!
//! In order: the container environment, the spec file and the token file; the driver API's
//! listener (served from then on, so reads answer while registration runs); registration
//! with the RM; the node list; the job and the journal of earlier attempts (the job resumes
//! where a crashed attempt left it); the pool and [`AmCore`]; the executors YARN handed back
//! from an earlier attempt; and the core's first step. The result is an [`Am`] and the RM
//! session, which [`super::event_loop`] takes over.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};
use yarn_client::amrm::Registration as Registered;
use yarn_client::credentials::Credentials;
use yarn_client::request_table::AmrmState;
use yarn_client::rest::{NodeInfo, RmRest};
use yarn_client::rpc::RpcConfig;
use yarn_client::token::Token;

use super::container_env::ContainerEnv;
use super::journal_store::{self, HttpAuthSource, Journal};
use super::launcher::{DriverContact, Launcher};
use super::rm::{AmEndpoint, RmSession};
use super::token_refresh::{self, SharedTokens};
use super::{Clock, DRIVER_URL_FILE, IDLE_HEARTBEAT, LAUNCH_PARALLELISM};
use crate::http::{self, ApiHandle};
use yarn_am_core::allocator::tracker::{Allocator, AllocatorConfig, DEFAULT_SPREAD_WAIT_MS};
use yarn_am_core::allocator::Cluster;
use yarn_am_core::am::am_core::{AmCore, Completion, DEFAULT_EXECUTOR_SILENCE};
use yarn_am_core::am::cluster_view;
use yarn_am_core::am::events::LaunchReport;
use yarn_am_core::am::job_run::JobRun;
use yarn_am_core::am::pool::Pool;
use yarn_am_core::am::registry::Registry;
use yarn_am_core::am::scheduler_address::{self, NodeProxyConf};
use yarn_am_core::driver::journal::{self as journal_entries, Entry};
use yarn_am_core::ids::{ExecutorId, IdStripe, TaskAttempt};
use yarn_am_core::kv::{KvLimits, KvStore};
use yarn_am_core::topology::SharedTopology;
use yarn_am_wire::credentials::MASTER_SECRET_ALIAS;
use yarn_am_wire::spec::{AppSpec, SPEC_ALIAS, SPEC_FILE};
use yarn_am_wire::tls::{AppCert, Fingerprint};

/// Everything the loop and the finish work with, wired by [`start`].
pub(super) struct Am {
    pub env: ContainerEnv,
    pub spec: AppSpec,
    pub core: AmCore,
    /// RM REST, for the node list fetched again when a container lands on an unknown host.
    pub rest: RmRest,
    pub api: Api,
    pub launcher: Launcher,
    pub launches: mpsc::UnboundedReceiver<LaunchReport>,
    /// The journal (the job's and the key-value store's); `None` without a staging folder.
    pub journal: Option<Journal>,
    /// The AM's credentials, refreshed while it runs.
    pub tokens: SharedTokens,
    pub rm: RmContact,
    pub clock: Clock,
    /// Registered before the core's first step, as the loop's first select would.
    pub sigterm: Signal,
}

/// The driver API: the loop's end of its channels, and how to stop its server.
pub(super) struct Api {
    pub handle: ApiHandle,
    pub stop: oneshot::Sender<()>,
    pub server: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The API's URL, `https://` (what drivers and executors are told).
    pub url: String,
    pub port: u16,
    /// The tracking page's plain-HTTP URL (the tracking URL the RM's proxy fetches).
    pub page_url: String,
    /// The certificate's fingerprint, which executors pin.
    pub tls_pin: Fingerprint,
}

/// How to reach the RM's scheduler with a fresh session: the finish unregisters that way
/// when the loop's session was lost with an abandoned call.
pub(super) struct RmContact {
    pub scheduler: String,
    pub registration: AmEndpoint,
    pub rpc: RpcConfig,
}

/// What the container gives the AM to start with: its environment, the spec `submit` wrote,
/// and the token file with the AMRM token and the application's master secret.
struct Inputs {
    env: ContainerEnv,
    spec: AppSpec,
    creds: Credentials,
    amrm_token: Token,
    secret: String,
    /// The application's TLS certificate, made by `submit` (see [`yarn_am_wire::tls`]).
    cert: AppCert,
}

/// The journal of earlier attempts, read back: where executor ids continue and which
/// executors (with the task attempts they run) a next attempt may adopt.
struct Resumed {
    journal: Option<Journal>,
    /// The key-value store as earlier attempts left it.
    kv: KvStore,
    first_executor_id: ExecutorId,
    earlier_executors: HashMap<String, ExecutorId>,
    in_flight: Vec<(TaskAttempt, ExecutorId)>,
}

/// Starts the AM up to the loop's first pass: see the module doc for the order.
pub(super) async fn start() -> anyhow::Result<(Am, RmSession)> {
    let Inputs {
        env,
        spec,
        creds,
        amrm_token,
        secret,
        cert,
    } = read_inputs()?;
    info!(app = %env.app_id, attempt = env.attempt, "ApplicationMaster starting");
    let api = open_api(&env, &secret, &cert).await?;
    let (session, registered, rm) = register(&env, &spec, &api, amrm_token.clone()).await?;
    let (rest, nodes) = list_nodes(&spec, &creds).await?;
    // The one topology: the allocator, the request table, the pool and the driver hold
    // handles to the same map.
    let kinds = spec.executor.all_kinds();
    let (topo, cluster) = cluster_view::from_nodes(&nodes, &kinds[0]);
    // Each further kind sees the same nodes with its own capacity per node.
    let clusters: Vec<Cluster> = std::iter::once(cluster)
        .chain(
            kinds[1..]
                .iter()
                .map(|k| cluster_view::from_nodes(&nodes, k).1),
        )
        .collect();
    let mut job = job_run(&spec, &topo)?;
    let tokens = SharedTokens::new(creds.clone());
    let webhdfs_auth: HttpAuthSource = {
        let t = tokens.clone();
        Arc::new(move || t.webhdfs_auth())
    };
    let resumed = resume(&spec, &env, job.as_mut(), webhdfs_auth.clone()).await?;
    let pool = pool(
        &spec,
        &env,
        (topo, clusters),
        &registered,
        &resumed,
        amrm_token,
    );
    // Runs until the AM's runtime ends.
    if let Some(r) = spec.token_refresh.clone() {
        token_refresh::spawn(r, tokens.clone());
    }
    let service_data = yarn_am_wire::credentials::service_data(&creds);
    let (launcher, launches) = launcher(
        &spec,
        &env,
        &api,
        &secret,
        &rm,
        tokens.clone(),
        service_data,
    );
    let mut core = core(&spec, pool, job, resumed.kv.clone());
    let clock = Clock::start();
    adopt(&mut core, clock.now_ms(), &registered, &resumed);
    // Executors of an earlier attempt find this one here (see `journal_store::publish_url`).
    // In the background: on HDFS it takes two calls, which must not hold up the first
    // demand (those executors keep looking for a minute).
    if let Some(staging) = spec.staging.clone() {
        let (url, auth) = (api.url.clone(), webhdfs_auth);
        tokio::spawn(async move { journal_store::publish_url(&staging, &url, &auth).await });
    }
    let sigterm = signal(SignalKind::terminate())?;
    core.handle_start(clock.now_ms(), spec.executor.initial);
    let am = Am {
        env,
        spec,
        core,
        rest,
        api,
        launcher,
        launches,
        journal: resumed.journal,
        tokens,
        rm,
        clock,
        sigterm,
    };
    Ok((am, session))
}

/// The embedded job of the spec, if any, with one driver per executor kind.
fn job_run(spec: &AppSpec, topo: &SharedTopology) -> anyhow::Result<Option<JobRun>> {
    let Some(j) = &spec.job else {
        return Ok(None);
    };
    let kinds = spec.executor.all_kinds();
    // The job's drivers find an executor's kind by the stripes of its kinds alone.
    anyhow::ensure!(
        spec.executor.stripe_width() == kinds.len(),
        "a job's spec may not reserve executor kinds beyond its own (max_kinds)"
    );
    let names: Vec<String> = kinds.iter().map(|k| k.name.clone()).collect();
    let run = JobRun::for_job(j, topo, &names).context("the job in the spec is not valid")?;
    info!(job = %j.name, tasks = j.tasks.len(), kinds = names.len(), "running a job with the embedded driver");
    Ok(Some(run))
}

/// The core, with the spec's settings and the key-value store earlier attempts left.
fn core(spec: &AppSpec, pool: Pool, job: Option<JobRun>, kv: KvStore) -> AmCore {
    AmCore::new(
        pool,
        job,
        IDLE_HEARTBEAT,
        spec.max_executor_failures as usize,
    )
    .with_executor_silence(
        spec.executor_silence_timeout_ms
            .map_or(DEFAULT_EXECUTOR_SILENCE, Duration::from_millis),
    )
    .with_completion(if spec.keep_running {
        Completion::KeepRunning
    } else {
        Completion::ExecutorsSucceed
    })
    .with_kv(kv)
    .with_grant_window(Duration::from_millis(
        spec.nm_heartbeat_ms.unwrap_or(DEFAULT_SPREAD_WAIT_MS),
    ))
}

fn read_inputs() -> anyhow::Result<Inputs> {
    let env = ContainerEnv::from_process()?;
    let creds = Credentials::read_file(&env.token_file)
        .with_context(|| format!("reading the token file {}", env.token_file.display()))?;
    let spec = read_spec(&creds)?;
    let amrm_token = creds
        .require_kind("YARN_AM_RM_TOKEN")
        .context("the token file has no AMRM token")?
        .clone();
    let secret = master_secret(&creds)?;
    let cert = AppCert::from_credentials(&creds)?;
    Ok(Inputs {
        env,
        spec,
        creds,
        amrm_token,
        secret,
        cert,
    })
}

/// The spec `submit` wrote: from the credentials (a small one), else the file in the
/// working directory (see [`yarn_am_wire::spec`]).
pub(super) fn read_spec(creds: &Credentials) -> anyhow::Result<AppSpec> {
    if let Some(bytes) = creds.secret(SPEC_ALIAS) {
        let text = std::str::from_utf8(bytes)
            .with_context(|| format!("the credentials' {SPEC_ALIAS:?} is not text"))?;
        return AppSpec::from_json(text)
            .with_context(|| format!("parsing the credentials' {SPEC_ALIAS:?}"));
    }
    let text = std::fs::read_to_string(SPEC_FILE).with_context(|| {
        format!(
            "reading {SPEC_FILE} from the container's working directory (the credentials \
             have no {SPEC_ALIAS:?})"
        )
    })?;
    AppSpec::from_json(&text).with_context(|| format!("parsing {SPEC_FILE}"))
}

/// The application's master secret, from the AM container's credentials (where `submit` put
/// it: never in an environment, see [`yarn_am_wire::poll`]).
pub(super) fn master_secret(creds: &Credentials) -> anyhow::Result<String> {
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

/// The driver API listens on this container's host, on a free port, over TLS with the
/// application's certificate, and the tracking page on a second port in plain HTTP (why:
/// [`http::serve`]). Served from now on while registration (which a slow RM can make take
/// a while) runs: reads answer at once, commands wait in the channel for the loop.
async fn open_api(env: &ContainerEnv, secret: &str, cert: &AppCert) -> anyhow::Result<Api> {
    let bind = || async {
        tokio::net::TcpListener::bind((env.nm_host.as_str(), 0))
            .await
            .with_context(|| format!("binding the driver API on {}", env.nm_host))
    };
    let (listener, page) = (bind().await?, bind().await?);
    let port = listener.local_addr()?.port();
    let url = format!("https://{}:{port}", env.nm_host);
    let page_url = format!("http://{}:{}", env.nm_host, page.local_addr()?.port());
    let tls = cert.server_config()?;
    std::fs::write(env.log_dir.join(DRIVER_URL_FILE), format!("{url}\n"))
        .with_context(|| format!("writing {DRIVER_URL_FILE} into {}", env.log_dir.display()))?;
    info!(%url, %page_url, tls_sha256 = %cert.fingerprint(), "driver API listening");
    let (shared, handle) = http::channel(secret, Default::default());
    let (stop, api_stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(listener, Some(page), shared, tls, async {
        let _ = api_stopped.await;
    }));
    Ok(Api {
        handle,
        stop,
        server,
        url,
        port,
        page_url,
        tls_pin: cert.fingerprint(),
    })
}

/// Registers with the RM's scheduler (through the NodeManager's AMRMProxy when one holds
/// this container's AMRM token, see [`scheduler_address`]), and checks that the cluster can
/// hold an executor.
async fn register(
    env: &ContainerEnv,
    spec: &AppSpec,
    api: &Api,
    amrm_token: Token,
) -> anyhow::Result<(RmSession, Registered, RmContact)> {
    let node = node_proxy_conf();
    let choice = scheduler_address::choose(&spec.rm_scheduler, &env.nm_host, node.as_ref())?;
    info!(scheduler = %choice.address, via_amrmproxy = choice.via_proxy, why = %choice.why,
          "RM scheduler address");
    let registration = AmEndpoint {
        host: env.nm_host.clone(),
        rpc_port: i32::from(api.port),
        tracking_url: format!("{}/", api.page_url),
    };
    let min_qop = spec.min_qop().with_context(|| {
        format!(
            "the spec's hadoop.rpc.protection {:?} names no protection level",
            spec.rpc_protection
        )
    })?;
    let rpc = RpcConfig {
        fallback_to_simple_auth_allowed: spec.fallback_to_simple_auth_allowed,
        min_qop,
        ..RpcConfig::default()
    };
    let attempt = |scheduler: String| {
        let mut session = RmSession::new(
            &scheduler,
            amrm_token.clone(),
            registration.clone(),
            rpc.clone(),
        );
        async move {
            let registered = session.register().await;
            (session, registered, scheduler)
        }
    };
    let (session, registered, scheduler) = match attempt(choice.address.clone()).await {
        (s, Ok(r), a) => (s, r, a),
        (_, Err(e), first) => match choice.fallback.clone() {
            // The container's configuration may not be its NodeManager's: then the RM
            // issued the token, and the RM takes it.
            Some(rm) => {
                warn!(%e, amrmproxy = %first, scheduler = %rm,
                      "registering through the AMRMProxy failed; trying the submitter's RM address");
                match attempt(rm).await {
                    (s, Ok(r), a) => (s, r, a),
                    (_, Err(e2), rm) => bail!(
                        "registering with the RM failed through the AMRMProxy at {first} ({e}) \
                         and at {rm} ({e2})"
                    ),
                }
            }
            None => {
                return Err(
                    anyhow::Error::new(e).context(format!("registering with the RM at {first}"))
                )
            }
        },
    };
    if let Some(max) = registered.max_memory_mb {
        if spec.executor.memory_mb > max {
            bail!(
                "executors want {} MB but the cluster's largest container is {max} MB",
                spec.executor.memory_mb,
            );
        }
    }
    let rm = RmContact {
        scheduler,
        registration,
        rpc,
    };
    Ok((session, registered, rm))
}

/// What the container's Hadoop configuration (`HADOOP_CONF_DIR`, its NodeManager's) says
/// about the AMRMProxy; `None` without a configuration or when it cannot be read (logged).
/// Unreadable booleans count as off, as Hadoop's `getBoolean` reads them.
fn node_proxy_conf() -> Option<NodeProxyConf> {
    let conf = match crate::cluster::rm::hadoop_conf() {
        Ok(c) => c?,
        Err(e) => {
            warn!("{e:#}: assuming no AMRMProxy on this node");
            return None;
        }
    };
    let flag = |key: &str| conf.get_bool(key, false).unwrap_or(false);
    Some(NodeProxyConf {
        amrmproxy_enabled: flag(scheduler_address::AMRMPROXY_ENABLED_KEY),
        distributed_scheduling: flag(scheduler_address::DISTRIBUTED_SCHEDULING_KEY),
        address: conf
            .get_trimmed(scheduler_address::AMRMPROXY_ADDRESS_KEY)
            .ok()
            .flatten(),
    })
}

/// Racks and capacities, for the allocator and for the request table's rack lookups. On a
/// secure cluster the submitter gave us delegation tokens for the RM and WebHDFS.
async fn list_nodes(
    spec: &AppSpec,
    creds: &Credentials,
) -> anyhow::Result<(RmRest, Vec<NodeInfo>)> {
    let am_auth = yarn_am_wire::credentials::AmAuth::from_credentials(creds);
    let mut rest = RmRest::new(&spec.rm_web, "yarn-am", Duration::from_secs(20))?;
    // With RM HA a standby RM redirects to the active one; the RM token follows a redirect
    // only to the RMs the container's yarn-site.xml names (none known: no redirect).
    if let Ok(rms) = crate::cluster::rm::web_addresses_from_conf() {
        rest = rest.with_other_rms(&rms);
    }
    if let Some(auth) = &am_auth.rm {
        rest = rest.with_auth(auth.clone());
    }
    let nodes = rest
        .nodes(&[])
        .await
        .context("listing the cluster's nodes")?;
    Ok((rest, nodes))
}

/// The journal of earlier attempts: the job resumes where a crashed attempt left it,
/// executor ids continue past every id it used, and the key-value store is rebuilt. This
/// attempt is recorded in it.
async fn resume(
    spec: &AppSpec,
    env: &ContainerEnv,
    job: Option<&mut JobRun>,
    webhdfs_auth: HttpAuthSource,
) -> anyhow::Result<Resumed> {
    // Every app with a staging folder journals: the key-value store's writes too.
    let opened = Journal::open(spec.staging.as_ref(), env.attempt, webhdfs_auth).await?;
    let mut resumed = Resumed {
        journal: None,
        kv: KvStore::new(KvLimits::default()),
        first_executor_id: ExecutorId::new(1),
        earlier_executors: HashMap::new(),
        in_flight: Vec::new(),
    };
    if let Some((file, entries)) = opened {
        let kv = resumed.kv.replay(&entries);
        if kv > 0 {
            info!(
                writes = kv,
                keys = resumed.kv.len(),
                revision = resumed.kv.revision(),
                "restored the key-value store from the journal"
            );
        }
        // Only a job's executors are adopted (as before apps without a job journaled).
        if job.is_some() {
            resumed.earlier_executors = journal_entries::executors(&entries);
            resumed.in_flight = journal_entries::in_flight(&entries);
        }
        if let (Some(j), false) = (job, entries.is_empty()) {
            let r = j.replay(&entries);
            info!(succeeded = r.succeeded, failed = r.failed, earlier_attempts = ?r.am_attempts,
                  max_executor_id = %r.max_executor_id, "resuming the job from the journal");
            resumed.first_executor_id = r.max_executor_id.next();
        }
        resumed.journal = Some(file);
    }
    if let Some(j) = resumed.journal.as_mut() {
        j.append(&[Entry::AmAttempt {
            attempt: env.attempt,
        }]);
    }
    Ok(resumed)
}

/// The executor pool: the allocator on the cluster's topology, the request table with the
/// NM tokens of containers kept from an earlier attempt, and the registry whose events the
/// loop sends to the API's event stream.
fn pool(
    spec: &AppSpec,
    env: &ContainerEnv,
    (topo, clusters): (SharedTopology, Vec<Cluster>),
    registered: &Registered,
    resumed: &Resumed,
    amrm_token: Token,
) -> Pool {
    let strategy = spec.strategy.unwrap_or_default();
    info!(%strategy, "allocation strategy");
    let kinds = spec.executor.all_kinds();
    let width = spec.executor.stripe_width();
    let template = AllocatorConfig {
        strategy,
        failure_validity_ms: spec.executor_failures_validity_ms,
        spread_wait_ms: spec.nm_heartbeat_ms.unwrap_or(DEFAULT_SPREAD_WAIT_MS),
        ..AllocatorConfig::default()
    };
    let allocators = kinds
        .iter()
        .zip(clusters)
        .enumerate()
        .map(|(k, (kind, cluster))| {
            Allocator::new(AllocatorConfig {
                // Executors run one task per vcore.
                tasks_per_executor: kind.vcores.max(1) as u32,
                ids: IdStripe {
                    kind: k as u64,
                    kinds: width as u64,
                },
                ..template.clone()
            })
            .with_first_executor_id(resumed.first_executor_id)
            .with_cluster(topo.clone(), cluster)
        })
        .collect();
    let mut table = AmrmState::new(cluster_view::rack_resolver(&topo), Some(amrm_token));
    table.on_registered(registered.nm_tokens_from_previous_attempts.clone());
    let registry = Registry::new();
    let mut pool = Pool::with_kinds(
        allocators,
        table,
        registry,
        &spec.executor,
        env.app_id.clone(),
    );
    if let Some(h) = spec.host_exclusion {
        info!(
            max_failures = h.max_failures,
            window_ms = h.window_ms,
            exclude_ms = h.exclude_ms,
            "host exclusion after executor failures"
        );
        pool.set_exclusion(h.max_failures, h.window_ms, h.exclude_ms);
    }
    // A job's kinds are all in its spec (its drivers are per kind); a driver of its own may
    // declare more within the room submit reserved.
    if spec.job.is_none() && width > kinds.len() {
        pool.allow_declared_kinds(template, resumed.first_executor_id);
    }
    pool
}

/// The launcher, with what every executor is told about the AM.
fn launcher(
    spec: &AppSpec,
    env: &ContainerEnv,
    api: &Api,
    secret: &str,
    rm: &RmContact,
    tokens: SharedTokens,
    service_data: std::collections::BTreeMap<String, Vec<u8>>,
) -> (Launcher, mpsc::UnboundedReceiver<LaunchReport>) {
    let contact = DriverContact {
        app_id: env.app_id.clone(),
        url: api.url.clone(),
        tls_pin: api.tls_pin,
        master_secret: secret.as_bytes().into(),
        tokens,
        // Where an executor finds the next attempt's address if this one dies; the last
        // attempt has no next, and its executors go as soon as it is gone.
        staging_dir: spec.staging.clone().filter(|_| !env.is_last_attempt()),
        service_data,
    };
    let (mut launcher, launches) =
        Launcher::new(spec.executor.clone(), contact, LAUNCH_PARALLELISM);
    launcher.allow_simple_fallback(rm.rpc.fallback_to_simple_auth_allowed);
    launcher.require_qop(rm.rpc.min_qop);
    (launcher, launches)
}

/// Takes over the containers YARN handed back from earlier attempts, before the first
/// demand: the adopted executors count towards it.
fn adopt(core: &mut AmCore, now_ms: u64, registered: &Registered, resumed: &Resumed) {
    let handed_back = &registered.containers_from_previous_attempts;
    if handed_back.is_empty() {
        return;
    }
    let adopted = core.handle_adopt(
        now_ms,
        handed_back,
        &resumed.earlier_executors,
        &resumed.in_flight,
    );
    info!(
        adopted,
        handed_back = handed_back.len(),
        "containers of earlier attempts"
    );
}
