//! One allocate round and everything that feeds it: the allocator's actions applied to the
//! request table, the allocate call, and the response turned back into allocator events.
//!
//! The allocator decides; this module only translates. Its ids (requests, executors) are
//! mapped onto the request table's and YARN's here, so neither side knows the other.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use tracing::{debug, info, warn};
use yarn_am::allocator::matching::Container;
use yarn_am::allocator::tracker::{Action, Allocator, CompletedContainer, Event};
use yarn_am::allocator::{Demand, HostName, RackName, Topology};
use yarn_client::amrm::{recovery, AllocateInput, AmRmClient, Recovery};
use yarn_client::ask::{Capability, Priority};
use yarn_client::ids::{container_id_string, node_id_string, parse_container_id};
use yarn_client::proto::yarn::{AllocateResponseProto, ContainerProto};
use yarn_client::request_table::{AmrmState, ContainerId, ContainerRequest, RequestId};
use yarn_client::rpc::RpcError;

use super::executors::Registry;
use super::launcher::{LaunchReport, Launcher};
use super::topology::node_update;
use crate::api::model::{self, PendingView, StateView};
use crate::spec::ExecutorSpec;

/// Executors all use one priority and one size: YARN keys requests by priority, so one
/// size per priority is what keeps its table and ours in step.
const EXECUTOR_PRIORITY: Priority = Priority(1);

/// Why the round loop must stop.
#[derive(Debug)]
pub enum Stop {
    /// The RM no longer accepts us (attempt gone, credentials refused, bad request).
    Rm(String),
    /// The RM has not answered for too long (see [`RmOutage`]).
    Lost(String),
}

/// Allocate calls that failed in a row without an answer from the RM. A short outage (an RM
/// restart) is ridden out, requests kept; a long one ends the AM with an error (exit 1, no
/// unregistration: YARN can start another attempt when the RM is back), rather than
/// heartbeating into the void for ever.
#[derive(Debug, Clone)]
pub struct RmOutage {
    since: Option<Instant>,
    failures: u32,
    min_failures: u32,
    max_time: std::time::Duration,
}

impl RmOutage {
    /// Give up after `min_failures` failed calls in a row spanning at least `max_time`.
    pub fn new(min_failures: u32, max_time: std::time::Duration) -> Self {
        Self {
            since: None,
            failures: 0,
            min_failures,
            max_time,
        }
    }

    /// An allocate call failed at `now`. `Some(why)` when it is time to give up.
    pub fn failed(&mut self, now: Instant, error: &str) -> Option<String> {
        let since = *self.since.get_or_insert(now);
        self.failures += 1;
        let down = now.saturating_duration_since(since);
        (self.failures >= self.min_failures && down >= self.max_time).then(|| {
            format!(
                "no answer for {} s ({} allocate calls failed in a row); last error: {error}",
                down.as_secs(),
                self.failures
            )
        })
    }

    /// The RM answered.
    pub fn answered(&mut self) {
        self.since = None;
        self.failures = 0;
    }
}

/// How long the AM rides out an RM that does not answer (Hadoop's RM clients retry for
/// 15 minutes; the AM's executors give up on a silent AM after 2).
pub const RM_OUTAGE_LIMIT: std::time::Duration = std::time::Duration::from_secs(180);

pub struct Heartbeat {
    pub allocator: Allocator,
    pub amrm: AmRmClient,
    pub table: AmrmState,
    pub registry: Registry,
    pub launcher: Launcher,
    pub topology: Topology,
    spec: ExecutorSpec,
    capability: Capability,
    /// Allocator request id -> request-table id.
    requests: HashMap<u64, RequestId>,
    /// Granted containers not yet launched or released, by id string.
    granted: HashMap<String, ContainerProto>,
    demand: model::Demand,
    excluded: HashSet<String>,
    start: Instant,
    app_id: String,
    registration: (String, i32, String),
    outage: RmOutage,
}

fn to_table_id(id: &str) -> Option<ContainerId> {
    parse_container_id(id).map(|p| ContainerId::from(&p))
}

