//! Unit tests of the scheduler's rules, each with explicit times.

use super::*;

/// Executor `n`.
fn e(n: u64) -> ExecutorId {
    ExecutorId::new(n)
}

fn task(id: &str, hosts: &[&str]) -> TaskSpec {
    TaskSpec {
        id: id.into(),
        command: format!("run {id}"),
        preferred_hosts: hosts.iter().map(|h| h.to_string()).collect(),
        preferred_racks: vec![],
        cpus: 1,
        timeout_ms: None,
        kind: None,
    }
}

/// nm1, nm2, nm3 on /r1; nm4 on /r2.
fn racks() -> HashMap<String, String> {
    [
        ("nm1", "/r1"),
        ("nm2", "/r1"),
        ("nm3", "/r1"),
        ("nm4", "/r2"),
    ]
    .into_iter()
    .map(|(h, r)| (h.to_string(), r.to_string()))
    .collect()
}

fn sched(tasks: Vec<TaskSpec>) -> Scheduler {
    Scheduler::new(
        tasks,
        LocalityWait {
            node: 3000,
            rack: 3000,
        },
        3,
        racks(),
    )
}

fn add(s: &mut Scheduler, id: ExecutorId, host: &str, cores: u32) {
    let rack = racks()[host].clone();
    s.add_executor(id, host.into(), rack, cores);
}

fn placed(launches: &[TaskLaunch]) -> Vec<(&str, ExecutorId, TaskLocality)> {
    launches
        .iter()
        .map(|l| (l.task_id.as_str(), l.executor_id, l.locality))
        .collect()
}

fn ok(s: &mut Scheduler, l: &TaskLaunch) {
    let f = s.task_finished(&l.task_id, l.attempt, l.executor_id, 0);
    assert_eq!(f.unwrap().outcome, TaskOutcome::Succeeded);
}

#[test]
fn node_local_tasks_go_to_their_hosts() {
    let mut s = sched(vec![task("a", &["nm2"]), task("b", &["nm1"])]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(2), "nm2", 1);
    let l = s.offer(0);
    assert_eq!(
        placed(&l),
        vec![
            ("b", e(1), TaskLocality::NodeLocal),
            ("a", e(2), TaskLocality::NodeLocal)
        ]
    );
    assert_eq!(s.pending_count(), 0);
    assert_eq!(s.running_count(), 2);
}

#[test]
fn node_to_rack_after_the_wait_then_any_when_no_rack_work_remains() {
    // a, b want nm1 (one slot); c wants nm4, on /r2 where nobody runs.
    let mut s = sched(vec![
        task("a", &["nm1"]),
        task("b", &["nm1"]),
        task("c", &["nm4"]),
    ]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(2), "nm2", 1);
    let l = s.offer(0);
    assert_eq!(placed(&l), vec![("a", e(1), TaskLocality::NodeLocal)]);
    // e2 was turned away by the delay: the clock keeps running from 0.
    assert!(s.offer(2999).is_empty());
    assert_eq!(s.level(), TaskLocality::NodeLocal);
    assert_eq!(s.next_level_change_ms(), Some(3000));
    let l = s.offer(3000);
    assert_eq!(placed(&l), vec![("b", e(2), TaskLocality::RackLocal)]);
    assert_eq!(s.level(), TaskLocality::RackLocal);
    // a finishes: only c is left, and no live executor is on its rack: ANY at once.
    ok(
        &mut s,
        &TaskLaunch {
            task_id: "a".into(),
            attempt: 0,
            executor_id: e(1),
            locality: TaskLocality::NodeLocal,
        },
    );
    let l = s.offer(3500);
    assert_eq!(placed(&l), vec![("c", e(1), TaskLocality::Any)]);
    assert_eq!(s.level(), TaskLocality::Any);
}

