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
//! Spark's plan, with the asks YARN cannot honour taken out of what YARN sees. The needs, the
//! pending shares, the staleness of pending requests, the scaling, the racks and the number
//! of requests are all Spark's: every host keeps its place in the placement, and each request
//! records the hosts it was placed on ([`PendingRequest::placed`]) so the next step's
//! bookkeeping is Spark's too. Only the node list handed to YARN changes (rules 1 and 2), and
//! stale requests no longer linger when the target is met (rule 3).
//!
//! 1. **Hosts YARN cannot use** (a DataNode without a NodeManager, when the cluster's node
//!    list is known; an excluded or unhealthy node) are never named to YARN. Their racks are
//!    still asked for: a request placed only on such hosts reaches YARN as a rack-only request.
//!    Requests made before a node became unusable keep naming it (YARN does not place on an
//!    excluded node; the request still asks for its racks and ANY), as Spark keeps them.
//! 2. **Capacity.** A node whose capacity for this app is known and already full of our
//!    executors is not named in new requests: it can take no container. Its rack is still
//!    asked for and the number of requests is unchanged.
//! 3. **Stale requests when the target is exactly met.** Spark only cancels stale requests
//!    (placed on no host any task wants) when executors are missing; with `missing == 0`
//!    they linger. We swap them, oldest first, for as many new requests with locality as the
//!    placement finds for that many containers (any-host requests are left alone: trading
//!    them would only delay executors). A stale request is kept when nothing local replaces
//!    it: it still names racks that may serve.
//!
//! Rule 3 lives in the update step; rules 1 and 2 here (as caps on how many new requests may
//! name a host, see [`HostNeed::cap`]).
//!
//! ## What the simulator says about these rules (BENCHMARKS.md has the numbers)
//!
//! YARN itself never places more containers on a node than fit, nor any on a host it does not
//! have, so Spark's asks on such hosts never get it a container, and leaving them out gets the
//! default strategy none more. They do change one thing YARN looks at: the CapacityScheduler waits for a node- or rack-local offer for
//! `ANY x min(1, distinct named locations / cluster nodes)` missed offers, and every host named,
//! real or not, counts. Leaving out hosts without a NodeManager therefore shortens YARN's wait,
//! and the default strategy gets somewhat less locality than Spark on traces with such hosts
//! (up to about a point of node-local share at 100 nodes, hundredths of a point at 5,000).
//! Where every host runs a NodeManager it sends YARN Spark's table apart from rules 2 and 3,
//! and ties Spark except on a few seeds, either way. No variant that keeps rule 1 closes that gap;
//! the ones measured (`cargo run --release --example sim_sweep`, 20 seeds of the shifting
//! trace, unless stated):
//!
//! - naming one NodeManager of the same rack in place of each unusable host, once (keeps the
//!   location count): node-local 59.1% -> 56.1% at 1,000 nodes, worse on 20 of 20 seeds; at
//!   the old, full weight: 58.9% -> 56.2% (earlier model);
//! - adding the preferred hosts that need nothing more, once each (more locations): 59.1% ->
//!   57.7% at 1,000 nodes, worse on 19 of 20;
//! - rule 2 as a cap at the free room counting pending requests (a node is never asked for more
//!   executors than it can hold): 58.2% -> 55.4% at 100 nodes, worse on 14 of 20;
//! - the same cap with the overflow sent to rack peers: 59.0% -> 48.4% at 1,000 nodes
//!   (measured before the rack-count fact was in the model);
//! - capping the need itself at the free room: 59.1% -> 47.9% at 1,000 nodes, worse on 20 of
//!   20, and worse on most standard traces;
//! - the earlier default (hosts left out of the bookkeeping too, requests placed only on
//!   unusable hosts treated as stale): same losses on the DataNode-only traces, plus noise
//!   elsewhere (5,000-node shifting trace 56.6% against Spark's 57.1%).
//!
//! Diverting containers to hosts no task prefers costs more than YARN's shorter wait; a cap
//! changes which requests are left when containers arrive. Spark's bookkeeping with a
//! filtered node list is the variant that stays closest to Spark.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use super::placement::HostNeed;
use super::state::{Cluster, Demand, HostName, PendingRequest};

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

/// Host preferences as a strategy sees them.
#[derive(Debug, Clone)]
pub(crate) struct Preferences<'a> {
    strategy: Strategy,
    demand: &'a Demand,
    cluster: &'a Cluster,
    total: f64,
}

impl Strategy {
    pub(crate) fn preferences<'a>(
        self,
        demand: &'a Demand,
        cluster: &'a Cluster,
    ) -> Preferences<'a> {
        // Spark sums integers; converting the integer sum keeps the arithmetic identical.
        let total = demand
            .host_to_local_task_count
            .values()
            .map(|&c| u64::from(c))
            .sum::<u64>() as f64;
        Preferences {
            strategy: self,
            demand,
            cluster,
            total,
        }
    }
}

impl Preferences<'_> {
    /// Does a pending request placed on this host still serve some task? Both strategies:
    /// the host is a key of `host_to_local_task_count` (Spark's rule). The default strategy
    /// applies it to every host a request was placed on, named to YARN or not.
    pub(crate) fn is_preferred(&self, host: &str) -> bool {
        self.demand.host_to_local_task_count.contains_key(host)
    }

    /// `need(h)` for every preferred host (step 3 of the strategy), and for the default
    /// strategy how many new requests may name it to YARN (rules 1 and 2 of the module docs).
    pub(crate) fn needs(
        &self,
        running: &HashMap<HostName, u32>,
        local_pending: &[&PendingRequest],
    ) -> Vec<HostNeed> {
        let demand = self.demand;
        let executors = f64::from(
            demand
                .locality_aware_tasks
                .div_ceil(demand.tasks_per_executor.max(1)),
        );
        let shares = pending_shares(local_pending);
        let mut needs = Vec::with_capacity(demand.host_to_local_task_count.len());
        for (host, &count) in &demand.host_to_local_task_count {
            let expected = f64::from(count) * executors / self.total;
            let running_here = running.get(host).copied().unwrap_or(0);
            let have = f64::from(running_here);
            let share = shares.get(host).copied().unwrap_or(0.0);
            // NaN (no tasks at all) becomes 0, as on the JVM.
            let need = ceil_to_u64(expected - (have + share));
            let cap = match self.strategy {
                Strategy::Spark => None,
                // Rule 1: never named to YARN.
                Strategy::Default if !self.cluster.is_usable(host) => Some(0),
                // Rule 2: a node that holds all the executors it can is not named.
                Strategy::Default => self
                    .cluster
                    .capacity
                    .get(host)
                    .and_then(|&c| (running_here >= c).then_some(0)),
            };
            needs.push(HostNeed {
                host: host.clone(),
                need,
                cap,
            });
        }
        needs
    }
}

/// Pending local requests count as containers already placed, spread over the hosts they were
/// placed on (for Spark: the nodes they name) so that the shares add up to the number of
/// requests.
fn pending_shares<'a>(local_pending: &[&'a PendingRequest]) -> HashMap<&'a HostName, f64> {
    let mut mentions: HashMap<&HostName, u64> = HashMap::new();
    for req in local_pending {
        for n in req.placed_hosts() {
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
