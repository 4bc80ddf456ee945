//! The core without sockets: an allocate call "in flight" is just a batch taken and not yet
//! answered, and answers are built by hand.

use std::collections::HashMap;

use crate::driver::{Driver, Job};
use yarn_client::amrm::Allocation;
use yarn_client::rest::NodeInfo;
use yarn_client::token::Token;

use super::*;
use crate::am::fixtures;
use yarn_am_wire::driver_api::Demand;
use yarn_am_wire::poll::{PollRequest, TaskAttempt, TaskResult};

const HOSTS: [&str; 2] = ["nm1", "nm2"];

/// A node of the RM REST node list.
fn node(host: &str, rack: &str) -> NodeInfo {
    fixtures::node(host, rack, 4096, 4)
}

fn pool() -> Pool {
    let nodes: Vec<NodeInfo> = HOSTS.iter().map(|h| node(h, "/rack1")).collect();
    fixtures::pool(&nodes, 10)
}

pub(super) fn job(tasks: usize, backlog_timeout_ms: u64, initial: u32) -> JobRun {
    let tasks: Vec<_> = (0..tasks)
        .map(|i| serde_json::json!({"id": format!("t{i}"), "command": "true"}))
        .collect();
    let job = Job::from_json(
        &serde_json::json!({
            "name": "j",
            "executor": {"cores": 1, "memory_mb": 256, "initial_executors": initial},
            "allocation": {"backlog_timeout_ms": backlog_timeout_ms},
            "tasks": tasks,
        })
        .to_string(),
    )
    .unwrap();
    JobRun::new(Driver::new(job, HashMap::new()).unwrap())
}

pub(super) fn core(job: Option<JobRun>) -> AmCore {
    AmCore::new(pool(), job, Duration::from_secs(3), 10)
}

fn granted(ids: &[(&str, &str)]) -> RmReply {
    RmReply::Allocated(Box::new(Allocation {
        response_id: 1,
        allocated: ids
            .iter()
            .map(|(id, host)| fixtures::container(id, host))
            .collect(),
        ..Default::default()
    }))
}

pub(super) fn answered() -> RmReply {
    RmReply::Allocated(Box::new(Allocation {
        response_id: 1,
        ..Default::default()
    }))
}

fn asked(batch: &AllocateBatch) -> i32 {
    batch
        .asks
        .iter()
        .filter(|a| a.resource_name == "*")
        .map(|a| a.num_containers)
        .sum()
}

pub(super) fn poll(c: &mut AmCore, now: u64, id: &str, host: &str, finished: &[&str]) -> PollReply {
    let finished: Vec<(&str, u32)> = finished.iter().map(|t| (*t, 0)).collect();
    poll_results(c, now, id, host, &finished)
}

#[test]
fn commands_are_answered_while_an_allocate_call_is_in_flight() {
    let mut c = core(None);
    c.handle_start(0, 2);
    let batch = c
        .poll_allocate(0)
        .expect("the first heartbeat is due at once");
    assert_eq!(asked(&batch), 2);
    // While the call is out: no second call, and commands are served at once.
    assert!(c.poll_allocate(5_000).is_none());
    assert_eq!(c.poll_timeout(), None, "no timer while the call is out");
    c.handle_command(
        10,
        DriverCommand::SetDemand(Demand {
            target_executors: 3,
            ..Default::default()
        }),
    );
    let killed: KillOutcome = fixtures::ask(&mut c, 11, |reply| DriverCommand::Kill {
        executor_ids: vec!["7".into()],
        reply,
    });
    assert_eq!(killed.unknown, ["7"]);
    // The call comes back: the new demand goes out at once, not after an interval, and it
    // wins over the batch that was in flight.
    c.handle_allocated(5_000, batch, answered());
    assert_eq!(c.poll_timeout(), Some(5_000));
    let next = c.poll_allocate(5_000).unwrap();
    // The third executor is asked under a key of its own: the first key's 2 may be being
    // granted, and re-sending it at 3 would ask for those again.
    assert_eq!(asked(&next), 1);
    assert!(next.asks.iter().all(|a| a.allocation_request_id != 0));
}

#[test]
fn a_failed_call_is_sent_again_and_newer_changes_win() {
    let mut c = core(None);
    c.handle_start(0, 2);
    let batch = c.poll_allocate(0).unwrap();
    c.handle_command(
        1,
        DriverCommand::SetDemand(Demand {
            target_executors: 4,
            ..Default::default()
        }),
    );
    c.handle_allocated(
        20_000,
        batch,
        RmReply::Failed {
            error: "timed out".into(),
            answered: false,
        },
    );
    // Not at once, however urgent: an RM that refuses connections is not hammered.
    assert!(c.poll_allocate(20_000).is_none());
    assert_eq!(c.poll_timeout(), Some(21_000));
    let again = c.poll_allocate(21_000).unwrap();
    assert_eq!(asked(&again), 4);
    assert!(c.ending().is_none(), "one failure is ridden out");
}

