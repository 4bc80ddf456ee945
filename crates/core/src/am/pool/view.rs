//! What the pool tells about itself: pending asks, failures, and the read endpoints' view.

use super::super::registry::Held;
use super::Pool;
use crate::ids::{ExecutorId, IdStripe};
use yarn_am_wire::driver_api::{KindView, PendingView, StateView};

impl Pool {
    /// The container the tracker has executor `id` in, until YARN reports it completed.
    pub fn container_of(&self, id: ExecutorId) -> Option<String> {
        self.owner(id).container_of(id).map(|(c, _)| c.to_string())
    }

    pub(crate) fn has_pending(&self) -> bool {
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

    /// What is waiting, for [`super::super::waiting::diagnose`]: the executors' size and the hosts
    /// the pending requests name (none when any of them takes any host).
    /// With several kinds, the size is that of the kind with most executors waiting.
    pub(crate) fn waiting_ask(&self) -> super::super::waiting::Ask {
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
        super::super::waiting::Ask {
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
    pub(crate) fn last_failure(&self) -> String {
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
