//! The event-driven allocator the AM drives: owns the request table and the executor
//! bookkeeping, consumes [`Event`]s and answers with [`Action`]s.
//!
//! Invariants it keeps (each is tested):
//! - every granted container is either launched or released in the same call; none is left
//!   waiting (Spark can leak a matched container it decides not to launch, SPARK-49783);
//! - no executor is launched beyond the target: `running + starting <= target` after a grant;
//! - a matched request leaves the table at once (YARN's table is absolute: a request the client
//!   forgets to remove is asked for again on the next heartbeat);
//! - a completed container we released ourselves is expected and never counts as a failure.
//! - no `*` count is sent over grants in flight: new requests go under a request key YARN
//!   holds at 0, a key is lowered only to 0 as a whole, and a satisfied request leaves
//!   YARN's table silently ([`RequestKeys`]; `tests/allocator_overgrant.rs`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use tracing::{debug, info, warn};

use super::exit_status::{classify, ExitCause};
use super::matching::{match_containers, Container, Locality, MatchOutcome};
use super::state::{Cluster, Demand, HostName, ListKey, PendingRequest, RackName, Snapshot};
use super::strategy::Strategy;
use super::update::update_requests;
use crate::core::topology::SharedTopology;

/// The allocator's own id for one container request it asked for (YARN has none: requests
/// are counts in a table). Not yarn-client's `request_table::RequestId`, the request
/// table's handle: that is another id space, and `core::request_book` maps one to the other.
pub type AllocatorRequestId = u64;
/// The executor id the driver knows an executor by (one type for the whole AM).
pub use crate::core::ids::ExecutorId;
/// A container id in YARN's string form (`container_..`), as the RM reported it. The
/// allocator only hashes, compares and clones it (a reference-count bump) on its hot paths.
/// Not yarn-client's `request_table::ContainerId`, the parsed numeric form the request
/// table keeps for releases: `core::am::pool` parses at that boundary.
pub type ContainerIdStr = Arc<str>;

#[derive(Debug, Clone)]
pub struct AllocatorConfig {
    pub strategy: Strategy,
    /// Failures older than this stop counting (Spark's
    /// `spark.executor.failuresValidityInterval`). `None`: they count forever.
    pub failure_validity_ms: Option<u64>,
    /// Default strategy: how long a request spread by the work cap waits for YARN before it
    /// names every usable host it was placed on (rule 4 in `strategy`).
    pub spread_wait_ms: u64,
    /// Tasks one executor runs at once (executor cores / cpus per task; 0 counts as 1): fixed
    /// by the executor's size for the AM's life, so not part of the driver's demand.
    pub tasks_per_executor: u32,
    /// Which executor ids this allocator hands out: its kind's stripe when an app has
    /// several executor kinds, each with its own allocator (`core::am::pool`).
    pub ids: crate::core::ids::IdStripe,
}

/// One NodeManager heartbeat at YARN's default interval
/// (`yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`, 1 s): by then every node has
/// been offered to the scheduler once since the request reached it. The AM uses the interval
/// of the submitter's Hadoop configuration when it had one (`AppSpec::nm_heartbeat_ms`).
pub const DEFAULT_SPREAD_WAIT_MS: u64 = 1_000;

impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig {
            strategy: Strategy::default(),
            failure_validity_ms: None,
            spread_wait_ms: DEFAULT_SPREAD_WAIT_MS,
            tasks_per_executor: 1,
            ids: Default::default(),
        }
    }
}

