//! The core's answers to the RM taking resources back: a preemption request, a
//! node in graceful decommission, a host whose executors keep failing. Built on the
//! helpers of `am_core_tests`.

use yarn_client::amrm::{Allocation, CompletedContainer, NodeReport, Preemption, PreemptionAsk};

use super::tests::{core, job, poll, poll_results, two_busy_executors};
use super::*;
use crate::am::fixtures;

const C1: &str = "container_1_0001_01_000002";
const C2: &str = "container_1_0001_01_000003";

fn reply(now: u64, c: &mut AmCore, a: Allocation) -> AllocateBatch {
    let b = c.poll_allocate(now).expect("a heartbeat is due");
    c.handle_allocated(now, b, RmReply::Allocated(Box::new(a)));
    c.poll_allocate(now + 10_000).expect("the next heartbeat")
}

fn released_ids(b: &AllocateBatch) -> Vec<i64> {
    b.releases.iter().map(|c| c.id).collect()
}

fn completed(id: &str, exit_status: i32) -> Allocation {
    Allocation {
        response_id: 1,
        completed: vec![CompletedContainer {
            id: id.into(),
            exit_status,
            diagnostics: String::new(),
        }],
        ..Default::default()
    }
}

fn exited<'a>(v: &'a StateView, id: &str) -> &'a driver_api::ExecutorView {
    v.executors.iter().find(|e| e.id.to_string() == id).unwrap()
}

/// The RM marks the busy executor's container; the AM gives back the idle one instead,
/// before any kill: its container is released in the next call, the exit says why and
/// does not count; the busy executor keeps its task.
#[test]
fn the_am_gives_back_an_idle_executor_for_the_one_the_rm_marked() {
    let mut c = core(Some(job(2, 1, 2)));
    c.handle_start(0, 0);
    let [(e1, t1), (e2, _t2)] = two_busy_executors(&mut c);
    // e1 finishes its task: the job has no more, e1 is idle.
    let r = poll_results(&mut c, 3_000, &e1, "nm1", &[(&t1, 0)]);
    assert!(r.tasks.is_empty());
    let ask = Allocation {
        response_id: 1,
        preemption: Some(Preemption {
            strict: vec![],
            containers: vec![C2.into()],
            resources: vec![PreemptionAsk {
                memory_mb: 128,
                vcores: 1,
                count: 1,
            }],
        }),
        ..Default::default()
    };
    let next = reply(4_000, &mut c, ask);
    assert_eq!(released_ids(&next), [2], "e1's container goes back");
    let v = c.view();
    assert_eq!(
        (v.preemption.asks, v.preemption.given_back),
        (1, 1),
        "{:?}",
        v.preemption
    );
    c.handle_allocated(
        14_000,
        next,
        RmReply::Allocated(Box::new(completed(C1, -100))),
    );
    let v = c.view();
    let e = exited(&v, &e1);
    assert_eq!(e.counts_against_app, Some(false));
    assert!(
        e.reason
            .as_deref()
            .unwrap()
            .contains("preemption request (idle)"),
        "{e:?}"
    );
    assert_eq!(v.executor_failures, 0);
    assert!(c
        .job()
        .unwrap()
        .driver()
        .scheduler()
        .has_executor(e2.parse().unwrap()));
}

/// A container the RM kills by preemption (-102) is no executor failure, and its task runs
/// again without counting a failure.
#[test]
fn an_executor_the_rm_preempted_counts_no_failure() {
    let mut c = core(Some(job(2, 1, 2)));
    c.handle_start(0, 0);
    let [_, (e2, t2)] = two_busy_executors(&mut c);
    let b = c.poll_allocate(5_000).unwrap();
    c.handle_allocated(5_000, b, RmReply::Allocated(Box::new(completed(C2, -102))));
    let v = c.view();
    assert_eq!(exited(&v, &e2).counts_against_app, Some(false));
    assert_eq!(v.executor_failures, 0);
    let s = c.job().unwrap().driver().scheduler();
    assert_eq!(s.failures(&t2), Some(0));
    assert_eq!(s.pending_count(), 1);
}

