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
//!   [`ROUND_MS`], the time the allocator is given), in random order (or in their heartbeat
//!   phases' order, below; a node busy with other
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
//! `ramp_up` (Spark's executor target growing 1, 2, 4, ... a round), `launch_rounds` (grant
//! to first task), `heartbeat_phase_jitter` and `strict_requests` (below), and `rm_draw` (which
//! draw of the scheduler's randomness a run gets, so that a prediction can be the mean of
//! several, as a real figure is the mean of several runs). With delay scheduling the shares
//! are of launched tasks, as the real job report counts them.
//!
//! # Heartbeat phases and strict requests (found on the real 12-node cluster)
//!
//! The CapacityScheduler places containers only when a NodeManager heartbeats (asynchronous
//! scheduling is off), and each NodeManager beats every interval at its own phase. An allocate
//! call that adds requests naming many hosts, as Spark's do, is filled by the first nodes
//! that heartbeat after it, each taking as many containers as its counts and room allow, in
//! the same heartbeat (several assignments per heartbeat). The real RM log showed these
//! grants 10 to 90 ms after the call, and Spark's ramp-up sends its batches at the same point
//! of the cycle every second, so the same few nodes take them batch after batch, whether they
//! hold the job's data or not (very skewed trace, seed 2: the two hosts holding most of the
//! data never got an executor). A fresh random order at every heartbeat, as the base model
//! has, spreads the same requests over more hosts and is optimistic for Spark's strategy
//! wherever the data sits on a few hosts. With `heartbeat_phase_jitter` the nodes keep a
//! phase order drawn once per run, each interval moved by a random few places.
//!
//! Requests asked with relax locality off (the default strategy's rule 5) are a separate
//! request key for YARN (their own allocation request id) and are placed node-local only;
//! with `strict_requests` the model keeps two keys, each with its own counts, entries and
//! missed opportunities, relaxed first (YARN's key order while strict requests used id 1),
//! strict first with `strict_first` (id -1, now). This is what the real scheduler does at
//! 1,000 nodes (verified grant by grant, `scale/`'s `RecordingCapacityScheduler`): the
//! relaxed key holds only what the strict one does not, often no location at all (requests
//! past every work cap: no off-switch wait) or one host or rack named many times over (a
//! wait of `ANY x 1 / nodes`, under one missed offer), so those requests go off-switch on
//! the first nodes that heartbeat, one a node. Pooled into one key, as the base model has
//! them, they share the strict requests' hundreds of locations and wait for them. Two
//! what-if knobs (`what_if_unplaced_name_work`, `what_if_no_location_key_first`) change how
//! those requests reach the model's RM, to estimate a change to the allocator before making it.
//!
//! Reported: over every round, the share of pending locality-aware tasks that had an executor
//! on one of their hosts (could run node-local) or on one of their hosts' racks (rack-local or
//! better), the number of container requests the allocator sent, how many containers the RM
//! granted (off-switch among them), and how many node asks named hosts without a NodeManager.

// Shared through `#[path]` by a test, a bench and an example, each using part of it.
#![allow(dead_code)]

