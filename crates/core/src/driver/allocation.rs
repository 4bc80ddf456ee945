//! How many executors to want, and which to let go: Spark's `ExecutorAllocationManager` rules
//! as a pure function of (time, load, executors).
//!
//! # Need
//! `max_needed = ceil((pending + running) * ratio / tasks_per_executor)`, where
//! `tasks_per_executor = executor cores / largest task cpus` (at least 1).
//!
//! # Target, once per round (`update`)
//! - Backlog clock: when tasks are pending and no clock runs, the first raise is due at
//!   `now + backlog_timeout` (saturating). With nothing pending, the clock stops and the step goes back to 1.
//! - If `max_needed < target`: drop the target to `max(max_needed, min)` at once and reset
//!   the step to 1 (this never kills anything by itself; idle release does that).
//! - Else, if a raise is due: raise (below) and schedule the next one at
//!   `now + sustained_backlog_timeout` (saturating).
//! - Raise: if the target is already at `max`, reset the step to 1. Otherwise
//!   `target = clamp(min(max(target, live executors) + step, max_needed), min, max)`. If the
//!   target grew by exactly `step`, double the step (1, 2, 4, ... executors per round while
//!   the backlog lasts); if it grew by less (capped by the need or `max`) or not at all, reset
//!   the step to 1.
//!
//! # Idle release
//! An executor running nothing is idle from the first round that sees it so (the round is
//! told only of executors whose idleness may have changed, [`AllocationManager::update_changed`];
//! the idle ones are kept ordered by when they became idle, so expiry reads the oldest
//! first and no round walks the pool). Idle for
//! `idle_timeout` or longer, it is killed, longest-idle first, as long as the live executors
//! left stay at or above `max(min, target)`: never below the minimum, and never an executor
//! the current need would ask for again.

use std::collections::{BTreeSet, HashMap};

use super::job::{Job, TaskSpec};
use super::scheduler::ExecutorId;

/// A driver's whole demand: one type for the embedded driver's output, the body of the
/// AM's `POST /v1/demand` and the allocator's input (see [`crate::demand`]).
pub use crate::demand::Demand;

/// The demand for `target` executors and these pending tasks.
pub fn demand_for<'a>(target: u32, pending: impl IntoIterator<Item = &'a TaskSpec>) -> Demand {
    let mut d = Demand {
        target_executors: target,
        ..Demand::default()
    };
    for t in pending {
        if t.preferred_hosts.is_empty() {
            continue;
        }
        d.locality_aware_tasks += 1;
        for h in &t.preferred_hosts {
            *d.host_to_local_task_count
                .entry(h.as_str().into())
                .or_default() += 1;
        }
    }
    d
}

/// The allocation manager's state.
#[derive(Debug, Clone)]
pub struct AllocationManager {
    min: u32,
    max: u32,
    ratio: f64,
    tasks_per_executor: u32,
    backlog_timeout: u64,
    sustained_timeout: u64,
    idle_timeout: u64,
    target: u32,
    step: u32,
    /// When the next raise is due, while a backlog lasts.
    raise_at: Option<u64>,
    /// Idle executors (usable, running nothing) and since when, and the same ordered by
    /// that time (then id): the expiry order.
    idle_since: HashMap<ExecutorId, u64>,
    idle_order: BTreeSet<(u64, ExecutorId)>,
}

impl AllocationManager {
    pub fn new(job: &Job) -> AllocationManager {
        AllocationManager {
            min: job.executor.min_executors,
            max: job.executor.max_executors,
            ratio: job.allocation.executor_allocation_ratio,
            tasks_per_executor: job.tasks_per_executor(),
            backlog_timeout: job.allocation.backlog_timeout_ms,
            sustained_timeout: job.allocation.sustained_backlog_timeout_ms,
            idle_timeout: job.executor.idle_timeout_ms,
            target: job.initial_executors(),
            step: 1,
            raise_at: None,
            idle_since: HashMap::new(),
            idle_order: BTreeSet::new(),
        }
    }

