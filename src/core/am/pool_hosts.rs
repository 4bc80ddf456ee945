//! The pool's side of the hosts the AM holds back by itself (see `held_back`): nodes YARN
//! reports DECOMMISSIONING and hosts where executors keep failing. Kept apart from the
//! pool's translation work; it only feeds the pool's demand and the registry's reasons.

use tracing::{info, warn};
use yarn_client::amrm::NodeReport;

use super::super::held_back::HeldBackHost;
use super::Pool;
use crate::core::ids::ExecutorId;

impl Pool {
    /// Live executors on draining nodes that the AM is not releasing yet: leaving, so they
    /// get replacements at once (see `push_demand`).
    pub fn draining_executors(&self) -> Vec<ExecutorId> {
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
    pub fn all_hosts_failing(&self) -> Option<usize> {
        let known = self.topology().read().host_count();
        (known > 0 && self.held.failing_count() >= known).then_some(known)
    }

    /// The hosts held back, for the state view and the page.
    pub fn held_view(&self) -> Vec<HeldBackHost> {
        self.held.view()
    }

    /// Failing-host exclusion settings (from the submit options).
    pub fn set_exclusion(&mut self, max_failures: u32, window_ms: u64, exclude_ms: u64) {
        self.held.max_failures = max_failures;
        self.held.window_ms = window_ms;
        self.held.exclude_ms = exclude_ms;
    }
}