pub mod bound;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::core::allocator::exit_status;
use crate::core::allocator::matching::Container;
use crate::core::allocator::tracker::{
    Action, Allocator, AllocatorConfig, AllocatorRequestId, ContainerExit, Event,
};
use crate::core::allocator::{Cluster, Demand, HostName, RackName, Snapshot, Strategy, Topology};

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
pub type Locations = (Vec<usize>, Vec<usize>);

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
    /// The order in which the nodes heartbeat within each interval (module docs). `None`: a
    /// fresh random order every time. `Some(j)`: every NodeManager keeps the phase drawn for
    /// it at the start of the run, and each interval moves its place in the order by a
    /// random 0 to `j` places (phase drift, and the AM's calls landing at slightly different
    /// points of the cycle); `Some(0.0)`: the same order every interval.
    pub heartbeat_phase_jitter: Option<f64>,
    /// Which draw of the ResourceManager's randomness (heartbeat order, busy nodes) this run
    /// gets, the trace staying the same: several draws of one trace stand for several real
    /// runs of it.
    pub rm_draw: u64,
    /// Requests asked with relax locality off (the default strategy's rule 5) go under their
    /// own request key and are placed node-local only, as YARN does. Off: the RM treats every
    /// request as relaxed (the big tables in BENCHMARKS.md were made so).
    pub strict_requests: bool,
    /// With `strict_requests`: the strict key is tried first on every node, as the real
    /// CapacityScheduler does since strict requests use allocation request id -1
    /// (`request_book::STRICT_REQUEST_ID`; keys go in (priority, id) order). Off: relaxed
    /// first, the order of id 1 that `examples/locality_trace.rs` was calibrated with.
    /// The 1,000-node scale runs (`benches/rm_scale.rs`) predict with both knobs on.
    pub strict_first: bool,
    /// What if (a proposal, not what the allocator does): every request the allocator asks
    /// with no host (no location at all, or racks only) reaches the RM relaxed and naming
    /// every NodeManager host with pending work and their racks, as Spark's strategy names
    /// them, so that its key's off-switch wait counts those locations. Estimates the change
    /// proposed in NOTES issue 12 part 2 without changing the allocator.
    pub what_if_unplaced_name_work: bool,
    /// What if (a proposal): with `strict_requests`, requests with no location at all go
    /// under a third request key tried before the others (an allocation request id below the
    /// strict one's), so that such a container ends its node's heartbeat (one off-switch
    /// assignment a heartbeat) instead of landing beside a strict one in the same heartbeat.
    pub what_if_no_location_key_first: bool,
    /// A slow RM (issue 27): 0, every grant reaches the allocator in the round it was made
    /// (the base model). `k` >= 1: a grant made after the round's allocate call is handed
    /// over at the call 1 to `k` rounds later (a hash of the container picks which), and
    /// the RM keeps one request key per allocation request id the allocator asks under,
    /// overwriting a key's counts only in a round whose actions change it (added,
    /// cancelled or withdrawn requests; not satisfied ones). In between, the RM's counts
    /// fall with its own grants, as YARN's do. Needs `strict_requests` (per-key model).
    pub rm_delay_rounds: u32,
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
            heartbeat_phase_jitter: None,
            rm_draw: 0,
            strict_requests: false,
            strict_first: false,
            what_if_unplaced_name_work: false,
            what_if_no_location_key_first: false,
            rm_delay_rounds: 0,
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

    pub fn topology(&self) -> Topology {
        Topology::new(
            self.hosts
                .iter()
                .zip(&self.host_rack)
                .map(|(h, &r)| (h.clone(), self.racks[r].clone()))
                .collect(),
        )
    }

    pub fn cluster(&self) -> Cluster {
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
    /// Of the off-switch ones, those granted for a key that named no location at all (ANY
    /// only: YARN gives such a key no off-switch wait).
    pub off_switch_no_location: u64,
    /// Node-level asks on hosts without a NodeManager, summed over rounds: asks YARN can
    /// never grant (it still counts them as locations, see the module docs).
    pub asks_without_nodemanager: u64,
    pub rounds: u64,
    /// Distinct hosts the run's executors were launched on (how much YARN packed them).
    pub executor_hosts: u64,
    /// Granted containers the allocator gave back at once (surplus: beyond the target or
    /// matching no request).
    pub released: u64,
    /// The most executors running or starting at once, and the most the driver wanted.
    pub peak_executors: u64,
    pub peak_target: u64,
}