    /// Executors the current tasks would keep busy, before clamping to `[min, max]`.
    pub fn max_needed(&self, pending: usize, running: usize) -> u32 {
        let tasks = (pending + running) as f64 * self.ratio;
        let need = (tasks / self.tasks_per_executor as f64).ceil();
        need.min(u32::MAX as f64) as u32
    }

    pub fn target(&self) -> u32 {
        self.target
    }

    /// Executors added per raise right now.
    pub fn step(&self) -> u32 {
        self.step
    }

    /// One round from the whole list: `executors` are the live executors not already being
    /// killed, each with whether it runs a task. Returns the executors to kill. Walks them
    /// all; the driver's rounds use [`Self::update_changed`].
    pub fn update(
        &mut self,
        now: u64,
        pending: usize,
        running: usize,
        executors: &[(ExecutorId, bool)],
    ) -> Vec<ExecutorId> {
        let listed: BTreeSet<&ExecutorId> = executors.iter().map(|(id, _)| id).collect();
        let mut changed: Vec<(ExecutorId, bool)> = self
            .idle_since
            .keys()
            .filter(|id| !listed.contains(id))
            .map(|id| (*id, false))
            .collect();
        changed.extend(executors.iter().map(|(id, busy)| (*id, !busy)));
        self.update_changed(now, pending, running, executors.len(), changed)
    }

    /// One round. `live`: the executors not already being killed; `changed`: the executors
    /// whose idleness may have changed since the last round, each with whether it is idle
    /// now (usable and running nothing; `false` for one gone or being killed). Every other
    /// executor is as the last round saw it. Returns the executors to kill.
    pub fn update_changed(
        &mut self,
        now: u64,
        pending: usize,
        running: usize,
        live: usize,
        changed: impl IntoIterator<Item = (ExecutorId, bool)>,
    ) -> Vec<ExecutorId> {
        for (id, idle) in changed {
            self.set_idle(now, id, idle);
        }
        if pending > 0 {
            self.raise_at
                .get_or_insert(now.saturating_add(self.backlog_timeout));
        } else {
            self.raise_at = None;
            self.step = 1;
        }
        let need = self.max_needed(pending, running);
        if need < self.target {
            self.target = need.max(self.min);
            self.step = 1;
        } else if self.raise_at.is_some_and(|at| now >= at) {
            self.raise(need, live as u32);
            self.raise_at = Some(now.saturating_add(self.sustained_timeout));
        }
        self.release_idle(now, live)
    }

    /// An idle executor keeps its first idle time; a busy (or gone) one loses it.
    fn set_idle(&mut self, now: u64, id: ExecutorId, idle: bool) {
        match (idle, self.idle_since.get(&id)) {
            (true, None) => {
                self.idle_order.insert((now, id));
                self.idle_since.insert(id, now);
            }
            (false, Some(&since)) => {
                self.idle_order.remove(&(since, id));
                self.idle_since.remove(&id);
            }
            _ => {}
        }
    }

    fn raise(&mut self, need: u32, live: u32) {
        if self.target >= self.max {
            self.step = 1;
            return;
        }
        let old = self.target;
        let wanted = self.target.max(live).saturating_add(self.step).min(need);
        self.target = wanted.clamp(self.min, self.max);
        let delta = self.target.saturating_sub(old);
        self.step = if delta > 0 && delta == self.step {
            self.step.saturating_mul(2)
        } else {
            1
        };
    }

    /// Longest-idle first, while the live executors stay above the floor.
    fn release_idle(&mut self, now: u64, mut live: usize) -> Vec<ExecutorId> {
        let floor = self.min.max(self.target) as usize;
        let mut kill = Vec::new();
        while live > floor {
            let Some((since, _)) = self.idle_order.first() else {
                break;
            };
            if now.saturating_sub(*since) < self.idle_timeout {
                break;
            }
            let Some((_, id)) = self.idle_order.pop_first() else {
                break;
            };
            self.idle_since.remove(&id);
            live -= 1;
            kill.push(id);
        }
        kill
    }

