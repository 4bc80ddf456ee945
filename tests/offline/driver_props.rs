//! Properties of the scheduler and the allocation manager under random operation sequences,
//! checked against a model kept by the test from the actions alone.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use yarn_am_core::driver::allocation::demand_for;
use yarn_am_core::driver::job::LocalityWait;
use yarn_am_core::driver::scheduler::TaskOutcome;
use yarn_am_core::driver::{AllocationManager, Demand, ExecutorId, Job, Scheduler, TaskSpec};

#[derive(Debug, Clone)]
enum Op {
    AddExecutor {
        host: u8,
        cores: u32,
    },
    RemoveExecutor(usize),
    Kill(usize),
    /// Finish the n-th running attempt (mod count) with this exit code.
    Finish {
        pick: usize,
        code: i32,
    },
    Offer {
        advance_ms: u64,
    },
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0u8..4, 1u32..=4).prop_map(|(host, cores)| Op::AddExecutor { host, cores }),
        1 => any::<usize>().prop_map(Op::RemoveExecutor),
        1 => any::<usize>().prop_map(Op::Kill),
        4 => (any::<usize>(), prop_oneof![3 => Just(0), 1 => Just(1)])
            .prop_map(|(pick, code)| Op::Finish { pick, code }),
        4 => (0u64..4000).prop_map(|advance_ms| Op::Offer { advance_ms }),
    ]
}

fn arb_tasks() -> impl Strategy<Value = Vec<TaskSpec>> {
    prop::collection::vec((0u8..32, 1u32..=4), 1..25).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (mask, cpus))| TaskSpec {
                id: format!("t{i}"),
                command: "true".into(),
                preferred_hosts: (0..4)
                    .filter(|b| mask & (1 << b) != 0)
                    .map(|b| format!("h{b}"))
                    .collect(),
                preferred_racks: if mask & 16 != 0 {
                    vec!["/r1".into()]
                } else {
                    vec![]
                },
                cpus,
                timeout_ms: None,
                kind: None,
            })
            .collect()
    })
}

fn racks() -> HashMap<String, String> {
    (0..4)
        .map(|i| (format!("h{i}"), format!("/r{}", i % 2)))
        .collect()
}

