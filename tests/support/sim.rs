//! A locality simulator: a small model of the ResourceManager fed by demand traces, to compare
//! the strategies on the same input.
//!
//! The model, deliberately simple but faithful where locality is decided:
//! - the cluster has NodeManagers on racks, each holding `capacity` executors; some DataNodes
//!   (hosts holding replicas) run no NodeManager;
//! - each task prefers the 3 hosts holding its block's replicas, drawn with skewed popularity
//!   (weight `1 / rank^skew`) from NodeManagers and DataNode-only hosts alike;
//! - every round the driver sends its whole demand (target = pending tasks / tasks per
//!   executor, capped), the allocator updates its requests, and the RM sees the absolute
//!   request table as YARN does: per host, per rack and ANY counts;
//! - the RM offers every node once per round (a round is one NodeManager heartbeat interval,
//!   [`ROUND_MS`], the time the allocator is given), in random order (a node busy with other
//!   tenants offers nothing), with capacity-scheduler delay scheduling: node-local always; rack-local
//!   after `node_locality_delay` missed offers; off-switch after
//!   `min(nodes, ANY * min(1, locations / nodes))` missed offers; a non-off-switch grant resets
//!   the count. A node-local container needs the rack's count above 0 too (YARN checks the
//!   rack first). A node keeps taking containers in one heartbeat while it has room, but stops
//!   after its first off-switch one;
//! - `locations` is the number of host and rack entries the RM holds for our requests, which
//!   is not the number of locations with a positive count (below);
//! - granted containers go through the allocator's matching; launched executors start at once;
//!   each executor then finishes `tasks_per_executor` pending tasks per round (the same tasks
//!   whatever the strategy, so both see the same demand);
//! - at the end of each stage all executors are released (idle timeout), unless the trace
//!   keeps them.
//!
//! # The CapacityScheduler facts behind the off-switch rule
//!
//! Read in the Hadoop 3.x source (`RegularContainerAllocator`, `LocalityAppPlacementAllocator`,
//! `AppSchedulingInfo`, `CapacityScheduler`, `CapacitySchedulerConfiguration`):
//! - the off-switch check allows a container once the missed scheduling opportunities exceed
//!   `min(cluster nodes, ANY count * min(1, (unique location asks - 1) / cluster nodes))`,
//!   where the unique location asks are the size of the app's per-key map of resource
//!   requests (hosts, racks and ANY);
//! - an ask from the AM is stored in that map whatever its count, 0 included, and stays there:
//!   an entry leaves the map only when the scheduler's own allocation brings its count to 0,
//!   and the whole map is dropped only when the AM sends an ANY count of 0. The AM sends a 0
//!   for every location whose count it lowers to 0 (our request table does, as Hadoop's
//!   `AMRMClient` does), including right after the scheduler dropped that entry. So the map
//!   holds every host and rack the AM has named since its table was last empty. A host that
//!   runs no NodeManager counts like any other: the RM does not check the names it is sent;
//! - before a node-local or rack-local container the scheduler checks that the app's count for
//!   the node's rack is above 0: host asks cannot outlast their rack's count;
//! - one node heartbeat assigns at most one off-switch container
//!   (`yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments`, default 1);
//!   node- and rack-local ones may be several.
//!
//! The model follows these facts: each round's allocate call adds every location with a
//! positive count to the RM's entries (or clears them when nothing is pending), and a location
//! whose count the round's grants bring to 0 stops counting until the next round.
//! Consequence for the strategies: the more distinct hosts an application names, the longer
//! YARN holds out for locality, whether or not YARN could ever place a container on them.
//!
//! Calibration knobs, off by default (the big tables in BENCHMARKS.md run without them;
//! `examples/locality_trace.rs` sets them to match the real 12-node test cluster):
//! `offers_per_round` (NodeManager heartbeats per one-second round: 2 at the test cluster's
//! 500 ms), `locality_wait_rounds` (the driver's delay scheduling, Spark 3.1's reset rule),
//! `ramp_up` (Spark's executor target growing 1, 2, 4, ... a round) and `launch_rounds` (grant
//! to first task). With delay scheduling the shares are of launched tasks, as the real job
//! report counts them.
//!
//! Reported: over every round, the share of pending locality-aware tasks that had an executor
//! on one of their hosts (could run node-local) or on one of their hosts' racks (rack-local or
//! better), the number of container requests the allocator sent, how many containers the RM
//! granted (off-switch among them), and how many node asks named hosts without a NodeManager.

