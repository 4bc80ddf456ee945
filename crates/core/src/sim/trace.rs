//! The demand traces the simulator runs: tasks with skewed replica hosts, stage by stage,
//! on a cluster of NodeManager and DataNode-only hosts; and the run's random numbers.

use std::collections::HashSet;

use crate::allocator::{Cluster, HostName, RackName, Topology};

/// SplitMix64: small, fast, deterministic; good enough to shuffle and sample.
#[derive(Debug, Clone)]
pub(super) struct Rng(u64);

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

/// Uniform in [0, 1).
pub(super) fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// FNV-1a, to turn a container id into a seed.
pub(super) fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
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
    /// them, so that its key's off-switch wait counts those locations. Estimates that
    /// proposed change without changing the allocator.
    pub what_if_unplaced_name_work: bool,
    /// What if (a proposal): with `strict_requests`, requests with no location at all go
    /// under a third request key tried before the others (an allocation request id below the
    /// strict one's), so that such a container ends its node's heartbeat (one off-switch
    /// assignment a heartbeat) instead of landing beside a strict one in the same heartbeat.
    pub what_if_no_location_key_first: bool,
    /// A slow RM: 0, every grant reaches the allocator in the round it was made
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
