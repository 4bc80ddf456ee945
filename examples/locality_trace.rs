//! The locality simulator's trace families on the real test cluster's layout
//! (`tests/cluster/cluster.sh up --nodes N --racks R`): writes one trace as a job file for
//! `yarn-am submit --job`, or prints what the simulator predicts for it, so that
//! `scripts/locality_bench.py` can put the real CapacityScheduler's outcome beside the model's.
//!
//! ```text
//! cargo run --example locality_trace -- job FAMILY [--nodes 12 --racks 4 --seed 1] > job.json
//! cargo run --example locality_trace -- sim FAMILY [--nodes 12 --racks 4 --seed 1]
//! ```
//!
//! `sim` prints the simulator's outcome for both strategies under three models: `base` (the
//! simulator as the big tables in BENCHMARKS.md run it), `previous` (the first calibration:
//! a fresh random NodeManager order at every heartbeat, one draw), `calibrated`
//! ([`calibrated`]: the NodeManagers keep their heartbeat phases; the mean of [`DRAWS`] draws,
//! as a real figure is the mean of several runs) and `fresh_order` (`calibrated` with a fresh
//! random order at every heartbeat instead, to show what the phases change), and `bound`:
//! the offline optimum's brackets for the same executors (`sim::offline_bound`, a proven upper
//! bound, and `sim::placed_share`, what the bound's own placement reaches without YARN).
//!
//! FAMILY: `uniform`, `skewed`, `very-skewed`, `datanode-only`, `busy`. The trace is the
//! simulator's own (`Trace::generate`, same seed, same tasks), with the hosts renamed to the
//! cluster's: NodeManager `i` is `nm<i+1>` on the rack `cluster.sh` gives it (racks of
//! ceil(N/R) consecutive nodes), DataNode-only hosts are `dnonly<k>` (no NodeManager, no
//! address). One stage of 8 tasks a node, each `sleep 1` (a simulator round is one second),
//! executors of 2 cores (2 a node on the cluster's 4-vcore nodes, 2 tasks each).

use yarn_am_core::sim;

use anyhow::{bail, Context};
use serde_json::json;
use sim::{simulate, Trace, TraceConfig};
use yarn_am_core::allocator::{HostName, RackName, Strategy, DEFAULT_RACK};

/// Executors a node holds: 4 vcores, executors of 2.
const CAPACITY: u32 = 2;
const EXECUTOR_CORES: u32 = 2;
/// The cluster's `yarn.scheduler.capacity.node-locality-delay`.
const NODE_LOCALITY_DELAY: u32 = 3;
/// Draws of the ResourceManager's randomness (heartbeat order) averaged per prediction.
const DRAWS: u64 = 20;
/// How far a NodeManager's place in the heartbeat order moves from one interval to the next
/// (`TraceConfig::heartbeat_phase_jitter`), in places (the cluster has 12 nodes). Chosen to
/// match how much the real scheduler packed executors (distinct hosts per run, both
/// strategies), not the locality: 0 packs more than the real runs, a fresh order every time
/// less (BENCHMARKS.md).
const PHASE_JITTER: f64 = 12.0;

struct Args {
    family: String,
    nodes: usize,
    racks: usize,
    seed: u64,
}

fn config(a: &Args) -> anyhow::Result<TraceConfig> {
    let skew = |s| TraceConfig {
        capacity: CAPACITY,
        tasks_per_executor: EXECUTOR_CORES,
        max_executors: (a.nodes as u32 * 2 / 3).max(4),
        stages: vec![a.nodes * 8],
        node_locality_delay: NODE_LOCALITY_DELAY,
        racks: a.racks,
        datanode_only: 0,
        ..TraceConfig::standard(&a.family, a.nodes, s, a.seed)
    };
    Ok(match a.family.as_str() {
        "uniform" => skew(0.0),
        "skewed" => skew(0.8),
        "very-skewed" => skew(1.2),
        "datanode-only" => TraceConfig {
            datanode_only: (a.nodes * 3).div_ceil(10),
            ..skew(0.8)
        },
        // Another application holds part of the cluster (the bench runs one beside): the
        // model's nodes offer room in half of the rounds.
        "busy" => TraceConfig {
            offer_probability: 0.5,
            ..skew(0.8)
        },
        other => {
            bail!("unknown family `{other}` (uniform, skewed, very-skewed, datanode-only, busy)")
        }
    })
}

/// The simulator's trace with the cluster's host and rack names.
fn trace(a: &Args) -> anyhow::Result<Trace> {
    let mut t = Trace::generate(config(a)?);
    let per = a.nodes.div_ceil(a.racks);
    t.racks = (1..=a.racks)
        .map(|r| RackName::from(format!("/rack{r}")))
        .collect();
    for i in 0..t.hosts.len() {
        if i < a.nodes {
            t.hosts[i] = HostName::from(format!("nm{}", i + 1));
            t.host_rack[i] = i / per;
        } else {
            t.hosts[i] = HostName::from(format!("dnonly{}", i - a.nodes + 1));
        }
    }
    Ok(t)
}

/// The same trace with what the base model leaves out of the real run (see BENCHMARKS.md,
/// "Simulator against the real scheduler"): the NMs heartbeat twice per one-second round
/// (500 ms), the driver holds tasks for 3 s per locality level (`locality_wait_ms`) with Spark
/// 3.1's reset rule, ramps its executor target up 1, 2, 4, ... as Spark's allocation manager
/// does, an executor takes tasks 2 s after its grant (launch, localisation, registration),
/// hosts without a NodeManager have no rack the AM knows, and the NodeManagers heartbeat in
/// the same order every interval (`fixed_heartbeat_order`; `previous` draws a new order each
/// time).
fn calibrated(t: Trace) -> Trace {
    let mut t = previous(t);
    t.config.heartbeat_phase_jitter = Some(PHASE_JITTER);
    t.config.strict_requests = true;
    // The competing application of the busy family holds about half of every node (12
    // containers of 2 vcores and its AM on 12 nodes of 4), so each node has room for one of
    // our executors all along, rather than for two half of the time.
    if t.config.offer_probability < 1.0 {
        t.config.offer_probability = 1.0;
        t.config.capacity = 1;
    }
    t
}