// Shared through `#[path]` by a test, a bench and an example, each using part of it.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use yarn_am::allocator::exit_status;
use yarn_am::allocator::matching::Container;
use yarn_am::allocator::tracker::{Action, Allocator, AllocatorConfig, CompletedContainer, Event};
use yarn_am::allocator::{Cluster, Demand, HostName, RackName, Snapshot, Strategy, Topology};

/// One round: every node heartbeats once, at YARN's default NodeManager heartbeat interval.
pub const ROUND_MS: u64 = 1_000;

/// SplitMix64: small, fast, deterministic; good enough to shuffle and sample.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// Host and rack indices one request names.
type Locations = (Vec<usize>, Vec<usize>);

/// One demand trace and the cluster it runs on.
#[derive(Debug, Clone)]
pub struct TraceConfig {
    pub name: String,
    /// Hosts running a NodeManager.
    pub nodes: usize,
    pub racks: usize,
    /// Hosts holding replicas but running no NodeManager.
    pub datanode_only: usize,
    /// Executors each NodeManager can hold.
    pub capacity: u32,
    pub tasks_per_executor: u32,
    pub max_executors: u32,
    /// Tasks in each stage, run one after the other.
    pub stages: Vec<usize>,
    /// Popularity exponent (0: uniform).
    pub skew: f64,
    pub node_locality_delay: u32,
    /// Share of hosts holding each stage's data (a new random subset and ranking per stage).
    pub dataset_fraction: f64,
    /// Chance that a node heartbeats with room for us in a round (other tenants keep the
    /// rest busy); below 1, requests linger across rounds.
    pub offer_probability: f64,
    /// Release all executors at the end of a stage (idle timeout). Without it, executors stay
    /// and the target can stay exactly met across the stage change.
    pub release_between_stages: bool,
    /// Submit the next stage when the current one is half done (overlapping jobs), so the
    /// target stays up while the preferred hosts move.
    pub pipelined: bool,
    /// Chance per round that an executor is preempted (exit -102) and must be replaced.
    pub preemption: f64,
    pub seed: u64,
    /// NodeManager heartbeats per round: each is one scheduling opportunity per node (the
    /// test cluster's NMs beat every 500 ms, twice per one-second round).
    pub offers_per_round: u32,
    /// The driver's delay scheduling in rounds (`spark.locality.wait` / round): a task set that
    /// launched nothing node-local for this many rounds may launch rack-local, after as many
    /// again anywhere; a node-local launch starts the wait again. 0: every free slot runs a
    /// task at once (the best placement the round's executors allow).
    pub locality_wait_rounds: u32,
    /// The driver's executor ramp-up (Spark's ExecutorAllocationManager with 1 s backlog
    /// timeouts): the target grows by 1, 2, 4, ... a round up to the need. False: the whole
    /// need at once.
    pub ramp_up: bool,
    /// Rounds from a grant until the executor takes tasks (container launch, binary
    /// localisation, registration with the driver). 0: at once.
    pub launch_rounds: u64,
}