/// A grant waits at the RM until our next call, and on an idle cluster it comes on
/// an NM heartbeat within one NM interval of the ask: calls every 100 ms for that long, then
/// Spark's doubling; a new demand starts the fast calls again.
#[test]
fn a_demand_gets_fast_calls_for_one_nm_heartbeat_then_the_doubling() {
    let mut c = core(None).with_grant_window(Duration::from_millis(500));
    c.handle_start(0, 2);
    let mut now = 0;
    let mut waits = Vec::new();
    for _ in 0..8 {
        let b = c.poll_allocate(now).expect("a call is due");
        c.handle_allocated(now, b, answered());
        let next = c.poll_timeout().expect("asks pending: a next call");
        waits.push(next - now);
        now = next;
    }
    assert_eq!(waits, [100, 100, 100, 100, 100, 100, 200, 400]);
    c.handle_command(
        now,
        DriverCommand::SetDemand(Demand {
            target_executors: 3,
            ..Default::default()
        }),
    );
    let b = c.poll_allocate(now).expect("a new demand goes out at once");
    c.handle_allocated(now, b, answered());
    assert_eq!(c.poll_timeout(), Some(now + 100));
}

#[test]
fn after_an_rm_restart_everything_is_sent_again_from_response_id_0() {
    let mut c = core(None);
    c.handle_start(0, 2);
    let batch = c.poll_allocate(0).unwrap();
    c.handle_allocated(100, batch, answered());
    let b = c.poll_allocate(3_100).expect("due after the idle interval");
    c.handle_allocated(3_200, b, answered());
    // Nothing changed: the table has nothing new to send.
    let quiet = c.poll_allocate(6_200).unwrap();
    assert!(quiet.asks.is_empty());
    c.handle_allocated(
        6_300,
        quiet,
        RmReply::Reregistered {
            nm_tokens: vec![(
                "nm1:45454".into(),
                Token {
                    identifier: vec![1],
                    password: vec![2],
                    kind: "NMToken".into(),
                    service: "nm1:45454".into(),
                },
            )],
        },
    );
    let resync = c.poll_allocate(6_300).expect("resent at once");
    assert_eq!(resync.response_id, 0);
    assert_eq!(asked(&resync), 2);
    assert!(c.table().nm_tokens.get("nm1:45454").is_some());
}

#[test]
fn refusal_and_a_long_outage_end_the_am_without_draining() {
    let mut c = core(None);
    c.handle_start(0, 1);
    let b = c.poll_allocate(0).unwrap();
    c.handle_allocated(1, b, RmReply::Refused("attempt not found".into()));
    assert!(matches!(c.ending(), Some(Ending::Abort(w)) if w.contains("attempt not found")));
    assert!(c.drained(1));
    assert!(
        c.poll_allocate(10_000).is_none(),
        "an ending AM makes no calls"
    );

    let mut c = core(None);
    c.handle_start(0, 1);
    let mut now = 0;
    while c.ending().is_none() {
        let b = c.poll_allocate(now).expect("a retry is due");
        now += 60_000;
        let failed = RmReply::Failed {
            error: "connection refused".into(),
            answered: false,
        };
        c.handle_allocated(now, b, failed);
        now = c.poll_timeout().unwrap();
        assert!(now < 1_000_000, "never gave up");
    }
    assert!(now >= RM_OUTAGE_LIMIT.as_millis() as u64);
}

#[test]
fn the_first_request_goes_out_when_the_backlog_timeout_expires() {
    let mut c = core(Some(job(4, 1_000, 0)));
    c.handle_start(0, 0);
    let b = c.poll_allocate(0).unwrap();
    assert_eq!(asked(&b), 0, "nothing before the backlog timeout");
    c.handle_allocated(50, b, answered());
    // The driver's timer, not the (idle, 3 s) heartbeat interval, sets the wake-up.
    assert_eq!(c.poll_timeout(), Some(1_000));
    c.handle_timeout(1_000);
    let b = c
        .poll_allocate(1_000)
        .expect("the new demand goes out at once");
    assert!(asked(&b) >= 1, "{b:?}");
}

#[test]
fn the_driver_timer_does_not_spin_the_loop() {
    let mut c = core(Some(job(4, 1_000, 0)));
    c.handle_start(0, 0);
    let b = c.poll_allocate(0).unwrap();
    c.handle_allocated(0, b, answered());
    for now in [1_000, 1_000, 1_000] {
        c.handle_timeout(now);
        if let Some(b) = c.poll_allocate(now) {
            c.handle_allocated(now, b, answered());
        }
        assert!(c.poll_timeout().unwrap() > now);
    }
}