#[test]
fn rack_to_any_after_the_rack_wait() {
    // b wants nm1 (busy); the only free executor is on /r2.
    let mut s = sched(vec![task("a", &["nm1"]), task("b", &["nm1"])]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(4), "nm4", 1);
    assert_eq!(
        placed(&s.offer(0)),
        vec![("a", e(1), TaskLocality::NodeLocal)]
    );
    assert!(s.offer(3000).is_empty());
    assert_eq!(s.level(), TaskLocality::RackLocal);
    assert!(s.offer(5999).is_empty());
    assert_eq!(placed(&s.offer(6000)), vec![("b", e(4), TaskLocality::Any)]);
}

#[test]
fn a_long_gap_crosses_several_levels_at_once() {
    let mut s = sched(vec![task("a", &["nm1"]), task("b", &["nm1"])]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(4), "nm4", 1);
    s.offer(0);
    assert_eq!(
        placed(&s.offer(10_000)),
        vec![("b", e(4), TaskLocality::Any)]
    );
}

#[test]
fn a_launch_without_rejects_resets_to_the_most_local_level() {
    let mut s = sched(vec![
        task("a", &["nm1"]),
        task("b", &["nm1"]),
        task("c", &["nm1"]),
        task("d", &["nm1"]),
    ]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(4), "nm4", 1);
    let a = s.offer(0).remove(0);
    let b = s.offer(6000).remove(0);
    assert_eq!(b.locality, TaskLocality::Any);
    assert_eq!(s.level(), TaskLocality::Any);
    ok(&mut s, &a);
    // Allowed is ANY, but the NODE pass comes first: c goes to nm1, nobody is turned away.
    assert_eq!(
        placed(&s.offer(6100)),
        vec![("c", e(1), TaskLocality::NodeLocal)]
    );
    assert_eq!(s.level(), TaskLocality::NodeLocal);
    ok(&mut s, &b);
    // Back at NODE: e4 must wait a fresh node wait from 6100 for d.
    assert!(s.offer(6200).is_empty());
    assert!(s.offer(9099).is_empty());
    assert_eq!(placed(&s.offer(9100)), vec![]);
    // 9100: RACK allowed, but e4 is on /r2; ANY from 12100.
    assert_eq!(
        placed(&s.offer(12_100)),
        vec![("d", e(4), TaskLocality::Any)]
    );
}

#[test]
fn local_launches_elsewhere_do_not_restart_the_clock_while_a_slot_is_refused() {
    // e1 keeps launching nm1 work every second; e2 is refused meanwhile. The legacy rule
    // would restart the wait at every e1 launch and never let e2 help.
    let tasks = (0..6).map(|i| task(&format!("n1-{i}"), &["nm1"])).collect();
    let mut s = sched(tasks);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(2), "nm2", 1);
    let mut running = s.offer(0);
    assert_eq!(running.len(), 1);
    for t in [1000, 2000] {
        let l = running.pop().unwrap();
        ok(&mut s, &l);
        running = s.offer(t);
        assert_eq!(
            placed(&running),
            vec![(running[0].task_id.as_str(), e(1), TaskLocality::NodeLocal)]
        );
    }
    let l = s.offer(3000);
    assert_eq!(l.len(), 1);
    assert_eq!(
        (l[0].executor_id, l[0].locality),
        (e(2), TaskLocality::RackLocal)
    );
}

