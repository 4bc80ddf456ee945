//! `yarn-am plan`: one allocator state in (JSON), the requests the update step makes out.
//!
//! This is a public, stable interface: the field names below are a contract.
//!
//! Input (both strategies):
//! `target_executors`, `tasks_per_executor` (> 0), `locality_aware_tasks`,
//! `host_to_local_task_count` (host -> tasks), `running` (host -> executors), `starting`,
//! `pending` (oldest first; each a node list, `[]` = any host), optional `racks`
//! (host -> rack; missing hosts are on `/default-rack`).
//!
//! Extra optional fields, `--strategy default` only (the `spark` strategy rejects them):
//! - `nodes`: the hosts that run a NodeManager; hosts not listed are treated as DataNodes
//!   without one (absent: every host has one);
//! - `capacity`: host -> executors of this app the node can hold in total;
//! - `excluded`: hosts that are excluded or unhealthy.
//!
//! Output: `{"cancel": [indices into pending], "add": [{"count", "nodes", "racks"}]}`, node and
//! rack lists sorted, locality groups widest first; an any-host group has empty lists. The
//! default strategy may also emit rack-only groups (`nodes` empty, `racks` not) for hosts it
//! cannot name (no NodeManager, excluded, full), and counts the requests past every host's
//! work cap in the any-host group (to YARN they name no location; the AM asks again naming
//! their hosts if YARN has not filled them within a NodeManager heartbeat). `pending` has no
//! field for the hosts a request was placed on, so fed back as input they are any-host
//! requests, not what the AM keeps. Bad input: a message on stderr and exit code 2; every
//! count (executors, tasks, capacities) must be between 0 and [`MAX_COUNT`], and the message
//! names the field.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};
use yarn_am_core::allocator::{
    update_requests, Cluster, Demand, HostName, PendingRequest, RackName, Snapshot, Strategy,
    Topology, UpdatePlan,
};

use crate::cli::PlanArgs;

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("reading {what}: {source}")]
    Read {
        what: String,
        source: std::io::Error,
    },
    #[error("bad allocator state: {0}")]
    Json(#[from] serde_json::Error),
    #[error("bad allocator state: {0}")]
    Invalid(String),
    #[error(transparent)]
    Strategy(#[from] yarn_am_core::allocator::strategy::UnknownStrategy),
}

/// Fields both strategies accept. Counts are read as signed so a negative one gets a message
/// naming the field rather than a bare type error.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SparkInput {
    target_executors: i64,
    tasks_per_executor: i64,
    locality_aware_tasks: i64,
    host_to_local_task_count: BTreeMap<String, i64>,
    running: BTreeMap<String, i64>,
    starting: i64,
    pending: Vec<Vec<String>>,
    #[serde(default)]
    racks: BTreeMap<String, String>,
}

/// The `spark` fields plus what only the default strategy understands. The shared fields are
/// spelled out again on purpose: serde's `deny_unknown_fields` does not work together with
/// `flatten`, and each strategy must reject what it does not take with a message that lists
/// the fields it does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultInput {
    target_executors: i64,
    tasks_per_executor: i64,
    locality_aware_tasks: i64,
    host_to_local_task_count: BTreeMap<String, i64>,
    running: BTreeMap<String, i64>,
    starting: i64,
    pending: Vec<Vec<String>>,
    #[serde(default)]
    racks: BTreeMap<String, String>,
    #[serde(default)]
    nodes: Option<Vec<String>>,
    #[serde(default)]
    capacity: BTreeMap<String, i64>,
    #[serde(default)]
    excluded: Vec<String>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct PlanOutput {
    pub cancel: Vec<usize>,
    pub add: Vec<GroupOut>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct GroupOut {
    pub count: u64,
    pub nodes: Vec<String>,
    pub racks: Vec<String>,
}

pub fn run(args: PlanArgs) -> ExitCode {
    match plan(&args) {
        Ok(out) => match serde_json::to_string(&out) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("yarn-am: plan: {e}");
                ExitCode::from(1)
            }
        },
        Err(e) => {
            eprintln!("yarn-am: plan: {e}");
            ExitCode::from(2)
        }
    }
}

fn plan(args: &PlanArgs) -> Result<PlanOutput, PlanError> {
    let strategy: Strategy = args.strategy.parse()?;
    let text = read_input(args)?;
    let (snapshot, topology, cluster) = parse_state(&text, strategy)?;
    let plan = update_requests(&snapshot, strategy, &topology, &cluster);
    Ok(render(&plan))
}