/// NodeManagers that join after the start (nm3, nm4 on /rack2): the first container on one
/// makes the AM fetch the node list (once), and from then on the pool, the request table
/// and the driver all place them on /rack2. The rack resolver used to be built once at
/// start, so they stayed on /default-rack.
#[test]
fn nodes_that_join_later_get_their_rack_everywhere() {
    let job = Job::from_json(
        &serde_json::json!({
            "name": "j",
            "executor": {"cores": 1, "memory_mb": 256, "initial_executors": 1},
            "allocation": {"backlog_timeout_ms": 1},
            // Rack-local is allowed at once, any-host never within the test.
            "locality_wait_ms": {"node": 0, "rack": 3_600_000},
            "tasks": [{"id": "t0", "command": "true", "preferred_hosts": ["nm4"]}],
        })
        .to_string(),
    )
    .unwrap();
    // As in the AM: the driver holds a handle to the pool's one topology.
    let pool = pool();
    let driver = Driver::new(job, pool.topology().clone()).unwrap();
    let mut c = AmCore::new(pool, Some(JobRun::new(driver)), Duration::from_secs(3), 10);
    c.handle_start(0, 0);
    c.handle_timeout(1);
    let b = c.poll_allocate(1).unwrap();
    c.handle_allocated(1, b, answered());
    let ids = executors(&mut c, 1_000, &[("container_1_0001_01_000002", "nm3")]);
    assert!(
        c.poll_nodes_wanted(),
        "a container on an unknown host asks for the node list"
    );
    assert!(!c.poll_nodes_wanted(), "once");
    assert_eq!(&*c.pool.rack_of("nm3"), "/default-rack");

    let listed = [
        ("nm1", "/rack1"),
        ("nm2", "/rack1"),
        ("nm3", "/rack2"),
        ("nm4", "/rack2"),
    ];
    let nodes: Vec<NodeInfo> = listed.iter().map(|(h, r)| node(h, r)).collect();
    c.handle_nodes_listed(1_100, Some(&nodes));
    assert_eq!(&*c.pool.rack_of("nm3"), "/rack2");
    // The request table's rack entries come from the same map.
    let req = yarn_client::request_table::ContainerRequest::anywhere(
        yarn_client::ask::Capability::new(256, 1),
        yarn_client::ask::Priority(1),
    )
    .with_nodes(vec!["nm4".to_string()]);
    c.pool.table.table.add(req).unwrap();
    let b = c.pool.table.take_batch();
    let locations: Vec<&str> = b.asks.iter().map(|a| a.resource_name.as_str()).collect();
    assert!(locations.contains(&"/rack2"), "{locations:?}");
    // The driver: nm3's executor is on nm4's rack, so t0 (preferring nm4) runs there
    // rack-local instead of waiting an hour for any-host.
    let r = poll(&mut c, 1_200, &ids[0], "nm3", &[]);
    let tasks: Vec<&str> = r.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(tasks, ["t0"]);
    poll(&mut c, 1_300, &ids[0], "nm3", &["t0"]);
    let report = c.job.as_mut().unwrap().report().brief();
    assert_eq!(report.by_locality.rack_local, 1, "{report:?}");
}

/// A failed node-list fetch is not the end: the next container on a host still unknown
/// asks again; one on a host known by then does not.
#[test]
fn a_failed_node_list_fetch_is_asked_again() {
    let mut p = pool();
    let grant = |id: &str, host: &str| Allocation {
        response_id: 1,
        allocated: vec![fixtures::container(id, host)],
        ..Default::default()
    };
    p.allocated(0, grant("container_1_0001_01_000002", "nm3"));
    assert!(p.take_nodes_wanted());
    p.allocated(10, grant("container_1_0001_01_000003", "nm3"));
    assert!(!p.take_nodes_wanted(), "one fetch per host while it is out");
    p.nodes_listed(20, None);
    p.allocated(30, grant("container_1_0001_01_000004", "nm3"));
    assert!(p.take_nodes_wanted(), "asked again after a failed fetch");
    p.nodes_listed(40, Some(&[node("nm3", "/rack2")]));
    p.allocated(50, grant("container_1_0001_01_000005", "nm3"));
    assert!(!p.take_nodes_wanted(), "known now");
    assert_eq!(&*p.rack_of("nm3"), "/rack2");
}

/// Executors for `containers` (id, host), granted in one answer, launched and started.
fn executors(c: &mut AmCore, now: u64, containers: &[(&str, &str)]) -> Vec<String> {
    let b = c.poll_allocate(now).expect("a heartbeat is due");
    c.handle_allocated(now, b, granted(containers));
    let launches = c.poll_launches();
    assert_eq!(launches.len(), containers.len(), "{containers:?}");
    for (cid, _) in containers {
        let container = cid.to_string();
        c.handle_launched(now, LaunchReport::Started { container });
    }
    launches.iter().map(|l| l.executor.to_string()).collect()
}