impl TraceConfig {
    /// A trace of `nodes` NodeManagers with the usual shape: 20 nodes a rack, a tenth as many
    /// DataNode-only hosts, 4 executors a node, 2 tasks an executor.
    pub fn standard(name: &str, nodes: usize, skew: f64, seed: u64) -> TraceConfig {
        TraceConfig {
            name: name.to_string(),
            nodes,
            racks: nodes.div_ceil(20).max(1),
            datanode_only: nodes / 10,
            capacity: 4,
            tasks_per_executor: 2,
            max_executors: (nodes as u32 / 5).max(4),
            stages: vec![nodes * 8, nodes * 3, nodes * 12],
            skew,
            node_locality_delay: 20,
            dataset_fraction: 1.0,
            offer_probability: 1.0,
            release_between_stages: true,
            pipelined: false,
            preemption: 0.0,
            seed,
            offers_per_round: 1,
            locality_wait_rounds: 0,
            ramp_up: false,
            launch_rounds: 0,
        }
    }

    /// Each stage reads a different dataset on a third of the hosts, stages overlap (the next
    /// is submitted when the current one is half done), the cluster is busy (a node has room
    /// for us in one round out of twenty) and executors stay: the case where stale requests
    /// linger with the target exactly met.
    pub fn shifting(name: &str, nodes: usize, seed: u64) -> TraceConfig {
        TraceConfig {
            dataset_fraction: 0.33,
            offer_probability: 0.05,
            release_between_stages: false,
            pipelined: true,
            preemption: 0.05,
            max_executors: (nodes as u32 / 2).max(4),
            ..TraceConfig::standard(name, nodes, 0.8, seed)
        }
    }
}

/// The generated cluster and tasks.
#[derive(Debug, Clone)]
pub struct Trace {
    pub config: TraceConfig,
    /// All hosts: NodeManagers first (`0..nodes`), then DataNode-only hosts.
    pub hosts: Vec<HostName>,
    pub host_rack: Vec<usize>,
    pub racks: Vec<RackName>,
    /// Per stage, each task's preferred hosts (indices into `hosts`).
    pub stages: Vec<Vec<[u32; 3]>>,
}

impl Trace {
    pub fn generate(config: TraceConfig) -> Trace {
        let mut rng = Rng::new(config.seed);
        let total = config.nodes + config.datanode_only;
        let hosts: Vec<HostName> = (0..total)
            .map(|i| {
                if i < config.nodes {
                    HostName::from(format!("nm{i:05}"))
                } else {
                    HostName::from(format!("dn{:05}", i - config.nodes))
                }
            })
            .collect();
        let racks: Vec<RackName> = (0..config.racks)
            .map(|r| RackName::from(format!("/rack{r:03}")))
            .collect();
        let host_rack: Vec<usize> = (0..total).map(|i| i % config.racks).collect();
        // Per stage: the hosts holding its data (a random subset), ranked at random, weight
        // 1/rank^skew, sampled through the cumulative sum.
        let stages = config
            .stages
            .iter()
            .map(|&n| {
                let mut order: Vec<usize> = (0..total).collect();
                rng.shuffle(&mut order);
                order.truncate(
                    ((total as f64 * config.dataset_fraction).ceil() as usize)
                        .clamp(3.min(total), total),
                );
                let mut cumulative = Vec::with_capacity(order.len());
                let mut acc = 0.0;
                for rank in 0..order.len() {
                    acc += 1.0 / ((rank + 1) as f64).powf(config.skew);
                    cumulative.push(acc);
                }
                let pick = |rng: &mut Rng| -> u32 {
                    let x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * acc;
                    let rank = cumulative.partition_point(|&c| c < x).min(order.len() - 1);
                    order[rank] as u32
                };
                let distinct = order.len();
                (0..n)
                    .map(|_| {
                        let a = pick(&mut rng);
                        let mut b = pick(&mut rng);
                        while b == a && distinct > 1 {
                            b = pick(&mut rng);
                        }
                        let mut c = pick(&mut rng);
                        while (c == a || c == b) && distinct > 2 {
                            c = pick(&mut rng);
                        }
                        [a, b, c]
                    })
                    .collect()
            })
            .collect();
        Trace {
            config,
            hosts,
            host_rack,
            racks,
            stages,
        }
    }

