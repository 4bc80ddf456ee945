//! One owner per executor fact: the tracker owns container <-> executor and the launch phase,
//! the registry where YARN placed an executor and whether it is live. Random histories of
//! grants (and grants again), launches, failed launches, completions, kills, silence and
//! adoption are checked after every step against a model the test keeps by itself from
//! the pool's inputs and its launches: what the registry shows of every executor (live or
//! not, container, host, phase, as the API publishes it, derived through the tracker), what
//! the tracker knows of it, and what it counts towards the target.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::allocator::tracker::Phase;
use crate::allocator::Demand;
use proptest::prelude::*;
use yarn_client::amrm::{AllocatedContainer, Allocation, CompletedContainer as Completed};

use super::*;
use crate::am::events::LaunchReport;
use crate::am::fixtures;
use yarn_am_wire::driver_api::{ExecutorState, ExecutorView};

const HOSTS: [&str; 2] = ["nm1", "nm2"];
/// Silence limit of the random histories; every step advances the clock by 1 s.
const SILENCE_MS: u64 = 5_000;

fn container_id(n: u64) -> String {
    format!("container_1700000000000_0001_01_{n:06}")
}

fn container(n: u64, host: &str) -> AllocatedContainer {
    fixtures::container(&container_id(n), host)
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

/// The test's own record of an executor, kept from the pool's inputs and launches only.
#[derive(Debug, Clone)]
struct Exec {
    container: String,
    host: &'static str,
    phase: Phase,
    /// Not exited for the driver and the API: launched, not completed, not declared lost,
    /// its launch not failed. A killed executor stays live until its container completes.
    live: bool,
    /// The AM gave its container back and YARN has not reported it completed.
    releasing: bool,
    /// YARN reported its container completed (the tracker forgets it).
    completed: bool,
    heard: u64,
}

#[derive(Debug, Default)]
struct Model {
    execs: BTreeMap<ExecutorId, Exec>,
    by_container: HashMap<String, ExecutorId>,
}

impl Model {
    fn of(&mut self, container: &str) -> Option<&mut Exec> {
        let id = self.by_container.get(container)?;
        self.execs.get_mut(id).filter(|x| !x.completed)
    }

    fn launched(
        &mut self,
        id: ExecutorId,
        container: &str,
        host: &'static str,
        phase: Phase,
        now: u64,
    ) {
        self.by_container.insert(container.to_string(), id);
        self.execs.insert(
            id,
            Exec {
                container: container.to_string(),
                host,
                phase,
                live: true,
                releasing: false,
                completed: false,
                heard: now,
            },
        );
    }
}

fn host_of(h: &str) -> &'static str {
    HOSTS
        .iter()
        .find(|&&k| k == h)
        .copied()
        .expect("a test host")
}

/// The pool agrees with the model on every executor: the registry (live, host, and the
/// published view's container, host and state, rendered through the tracker), the
/// tracker (container, phase, being given back, counted), and the published counts; no
/// container the tracker counts is being given back.
fn check(pool: &mut Pool, model: &Model) -> Result<(), TestCaseError> {
    let view = pool.view();
    let published: HashMap<ExecutorId, &ExecutorView> =
        view.executors.iter().map(|v| (v.id, &**v)).collect();
    for (&id, x) in &model.execs {
        prop_assert_eq!(pool.registry.is_live(id), x.live, "executor {} live", id);
        if x.live {
            prop_assert_eq!(pool.registry.live_host(id), Some(x.host));
        }
        let v = published.get(&id);
        prop_assert!(v.is_some(), "executor {} not published", id);
        let v = v.unwrap();
        prop_assert_eq!(&v.container_id, &x.container, "executor {}", id);
        prop_assert_eq!(v.host.as_str(), x.host);
        let state = match (x.live, x.phase) {
            (false, _) => ExecutorState::Exited,
            (true, Phase::Starting) => ExecutorState::Starting,
            (true, Phase::Running) => ExecutorState::Running,
        };
        prop_assert_eq!(v.state, state, "executor {}", id);
        let held = pool.kinds[0]
            .allocator
            .container_of(id)
            .map(|(c, p)| (c.to_string(), p));
        if x.completed {
            prop_assert_eq!(held, None, "executor {} forgotten after completion", id);
            prop_assert_ne!(pool.kinds[0].allocator.executor_of(&x.container), Some(id));
        } else {
            prop_assert_eq!(
                held,
                Some((x.container.clone(), x.phase)),
                "executor {}",
                id
            );
            prop_assert_eq!(pool.kinds[0].allocator.executor_of(&x.container), Some(id));
            prop_assert_eq!(
                pool.kinds[0].allocator.is_releasing(&x.container),
                x.releasing,
                "executor {}",
                id
            );
        }
    }
    prop_assert_eq!(published.len(), model.execs.len());
    let live: BTreeSet<ExecutorId> = pool.registry.live_ids().collect();
    let want: BTreeSet<ExecutorId> = model
        .execs
        .iter()
        .filter(|(_, x)| x.live)
        .map(|(id, _)| *id)
        .collect();
    prop_assert_eq!(live, want);
    let mut counted = BTreeMap::new();
    for (c, e, host, phase) in pool.kinds[0].allocator.tracked() {
        prop_assert!(
            !pool.kinds[0].allocator.is_releasing(c),
            "container {} counted and being given back",
            c
        );
        counted.insert(e, (c.to_string(), host.to_string(), phase));
    }
    let want: BTreeMap<_, _> = model
        .execs
        .iter()
        .filter(|(_, x)| !x.completed && !x.releasing)
        .map(|(&id, x)| (id, (x.container.clone(), x.host.to_string(), x.phase)))
        .collect();
    prop_assert_eq!(&counted, &want);
    let count = |p| want.values().filter(|(_, _, q)| *q == p).count() as u32;
    prop_assert_eq!(view.starting, count(Phase::Starting));
    prop_assert_eq!(view.running, count(Phase::Running));
    Ok(())
}

