//! The two placement strategies: how much each preferred host still needs.
//!
//! # `spark`
//!
//! Exactly Spark's `LocalityPreferredContainerPlacementStrategy` (see docs/allocator.md):
//! `expected(h) = count(h) * ceil(aware_tasks / tasks_per_executor) / sum(count)`, minus the
//! executors running on `h` and `h`'s share of the pending local requests, rounded up. The
//! arithmetic is done in `f64` in Spark's order so the results agree exactly.
//!
//! # `default` (ours)
//!
//! Spark's formula with three blind spots fixed. Each rule only ever *removes* requests that
//! YARN cannot honour, or moves them somewhere it can:
//!
//! 1. **Hosts YARN cannot use.** A preferred host is unusable when the cluster's node list is
//!    known and does not contain it (a DataNode without a NodeManager), or when it is excluded
//!    or unhealthy. Naming it in a request can never yield a node-local container. Its task
//!    count is instead spread evenly over the usable hosts on its rack, so the requests still
//!    pull executors towards the data (rack locality). If its rack has no usable host the count
//!    is dropped. Expected counts are then computed over the weight that is left, so every
//!    locality-aware executor we ask for can serve some task. Pending requests that name only
//!    unusable hosts count as stale.
//! 2. **Capacity.** When a node's capacity (executors of this app it can hold) is known, a host
//!    never needs more than `capacity - running - pending share` (rounded down), and no more
//!    requests name it than that. Spark's scaling can name a 2-slot host in 12 requests;
//!    YARN then counts 12 asks on that node that it can never fill node-locally. Locality
//!    requests that no host can take any more become any-host requests, so the total asked
//!    is unchanged.
//! 3. **Stale requests when the target is exactly met.** Spark only cancels stale requests
//!    when executors are missing; with `missing == 0` they linger forever pointing at hosts no
//!    task wants. We re-place them (the update step treats them as available containers).
//!
//! Rule 3 lives in the update step; rules 1 and 2 here.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use super::placement::HostNeed;
use super::state::{Cluster, Demand, HostName, PendingRequest, RackName, Topology};

/// Which placement rules the allocator follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Spark's placement and update step, reproduced exactly.
    Spark,
    /// Spark's algorithm with the blind spots fixed (module docs).
    #[default]
    Default,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown strategy `{0}` (expected `spark` or `default`)")]
pub struct UnknownStrategy(pub String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "spark" => Ok(Strategy::Spark),
            "default" => Ok(Strategy::Default),
            other => Err(UnknownStrategy(other.to_string())),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strategy::Spark => "spark",
            Strategy::Default => "default",
        })
    }
}

/// Host preferences after a strategy's rewriting: the weight each host carries.
#[derive(Debug, Clone)]
pub(crate) struct Preferences {
    strategy: Strategy,
    weights: HashMap<HostName, f64>,
    total: f64,
}

impl Strategy {
    pub(crate) fn preferences(
        self,
        demand: &Demand,
        topology: &Topology,
        cluster: &Cluster,
    ) -> Preferences {
        let weights = match self {
            Strategy::Spark => demand
                .host_to_local_task_count
                .iter()
                .map(|(h, &c)| (h.clone(), f64::from(c)))
                .collect(),
            Strategy::Default => reaimed_weights(demand, topology, cluster),
        };
        let total = match self {
            // Spark sums integers; converting the integer sum keeps the arithmetic identical.
            Strategy::Spark => demand
                .host_to_local_task_count
                .values()
                .map(|&c| u64::from(c))
                .sum::<u64>() as f64,
            Strategy::Default => weights.values().sum(),
        };
        Preferences {
            strategy: self,
            weights,
            total,
        }
    }
}