    fn topology(&self) -> Topology {
        Topology::new(
            self.hosts
                .iter()
                .zip(&self.host_rack)
                .map(|(h, &r)| (h.clone(), self.racks[r].clone()))
                .collect(),
        )
    }

    fn cluster(&self) -> Cluster {
        Cluster {
            nodes: Some(self.hosts[..self.config.nodes].iter().cloned().collect()),
            capacity: self.hosts[..self.config.nodes]
                .iter()
                .map(|h| (h.clone(), self.config.capacity))
                .collect(),
            excluded: HashSet::new(),
        }
    }
}

/// What one strategy achieved on one trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimResult {
    /// Share of pending locality-aware task-rounds with an executor on a preferred host.
    pub node_local: f64,
    /// Share with an executor on a preferred host or its rack.
    pub rack_local: f64,
    /// Container requests sent (added to the table).
    pub requests: u64,
    /// Requests asked again with more nodes (default strategy, rule 4): no new container,
    /// but a change to YARN's table.
    pub reasked: u64,
    /// Containers granted.
    pub granted: u64,
    /// Of those, containers the RM granted off-switch (no node or rack ask matched the node).
    pub off_switch: u64,
    /// Node-level asks on hosts without a NodeManager, summed over rounds: asks YARN can
    /// never grant (it still counts them as locations, see the module docs).
    pub asks_without_nodemanager: u64,
    pub rounds: u64,
}

/// Runs `trace` with `strategy`. Deterministic for a given trace.
pub fn simulate(trace: &Trace, strategy: Strategy) -> SimResult {
    simulate_with(
        trace,
        AllocatorConfig {
            strategy,
            ..AllocatorConfig::default()
        },
    )
}