/// Something that happened, as the AM's event loop saw it.
#[derive(Debug, Clone)]
pub enum Event {
    /// The driver's new whole demand.
    DemandChanged(Demand),
    /// Time for an update step (once per heartbeat, before the allocate call).
    Heartbeat,
    /// Containers from one allocate response.
    ContainersGranted(Vec<Container>),
    /// Completed containers from one allocate response.
    ContainersCompleted(Vec<ContainerExit>),
    /// The executor in this container registered / started.
    ExecutorLaunched { container: ContainerIdStr },
    /// Starting the executor failed (NM refused, launch error).
    ExecutorLaunchFailed {
        container: ContainerIdStr,
        error: String,
    },
    /// The driver wants this executor gone.
    KillExecutor { executor: ExecutorId },
    /// Node reports from the RM: a node joined, left, or changed health or capacity.
    NodesUpdated(Vec<NodeUpdate>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerExit {
    pub id: ContainerIdStr,
    pub exit_status: i32,
    pub diagnostics: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeUpdate {
    pub host: HostName,
    pub rack: RackName,
    /// Running and healthy; `false` for lost, decommissioned or unhealthy nodes.
    pub usable: bool,
    /// Executors of this app the node can hold, if known.
    pub capacity: Option<u32>,
}

/// What the AM should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Add `ids.len()` identical requests naming `nodes` and `racks`. Both empty: any host;
    /// `nodes` empty but `racks` not: a rack-only request (default strategy).
    AddRequests {
        ids: Vec<AllocatorRequestId>,
        nodes: Arc<[HostName]>,
        racks: Arc<[RackName]>,
        /// Only on `nodes`: YARN must not place these requests elsewhere (relax locality off,
        /// rule 5 of the default strategy) until rule 4 withdraws them (`RemoveRequest`) and
        /// asks again relaxed what is still pending (`AddRequests`). Asked apart
        /// from relaxed requests (YARN's relax flag for a rack and ANY is per request key).
        strict: bool,
        /// The allocation request id (YARN's request key) to ask them under: below 0 for
        /// strict requests, 0 and up for relaxed ones (see [`RequestKeys`]).
        key: i64,
    },
    /// Take a request out of the table and tell YARN: cancelled, or withdrawn with its key.
    RemoveRequest(AllocatorRequestId),
    /// A granted container satisfied this request: take it out of the table, but do not send
    /// the lower `*` count. YARN lowered its own copy when it allocated the container, and may
    /// have lowered it again since for grants still on their way: sending ours would
    /// overwrite those decrements and ask for those containers a second time (YARN-1902).
    RequestSatisfied(AllocatorRequestId),
    /// Ask again for the containers of requests `old[i]`, now as `ids[i]` naming `nodes` and
    /// `racks`, with relaxed locality (rule 4 of the default strategy). A replacement, not a remove and an add: the
    /// table must not re-send the entries both count (see `RequestTable::replace`).
    ReplaceRequests {
        old: Vec<AllocatorRequestId>,
        ids: Vec<AllocatorRequestId>,
        nodes: Arc<[HostName]>,
        racks: Arc<[RackName]>,
    },
    /// Give a container back to YARN.
    ReleaseContainer(ContainerIdStr),
    /// Start an executor in a granted container.
    LaunchExecutor {
        executor: ExecutorId,
        container: Container,
        locality: Locality,
    },
    /// Tell the driver.
    TellDriver(DriverNotice),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverNotice {
    /// An executor is gone for a reason other than our own release.
    ExecutorExited {
        executor: ExecutorId,
        host: HostName,
        counts_against_app: bool,
        reason: String,
    },
}

/// Where a tracked executor's launch is: granted and being started, or started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Starting,
    Running,
}

#[derive(Debug, Clone)]
struct Tracked {
    executor: ExecutorId,
    host: HostName,
    phase: Phase,
}

#[derive(Debug, Clone)]
struct Request {
    id: AllocatorRequestId,
    req: PendingRequest,
    /// When it was added, for rule 4 of the default strategy.
    since_ms: u64,
    /// Rule 4 has looked at it (once is enough).
    relaxed: bool,
    /// Asked with strict locality (rule 5 of the default strategy) until rule 4 relaxes it.
    strict: bool,
    /// Rule 4 took this strict request out of YARN's table at heartbeat `n` (the first half
    /// of relaxing it); it is asked again relaxed at the first heartbeat after `n`, if no
    /// container granted meanwhile satisfied it. Not in YARN's table until then.
    withdrawn: Option<u64>,
    /// Taken out of YARN's table at heartbeat `n` with the rest of its key, because another
    /// request of that key was cancelled or withdrawn while grants may be on their way for it
    /// ([`RequestKeys`]); asked again as it was, under a quiet key, at the first heartbeat
    /// after `n`.
    parked: Option<u64>,
    /// The allocation request id it is (or was last) asked under.
    key: i64,
    /// In YARN's table now (neither withdrawn nor parked).
    in_table: bool,
    /// Cancelled by this heartbeat's update step (dropped once its key is lowered).
    gone: bool,
}

/// What the allocator knows of one of its YARN request keys (allocation request ids).
#[derive(Debug, Clone, Copy, Default)]
struct KeyState {
    /// Our requests in YARN's table under this key: the `*` count we last told YARN, less
    /// the grants matched since. YARN's own count is never above it.
    asked: u64,
    /// The heartbeat whose allocate call last sent this key's `*` count.
    changed_at: u64,
    /// The heartbeat that opened it for new requests (while nothing was in flight for it).
    opened_at: Option<u64>,
}

/// The allocator's YARN request keys, so that no `*` count is ever sent over grants in
/// flight (issue 27, "no over-grant").
///
/// YARN's asks are absolute per key and it lowers its copy itself as it allocates. Between
/// two allocate calls it may allocate any part of what it holds; those containers come back
/// in the next answer (or later). So any `*` count sent for a key whose count YARN holds
/// above 0 overwrites decrements we have not seen: raised, it asks again for containers
/// already granted (the 781 containers for 600 executors at 1,000 nodes); lowered by a
/// cancellation, it keeps asking for the other requests although some of them were
/// granted meanwhile. The only counts that are safe to send are a first count for a key
/// YARN holds at 0 and a 0. Hence:
/// - a key is *quiet* at heartbeat `n` when none of our requests is in YARN's table under
///   it and its count was last sent before `n` (the answer to that call has been digested,
///   so nothing can be in flight for it);
/// - new requests go under a quiet key of their kind (strict below 0, relaxed 0 and up,
///   lowest first), opened for the whole heartbeat;
/// - a request leaves a key that is not open at this heartbeat only with all the others:
///   the key is sent at 0 and its other requests are parked, asked again under a quiet key
///   at the next heartbeat, once the grants that were on their way have been matched;
/// - a request a granted container satisfied leaves YARN's table silently
///   ([`Action::RequestSatisfied`]), and a container is charged to a request of the key it
///   was granted for first, so that our count follows YARN's.
///
/// What remains is the protocol's own race: YARN can grant a request before the call that
/// cancels it reaches it (at most one container per cancelled request, released if surplus).
///
/// All of this assumes the answer to a call brings every container allocated before it, as
/// YARN's allocate does. An RM that hands some over a call or more later shows it: a grant
/// for a key we emptied calls ago. `late` keeps the most calls seen, and keys, parked and
/// withdrawn requests wait that many heartbeats more before they count as settled; what
/// such an RM grants before the first one is seen is the slack above.
#[derive(Debug, Default)]
struct RequestKeys {
    keys: HashMap<i64, KeyState>,
    /// Most heartbeats a grant has come back after its key was emptied (0: none seen).
    late: u64,
}

/// The most heartbeats `RequestKeys::late` waits, so that one odd grant cannot stall asks.
const MAX_LATE: u64 = 4;

impl RequestKeys {
    /// A grant for `key` came back at heartbeat `n`: if we had emptied that key calls
    /// before, YARN allocated it before then and handed it over late.
    fn granted_for(&mut self, key: i64, n: u64) {
        if let Some(k) = self.keys.get(&key) {
            if k.asked == 0 && k.opened_at.is_none_or(|o| o < k.changed_at) {
                self.late = self.late.max(n.saturating_sub(k.changed_at)).min(MAX_LATE);
            }
        }
    }

    /// Whether something changed at heartbeat `at` has settled by heartbeat `n`: every
    /// grant made before it has come back.
    fn settled(&self, at: u64, n: u64) -> bool {
        at + self.late < n
    }

    /// A key of this kind that may take new requests at heartbeat `n`.
    fn open(&mut self, strict: bool, n: u64) -> i64 {
        let mut id: i64 = if strict { -1 } else { 0 };
        let late = self.late;
        loop {
            let k = self.keys.entry(id).or_default();
            if k.opened_at == Some(n) || (k.asked == 0 && k.changed_at + late < n) {
                k.opened_at = Some(n);
                return id;
            }
            id += if strict { -1 } else { 1 };
        }
    }

    fn state(&mut self, key: i64) -> &mut KeyState {
        self.keys.entry(key).or_default()
    }
}

/// The allocator's whole state.
#[derive(Debug, Default)]
pub struct Allocator {
    config: AllocatorConfig,
    /// The AM's one topology; node reports are written into it here.
    topology: SharedTopology,
    cluster: Cluster,
    demand: Demand,
    pending: Vec<Request>,
    next_request: AllocatorRequestId,
    next_executor: ExecutorId,
    /// Every container with an executor until YARN reports it completed: counted ones and
    /// those being given back (also in `released`; kept so that container <-> executor and
    /// the phase have one owner for the executor's whole life).
    containers: HashMap<ContainerIdStr, Tracked>,
    executors: HashMap<ExecutorId, ContainerIdStr>,
    running_per_host: HashMap<HostName, u32>,
    starting_per_host: HashMap<HostName, u32>,
    starting: u32,
    released: HashSet<ContainerIdStr>,
    failures_ms: VecDeque<u64>,
    /// Heartbeats seen: one per allocate call, so a heartbeat after the one that withdrew a
    /// strict request comes after the answer to the call that carried the withdrawal.
    heartbeats: u64,
    keys: RequestKeys,
}

impl Allocator {
    pub fn new(config: AllocatorConfig) -> Self {
        Allocator {
            next_request: 1,
            next_executor: config.ids.at_or_after(ExecutorId::new(1)),
            config,
            ..Allocator::default()
        }
    }

    /// Executor ids start at `first` (at least 1): a later AM attempt numbers its executors
    /// past every id an earlier attempt used, so an old executor can never pass for a new one.
    pub fn with_first_executor_id(mut self, first: ExecutorId) -> Self {
        self.next_executor = self.config.ids.at_or_after(first);
        self
    }

    /// The cluster to place requests on. `topology` may be a handle others read too: the
    /// racks of node reports are recorded in it.
    pub fn with_cluster(mut self, topology: impl Into<SharedTopology>, cluster: Cluster) -> Self {
        self.topology = topology.into();
        self.cluster = cluster;
        self
    }

    pub fn on_event(&mut self, now_ms: u64, event: Event) -> Vec<Action> {
        match event {
            Event::DemandChanged(d) => {
                self.demand = d;
                Vec::new()
            }
            Event::Heartbeat => {
                self.heartbeats += 1;
                let mut actions = self.unpark();
                actions.extend(self.relax_spread(now_ms));
                actions.extend(self.update(now_ms));
                actions
            }
            Event::ContainersGranted(cs) => self.granted(cs),
            Event::ContainersCompleted(cs) => self.completed(now_ms, cs),
            Event::ExecutorLaunched { container } => {
                self.launched(&container);
                Vec::new()
            }
            Event::ExecutorLaunchFailed { container, error } => {
                self.launch_failed(now_ms, container, &error)
            }
            Event::KillExecutor { executor } => self.kill(executor),
            Event::NodesUpdated(nodes) => {
                self.nodes_updated(nodes);
                Vec::new()
            }
        }
    }

    /// The topology the allocator places requests on (a handle to the shared map).
    pub fn topology(&self) -> &SharedTopology {
        &self.topology
    }

    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    /// Pending requests that are in YARN's table: all but the strict ones rule 4 has
    /// withdrawn and not yet asked again relaxed, and those parked with their key.
    pub fn asked_requests(&self) -> usize {
        self.pending.iter().filter(|r| r.in_table).count()
    }

    pub fn starting(&self) -> u32 {
        self.starting
    }

    pub fn running(&self) -> u32 {
        self.running_per_host.values().sum()
    }

    pub fn running_on(&self, host: &str) -> u32 {
        self.running_per_host.get(host).copied().unwrap_or(0)
    }

    pub fn starting_on(&self, host: &str) -> u32 {
        self.starting_per_host.get(host).copied().unwrap_or(0)
    }

    /// The executors the allocator counts (launched, not given back or ended), each as
    /// (container, executor, host, phase): read-only, for checks.
    pub fn tracked(
        &self,
    ) -> impl Iterator<Item = (&ContainerIdStr, ExecutorId, &HostName, Phase)> + '_ {
        self.containers
            .iter()
            .filter(|(c, _)| !self.released.contains(*c))
            .map(|(c, t)| (c, t.executor, &t.host, t.phase))
    }

    /// The executor launched in `container`, from its launch (or adoption) until YARN
    /// reports the container completed, given back or not. The AM's one container ->
    /// executor record.
    pub fn executor_of(&self, container: &str) -> Option<ExecutorId> {
        self.containers.get(container).map(|t| t.executor)
    }

    /// The container executor `executor` runs in, and its launch phase, over the same life
    /// as [`Self::executor_of`]: the AM's one executor -> container record and phase.
    pub fn container_of(&self, executor: ExecutorId) -> Option<(&ContainerIdStr, Phase)> {
        let c = self.executors.get(&executor)?;
        self.containers.get(c).map(|t| (c, t.phase))
    }

    /// The AM gave `container` back and YARN has not yet reported it completed (its
    /// executor, if it had one, no longer counts towards the target).
    pub fn is_releasing(&self, container: &str) -> bool {
        self.released.contains(container)
    }

    /// `container` is ours already: an executor's, or given back and not yet reported
    /// completed. A grant of it again is ignored (the AM's pool asks this too, so that it
    /// keeps a granted container for a launch exactly when the allocator may launch on it).
    pub fn is_ours(&self, container: &str) -> bool {
        self.containers.contains_key(container) || self.released.contains(container)
    }

    /// The pending requests, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &PendingRequest> + '_ {
        self.pending.iter().map(|r| &r.req)
    }

