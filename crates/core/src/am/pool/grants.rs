//! What YARN and the launcher report back to the pool: allocate answers (nodes, grants,
//! completions), launch outcomes, containers adopted from an earlier attempt, and the
//! executors gone since the driver last heard.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tracing::{info, warn};
use yarn_client::amrm::{AllocatedContainer, Allocation};
use yarn_client::request_table::AllocateBatch;

use super::super::cluster_view::node_update;
use super::super::events::LaunchReport;
use super::super::registry::Held;
use super::{to_table_id, Pool};
use crate::allocator::exit_status::classify;
use crate::allocator::matching::{Container, Locality};
use crate::allocator::tracker::{ContainerExit, Event, Phase};
use crate::ids::{ExecutorId, IdStripe};
use crate::request_book::EXECUTOR_PRIORITY;

impl Pool {
    /// Takes over containers an earlier AM attempt ran executors in (YARN's
    /// `containers_from_previous_attempts`), under the executor ids that attempt gave them
    /// (`ids`, from the journal): they run on, nothing is launched. One whose id is not
    /// known is released (its executor will be refused when it polls and stop).
    /// Returns the adopted executors as (id, host, rack).
    pub fn adopt(
        &mut self,
        now_ms: u64,
        containers: &[AllocatedContainer],
        ids: &HashMap<String, ExecutorId>,
    ) -> Vec<(ExecutorId, String, String)> {
        let mut adopted = Vec::new();
        for c in containers {
            let (cid, host) = (c.id.clone(), c.host.clone());
            let Some(&executor) = ids.get(&cid) else {
                warn!(container = %cid, %host, "a container of an earlier attempt with no executor in the journal; releasing it");
                if let Some(id) = to_table_id(&cid) {
                    self.table.releases.release(id);
                }
                continue;
            };
            self.note_host(&host);
            let rack = self.rack_of(&host).to_string();
            let container = Container {
                id: Arc::from(cid.as_str()),
                host: host.as_str().into(),
                rack: rack.as_str().into(),
                allocation_request_id: None,
            };
            let k = self.kind_of(executor);
            if k >= self.kinds.len() {
                // A kind an earlier attempt had declared: this attempt does not know its
                // shape until a driver declares it again, so it cannot account for it.
                warn!(executor = %executor, container = %cid, "an executor of a kind declared with an earlier attempt; releasing it");
                if let Some(id) = to_table_id(&cid) {
                    self.table.releases.release(id);
                }
                continue;
            }
            if !self.kinds[k].allocator.adopt(container, executor) {
                warn!(executor = %executor, container = %cid, "handed back twice (container or executor id already adopted); ignored");
                continue;
            }
            info!(executor = %executor, container = %cid, %host, "adopting an executor of an earlier attempt");
            let granted = self.granted_view(k, c);
            if let Some(held) = Held::of(&self.kinds[k].allocator, executor) {
                self.registry
                    .launching(executor, &host, &rack, Locality::Any, held, granted);
            }
            self.registry.heard(executor, now_ms);
            adopted.push((executor, host, rack));
        }
        adopted
    }

    pub fn on_launch(&mut self, now_ms: u64, report: LaunchReport) {
        match report {
            LaunchReport::Started { container } => {
                let id = self.executor_of(&container);
                let was = id.and_then(|id| self.owner(id).container_of(id).map(|(_, p)| p));
                let k = self.kind_of_container(&container).unwrap_or(0);
                self.event(
                    now_ms,
                    k,
                    Event::ExecutorLaunched {
                        container: Arc::from(container.as_str()),
                    },
                );
                if let (Some(id), Some(Phase::Starting)) = (id, was) {
                    let (kinds, width) = (&self.kinds, self.width);
                    let owner = &kinds[IdStripe::kind_of(id, width)].allocator;
                    if let Some(held) = Held::of(owner, id) {
                        self.registry.running(id, held);
                    }
                }
            }
            LaunchReport::Failed { container, error } => {
                let k = self.kind_of_container(&container).unwrap_or(0);
                if let Some(id) = self.executor_of(&container) {
                    let released = self.is_releasing(&container);
                    let host = self.registry.live_host(id).map(str::to_string);
                    self.registry
                        .launch_failed(id, &container, &error, released);
                    if let (false, Some(host)) = (released, host) {
                        self.host_failed(now_ms, &host);
                    }
                }
                // The container may still hold resources: give it back.
                if let Some(id) = to_table_id(&container) {
                    self.table.releases.release(id);
                }
                self.event(
                    now_ms,
                    k,
                    Event::ExecutorLaunchFailed {
                        container: Arc::from(container.as_str()),
                        error,
                    },
                );
            }
        }
    }