/// The first calibration (BENCHMARKS.md, "Simulator against the real scheduler"), kept to
/// show what the fixed heartbeat order changed.
fn previous(mut t: Trace) -> Trace {
    t.config.offers_per_round = 2;
    t.config.locality_wait_rounds = 3;
    t.config.ramp_up = true;
    t.config.launch_rounds = 2;
    // The AM learns racks from the RM's node list: a host without a NodeManager is on
    // /default-rack to it, a rack with no NodeManager, so no task is rack-local through it.
    if t.hosts.len() > t.config.nodes {
        let unknown = t.racks.len();
        t.racks.push(RackName::from(DEFAULT_RACK));
        for r in &mut t.host_rack[t.config.nodes..] {
            *r = unknown;
        }
    }
    t
}

fn job(a: &Args, t: &Trace) -> serde_json::Value {
    let tasks: Vec<_> = t.stages[0]
        .iter()
        .enumerate()
        .map(|(i, hosts)| {
            json!({
                "id": format!("t{i:04}"),
                "command": "sleep 1",
                "preferred_hosts": hosts.iter().map(|&h| t.hosts[h as usize].to_string()).collect::<Vec<_>>(),
                "cpus": 1,
            })
        })
        .collect();
    json!({
        "name": format!("locality-{}-{}", a.family, a.seed),
        "executor": {
            "cores": EXECUTOR_CORES,
            "memory_mb": 512,
            "min_executors": 0,
            "max_executors": t.config.max_executors,
            "initial_executors": 0,
            "idle_timeout_ms": 5000,
        },
        "task_retries": 4,
        "locality_wait_ms": {"node": 3000, "rack": 3000},
        "tasks": tasks,
    })
}

/// The simulator's outcome for `strategy`, averaged over `draws` draws of the
/// ResourceManager's randomness (draw 0 alone when `draws` is 1).
fn mean_of_draws(trace: &Trace, strategy: Strategy, draws: u64) -> serde_json::Value {
    let mut sum = [0.0f64; 8];
    for draw in 0..draws {
        let mut t = trace.clone();
        t.config.rm_draw = draw;
        let r = simulate(&t, strategy);
        let one = [
            r.node_local,
            r.rack_local,
            r.requests as f64,
            r.reasked as f64,
            r.granted as f64,
            r.off_switch as f64,
            r.rounds as f64,
            r.executor_hosts as f64,
        ];
        for (s, x) in sum.iter_mut().zip(one) {
            *s += x / draws as f64;
        }
    }
    let [node_local, rack_local, requests, reasked, granted, off_switch, rounds, executor_hosts] =
        sum;
    json!({
        "node_local": node_local,
        "rack_local": rack_local,
        "requests": requests,
        "reasked": reasked,
        "granted": granted,
        "off_switch": off_switch,
        "rounds": rounds,
        "executor_hosts": executor_hosts,
        "draws": draws,
    })
}

fn parse() -> anyhow::Result<(String, Args)> {
    let mut it = std::env::args().skip(1);
    let what = it
        .next()
        .context("usage: locality_trace job|sim FAMILY [--nodes N --racks R --seed S]")?;
    let family = it.next().context("a FAMILY after job|sim")?;
    let mut a = Args {
        family,
        nodes: 12,
        racks: 4,
        seed: 1,
    };
    while let Some(flag) = it.next() {
        let v = it.next().with_context(|| format!("{flag} wants a value"))?;
        match flag.as_str() {
            "--nodes" => a.nodes = v.parse().context("--nodes")?,
            "--racks" => a.racks = v.parse().context("--racks")?,
            "--seed" => a.seed = v.parse().context("--seed")?,
            _ => bail!("unknown option {flag}"),
        }
    }
    if a.racks == 0 || a.racks > a.nodes {
        bail!("--racks must be 1..=--nodes");
    }
    Ok((what, a))
}

fn main() -> anyhow::Result<()> {
    let (what, a) = parse()?;
    let t = trace(&a)?;
    match what.as_str() {
        "job" => println!("{}", serde_json::to_string_pretty(&job(&a, &t))?),
        "sim" => {
            let mut models = serde_json::Map::new();
            // The offline optimum brackets, on the calibrated trace (its busy family has the
            // room for one executor a node that the real competing application leaves):
            // `upper` no placement of the same executors can beat, `reached` one achieves.
            let cal = calibrated(t.clone());
            models.insert(
                "bound".into(),
                json!({
                    "upper": sim::offline_bound(&cal),
                    "reached": sim::placed_share(&cal),
                }),
            );
            let mut fresh = calibrated(t.clone());
            fresh.config.heartbeat_phase_jitter = None;
            for (model, trace, draws) in [
                ("base", t.clone(), 1),
                ("previous", previous(t.clone()), 1),
                ("fresh_order", fresh, DRAWS),
                ("calibrated", calibrated(t), DRAWS),
            ] {
                let mut out = serde_json::Map::new();
                for s in [Strategy::Spark, Strategy::Default] {
                    out.insert(s.to_string(), mean_of_draws(&trace, s, draws));
                }
                models.insert(model.into(), serde_json::Value::Object(out));
            }
            println!("{}", serde_json::Value::Object(models));
        }
        other => bail!("unknown command {other} (job or sim)"),
    }
    Ok(())
}