impl Heartbeat {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        allocator: Allocator,
        amrm: AmRmClient,
        table: AmrmState,
        registry: Registry,
        launcher: Launcher,
        topology: Topology,
        spec: ExecutorSpec,
        app_id: String,
        registration: (String, i32, String),
    ) -> Self {
        let capability = Capability::new(spec.memory_mb, spec.vcores);
        Self {
            allocator,
            amrm,
            table,
            registry,
            launcher,
            topology,
            spec,
            capability,
            requests: HashMap::new(),
            granted: HashMap::new(),
            demand: model::Demand::default(),
            excluded: HashSet::new(),
            start: Instant::now(),
            app_id,
            registration,
            outage: RmOutage::new(5, RM_OUTAGE_LIMIT),
        }
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn event(&mut self, event: Event) {
        let now = self.now_ms();
        let actions = self.allocator.on_event(now, event);
        self.apply(actions);
    }

    /// The driver's whole demand. Executors run one task per vcore.
    pub fn set_demand(&mut self, d: model::Demand) {
        let newly_excluded: HashSet<String> = d.excluded_hosts.iter().cloned().collect();
        let added: Vec<String> = newly_excluded.difference(&self.excluded).cloned().collect();
        let removed: Vec<String> = self.excluded.difference(&newly_excluded).cloned().collect();
        if !added.is_empty() || !removed.is_empty() {
            self.table.exclusions.update(added, removed);
            self.excluded = newly_excluded;
        }
        self.demand = d.clone();
        self.event(Event::DemandChanged(Demand {
            target_executors: d.target_executors.min(self.spec.max).max(self.spec.min),
            tasks_per_executor: self.spec.vcores.max(1) as u32,
            locality_aware_tasks: d.locality_aware_tasks,
            host_to_local_task_count: d
                .host_to_local_task_count
                .into_iter()
                .map(|(h, n)| (h.as_str().into(), n))
                .collect(),
        }));
    }

    /// Kills executors by id; returns (killed, unknown).
    pub fn kill(&mut self, ids: Vec<String>) -> (Vec<String>, Vec<String>) {
        let mut killed = Vec::new();
        let mut unknown = Vec::new();
        for id in ids {
            match id.parse::<u64>() {
                Ok(n) if self.registry.is_live(n) => {
                    self.event(Event::KillExecutor { executor: n });
                    killed.push(id);
                }
                _ => unknown.push(id),
            }
        }
        (killed, unknown)
    }

    pub fn on_launch(&mut self, report: LaunchReport) {
        match report {
            LaunchReport::Started { container } => {
                self.registry.running(&container);
                self.event(Event::ExecutorLaunched {
                    container: Arc::from(container.as_str()),
                });
            }
            LaunchReport::Failed { container, error } => {
                self.registry.launch_failed(&container, &error);
                // The container may still hold resources: give it back.
                if let Some(id) = to_table_id(&container) {
                    self.table.releases.release(id);
                }
                self.event(Event::ExecutorLaunchFailed {
                    container: Arc::from(container.as_str()),
                    error,
                });
            }
        }
    }

    /// An executor container request naming `nodes` and `racks` (none: anywhere).
    fn container_request(&self, nodes: &[HostName], racks: &[RackName]) -> ContainerRequest {
        ContainerRequest::anywhere(self.capability, EXECUTOR_PRIORITY)
            .with_nodes(nodes.iter().map(|h| h.to_string()).collect::<Vec<_>>())
            .with_racks(racks.iter().map(|r| r.to_string()).collect::<Vec<_>>())
    }

    fn apply(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::AddRequests { ids, nodes, racks } => {
                    for id in ids {
                        match self.table.table.add(self.container_request(&nodes, &racks)) {
                            Ok(tid) => {
                                self.requests.insert(id, tid);
                            }
                            Err(e) => warn!(%e, "request refused by the request table"),
                        }
                    }
                }
                Action::RemoveRequest(id) => {
                    if let Some(tid) = self.requests.remove(&id) {
                        let _ = self.table.table.remove(tid);
                    }
                }
                Action::ReplaceRequests {
                    old,
                    ids,
                    nodes,
                    racks,
                } => {
                    for (old, id) in old.into_iter().zip(ids) {
                        let Some(tid) = self.requests.remove(&old) else {
                            continue;
                        };
                        let req = self.container_request(&nodes, &racks);
                        match self.table.table.replace(tid, req) {
                            Ok(new) => {
                                self.requests.insert(id, new);
                            }
                            Err(e) => {
                                warn!(%e, "request replacement refused by the request table");
                                self.requests.insert(id, tid);
                            }
                        }
                    }
                }
                Action::ReleaseContainer(cid) => {
                    self.granted.remove(&*cid);
                    self.registry
                        .released(&cid, "released by the AM (killed by the driver)");
                    if let Some(id) = to_table_id(&cid) {
                        self.table.releases.release(id);
                    }
                }
                Action::LaunchExecutor {
                    executor,
                    container,
                    locality,
                } => {
                    let Some(proto) = self.granted.remove(&*container.id) else {
                        warn!(container = %container.id, "asked to launch on an unknown container");
                        continue;
                    };
                    let node = proto
                        .node_id
                        .as_ref()
                        .map(node_id_string)
                        .unwrap_or_default();
                    info!(executor, container = %container.id, host = %container.host, ?locality, "launching executor");
                    self.registry.launching(
                        executor,
                        &container.id,
                        &container.host,
                        &container.rack,
                        locality,
                    );
                    let token = self.amrm.nm_token(&node).cloned();
                    self.launcher.launch(executor, proto, token);
                }
                Action::TellDriver(notice) => debug!(?notice, "driver notice"),
            }
        }
    }

    /// One round: update requests, allocate, digest the response.
    pub async fn round(&mut self) -> Result<(), Stop> {
        self.event(Event::Heartbeat);
        let batch = self.table.take_batch();
        let input = AllocateInput::from_batch(&batch, 0.0);
        match self.amrm.allocate(&input).await {
            Ok(resp) => {
                self.outage.answered();
                self.table.on_allocate_success((&resp).into());
                self.digest(resp);
                Ok(())
            }
            Err(e) => self.recover(e, batch).await,
        }
    }

    async fn recover(
        &mut self,
        e: RpcError,
        batch: yarn_client::request_table::AllocateBatch,
    ) -> Result<(), Stop> {
        match recovery(&e) {
            Recovery::Retry => {
                warn!(%e, "allocate failed; retrying next round");
                self.table.restore_batch(batch);
                if e.remote().is_some() {
                    // The RM answered (with an exception): it is there.
                    self.outage.answered();
                    return Ok(());
                }
                match self.outage.failed(Instant::now(), &e.to_string()) {
                    Some(why) => Err(Stop::Lost(why)),
                    None => Ok(()),
                }
            }
            Recovery::Reregister => {
                warn!(%e, "the RM lost our registration; registering again and resending state");
                let (host, port, url) = self.registration.clone();
                self.amrm
                    .register(&host, port, &url)
                    .await
                    .map_err(|e| Stop::Rm(format!("re-registering: {e}")))?;
                self.table.resync(Some(batch));
                Ok(())
            }
            Recovery::Shutdown | Recovery::FixRequest => Err(Stop::Rm(e.to_string())),
        }
    }

    fn digest(&mut self, resp: AllocateResponseProto) {
        if !resp.updated_nodes.is_empty() {
            let updates: Vec<_> = resp
                .updated_nodes
                .iter()
                .filter_map(|r| {
                    node_update(r, &self.excluded, self.spec.memory_mb, self.spec.vcores)
                })
                .collect();
            for u in &updates {
                self.topology.set_rack(u.host.clone(), u.rack.clone());
            }
            self.event(Event::NodesUpdated(updates));
        }
        if !resp.allocated_containers.is_empty() {
            let mut containers = Vec::new();
            for c in resp.allocated_containers {
                let id = c.id.as_ref().map(container_id_string).unwrap_or_default();
                let host = c
                    .node_id
                    .as_ref()
                    .and_then(|n| n.host.clone())
                    .unwrap_or_default();
                let rack = self.topology.rack_of(&host).clone();
                info!(container = %id, %host, %rack, "container granted");
                containers.push(Container {
                    id: Arc::from(id.as_str()),
                    host: host.as_str().into(),
                    rack,
                });
                self.granted.insert(id, c);
            }
            self.event(Event::ContainersGranted(containers));
        }
        if !resp.completed_container_statuses.is_empty() {
            let mut done = Vec::new();
            for s in resp.completed_container_statuses {
                let id = s
                    .container_id
                    .as_ref()
                    .map(container_id_string)
                    .unwrap_or_default();
                let status = s.exit_status();
                let diagnostics = s.diagnostics().to_string();
                info!(container = %id, exit_status = status, "container completed");
                self.registry.completed(&id, status, &diagnostics);
                done.push(CompletedContainer {
                    id: Arc::from(id.as_str()),
                    exit_status: status,
                    diagnostics,
                });
            }
            self.event(Event::ContainersCompleted(done));
        }
    }

    pub fn has_pending(&self) -> bool {
        self.allocator.pending_requests() > 0
    }

    pub fn failures(&mut self) -> usize {
        let now = self.now_ms();
        self.allocator.failed_executors(now)
    }

    /// What the read endpoints show after this round.
    pub fn view(&self) -> StateView {
        let (locality, any_host) = self.allocator.pending().fold((0, 0), |(l, a), r| {
            if r.is_any_host() {
                (l, a + 1)
            } else {
                (l + 1, a)
            }
        });
        StateView {
            app_id: self.app_id.clone(),
            demand: self.demand.clone(),
            pending: PendingView { locality, any_host },
            starting: self.allocator.starting(),
            running: self.allocator.running(),
            executor_failures: self.registry.counts_against_app(),
            executors: self.registry.views(),
            recent_events: self.registry.recent(),
            job: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rm_outage_gives_up_only_after_enough_failures_and_time() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut o = RmOutage::new(3, s(60));
        assert_eq!(o.failed(t0, "refused"), None);
        assert_eq!(o.failed(t0 + s(1), "refused"), None);
        // Many failures, but a short outage (an RM restart): keep going.
        assert_eq!(o.failed(t0 + s(30), "refused"), None);
        let why = o.failed(t0 + s(61), "connection refused").unwrap();
        assert!(
            why.contains("61 s") && why.contains("4 allocate calls"),
            "{why}"
        );
        assert!(why.contains("connection refused"), "{why}");
        // An answer starts the count again.
        o.answered();
        assert_eq!(o.failed(t0 + s(200), "refused"), None);
        assert_eq!(o.failed(t0 + s(300), "refused"), None);
        // A long but sparse outage (calls blocking on a hung RM) still needs the count.
        let mut slow = RmOutage::new(3, s(60));
        assert_eq!(slow.failed(t0, "timeout"), None);
        assert_eq!(slow.failed(t0 + s(100), "timeout"), None);
        assert!(slow.failed(t0 + s(200), "timeout").is_some());
    }
}