/// The order in which the nodes heartbeat in one interval (see
/// [`TraceConfig::heartbeat_phase_jitter`]): a fresh shuffle, or the phase order with each
/// node moved by a random 0 to `jitter` places.
fn heartbeat_order(rng: &mut Rng, phases: &[usize], jitter: Option<f64>) -> Vec<usize> {
    let mut order = phases.to_vec();
    match jitter {
        None => rng.shuffle(&mut order),
        Some(j) if j > 0.0 => {
            let mut keyed: Vec<(f64, usize)> = phases
                .iter()
                .enumerate()
                .map(|(place, &n)| (place as f64 + j * unit(rng), n))
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            order = keyed.into_iter().map(|(_, n)| n).collect();
        }
        Some(_) => {}
    }
    order
}

/// Uniform in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// The AM's outstanding requests as the RM's table holds them, kept from the allocator's
/// request actions (added, removed, replaced) as the AM's request book applies them: by id,
/// each request's host and rack indices, whether it is strict, and its allocation request id.
#[derive(Default)]
pub struct Book {
    pub requests: HashMap<AllocatorRequestId, (Arc<Locations>, bool, i64)>,
    /// Allocation request ids whose `*` count an applied action changed (sent to the RM at
    /// the next call); a satisfied request changes none. Cleared by the caller.
    pub dirty: HashSet<i64>,
}

