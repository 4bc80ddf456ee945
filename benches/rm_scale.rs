//! yarn-am's allocator against a real ResourceManager with 1,000+ simulated NodeManagers.
//! Run by `scripts/scale-bench.sh`, which starts the harness
//! (`scale/`, a real RM with CapacityScheduler and simulated NMs heartbeating over the
//! ResourceTracker protocol, plus an unmanaged app) and then this binary once per run:
//!
//! `cargo bench --bench rm_scale -- --dir /tmp/yarn-am-scale --strategy default --nodes 1000`
//!
//! This is the AM side for real: the AM's own executor pool (`yarn_am_core::am::pool::Pool`:
//! the allocator, the request book, yarn-client's request table) and yarn-client's AMRM
//! client register with the RM, send the allocator's requests and match the grants. Only
//! executors are simulated, here and nowhere else (this launch-free mode exists in this
//! benchmark only; the `yarn-am` binary has no such switch): every launch the pool asks for
//! is reported started at once (no NodeManager), so a matched container counts as an
//! executor at once, runs `tasks_per_executor` tasks a round, and is released when its stage
//! ends, as the simulator (`crates/core/src/sim/`) does. What the bench reads beyond the pool's
//! surface (every action it applies, for the simulator's request book and the launches by
//! locality; the allocator's counts) comes through the `bench` feature's hooks
//! (`Pool::observe_actions`, `Pool::allocator`). The trace is
//! the simulator's own (`Trace::generate`, same config and seed, host `nmNNNNN` on rack
//! `/rackRRR` = index mod racks, as the harness registers them), so the simulator's
//! prediction for the same trace is printed beside the real outcome.
//!
//! One round = one allocate call, every `--round-ms` (the NodeManager heartbeat interval by
//! default: each node is offered to the scheduler once between two calls, the simulator's
//! round). Printed as one JSON line: node-local / rack-local shares of task placements
//! (the simulator's definition), containers granted and how the RM's CapacityScheduler
//! counted them (node-local, rack-local, off-switch: its queue metrics, from the harness),
//! time and rounds to the first stage's target, allocate latency (RM round trip) and the
//! AM's CPU per round (process CPU time: allocator, request table, protobuf, RPC).
//!
//! Grant by grant (`rm_grants`): the harness's RM records every container it commits with its
//! request key and locality (`grants.tsv`); joined here with the round whose answer brought it
//! and with this AM's asks by kind at the call before, so that each off-switch container can be
//! traced to the requests it filled. `--sim-only` prints the simulator's predictions (base,
//! per-key, what-ifs) and the allocator's first asks per stage, with no harness.

use yarn_am_core::sim;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::json;
use sim::{Trace, TraceConfig};
use yarn_am_core::allocator::matching::Locality;
use yarn_am_core::allocator::tracker::{Action, Allocator, AllocatorConfig, ExecutorId};
use yarn_am_core::allocator::{Cluster, Demand, HostName, RackName, Strategy, Topology};
use yarn_am_core::am::cluster_view::rack_resolver;
use yarn_am_core::am::events::LaunchReport;
use yarn_am_core::am::fixtures;
use yarn_am_core::am::pool::Pool;
use yarn_am_core::am::registry::Registry;
use yarn_am_core::topology::SharedTopology;
use yarn_am_wire::spec::ExecutorSpec;
use yarn_client::amrm::{AllocateInput, Allocation, AmRmClient, FinalStatus};
use yarn_client::credentials::{Credentials, AMRM_TOKEN_KIND};
use yarn_client::request_table::{AllocateBatch, AmrmState};
use yarn_client::rpc::RpcConfig;
use yarn_client::token::Token;

// The bench is one target: its parts live beside it in `benches/rm_scale/` (a folder Cargo
// does not take for a target of its own).
#[path = "rm_scale/grants.rs"]
mod grants;
#[path = "rm_scale/predict.rs"]
mod predict;

/// Executor size: a simulated node holds `capacity` of them (the harness's `--node-mb`).
const EXECUTOR_MB: i64 = 1024;

#[derive(Debug)]
struct Args {
    dir: PathBuf,
    strategy: Strategy,
    nodes: usize,
    racks: usize,
    skew: f64,
    seed: u64,
    trace: String,
    round_ms: u64,
    /// Print the simulator's predictions for the trace and exit (no harness needed).
    sim_only: bool,
}

