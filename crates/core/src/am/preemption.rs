//! Which executors to give back when the RM asks for resources back (YARN's
//! `PreemptionMessage`), sans-IO.
//!
//! Why give back at all: the RM kills what it marked once its wait runs out (the
//! CapacityScheduler's `max_wait_before_kill`), whichever tasks run there. Giving back first
//! lets the AM choose what goes: idle executors cost nothing, then those whose running tasks
//! have run least (the work lost is what has to run again). Either way the tasks go back to
//! pending without counting as failures, as for any executor the AM released.
//!
//! The contracts: a strict one names containers the RM takes whatever the AM does, so they
//! are given back at once. A negotiable one names the containers the RM would take and the
//! amount it wants; the AM gives back as many executors of its own choice. The
//! CapacityScheduler sends only the negotiable contract, once per policy round while its
//! containers stay marked (it clears its marks after every allocate answer), so the same ask
//! comes again: executors already given back in the last [`GIVE_BACK_GRACE_MS`] are counted
//! against it, not given a second time.

use std::collections::{HashMap, HashSet};

use crate::ids::ExecutorId;
use yarn_client::amrm::Preemption;

/// How long an executor given back counts against a repeated ask: its container's end has
/// to reach the RM (the AM's next heartbeat) and the freed room the asking app (the next NM
/// heartbeat), after which the RM's next policy round no longer marks anything for it.
pub const GIVE_BACK_GRACE_MS: u64 = 5_000;

/// A live executor the AM could give back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub executor: ExecutorId,
    pub container: String,
    /// Task attempts running on it.
    pub running_tasks: usize,
    /// Milliseconds those attempts have run so far, summed: the work lost if it goes.
    pub work_ms: u64,
}

/// The executors chosen, and why each (for its exit reason).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GiveBack {
    pub executors: Vec<(ExecutorId, String)>,
}

/// The AM's memory of what it gave back, so that a repeated ask is not answered twice.
#[derive(Debug, Default)]
pub struct Preempting {
    /// Executor -> when it was given back.
    given: HashMap<ExecutorId, u64>,
    /// Messages seen and executors given back, for the state view.
    pub asks: u64,
    pub given_back: u64,
}

impl Preempting {
    /// Answers one message. `candidates`: every live executor with its container;
    /// `executor_memory_mb` / `executor_vcores`: the size of one (the app's containers are
    /// all alike).
    pub fn answer(
        &mut self,
        now_ms: u64,
        ask: &Preemption,
        candidates: &[Candidate],
        executor_memory_mb: i64,
        executor_vcores: i32,
    ) -> GiveBack {
        self.asks += 1;
        self.given
            .retain(|_, at| now_ms.saturating_sub(*at) < GIVE_BACK_GRACE_MS);
        let live: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| !self.given.contains_key(&c.executor))
            .collect();
        let mut out = Vec::new();
        // Strict: taken anyway.
        let strict: HashSet<&str> = ask.strict.iter().map(String::as_str).collect();
        for c in live
            .iter()
            .filter(|c| strict.contains(c.container.as_str()))
        {
            out.push((
                c.executor,
                "given back to the RM: its strict preemption contract named this container"
                    .to_string(),
            ));
        }
        // Negotiable: as many as the RM would take, chosen by what they cost.
        let wanted = negotiable_count(ask, candidates, executor_memory_mb, executor_vcores);
        let recent = self.given.len();
        let mut more = wanted.saturating_sub(recent);
        let mut rest: Vec<&&Candidate> = live
            .iter()
            .filter(|c| !strict.contains(c.container.as_str()))
            .collect();
        rest.sort_by_key(|c| {
            (
                c.running_tasks > 0,
                c.work_ms,
                // The RM's own choice first among equals, then the newest executor.
                !ask.containers.contains(&c.container),
                std::cmp::Reverse(c.executor),
            )
        });
        for c in rest {
            if more == 0 {
                break;
            }
            more -= 1;
            let why = if c.running_tasks == 0 {
                "given back to the RM on its preemption request (idle)".to_string()
            } else {
                format!(
                    "given back to the RM on its preemption request ({} running task(s), \
                     {} ms of work re-queued)",
                    c.running_tasks, c.work_ms
                )
            };
            out.push((c.executor, why));
        }
        for (id, _) in &out {
            self.given.insert(*id, now_ms);
        }
        self.given_back += out.len() as u64;
        GiveBack { executors: out }
    }
}

