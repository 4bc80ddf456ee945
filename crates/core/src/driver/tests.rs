//! Rounds of the whole driver: events in, actions out.

use super::*;

/// Executor `n`.
fn e(n: u64) -> ExecutorId {
    ExecutorId::new(n)
}

fn job(text_tasks: &str, extra: &str) -> Job {
    let text = format!(
        r#"{{"name":"t","executor":{{"cores":2,"memory_mb":64,"max_executors":4,"idle_timeout_ms":5000}},
            {extra} "tasks":[{text_tasks}]}}"#
    );
    Job::from_json(&text).unwrap()
}

fn racks() -> HashMap<String, String> {
    HashMap::from([("nm1".into(), "/r1".into()), ("nm2".into(), "/r1".into())])
}

fn added(id: ExecutorId, host: &str) -> DriverEvent {
    DriverEvent::ExecutorAdded {
        id,
        host: host.into(),
        rack: "/r1".into(),
        cores: 2,
    }
}

fn launches(actions: &[DriverAction]) -> Vec<(String, u32, ExecutorId)> {
    attempts(actions, false)
}

fn kills(actions: &[DriverAction]) -> Vec<(String, u32, ExecutorId)> {
    attempts(actions, true)
}

/// (task, attempt, executor) of the launches, or of the kills.
fn attempts(actions: &[DriverAction], kills: bool) -> Vec<(String, u32, ExecutorId)> {
    actions
        .iter()
        .filter_map(|a| match a {
            DriverAction::LaunchTask {
                task_id,
                attempt,
                executor_id,
                ..
            } if !kills => Some((task_id.clone(), *attempt, *executor_id)),
            DriverAction::KillTask {
                task_id,
                attempt,
                executor_id,
            } if kills => Some((task_id.clone(), *attempt, *executor_id)),
            _ => None,
        })
        .collect()
}

fn finished(task: &str, attempt: u32, exec: ExecutorId, code: i32) -> DriverEvent {
    DriverEvent::TaskFinished {
        task_id: task.into(),
        attempt,
        executor_id: exec,
        exit_code: code,
        duration_ms: 100,
    }
}

#[test]
fn a_job_from_demand_to_summary() {
    let j = job(
        r#"{"id":"a","command":"echo a","preferred_hosts":["nm1"]},
           {"id":"b","command":"echo b","preferred_hosts":["nm1","nm2"]},
           {"id":"c","command":"echo c"}"#,
        "",
    );
    let mut d = Driver::new(j, racks()).unwrap();
    let out = d.on_event(0, DriverEvent::Tick);
    let want = Demand {
        target_executors: 0,
        locality_aware_tasks: 2,
        host_to_local_task_count: [("nm1".into(), 2), ("nm2".into(), 1)].into(),
        excluded_hosts: Vec::new(),
        kind: None,
    };
    assert_eq!(out, vec![DriverAction::SetDemand(want.clone())]);
    // Same demand: nothing to say.
    assert!(d.on_event(500, DriverEvent::Tick).is_empty());
    assert_eq!(d.next_deadline_ms(), Some(1000));
    let out = d.on_event(1000, DriverEvent::Tick);
    assert_eq!(
        out,
        vec![DriverAction::SetDemand(Demand {
            target_executors: 1,
            ..want
        })]
    );
    let out = d.on_event(1200, added(e(1), "nm1"));
    assert_eq!(
        launches(&out),
        vec![("a".into(), 0, e(1)), ("b".into(), 0, e(1))]
    );
    match &out[0] {
        DriverAction::LaunchTask {
            command, locality, ..
        } => {
            assert_eq!(
                (command.as_str(), *locality),
                ("echo a", TaskLocality::NodeLocal)
            );
        }
        other => panic!("{other:?}"),
    }
    // c is still pending; the demand now counts no locality-aware tasks.
    assert!(out.contains(&DriverAction::SetDemand(Demand {
        target_executors: 1,
        locality_aware_tasks: 0,
        host_to_local_task_count: Default::default(),
        excluded_hosts: Vec::new(),
        kind: None,
    })));
    let out = d.on_event(1300, finished("a", 0, e(1), 0));
    assert_eq!(launches(&out), vec![("c".into(), 0, e(1))]);
    d.on_event(1400, finished("b", 0, e(1), 0));
    // The published view says what the summary says, mid-job too.
    assert_eq!(d.view().summary(), d.summary());
    assert_eq!(d.view().summary().wall_time_ms, 1400);
    let out = d.on_event(1500, finished("c", 0, e(1), 0));
    let [DriverAction::JobFinished { succeeded, summary }] = &out[..] else {
        panic!("{out:?}");
    };
    assert!(*succeeded);
    assert_eq!(summary.wall_time_ms, 1500);
    assert_eq!(summary.tasks_succeeded, 3);
    assert_eq!(summary.by_locality.node_local, 2);
    assert_eq!(summary.by_locality.no_pref, 1);
    let samples: Vec<(u64, u32)> = summary
        .executors_over_time
        .iter()
        .map(|s| (s.t_ms, s.executors))
        .collect();
    assert_eq!(samples, vec![(0, 0), (1200, 1)]);
    assert!(d.is_finished());
    assert!(d.on_event(2000, DriverEvent::Tick).is_empty());
    // After the end the view is the final summary, time standing still.
    assert_eq!(d.view().summary(), **summary);
}