fn parse_args() -> Result<Option<Args>> {
    let mut raw: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then do nothing, this
    // needs the harness running.
    let Some(i) = raw.iter().position(|a| a == "--bench") else {
        return Ok(None);
    };
    raw.remove(i);
    let mut a = Args {
        dir: PathBuf::from("/tmp/yarn-am-scale"),
        strategy: Strategy::Default,
        nodes: 1000,
        racks: 0,
        skew: 0.8,
        seed: 1,
        trace: "standard".into(),
        round_ms: 1000,
        sim_only: false,
    };
    let mut it = raw.into_iter();
    while let Some(k) = it.next() {
        if k == "--sim-only" {
            a.sim_only = true;
            continue;
        }
        let v = it.next().with_context(|| format!("{k} wants a value"))?;
        let bad = |what: &str| format!("{k}: '{v}' is not {what}");
        match k.as_str() {
            "--dir" => a.dir = v.into(),
            "--strategy" => a.strategy = v.parse().map_err(|e| anyhow::anyhow!("{k}: {e}"))?,
            "--nodes" => a.nodes = v.parse().with_context(|| bad("a count"))?,
            "--racks" => a.racks = v.parse().with_context(|| bad("a count"))?,
            "--skew" => a.skew = v.parse().with_context(|| bad("a number"))?,
            "--seed" => a.seed = v.parse().with_context(|| bad("a number"))?,
            "--trace" => a.trace = v,
            "--round-ms" => a.round_ms = v.parse().with_context(|| bad("milliseconds"))?,
            _ => bail!("unknown option {k} (--dir --strategy --nodes --racks --skew --seed --trace --round-ms --sim-only)"),
        }
    }
    Ok(Some(a))
}

fn trace_config(a: &Args) -> Result<TraceConfig> {
    // The simulator's "shifting data, busy" family needs nodes busy with another app and
    // preempted executors, which the harness does not have yet.
    if a.trace != "standard" {
        bail!(
            "--trace: '{}' is not supported (only standard: the harness has no competing app)",
            a.trace
        );
    }
    let mut c = TraceConfig::standard("standard", a.nodes, a.skew, a.seed);
    if a.racks > 0 {
        c.racks = a.racks;
    }
    Ok(c)
}

/// `key=value` lines, as the harness writes them.
fn read_kv(path: &Path) -> Result<HashMap<String, String>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