#[test]
fn executors_are_told_to_stop_before_the_am_ends() {
    let mut c = core(Some(job(2, 1, 2)));
    c.handle_start(0, 0);
    c.handle_timeout(1);
    let b = c.poll_allocate(1).unwrap();
    assert!(asked(&b) >= 1);
    c.handle_allocated(1, b, answered());
    // Epoch container ids (an RM that restarted) are taken like any other.
    let ids = executors(
        &mut c,
        1_000,
        &[
            ("container_e01_1_0001_01_000002", "nm1"),
            ("container_e01_1_0001_01_000003", "nm2"),
        ],
    );
    let (e1, e2) = (&ids[0], &ids[1]);
    let r1 = poll(&mut c, 3_000, e1, "nm1", &[]);
    let r2 = poll(&mut c, 3_000, e2, "nm2", &[]);
    let mut tasks: Vec<String> = r1
        .tasks
        .iter()
        .chain(&r2.tasks)
        .map(|t| t.task_id.clone())
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["t0", "t1"]);
    let (t1, t2) = (r1.tasks[0].task_id.clone(), r2.tasks[0].task_id.clone());
    // The first executor reports; the job is not over yet.
    assert!(!poll(&mut c, 4_000, e1, "nm1", &[&t1]).shutdown);
    assert!(c.ending().is_none());
    // The second finishes the job and hears "shut down" in that same reply.
    assert!(poll(&mut c, 5_000, e2, "nm2", &[&t2]).shutdown);
    assert!(matches!(
        c.ending(),
        Some(Ending::Finish {
            outcome: Outcome::Succeeded,
            ..
        })
    ));
    // The first has not been told yet: the AM waits for its next poll...
    assert!(!c.drained(5_100));
    assert!(c.poll_allocate(5_100).is_none());
    let reply = poll(&mut c, 5_200, e1, "nm1", &[]);
    assert!(reply.shutdown && reply.tasks.is_empty());
    assert!(c.drained(5_200));
}

/// The job's first demand goes out and two executors (nm1, nm2) start at 1 s.
fn two_executors(c: &mut AmCore) -> Vec<String> {
    c.handle_timeout(1);
    let b = c.poll_allocate(1).unwrap();
    c.handle_allocated(1, b, answered());
    executors(
        c,
        1_000,
        &[
            ("container_1_0001_01_000002", "nm1"),
            ("container_1_0001_01_000003", "nm2"),
        ],
    )
}

/// [`two_executors`], each polled once at 2 s and given a task: (executor, task) each.
pub(super) fn two_busy_executors(c: &mut AmCore) -> [(String, String); 2] {
    let ids = two_executors(c);
    [(&ids[0], "nm1"), (&ids[1], "nm2")].map(|(e, host)| {
        let task = poll(c, 2_000, e, host, &[]).tasks[0].task_id.clone();
        (e.clone(), task)
    })
}

#[test]
fn the_drain_is_bounded() {
    let mut c = core(Some(job(2, 1, 2)));
    c.handle_start(0, 0);
    let ids = two_executors(&mut c);
    let e1 = &ids[0];
    // One executor runs both tasks; the other never polls.
    let t = poll(&mut c, 3_000, e1, "nm1", &[]).tasks[0].task_id.clone();
    let t2 = poll(&mut c, 3_500, e1, "nm1", &[&t]).tasks[0]
        .task_id
        .clone();
    assert!(poll(&mut c, 4_000, e1, "nm1", &[&t2]).shutdown);
    assert!(!c.drained(4_001));
    assert_eq!(
        c.poll_timeout(),
        Some(4_000 + DRAIN_LIMIT.as_millis() as u64)
    );
    assert!(c.drained(4_000 + DRAIN_LIMIT.as_millis() as u64));
}

#[test]
fn an_ending_am_launches_nothing_more() {
    let mut c = core(Some(job(1, 1, 1)));
    c.handle_start(0, 0);
    c.handle_timeout(1);
    let b = c.poll_allocate(1).unwrap();
    c.handle_allocated(0, b, answered());
    let b = c.poll_allocate(5_000).unwrap_or_default();
    c.handle_command(
        10,
        DriverCommand::Finish(yarn_am_wire::driver_api::FinishRequest {
            status: FinalOutcome::Killed,
            diagnostics: "stop".into(),
        }),
    );
    c.handle_allocated(20, b, granted(&[("container_1_0001_01_000002", "nm1")]));
    assert!(c.poll_launches().is_empty());
}

#[test]
fn rm_outage_gives_up_only_after_enough_failures_and_time() {
    let s = |n: u64| n * 1000;
    let mut o = RmOutage::new(3, Duration::from_secs(60));
    assert_eq!(o.failed(0, "refused"), None);
    assert_eq!(o.failed(s(1), "refused"), None);
    // Many failures, but a short outage (an RM restart): keep going.
    assert_eq!(o.failed(s(30), "refused"), None);
    let why = o.failed(s(61), "connection refused").unwrap();
    assert!(
        why.contains("61 s") && why.contains("4 allocate calls"),
        "{why}"
    );
    assert!(why.contains("connection refused"), "{why}");
    // An answer starts the count again.
    o.answered();
    assert_eq!(o.failed(s(200), "refused"), None);
    assert_eq!(o.failed(s(300), "refused"), None);
    // A long but sparse outage (calls blocking on a hung RM) still needs the count.
    let mut slow = RmOutage::new(3, Duration::from_secs(60));
    assert_eq!(slow.failed(0, "timeout"), None);
    assert_eq!(slow.failed(s(100), "timeout"), None);
    assert!(slow.failed(s(200), "timeout").is_some());
}