proptest! {
    #[test]
    fn every_executor_fact_has_one_owner_and_the_pool_agrees_with_a_model(
        adopted in 0u64..3,
        steps in proptest::collection::vec(step(), 0..120),
    ) {
        let nodes: Vec<_> = HOSTS.iter().map(|h| fixtures::node(h, "/rack1", 4096, 4)).collect();
        let mut pool = fixtures::pool(&nodes, 8);
        let mut model = Model::default();
        // Containers of an earlier attempt, adopted under their journaled ids.
        let old: Vec<_> = (0..adopted).map(|k| container(9_000 + k, HOSTS[k as usize % 2])).collect();
        let ids = old
            .iter()
            .enumerate()
            .map(|(k, c)| (c.id.clone(), ExecutorId::new(100 + k as u64)))
            .collect();
        pool.adopt(0, &old, &ids);
        for (k, c) in old.iter().enumerate() {
            model.launched(ExecutorId::new(100 + k as u64), &c.id, host_of(&c.host), Phase::Running, 0);
        }
        check(&mut pool, &model)?;
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
                    for l in pool.take_launches() {
                        // A container that is ours (live or on its way back) gets no other
                        // executor (granted again after it completed, it may).
                        prop_assert!(model.of(&l.container.id).is_none(), "launch on {} again", l.container.id);
                        prop_assert!(!model.execs.contains_key(&l.executor), "executor id {} again", l.executor);
                        model.launched(l.executor, &l.container.id, host_of(&l.container.host), Phase::Starting, now);
                    }
                }
                Step::Started(i) => {
                    if let Some(container) = pick(&all, i) {
                        if let Some(x) = model.of(&container) {
                            x.phase = Phase::Running;
                        }
                        pool.on_launch(now, LaunchReport::Started { container });
                    }
                }
                Step::LaunchFailed(i) => {
                    if let Some(container) = pick(&all, i) {
                        if let Some(x) = model.of(&container) {
                            x.live = false;
                            x.releasing = true;
                        }
                        pool.on_launch(now, LaunchReport::Failed { container, error: "refused".into() });
                    }
                }
                Step::Complete(i, exit_status) => {
                    if let Some(id) = pick(&all, i) {
                        if let Some(x) = model.of(&id) {
                            x.live = false;
                            x.releasing = false;
                            x.completed = true;
                        }
                        let completed = vec![Completed { id, exit_status, diagnostics: "diagnostics".into() }];
                        pool.allocated(now, Allocation { response_id: 1, completed, ..Default::default() });
                    }
                }
                Step::Kill(i) => {
                    let id = pick(&all, i).and_then(|c| model.by_container.get(&c).copied());
                    if let Some(id) = id {
                        let x = model.execs.get_mut(&id).unwrap();
                        let live = x.live;
                        if live {
                            x.releasing = true;
                        }
                        let (killed, unknown) = pool.kill(now, vec![id]);
                        prop_assert_eq!(killed.len(), usize::from(live));
                        prop_assert_eq!(unknown.len(), usize::from(!live));
                    }
                }
                Step::Heard(i) => {
                    let id = pick(&all, i).and_then(|c| model.by_container.get(&c).copied());
                    if let Some(id) = id {
                        let x = model.execs.get_mut(&id).unwrap();
                        if x.live {
                            x.heard = x.heard.max(now);
                        }
                        pool.registry.heard(id, now);
                    }
                }
                Step::Silence => {
                    let mut want = Vec::new();
                    for (&id, x) in model.execs.iter_mut() {
                        if x.live && !x.releasing && x.heard + SILENCE_MS <= now {
                            x.live = false;
                            x.releasing = true;
                            want.push(id);
                        }
                    }
                    let (lost, _) = pool.declare_silent_lost(now, SILENCE_MS);
                    prop_assert_eq!(lost, want);
                }
            }
            pool.take_gone();
            check(&mut pool, &model)?;
        }
    }
}