#[test]
fn nm3_without_executors_falls_back_after_the_wait_instead_of_stalling() {
    // nm3 tasks come first in the job; nm3 has no executor; nm1's work keeps e1 busy.
    let mut tasks: Vec<TaskSpec> = (0..2).map(|i| task(&format!("n3-{i}"), &["nm3"])).collect();
    tasks.extend((0..4).map(|i| task(&format!("n1-{i}"), &["nm1"])));
    let mut s = sched(tasks);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(2), "nm2", 1);
    let first = s.offer(0);
    assert_eq!(
        placed(&first),
        vec![("n1-0", e(1), TaskLocality::NodeLocal)]
    );
    assert!(s.offer(1000).is_empty());
    // After the node wait, nm3's tasks run on its rack.
    let l = s.offer(3000);
    assert_eq!(placed(&l), vec![("n3-0", e(2), TaskLocality::RackLocal)]);

    // Same, with nm3's rack empty too: RACK_LOCAL cannot help them; ANY after both waits.
    let mut racks = racks();
    racks.insert("nm3".into(), "/r3".into());
    let mut tasks: Vec<TaskSpec> = (0..2).map(|i| task(&format!("n3-{i}"), &["nm3"])).collect();
    tasks.extend((0..4).map(|i| task(&format!("n1-{i}"), &["nm1"])));
    let mut s = Scheduler::new(
        tasks,
        LocalityWait {
            node: 3000,
            rack: 3000,
        },
        3,
        racks,
    );
    s.add_executor(e(1), "nm1".into(), "/r1".into(), 1);
    s.add_executor(e(4), "nm4".into(), "/r2".into(), 1);
    s.offer(0);
    assert!(s.offer(3000).is_empty());
    assert!(s.offer(5999).is_empty());
    assert_eq!(
        placed(&s.offer(6000)),
        vec![("n3-0", e(4), TaskLocality::Any)]
    );
}

#[test]
fn no_pref_tasks_skip_the_delay() {
    let mut s = sched(vec![
        task("a", &["nm1"]),
        task("b", &["nm1"]),
        task("n", &[]),
    ]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(2), "nm2", 1);
    assert_eq!(
        placed(&s.offer(0)),
        vec![
            ("a", e(1), TaskLocality::NodeLocal),
            ("n", e(2), TaskLocality::NoPref)
        ]
    );
    assert_eq!(s.level(), TaskLocality::NodeLocal);
}

#[test]
fn preferred_racks_count_as_rack_local() {
    let mut t = task("r", &[]);
    t.preferred_racks = vec!["/r2".into()];
    let mut s = sched(vec![task("a", &["nm1"]), t]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(4), "nm4", 1);
    let l = s.offer(0);
    assert_eq!(
        l[0],
        TaskLaunch {
            task_id: "a".into(),
            attempt: 0,
            executor_id: e(1),
            locality: TaskLocality::NodeLocal
        }
    );
    // No pending task is NODE-runnable any more, so the next pass skips to RACK at once.
    assert_eq!(
        placed(&s.offer(1)),
        vec![("r", e(4), TaskLocality::RackLocal)]
    );
}

#[test]
fn tasks_take_the_cpus_they_ask_for() {
    let mut big = task("big", &[]);
    big.cpus = 2;
    let mut s = sched(vec![task("a", &[]), big, task("c", &[])]);
    add(&mut s, e(1), "nm1", 2);
    // a takes one cpu; big does not fit the remaining one; c does.
    assert_eq!(
        placed(&s.offer(0)),
        vec![
            ("a", e(1), TaskLocality::NoPref),
            ("c", e(1), TaskLocality::NoPref)
        ]
    );
    add(&mut s, e(2), "nm2", 2);
    assert_eq!(
        placed(&s.offer(1)),
        vec![("big", e(2), TaskLocality::NoPref)]
    );
}

#[test]
fn a_failed_task_retries_on_another_executor() {
    let mut s = sched(vec![task("a", &[])]);
    add(&mut s, e(1), "nm1", 1);
    add(&mut s, e(2), "nm2", 1);
    let l = s.offer(0).remove(0);
    assert_eq!(l.executor_id, e(1));
    let f = s.task_finished("a", 0, e(1), 1).unwrap();
    assert_eq!(f.outcome, TaskOutcome::WillRetry);
    assert_eq!(s.failures("a"), Some(1));
    let l = s.offer(10).remove(0);
    assert_eq!((l.attempt, l.executor_id), (1, e(2)));
}

#[test]
fn exclusion_gives_way_when_no_other_executor_is_left() {
    let mut s = sched(vec![task("a", &[])]);
    add(&mut s, e(1), "nm1", 1);
    s.offer(0);
    s.task_finished("a", 0, e(1), 1);
    let l = s.offer(10).remove(0);
    assert_eq!((l.attempt, l.executor_id), (1, e(1)));
}

