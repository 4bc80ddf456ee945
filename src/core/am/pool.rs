//! The executor pool, sans-IO: the allocator's actions applied to the request table, an
//! allocate response turned back into allocator events, and the launches that follow.
//!
//! The allocator decides; this module only translates. Its ids (requests, executors) are
//! mapped onto the request table's and YARN's here, so neither side knows the other. A
//! container is turned into its executor through the allocator's tracker (the one owner of
//! container <-> executor and launch phase); the registry hears executor ids only (see
//! `executors` for which component answers what). No
//! socket, no clock: time comes in as `now_ms`, launches go out as [`Launch`] values for the
//! loop to hand to the launcher, and the allocate call itself is the RM session's.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::core::allocator::exit_status::classify;
use crate::core::allocator::matching::{Container, Locality};
use crate::core::allocator::tracker::{
    Action, Allocator, AllocatorConfig, ContainerExit, DriverNotice, Event, Phase,
};
use crate::core::allocator::{Demand, RackName};
use crate::core::ids::{ExecutorId, IdStripe};
use crate::core::request_book::{RequestBook, EXECUTOR_PRIORITY};
use tracing::{debug, info, warn};
use yarn_client::amrm::{AllocatedContainer, Allocation};
use yarn_client::ask::Capability;
use yarn_client::ids::parse_container_id;
use yarn_client::request_table::{AllocateBatch, AmrmState, ContainerId};
use yarn_client::token::Token;

use super::cluster_view::{listed_node_update, node_update};
use super::events::LaunchReport;
use super::held_back::HeldBack;
use super::registry::{Granted, Held, Registry};
use crate::protocol::driver_api::{KindView, PendingView, StateView};
use crate::protocol::spec::{ExecutorKind, ExecutorSpec};

/// An executor to start on a granted container.
#[derive(Debug)]
pub struct Launch {
    pub executor: ExecutorId,
    /// The executor's kind (an index into [`ExecutorSpec::all_kinds`]).
    pub kind: usize,
    pub container: AllocatedContainer,
    /// The NM token for the container's node (the RM sends each only once).
    pub nm_token: Option<Token>,
    /// A kind declared while the app runs (not in the launcher's spec): its shape and the
    /// environment its executors get besides the app's.
    pub declared: Option<Arc<DeclaredKind>>,
}

/// A kind declared while the app runs (`POST /v1/kinds`), as its launches need it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredKind {
    pub shape: ExecutorKind,
    pub env: BTreeMap<String, String>,
}

/// Why a kind declaration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclareError {
    #[error("executor kind {name:?} exists with another {difference}")]
    Conflict { name: String, difference: String },
    #[error(
        "this application has room for {max} executor kinds in all (submit --max-executor-kinds), all taken"
    )]
    Full { max: usize },
}

/// Bench only: what [`Pool::observe_actions`] installs.
#[cfg(feature = "bench")]
type ActionObserver = Box<dyn FnMut(&Action) + Send>;

/// One executor kind's share of the pool: its own allocator (requests, executors, failures)
/// and request book, asked at its own priority, so that kinds of different sizes never
/// share a YARN request key and every grant says by its priority whose it is.
struct KindPool {
    allocator: Allocator,
    /// Allocator request id -> request-table id.
    requests: RequestBook,
    shape: ExecutorKind,
    /// The driver's last demand for this kind.
    demand: Demand,
    /// This kind's executors that exited 0 on their own (see [`Registry::succeeded`]).
    succeeded: u32,
    /// `Some` for a kind declared while the app runs.
    declared: Option<Arc<DeclaredKind>>,
}

