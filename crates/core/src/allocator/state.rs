//! The inputs of one update step: what the driver wants, what we already have, and what the
//! cluster looks like.
//!
//! Host and rack names are shared `Arc<str>` so a request group, the pending table and the
//! bookkeeping can all point at the same name without copying it per container.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub use crate::topology::{HostName, RackName, Topology, DEFAULT_RACK};

/// What the driver wants, a whole state, never a delta: the one `Demand` of the AM (the
/// driver's and the API's too). Its `excluded_hosts` reach YARN through the AM's request
/// table, not through the update step.
pub use crate::demand::Demand;

/// A container request handed to YARN and not yet granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRequest {
    /// The nodes the request names to YARN; empty means "any host" (unless `racks` names some).
    pub nodes: Arc<[HostName]>,
    /// The racks the request names. Empty: the racks of `nodes` (how every request read from
    /// `plan` input is given). The default strategy may name racks without nodes on them.
    pub racks: Arc<[RackName]>,
    /// Every host the placement gave this request, named to YARN or not; empty means the same
    /// as `nodes`. The default strategy leaves out of `nodes` the hosts YARN cannot place a
    /// container on (no NodeManager, excluded, no room), but keeps them here so that its
    /// bookkeeping (pending shares, staleness) stays Spark's.
    pub placed: Arc<[HostName]>,
}

/// Identity of a request's shared node, rack and placed lists: the requests of one group of
/// the update step share them, so per-group work (matching, rule 4's lists) is done once
/// per key instead of once per request.
pub type ListKey = (*const [HostName], *const [RackName], *const [HostName]);

impl PendingRequest {
    /// The identity of this request's lists (see [`ListKey`]).
    pub fn list_key(&self) -> ListKey {
        (
            Arc::as_ptr(&self.nodes),
            Arc::as_ptr(&self.racks),
            Arc::as_ptr(&self.placed),
        )
    }

    pub fn any_host() -> Self {
        PendingRequest {
            nodes: Arc::from(Vec::new()),
            racks: Arc::from(Vec::new()),
            placed: Arc::from(Vec::new()),
        }
    }

    /// The hosts the placement gave this request (see `placed`).
    pub fn placed_hosts(&self) -> &[HostName] {
        if self.placed.is_empty() {
            &self.nodes
        } else {
            &self.placed
        }
    }

    pub fn on(nodes: &[&str]) -> Self {
        Self::with_nodes(nodes.iter().map(|n| HostName::from(*n)).collect())
    }

    pub fn with_nodes(nodes: Arc<[HostName]>) -> Self {
        PendingRequest {
            nodes,
            ..Self::any_host()
        }
    }

    /// A request for any host on these racks.
    pub fn on_racks(racks: &[&str]) -> Self {
        PendingRequest {
            racks: racks.iter().map(|r| RackName::from(*r)).collect(),
            ..Self::any_host()
        }
    }

    /// No locality at all, as YARN sees it.
    pub fn is_any_host(&self) -> bool {
        self.nodes.is_empty() && self.racks.is_empty()
    }

    /// Racks but no nodes named to YARN.
    pub fn is_rack_only(&self) -> bool {
        self.nodes.is_empty() && !self.racks.is_empty()
    }
}

/// Everything one update step looks at.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub demand: Demand,
    /// Tasks one executor runs at once (executor cores / cpus per task); 0 counts as 1.
    pub tasks_per_executor: u32,
    /// Executors running per host.
    pub running: HashMap<HostName, u32>,
    /// Containers granted and still launching. Spark counts them in total only.
    pub starting: u32,
    /// The same per host. Only the default strategy's levels (`strategy::level_caps`) read
    /// it: a host whose container is still launching is as taken as one running an executor,
    /// or the next batch names it again. Hosts with none may be missing.
    pub starting_per_host: HashMap<HostName, u32>,
    /// Outstanding requests, oldest first.
    pub pending: Vec<PendingRequest>,
}

impl Snapshot {
    pub fn running_total(&self) -> u64 {
        self.running.values().map(|&n| u64::from(n)).sum()
    }

    /// `target - pending - starting - running`; negative when we have too much.
    pub fn missing(&self) -> i64 {
        i64::from(self.demand.target_executors)
            - self.pending.len() as i64
            - i64::from(self.starting)
            - self.running_total() as i64
    }
}

/// What the default strategy knows about the cluster beyond the rack map. Spark ignores all of
/// it; every field is optional so an empty `Cluster` makes the default strategy behave like
/// Spark apart from the stale-request rule.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// Hosts that run a usable NodeManager. `None`: assume every host does.
    pub nodes: Option<HashSet<HostName>>,
    /// Executors of this application each node can hold in total (running ones included).
    /// Hosts not listed have no known limit.
    pub capacity: HashMap<HostName, u32>,
    /// Hosts the driver or YARN excluded, or that YARN reports unhealthy.
    pub excluded: HashSet<HostName>,
}

impl Cluster {
    /// Can YARN start a container on this host for us at all?
    pub fn is_usable(&self, host: &str) -> bool {
        if self.excluded.contains(host) {
            return false;
        }
        match &self.nodes {
            Some(nodes) => nodes.contains(host),
            None => true,
        }
    }

    /// Could YARN start another of our executors here: usable, and not already holding as
    /// many of them (`running`) as it can?
    pub fn has_room(&self, host: &str, running: u32) -> bool {
        self.is_usable(host) && self.capacity.get(host).is_none_or(|&c| running < c)
    }
}