#[test]
fn an_adopted_executor_keeps_its_journaled_attempt_and_an_unadopted_one_is_refused() {
    use crate::driver::journal::{executors, in_flight, Entry};
    use crate::driver::{TaskLocality, TaskRecord};
    let entries = vec![
        Entry::AmAttempt { attempt: 1 },
        Entry::Executor {
            id: ExecutorId::new(4),
            container: "container_1_0001_01_000002".into(),
            host: "nm1".into(),
        },
        Entry::Launched {
            task_id: "t0".into(),
            attempt: 0,
            executor_id: ExecutorId::new(4),
        },
        Entry::Finished {
            attempt: 0,
            record: TaskRecord {
                task_id: "t0".into(),
                executor_id: ExecutorId::new(4),
                host: "nm1".into(),
                locality: TaskLocality::NoPref,
                attempts: 1,
                duration_ms: 1,
                exit_code: 0,
                last_failure: None,
            },
        },
        // In flight at the crash; the reply carrying it never reached the executor.
        Entry::Launched {
            task_id: "t1".into(),
            attempt: 0,
            executor_id: ExecutorId::new(4),
        },
    ];
    let mut j = job(3, 1_000, 0);
    assert_eq!(j.replay(&entries).succeeded, 1);
    let mut c = core(Some(j));
    let adopted = c.handle_adopt(
        0,
        &[fixtures::container("container_1_0001_01_000002", "nm1")],
        &executors(&entries),
        &in_flight(&entries),
    );
    assert_eq!(adopted, 1);
    c.handle_start(0, 0);
    // Its first poll names nothing: t1's attempt 0 goes out again (not a new attempt), and
    // t0, done before the crash, never does.
    let r = poll(&mut c, 10, "4", "nm1", &[]);
    let tasks: Vec<TaskAttempt> = r.tasks.iter().map(|t| t.task_attempt()).collect();
    assert_eq!(tasks, [TaskAttempt::new("t1", 0)]);
    // An executor of the old attempt that was not handed back is told to stop.
    let r = poll(&mut c, 20, "3", "nm2", &[]);
    assert!(r.shutdown, "{r:?}");
    // t1 finishes on the adopted executor and counts; t2 is next.
    let r = poll(&mut c, 30, "4", "nm1", &["t1"]);
    let tasks: Vec<&str> = r.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(tasks, ["t2"]);
    let report = c.view().job.unwrap();
    assert_eq!(serde_json::to_value(&report).unwrap()["tasks_succeeded"], 2);
}

/// One poll naming `finished` results (task, attempt), exit 0.
pub(super) fn poll_results(
    c: &mut AmCore,
    now: u64,
    id: &str,
    host: &str,
    finished: &[(&str, u32)],
) -> PollReply {
    let request = PollRequest {
        executor_id: id.into(),
        host: host.into(),
        free_cpus: 1,
        finished: finished
            .iter()
            .map(|(t, a)| TaskResult {
                task_id: t.to_string(),
                attempt: *a,
                exit_code: 0,
                duration_ms: 1,
            })
            .collect(),
        running: Vec::new(),
    };
    fixtures::ask(c, now, |reply| DriverCommand::ExecutorPoll {
        request,
        reply,
    })
}

/// An executor that stops polling is declared lost after the silence limit: its container
/// is released in the next allocate call, its reason says why (not counted against the
/// app), its task runs on the executor that still polls, and its own late poll is told to
/// shut down. The silence check is a timer of its own, not a fixed round.
#[test]
fn a_silent_executor_is_declared_lost_and_its_task_runs_elsewhere() {
    let mut c = core(Some(job(2, 1, 2))).with_executor_silence(Duration::from_secs(10));
    c.handle_start(0, 0);
    // No executor yet: the first look is one limit from now.
    assert!(c.poll_timeout().unwrap() <= 10_000);
    let [(e1, t1), (e2, t2)] = two_busy_executors(&mut c);
    // e1 finishes its task and keeps polling; e2 goes quiet after 2 s.
    let mut now = 3_000;
    assert!(poll_results(&mut c, now, &e1, "nm1", &[(&t1, 0)])
        .tasks
        .is_empty());
    let mut lost_at = None;
    let mut released = Vec::new();
    while now < 20_000 {
        // The loop wakes at the core's deadline or for e1's next poll, whichever is first.
        let next = c.poll_timeout().unwrap().min(now + 1_000).max(now + 1);
        now = next;
        c.handle_timeout(now);
        if let Some(b) = c.poll_allocate(now) {
            released.extend(b.releases.iter().map(|r| format!("{r:?}")));
            c.handle_allocated(now, b, answered());
        }
        if lost_at.is_none() && c.pool.registry.live_host(e2.parse().unwrap()).is_none() {
            lost_at = Some(now);
        }
        if now % 1_000 == 0 {
            let r = poll(&mut c, now, &e1, "nm1", &[]);
            if let Some(t) = r.tasks.first() {
                assert_eq!((t.task_id.as_str(), t.attempt), (t2.as_str(), 1));
                break;
            }
        }
    }
    // Silent from its last poll at 2 s: lost at 12 s, not before, and found at once.
    assert_eq!(lost_at, Some(12_000));
    assert_eq!(released.len(), 1, "{released:?}");
    let v = c.view();
    let gone = v.executors.iter().find(|e| e.id.to_string() == e2).unwrap();
    let why = gone.reason.as_deref().unwrap();
    assert!(why.starts_with("lost: no poll for 10000 ms"), "{why}");
    assert_eq!(gone.counts_against_app, Some(false));
    assert_eq!(v.executor_failures, 0);
    assert!(v
        .recent_events
        .iter()
        .any(|e| e.name() == "executor_removed"));
    // The stopped executor comes back: it is no longer one of ours.
    let late = poll(&mut c, now + 10, &e2, "nm2", &[]);
    assert!(late.shutdown && late.tasks.is_empty());
    // e1 kept polling all along: never declared lost.
    assert!(c.pool.registry.live_host(e1.parse().unwrap()).is_some());
    assert!(c.ending().is_none());
}