pub struct Pool {
    /// Index `k` is kind `k` ([`ExecutorSpec::all_kinds`]); one entry for an app without
    /// kinds.
    kinds: Vec<KindPool>,
    /// How many id stripes executor ids are spread over ([`ExecutorSpec::stripe_width`]):
    /// at least `kinds.len()`, more when kinds may be declared while the app runs.
    width: usize,
    /// What a kind declared while the app runs gets its allocator from: the configuration
    /// of the first kind's and the first executor id of this attempt.
    template: Option<(AllocatorConfig, ExecutorId)>,
    pub table: AmrmState,
    pub registry: Registry,
    /// Granted containers not yet launched or released, by id string.
    granted: HashMap<String, AllocatedContainer>,
    /// Every host excluded now: the driver's and the AM's own ([`Pool::held`]).
    excluded: HashSet<String>,
    /// Hosts the AM keeps executors off by itself: draining nodes, failing hosts.
    held: HeldBack,
    /// The replacements for draining executors the allocator's target last included.
    leaving_sent: u32,
    app_id: String,
    /// Executors to start, taken by the loop.
    launches: Vec<Launch>,
    /// The demand changed or executors were killed since the last look: the RM should hear
    /// of it on the next heartbeat, not after a full interval.
    urgent: bool,
    /// Hosts a container landed on that the topology did not know; one node-list fetch
    /// each at most (see [`Pool::take_nodes_wanted`]).
    unknown_hosts: HashSet<String>,
    nodes_wanted: bool,
    /// The allocator's notices of executors gone (exited, launch failed), for the driver:
    /// taken with the registry's own exits by [`Pool::take_gone`].
    notices: Vec<(ExecutorId, String)>,
    /// Bench only (`benches/rm_scale.rs`): sees every allocator action [`Pool::apply`]
    /// carries out, in order, before the request book does (see [`Pool::observe_actions`]).
    #[cfg(feature = "bench")]
    observer: Option<ActionObserver>,
}

fn to_table_id(id: &str) -> Option<ContainerId> {
    parse_container_id(id).map(|p| ContainerId::from(&p))
}

impl KindPool {
    /// Kind `k` of `shape`, its requests at priority `EXECUTOR_PRIORITY + k` with the
    /// kind's size, label and resources.
    fn new(
        k: usize,
        allocator: Allocator,
        shape: ExecutorKind,
        declared: Option<Arc<DeclaredKind>>,
    ) -> Self {
        let requests = RequestBook::new(
            Capability::new(shape.memory_mb, shape.vcores),
            shape.node_label.clone(),
        )
        .with_resources(shape.resources.clone().into_iter().collect())
        .with_priority(yarn_client::ask::Priority(EXECUTOR_PRIORITY.0 + k as i32));
        KindPool {
            allocator,
            requests,
            shape,
            demand: Demand::default(),
            succeeded: 0,
            declared,
        }
    }
}

impl Pool {
    /// A pool of executors of one kind (an app without `kinds`).
    pub fn new(
        allocator: Allocator,
        table: AmrmState,
        registry: Registry,
        spec: ExecutorSpec,
        app_id: String,
    ) -> Self {
        Self::with_kinds(vec![allocator], table, registry, &spec, app_id)
    }

    /// A pool of every kind of `spec`, `allocators[k]` kind `k`'s (configured with its
    /// [`IdStripe`]).
    pub fn with_kinds(
        allocators: Vec<Allocator>,
        table: AmrmState,
        registry: Registry,
        spec: &ExecutorSpec,
        app_id: String,
    ) -> Self {
        assert_eq!(
            allocators.len(),
            spec.kind_count(),
            "one allocator per executor kind"
        );
        let kinds = allocators
            .into_iter()
            .zip(spec.all_kinds())
            .enumerate()
            .map(|(k, (allocator, shape))| KindPool::new(k, allocator, shape, None))
            .collect();
        Self {
            kinds,
            width: spec.stripe_width(),
            template: None,
            table,
            registry,
            granted: HashMap::new(),
            excluded: HashSet::new(),
            held: HeldBack::default(),
            leaving_sent: 0,
            app_id,
            launches: Vec::new(),
            urgent: false,
            unknown_hosts: HashSet::new(),
            nodes_wanted: false,
            notices: Vec::new(),
            #[cfg(feature = "bench")]
            observer: None,
        }
    }