#[test]
fn the_job_fails_when_a_task_fails_task_retries_times() {
    let mut s = sched(vec![task("a", &[]), task("b", &[])]);
    add(&mut s, e(1), "nm1", 1);
    for attempt in 0..3 {
        let l = s.offer(attempt as u64).remove(0);
        assert_eq!((l.task_id.as_str(), l.attempt), ("a", attempt));
        let f = s.task_finished("a", attempt, e(1), 7).unwrap();
        let want = if attempt < 2 {
            TaskOutcome::WillRetry
        } else {
            TaskOutcome::JobFailed
        };
        assert_eq!(f.outcome, want);
        assert_eq!(f.attempts, attempt + 1);
    }
    let why = s.failure().unwrap();
    assert!(
        why.contains("task `a` failed 3 times") && why.contains("exited 7"),
        "{why}"
    );
    assert!(s.offer(100).is_empty());
}

#[test]
fn losing_an_executor_requeues_without_a_failure() {
    let mut s = sched(vec![task("a", &[]), task("b", &[])]);
    add(&mut s, e(1), "nm1", 2);
    assert_eq!(s.offer(0).len(), 2);
    assert_eq!(
        s.remove_executor(e(1)),
        vec!["a".to_string(), "b".to_string()]
    );
    assert_eq!(s.failures("a"), Some(0));
    assert_eq!(s.pending_count(), 2);
    assert_eq!(s.running_count(), 0);
    // The lost attempt's late report is ignored.
    assert_eq!(s.task_finished("a", 0, e(1), 0), None);
    add(&mut s, e(2), "nm2", 2);
    let l = s.offer(5);
    assert_eq!(l.iter().map(|l| l.attempt).collect::<Vec<_>>(), vec![1, 1]);
    assert!(l.iter().all(|l| l.executor_id == e(2)));
}

#[test]
fn stale_or_duplicate_reports_are_ignored() {
    let mut s = sched(vec![task("a", &[])]);
    add(&mut s, e(1), "nm1", 1);
    let l = s.offer(0).remove(0);
    assert_eq!(s.task_finished("a", 1, e(1), 0), None);
    assert_eq!(s.task_finished("a", 0, e(2), 0), None);
    assert_eq!(s.task_finished("zz", 0, e(1), 0), None);
    ok(&mut s, &l);
    assert_eq!(s.task_finished("a", 0, e(1), 0), None);
    assert!(s.all_succeeded());
}

#[test]
fn executors_being_killed_get_nothing() {
    let mut s = sched(vec![task("a", &[])]);
    add(&mut s, e(1), "nm1", 1);
    s.mark_killing(e(1));
    assert!(s.offer(0).is_empty());
    assert!(s.usable_executors().is_empty());
    assert_eq!(s.executor_count(), 1);
}

#[test]
fn the_level_holds_until_executors_exist() {
    let mut s = sched(vec![task("a", &["nm1"]), task("b", &["nm2"])]);
    assert!(s.offer(0).is_empty());
    assert!(s.offer(10_000).is_empty());
    assert_eq!(s.level(), TaskLocality::NodeLocal);
    // The first executor is on nm1: b's host has no executor, so it is not NODE-runnable,
    // but a is; e1 takes a and is full, so nothing was refused.
    add(&mut s, e(1), "nm1", 1);
    assert_eq!(
        placed(&s.offer(10_100)),
        vec![("a", e(1), TaskLocality::NodeLocal)]
    );
    assert_eq!(s.level(), TaskLocality::NodeLocal);
}