/// An executor that never polls at all counts from its launch.
#[test]
fn an_executor_never_heard_from_counts_from_its_launch() {
    let mut c = core(Some(job(1, 1, 1))).with_executor_silence(Duration::from_secs(5));
    c.handle_start(0, 0);
    c.handle_timeout(1);
    let b = c.poll_allocate(1).unwrap();
    c.handle_allocated(1, b, answered());
    let ids = executors(&mut c, 2_000, &[("container_1_0001_01_000002", "nm1")]);
    let e: ExecutorId = ids[0].parse().unwrap();
    c.handle_timeout(5_000);
    c.handle_timeout(6_999);
    assert!(c.pool.registry.is_live(e));
    assert!(c.poll_timeout().unwrap() <= 7_000);
    c.handle_timeout(7_000);
    assert!(!c.pool.registry.is_live(e));
}

/// Without an embedded job, executors run the driver's own command and never poll the AM:
/// they are never declared silent (the external driver judges them).
#[test]
fn an_external_drivers_executors_are_not_judged_by_silence() {
    let mut c = core(None).with_executor_silence(Duration::from_secs(5));
    c.handle_start(0, 1);
    let b = c.poll_allocate(0).unwrap();
    c.handle_allocated(0, b, granted(&[("container_1_0001_01_000002", "nm1")]));
    let l = c.poll_launches();
    c.handle_launched(
        0,
        LaunchReport::Started {
            container: "container_1_0001_01_000002".into(),
        },
    );
    c.handle_timeout(600_000);
    assert!(c.pool.registry.is_live(l[0].executor));
}

/// A task past its `timeout_ms`: the executor running it hears "kill" on its next poll,
/// and the retry goes out (here to the same executor, the only one).
#[test]
fn a_timed_out_attempt_is_killed_through_the_next_poll() {
    let job = Job::from_json(
        &serde_json::json!({
            "name": "j",
            "executor": {"cores": 1, "memory_mb": 256, "initial_executors": 1},
            "tasks": [{"id": "hang", "command": "sleep 600", "timeout_ms": 2000}],
        })
        .to_string(),
    )
    .unwrap();
    let mut c = core(Some(JobRun::new(Driver::new(job, HashMap::new()).unwrap())));
    c.handle_start(0, 0);
    c.handle_timeout(1);
    let b = c.poll_allocate(1).unwrap();
    c.handle_allocated(1, b, answered());
    let ids = executors(&mut c, 500, &[("container_1_0001_01_000002", "nm1")]);
    let r = poll(&mut c, 1_000, &ids[0], "nm1", &[]);
    assert_eq!(r.tasks[0].attempt, 0);
    assert!(r.kill.is_empty());
    assert!(c.poll_timeout().unwrap() <= 3_000);
    c.handle_timeout(3_000);
    let r = poll(&mut c, 3_100, &ids[0], "nm1", &[]);
    assert_eq!(
        r.kill,
        [TaskAttempt {
            task_id: "hang".into(),
            attempt: 0
        }]
    );
    assert_eq!(
        r.tasks.iter().map(|t| t.attempt).collect::<Vec<_>>(),
        [1],
        "the retry"
    );
    // Told once.
    assert!(poll(&mut c, 3_400, &ids[0], "nm1", &[]).kill.is_empty());
}

/// A container that ends on its own reaches the driver as one event (the allocator's
/// notice, and the registry's exit, taken together once): its running task is queued
/// again and goes to the other executor; a repeated completion changes nothing.
#[test]
fn an_ended_container_reaches_the_driver_once_and_its_task_runs_elsewhere() {
    let mut c = core(Some(job(2, 1, 2)));
    c.handle_start(0, 0);
    let [(e1, t1), (e2, t2)] = two_busy_executors(&mut c);
    let ended = |c: &mut AmCore, now: u64| {
        let b = c.poll_allocate(now).expect("a heartbeat is due");
        let reply = RmReply::Allocated(Box::new(Allocation {
            response_id: 1,
            completed: vec![yarn_client::amrm::CompletedContainer {
                id: "container_1_0001_01_000003".into(),
                exit_status: 1,
                diagnostics: "Exception from container-launch".into(),
            }],
            ..Default::default()
        }));
        c.handle_allocated(now, b, reply);
    };
    ended(&mut c, 10_000);
    assert!(c.pool.take_gone().is_empty(), "taken by the loop already");
    let gone = c.view();
    let gone = gone
        .executors
        .iter()
        .find(|e| e.id.to_string() == e2)
        .unwrap();
    assert_eq!(gone.counts_against_app, Some(true));
    // e1 finishes its own task and gets e2's, attempt 1 (the loss counted no failure).
    let r = poll_results(&mut c, 10_100, &e1, "nm1", &[(&t1, 0)]);
    let got: Vec<_> = r
        .tasks
        .iter()
        .map(|t| (t.task_id.clone(), t.attempt))
        .collect();
    assert_eq!(got, [(t2.clone(), 1)]);
    let driver = c.job().unwrap().driver();
    assert_eq!(driver.scheduler().failures(&t2), Some(0));
    assert_eq!(driver.scheduler().executor_count(), 1);
    // The same completion again: nothing new for the driver.
    ended(&mut c, 20_000);
    assert_eq!(c.job().unwrap().driver().scheduler().running_count(), 1);
    assert!(c.ending().is_none());
}