    /// Bench only: calls `see` with every allocator action the pool applies from now on
    /// (request changes, releases, launches with their locality, notices), in the order it
    /// applies them. The pool does with each exactly what it does without an observer.
    #[cfg(feature = "bench")]
    pub fn observe_actions(&mut self, see: impl FnMut(&Action) + Send + 'static) {
        self.observer = Some(Box::new(see));
    }

    /// Bench only: the allocator, read-only (its counts, e.g. executors running).
    #[cfg(feature = "bench")]
    pub fn allocator(&self) -> &Allocator {
        &self.kinds[0].allocator
    }

    /// The AM's one topology (a handle), for the driver to share.
    pub fn topology(&self) -> &crate::core::topology::SharedTopology {
        self.kinds[0].allocator.topology()
    }

    /// The kind executor `id` is of (its id says: see [`IdStripe`]). May be past the kinds
    /// known (an adopted executor of a kind an earlier attempt had declared): the pool holds
    /// no such executor ([`Self::adopt`] releases them).
    pub fn kind_of(&self, id: ExecutorId) -> usize {
        IdStripe::kind_of(id, self.width)
    }

    /// Lets drivers declare kinds while the app runs ([`Self::declare_kind`]), each with an
    /// allocator configured as `config` (in its own stripe), numbering from `first`.
    pub fn allow_declared_kinds(&mut self, config: AllocatorConfig, first: ExecutorId) {
        self.template = Some((config, first));
    }

    /// Declares kind `decl` while the app runs: a new allocator and request book at the next
    /// priority, in the next id stripe; the same declaration again answers the kind it made.
    /// Its cluster view starts empty (every host usable, no capacity known: executors of a
    /// new size fit nodes differently), and the RM's node list is fetched for it.
    pub fn declare_kind(&mut self, decl: DeclaredKind) -> Result<(usize, bool), DeclareError> {
        let name = decl.shape.name.clone();
        if let Some(k) = self.kinds.iter().position(|k| k.shape.name == name) {
            let have = &self.kinds[k];
            let env = have
                .declared
                .as_ref()
                .map(|d| d.env.clone())
                .unwrap_or_default();
            let mut differences = Vec::new();
            let mut differ = |what: &str, there: String, asked: String| {
                if there != asked {
                    differences.push(format!("{what} ({there} there, {asked} asked)"));
                }
            };
            let (h, d) = (&have.shape, &decl.shape);
            differ(
                "memory_mb",
                h.memory_mb.to_string(),
                d.memory_mb.to_string(),
            );
            differ("vcores", h.vcores.to_string(), d.vcores.to_string());
            differ(
                "resources",
                format!("{:?}", h.resources),
                format!("{:?}", d.resources),
            );
            differ("max", h.max.to_string(), d.max.to_string());
            if env != decl.env {
                differences.push("env".to_string());
            }
            if !differences.is_empty() || have.declared.is_none() {
                if differences.is_empty() {
                    differences.push("origin (it was given at submit)".into());
                }
                return Err(DeclareError::Conflict {
                    name,
                    difference: differences.join(", "),
                });
            }
            return Ok((k, false));
        }
        let k = self.kinds.len();
        let Some((config, first)) = self.template.clone().filter(|_| k < self.width) else {
            return Err(DeclareError::Full { max: self.width });
        };
        let allocator = Allocator::new(AllocatorConfig {
            tasks_per_executor: decl.shape.vcores.max(1) as u32,
            ids: IdStripe {
                kind: k as u64,
                kinds: self.width as u64,
            },
            ..config
        })
        .with_first_executor_id(first)
        .with_cluster(
            self.topology().clone(),
            crate::core::allocator::Cluster {
                excluded: self.excluded.iter().map(|h| h.as_str().into()).collect(),
                ..Default::default()
            },
        );
        info!(kind = %name, index = k, memory_mb = decl.shape.memory_mb, vcores = decl.shape.vcores, "executor kind declared");
        let shape = decl.shape.clone();
        self.kinds
            .push(KindPool::new(k, allocator, shape, Some(Arc::new(decl))));
        self.nodes_wanted = true;
        Ok((k, true))
    }

