//! The pool's side of the cluster's hosts: those the AM holds back by itself (see
//! `held_back`: nodes YARN reports DECOMMISSIONING, hosts where executors keep failing), and
//! hosts the topology does not know yet (the RM's node list fetched again). Kept apart from
//! the pool's translation work; it only feeds the pool's demand, the allocators' cluster
//! view and the registry's reasons.

use tracing::{info, warn};
use yarn_client::amrm::NodeReport;

use super::super::cluster_view::listed_node_update;
use super::super::held_back::HeldBackHost;
use super::Pool;
use crate::allocator::tracker::Event;
use crate::allocator::RackName;
use crate::ids::ExecutorId;

impl Pool {
    /// Live executors on draining nodes that the AM is not releasing yet: leaving, so they
    /// get replacements at once (see `push_demand`).
    pub(crate) fn draining_executors(&self) -> Vec<ExecutorId> {
        self.registry
            .live_ids()
            .filter(|&id| {
                self.registry
                    .live_host(id)
                    .is_some_and(|h| self.held.is_draining(h))
                    && self
                        .owner(id)
                        .container_of(id)
                        .is_some_and(|(c, _)| !self.is_releasing(c))
            })
            .collect()
    }

    /// The node reports of an allocate answer: a node that turns DECOMMISSIONING gets no
    /// new executor, its executors replacements, and their ends will not count against the
    /// app (the node's timeout kills what still runs there).
    pub(super) fn nodes_reported(&mut self, now_ms: u64, reports: &[NodeReport]) {
        let mut changed = false;
        for r in reports.iter().filter(|r| !r.host.is_empty()) {
            if !self
                .held
                .node_reported(&r.host, r.decommissioning, r.decommissioning_timeout_s)
            {
                continue;
            }
            changed = true;
            if !r.decommissioning {
                info!(host = %r.host, running = r.running, "node no longer decommissioning");
                continue;
            }
            let timeout = r
                .decommissioning_timeout_s
                .map_or_else(|| "no timeout".to_string(), |t| format!("timeout {t} s"));
            warn!(host = %r.host, %timeout, "node decommissioning: no new executors there, replacements asked");
            let on_host: Vec<ExecutorId> = self
                .registry
                .live_ids()
                .filter(|&id| self.registry.live_host(id) == Some(r.host.as_str()))
                .collect();
            for id in on_host {
                self.registry.giving_back(
                    id,
                    format!(
                        "node {} decommissioned gracefully ({timeout}); not counted",
                        r.host
                    ),
                );
            }
        }
        if changed {
            self.push_demand(now_ms);
        }
    }

    /// An executor failed on `host` (a failed launch or an exit that counts): may exclude
    /// the host for a while.
    pub(super) fn host_failed(&mut self, now_ms: u64, host: &str) {
        if self.held.executor_failed(now_ms, host) {
            warn!(
                %host,
                failures = self.held.max_failures,
                exclude_ms = self.held.exclude_ms,
                "executors keep failing on this host: excluded from requests for a while"
            );
            self.push_demand(now_ms);
        }
    }

    /// Ends the exclusions whose time came, and keeps the draining replacements in step
    /// with the executors still leaving. Called on every heartbeat.
    pub(super) fn refresh_held(&mut self, now_ms: u64) {
        let released = self.held.expire(now_ms);
        for host in &released {
            info!(%host, "host excluded after failures is released");
        }
        if !released.is_empty() || self.draining_executors().len() as u32 != self.leaving_sent {
            self.push_demand(now_ms);
        }
    }

    /// Every host of the cluster is excluded for executor failures: nothing could run
    /// (Spark fails the app then too: "all available nodes are excluded"). `Some(n)`: the
    /// hosts, then.
    pub(crate) fn all_hosts_failing(&self) -> Option<usize> {
        let known = self.topology().read().host_count();
        (known > 0 && self.held.failing_count() >= known).then_some(known)
    }

    /// The hosts held back, for the state view and the page.
    pub(crate) fn held_view(&self) -> Vec<HeldBackHost> {
        self.held.view()
    }

    /// Failing-host exclusion settings (from the submit options).
    pub fn set_exclusion(&mut self, max_failures: u32, window_ms: u64, exclude_ms: u64) {
        self.held.max_failures = max_failures;
        self.held.window_ms = window_ms;
        self.held.exclude_ms = exclude_ms;
    }

    /// The host's rack, from the AM's one topology.
    pub fn rack_of(&self, host: &str) -> RackName {
        self.topology().rack_of(host)
    }

    /// A container landed on a host the topology does not know (a NodeManager that joined
    /// after the start and whose report did not come with an allocate response): the loop
    /// should fetch the RM's node list, off the loop, and hand it to [`Pool::nodes_listed`].
    pub(crate) fn take_nodes_wanted(&mut self) -> bool {
        std::mem::take(&mut self.nodes_wanted)
    }

    pub(super) fn note_host(&mut self, host: &str) {
        if !host.is_empty()
            && !self.topology().knows(host)
            && self.unknown_hosts.insert(host.to_string())
        {
            info!(%host, "a container on a host of unknown rack; fetching the node list");
            self.nodes_wanted = true;
        }
    }

    /// The RM's node list, fetched again: racks and capacities of nodes that joined later.
    /// `None`: the fetch failed; a later container on a host still unknown asks again.
    pub(crate) fn nodes_listed(
        &mut self,
        now_ms: u64,
        nodes: Option<&[yarn_client::rest::NodeInfo]>,
    ) {
        let Some(nodes) = nodes else {
            let topology = self.topology().clone();
            self.unknown_hosts.retain(|h| topology.knows(h));
            return;
        };
        for k in 0..self.kinds.len() {
            let updates = nodes
                .iter()
                .map(|n| listed_node_update(n, &self.excluded, &self.kinds[k].shape))
                .collect();
            self.event(now_ms, k, Event::NodesUpdated(updates));
        }
    }
}
