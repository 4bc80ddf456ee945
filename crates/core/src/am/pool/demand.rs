//! The pool's demand side: the driver's demand per kind with the AM's own additions
//! (excluded hosts, replacements for draining executors), and executors taken away on
//! purpose (killed, given back, declared lost).

use std::collections::HashSet;

use tracing::{info, warn};

use super::Pool;
use crate::allocator::tracker::Event;
use crate::allocator::Demand;
use crate::ids::{ExecutorId, IdStripe};

impl Pool {
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

    /// The driver's whole demand for kind `k` (an index into the pool's kinds).
    fn set_kind_demand(&mut self, now_ms: u64, k: usize, d: Demand) {
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
    pub(super) fn push_demand(&mut self, now_ms: u64) {
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
    pub(crate) fn ask_initial(&mut self, now_ms: u64, default_initial: u32) -> u32 {
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
    pub(crate) fn give_back_candidates(
        &self,
        work: impl Fn(ExecutorId) -> Option<(usize, u64)>,
    ) -> Vec<super::super::preemption::Candidate> {
        self.registry
            .live_ids()
            .filter_map(|id| {
                let (c, _) = self.owner(id).container_of(id)?;
                if self.is_releasing(c) {
                    return None;
                }
                let (running_tasks, work_ms) = work(id).unwrap_or((0, 0));
                Some(super::super::preemption::Candidate {
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
    pub(crate) fn executor_size(&self) -> (i64, i32) {
        let shape = &self.kinds[0].shape;
        (shape.memory_mb, shape.vcores)
    }

    /// Gives live executors back to YARN for a reason the driver and the page should see
    /// (the RM's preemption request): released like a kill, never counted against the app,
    /// their exit reason the given one. The allocator replaces them if the demand still
    /// wants them (YARN grants them when it has room again).
    pub(crate) fn give_back(&mut self, now_ms: u64, executors: Vec<(ExecutorId, String)>) {
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
    pub(crate) fn declare_silent_lost(
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
}