    /// Failures that count against the app and are still within the validity window.
    pub fn failed_executors(&mut self, now_ms: u64) -> usize {
        self.expire_failures(now_ms);
        self.failures_ms.len()
    }

    /// Rule 4 of the default strategy: a request the work cap kept off some of its hosts, still
    /// pending after `spread_wait_ms`, is asked again naming every host it was placed on that
    /// YARN can use and that has room. YARN had its chance to spread the executors; now any of
    /// those hosts is better than a rack-local or off-switch container later. Requests of one
    /// group share their lists, so each list is filtered once.
    ///
    /// A strict request is relaxed in two heartbeats, so that YARN is never asked for more
    /// containers than executors are missing. YARN's asks are absolute per (priority,
    /// allocation request id, location), and strict and relaxed requests have different
    /// allocation request ids: a relaxed ask sent with the strict one's cancellation would not
    /// know the containers the scheduler gave the strict requests since our last allocate call
    /// (they come back in the answer to this one), and YARN would fill both: at 1,000 nodes,
    /// 1,000 containers for 600 executors. So the first heartbeat only takes the strict
    /// request out of YARN's table (YARN applies the cancellation before it hands over what it
    /// granted, so nothing more is granted for it); the answer brings the containers it got
    /// meanwhile, which match it as usual; at the next heartbeat what is still pending is asked
    /// again relaxed. A relaxed request that gains hosts is replaced at once: it shares its
    /// `*` entry with its replacement, which `RequestTable::replace` does not re-send.
    fn relax_spread(&mut self, now_ms: u64) -> Vec<Action> {
        if self.config.strategy != Strategy::Default {
            return Vec::new();
        }
        /// One group's lists, and what becomes of its requests.
        struct Relaxed {
            key: ListKey,
            lists: Option<Lists>,
            removed: Vec<AllocatorRequestId>,
            added: Vec<AllocatorRequestId>,
            /// Strict requests withdrawn at an earlier heartbeat, now asked relaxed.
            readd: bool,
            /// The key they are asked under: a quiet relaxed one for `readd`, else their own.
            ask_key: i64,
        }
        // A handle of our own, so that the keys can be lowered with the map still read.
        let shared = self.topology.clone();
        let topology = shared.read();
        let (cluster, running, topology) = (&self.cluster, &self.running_per_host, &*topology);
        let has_room = |h: &HostName| cluster.has_room(h, running.get(h).copied().unwrap_or(0));
        let heartbeat = self.heartbeats;
        let mut relaxed: Vec<Relaxed> = Vec::new();
        let mut lowered: HashSet<i64> = HashSet::new();
        for r in &mut self.pending {
            if r.parked.is_some() {
                continue;
            }
            let readd = match r.withdrawn {
                // Withdrawn at this heartbeat: its answer has not come back yet.
                Some(at) if !self.keys.settled(at, heartbeat) => continue,
                Some(_) => true,
                None => {
                    if r.relaxed
                        || (r.req.placed.is_empty() && !r.strict)
                        || now_ms.saturating_sub(r.since_ms) < self.config.spread_wait_ms
                    {
                        continue;
                    }
                    // Looked at once: a request as wide as it can be stays as it is, and a
                    // re-asked one is not re-asked again.
                    r.relaxed = true;
                    if r.strict {
                        // First half (rule 5 ends here): out of YARN's table now (below, with
                        // its key), asked again relaxed at the next heartbeat.
                        r.withdrawn = Some(heartbeat);
                        lowered.insert(r.key);
                        continue;
                    }
                    false
                }
            };
            let req = &r.req;
            let key = req.list_key();
            let g = match relaxed
                .iter()
                .position(|g| g.key == key && g.readd == readd)
            {
                Some(i) => &mut relaxed[i],
                None => {
                    let lists = widened(req, topology, &has_room);
                    // A withdrawn strict request is asked again even when it gains no host.
                    let lists =
                        lists.or_else(|| readd.then(|| (req.nodes.clone(), req.racks.clone())));
                    let ask_key = if readd {
                        self.keys.open(false, heartbeat)
                    } else {
                        r.key
                    };
                    relaxed.push(Relaxed {
                        key,
                        lists,
                        removed: Vec::new(),
                        added: Vec::new(),
                        readd,
                        ask_key,
                    });
                    relaxed.last_mut().expect("just pushed")
                }
            };
            let Some((nodes, racks)) = &g.lists else {
                continue;
            };
            g.removed.push(r.id);
            r.id = self.next_request;
            self.next_request += 1;
            g.added.push(r.id);
            if readd {
                r.key = g.ask_key;
                r.in_table = true;
                let k = self.keys.state(g.ask_key);
                k.asked += 1;
                k.changed_at = heartbeat;
            }
            r.strict = false;
            r.withdrawn = None;
            r.req.nodes = nodes.clone();
            r.req.racks = racks.clone();
        }
        let mut actions = self.lower_keys(&lowered);
        let withdrawn = actions.len();
        for g in relaxed {
            let Some((nodes, racks)) = g.lists else {
                continue;
            };
            actions.push(if g.readd {
                Action::AddRequests {
                    ids: g.added,
                    nodes,
                    racks,
                    strict: false,
                    key: g.ask_key,
                }
            } else {
                Action::ReplaceRequests {
                    old: g.removed,
                    ids: g.added,
                    nodes,
                    racks,
                }
            });
        }
        if !actions.is_empty() {
            debug!(
                withdrawn,
                asked_again = actions.len() - withdrawn,
                "spread requests: strict ones withdrawn, then asked again relaxed naming every usable host they were placed on"
            );
        }
        actions
    }

