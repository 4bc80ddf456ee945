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
//!   YARN's table silently ([`RequestKeys`]; `tests/offline/allocator_overgrant.rs`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use super::state::{Cluster, Demand, HostName, PendingRequest};
use crate::topology::SharedTopology;

mod containers;
mod keys;
mod messages;
mod requests;

use containers::Tracked;
use keys::RequestKeys;
pub use messages::{
    Action, AllocatorConfig, ContainerExit, DriverNotice, Event, NodeUpdate, Phase,
    DEFAULT_SPREAD_WAIT_MS,
};
use requests::Request;

/// The allocator's own id for one container request it asked for (YARN has none: requests
/// are counts in a table). Not yarn-client's `request_table::RequestId`, the request
/// table's handle: that is another id space, and `core::request_book` maps one to the other.
pub type AllocatorRequestId = u64;
/// The executor id the driver knows an executor by (one type for the whole AM).
pub use crate::ids::ExecutorId;
/// A container id in YARN's string form (`container_..`), as the RM reported it. The
/// allocator only hashes, compares and clones it (a reference-count bump) on its hot paths.
/// Not yarn-client's `request_table::ContainerId`, the parsed numeric form the request
/// table keeps for releases: `core::am::pool` parses at that boundary.
pub type ContainerIdStr = Arc<str>;

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
}
