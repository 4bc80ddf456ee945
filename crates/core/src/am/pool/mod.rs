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

use crate::allocator::tracker::{Action, Allocator, AllocatorConfig, DriverNotice, Event};
use crate::allocator::Demand;
use crate::ids::ExecutorId;
use crate::request_book::RequestBook;
use tracing::{debug, info, warn};
use yarn_client::amrm::AllocatedContainer;
use yarn_client::ids::parse_container_id;
use yarn_client::request_table::{AmrmState, ContainerId};
use yarn_client::token::Token;

use super::held_back::HeldBack;
use super::registry::{Granted, Held, Registry};
use yarn_am_wire::spec::{ExecutorKind, ExecutorSpec};

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
    pub fn topology(&self) -> &crate::topology::SharedTopology {
        self.kinds[0].allocator.topology()
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
    pub(crate) fn take_urgent(&mut self) -> bool {
        std::mem::take(&mut self.urgent)
    }

    /// The executors to start now.
    pub fn take_launches(&mut self) -> Vec<Launch> {
        std::mem::take(&mut self.launches)
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
}

mod demand;
mod grants;
mod hosts;
mod kinds;
mod view;

#[cfg(test)]
mod tests;