    fn update(&mut self, now_ms: u64) -> Vec<Action> {
        // The step's snapshot, with the demand and the per-host counts lent to it rather
        // than copied: every event runs an update, and at 1,000 hosts the copy cost more
        // than the step.
        let snapshot = Snapshot {
            demand: std::mem::take(&mut self.demand),
            running: std::mem::take(&mut self.running_per_host),
            starting: self.starting,
            starting_per_host: std::mem::take(&mut self.starting_per_host),
            tasks_per_executor: self.config.tasks_per_executor,
            pending: self.pending.iter().map(|r| r.req.clone()).collect(),
        };
        let plan = update_requests(
            &snapshot,
            self.config.strategy,
            &self.topology.read(),
            &self.cluster,
        );
        (self.demand, self.running_per_host, self.starting_per_host) = (
            snapshot.demand,
            snapshot.running,
            snapshot.starting_per_host,
        );
        let mut actions = Vec::new();
        if !plan.cancel.is_empty() {
            let mut lowered = HashSet::new();
            for &i in &plan.cancel {
                let r = &mut self.pending[i];
                r.gone = true;
                // A withdrawn or parked request is in our table only.
                if r.in_table {
                    lowered.insert(r.key);
                }
            }
            actions = self.lower_keys(&lowered);
            self.pending.retain(|r| !r.gone);
        }
        for g in plan.add_groups() {
            let nodes: Arc<[HostName]> = Arc::from(g.nodes);
            let racks: Arc<[RackName]> = Arc::from(g.racks);
            let placed: Arc<[HostName]> = Arc::from(g.placed);
            // Rule 5: the default strategy's requests that name hosts are strict until rule 4
            // relaxes them.
            let strict = self.config.strategy == Strategy::Default && !nodes.is_empty();
            let key = self.keys.open(strict, self.heartbeats);
            let k = self.keys.state(key);
            k.asked += g.count;
            k.changed_at = self.heartbeats;
            let ids: Vec<AllocatorRequestId> =
                (0..g.count).map(|k| self.next_request + k).collect();
            self.next_request += g.count;
            for &id in &ids {
                self.pending.push(Request {
                    id,
                    req: PendingRequest {
                        nodes: nodes.clone(),
                        racks: racks.clone(),
                        placed: placed.clone(),
                    },
                    since_ms: now_ms,
                    relaxed: false,
                    strict,
                    withdrawn: None,
                    parked: None,
                    key,
                    in_table: true,
                    gone: false,
                });
            }
            actions.push(Action::AddRequests {
                ids,
                nodes,
                racks,
                strict,
                key,
            });
        }
        if !actions.is_empty() {
            info!(
                cancelled = plan.cancel.len(),
                added = plan.added(),
                pending = self.pending.len(),
                "updated container requests"
            );
        }
        actions
    }