    /// When the next round could change something by time alone (a raise, an idle expiry).
    pub fn next_deadline_ms(&self) -> Option<u64> {
        let idle = self
            .idle_order
            .first()
            .map(|(s, _)| s.saturating_add(self.idle_timeout));
        match (self.raise_at, idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn job(min: u32, max: u32, cores: u32, ratio: f64) -> Job {
        let text = format!(
            r#"{{"name":"j","executor":{{"cores":{cores},"memory_mb":1,"min_executors":{min},
                "max_executors":{max},"idle_timeout_ms":5000}},
               "allocation":{{"executor_allocation_ratio":{ratio}}},
               "tasks":[{{"id":"a","command":"x"}}]}}"#
        );
        Job::from_json(&text).unwrap()
    }

    fn execs(busy: &[bool]) -> Vec<(ExecutorId, bool)> {
        busy.iter()
            .enumerate()
            .map(|(i, &b)| (ExecutorId::new(i as u64), b))
            .collect()
    }

    #[test]
    fn need_formula() {
        let a = AllocationManager::new(&job(0, 100, 4, 1.0));
        assert_eq!(a.max_needed(0, 0), 0);
        assert_eq!(a.max_needed(1, 0), 1);
        assert_eq!(a.max_needed(4, 0), 1);
        assert_eq!(a.max_needed(5, 3), 2);
        assert_eq!(a.max_needed(9, 0), 3);
        let half = AllocationManager::new(&job(0, 100, 2, 0.5));
        assert_eq!(half.max_needed(10, 0), 3); // ceil(10 * 0.5 / 2)
    }

    #[test]
    fn ramp_up_waits_for_the_backlog_then_doubles() {
        let mut a = AllocationManager::new(&job(0, 100, 1, 1.0));
        // 20 pending: need 20. Nothing before the backlog timeout.
        assert!(a.update(0, 20, 0, &[]).is_empty());
        assert_eq!(a.target(), 0);
        a.update(999, 20, 0, &[]);
        assert_eq!(a.target(), 0);
        let mut seen = vec![];
        for t in [1000, 1500, 2000, 3000, 4000, 5000, 6000] {
            a.update(t, 20, 0, &[]);
            seen.push(a.target());
        }
        // +1 at 1000, nothing at 1500 (sustained timeout 1000), +2, +4, +8, then capped at 20.
        assert_eq!(seen, vec![1, 1, 3, 7, 15, 20, 20]);
    }

    #[test]
    fn ramp_up_starts_from_the_live_executors() {
        let mut a = AllocationManager::new(&job(0, 100, 1, 1.0));
        a.update(0, 10, 0, &[]);
        a.update(1000, 10, 0, &execs(&[true, true, true]));
        assert_eq!(a.target(), 4);
        // Grew by more than the step: the step resets.
        assert_eq!(a.step(), 1);
    }

    #[test]
    fn target_is_clamped_to_min_and_max() {
        let mut a = AllocationManager::new(&job(2, 5, 1, 1.0));
        assert_eq!(a.target(), 2);
        for t in 0..20 {
            a.update(t * 1000, 50, 0, &[]);
            assert!((2..=5).contains(&a.target()));
        }
        assert_eq!(a.target(), 5);
        // The backlog is gone: need 0, but never below min.
        a.update(30_000, 0, 0, &[]);
        assert_eq!(a.target(), 2);
    }

    #[test]
    fn the_target_drops_with_the_need_at_once() {
        let mut a = AllocationManager::new(&job(0, 100, 2, 1.0));
        for t in 0..10 {
            a.update(t * 1000, 40, 0, &[]);
        }
        assert_eq!(a.target(), 20);
        a.update(10_000, 3, 2, &[]);
        assert_eq!(a.target(), 3);
        assert_eq!(a.step(), 1);
    }

    #[test]
    fn a_cleared_backlog_restarts_the_clock() {
        let mut a = AllocationManager::new(&job(0, 100, 1, 1.0));
        a.update(0, 5, 0, &[]);
        a.update(900, 0, 5, &[]);
        a.update(1000, 5, 0, &[]);
        assert_eq!(a.target(), 0);
        a.update(2000, 5, 0, &[]);
        assert_eq!(a.target(), 1);
    }

    #[test]
    fn idle_executors_go_after_the_timeout_but_not_below_min() {
        let mut a = AllocationManager::new(&job(1, 10, 1, 1.0));
        let all_idle = execs(&[false, false, false]);
        assert!(a.update(0, 0, 0, &all_idle).is_empty());
        assert!(a.update(4999, 0, 0, &all_idle).is_empty());
        assert_eq!(a.next_deadline_ms(), Some(5000));
        let killed = a.update(5000, 0, 0, &all_idle);
        assert_eq!(killed, vec![ExecutorId::new(0), ExecutorId::new(1)]);
        // The one left is the minimum.
        assert!(a.update(99_000, 0, 0, &execs(&[false])).is_empty());
    }

    /// Validation caps the timeouts at a week, but the arithmetic must not rely on it: a clock
    /// near `u64::MAX` with `u64::MAX` timeouts saturates (debug builds would panic on
    /// overflow) and the raise is simply never due.
    #[test]
    fn timeouts_near_u64_max_saturate() {
        let mut j = job(0, 10, 1, 1.0);
        j.allocation.backlog_timeout_ms = u64::MAX;
        j.allocation.sustained_backlog_timeout_ms = u64::MAX;
        j.executor.idle_timeout_ms = u64::MAX;
        let mut a = AllocationManager::new(&j);
        for now in [u64::MAX - 1, u64::MAX - 1, u64::MAX] {
            assert!(a.update(now, 5, 0, &execs(&[false])).is_empty());
        }
        // Due at u64::MAX exactly (saturated): one raise, from the 1 live executor by step 1;
        // the idle executor is never released (its idle time never reaches u64::MAX).
        assert_eq!(a.target(), 2);
        let mut j = job(0, 10, 1, 1.0);
        j.allocation.backlog_timeout_ms = 1000;
        j.allocation.sustained_backlog_timeout_ms = u64::MAX;
        let mut a = AllocationManager::new(&j);
        a.update(u64::MAX - 1000, 5, 0, &[]);
        a.update(u64::MAX, 5, 0, &[]);
        assert_eq!(a.target(), 1);
        a.update(u64::MAX, 5, 0, &[]);
        assert_eq!(a.target(), 3, "a deadline of u64::MAX is due at u64::MAX");
    }

    #[test]
    fn busy_resets_the_idle_clock() {
        let mut a = AllocationManager::new(&job(0, 10, 1, 1.0));
        a.update(0, 0, 0, &execs(&[false]));
        a.update(3000, 0, 1, &execs(&[true]));
        assert!(a.update(6000, 0, 0, &execs(&[false])).is_empty());
        assert_eq!(
            a.update(11_000, 0, 0, &execs(&[false])),
            vec![ExecutorId::new(0)]
        );
    }

    #[test]
    fn idle_executors_the_need_still_wants_stay() {
        // 2 running tasks need 2 executors; 3 live, 2 idle: only one may go.
        let mut a = AllocationManager::new(&job(0, 10, 1, 1.0));
        a.update(0, 2, 0, &[]);
        a.update(1000, 2, 0, &[]);
        a.update(2000, 2, 0, &[]);
        assert_eq!(a.target(), 2);
        let e = execs(&[true, false, false]);
        a.update(3000, 0, 2, &e);
        assert_eq!(a.update(8000, 0, 2, &e), vec![ExecutorId::new(1)]);
    }

    /// The idle release as it was before it was kept incrementally: the idle executors
    /// rebuilt from the whole list on every round, the expired ones sorted. The reference
    /// the kept order is checked against.
    struct FromScratch {
        idle_since: BTreeMap<ExecutorId, u64>,
    }

    impl FromScratch {
        fn release_idle(
            &mut self,
            now: u64,
            floor: usize,
            idle_timeout: u64,
            executors: &[(ExecutorId, bool)],
        ) -> Vec<ExecutorId> {
            let mut seen = BTreeMap::new();
            for (id, busy) in executors {
                if !busy {
                    let since = self.idle_since.get(id).copied().unwrap_or(now);
                    seen.insert(*id, since);
                }
            }
            self.idle_since = seen;
            let mut expired: Vec<(u64, &ExecutorId)> = self
                .idle_since
                .iter()
                .filter(|(_, &since)| now.saturating_sub(since) >= idle_timeout)
                .map(|(id, &since)| (since, id))
                .collect();
            expired.sort();
            let mut live = executors.len();
            let mut kill = Vec::new();
            for (_, id) in expired {
                if live <= floor {
                    break;
                }
                live -= 1;
                kill.push(*id);
            }
            for id in &kill {
                self.idle_since.remove(id);
            }
            kill
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Rounds told only what changed kill the same executors, keep the same target and
        /// the same deadline as rounds rebuilt from the whole list.
        #[test]
        fn changes_only_rounds_equal_whole_list_rounds(
            steps in proptest::collection::vec(
                (0u64..3000, 0usize..6, 0usize..4, proptest::collection::vec((0u8..12, 0u8..3), 0..5)),
                1..60,
            ),
        ) {
            let j = job(1, 8, 1, 1.0);
            let mut new = AllocationManager::new(&j);
            let mut old = AllocationManager::new(&j);
            let mut reference = FromScratch { idle_since: BTreeMap::new() };
            // Live executors not being killed: busy or not.
            let mut live: BTreeMap<ExecutorId, bool> = BTreeMap::new();
            let mut now = 0;
            for (after, pending, running, changes) in steps {
                now += after;
                // As the scheduler reports them: each executor touched once, as it is now.
                let mut touched = BTreeSet::new();
                for (id, what) in changes {
                    let id = ExecutorId::new(u64::from(id));
                    match what {
                        0 => { live.remove(&id); }
                        1 => { live.insert(id, true); }
                        _ => { live.insert(id, false); }
                    }
                    touched.insert(id);
                }
                let changed: Vec<(ExecutorId, bool)> = touched
                    .into_iter()
                    .map(|id| { let idle = live.get(&id) == Some(&false); (id, idle) })
                    .collect();
                let list: Vec<(ExecutorId, bool)> =
                    live.iter().map(|(id, busy)| (*id, *busy)).collect();
                let kills = new.update_changed(now, pending, running, list.len(), changed);
                // The same target moves (the whole-list path), then the old idle release.
                let whole_list_kills = old.update(now, pending, running, &list);
                let floor = old.min.max(old.target) as usize;
                let expected = reference.release_idle(now, floor, old.idle_timeout, &list);
                proptest::prop_assert_eq!(&kills, &expected);
                proptest::prop_assert_eq!(&whole_list_kills, &expected);
                proptest::prop_assert_eq!(new.target(), old.target());
                let idle_deadline = reference
                    .idle_since
                    .values()
                    .map(|s| s.saturating_add(old.idle_timeout))
                    .min();
                let deadline = match (old.raise_at, idle_deadline) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                proptest::prop_assert_eq!(new.next_deadline_ms(), deadline);
                // The driver marks what it kills: they leave the list.
                for id in &kills {
                    live.remove(id);
                }
            }
        }
    }

    #[test]
    fn demand_counts_pending_preferences() {
        let t = |id: &str, hosts: &[&str]| TaskSpec {
            id: id.into(),
            command: "x".into(),
            preferred_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            preferred_racks: vec![],
            cpus: 1,
            timeout_ms: None,
            kind: None,
        };
        let tasks = [t("a", &["nm1", "nm2"]), t("b", &["nm1"]), t("c", &[])];
        let d = demand_for(4, &tasks);
        assert_eq!(d.target_executors, 4);
        assert_eq!(d.locality_aware_tasks, 2);
        assert_eq!(
            d.host_to_local_task_count,
            HashMap::from([("nm1".into(), 2), ("nm2".into(), 1)])
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["host_to_local_task_count"]["nm1"], 2);
    }
}