    /// The default kind's shape (what the spec's own fields say).
    pub fn default_kind(&self) -> &ExecutorKind {
        &self.kinds[0].shape
    }

    /// How many executor kinds the app has.
    pub fn kind_count(&self) -> usize {
        self.kinds.len()
    }

    /// The allocator that tracks executor `id`.
    fn owner(&self, id: ExecutorId) -> &Allocator {
        &self.kinds[self.kind_of(id)].allocator
    }

    /// The kind whose allocator knows `container` (an executor's, or being given back).
    fn kind_of_container(&self, container: &str) -> Option<usize> {
        self.kinds
            .iter()
            .position(|k| k.allocator.is_ours(container))
    }

    /// Which kind's executor `container` holds, and the executor.
    fn executor_of(&self, container: &str) -> Option<ExecutorId> {
        self.kinds
            .iter()
            .find_map(|k| k.allocator.executor_of(container))
    }

    fn is_releasing(&self, container: &str) -> bool {
        self.kinds
            .iter()
            .any(|k| k.allocator.is_releasing(container))
    }

    /// The host's rack, from the AM's one topology.
    pub fn rack_of(&self, host: &str) -> RackName {
        self.topology().rack_of(host)
    }

    /// A container landed on a host the topology does not know (a NodeManager that joined
    /// after the start and whose report did not come with an allocate response): the loop
    /// should fetch the RM's node list, off the loop, and hand it to [`Pool::nodes_listed`].
    pub fn take_nodes_wanted(&mut self) -> bool {
        std::mem::take(&mut self.nodes_wanted)
    }