    fn granted(&mut self, containers: Vec<Container>) -> Vec<Action> {
        // A container granted again (an RM that restarted or answered a retried call from
        // its cache) is already ours, live or on its way back: it must neither take a
        // request nor be released again.
        let mut seen = HashSet::new();
        let containers: Vec<Container> = containers
            .into_iter()
            .filter(|c| {
                let fresh = !self.is_ours(&c.id) && seen.insert(c.id.clone());
                if !fresh {
                    debug!(container = %c.id, "granted again; already tracked, ignored");
                }
                fresh
            })
            .collect();
        for c in &containers {
            if let Some(key) = c.allocation_request_id {
                self.keys.granted_for(key, self.heartbeats);
            }
        }
        let outcome = self.match_by_key(&containers);
        let mut actions = Vec::new();
        let mut matched_requests: HashSet<usize> = HashSet::new();
        for &(c, r, locality) in &outcome.matched {
            matched_requests.insert(r);
            // A withdrawn or parked request is not in YARN's table any more: this is a
            // container YARN gave it before the withdrawal reached it.
            let req = &mut self.pending[r];
            if req.in_table {
                req.in_table = false;
                actions.push(Action::RequestSatisfied(req.id));
                let key = req.key;
                let k = self.keys.state(key);
                k.asked = k.asked.saturating_sub(1);
            }
            let container = containers[c].clone();
            let have = u64::from(self.starting) + u64::from(self.running());
            if have >= u64::from(self.demand.target_executors) {
                // Beyond the target: give it back rather than keep it idle.
                debug!(container = %container.id, "releasing a container beyond the target");
                actions.push(self.release(container.id));
                continue;
            }
            let executor = self.next_executor;
            self.next_executor = self.config.ids.after(executor);
            self.starting += 1;
            *self
                .starting_per_host
                .entry(container.host.clone())
                .or_insert(0) += 1;
            self.executors.insert(executor, container.id.clone());
            self.containers.insert(
                container.id.clone(),
                Tracked {
                    executor,
                    host: container.host.clone(),
                    phase: Phase::Starting,
                },
            );
            actions.push(Action::LaunchExecutor {
                executor,
                container,
                locality,
            });
        }
        let mut i = 0;
        self.pending.retain(|_| {
            let keep = !matched_requests.contains(&i);
            i += 1;
            keep
        });
        for c in outcome.unmatched {
            debug!(container = %containers[c].id, "releasing a container no request wants");
            actions.push(self.release(containers[c].id.clone()));
        }
        actions
    }