/// The poll body keeps its wire form (the id as a string, as executors of older builds
/// send it): it parses, its executor is the registry's typed one, and a claim that is no
/// executor id, or an id this AM does not run, gets the same refusal telling it to stop.
#[test]
fn a_poll_body_names_its_executor_as_a_string_and_a_bad_id_is_refused() {
    let mut c = core(Some(job(4, 1, 2)));
    c.handle_start(0, 0);
    let ids = two_executors(&mut c);
    assert_eq!(ids, ["1", "2"]);
    let body = r#"{"executor_id":"1","host":"nm1","free_cpus":1,"finished":[],"running":[]}"#;
    let request: PollRequest = serde_json::from_str(body).unwrap();
    let r: PollReply = fixtures::ask(&mut c, 2_000, |reply| DriverCommand::ExecutorPoll {
        request,
        reply,
    });
    assert!(!r.shutdown && r.tasks.len() == 1, "{r:?}");
    assert_eq!(
        c.view()
            .executor(ExecutorId::new(1))
            .map(|e| e.host.as_str()),
        Some("nm1")
    );
    for bad in ["x", "07", "-1", "9"] {
        let r = poll(&mut c, 2_100, bad, "nm1", &[]);
        assert!(r.shutdown, "{bad}: {r:?}");
        assert_eq!(
            r.reason.as_deref(),
            Some(&*format!(
                "executor {bad:?} is not a live executor of this ApplicationMaster"
            )),
        );
    }
}

/// YARN reports these containers completed with these exit statuses on the next heartbeat.
fn complete(c: &mut AmCore, now: u64, exits: &[(&str, i32)]) {
    let b = c.poll_allocate(now).expect("a heartbeat is due");
    let reply = RmReply::Allocated(Box::new(Allocation {
        response_id: 1,
        completed: exits
            .iter()
            .map(|(id, status)| yarn_client::amrm::CompletedContainer {
                id: id.to_string(),
                exit_status: *status,
                diagnostics: String::new(),
            })
            .collect(),
        ..Default::default()
    }));
    c.handle_allocated(now, b, reply);
}

/// The containers asked for on the next heartbeat.
fn next_ask(c: &mut AmCore, now: u64) -> i32 {
    let b = c.poll_allocate(now).expect("a heartbeat is due");
    let n = asked(&b);
    c.handle_allocated(now, b, answered());
    n
}

const C2: &str = "container_1_0001_01_000002";
const C3: &str = "container_1_0001_01_000003";
const C4: &str = "container_1_0001_01_000004";

/// An executors-only app with two executors running, under `completion`.
fn two_plain_executors(completion: Completion, max_failures: usize) -> AmCore {
    let mut c =
        AmCore::new(pool(), None, Duration::from_secs(3), max_failures).with_completion(completion);
    c.handle_start(0, 2);
    executors(&mut c, 0, &[(C2, "nm1"), (C3, "nm2")]);
    c
}