fn read_input(args: &PlanArgs) -> Result<String, PlanError> {
    let mut text = String::new();
    match args.file.as_deref() {
        Some(p) if p.as_os_str() != "-" => {
            text = std::fs::read_to_string(p).map_err(|source| PlanError::Read {
                what: p.display().to_string(),
                source,
            })?;
        }
        _ => {
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|source| PlanError::Read {
                    what: "stdin".into(),
                    source,
                })?;
        }
    }
    Ok(text)
}

/// Parses and validates one allocator state for the given strategy.
pub fn parse_state(
    text: &str,
    strategy: Strategy,
) -> Result<(Snapshot, Topology, Cluster), PlanError> {
    let input: DefaultInput = match strategy {
        Strategy::Spark => {
            let s: SparkInput = serde_json::from_str(text)?;
            DefaultInput {
                target_executors: s.target_executors,
                tasks_per_executor: s.tasks_per_executor,
                locality_aware_tasks: s.locality_aware_tasks,
                host_to_local_task_count: s.host_to_local_task_count,
                running: s.running,
                starting: s.starting,
                pending: s.pending,
                racks: s.racks,
                nodes: None,
                capacity: BTreeMap::new(),
                excluded: Vec::new(),
            }
        }
        Strategy::Default => serde_json::from_str(text)?,
    };
    let tasks_per_executor = count("tasks_per_executor", input.tasks_per_executor)?;
    if tasks_per_executor == 0 {
        return Err(PlanError::Invalid(
            "tasks_per_executor must be at least 1".into(),
        ));
    }
    let demand = Demand {
        target_executors: count("target_executors", input.target_executors)?,
        locality_aware_tasks: count("locality_aware_tasks", input.locality_aware_tasks)?,
        host_to_local_task_count: host_counts(
            "host_to_local_task_count",
            input.host_to_local_task_count,
        )?,
        excluded_hosts: Vec::new(),
        kind: None,
    };
    let snapshot = Snapshot {
        demand,
        tasks_per_executor,
        running: host_counts("running", input.running)?,
        starting: count("starting", input.starting)?,
        // The plan's input gives starting containers as a total only.
        starting_per_host: HashMap::new(),
        pending: input
            .pending
            .into_iter()
            .map(|nodes| {
                PendingRequest::with_nodes(nodes.into_iter().map(HostName::from).collect())
            })
            .collect(),
    };
    let topology = Topology::new(
        input
            .racks
            .into_iter()
            .map(|(h, r)| (HostName::from(h), RackName::from(r)))
            .collect(),
    );
    let cluster = Cluster {
        nodes: input
            .nodes
            .map(|n| n.into_iter().map(HostName::from).collect::<HashSet<_>>()),
        capacity: host_counts("capacity", input.capacity)?,
        excluded: input.excluded.into_iter().map(HostName::from).collect(),
    };
    Ok((snapshot, topology, cluster))
}

/// The largest count `plan` takes in any field: ten million executors or tasks, far past any
/// YARN cluster, and far below where sums of counts could overflow. The update step's own
/// arithmetic is bounded whatever the count (security audit L7), but a state this large is a
/// mistake in the input, better named than planned.
pub const MAX_COUNT: i64 = 10_000_000;

fn count(field: &str, value: i64) -> Result<u32, PlanError> {
    if value < 0 {
        return Err(PlanError::Invalid(format!(
            "{field} must not be negative (got {value})"
        )));
    }
    if value > MAX_COUNT {
        return Err(PlanError::Invalid(format!(
            "{field} is too large (got {value}, at most {MAX_COUNT})"
        )));
    }
    u32::try_from(value)
        .map_err(|_| PlanError::Invalid(format!("{field} is too large (got {value})")))
}

fn host_counts(
    field: &str,
    map: BTreeMap<String, i64>,
) -> Result<HashMap<HostName, u32>, PlanError> {
    map.into_iter()
        .map(|(host, v)| {
            Ok((
                HostName::from(host.as_str()),
                count(&format!("{field}[\"{host}\"]"), v)?,
            ))
        })
        .collect()
}

/// The stable output: node and rack lists sorted, locality groups widest first, then any-host.
pub fn render(plan: &UpdatePlan) -> PlanOutput {
    let mut add: Vec<GroupOut> = Vec::new();
    for g in plan.add_groups() {
        let mut nodes: Vec<String> = g.nodes.iter().map(|n| n.to_string()).collect();
        let mut racks: Vec<String> = g.racks.iter().map(|r| r.to_string()).collect();
        nodes.sort();
        racks.sort();
        // Groups that differ only in hosts left out of the node list (default strategy) look
        // the same to YARN: print them as one.
        match add.last_mut() {
            Some(last) if last.nodes == nodes && last.racks == racks => last.count += g.count,
            _ => add.push(GroupOut {
                count: g.count,
                nodes,
                racks,
            }),
        }
    }
    PlanOutput {
        cancel: plan.cancel.clone(),
        add,
    }
}
