//! The pool's executor kinds: which kind an executor or a container is of, and kinds
//! declared while the app runs (each with its own allocator and request book).

use std::sync::Arc;

use tracing::info;
use yarn_client::ask::Capability;

use super::{DeclareError, DeclaredKind, KindPool, Pool};
use crate::allocator::tracker::{Allocator, AllocatorConfig};
use crate::allocator::Demand;
use crate::ids::{ExecutorId, IdStripe};
use crate::request_book::{RequestBook, EXECUTOR_PRIORITY};
use yarn_am_wire::spec::ExecutorKind;

impl Pool {
    /// The kind executor `id` is of (its id says: see [`IdStripe`]). May be past the kinds
    /// known (an adopted executor of a kind an earlier attempt had declared): the pool holds
    /// no such executor ([`Self::adopt`] releases them).
    pub(crate) fn kind_of(&self, id: ExecutorId) -> usize {
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
    pub(crate) fn declare_kind(
        &mut self,
        decl: DeclaredKind,
    ) -> Result<(usize, bool), DeclareError> {
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
            crate::allocator::Cluster {
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
    pub(crate) fn default_kind(&self) -> &ExecutorKind {
        &self.kinds[0].shape
    }

    /// The allocator that tracks executor `id`.
    pub(super) fn owner(&self, id: ExecutorId) -> &Allocator {
        &self.kinds[self.kind_of(id)].allocator
    }

    /// The kind whose allocator knows `container` (an executor's, or being given back).
    pub(super) fn kind_of_container(&self, container: &str) -> Option<usize> {
        self.kinds
            .iter()
            .position(|k| k.allocator.is_ours(container))
    }

    /// Which kind's executor `container` holds, and the executor.
    pub(super) fn executor_of(&self, container: &str) -> Option<ExecutorId> {
        self.kinds
            .iter()
            .find_map(|k| k.allocator.executor_of(container))
    }

    pub(super) fn is_releasing(&self, container: &str) -> bool {
        self.kinds
            .iter()
            .any(|k| k.allocator.is_releasing(container))
    }
}

impl KindPool {
    /// Kind `k` of `shape`, its requests at priority `EXECUTOR_PRIORITY + k` with the
    /// kind's size, label and resources.
    pub(super) fn new(
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
