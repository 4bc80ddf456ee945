//! What the allocator is told and what it answers: its configuration, the [`Event`]s the
//! AM feeds in, and the [`Action`]s it carries out.

use std::sync::Arc;

use super::super::matching::{Container, Locality};
use super::super::state::{Demand, HostName, RackName};
use super::super::strategy::Strategy;
use super::{AllocatorRequestId, ContainerIdStr, ExecutorId};

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
    pub ids: crate::ids::IdStripe,
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