#[test]
fn the_job_fails_after_task_retries_failures() {
    let j = job(r#"{"id":"a","command":"false"}"#, r#""task_retries": 2,"#);
    let mut d = Driver::new(j, racks()).unwrap();
    d.on_event(0, added(e(1), "nm1"));
    d.on_event(1, added(e(2), "nm2"));
    let out = d.on_event(10, finished("a", 0, e(1), 1));
    // Retried elsewhere.
    assert_eq!(launches(&out), vec![("a".into(), 1, e(2))]);
    let out = d.on_event(20, finished("a", 1, e(2), 1));
    let [DriverAction::JobFinished { succeeded, summary }] = &out[..] else {
        panic!("{out:?}");
    };
    assert!(!*succeeded);
    assert_eq!(summary.tasks_failed, 1);
    assert_eq!(summary.tasks[0].attempts, 2);
    assert!(summary
        .failure
        .as_deref()
        .unwrap()
        .contains("failed 2 times"));
}

#[test]
fn executor_loss_requeues_without_failing_the_job() {
    let j = job(r#"{"id":"a","command":"x"}"#, r#""task_retries": 1,"#);
    let mut d = Driver::new(j, racks()).unwrap();
    d.on_event(0, added(e(1), "nm1"));
    let out = d.on_event(
        5,
        DriverEvent::ExecutorRemoved {
            id: e(1),
            reason: "node lost".into(),
        },
    );
    assert!(launches(&out).is_empty());
    assert!(!d.is_finished());
    let out = d.on_event(6, added(e(2), "nm2"));
    assert_eq!(launches(&out), vec![("a".into(), 1, e(2))]);
    let out = d.on_event(7, finished("a", 1, e(2), 0));
    assert!(matches!(
        &out[..],
        [DriverAction::JobFinished {
            succeeded: true,
            ..
        }]
    ));
}

#[test]
fn idle_executors_are_killed_and_get_no_work() {
    let j = job(r#"{"id":"a","command":"x"},{"id":"b","command":"x"}"#, "");
    let mut d = Driver::new(j, racks()).unwrap();
    d.on_event(0, added(e(1), "nm1"));
    d.on_event(0, added(e(2), "nm2"));
    // Both tasks go to e1 (2 cores); e2 is idle from 0.
    let out = d.on_event(5000, DriverEvent::Tick);
    assert!(
        out.contains(&DriverAction::KillExecutors(vec![e(2)])),
        "{out:?}"
    );
    assert_eq!(d.scheduler().usable_executors().len(), 1);
}

#[test]
fn invalid_jobs_are_refused() {
    let mut j = job(r#"{"id":"a","command":"x"}"#, "");
    j.tasks[0].cpus = 9;
    assert!(matches!(
        Driver::new(j, HashMap::new()),
        Err(JobError::CpusAboveCores { .. })
    ));
}

/// An attempt past its task's `timeout_ms` fails with a reason naming the timeout, is
/// killed on its executor and retried; its late result changes nothing. A task without its
/// own limit takes the job's.
#[test]
fn a_hung_attempt_times_out_is_killed_and_retried() {
    let j = job(
        r#"{"id":"hang","command":"sleep 600","timeout_ms":3000},
           {"id":"quick","command":"true"}"#,
        r#""timeout_ms": 60000,"#,
    );
    assert_eq!(j.task_timeout_ms(&j.tasks[0]), Some(3000));
    assert_eq!(j.task_timeout_ms(&j.tasks[1]), Some(60_000));
    let mut d = Driver::new(j, racks()).unwrap();
    d.on_event(0, DriverEvent::Tick);
    let out = d.on_event(10, added(e(1), "nm1"));
    let mut l = launches(&out);
    l.sort();
    assert_eq!(
        l,
        [
            ("hang".to_string(), 0, e(1)),
            ("quick".to_string(), 0, e(1))
        ]
    );
    // The earliest limit sets the wake-up: 3 s after the launch.
    assert_eq!(d.next_deadline_ms(), Some(3_010));
    let out = d.on_event(100, finished("quick", 0, e(1), 0));
    assert!(kills(&out).is_empty());
    // Not yet at 3009; at 3010 the attempt times out.
    assert!(kills(&d.on_event(3_009, DriverEvent::Tick)).is_empty());
    let out = d.on_event(3_010, DriverEvent::Tick);
    assert_eq!(kills(&out), [("hang".to_string(), 0, e(1))]);
    // Retried at once (on the only executor there is), with a fresh limit.
    assert_eq!(launches(&out), [("hang".to_string(), 1, e(1))]);
    assert_eq!(d.scheduler().failures("hang"), Some(1));
    assert_eq!(d.next_deadline_ms(), Some(6_010));
    // The killed attempt's exit, reported late, is not the running attempt's.
    let out = d.on_event(3_400, finished("hang", 0, e(1), 143));
    assert!(launches(&out).is_empty() && !d.is_finished());
    assert_eq!(d.scheduler().failures("hang"), Some(1));
    let out = d.on_event(4_000, finished("hang", 1, e(1), 0));
    let summary = match out.last() {
        Some(DriverAction::JobFinished { succeeded, summary }) => {
            assert!(succeeded);
            summary.clone()
        }
        other => panic!("job should be over: {other:?}"),
    };
    let rec = summary.tasks.iter().find(|t| t.task_id == "hang").unwrap();
    assert_eq!((rec.attempts, rec.exit_code), (2, 0));
    let why = rec.last_failure.as_deref().unwrap();
    assert!(
        why.contains("attempt 0 timed out after 3000 ms") && why.contains("on executor 1 (nm1)"),
        "{why}"
    );
    // The journal has the timed-out attempt as a failure (a next AM attempt counts it).
    let journal = d.take_journal();
    assert!(journal.iter().any(|e| matches!(e,
        journal::Entry::Finished { attempt: 0, record } if record.task_id == "hang"
            && record.exit_code == scheduler::TIMED_OUT_EXIT_CODE)));
}

/// The last allowed attempt timing out fails the job, naming the timeout.
#[test]
fn a_task_that_always_hangs_fails_the_job_naming_the_timeout() {
    let j = job(
        r#"{"id":"hang","command":"sleep 600","timeout_ms":1000}"#,
        r#""task_retries": 2,"#,
    );
    let mut d = Driver::new(j, racks()).unwrap();
    d.on_event(0, added(e(1), "nm1"));
    let out = d.on_event(1_000, DriverEvent::Tick);
    assert_eq!(kills(&out).len(), 1);
    let out = d.on_event(2_000, DriverEvent::Tick);
    assert_eq!(kills(&out), [("hang".to_string(), 1, e(1))]);
    match out.last() {
        Some(DriverAction::JobFinished { succeeded, summary }) => {
            assert!(!succeeded);
            let why = summary.failure.as_deref().unwrap();
            assert!(
                why.contains("failed 2 times") && why.contains("timed out after 1000 ms"),
                "{why}"
            );
        }
        other => panic!("job should have failed: {other:?}"),
    }
}

/// An attempt that ends in time, or whose executor is lost, leaves no timer to fire.
#[test]
fn an_attempt_ending_in_time_is_not_timed_out() {
    let j = job(r#"{"id":"a","command":"true","timeout_ms":1000}"#, "");
    let mut d = Driver::new(j, racks()).unwrap();
    d.on_event(0, added(e(1), "nm1"));
    let out = d.on_event(
        1,
        DriverEvent::ExecutorRemoved {
            id: e(1),
            reason: "lost".into(),
        },
    );
    assert!(kills(&out).is_empty());
    let out = d.on_event(2, added(e(2), "nm2"));
    assert_eq!(launches(&out), [("a".to_string(), 1, e(2))]);
    // Attempt 0's deadline (1000) passes harmlessly; attempt 1's is at 1002.
    assert!(kills(&d.on_event(1_000, DriverEvent::Tick)).is_empty());
    assert_eq!(d.scheduler().failures("a"), Some(0));
    d.on_event(500, finished("a", 1, e(2), 0));
    assert!(d.is_finished());
}