/// DistributedShell's rule: an executor that exits 0 is done and not replaced; the last
/// one's exit 0 ends the app SUCCEEDED.
#[test]
fn an_executors_only_app_succeeds_when_every_executor_exited_0() {
    let mut c = two_plain_executors(Completion::ExecutorsSucceed, 10);
    assert_eq!(c.progress(), 0.0);
    complete(&mut c, 10_000, &[(C2, 0)]);
    assert!(c.ending().is_none());
    assert_eq!(c.progress(), 0.5, "one of two executors done");
    assert_eq!(
        next_ask(&mut c, 20_000),
        0,
        "a finished executor is not replaced"
    );
    complete(&mut c, 30_000, &[(C3, 0)]);
    assert_eq!(c.progress(), 1.0);
    match c.ending() {
        Some(Ending::Finish {
            outcome: Outcome::Succeeded,
            diagnostics,
        }) => assert!(
            diagnostics.contains("all 2 executors exited 0"),
            "{diagnostics}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(c.drained(30_000), "no job: nothing to drain");
}

/// A failed executor is replaced, an exit 0 still counts afterwards, and the failure limit
/// ends the app FAILED.
#[test]
fn failed_executors_are_restarted_until_the_failure_limit() {
    let mut c = two_plain_executors(Completion::ExecutorsSucceed, 2);
    complete(&mut c, 10_000, &[(C2, 1)]);
    assert!(c.ending().is_none());
    assert_eq!(
        next_ask(&mut c, 20_000),
        1,
        "the failed one is asked for again"
    );
    complete(&mut c, 30_000, &[(C3, 0)]);
    assert!(c.ending().is_none(), "one of two done, one failure of 2");
    executors(&mut c, 40_000, &[(C4, "nm1")]);
    complete(&mut c, 50_000, &[(C4, 7)]);
    assert_failed_with(&c, "2 executor failures (limit 2)");
}

/// The app ended FAILED with diagnostics that say `what`.
fn assert_failed_with(c: &AmCore, what: &str) {
    match c.ending() {
        Some(Ending::Finish {
            outcome: Outcome::Failed,
            diagnostics,
        }) => assert!(diagnostics.contains(what), "{diagnostics}"),
        other => panic!("{other:?}"),
    }
}

/// `--executor-failures-validity-interval`: a failure older than the window no longer
/// counts, so two failures 90 s apart stay under a limit of 2 with a 60 s window.
#[test]
fn failures_older_than_the_validity_window_stop_counting() {
    let nodes: Vec<NodeInfo> = HOSTS.iter().map(|h| node(h, "/rack1")).collect();
    let config = crate::allocator::tracker::AllocatorConfig {
        failure_validity_ms: Some(60_000),
        ..Default::default()
    };
    let mut c = AmCore::new(
        fixtures::pool_with(&nodes, 10, config),
        None,
        Duration::from_secs(3),
        2,
    )
    .with_completion(Completion::KeepRunning);
    c.handle_start(0, 2);
    executors(&mut c, 0, &[(C2, "nm1"), (C3, "nm2")]);
    complete(&mut c, 10_000, &[(C2, 1)]);
    executors(&mut c, 20_000, &[(C4, "nm1")]);
    complete(&mut c, 100_000, &[(C4, 1)]);
    assert!(
        c.ending().is_none(),
        "the first failure is 90 s old: one counts, limit 2"
    );
    // A third failure within the window of the second reaches the limit.
    complete(&mut c, 110_000, &[(C3, 1)]);
    assert_failed_with(&c, "2 executor failures (limit 2)");
}

/// `--keep-running`: executors that exit 0 are replaced and the app runs on.
#[test]
fn a_keep_running_app_replaces_executors_that_exit_0() {
    let mut c = two_plain_executors(Completion::KeepRunning, 10);
    complete(&mut c, 10_000, &[(C2, 0), (C3, 0)]);
    assert!(c.ending().is_none());
    assert_eq!(next_ask(&mut c, 20_000), 2);
}

/// The progress the RM sees: an app kept running has no measure until its driver reports
/// one, which is then what the RM and `/v1/state` show, clamped to 0..1.
#[test]
fn an_external_drivers_progress_is_what_the_rm_sees() {
    let mut c = two_plain_executors(Completion::KeepRunning, 10);
    complete(&mut c, 10_000, &[(C2, 0)]);
    assert_eq!(c.progress(), 0.0, "a service app has no measure of its own");
    c.handle_command(11_000, DriverCommand::Progress(0.25));
    assert_eq!(c.progress(), 0.25);
    assert_eq!(c.view().progress, 0.25);
    c.handle_command(12_000, DriverCommand::Progress(7.0));
    assert_eq!(c.progress(), 1.0);
}

/// A job's progress is its succeeded tasks over all.
#[test]
fn a_jobs_progress_counts_succeeded_tasks() {
    let mut c = core(Some(job(4, 1, 2)));
    c.handle_start(0, 0);
    assert_eq!(c.progress(), 0.0);
    let [(e1, t1), (_, _)] = two_busy_executors(&mut c);
    poll(&mut c, 3_000, &e1, "nm1", &[&t1]);
    assert_eq!(c.progress(), 0.25);
    assert_eq!(c.view().progress, 0.25);
}

/// A driver's demand hands the app's end to the driver: exits 0 no longer end it.
#[test]
fn a_drivers_demand_turns_the_executors_only_rule_off() {
    let mut c = two_plain_executors(Completion::ExecutorsSucceed, 10);
    c.handle_command(
        500,
        DriverCommand::SetDemand(Demand {
            target_executors: 2,
            ..Default::default()
        }),
    );
    complete(&mut c, 10_000, &[(C2, 0), (C3, 0)]);
    assert!(c.ending().is_none());
    assert_eq!(next_ask(&mut c, 20_000), 2, "the driver's target holds");
}

/// With no executors to count, the rule has nothing to end on: the app waits for a driver.
#[test]
fn an_app_of_no_executors_waits_for_a_driver() {
    let mut c = AmCore::new(pool(), None, Duration::from_secs(3), 10)
        .with_completion(Completion::ExecutorsSucceed);
    c.handle_start(0, 0);
    let b = c.poll_allocate(0).unwrap();
    c.handle_allocated(0, b, answered());
    c.handle_timeout(10_000);
    assert!(c.ending().is_none());
}