mod kept_state {
    //! The sets and counts the scheduler keeps so a round walks no executor list agree, after
    //! any sequence of events, with the same things computed from scratch.

    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Add {
            id: u8,
            host: u8,
            cores: u32,
        },
        Remove(u8),
        Kill(u8),
        /// Ends the n-th running attempt (modulo), with this exit code.
        Finish {
            nth: usize,
            exit: i32,
        },
        Offer {
            after_ms: u64,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..8, 0u8..4, 1u32..4).prop_map(|(id, host, cores)| Op::Add { id, host, cores }),
            (0u8..8).prop_map(Op::Remove),
            (0u8..8).prop_map(Op::Kill),
            (0usize..16, prop_oneof![Just(0), Just(1)])
                .prop_map(|(nth, exit)| Op::Finish { nth, exit }),
            (0u64..4000).prop_map(|after_ms| Op::Offer { after_ms }),
            (0u64..4000).prop_map(|after_ms| Op::Offer { after_ms }),
        ]
    }

    fn check(s: &Scheduler, idle: &BTreeMap<ExecutorId, bool>) {
        let offerable: BTreeSet<ExecutorId> = s
            .executors
            .iter()
            .filter(|(_, e)| e.usable && e.free > 0)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(s.offerable, offerable);
        let running: usize = s.executors.values().map(|e| e.running.len()).sum();
        assert_eq!(s.running_count(), running);
        let usable = s.usable_executors();
        assert_eq!(s.usable_count(), usable.len());
        let mut hosts = HashMap::new();
        let mut racks = HashMap::new();
        for e in s.executors.values().filter(|e| e.usable) {
            *hosts.entry(e.host.clone()).or_insert(0) += 1;
            *racks.entry(e.rack.clone()).or_insert(0) += 1;
        }
        assert_eq!(s.usable_hosts, hosts);
        assert_eq!(s.usable_racks, racks);
        // The idleness a consumer of the changes keeps equals the idleness of every usable
        // executor now.
        let now: BTreeMap<ExecutorId, bool> = usable
            .into_iter()
            .filter(|(_, busy)| !busy)
            .map(|(id, _)| (id, true))
            .collect();
        assert_eq!(idle, &now);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn kept_sets_and_counts_equal_a_recount(ops in proptest::collection::vec(op(), 1..80)) {
            let hosts = ["nm1", "nm2", "nm3", "nm4"];
            let tasks: Vec<TaskSpec> = (0..20)
                .map(|i| {
                    let mut t = task(&format!("t{i}"), &[hosts[i % 5 % 4]]);
                    if i % 5 == 4 {
                        t.preferred_hosts.clear();
                    }
                    t.cpus = 1 + (i % 3 == 0) as u32;
                    t
                })
                .collect();
            let mut s = sched(tasks);
            let mut now = 0;
            let mut running: Vec<TaskLaunch> = Vec::new();
            let mut idle: BTreeMap<ExecutorId, bool> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Add { id, host, cores } => add(&mut s, e(id.into()), hosts[host as usize], cores),
                    Op::Remove(id) => {
                        s.remove_executor(e(id.into()));
                    }
                    Op::Kill(id) => s.mark_killing(e(id.into())),
                    Op::Finish { nth, exit } => {
                        running.retain(|l| s.runs_on(&l.task_id, l.attempt, l.executor_id));
                        if !running.is_empty() {
                            let l = running.remove(nth % running.len());
                            s.task_finished(&l.task_id, l.attempt, l.executor_id, exit);
                        }
                    }
                    Op::Offer { after_ms } => {
                        now += after_ms;
                        running.extend(s.offer(now));
                    }
                }
                for (id, is_idle) in s.take_idle_changes() {
                    if is_idle {
                        idle.insert(id, true);
                    } else {
                        idle.remove(&id);
                    }
                }
                check(&s, &idle);
            }
        }
    }
}

/// What the AM's job run asks instead of keeping its own sets: whether the driver knows
/// an executor, and whether it asked for its kill.
#[test]
fn the_scheduler_answers_whether_it_knows_and_kills_an_executor() {
    let mut s = sched(vec![task("a", &[])]);
    assert!(!s.has_executor(e(1)) && !s.is_killing(e(1)));
    add(&mut s, e(1), "nm1", 1);
    assert!(s.has_executor(e(1)) && !s.is_killing(e(1)));
    s.mark_killing(e(1));
    assert!(s.has_executor(e(1)) && s.is_killing(e(1)));
    s.remove_executor(e(1));
    assert!(!s.has_executor(e(1)) && !s.is_killing(e(1)));
}