/// Waits for a file the harness writes, up to `limit`.
fn wait_for(path: &Path, limit: Duration) -> Result<HashMap<String, String>> {
    let start = Instant::now();
    while !path.exists() {
        if start.elapsed() > limit {
            bail!("{} did not appear within {limit:?}", path.display());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    read_kv(path)
}

/// CPU time this process has used, in microseconds.
fn cpu_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

/// What the bench sees of the pool's work, through its bench-only observer
/// (`Pool::observe_actions`): every allocator action the pool applies.
#[derive(Default)]
struct Seen {
    /// The requests in the table by the allocator's ids, with their locations and strictness
    /// (the simulator's book of the RM's table), to break the grants down by request kind.
    book: sim::Book,
    /// Simulated executors: container id -> (executor, host index). A launch puts one in, a
    /// release takes it out.
    executors: HashMap<Arc<str>, (ExecutorId, usize)>,
    /// Launches by locality: node, rack, any.
    launched_by: [u64; 3],
}

impl Seen {
    fn asks_now(&self) -> [u64; AskKind::COUNT] {
        let mut n = [0; AskKind::COUNT];
        for (l, strict, _) in self.book.requests.values() {
            n[AskKind::of_locations(l, *strict) as usize] += 1;
        }
        n
    }
}

/// The AM's own executor pool (`core::am::pool::Pool`: allocator, request book, request
/// table, releases, launches), with no NodeManager: every launch it asks for is reported
/// started at once, so a matched container is a running simulated executor.
struct Am {
    pool: Pool,
    seen: Arc<Mutex<Seen>>,
    /// The allocate round whose answer brought each container.
    granted_in: HashMap<String, u64>,
    /// Per round: requests of each kind in the table when the round's allocate call went.
    asks_by_round: Vec<[u64; AskKind::COUNT]>,
}

/// The allocator's request kinds, as the AM asks them (`request_book`): strict named
/// (relax locality off, allocation request id -1), relaxed named (hosts and racks, id 0),
/// rack-only (id 0) and no location at all (past every work cap, id 0: ANY only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AskKind {
    Strict,
    RelaxedNamed,
    RackOnly,
    NoLocation,
}

impl AskKind {
    const COUNT: usize = 4;
    const NAMES: [&'static str; Self::COUNT] =
        ["strict", "relaxed_named", "rack_only", "no_location"];

    fn of(nodes: &[HostName], racks: &[RackName], strict: bool) -> Self {
        match (strict, nodes.is_empty(), racks.is_empty()) {
            (true, _, _) => AskKind::Strict,
            (false, false, _) => AskKind::RelaxedNamed,
            (false, true, false) => AskKind::RackOnly,
            (false, true, true) => AskKind::NoLocation,
        }
    }

    fn of_locations(l: &sim::Locations, strict: bool) -> Self {
        match (strict, l.0.is_empty(), l.1.is_empty()) {
            (true, _, _) => AskKind::Strict,
            (false, false, _) => AskKind::RelaxedNamed,
            (false, true, false) => AskKind::RackOnly,
            (false, true, true) => AskKind::NoLocation,
        }
    }
}

impl Am {
    fn new(
        mut pool: Pool,
        host_index: HashMap<HostName, usize>,
        rack_index: HashMap<RackName, usize>,
    ) -> Self {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let shared = seen.clone();
        pool.observe_actions(move |action| {
            let mut seen = shared.lock().unwrap();
            let locate = |n: &[HostName], r: &[RackName]| -> sim::Locations {
                (
                    n.iter()
                        .filter_map(|h| host_index.get(h).copied())
                        .collect(),
                    r.iter()
                        .filter_map(|k| rack_index.get(k).copied())
                        .collect(),
                )
            };
            seen.book.apply(std::slice::from_ref(action), &locate);
            match action {
                Action::LaunchExecutor {
                    executor,
                    container,
                    locality,
                } => {
                    let n = host_index[&container.host];
                    seen.executors.insert(container.id.clone(), (*executor, n));
                    seen.launched_by[match locality {
                        Locality::Node => 0,
                        Locality::Rack => 1,
                        Locality::Any => 2,
                    }] += 1;
                }
                Action::ReleaseContainer(cid) => {
                    seen.executors.remove(cid);
                }
                _ => {}
            }
        });
        Am {
            pool,
            seen,
            granted_in: HashMap::new(),
            asks_by_round: Vec::new(),
        }
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }

    /// The launches the pool asked for, started at once (no NodeManager): each reported
    /// back as the launcher would.
    fn start_launches(&mut self, now: u64) {
        for launch in self.pool.take_launches() {
            let started = LaunchReport::Started {
                container: launch.container.id,
            };
            self.pool.on_launch(now, started);
        }
        // The executor events the AM's loop would stream: none listens here.
        while self.pool.registry.poll_event().is_some() {}
    }

    fn set_demand(&mut self, now: u64, demand: Demand) {
        self.pool.set_demand(now, demand);
        self.start_launches(now);
    }

    fn heartbeat(&mut self, now: u64) -> AllocateBatch {
        let batch = self.pool.heartbeat(now);
        self.start_launches(now);
        batch
    }

    fn kill(&mut self, now: u64, executors: Vec<ExecutorId>) {
        self.pool.kill(now, executors);
        self.start_launches(now);
    }

    fn digest(&mut self, now: u64, round: u64, resp: Allocation) -> usize {
        let granted = resp.allocated.len();
        for c in &resp.allocated {
            self.granted_in.insert(c.id.to_string(), round);
        }
        self.pool.allocated(now, resp);
        self.start_launches(now);
        granted
    }
}

/// The driver's whole demand for `pending` tasks, as the simulator builds it each round:
/// their preferred hosts counted, target = pending tasks / tasks per executor, capped.
fn round_demand(trace: &Trace, pending: &[[u32; 3]]) -> Demand {
    let cfg = &trace.config;
    let mut counts: HashMap<HostName, u32> = HashMap::new();
    for t in pending {
        for &h in t {
            *counts.entry(trace.hosts[h as usize].clone()).or_insert(0) += 1;
        }
    }
    Demand {
        target_executors: (pending.len() as u32)
            .div_ceil(cfg.tasks_per_executor)
            .min(cfg.max_executors),
        locality_aware_tasks: pending.len() as u32,
        host_to_local_task_count: counts,
        ..Demand::default()
    }
}

/// One round of tasks on the simulated executors, measured as the simulator measures them
/// with no driver locality wait: node-local first, then rack-local, then anywhere. Returns
/// (tasks run, node-local, rack-local) and leaves in `pending` the tasks that did not run.
fn run_round_tasks(
    trace: &Trace,
    pending: &mut Vec<[u32; 3]>,
    executor_hosts: impl Iterator<Item = usize>,
) -> (usize, usize, usize) {
    let per = trace.config.tasks_per_executor as usize;
    let mut host_slots = vec![0usize; trace.hosts.len()];
    for n in executor_hosts {
        host_slots[n] += per;
    }
    let runnable = host_slots.iter().sum::<usize>().min(pending.len());
    let (local, rack, launched) =
        sim::place_round(trace, pending, host_slots, runnable, true, true);
    (launched, local, rack)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

async fn run(a: Args) -> Result<serde_json::Value> {
    let trace = Trace::generate(trace_config(&a)?);
    let (scheduler, token) = harness_ready(&a.dir, &trace.config)?;
    let mut am = build_am(&trace, &a, token.clone());

    let mut client = AmRmClient::new(&scheduler, token, RpcConfig::default());
    client.register("localhost", 0, "").await?;
    am.pool.table.on_registered(Vec::new());

    let start = Instant::now();
    let mut m = run_stages(&mut am, &mut client, &trace, a.round_ms, start).await?;
    drain_releases(&mut am, &mut client, &mut m, a.round_ms, start).await?;
    let elapsed = start.elapsed();
    client
        .finish(FinalStatus::Succeeded, "", "", Duration::from_secs(30))
        .await?;
    report(&a, &trace, &am, m, elapsed)
}

/// Waits for the harness's `ready` file and checks it runs the trace's cluster: the RM
/// scheduler address and the unmanaged app's AMRM token.
fn harness_ready(dir: &Path, cfg: &TraceConfig) -> Result<(String, Token)> {
    let ready = wait_for(&dir.join("ready"), Duration::from_secs(300))?;
    let get = |k: &str| {
        ready
            .get(k)
            .cloned()
            .with_context(|| format!("the harness's ready file has no {k}"))
    };
    let (scheduler, tokens) = (get("scheduler")?, get("tokens")?);
    let harness_nodes: usize = get("nodes")?.parse()?;
    let harness_racks: usize = get("racks")?.parse()?;
    if harness_nodes != cfg.nodes || harness_racks != cfg.racks {
        bail!(
            "the harness runs {harness_nodes} nodes on {harness_racks} racks, the trace wants {} on {}",
            cfg.nodes,
            cfg.racks
        );
    }
    let creds = Credentials::read_file(Path::new(&tokens))?;
    let token = creds.require_kind(AMRM_TOKEN_KIND)?.clone();
    Ok((scheduler, token))
}

/// The pool as the AM builds it (`am::start`), on the trace's topology, watched by the bench.
fn build_am(trace: &Trace, a: &Args, token: Token) -> Am {
    let cfg = &trace.config;
    let racks: HashMap<HostName, RackName> = trace
        .hosts
        .iter()
        .zip(&trace.host_rack)
        .map(|(h, &r)| (h.clone(), trace.racks[r].clone()))
        .collect();
    let topology = SharedTopology::new(Topology::new(racks));
    let nm_hosts = &trace.hosts[..cfg.nodes];
    let cluster = Cluster {
        nodes: Some(nm_hosts.iter().cloned().collect()),
        capacity: nm_hosts.iter().map(|h| (h.clone(), cfg.capacity)).collect(),
        excluded: HashSet::new(),
    };
    let allocator = Allocator::new(AllocatorConfig {
        strategy: a.strategy,
        spread_wait_ms: a.round_ms,
        tasks_per_executor: cfg.tasks_per_executor,
        ..AllocatorConfig::default()
    })
    .with_cluster(topology.clone(), cluster);
    let table = AmrmState::new(rack_resolver(&topology), Some(token));
    let spec = ExecutorSpec {
        command: "simulated".into(),
        memory_mb: EXECUTOR_MB,
        ..fixtures::spec(cfg.max_executors)
    };
    let pool = Pool::new(
        allocator,
        table,
        Registry::new(),
        spec,
        "application_0_0001".into(),
    );
    let host_index = trace
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.clone(), i))
        .collect();
    let rack_index = trace
        .racks
        .iter()
        .enumerate()
        .map(|(i, r)| (r.clone(), i))
        .collect();
    Am::new(pool, host_index, rack_index)
}

/// What the rounds measured, for the printed line.
#[derive(Default)]
struct Measured {
    /// Task placements: all, node-local, node- or rack-local.
    seen: u64,
    node_hits: u64,
    rack_hits: u64,
    /// Allocate round trips and the AM's CPU per round, in microseconds.
    rpc_us: Vec<u64>,
    cpu_per_round: Vec<u64>,
    granted: u64,
    rounds: u64,
    /// The first stage's executor target, and when (ms, round) it was first running.
    target: u32,
    first_target: Option<(u64, u64)>,
}

/// The trace's stages, one allocate call a round, until each stage's tasks have run (at
/// most 200 rounds a stage), the idle executors released between stages when the trace
/// says so.
async fn run_stages(
    am: &mut Am,
    client: &mut AmRmClient,
    trace: &Trace,
    round_ms: u64,
    start: Instant,
) -> Result<Measured> {
    let cfg = &trace.config;
    let now_ms = || start.elapsed().as_millis() as u64;
    let mut m = Measured {
        target: (cfg.stages[0] as u32)
            .div_ceil(cfg.tasks_per_executor)
            .min(cfg.max_executors),
        ..Measured::default()
    };
    let mut pending: Vec<[u32; 3]> = Vec::new();
    let mut next_round = Instant::now();
    for stage in &trace.stages {
        pending.extend_from_slice(stage);
        let mut rounds_in_stage = 0;
        while !pending.is_empty() && rounds_in_stage < 200 {
            rounds_in_stage += 1;
            m.rounds += 1;
            tokio::time::sleep_until(next_round.into()).await;
            next_round += Duration::from_millis(round_ms);
            let cpu0 = cpu_us();
            let now = now_ms();
            am.set_demand(now, round_demand(trace, &pending));
            let batch = am.heartbeat(now);
            let asks = am.seen().asks_now();
            am.asks_by_round.push(asks);
            let input = AllocateInput::from_batch(&batch, 0.5);
            let cpu1 = cpu_us();
            let sent = Instant::now();
            let resp = client.allocate(&input).await.context("allocate")?;
            m.rpc_us.push(sent.elapsed().as_micros() as u64);
            let cpu2 = cpu_us();
            m.granted += am.digest(now_ms(), m.rounds, Allocation::from(&resp)) as u64;
            if m.granted == 0 && m.rounds > 30 {
                bail!("no container granted in 30 rounds: see the harness's log");
            }
            if m.first_target.is_none() && am.pool.allocator().running() >= m.target {
                m.first_target = Some((now_ms(), m.rounds));
            }
            let hosts: Vec<usize> = am.seen().executors.values().map(|&(_, n)| n).collect();
            let (runnable, local, rack) = run_round_tasks(trace, &mut pending, hosts.into_iter());
            m.seen += runnable as u64;
            m.node_hits += local as u64;
            m.rack_hits += (local + rack) as u64;
            // The AM's CPU for the round: before the call, and after it (the call's own
            // encoding and decoding land on either side; the wait for the RM is not CPU).
            m.cpu_per_round.push(cpu1 - cpu0 + cpu_us() - cpu2);
        }
        if !cfg.release_between_stages {
            continue;
        }
        // Stage over: the idle executors go (their completions come back from the RM).
        let now = now_ms();
        let all: Vec<ExecutorId> = am.seen().executors.values().map(|&(e, _)| e).collect();
        am.kill(now, all);
    }
    Ok(m)
}

/// Three more calls, so the releases reach the RM and their completions come back.
async fn drain_releases(
    am: &mut Am,
    client: &mut AmRmClient,
    m: &mut Measured,
    round_ms: u64,
    start: Instant,
) -> Result<()> {
    for k in 1..=3 {
        let asks = am.seen().asks_now();
        am.asks_by_round.push(asks);
        tokio::time::sleep(Duration::from_millis(round_ms)).await;
        let batch = am.pool.table.take_batch();
        let resp = client
            .allocate(&AllocateInput::from_batch(&batch, 1.0))
            .await?;
        let now = start.elapsed().as_millis() as u64;
        m.granted += am.digest(now, m.rounds + k, Allocation::from(&resp)) as u64;
    }
    Ok(())
}

/// The printed line: this run's figures beside the RM's counts (the harness's `stats`
/// file), the grant breakdown and the simulator's predictions.
fn report(
    a: &Args,
    trace: &Trace,
    am: &Am,
    mut m: Measured,
    elapsed: Duration,
) -> Result<serde_json::Value> {
    let cfg = &trace.config;
    let stats = wait_for(&a.dir.join("stats"), Duration::from_secs(60))?;
    let num = |k: &str| -> u64 { stats.get(k).and_then(|v| v.parse().ok()).unwrap_or(0) };
    let predicted = predict::predictions(trace, a.strategy);
    let grants = grants::read_grants(&a.dir.join("grants.tsv"))?;
    let breakdown = grants::grant_breakdown(&grants, am);
    let launched_by = am.seen().launched_by;

    let (rpc_us, cpu_per_round) = (&mut m.rpc_us, &mut m.cpu_per_round);
    rpc_us.sort_unstable();
    cpu_per_round.sort_unstable();
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
    Ok(json!({
        "strategy": a.strategy.to_string(),
        "trace": cfg.name,
        "nodes": cfg.nodes,
        "racks": cfg.racks,
        "skew": cfg.skew,
        "seed": cfg.seed,
        "node_local": m.node_hits as f64 / m.seen.max(1) as f64,
        "rack_local": m.rack_hits as f64 / m.seen.max(1) as f64,
        "rounds": m.rounds,
        "wall_s": elapsed.as_secs_f64(),
        "granted": m.granted,
        "matched": { "node": launched_by[0], "rack": launched_by[1], "any": launched_by[2] },
        "rm": {
            "allocated": num("containers_allocated"),
            "node_local": num("node_local"),
            "rack_local": num("rack_local"),
            "off_switch": num("off_switch"),
            "app_state": stats.get("app_state"),
            "nm_heartbeats": num("nm_heartbeats"),
            "nm_heartbeat_mean_us": num("nm_heartbeat_mean_us"),
            "nm_heartbeat_max_ms": num("nm_heartbeat_max_ms"),
            "nm_heartbeat_failures": num("nm_heartbeat_failures"),
            "heap_used_mb": num("rm_heap_used_mb"),
        },
        "target": m.target,
        "to_target_s": m.first_target.map(|(ms, _)| ms as f64 / 1000.0),
        "to_target_rounds": m.first_target.map(|(_, r)| r),
        "allocate_ms": {
            "mean": mean(rpc_us) / 1000.0,
            "p50": percentile(rpc_us, 0.5) as f64 / 1000.0,
            "p99": percentile(rpc_us, 0.99) as f64 / 1000.0,
            "max": rpc_us.last().copied().unwrap_or(0) as f64 / 1000.0,
        },
        "am_cpu_ms_per_round": {
            "mean": mean(cpu_per_round) / 1000.0,
            "p99": percentile(cpu_per_round, 0.99) as f64 / 1000.0,
        },
        "rm_grants": breakdown,
        "sim": predicted["base"],
        "sim_keys": predicted["keys"],
        "sim_keys_what_if_name_work": predicted["keys_what_if_name_work"],
        "sim_keys_what_if_own_key": predicted["keys_what_if_own_key"],
    }))
}

fn main() -> Result<()> {
    let Some(args) = parse_args()? else {
        println!("rm_scale: needs the scale harness; run scripts/scale-bench.sh");
        return Ok(());
    };
    if args.sim_only {
        let trace = Trace::generate(trace_config(&args)?);
        let p = predict::predictions(&trace, args.strategy);
        let asks = predict::first_asks(&trace, args.strategy);
        println!(
            "{}",
            json!({ "strategy": args.strategy.to_string(), "skew": args.skew, "nodes": args.nodes, "sim": p["base"], "sim_keys": p["keys"], "sim_keys_what_if_name_work": p["keys_what_if_name_work"], "sim_keys_what_if_own_key": p["keys_what_if_own_key"], "first_asks": asks })
        );
        return Ok(());
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(run(args))?;
    println!("{result}");
    Ok(())
}