/// Rule 1: usable hosts keep their count; unusable ones hand it to usable hosts on their rack.
fn reaimed_weights(
    demand: &Demand,
    topology: &Topology,
    cluster: &Cluster,
) -> HashMap<HostName, f64> {
    let mut weights: HashMap<HostName, f64> = HashMap::new();
    let mut homeless: Vec<(&HostName, u32)> = Vec::new();
    for (host, &count) in &demand.host_to_local_task_count {
        if count == 0 {
            continue;
        }
        if cluster.is_usable(host) {
            *weights.entry(host.clone()).or_insert(0.0) += f64::from(count);
        } else {
            homeless.push((host, count));
        }
    }
    if homeless.is_empty() {
        return weights;
    }
    // Candidates per rack: the known NodeManagers, or else the usable preferred hosts.
    let mut by_rack: HashMap<&RackName, Vec<HostName>> = HashMap::new();
    match &cluster.nodes {
        Some(nodes) => {
            for n in nodes.iter().filter(|n| cluster.is_usable(n)) {
                by_rack
                    .entry(topology.rack_of(n))
                    .or_default()
                    .push(n.clone());
            }
        }
        None => {
            for h in demand
                .host_to_local_task_count
                .keys()
                .filter(|h| cluster.is_usable(h))
            {
                by_rack
                    .entry(topology.rack_of(h))
                    .or_default()
                    .push(h.clone());
            }
        }
    }
    for (host, count) in homeless {
        if let Some(peers) = by_rack.get(topology.rack_of(host)) {
            let share = f64::from(count) / peers.len() as f64;
            for p in peers {
                *weights.entry(p.clone()).or_insert(0.0) += share;
            }
        }
    }
    weights
}

impl Preferences {
    /// Does a pending request naming this host still serve some task? (Spark: the host is a key
    /// of `host_to_local_task_count`.)
    pub(crate) fn is_preferred(&self, host: &str) -> bool {
        self.weights.contains_key(host)
    }

    /// `need(h)` for every preferred host (step 3 of the strategy).
    pub(crate) fn needs(
        &self,
        demand: &Demand,
        running: &HashMap<HostName, u32>,
        local_pending: &[&PendingRequest],
        cluster: &Cluster,
    ) -> Vec<HostNeed> {
        let executors = f64::from(
            demand
                .locality_aware_tasks
                .div_ceil(demand.tasks_per_executor.max(1)),
        );
        let shares = pending_shares(local_pending);
        let mut needs = Vec::with_capacity(self.weights.len());
        for (host, &weight) in &self.weights {
            let expected = weight * executors / self.total;
            let have = f64::from(running.get(host).copied().unwrap_or(0));
            let share = shares.get(host).copied().unwrap_or(0.0);
            let missing = expected - (have + share);
            let need = match self.strategy {
                // NaN (no tasks at all) becomes 0 as on the JVM.
                Strategy::Spark => ceil_to_u64(missing),
                // Re-aimed weights are fractions; do not let rounding noise add a container.
                Strategy::Default => ceil_to_u64(missing - 1e-9),
            };
            let cap = match (self.strategy, cluster.capacity.get(host)) {
                (Strategy::Default, Some(&capacity)) => {
                    Some(floor_to_u64(f64::from(capacity) - have - share + 1e-9))
                }
                _ => None,
            };
            needs.push(HostNeed {
                host: host.clone(),
                need: cap.map_or(need, |c| need.min(c)),
                cap,
            });
        }
        needs
    }
}

/// Pending local requests count as containers already placed, spread over the nodes they name
/// so that the shares add up to the number of requests.
fn pending_shares<'a>(local_pending: &[&'a PendingRequest]) -> HashMap<&'a HostName, f64> {
    let mut mentions: HashMap<&HostName, u64> = HashMap::new();
    for req in local_pending {
        for n in req.nodes.iter() {
            *mentions.entry(n).or_insert(0) += 1;
        }
    }
    let total: u64 = mentions.values().sum();
    let requests = local_pending.len() as f64;
    mentions
        .into_iter()
        .map(|(h, m)| (h, m as f64 * requests / total as f64))
        .collect()
}

fn ceil_to_u64(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x.ceil() as u64
    }
}

fn floor_to_u64(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x.floor() as u64
    }
}