/// nm2 turns DECOMMISSIONING: YARN's blacklist gets it, its executor finishes its task and
/// gets no new one, is given back once idle (not counted), while its replacement is asked
/// for at once; nm2 running again leaves the blacklist.
#[test]
fn a_decommissioning_node_drains_its_executors_and_gets_no_new_task() {
    let mut c = core(Some(job(4, 1, 2)));
    c.handle_start(0, 0);
    let [(e1, _), (e2, t2)] = two_busy_executors(&mut c);
    let report = |decommissioning: bool| NodeReport {
        host: "nm2".into(),
        rack: Some("/rack1".into()),
        running: !decommissioning,
        memory_mb: Some(4096),
        vcores: Some(4),
        decommissioning,
        decommissioning_timeout_s: decommissioning.then_some(60),
        labels: vec![],
    };
    let next = reply(
        3_000,
        &mut c,
        Allocation {
            response_id: 1,
            updated_nodes: vec![report(true)],
            ..Default::default()
        },
    );
    assert_eq!(next.exclusions.additions, ["nm2"]);
    assert!(next.releases.is_empty(), "e2 runs a task: not released yet");
    assert_eq!(c.pool.draining_executors(), [e2.parse().unwrap()]);
    let v = c.view();
    assert_eq!(v.held_back_hosts[0].host, "nm2");
    assert_eq!(v.held_back_hosts[0].decommission_timeout_s, Some(60));
    // e2 finishes: no new task, not told to stop, given back.
    let r = poll_results(&mut c, 4_000, &e2, "nm2", &[(&t2, 0)]);
    assert!(r.tasks.is_empty() && !r.shutdown, "{r:?}");
    assert!(c.pool.draining_executors().is_empty());
    c.handle_allocated(4_000, next, RmReply::Allocated(Box::default()));
    let b = c.poll_allocate(20_000).unwrap();
    assert_eq!(released_ids(&b), [3]);
    c.handle_allocated(20_000, b, RmReply::Allocated(Box::new(completed(C2, -100))));
    let v = c.view();
    let e = exited(&v, &e2);
    assert_eq!(e.counts_against_app, Some(false));
    assert!(
        e.reason.as_deref().unwrap().contains("decommissioning"),
        "{e:?}"
    );
    // e1 (nm1) still gets tasks.
    assert!(!poll(&mut c, 21_000, &e1, "nm1", &[]).shutdown);
    // nm2 runs again: off the blacklist.
    let next = reply(
        30_000,
        &mut c,
        Allocation {
            response_id: 1,
            updated_nodes: vec![report(false)],
            ..Default::default()
        },
    );
    assert_eq!(next.exclusions.removals, ["nm2"]);
    assert!(c.view().held_back_hosts.is_empty());
}

/// Two executors failing on nm1 within the window exclude nm1 from requests (YARN's
/// blacklist) for the exclusion time, then it is released.
#[test]
fn a_host_whose_executors_keep_failing_is_excluded_for_a_while() {
    let mut c = core(None);
    c.pool.set_exclusion(2, 60_000, 30_000);
    c.handle_start(0, 2);
    let b = c.poll_allocate(0).unwrap();
    let grant = |ids: &[&str]| Allocation {
        response_id: 1,
        allocated: ids
            .iter()
            .map(|id| fixtures::container(id, "nm1"))
            .collect(),
        ..Default::default()
    };
    c.handle_allocated(0, b, RmReply::Allocated(Box::new(grant(&[C1, C2]))));
    for l in c.poll_launches() {
        let container = l.container.id.clone();
        c.handle_launched(100, LaunchReport::Started { container });
    }
    let b = c.poll_allocate(5_000).unwrap();
    let both = Allocation {
        completed: completed(C1, 1)
            .completed
            .into_iter()
            .chain(completed(C2, 1).completed)
            .collect(),
        ..completed(C1, 1)
    };
    c.handle_allocated(5_000, b, RmReply::Allocated(Box::new(both)));
    let b = c.poll_allocate(10_000).unwrap();
    assert_eq!(b.exclusions.additions, ["nm1"]);
    let v = c.view();
    assert_eq!(v.held_back_hosts[0].why, "failures");
    assert_eq!(v.held_back_hosts[0].excluded_until_ms, Some(35_000));
    c.handle_allocated(10_000, b, RmReply::Allocated(Box::default()));
    let b = c.poll_allocate(36_000).unwrap();
    assert_eq!(b.exclusions.removals, ["nm1"]);
    assert!(c.view().held_back_hosts.is_empty());
}

/// Every host excluded for failures: the app fails at once, saying so, instead of waiting
/// for an exclusion to end.
#[test]
fn every_host_excluded_for_failures_fails_the_app() {
    let mut c = core(None);
    c.pool.set_exclusion(1, 60_000, 300_000);
    c.handle_start(0, 2);
    let b = c.poll_allocate(0).unwrap();
    let grant = Allocation {
        response_id: 1,
        allocated: vec![
            fixtures::container(C1, "nm1"),
            fixtures::container(C2, "nm2"),
        ],
        ..Default::default()
    };
    c.handle_allocated(0, b, RmReply::Allocated(Box::new(grant)));
    for l in c.poll_launches() {
        let container = l.container.id.clone();
        c.handle_launched(100, LaunchReport::Started { container });
    }
    let b = c.poll_allocate(5_000).unwrap();
    c.handle_allocated(5_000, b, RmReply::Allocated(Box::new(completed(C1, 1))));
    assert!(c.ending().is_none(), "nm2 is left");
    let b = c.poll_allocate(10_000).unwrap();
    c.handle_allocated(10_000, b, RmReply::Allocated(Box::new(completed(C2, 1))));
    let why = format!("{:?}", c.ending());
    assert!(why.contains("every host"), "{why}");
}