    /// A heartbeat is due: lets the allocator update its requests (time-based rules too) and
    /// takes everything the next allocate call must carry.
    pub fn heartbeat(&mut self, now_ms: u64) -> AllocateBatch {
        self.refresh_held(now_ms);
        for k in 0..self.kinds.len() {
            self.event(now_ms, k, Event::Heartbeat);
        }
        self.table.take_batch()
    }

    /// The RM answered an allocate call.
    pub fn allocated(&mut self, now_ms: u64, resp: Allocation) {
        self.table.on_allocate_success((&resp).into());
        self.digest(now_ms, resp);
    }

    fn digest(&mut self, now_ms: u64, resp: Allocation) {
        if !resp.updated_nodes.is_empty() {
            for r in &resp.updated_nodes {
                info!(host = %r.host, running = r.running, decommissioning = r.decommissioning,
                      timeout_s = ?r.decommissioning_timeout_s, "node report");
            }
            self.nodes_reported(now_ms, &resp.updated_nodes);
            for k in 0..self.kinds.len() {
                let updates: Vec<_> = resp
                    .updated_nodes
                    .iter()
                    .filter_map(|r| node_update(r, &self.excluded, &self.kinds[k].shape))
                    .collect();
                self.event(now_ms, k, Event::NodesUpdated(updates));
            }
        }
        if !resp.allocated.is_empty() {
            let mut containers: Vec<Vec<Container>> = vec![Vec::new(); self.kinds.len()];
            for c in resp.allocated {
                let (id, host) = (c.id.clone(), c.host.clone());
                self.note_host(&host);
                let rack = self.rack_of(&host);
                // The priority says whose: kind k asks at EXECUTOR_PRIORITY + k.
                let k = usize::try_from(c.priority - EXECUTOR_PRIORITY.0)
                    .ok()
                    .filter(|&k| k < self.kinds.len())
                    .unwrap_or(0);
                info!(container = %id, %host, %rack, kind = %self.kinds[k].shape.name, "container granted");
                containers[k].push(Container {
                    id: Arc::from(id.as_str()),
                    host: host.as_str().into(),
                    rack,
                    allocation_request_id: Some(c.allocation_request_id),
                });
                // Kept for a launch exactly when the allocator may launch on it.
                if !self.kinds[k].allocator.is_ours(&id) {
                    self.granted.insert(id, c);
                }
            }
            for (k, granted) in containers.into_iter().enumerate() {
                if !granted.is_empty() {
                    self.event(now_ms, k, Event::ContainersGranted(granted));
                }
            }
        }
        if !resp.completed.is_empty() {
            let mut done: Vec<Vec<ContainerExit>> = vec![Vec::new(); self.kinds.len()];
            for s in resp.completed {
                let (id, status, diagnostics) = (s.id, s.exit_status, s.diagnostics);
                info!(container = %id, exit_status = status, "container completed");
                // Asked before the allocator hears of it: it forgets the container then.
                let k = self.kind_of_container(&id).unwrap_or(0);
                if let Some(executor) = self.executor_of(&id) {
                    // Given back (preemption) or on a node decommissioned: not counted.
                    let released = self.is_releasing(&id) || self.registry.is_given_back(executor);
                    let host = self.registry.live_host(executor).map(str::to_string);
                    let counts = !released && classify(status, &diagnostics).counts_against_app;
                    if !released && status == 0 && self.registry.is_live(executor) {
                        self.kinds[k].succeeded += 1;
                    }
                    self.registry
                        .completed(executor, &id, status, &diagnostics, released);
                    if let (true, Some(host)) = (counts, host) {
                        self.host_failed(now_ms, &host);
                    }
                }
                done[k].push(ContainerExit {
                    id: Arc::from(id.as_str()),
                    exit_status: status,
                    diagnostics,
                });
            }
            for (k, exits) in done.into_iter().enumerate() {
                if !exits.is_empty() {
                    self.event(now_ms, k, Event::ContainersCompleted(exits));
                }
            }
        }
    }

    /// The executors gone since the last call, each once with why: the allocator's
    /// notices (a container that ended on its own, a launch that failed) and the exits
    /// the allocator does not announce (containers the AM released, executors declared
    /// silent). What the embedded driver hears as
    /// `ExecutorRemoved`; the loop takes it after every input, job or not, so it stays
    /// small.
    pub(crate) fn take_gone(&mut self) -> Vec<(ExecutorId, String)> {
        let mut gone = std::mem::take(&mut self.notices);
        let mut seen: HashSet<ExecutorId> = gone.iter().map(|(id, _)| *id).collect();
        for id in self.registry.take_exits() {
            if seen.insert(id) {
                let reason = self
                    .registry
                    .exited_view(id)
                    .and_then(|e| e.reason.clone())
                    .unwrap_or_else(|| "container ended".into());
                gone.push((id, reason));
            }
        }
        gone
    }
}
