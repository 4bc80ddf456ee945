//! The pool's two records of an executor's container and launch phase (the allocator's,
//! for its decisions, and the registry's, for the API and the live checks) must agree:
//! random histories of grants, launches, completions, kills and silence, checked after
//! every step.

use std::collections::HashMap;

use proptest::prelude::*;
use yarn_am::allocator::tracker::Phase;
use yarn_am::allocator::Demand;
use yarn_client::amrm::{AllocatedContainer, Allocation, CompletedContainer as Completed};

use super::*;
use crate::am::fixtures;
use crate::am::launcher::LaunchReport;
use crate::api::model::ExecutorState;

const HOSTS: [&str; 2] = ["nm1", "nm2"];
/// Silence limit of the random histories; every step advances the clock by 1 s.
const SILENCE_MS: u64 = 5_000;

fn container_id(n: u64) -> String {
    format!("container_1700000000000_0001_01_{n:06}")
}

fn container(n: u64, host: &str) -> AllocatedContainer {
    AllocatedContainer {
        id: container_id(n),
        host: host.into(),
        node: format!("{host}:45454"),
        memory_mb: 256,
        vcores: 1,
        token: None,
    }
}

#[derive(Debug, Clone)]
enum Step {
    Demand(u32),
    Heartbeat,
    /// `n` new containers, the `i`th on `HOSTS[i % 2]`, and one granted again if `again`.
    Grant(usize, bool),
    Started(usize),
    LaunchFailed(usize),
    Complete(usize, i32),
    Kill(usize),
    Heard(usize),
    Silence,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => (0u32..6).prop_map(Step::Demand),
        2 => Just(Step::Heartbeat),
        3 => (0usize..4, any::<bool>()).prop_map(|(n, a)| Step::Grant(n, a)),
        3 => any::<usize>().prop_map(Step::Started),
        1 => any::<usize>().prop_map(Step::LaunchFailed),
        2 => (any::<usize>(), prop_oneof![Just(0), Just(1), Just(-105), Just(143)])
            .prop_map(|(i, s)| Step::Complete(i, s)),
        1 => any::<usize>().prop_map(Step::Kill),
        2 => any::<usize>().prop_map(Step::Heard),
        1 => Just(Step::Silence),
    ]
}

/// Every executor the allocator counts is live in the registry with the same container,
/// host and phase; every live executor of the registry the allocator does not count is one
/// whose container the AM gave back and YARN has not reported completed yet; and the
/// published counts are the allocator's over the same executors.
fn check(pool: &mut Pool) -> Result<(), TestCaseError> {
    let mut tracked = HashMap::new();
    for (c, e, host, phase) in pool.allocator.tracked() {
        prop_assert_eq!(pool.registry.executor_of(c), Some(e), "container {}", c);
        let v = pool.registry.view(e);
        prop_assert!(v.is_some(), "executor {} not in the registry", e);
        let v = v.unwrap();
        prop_assert_eq!(v.container_id.as_str(), &**c);
        prop_assert_eq!(&v.host, &**host);
        let state = match phase {
            Phase::Starting => ExecutorState::Starting,
            Phase::Running => ExecutorState::Running,
        };
        prop_assert_eq!(v.state, state, "executor {}", e);
        tracked.insert(e, state);
    }
    for id in pool.registry.live_ids() {
        if !tracked.contains_key(&id) {
            let c = &pool.registry.view(id).unwrap().container_id;
            prop_assert!(
                pool.allocator.is_releasing(c),
                "executor {} live in the registry, unknown to the allocator",
                id
            );
        }
    }
    let view = pool.view();
    let count = |s| tracked.values().filter(|&&t| t == s).count() as u32;
    prop_assert_eq!(view.starting, count(ExecutorState::Starting));
    prop_assert_eq!(view.running, count(ExecutorState::Running));
    Ok(())
}

proptest! {
    #[test]
    fn the_allocator_and_the_registry_agree_on_every_executor(
        adopted in 0u64..3,
        steps in proptest::collection::vec(step(), 0..120),
    ) {
        let nodes: Vec<_> = HOSTS.iter().map(|h| fixtures::node(h, "/rack1", 4096, 4)).collect();
        let mut pool = fixtures::pool(&nodes, 8);
        // Containers of an earlier attempt, adopted under their journaled ids.
        let old: Vec<_> = (0..adopted).map(|k| container(9_000 + k, HOSTS[k as usize % 2])).collect();
        let ids = old
            .iter()
            .enumerate()
            .map(|(k, c)| (c.id.clone(), ExecutorId::new(100 + k as u64)))
            .collect();
        pool.adopt(0, &old, &ids);
        check(&mut pool)?;
        // Every container seen, as (number, host).
        let mut all: Vec<(u64, &'static str)> =
            (0..adopted).map(|k| (9_000 + k, HOSTS[k as usize % 2])).collect();
        let mut next = 1u64;
        for (k, s) in steps.into_iter().enumerate() {
            let now = 1_000 * (k as u64 + 1);
            let seen = |all: &[(u64, &'static str)], i: usize| (!all.is_empty()).then(|| all[i % all.len()]);
            let pick = |all: &[(u64, &'static str)], i: usize| seen(all, i).map(|(n, _)| container_id(n));
            match s {
                Step::Demand(n) => pool.set_demand(now, Demand { target_executors: n, ..Default::default() }),
                Step::Heartbeat => {
                    pool.heartbeat(now);
                }
                Step::Grant(n, again) => {
                    let mut allocated: Vec<_> = (0..n)
                        .map(|i| {
                            next += 1;
                            all.push((next, HOSTS[i % 2]));
                            container(next, HOSTS[i % 2])
                        })
                        .collect();
                    if again {
                        if let Some((n, host)) = seen(&all, n) {
                            allocated.push(container(n, host));
                        }
                    }
                    pool.allocated(now, Allocation { response_id: 1, allocated, ..Default::default() });
                    pool.take_launches();
                }
                Step::Started(i) => {
                    if let Some(container) = pick(&all, i) {
                        pool.on_launch(now, LaunchReport::Started { container });
                    }
                }
                Step::LaunchFailed(i) => {
                    if let Some(container) = pick(&all, i) {
                        pool.on_launch(now, LaunchReport::Failed { container, error: "refused".into() });
                    }
                }
                Step::Complete(i, exit_status) => {
                    if let Some(id) = pick(&all, i) {
                        let completed = vec![Completed { id, exit_status, diagnostics: "diagnostics".into() }];
                        pool.allocated(now, Allocation { response_id: 1, completed, ..Default::default() });
                    }
                }
                Step::Kill(i) => {
                    if let Some(id) = pick(&all, i).and_then(|c| pool.registry.executor_of(&c)) {
                        pool.kill(now, vec![id]);
                    }
                }
                Step::Heard(i) => {
                    if let Some(id) = pick(&all, i).and_then(|c| pool.registry.executor_of(&c)) {
                        pool.registry.heard(id, now);
                    }
                }
                Step::Silence => {
                    pool.declare_silent_lost(now, SILENCE_MS);
                }
            }
            pool.take_gone();
            check(&mut pool)?;
        }
    }
}