/// [`simulate`] with an allocator configured by hand (e.g. to switch off a rule); the
/// executors' size (`tasks_per_executor`) is the trace's.
pub fn simulate_with(trace: &Trace, config: AllocatorConfig) -> SimResult {
    let cfg = &trace.config;
    let topology = trace.topology();
    let config = AllocatorConfig {
        tasks_per_executor: cfg.tasks_per_executor,
        ..config
    };
    let mut alloc = Allocator::new(config).with_cluster(topology.clone(), trace.cluster());
    let mut rng = Rng::new(cfg.seed ^ 0x5EED);
    let host_index: HashMap<HostName, usize> = trace
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.clone(), i))
        .collect();
    let rack_index: HashMap<RackName, usize> = trace
        .racks
        .iter()
        .enumerate()
        .map(|(i, r)| (r.clone(), i))
        .collect();
    let mut used = vec![0u32; cfg.nodes];
    let mut executors: HashMap<Arc<str>, usize> = HashMap::new();
    // The round from which each executor takes tasks (`launch_rounds` after its grant).
    let mut ready_at: HashMap<Arc<str>, u64> = HashMap::new();
    let mut launched_ids: Vec<(yarn_am::executor_id::ExecutorId, Arc<str>)> = Vec::new();
    let mut next_container = 0u64;
    let mut missed = 0u64;
    // The RM's location entries for our request key (hosts, racks): the off-switch wait counts
    // them, including entries the AM has set to 0 (see the module docs).
    let mut host_entry = vec![false; trace.hosts.len()];
    let mut rack_entry = vec![false; trace.racks.len()];
    let (mut tasks_seen, mut node_hits, mut rack_hits) = (0u64, 0u64, 0u64);
    let mut out = SimResult {
        node_local: 0.0,
        rack_local: 0.0,
        requests: 0,
        reasked: 0,
        granted: 0,
        off_switch: 0,
        asks_without_nodemanager: 0,
        rounds: 0,
    };

    // Ramp-up: (target, next increase).
    let mut ramp = (0u32, 1u32);
    // Delay scheduling: the task set's allowed level (0 node, 1 rack, 2 any) and the rounds
    // since its last launch at that level.
    let (mut level, mut since) = (0u8, 0u32);
    let mut pending: Vec<[u32; 3]> = Vec::new();
    for (k, stage) in trace.stages.iter().enumerate() {
        pending.extend_from_slice(stage);
        // Pipelined: the next stage arrives when this one is half done.
        let threshold = if cfg.pipelined && k + 1 < trace.stages.len() {
            stage.len() / 2
        } else {
            0
        };
        let mut rounds_in_stage = 0;
        while pending.len() > threshold && rounds_in_stage < 200 {
            rounds_in_stage += 1;
            out.rounds += 1;
            let now = out.rounds * ROUND_MS;
            // The driver's whole demand.
            let mut counts: HashMap<HostName, u32> = HashMap::new();
            for t in &pending {
                for &h in t {
                    *counts.entry(trace.hosts[h as usize].clone()).or_insert(0) += 1;
                }
            }
            let need = (pending.len() as u32)
                .div_ceil(cfg.tasks_per_executor)
                .min(cfg.max_executors);
            let target = if cfg.ramp_up {
                if need > ramp.0 {
                    ramp = ((ramp.0 + ramp.1).min(need), ramp.1 * 2);
                } else {
                    ramp = (need, 1);
                }
                ramp.0
            } else {
                need
            };
            let demand = Demand {
                target_executors: target,
                locality_aware_tasks: pending.len() as u32,
                host_to_local_task_count: counts,
                ..Demand::default()
            };
            alloc.on_event(now, Event::DemandChanged(demand));
            for a in alloc.on_event(now, Event::Heartbeat) {
                match a {
                    Action::AddRequests { ids, .. } => out.requests += ids.len() as u64,
                    Action::ReplaceRequests { ids, .. } => out.reasked += ids.len() as u64,
                    _ => {}
                }
            }

            // The RM's absolute table.
            let mut host_asks = vec![0u64; trace.hosts.len()];
            let mut rack_asks = vec![0u64; trace.racks.len()];
            let mut any_asks = 0u64;
            let mut seen: HashMap<(*const HostName, *const RackName), Locations> = HashMap::new();
            for req in alloc.pending() {
                any_asks += 1;
                if req.is_any_host() {
                    continue;
                }
                let key = (req.nodes.as_ptr(), req.racks.as_ptr());
                let (hs, rs) = seen.entry(key).or_insert_with(|| {
                    let hs: Vec<usize> = req
                        .nodes
                        .iter()
                        .filter_map(|n| host_index.get(n).copied())
                        .collect();
                    let rs: HashSet<usize> = if req.racks.is_empty() {
                        req.nodes
                            .iter()
                            .map(|n| rack_index[topology.rack_of(n)])
                            .collect()
                    } else {
                        req.racks.iter().map(|r| rack_index[r]).collect()
                    };
                    (hs, rs.into_iter().collect())
                });
                for &h in hs.iter() {
                    host_asks[h] += 1;
                }
                for &r in rs.iter() {
                    rack_asks[r] += 1;
                }
            }
            out.asks_without_nodemanager += host_asks[cfg.nodes..].iter().sum::<u64>();
            // This round's allocate call. An ANY of 0 (nothing pending) makes the RM drop the
            // whole request key, zero entries included; otherwise every location sent stays an
            // entry, even once the AM has set it back to 0.
            if any_asks == 0 {
                host_entry.iter_mut().for_each(|e| *e = false);
                rack_entry.iter_mut().for_each(|e| *e = false);
            }
            for (e, &c) in host_entry.iter_mut().zip(&host_asks) {
                *e |= c > 0;
            }
            for (e, &c) in rack_entry.iter_mut().zip(&rack_asks) {
                *e |= c > 0;
            }
            let mut locations = host_entry.iter().filter(|&&e| e).count()
                + rack_entry.iter().filter(|&&e| e).count();
            let delay = u64::from(cfg.node_locality_delay).min(cfg.nodes as u64);

            let mut granted = Vec::new();
            for _ in 0..cfg.offers_per_round.max(1) {
                let mut offers: Vec<usize> = (0..cfg.nodes).collect();
                rng.shuffle(&mut offers);
                // Draw every node's coin whatever happens, so both strategies see the same offers.
                let busy: Vec<bool> = (0..cfg.nodes)
                    .map(|_| {
                        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 >= cfg.offer_probability
                    })
                    .collect();
                for n in offers {
                    if busy[n] {
                        continue;
                    }
                    let r = trace.host_rack[n];
                    // One heartbeat: the node takes containers while it has room and the app asks,
                    // and stops after its first off-switch container.
                    while any_asks > 0 && used[n] < cfg.capacity {
                        missed += 1;
                        let wait_factor = (locations as f64 / cfg.nodes as f64).min(1.0);
                        let off_switch_wait = (cfg.nodes as f64).min(any_asks as f64 * wait_factor);
                        // An entry the allocation brings to 0 leaves the RM's map until the AM's next
                        // call sends it again.
                        let mut take = |count: &mut u64| {
                            *count -= 1;
                            if *count == 0 {
                                locations -= 1;
                            }
                        };
                        // A node-local container also needs the rack's count above 0 (the
                        // scheduler checks the rack first); other nodes' grants may have used it up.
                        let off_switch = if host_asks[n] > 0 && rack_asks[r] > 0 {
                            take(&mut host_asks[n]);
                            take(&mut rack_asks[r]);
                            missed = 0;
                            false
                        } else if rack_asks[r] > 0 && missed > delay {
                            take(&mut rack_asks[r]);
                            missed = 0;
                            false
                        } else if (missed as f64) > off_switch_wait {
                            true
                        } else {
                            break;
                        };
                        any_asks -= 1;
                        used[n] += 1;
                        next_container += 1;
                        granted.push(Container {
                            id: Arc::from(format!("c{next_container}")),
                            host: trace.hosts[n].clone(),
                            rack: trace.racks[r].clone(),
                        });
                        if off_switch {
                            out.off_switch += 1;
                            break;
                        }
                    }
                }
            }
            out.granted += granted.len() as u64;
            for a in alloc.on_event(now, Event::ContainersGranted(granted)) {
                if let Action::LaunchExecutor {
                    container,
                    executor,
                    ..
                } = a
                {
                    let n = host_index[&container.host];
                    executors.insert(container.id.clone(), n);
                    ready_at.insert(container.id.clone(), out.rounds + cfg.launch_rounds);
                    launched_ids.push((executor, container.id.clone()));
                    alloc.on_event(
                        now,
                        Event::ExecutorLaunched {
                            container: container.id,
                        },
                    );
                }
            }
            // Containers the allocator released at once free their slot again.
            used.iter_mut().for_each(|u| *u = 0);
            for &n in executors.values() {
                used[n] += 1;
            }

            // Preemption: each executor's fate is a hash of (seed, round, container), so it does
            // not depend on how many random numbers either strategy drew.
            if cfg.preemption > 0.0 {
                let mut gone: Vec<Arc<str>> = executors
                    .keys()
                    .filter(|id| {
                        let mut h = Rng::new(cfg.seed ^ out.rounds.wrapping_mul(0x9E37) ^ fnv(id));
                        ((h.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < cfg.preemption
                    })
                    .cloned()
                    .collect();
                gone.sort();
                for id in &gone {
                    executors.remove(id);
                }
                if !gone.is_empty() {
                    let done = gone
                        .into_iter()
                        .map(|id| CompletedContainer {
                            id,
                            exit_status: exit_status::codes::PREEMPTED,
                            diagnostics: String::new(),
                        })
                        .collect();
                    alloc.on_event(now, Event::ContainersCompleted(done));
                    used.iter_mut().for_each(|u| *u = 0);
                    for &n in executors.values() {
                        used[n] += 1;
                    }
                }
            }
            // Measure: place this round's tasks on executor slots, node-local first, then
            // rack-local, then anywhere (what the driver's delay scheduling aims for).
            let mut host_slots = vec![0usize; trace.hosts.len()];
            for (id, &n) in &executors {
                if ready_at.get(id).is_none_or(|&r| r <= out.rounds) {
                    host_slots[n] += cfg.tasks_per_executor as usize;
                }
            }
            let slots: usize = host_slots.iter().sum();
            let runnable = slots.min(pending.len());
            // Delay scheduling (the driver's, after Spark 3.1's TaskSetManager): a level no
            // pending task can use is skipped; otherwise the set moves on once
            // `locality_wait_rounds` have passed since the clock last restarted.
            let (rack_ok, any_ok) = if cfg.locality_wait_rounds == 0 {
                (true, true)
            } else if slots == 0 {
                // No live executor: nothing was declined, the clock restarts.
                since = 0;
                (false, false)
            } else {
                let mut rack_has = vec![false; trace.racks.len()];
                for (h, &s) in host_slots.iter().enumerate() {
                    rack_has[trace.host_rack[h]] |= s > 0;
                }
                let node_valid = pending
                    .iter()
                    .any(|t| t.iter().any(|&h| host_slots[h as usize] > 0));
                let rack_valid = pending
                    .iter()
                    .any(|t| t.iter().any(|&h| rack_has[trace.host_rack[h as usize]]));
                loop {
                    let valid = match level {
                        0 => node_valid,
                        1 => rack_valid,
                        _ => break,
                    };
                    if !valid {
                        since = 0;
                    } else if since >= cfg.locality_wait_rounds {
                        since -= cfg.locality_wait_rounds;
                    } else {
                        break;
                    }
                    level += 1;
                }
                (level >= 1, level >= 2)
            };
            let before = pending.len();
            let (local, rack, launched) =
                place_round(trace, &mut pending, host_slots, runnable, rack_ok, any_ok);
            tasks_seen += launched as u64;
            node_hits += local as u64;
            rack_hits += (local + rack) as u64;
            // Spark 3.1's reset rule (SPARK-18886): only a round that launched something and
            // declined nothing (no free slot left that a pending task could take at a looser
            // level) brings the level back to the most local one it launched at and restarts
            // the clock; otherwise the clock keeps running.
            let declined = !any_ok && launched < slots && launched < before;
            if launched > 0 && !declined {
                level = if local > 0 {
                    0
                } else if rack > 0 {
                    1
                } else {
                    2
                };
                since = 0;
            } else {
                since += 1;
            }
        }
        if !cfg.release_between_stages || threshold > 0 {
            continue;
        }
        // Stage over: idle executors go away.
        let now = out.rounds * ROUND_MS;
        for (executor, id) in launched_ids.drain(..) {
            if executors.remove(&id).is_some() {
                alloc.on_event(now, Event::KillExecutor { executor });
                alloc.on_event(
                    now,
                    Event::ContainersCompleted(vec![CompletedContainer {
                        id,
                        exit_status: exit_status::codes::KILLED_BY_APPMASTER,
                        diagnostics: String::new(),
                    }]),
                );
            }
        }
        used.iter_mut().for_each(|u| *u = 0);
    }
    out.node_local = node_hits as f64 / tasks_seen.max(1) as f64;
    out.rack_local = rack_hits as f64 / tasks_seen.max(1) as f64;
    out
}

/// One round of tasks on executor slots (`host_slots[h]` free task slots on host `h`), as the
/// driver's delay scheduling aims for: node-local first, then rack-local when `rack_ok`, then
/// the oldest others up to `runnable` when `any_ok`. The tasks that ran leave `pending`.
/// Returns (node-local, rack-local, launched). Shared with `benches/rm_scale.rs`, which
/// measures the real scheduler's grants the same way.
pub fn place_round(
    trace: &Trace,
    pending: &mut Vec<[u32; 3]>,
    mut host_slots: Vec<usize>,
    runnable: usize,
    rack_ok: bool,
    any_ok: bool,
) -> (usize, usize, usize) {
    let mut placed = vec![false; pending.len()];
    let mut local = 0usize;
    for (i, t) in pending.iter().enumerate() {
        if local == runnable {
            break;
        }
        if let Some(&h) = t.iter().find(|&&h| host_slots[h as usize] > 0) {
            host_slots[h as usize] -= 1;
            placed[i] = true;
            local += 1;
        }
    }
    let mut rack_slots = vec![0usize; trace.racks.len()];
    for (h, &s) in host_slots.iter().enumerate() {
        rack_slots[trace.host_rack[h]] += s;
    }
    let mut rack = 0usize;
    for (i, t) in pending.iter().enumerate() {
        if local + rack == runnable || !rack_ok {
            break;
        }
        if placed[i] {
            continue;
        }
        if let Some(&h) = t
            .iter()
            .find(|&&h| rack_slots[trace.host_rack[h as usize]] > 0)
        {
            rack_slots[trace.host_rack[h as usize]] -= 1;
            placed[i] = true;
            rack += 1;
        }
    }
    // Run them: the placed ones, then the oldest others up to the free slots.
    let mut others = if any_ok { runnable - local - rack } else { 0 };
    let launched = local + rack + others;
    let mut remaining = Vec::with_capacity(pending.len() - launched);
    for (i, t) in pending.iter().enumerate() {
        if placed[i] {
            continue;
        }
        if others > 0 {
            others -= 1;
            continue;
        }
        remaining.push(*t);
    }
    *pending = remaining;
    (local, rack, launched)
}

/// Builds a demand for the benchmarks: `tasks` tasks over `hosts` hosts with 3 skewed replicas
/// each, `target` executors wanted, nothing running or pending.
pub fn bench_snapshot(
    hosts: usize,
    tasks: usize,
    target: u32,
    tasks_per_executor: u32,
    seed: u64,
) -> Snapshot {
    let config = TraceConfig {
        name: "bench".into(),
        nodes: hosts,
        racks: hosts.div_ceil(40).max(1),
        datanode_only: 0,
        capacity: u32::MAX,
        tasks_per_executor,
        max_executors: target,
        stages: vec![tasks],
        skew: 0.5,
        node_locality_delay: 0,
        dataset_fraction: 1.0,
        offer_probability: 1.0,
        release_between_stages: true,
        pipelined: false,
        preemption: 0.0,
        seed,
        offers_per_round: 1,
        locality_wait_rounds: 0,
        ramp_up: false,
        launch_rounds: 0,
    };
    let trace = Trace::generate(config);
    let mut counts: HashMap<HostName, u32> = HashMap::new();
    for t in &trace.stages[0] {
        for &h in t {
            *counts.entry(trace.hosts[h as usize].clone()).or_insert(0) += 1;
        }
    }
    Snapshot {
        demand: Demand {
            target_executors: target,
            locality_aware_tasks: tasks as u32,
            host_to_local_task_count: counts,
            ..Demand::default()
        },
        tasks_per_executor,
        ..Snapshot::default()
    }
}

/// The topology `bench_snapshot` uses (40 hosts a rack).
pub fn bench_topology(hosts: usize) -> Topology {
    let racks = hosts.div_ceil(40).max(1);
    Topology::new(
        (0..hosts)
            .map(|i| {
                (
                    HostName::from(format!("nm{i:05}")),
                    RackName::from(format!("/rack{:03}", i % racks)),
                )
            })
            .collect(),
    )
}

/// FNV-1a, to turn a container id into a seed.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