    /// Matches granted containers to pending requests, each container first against the
    /// requests of the key YARN granted it for (when it says, and we have such requests), so
    /// that our count of that key falls as YARN's did; the rest against every request left.
    fn match_by_key(&self, containers: &[Container]) -> MatchOutcome {
        let topology = self.topology.read();
        let pending: Vec<PendingRequest> = self.pending.iter().map(|r| r.req.clone()).collect();
        let mut by_key: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut rest: Vec<usize> = Vec::new();
        for (i, c) in containers.iter().enumerate() {
            match c.allocation_request_id {
                Some(k) if self.pending.iter().any(|r| r.key == k) => {
                    by_key.entry(k).or_default().push(i)
                }
                _ => rest.push(i),
            }
        }
        if by_key.is_empty() {
            return match_containers(containers, &pending, &topology);
        }
        let mut used = vec![false; pending.len()];
        let mut outcome = MatchOutcome::default();
        let mut part = |cs: &[usize], take: &dyn Fn(usize) -> bool, used: &mut Vec<bool>| {
            let idx: Vec<usize> = (0..pending.len()).filter(|&i| take(i)).collect();
            let sub_c: Vec<Container> = cs.iter().map(|&c| containers[c].clone()).collect();
            let sub_p: Vec<PendingRequest> = idx.iter().map(|&i| pending[i].clone()).collect();
            let o = match_containers(&sub_c, &sub_p, &topology);
            for (c, p, l) in o.matched {
                used[idx[p]] = true;
                outcome.matched.push((cs[c], idx[p], l));
            }
            o.unmatched
                .into_iter()
                .map(|c| cs[c])
                .collect::<Vec<usize>>()
        };
        let mut keys: Vec<_> = by_key.into_iter().collect();
        keys.sort_unstable();
        for (k, cs) in keys {
            let left = part(&cs, &|i| self.pending[i].key == k, &mut used);
            rest.extend(left);
        }
        if !rest.is_empty() {
            rest.sort_unstable();
            let free = used.clone();
            let left = part(&rest, &|i| !free[i], &mut used);
            outcome.unmatched.extend(left);
        }
        outcome
    }