    fn note_host(&mut self, host: &str) {
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
    pub fn nodes_listed(&mut self, now_ms: u64, nodes: Option<&[yarn_client::rest::NodeInfo]>) {
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

    /// Hands `event` to kind `k`'s allocator and carries out what it answers.
    fn event(&mut self, now_ms: u64, k: usize, event: Event) {
        let actions = self.kinds[k].allocator.on_event(now_ms, event);
        self.apply(now_ms, k, actions);
    }

    /// `event` for the allocator tracking executor `id`.
    fn executor_event(&mut self, now_ms: u64, id: ExecutorId, event: Event) {
        self.event(now_ms, self.kind_of(id), event);
    }

    /// Whether something the RM should hear of soon happened since the last call.
    pub fn take_urgent(&mut self) -> bool {
        std::mem::take(&mut self.urgent)
    }

    /// The executors to start now.
    pub fn take_launches(&mut self) -> Vec<Launch> {
        std::mem::take(&mut self.launches)
    }

    /// The driver's whole demand for the kind it names (`kind`, the default kind when it
    /// names none). Executors run one task per vcore. A kind the app does not have is
    /// ignored (the driver API refuses it before it gets here).
    pub fn set_demand(&mut self, now_ms: u64, d: Demand) {
        let k = match d.kind.as_deref() {
            None => Some(0),
            Some(name) => self.kinds.iter().position(|k| k.shape.name == name),
        };
        match k {
            Some(k) => self.set_kind_demand(now_ms, k, d),
            None => {
                warn!(kind = ?d.kind, "demand for an executor kind this app does not have; ignored")
            }
        }
    }

    /// The driver's whole demand for kind `k` (an index below [`Self::kind_count`]).
    pub fn set_kind_demand(&mut self, now_ms: u64, k: usize, d: Demand) {
        let Some(kind) = self.kinds.get_mut(k) else {
            warn!(
                kind = k,
                "demand for an executor kind this app does not have; ignored"
            );
            return;
        };
        if kind.demand != d {
            self.urgent = true;
        }
        kind.demand = d;
        self.push_demand(now_ms);
    }

    /// Gives the allocator the driver's demand with the AM's own additions: the hosts it
    /// holds back excluded too, and a replacement for every executor on a draining node
    /// (see `held_back`). Called when either side changes.
    fn push_demand(&mut self, now_ms: u64) {
        let mut excluded: HashSet<String> = self
            .kinds
            .iter()
            .flat_map(|k| k.demand.excluded_hosts.iter().cloned())
            .collect();
        excluded.extend(self.held.hosts().map(str::to_string));
        let added: Vec<String> = excluded.difference(&self.excluded).cloned().collect();
        let removed: Vec<String> = self.excluded.difference(&excluded).cloned().collect();
        if !added.is_empty() || !removed.is_empty() {
            self.table.exclusions.update(added, removed);
            self.excluded = excluded.clone();
            self.urgent = true;
        }
        // Each allocator gets its kind's demand, the target within the kind's bounds, plus
        // the leaving executors' replacements; every kind excludes every excluded host.
        let draining = self.draining_executors();
        self.leaving_sent = draining.len() as u32;
        let mut excluded_hosts: Vec<String> = excluded.into_iter().collect();
        excluded_hosts.sort();
        for k in 0..self.kinds.len() {
            let leaving = draining.iter().filter(|&&id| self.kind_of(id) == k).count() as u32;
            let kind = &self.kinds[k];
            let d = kind.demand.clone();
            let target = d.target_executors.min(kind.shape.max).max(kind.shape.min) + leaving;
            self.event(
                now_ms,
                k,
                Event::DemandChanged(Demand {
                    target_executors: target,
                    excluded_hosts: excluded_hosts.clone(),
                    ..d
                }),
            );
        }
    }

    /// An app without a driver: every kind asks its initial executors (the default kind
    /// `default_initial`), less those of the kind that exited 0, which are not replaced.
    /// Returns how many executors that is in all at the start (what must exit 0).
    pub fn ask_initial(&mut self, now_ms: u64, default_initial: u32) -> u32 {
        let mut total = 0;
        for k in 0..self.kinds.len() {
            let initial = if k == 0 {
                default_initial
            } else {
                self.kinds[k].shape.initial
            };
            total += initial;
            let d = Demand {
                target_executors: initial.saturating_sub(self.kinds[k].succeeded),
                ..Default::default()
            };
            self.set_kind_demand(now_ms, k, d);
        }
        total
    }

    /// Kills executors by id; returns (killed, unknown).
    pub fn kill(
        &mut self,
        now_ms: u64,
        ids: Vec<ExecutorId>,
    ) -> (Vec<ExecutorId>, Vec<ExecutorId>) {
        let (killed, unknown): (Vec<_>, Vec<_>) =
            ids.into_iter().partition(|&id| self.registry.is_live(id));
        for &id in &killed {
            self.executor_event(now_ms, id, Event::KillExecutor { executor: id });
            self.urgent = true;
        }
        (killed, unknown)
    }

    /// Live executors the AM could give back, each with its container (not those already
    /// being released): what a preemption request is answered from. `work`: the running
    /// tasks and their work so far for an executor, when a job knows them.
    pub fn give_back_candidates(
        &self,
        work: impl Fn(ExecutorId) -> Option<(usize, u64)>,
    ) -> Vec<super::preemption::Candidate> {
        self.registry
            .live_ids()
            .filter_map(|id| {
                let (c, _) = self.owner(id).container_of(id)?;
                if self.is_releasing(c) {
                    return None;
                }
                let (running_tasks, work_ms) = work(id).unwrap_or((0, 0));
                Some(super::preemption::Candidate {
                    executor: id,
                    container: c.to_string(),
                    running_tasks,
                    work_ms,
                })
            })
            .collect()
    }

    /// The size of one default-kind executor's container (memory MB, vcores): what a
    /// negotiable preemption ask is counted in (with several kinds an approximation).
    pub fn executor_size(&self) -> (i64, i32) {
        let shape = &self.kinds[0].shape;
        (shape.memory_mb, shape.vcores)
    }

    /// Gives live executors back to YARN for a reason the driver and the page should see
    /// (the RM's preemption request): released like a kill, never counted against the app,
    /// their exit reason the given one. The allocator replaces them if the demand still
    /// wants them (YARN grants them when it has room again).
    pub fn give_back(&mut self, now_ms: u64, executors: Vec<(ExecutorId, String)>) {
        for (id, reason) in executors {
            if !self.registry.is_live(id) {
                continue;
            }
            info!(executor = %id, %reason, "giving an executor back");
            self.registry.giving_back(id, reason);
            self.executor_event(now_ms, id, Event::KillExecutor { executor: id });
            self.urgent = true;
        }
        if self.draining_executors().len() as u32 != self.leaving_sent {
            self.push_demand(now_ms);
        }
    }

    /// Declares the executors not heard from for `limit_ms` lost: each container goes back
    /// to YARN (the allocator replaces it if the demand still wants it) and the executor is
    /// gone at once, with a reason saying so, not counted against the app (see
    /// [`Registry::declare_lost`]). Returns the ids declared lost and when to look again.
    pub fn declare_silent_lost(
        &mut self,
        now_ms: u64,
        limit_ms: u64,
    ) -> (Vec<ExecutorId>, Option<u64>) {
        let (kinds, width) = (&self.kinds, self.width);
        let (silent, next) = self.registry.silent(now_ms, limit_ms, |id| {
            let allocator = &kinds[IdStripe::kind_of(id, width)].allocator;
            allocator
                .container_of(id)
                .is_some_and(|(c, _)| allocator.is_releasing(c))
        });
        for &(id, quiet_ms) in &silent {
            let reason = format!(
                "lost: no poll for {quiet_ms} ms (executor silence timeout {limit_ms} ms); \
                 container released by the AM"
            );
            warn!(executor = %id, %reason, "executor went silent");
            self.executor_event(now_ms, id, Event::KillExecutor { executor: id });
            self.urgent = true;
            let container = self.container_of(id).unwrap_or_default();
            self.registry.declare_lost(id, &container, &reason);
        }
        (silent.into_iter().map(|(id, _)| id).collect(), next)
    }

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

    /// What the API shows of a kind-`k` executor's container beyond its size.
    fn granted_view(&self, k: usize, c: &AllocatedContainer) -> Granted {
        Granted {
            kind: (self.kinds.len() > 1).then(|| self.kinds[k].shape.name.clone()),
            resources: c.resources.iter().cloned().collect(),
        }
    }

    /// Carries out the allocator's actions: request changes through the request book,
    /// releases and launches here, notices of executors gone queued for the driver.
    fn apply(&mut self, now_ms: u64, k: usize, actions: Vec<Action>) {
        for action in actions {
            #[cfg(feature = "bench")]
            if let Some(see) = self.observer.as_mut() {
                see(&action);
            }
            let Some(action) = self.kinds[k].requests.apply(&mut self.table.table, action) else {
                continue;
            };
            match action {
                Action::ReleaseContainer(cid) => {
                    self.granted.remove(&*cid);
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
                    let node = proto.node.clone();
                    let kind = self.kinds[k].shape.name.as_str();
                    info!(executor = %executor, %kind, container = %container.id, host = %container.host, ?locality, "launching executor");
                    let granted = self.granted_view(k, &proto);
                    if let Some(held) = Held::of(&self.kinds[k].allocator, executor) {
                        self.registry.launching(
                            executor,
                            &container.host,
                            &container.rack,
                            locality,
                            held,
                            granted,
                        );
                        self.registry
                            .serves_logs_at(executor, &proto.node_http_address);
                    }
                    // Silence counts from the launch until the first poll.
                    self.registry.heard(executor, now_ms);
                    let nm_token = self.table.nm_tokens.get(&node).cloned();
                    self.launches.push(Launch {
                        executor,
                        kind: k,
                        container: proto,
                        nm_token,
                        declared: self.kinds[k].declared.clone(),
                    });
                }
                Action::TellDriver(DriverNotice::ExecutorExited {
                    executor, reason, ..
                }) => {
                    debug!(executor = %executor, %reason, "allocator: executor gone");
                    self.notices.push((executor, reason));
                }
                // Request actions were the book's.
                Action::AddRequests { .. }
                | Action::RemoveRequest(_)
                | Action::RequestSatisfied(_)
                | Action::ReplaceRequests { .. } => {}
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
    pub fn take_gone(&mut self) -> Vec<(ExecutorId, String)> {
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

    /// The container the tracker has executor `id` in, until YARN reports it completed.
    pub fn container_of(&self, id: ExecutorId) -> Option<String> {
        self.owner(id).container_of(id).map(|(c, _)| c.to_string())
    }

    pub fn has_pending(&self) -> bool {
        self.kinds
            .iter()
            .any(|k| k.allocator.pending_requests() > 0)
    }

    /// Executors asked for and not granted yet.
    pub fn pending_count(&self) -> u32 {
        let n: usize = self
            .kinds
            .iter()
            .map(|k| k.allocator.pending_requests())
            .sum();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// What is waiting, for [`super::waiting::diagnose`]: the executors' size and the hosts
    /// the pending requests name (none when any of them takes any host).
    /// With several kinds, the size is that of the kind with most executors waiting.
    pub fn waiting_ask(&self) -> super::waiting::Ask {
        let kind = self
            .kinds
            .iter()
            .max_by_key(|k| k.allocator.pending_requests())
            .expect("a pool has a kind");
        let mut hosts = std::collections::BTreeSet::new();
        let mut any_host = false;
        for r in self.kinds.iter().flat_map(|k| k.allocator.pending()) {
            if r.nodes.is_empty() {
                any_host = true;
                break;
            }
            hosts.extend(r.nodes.iter().map(|h| h.to_string()));
        }
        super::waiting::Ask {
            executors: self.pending_count(),
            memory_mb: kind.shape.memory_mb,
            vcores: i64::from(kind.shape.vcores),
            preferred_hosts: if any_host { Default::default() } else { hosts },
        }
    }

    pub fn failures(&mut self, now_ms: u64) -> usize {
        self.kinds
            .iter_mut()
            .map(|k| k.allocator.failed_executors(now_ms))
            .sum()
    }

    /// The reason of the newest executor failure that counts against the app.
    pub fn last_failure(&self) -> String {
        self.registry
            .exited_views()
            .rev()
            .find(|e| e.counts_against_app == Some(true))
            .and_then(|e| e.reason.clone())
            .unwrap_or_default()
    }

    /// What the read endpoints show now. Costs no copy of the executor list unless it
    /// changed (see `executors::Registry::views`).
    pub fn view(&mut self) -> StateView {
        let (locality, any_host) =
            self.kinds
                .iter()
                .flat_map(|k| k.allocator.pending())
                .fold((0, 0), |(l, a), r| {
                    if r.is_any_host() {
                        (l, a + 1)
                    } else {
                        (l + 1, a)
                    }
                });
        let (kinds, width) = (&self.kinds, self.width);
        let executors = self
            .registry
            .views_with(|id| Held::of(&kinds[IdStripe::kind_of(id, width)].allocator, id));
        let kinds = if self.kinds.len() > 1 {
            self.kinds
                .iter()
                .map(|k| KindView {
                    name: k.shape.name.clone(),
                    memory_mb: k.shape.memory_mb,
                    vcores: k.shape.vcores,
                    resources: k.shape.resources.clone(),
                    node_label: k.shape.node_label.clone(),
                    demand: k.demand.clone(),
                    starting: k.allocator.starting(),
                    running: k.allocator.running(),
                    pending: u32::try_from(k.allocator.pending_requests()).unwrap_or(u32::MAX),
                })
                .collect()
        } else {
            Vec::new()
        };
        StateView {
            app_id: self.app_id.clone(),
            kinds,
            demand: self.kinds[0].demand.clone(),
            pending: PendingView { locality, any_host },
            starting: self.kinds.iter().map(|k| k.allocator.starting()).sum(),
            running: self.kinds.iter().map(|k| k.allocator.running()).sum(),
            executor_failures: self.registry.counts_against_app(),
            executors,
            retention: self.registry.retention(),
            recent_events: self.registry.recent(),
            progress: 0.0,
            waiting: None,
            preemption: Default::default(),
            held_back_hosts: Vec::new(),
            job: None,
        }
    }
}

#[path = "pool_hosts.rs"]
mod hosts;

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;