/// How many executors a negotiable contract asks back: the AM's containers it names (the
/// RM's exact count), else the resource ask in executors. The CapacityScheduler's ask is
/// `minimum allocation x n`, with `n` taken on the dominant resource, so it overstates the
/// other one: the smaller of the two counts is the one that matches.
fn negotiable_count(
    ask: &Preemption,
    candidates: &[Candidate],
    executor_memory_mb: i64,
    executor_vcores: i32,
) -> usize {
    let named = candidates
        .iter()
        .filter(|c| ask.containers.contains(&c.container))
        .count();
    if named > 0 {
        return named;
    }
    let (mut mem, mut vcores) = (0i64, 0i64);
    for r in &ask.resources {
        let n = i64::from(r.count.max(0));
        mem = mem.saturating_add(r.memory_mb.max(0).saturating_mul(n));
        vcores = vcores.saturating_add(i64::from(r.vcores.max(0)).saturating_mul(n));
    }
    let per = |total: i64, one: i64| {
        if one <= 0 {
            None
        } else {
            Some((total + one - 1) / one)
        }
    };
    let n = match (
        per(mem, executor_memory_mb),
        per(vcores, i64::from(executor_vcores)),
    ) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => 0,
    };
    usize::try_from(n)
        .unwrap_or(usize::MAX)
        .min(candidates.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use yarn_client::amrm::PreemptionAsk;

    fn e(n: u64) -> ExecutorId {
        ExecutorId::from(n)
    }

    fn cand(n: u64, running: usize, work_ms: u64) -> Candidate {
        Candidate {
            executor: e(n),
            container: format!("c{n}"),
            running_tasks: running,
            work_ms,
        }
    }

    fn ids(g: &GiveBack) -> Vec<ExecutorId> {
        g.executors.iter().map(|(id, _)| *id).collect()
    }

    /// The CapacityScheduler's shape: the marked containers and `min x n` on the dominant
    /// resource.
    fn negotiable(containers: &[&str], mem: i64, vcores: i32, count: i32) -> Preemption {
        Preemption {
            strict: vec![],
            containers: containers.iter().map(|s| s.to_string()).collect(),
            resources: vec![PreemptionAsk {
                memory_mb: mem,
                vcores,
                count,
            }],
        }
    }

    #[test]
    fn idle_executors_go_first_then_the_least_work() {
        let cs = [
            cand(1, 1, 9_000),
            cand(2, 0, 0),
            cand(3, 1, 500),
            cand(4, 2, 400),
            cand(5, 1, 7_000),
        ];
        // The RM marked 4 and 5 (its own choice: the youngest); two go, ours are 2 and 4.
        let mut p = Preempting::default();
        let g = p.answer(0, &negotiable(&["c4", "c5"], 128, 1, 8), &cs, 512, 1);
        assert_eq!(ids(&g), [e(2), e(4)]);
        assert!(g.executors[0].1.contains("idle"), "{g:?}");
        assert!(g.executors[1].1.contains("400 ms"), "{g:?}");
        assert_eq!((p.asks, p.given_back), (1, 2));
    }

    #[test]
    fn a_repeated_ask_is_not_answered_twice_within_the_grace() {
        let cs: Vec<_> = (1..=6).map(|n| cand(n, 1, n * 100)).collect();
        let ask = negotiable(&["c5", "c6"], 128, 1, 8);
        let mut p = Preempting::default();
        assert_eq!(ids(&p.answer(0, &ask, &cs, 512, 1)), [e(1), e(2)]);
        // The next policy round marks the same two (1 and 2 not yet gone): nothing more.
        let still: Vec<_> = cs.iter().filter(|c| c.executor > e(2)).cloned().collect();
        assert!(p.answer(1_000, &ask, &still, 512, 1).executors.is_empty());
        // After the grace the RM still asks: it needs more.
        assert_eq!(
            ids(&p.answer(GIVE_BACK_GRACE_MS + 1, &ask, &still, 512, 1)),
            [e(3), e(4)]
        );
    }

    #[test]
    fn strict_containers_go_whatever_they_run() {
        let cs = [cand(1, 0, 0), cand(2, 3, 60_000)];
        let ask = Preemption {
            strict: vec!["c2".into(), "not-ours".into()],
            ..Default::default()
        };
        let g = Preempting::default().answer(0, &ask, &cs, 512, 1);
        assert_eq!(ids(&g), [e(2)]);
        assert!(g.executors[0].1.contains("strict"));
    }

    /// Without named containers of ours the resource ask decides, in executors, on the
    /// smaller of the memory and vcore counts (the RM's `min x n` overstates the other).
    #[test]
    fn a_resource_ask_in_executors() {
        let cs: Vec<_> = (1..=10).map(|n| cand(n, 0, 0)).collect();
        // 3 executors of 512 MB, 1 vcore under DRF with a 128 MB / 1 vcore minimum: n = 12.
        let ask = negotiable(&[], 128, 1, 12);
        assert_eq!(
            Preempting::default()
                .answer(0, &ask, &cs, 512, 1)
                .executors
                .len(),
            3
        );
        // 3 executors of 128 MB, 4 vcores: n = 12 on vcores.
        assert_eq!(
            Preempting::default()
                .answer(0, &ask, &cs, 128, 4)
                .executors
                .len(),
            3
        );
        // More than the AM has: all of them, no more.
        let big = negotiable(&[], 4096, 4, 100);
        assert_eq!(
            Preempting::default()
                .answer(0, &big, &cs, 512, 1)
                .executors
                .len(),
            10
        );
        // Hostile numbers: nothing, no panic.
        let bad = negotiable(&[], -5, i32::MIN, i32::MAX);
        assert!(Preempting::default()
            .answer(0, &bad, &cs, 0, 0)
            .executors
            .is_empty());
    }

    #[test]
    fn an_ask_naming_no_executor_of_ours_and_no_amount_gives_nothing() {
        let cs = [cand(1, 0, 0)];
        let ask = negotiable(&["am-container"], 0, 0, 0);
        assert!(Preempting::default()
            .answer(0, &ask, &cs, 512, 1)
            .executors
            .is_empty());
    }
}