impl Book {
    pub fn apply(
        &mut self,
        actions: &[Action],
        locate: &impl Fn(&[HostName], &[RackName]) -> Locations,
    ) {
        for a in actions {
            match a {
                Action::AddRequests {
                    ids,
                    nodes,
                    racks,
                    strict,
                    key,
                } => {
                    let l = Arc::new(locate(nodes, racks));
                    for &id in ids {
                        self.requests.insert(id, (l.clone(), *strict, *key));
                    }
                    self.dirty.insert(*key);
                }
                Action::RemoveRequest(id) => {
                    if let Some(r) = self.requests.remove(id) {
                        self.dirty.insert(r.2);
                    }
                }
                Action::RequestSatisfied(id) => {
                    self.requests.remove(id);
                }
                Action::ReplaceRequests {
                    old,
                    ids,
                    nodes,
                    racks,
                } => {
                    let l = Arc::new(locate(nodes, racks));
                    for (o, &id) in old.iter().zip(ids) {
                        if let Some(r) = self.requests.remove(o) {
                            self.requests.insert(id, (l.clone(), false, r.2));
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// One of YARN's request keys for our executors as the CapacityScheduler holds it: per host,
/// per rack and ANY counts, the location entries the off-switch wait counts (module docs), and
/// the missed scheduling opportunities, which YARN counts per key.
struct RmKey {
    hosts: Vec<u64>,
    racks: Vec<u64>,
    any: u64,
    host_entry: Vec<bool>,
    rack_entry: Vec<bool>,
    locations: usize,
    missed: u64,
}

impl RmKey {
    fn new(trace: &Trace) -> RmKey {
        RmKey {
            hosts: vec![0; trace.hosts.len()],
            racks: vec![0; trace.racks.len()],
            any: 0,
            host_entry: vec![false; trace.hosts.len()],
            rack_entry: vec![false; trace.racks.len()],
            locations: 0,
            missed: 0,
        }
    }

    /// This round's allocate call: the AM's absolute counts for the key's requests. An ANY of
    /// 0 (nothing pending) makes the RM drop the whole key, zero entries included; otherwise
    /// every location sent stays an entry, even once the AM has set it back to 0.
    fn load<'a>(&mut self, requests: impl Iterator<Item = &'a (Arc<Locations>, bool, i64)>) {
        self.hosts.iter_mut().for_each(|c| *c = 0);
        self.racks.iter_mut().for_each(|c| *c = 0);
        self.any = 0;
        for (l, _, _) in requests {
            self.any += 1;
            for &h in &l.0 {
                self.hosts[h] += 1;
            }
            for &r in &l.1 {
                self.racks[r] += 1;
            }
        }
        if self.any == 0 {
            self.host_entry.iter_mut().for_each(|e| *e = false);
            self.rack_entry.iter_mut().for_each(|e| *e = false);
        }
        for (e, &c) in self.host_entry.iter_mut().zip(&self.hosts) {
            *e |= c > 0;
        }
        for (e, &c) in self.rack_entry.iter_mut().zip(&self.racks) {
            *e |= c > 0;
        }
        self.locations = self.host_entry.iter().filter(|&&e| e).count()
            + self.rack_entry.iter().filter(|&&e| e).count();
    }

    /// One scheduling opportunity for the key on node `n` (rack `r`): `Some(off_switch)` when
    /// it takes a container there. Node-local always (the rack's count must be above 0 too:
    /// the scheduler checks the rack first); rack-local after `delay` missed opportunities;
    /// off-switch after `min(nodes, ANY x min(1, locations / nodes))`. A strict key places
    /// node-local only. A node- or rack-local container resets the missed count.
    fn offer(
        &mut self,
        n: usize,
        r: usize,
        delay: u64,
        nodes: usize,
        strict: bool,
    ) -> Option<bool> {
        self.missed += 1;
        let wait_factor = (self.locations as f64 / nodes as f64).min(1.0);
        let off_switch_wait = (nodes as f64).min(self.any as f64 * wait_factor);
        // An entry the allocation brings to 0 leaves the RM's map until the AM's next call
        // sends it again.
        let locations = &mut self.locations;
        let mut take = |count: &mut u64| {
            *count -= 1;
            if *count == 0 {
                *locations -= 1;
            }
        };
        let off_switch = if self.hosts[n] > 0 && self.racks[r] > 0 {
            take(&mut self.hosts[n]);
            take(&mut self.racks[r]);
            self.missed = 0;
            false
        } else if !strict && self.racks[r] > 0 && self.missed > delay {
            take(&mut self.racks[r]);
            self.missed = 0;
            false
        } else if !strict && (self.missed as f64) > off_switch_wait {
            true
        } else {
            return None;
        };
        self.any -= 1;
        Some(off_switch)
    }
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
    let mut rng = Rng::new(cfg.seed ^ 0x5EED ^ cfg.rm_draw.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // The NodeManagers' heartbeat phases, when they keep them (`heartbeat_phase_jitter`).
    let mut phase_order: Vec<usize> = (0..cfg.nodes).collect();
    if cfg.heartbeat_phase_jitter.is_some() {
        rng.shuffle(&mut phase_order);
    }
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
    // The hosts with pending work and their racks, this round (`what_if_unplaced_name_work`).
    let work_hosts: std::cell::RefCell<Option<Locations>> = std::cell::RefCell::new(None);
    // A request's host and rack indices, as the RM counts them (no racks given: its hosts').
    let locate = |nodes: &[HostName], racks: &[RackName]| -> Locations {
        if nodes.is_empty() {
            if let Some(l) = work_hosts.borrow().as_ref() {
                return l.clone();
            }
        }
        let hs: Vec<usize> = nodes
            .iter()
            .filter_map(|n| host_index.get(n).copied())
            .collect();
        let rs: HashSet<usize> = if racks.is_empty() {
            nodes
                .iter()
                .map(|n| rack_index[topology.rack_of(n)])
                .collect()
        } else {
            racks.iter().map(|r| rack_index[r]).collect()
        };
        (hs, rs.into_iter().collect())
    };
    let mut used = vec![0u32; cfg.nodes];
    let mut executors: HashMap<Arc<str>, usize> = HashMap::new();
    // The round from which each executor takes tasks (`launch_rounds` after its grant).
    let mut ready_at: HashMap<Arc<str>, u64> = HashMap::new();
    let mut launched_ids: Vec<(crate::core::ids::ExecutorId, Arc<str>)> = Vec::new();
    let mut next_container = 0u64;
    // The AM's requests as the RM's table holds them, by id (see [`Book`]), and YARN's two
    // request keys: relaxed (allocation request id 0) and strict (1), each with its own
    // missed opportunities and location entries.
    let mut book = Book::default();
    // (A third key, tried first, for requests with no location: `what_if_no_location_key_first`.)
    let mut keys = [RmKey::new(trace), RmKey::new(trace), RmKey::new(trace)];
    let (mut tasks_seen, mut node_hits, mut rack_hits) = (0u64, 0u64, 0u64);
    let mut out = SimResult {
        node_local: 0.0,
        rack_local: 0.0,
        requests: 0,
        reasked: 0,
        granted: 0,
        off_switch: 0,
        off_switch_no_location: 0,
        asks_without_nodemanager: 0,
        rounds: 0,
        executor_hosts: 0,
        released: 0,
        peak_executors: 0,
        peak_target: 0,
    };
    // The slow RM's keys by allocation request id (`rm_delay_rounds`), and its grants not yet
    // handed over, with the round that hands each over.
    let slow = cfg.rm_delay_rounds > 0;
    let mut id_keys: std::collections::BTreeMap<i64, RmKey> = Default::default();
    let mut in_flight: Vec<(Container, u64)> = Vec::new();
    let mut executor_hosts = HashSet::new();

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
            if cfg.what_if_unplaced_name_work {
                let hs: Vec<usize> = counts
                    .keys()
                    .map(|h| host_index[h])
                    .filter(|&i| i < cfg.nodes)
                    .collect();
                let rs: HashSet<usize> = hs.iter().map(|&i| trace.host_rack[i]).collect();
                *work_hosts.borrow_mut() = Some((hs, rs.into_iter().collect()));
            }
            let demand = Demand {
                target_executors: target,
                locality_aware_tasks: pending.len() as u32,
                host_to_local_task_count: counts,
                ..Demand::default()
            };
            let actions = alloc.on_event(now, Event::DemandChanged(demand));
            book.apply(&actions, &locate);
            let actions = alloc.on_event(now, Event::Heartbeat);
            book.apply(&actions, &locate);
            for a in actions {
                match a {
                    Action::AddRequests { ids, .. } => out.requests += ids.len() as u64,
                    Action::ReplaceRequests { ids, .. } => out.reasked += ids.len() as u64,
                    _ => {}
                }
            }

            // The RM's absolute tables, one per request key.
            debug_assert_eq!(book.requests.len(), alloc.asked_requests());
            let strict_key = cfg.strict_requests;
            let own_key = strict_key && cfg.what_if_no_location_key_first;
            let key_of = |r: &(Arc<Locations>, bool, i64)| -> usize {
                if r.1 && strict_key {
                    1
                } else if own_key && r.0 .0.is_empty() && r.0 .1.is_empty() {
                    2
                } else {
                    0
                }
            };
            if slow {
                // The slow RM: only the keys this round's actions changed are sent.
                for id in std::mem::take(&mut book.dirty) {
                    let key = id_keys.entry(id).or_insert_with(|| RmKey::new(trace));
                    key.load(book.requests.values().filter(|r| r.2 == id));
                }
                for key in id_keys.values() {
                    out.asks_without_nodemanager += key.hosts[cfg.nodes..].iter().sum::<u64>();
                }
            } else {
                book.dirty.clear();
                for (k, key) in keys.iter_mut().enumerate() {
                    key.load(book.requests.values().filter(|r| key_of(r) == k));
                    out.asks_without_nodemanager += key.hosts[cfg.nodes..].iter().sum::<u64>();
                }
            }
            let delay = u64::from(cfg.node_locality_delay).min(cfg.nodes as u64);
            // YARN's key order: (priority, allocation request id).
            let key_order: [usize; 3] = match (strict_key && cfg.strict_first, own_key) {
                (true, true) => [2, 1, 0],
                (true, false) => [1, 0, 2],
                (false, true) => [2, 0, 1],
                (false, false) => [0, 1, 2],
            };

            // The keys in YARN's order, each with whether it is strict.
            let mut ordered: Vec<(&mut RmKey, bool, Option<i64>)> = if slow {
                id_keys
                    .iter_mut()
                    .map(|(&id, k)| (k, id < 0, Some(id)))
                    .collect()
            } else {
                let mut v: Vec<(usize, &mut RmKey)> = keys.iter_mut().enumerate().collect();
                v.sort_by_key(|(k, _)| key_order.iter().position(|o| o == k));
                v.into_iter().map(|(k, key)| (key, k == 1, None)).collect()
            };
            let mut granted = Vec::new();
            for _ in 0..cfg.offers_per_round.max(1) {
                let offers = heartbeat_order(&mut rng, &phase_order, cfg.heartbeat_phase_jitter);
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
                    // One heartbeat: the node takes containers while it has room and a key
                    // asks (keys in YARN's order, relaxed first), and stops after its first
                    // off-switch container.
                    'heartbeat: while used[n] < cfg.capacity {
                        let mut placed = None;
                        for (key, strict, id) in ordered.iter_mut() {
                            if key.any == 0 {
                                continue;
                            }
                            let no_location = key.locations == 0;
                            if let Some(off_switch) = key.offer(n, r, delay, cfg.nodes, *strict) {
                                placed = Some((off_switch, no_location, *id));
                                break;
                            }
                        }
                        let Some((off_switch, no_location, id)) = placed else {
                            break 'heartbeat;
                        };
                        used[n] += 1;
                        next_container += 1;
                        granted.push(Container {
                            id: Arc::from(format!("c{next_container}")),
                            host: trace.hosts[n].clone(),
                            rack: trace.racks[r].clone(),
                            allocation_request_id: id,
                        });
                        if off_switch {
                            out.off_switch += 1;
                            out.off_switch_no_location += u64::from(no_location);
                            break;
                        }
                    }
                }
            }
            drop(ordered);
            out.granted += granted.len() as u64;
            let granted = if slow {
                // Made after this round's call: handed over 1 to k calls later. Those due now
                // came back in this round's answer.
                let k = u64::from(cfg.rm_delay_rounds);
                for c in granted {
                    let due = out.rounds + 1 + fnv(&c.id) % k;
                    in_flight.push((c, due));
                }
                let (due, late): (Vec<_>, Vec<_>) =
                    in_flight.drain(..).partition(|c| c.1 <= out.rounds);
                in_flight = late;
                due.into_iter().map(|c| c.0).collect()
            } else {
                granted
            };
            let actions = alloc.on_event(now, Event::ContainersGranted(granted));
            book.apply(&actions, &locate);
            out.released += actions
                .iter()
                .filter(|a| matches!(a, Action::ReleaseContainer(_)))
                .count() as u64;
            out.peak_target = out.peak_target.max(u64::from(target));
            for a in actions {
                if let Action::LaunchExecutor {
                    container,
                    executor,
                    ..
                } = a
                {
                    let n = host_index[&container.host];
                    executor_hosts.insert(n);
                    executors.insert(container.id.clone(), n);
                    ready_at.insert(container.id.clone(), out.rounds + cfg.launch_rounds);
                    launched_ids.push((executor, container.id.clone()));
                    let actions = alloc.on_event(
                        now,
                        Event::ExecutorLaunched {
                            container: container.id,
                        },
                    );
                    book.apply(&actions, &locate);
                }
            }
            out.peak_executors = out
                .peak_executors
                .max(u64::from(alloc.running() + alloc.starting()));
            // Containers the allocator released at once free their slot again; those still
            // on their way hold theirs.
            used.iter_mut().for_each(|u| *u = 0);
            for &n in executors.values() {
                used[n] += 1;
            }
            for (c, _) in &in_flight {
                used[host_index[&c.host]] += 1;
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
                        .map(|id| ContainerExit {
                            id,
                            exit_status: exit_status::codes::PREEMPTED,
                            diagnostics: String::new(),
                        })
                        .collect();
                    let actions = alloc.on_event(now, Event::ContainersCompleted(done));
                    book.apply(&actions, &locate);
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
                let actions = alloc.on_event(now, Event::KillExecutor { executor });
                book.apply(&actions, &locate);
                let actions = alloc.on_event(
                    now,
                    Event::ContainersCompleted(vec![ContainerExit {
                        id,
                        exit_status: exit_status::codes::KILLED_BY_APPMASTER,
                        diagnostics: String::new(),
                    }]),
                );
                book.apply(&actions, &locate);
            }
        }
        used.iter_mut().for_each(|u| *u = 0);
    }
    out.executor_hosts = executor_hosts.len() as u64;
    out.node_local = node_hits as f64 / tasks_seen.max(1) as f64;
    out.rack_local = rack_hits as f64 / tasks_seen.max(1) as f64;
    out
}

/// An upper bound on the node-local share any placement of the same executors could reach
/// on `trace` ([`bound`]): per stage, the executors the driver asks for at its start
/// (pending tasks / tasks per executor, capped), kept through it. The model matches the
/// simulator's runs on the standard traces (every executor granted in a stage's first
/// round); on pipelined, busy or preempting traces it is a bound for that model only.
pub fn offline_bound(trace: &Trace) -> f64 {
    let cfg = &trace.config;
    let (mut local, mut tasks) = (0u64, 0u64);
    for stage in &trace.stages {
        let executors = (stage.len() as u32)
            .div_ceil(cfg.tasks_per_executor.max(1))
            .min(cfg.max_executors);
        local += bound::Stage {
            tasks: stage,
            nodes: cfg.nodes,
            capacity: cfg.capacity,
            executors,
            slots: cfg.tasks_per_executor.max(1),
        }
        .node_local_bound();
        tasks += stage.len() as u64;
    }
    local as f64 / tasks.max(1) as f64
}

/// The node-local share the bound's candidate placement ([`bound::Stage::placement`]) reaches
/// on `trace` when played through the simulator's rounds (its executors kept through each
/// stage, every free slot taking a task, [`place_round`]'s node-local-first choice): what
/// some placement of the same executors achieves, a lower bound on the optimum that
/// [`offline_bound`] bounds from above. No YARN in the loop.
pub fn placed_share(trace: &Trace) -> f64 {
    let cfg = &trace.config;
    let (mut local, mut tasks) = (0u64, 0u64);
    for stage in &trace.stages {
        let slots = cfg.tasks_per_executor.max(1);
        let executors = (stage.len() as u32).div_ceil(slots).min(cfg.max_executors);
        let x = bound::Stage {
            tasks: stage,
            nodes: cfg.nodes,
            capacity: cfg.capacity,
            executors,
            slots,
        }
        .placement();
        let mut host_slots = vec![0usize; trace.hosts.len()];
        for (h, &k) in x.iter().enumerate() {
            host_slots[h] = (k * slots) as usize;
        }
        let total: usize = host_slots.iter().sum();
        let mut pending = stage.clone();
        while !pending.is_empty() && total > 0 {
            let runnable = total.min(pending.len());
            let (l, _, _) = place_round(
                trace,
                &mut pending,
                host_slots.clone(),
                runnable,
                true,
                true,
            );
            local += l as u64;
        }
        tasks += stage.len() as u64;
    }
    local as f64 / tasks.max(1) as f64
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
        racks: hosts.div_ceil(40).max(1),
        datanode_only: 0,
        capacity: u32::MAX,
        tasks_per_executor,
        max_executors: target,
        stages: vec![tasks],
        node_locality_delay: 0,
        ..TraceConfig::standard("bench", hosts, 0.5, seed)
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