#[derive(Debug)]
struct ModelExec {
    cores: u32,
    used: u32,
    killing: bool,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No executor is given more cpus than it has, a task never runs twice at once, executors
    /// being killed get nothing, only task failures count against a task, and the job fails
    /// exactly when some task reached the limit.
    #[test]
    fn scheduler_invariants(tasks in arb_tasks(), ops in prop::collection::vec(arb_op(), 1..120)) {
        let max_failures = 3;
        let cpus: HashMap<String, u32> = tasks.iter().map(|t| (t.id.clone(), t.cpus)).collect();
        let n = tasks.len();
        let mut s = Scheduler::new(tasks, LocalityWait { node: 1000, rack: 1000 }, max_failures, racks());
        let mut now = 0u64;
        let mut next = 0;
        let mut execs: BTreeMap<ExecutorId, ModelExec> = BTreeMap::new();
        // task -> (attempt, executor)
        let mut running: BTreeMap<String, (u32, ExecutorId)> = BTreeMap::new();
        let mut failures: HashMap<String, u32> = HashMap::new();
        let mut attempts: HashMap<String, u32> = HashMap::new();
        let mut succeeded = 0;
        for op in ops {
            match op {
                Op::AddExecutor { host, cores } => {
                    next += 1;
                    let id = ExecutorId::new(next);
                    let host = format!("h{host}");
                    let rack = racks()[&host].clone();
                    s.add_executor(id, host, rack, cores);
                    execs.insert(id, ModelExec { cores, used: 0, killing: false });
                }
                Op::RemoveExecutor(i) | Op::Kill(i) if execs.is_empty() => { let _ = i; }
                Op::RemoveExecutor(i) => {
                    let id = *execs.keys().nth(i % execs.len()).unwrap();
                    execs.remove(&id);
                    let mut requeued = s.remove_executor(id);
                    requeued.sort();
                    let mut lost: Vec<String> = running
                        .iter()
                        .filter(|(_, (_, e))| *e == id)
                        .map(|(t, _)| t.clone())
                        .collect();
                    lost.sort();
                    prop_assert_eq!(&requeued, &lost);
                    running.retain(|_, (_, e)| *e != id);
                }
                Op::Kill(i) => {
                    let id = *execs.keys().nth(i % execs.len()).unwrap();
                    s.mark_killing(id);
                    execs.get_mut(&id).unwrap().killing = true;
                }
                Op::Finish { .. } if running.is_empty() => {}
                Op::Finish { pick, code } => {
                    let (task, (attempt, exec)) = running.iter().nth(pick % running.len()).unwrap();
                    let (task, attempt, exec) = (task.clone(), *attempt, *exec);
                    let f = s.task_finished(&task, attempt, exec, code).expect("a running attempt");
                    running.remove(&task);
                    execs.get_mut(&exec).unwrap().used -= cpus[&task];
                    prop_assert_eq!(f.attempts, attempts[&task]);
                    if code == 0 {
                        succeeded += 1;
                        prop_assert_eq!(f.outcome, TaskOutcome::Succeeded);
                    } else {
                        let c = failures.entry(task.clone()).or_default();
                        *c += 1;
                        let want = if *c >= max_failures { TaskOutcome::JobFailed } else { TaskOutcome::WillRetry };
                        prop_assert_eq!(f.outcome, want);
                    }
                    // Reporting the same attempt again is ignored.
                    prop_assert!(s.task_finished(&task, attempt, exec, code).is_none());
                }
                Op::Offer { advance_ms } => {
                    now += advance_ms;
                    for l in s.offer(now) {
                        let e = execs.get_mut(&l.executor_id).expect("a live executor");
                        prop_assert!(!e.killing, "launch on an executor being killed");
                        e.used += cpus[&l.task_id];
                        prop_assert!(e.used <= e.cores, "{} overcommitted", l.executor_id);
                        let a = attempts.entry(l.task_id.clone()).or_default();
                        prop_assert_eq!(l.attempt, *a, "attempts count every launch");
                        *a += 1;
                        let prev = running.insert(l.task_id.clone(), (l.attempt, l.executor_id));
                        prop_assert!(prev.is_none(), "{} launched twice", l.task_id);
                    }
                }
            }
            for (task, &c) in &failures {
                prop_assert_eq!(s.failures(task), Some(c));
            }
            let job_failed = failures.values().any(|&c| c >= max_failures);
            prop_assert_eq!(s.failure().is_some(), job_failed);
            prop_assert_eq!(s.running_count(), running.len());
            // The demand's incremental counts agree with a recount of the pending tasks.
            prop_assert_eq!(
                Demand::from_counts(0, s.pending_with_hosts(), s.pending_per_host()),
                demand_for(0, s.pending_tasks())
            );
            if !job_failed {
                prop_assert_eq!(s.pending_count() + running.len() + succeeded, n);
            }
        }
    }

    /// The target stays in [min, max]; kills only take idle executors and never leave fewer
    /// than max(min, target).
    #[test]
    fn allocation_invariants(
        min in 0u32..4,
        span in 0u32..8,
        cores in 1u32..4,
        idle in 1u64..5000,
        rounds in prop::collection::vec((0usize..40, 0usize..20, 0u64..2000, prop::collection::vec(any::<bool>(), 0..12)), 1..60),
    ) {
        let max = (min + span).max(1);
        let text = serde_json::json!({
            "name": "p",
            "executor": {"cores": cores, "memory_mb": 1, "min_executors": min,
                         "max_executors": max, "idle_timeout_ms": idle},
            "tasks": [{"id": "a", "command": "x"}],
        });
        let job = Job::from_json(&text.to_string()).unwrap();
        let mut a = AllocationManager::new(&job);
        let mut now = 0;
        for (pending, running, dt, busy) in rounds {
            now += dt;
            let execs: Vec<(ExecutorId, bool)> =
                busy.iter().enumerate().map(|(i, &b)| (ExecutorId::new(i as u64), b)).collect();
            let killed = a.update(now, pending, running, &execs);
            prop_assert!((min..=max).contains(&a.target()), "target {} outside [{min}, {max}]", a.target());
            for k in &killed {
                let busy = execs.iter().find(|(id, _)| id == k).map(|(_, b)| *b);
                prop_assert_eq!(busy, Some(false), "killed {} which is busy or unknown", k);
            }
            if !killed.is_empty() {
                let left = execs.len() - killed.len();
                prop_assert!(left >= min.max(a.target()) as usize);
            }
        }
    }
}