    /// Takes out of YARN's table the requests of `keys` that leave it (cancelled, or withdrawn
    /// by rule 4). Under a key opened at this heartbeat they simply go: nothing was sent for
    /// it yet. Under any other, grants may be on their way, so the key goes to 0 as a whole
    /// and its other requests are parked, to be asked again at the next heartbeat
    /// ([`RequestKeys`]).
    fn lower_keys(&mut self, keys: &HashSet<i64>) -> Vec<Action> {
        let n = self.heartbeats;
        let mut actions = Vec::new();
        if keys.is_empty() {
            return actions;
        }
        for r in self.pending.iter_mut() {
            if !r.in_table || !keys.contains(&r.key) {
                continue;
            }
            let leaving = r.gone || r.withdrawn.is_some();
            let k = self.keys.state(r.key);
            if leaving || k.opened_at != Some(n) {
                actions.push(Action::RemoveRequest(r.id));
                r.in_table = false;
                k.asked = k.asked.saturating_sub(1);
                k.changed_at = n;
                if !leaving {
                    r.parked = Some(n);
                }
            }
        }
        actions
    }

    /// Parked requests (taken out of YARN's table with their key at an earlier heartbeat) are
    /// asked again as they were, under a quiet key of their kind: the grants that were on
    /// their way for the old key have come back and been matched by now.
    fn unpark(&mut self) -> Vec<Action> {
        let n = self.heartbeats;
        struct Group {
            list: ListKey,
            strict: bool,
            key: i64,
            ids: Vec<AllocatorRequestId>,
            lists: Lists,
        }
        let mut groups: Vec<Group> = Vec::new();
        for r in &mut self.pending {
            if r.parked.is_none_or(|at| !self.keys.settled(at, n)) {
                continue;
            }
            r.parked = None;
            r.in_table = true;
            let list = r.req.list_key();
            let g = match groups
                .iter()
                .position(|g| g.list == list && g.strict == r.strict)
            {
                Some(i) => &mut groups[i],
                None => {
                    groups.push(Group {
                        list,
                        strict: r.strict,
                        key: self.keys.open(r.strict, n),
                        ids: Vec::new(),
                        lists: (r.req.nodes.clone(), r.req.racks.clone()),
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            r.id = self.next_request;
            self.next_request += 1;
            r.key = g.key;
            g.ids.push(r.id);
            let k = self.keys.state(g.key);
            k.asked += 1;
            k.changed_at = n;
        }
        groups
            .into_iter()
            .map(|g| Action::AddRequests {
                ids: g.ids,
                nodes: g.lists.0,
                racks: g.lists.1,
                strict: g.strict,
                key: g.key,
            })
            .collect()
    }

    fn release(&mut self, id: ContainerIdStr) -> Action {
        self.released.insert(id.clone());
        Action::ReleaseContainer(id)
    }

    /// A container an earlier AM attempt started executor `executor` in, handed back by
    /// YARN at registration: tracked as running (it counts towards the target), nothing
    /// launched. A container or executor already tracked is left alone (`false`).
    pub fn adopt(&mut self, container: Container, executor: ExecutorId) -> bool {
        if self.is_ours(&container.id) || self.executors.contains_key(&executor) {
            return false;
        }
        self.next_executor = self
            .next_executor
            .max(self.config.ids.at_or_after(executor.next()));
        *self
            .running_per_host
            .entry(container.host.clone())
            .or_insert(0) += 1;
        self.executors.insert(executor, container.id.clone());
        self.containers.insert(
            container.id,
            Tracked {
                executor,
                host: container.host,
                phase: Phase::Running,
            },
        );
        true
    }

    /// The executor started: running from now, counted as such unless its container is
    /// being given back (then only its phase changes, for the API).
    fn launched(&mut self, id: &ContainerIdStr) {
        let given_back = self.released.contains(id);
        if let Some(t) = self.containers.get_mut(id) {
            if t.phase == Phase::Starting {
                t.phase = Phase::Running;
                if !given_back {
                    self.starting -= 1;
                    dec(&mut self.starting_per_host, &t.host);
                    *self.running_per_host.entry(t.host.clone()).or_insert(0) += 1;
                }
            }
        }
    }

    /// Gives a counted container back: its executor stops counting, whatever phase it was
    /// in, and the container is released; it stays known until YARN reports it completed.
    /// `None` when it was not counted (unknown, or already on its way back).
    fn give_back(&mut self, id: &ContainerIdStr) -> Option<(Tracked, Action)> {
        if self.released.contains(id) {
            return None;
        }
        let t = self.containers.get(id)?.clone();
        self.uncount(&t);
        Some((t, self.release(id.clone())))
    }

    fn uncount(&mut self, t: &Tracked) {
        match t.phase {
            Phase::Starting => {
                self.starting -= 1;
                dec(&mut self.starting_per_host, &t.host);
            }
            Phase::Running => dec(&mut self.running_per_host, &t.host),
        }
    }

    /// YARN reported the container completed: its executor is forgotten (and uncounted,
    /// unless it was `given_back`, which uncounted it then).
    fn forget(&mut self, id: &ContainerIdStr, given_back: bool) -> Option<Tracked> {
        let t = self.containers.remove(id)?;
        self.executors.remove(&t.executor);
        if !given_back {
            self.uncount(&t);
        }
        Some(t)
    }

    fn launch_failed(&mut self, now_ms: u64, id: ContainerIdStr, error: &str) -> Vec<Action> {
        let Some((t, release)) = self.give_back(&id) else {
            return Vec::new();
        };
        warn!(container = %id, %error, "executor launch failed");
        self.failures_ms.push_back(now_ms);
        vec![
            release,
            Action::TellDriver(DriverNotice::ExecutorExited {
                executor: t.executor,
                host: t.host,
                counts_against_app: true,
                reason: format!("the executor could not be launched: {error}"),
            }),
        ]
    }

    fn kill(&mut self, executor: ExecutorId) -> Vec<Action> {
        let Some(id) = self.executors.get(&executor).cloned() else {
            return Vec::new();
        };
        // `None`: already on its way back.
        self.give_back(&id)
            .map(|(_, release)| release)
            .into_iter()
            .collect()
    }

    fn completed(&mut self, now_ms: u64, completed: Vec<ContainerExit>) -> Vec<Action> {
        let mut actions = Vec::new();
        for c in completed {
            let given_back = self.released.remove(&c.id);
            let forgotten = self.forget(&c.id, given_back);
            if given_back {
                // We asked for it; whatever the status says, this is expected.
                continue;
            }
            let Some(t) = forgotten else {
                debug!(container = %c.id, "completion for a container we do not know (repeat?)");
                continue;
            };
            let verdict = classify(c.exit_status, &c.diagnostics);
            if verdict.counts_against_app {
                self.failures_ms.push_back(now_ms);
            }
            if verdict.cause != ExitCause::Exited {
                info!(container = %c.id, host = %t.host, reason = %verdict.reason, "executor container ended");
            }
            actions.push(Action::TellDriver(DriverNotice::ExecutorExited {
                executor: t.executor,
                host: t.host,
                counts_against_app: verdict.counts_against_app,
                reason: verdict.reason,
            }));
        }
        actions
    }

    fn nodes_updated(&mut self, nodes: Vec<NodeUpdate>) {
        for n in nodes {
            self.topology.set_rack(n.host.clone(), n.rack);
            if n.usable {
                self.cluster.excluded.remove(&n.host);
            } else {
                self.cluster.excluded.insert(n.host.clone());
            }
            if let Some(known) = self.cluster.nodes.as_mut() {
                known.insert(n.host.clone());
            }
            match n.capacity {
                Some(c) => self.cluster.capacity.insert(n.host, c),
                None => self.cluster.capacity.remove(&n.host),
            };
        }
    }

    fn expire_failures(&mut self, now_ms: u64) {
        if let Some(window) = self.config.failure_validity_ms {
            while self
                .failures_ms
                .front()
                .is_some_and(|&t| now_ms.saturating_sub(t) > window)
            {
                self.failures_ms.pop_front();
            }
        }
    }
}

/// A request's node and rack lists.
type Lists = (Arc<[HostName]>, Arc<[RackName]>);
/// Rule 4's lists for a request: every host it was placed on that YARN can use and that has
/// room, and their racks joined to its own (YARN counts a node's rack with it, and matching
/// reads the rack list). `None` when that names no host the request does not name already.
fn widened(
    req: &PendingRequest,
    topology: &super::state::Topology,
    has_room: &impl Fn(&HostName) -> bool,
) -> Option<Lists> {
    let named: HashSet<&HostName> = req.nodes.iter().collect();
    let adds = req.placed.iter().any(|h| has_room(h) && !named.contains(h));
    adds.then(|| {
        let nodes: Arc<[HostName]> = req.placed.iter().filter(|h| has_room(h)).cloned().collect();
        let mut racks: Vec<RackName> = req.racks.to_vec();
        for n in nodes.iter() {
            let rack = topology.rack_of(n);
            if !racks.contains(rack) {
                racks.push(rack.clone());
            }
        }
        racks.sort();
        (nodes, Arc::from(racks))
    })
}

fn dec(map: &mut HashMap<HostName, u32>, host: &HostName) {
    if let Some(n) = map.get_mut(host) {
        *n -= 1;
        if *n == 0 {
            map.remove(host);
        }
    }
}
