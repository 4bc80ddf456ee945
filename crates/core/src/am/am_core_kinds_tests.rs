//! An app with two executor kinds, through the core: each kind asked at its own priority
//! and size, grants told apart by priority, executor ids in each kind's stripe, a job's
//! tasks only on executors of their kind, the demand per kind and the report as one.

use std::collections::BTreeMap;

use yarn_client::amrm::Allocation;
use yarn_client::request_table::AmrmState;

use super::tests::{poll, poll_results};
use super::*;
use crate::allocator::tracker::{Allocator, AllocatorConfig};
use crate::am::registry::Registry;
use crate::am::{cluster_view, fixtures};
use crate::driver::Job;
use crate::ids::IdStripe;
use yarn_am_wire::spec::{ExecutorKind, ExecutorSpec};

const ACCEL: &str = "example.com/accelerator";

fn spec() -> ExecutorSpec {
    let mut spec = fixtures::spec(4);
    spec.kinds = vec![ExecutorKind {
        name: "accel".into(),
        memory_mb: 512,
        vcores: 1,
        initial: 0,
        min: 0,
        max: 2,
        node_label: None,
        resources: BTreeMap::from([(ACCEL.to_string(), 1)]),
        command: None,
    }];
    spec
}

fn pool() -> Pool {
    pool_of(&spec())
}

/// The pool of `spec`'s kinds on nm1 and nm2, each allocator in its stripe of the spec's
/// width (room for declared kinds included).
fn pool_of(spec: &ExecutorSpec) -> Pool {
    let nodes: Vec<_> = ["nm1", "nm2"]
        .iter()
        .map(|h| fixtures::node(h, "/rack1", 4096, 4))
        .collect();
    let kinds = spec.all_kinds();
    let (topo, _) = cluster_view::from_nodes(&nodes, &kinds[0]);
    let allocators = kinds
        .iter()
        .enumerate()
        .map(|(k, kind)| {
            Allocator::new(AllocatorConfig {
                ids: IdStripe {
                    kind: k as u64,
                    kinds: spec.stripe_width() as u64,
                },
                ..AllocatorConfig::default()
            })
            .with_cluster(topo.clone(), cluster_view::from_nodes(&nodes, kind).1)
        })
        .collect();
    let table = AmrmState::new(cluster_view::rack_resolver(&topo), None);
    Pool::with_kinds(
        allocators,
        table,
        Registry::new(),
        spec,
        "application_1_0001".into(),
    )
}

fn job() -> Job {
    Job::from_json(
        &serde_json::json!({
            "name": "kinds",
            "executor": {"cores": 1, "memory_mb": 256},
            "kinds": {"accel": {"cores": 1, "memory_mb": 512, "resources": {ACCEL: 1}}},
            "allocation": {"backlog_timeout_ms": 1},
            "tasks": [
                {"id": "plain-0", "command": "true"},
                {"id": "accel-0", "command": "true", "kind": "accel"},
                {"id": "plain-1", "command": "true"},
            ],
        })
        .to_string(),
    )
    .unwrap()
}

fn core() -> AmCore {
    let pool = pool();
    let names: Vec<String> = spec().all_kinds().into_iter().map(|k| k.name).collect();
    let run = JobRun::for_job(&job(), pool.topology(), &names).unwrap();
    AmCore::new(pool, Some(run), Duration::from_secs(3), 10)
}

/// A granted container as YARN sends it for a request at `priority`.
fn container(n: u32, host: &str, priority: i32) -> yarn_client::amrm::AllocatedContainer {
    let mut c = fixtures::container(&format!("container_1_0001_01_{n:06}"), host);
    c.priority = priority;
    if priority == 2 {
        c.memory_mb = 512;
        c.resources = vec![(ACCEL.into(), 1)];
    }
    c
}

#[test]
fn each_kind_is_asked_at_its_own_priority_and_runs_only_its_own_tasks() {
    let mut c = core();
    c.handle_start(0, 0);
    c.handle_timeout(5);
    let b = c.poll_allocate(5).expect("the first demand goes out");
    // Two request keys: plain executors of 256 MB at priority 1 (the ramp-up's first
    // step: one), one 512 MB executor with an accelerator at priority 2.
    let any: Vec<_> = b.asks.iter().filter(|a| a.resource_name == "*").collect();
    let at = |p: i32| any.iter().find(|a| a.priority.0 == p).copied();
    let plain = at(1).expect("the default kind's ask");
    let accel = at(2).expect("the accel kind's ask");
    assert_eq!((plain.num_containers, plain.capability.memory_mb), (1, 256));
    assert!(plain.resources.is_empty());
    assert_eq!((accel.num_containers, accel.capability.memory_mb), (1, 512));
    assert_eq!(accel.resources, vec![(ACCEL.to_string(), 1)]);
    c.handle_allocated(5, b, super::tests::answered());

    // YARN grants one of each; the priority says whose.
    let b = c.poll_allocate(1_000).expect("a heartbeat is due");
    let reply = RmReply::Allocated(Box::new(Allocation {
        response_id: 1,
        allocated: vec![container(2, "nm1", 2), container(3, "nm2", 1)],
        ..Default::default()
    }));
    c.handle_allocated(1_000, b, reply);
    let launches = c.poll_launches();
    let by_kind: BTreeMap<usize, String> = launches
        .iter()
        .map(|l| (l.kind, l.executor.to_string()))
        .collect();
    // Kind 0 numbers 1, 3, ...; kind 1 numbers 2, 4, ...
    assert_eq!(by_kind, BTreeMap::from([(0, "1".into()), (1, "2".into())]));
    for l in &launches {
        c.handle_launched(
            1_000,
            LaunchReport::Started {
                container: l.container.id.clone(),
            },
        );
    }
    let state = c.view();
    let kinds: Vec<(&str, u32)> = state
        .kinds
        .iter()
        .map(|k| (k.name.as_str(), k.running))
        .collect();
    assert_eq!(kinds, [("default", 1), ("accel", 1)]);
    let accel_view = state
        .executors
        .iter()
        .find(|e| e.id.to_string() == "2")
        .unwrap();
    assert_eq!(accel_view.kind.as_deref(), Some("accel"));
    assert_eq!(
        accel_view.resources,
        BTreeMap::from([(ACCEL.to_string(), 1)])
    );

    // The accel executor is handed the accel task only; the plain one a plain task.
    let accel = poll(&mut c, 2_000, "2", "nm1", &[]);
    let ids: Vec<&str> = accel.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["accel-0"]);
    let plain = poll(&mut c, 2_000, "1", "nm2", &[]);
    let ids: Vec<&str> = plain.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["plain-0"]);

    // The accel task is done: its kind asks for nothing more and its executor is told to
    // stop, while the plain kind goes on.
    let reply = poll(&mut c, 3_000, "2", "nm1", &["accel-0"]);
    assert!(reply.shutdown, "{reply:?}");
    assert!(c.ending().is_none());
    assert_eq!(c.view().kinds[1].demand.target_executors, 0);
    let reply = poll_results(&mut c, 3_100, "1", "nm2", &[("plain-0", 0)]);
    let ids: Vec<&str> = reply.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["plain-1"]);
    poll(&mut c, 3_200, "1", "nm2", &["plain-1"]);
    assert!(matches!(
        c.ending(),
        Some(Ending::Finish {
            outcome: Outcome::Succeeded,
            ..
        })
    ));
    // One report, in job order, every task on the right kind's executor.
    let summary = c.job_summary().expect("the job's summary");
    assert_eq!((summary.tasks_total, summary.tasks_succeeded), (3, 3));
    let ran: Vec<(&str, String)> = summary
        .tasks
        .iter()
        .map(|t| (t.task_id.as_str(), t.executor_id.to_string()))
        .collect();
    assert_eq!(
        ran,
        [
            ("plain-0", "1".to_string()),
            ("accel-0", "2".to_string()),
            ("plain-1", "1".to_string())
        ]
    );
}

#[test]
fn a_demand_names_its_kind_and_an_unknown_kind_changes_nothing() {
    let mut c = AmCore::new(pool(), None, Duration::from_secs(3), 10);
    c.handle_start(0, 0);
    let demand = |target, kind: Option<&str>| {
        DriverCommand::SetDemand(yarn_am_wire::driver_api::Demand {
            target_executors: target,
            kind: kind.map(str::to_string),
            ..Default::default()
        })
    };
    c.handle_command(1, demand(1, Some("accel")));
    c.handle_command(1, demand(3, None));
    c.handle_command(1, demand(9, Some("nope")));
    let state = c.view();
    let targets: Vec<u32> = state
        .kinds
        .iter()
        .map(|k| k.demand.target_executors)
        .collect();
    assert_eq!(targets, [3, 1]);
    let b = c.poll_allocate(2).expect("the demand goes out");
    let any: BTreeMap<i32, i32> = b
        .asks
        .iter()
        .filter(|a| a.resource_name == "*")
        .map(|a| (a.priority.0, a.num_containers))
        .collect();
    // The accel kind's max is 2; the default's 4.
    assert_eq!(any, BTreeMap::from([(1, 3), (2, 1)]));
}

/// The pool of [`pool`] with room for 4 kinds, so that 2 may be declared while it runs.
fn roomy_core() -> AmCore {
    let mut spec = spec();
    spec.max_kinds = 4;
    let mut pool = pool_of(&spec);
    pool.allow_declared_kinds(AllocatorConfig::default(), crate::ids::ExecutorId::new(1));
    AmCore::new(pool, None, Duration::from_secs(3), 10)
}

fn declaration(name: &str, vcores: i32) -> yarn_am_wire::driver_api::KindDeclaration {
    yarn_am_wire::driver_api::KindDeclaration {
        name: name.into(),
        memory_mb: 1024,
        vcores,
        resources: BTreeMap::from([(ACCEL.to_string(), 1)]),
        env: BTreeMap::from([("SPARK_YARNAM_PROFILE_ID".into(), "1".into())]),
        max: Some(3),
    }
}

fn declare(
    c: &mut AmCore,
    d: yarn_am_wire::driver_api::KindDeclaration,
) -> Result<yarn_am_wire::driver_api::KindDeclared, super::super::pool::DeclareError> {
    crate::am::fixtures::ask(c, 1, |reply| DriverCommand::DeclareKind {
        declaration: d,
        reply,
    })
}

#[test]
fn a_kind_declared_while_the_app_runs_is_asked_at_the_next_priority_in_its_own_stripe() {
    let mut c = roomy_core();
    c.handle_start(0, 0);
    let made = declare(&mut c, declaration("rp1", 2)).unwrap();
    assert_eq!((made.index, made.created), (2, true));
    assert!(
        c.poll_nodes_wanted(),
        "a new size: the node list is fetched again"
    );
    // The same again is a no-op; the same name with other cores names the difference.
    assert!(!declare(&mut c, declaration("rp1", 2)).unwrap().created);
    let err = declare(&mut c, declaration("rp1", 3))
        .unwrap_err()
        .to_string();
    assert!(err.contains("vcores (2 there, 3 asked)"), "{err}");
    // A kind given at submit cannot be declared over, even with its own shape.
    let mut accel = declaration("accel", 1);
    accel.memory_mb = 512;
    assert!(declare(&mut c, accel).is_err());

    let demand = yarn_am_wire::driver_api::Demand {
        target_executors: 5,
        kind: Some("rp1".into()),
        ..Default::default()
    };
    c.handle_command(2, DriverCommand::SetDemand(demand));
    assert_eq!(c.view().kinds[2].name, "rp1");
    assert_eq!(c.view().kinds[2].demand.target_executors, 5);
    let b = c.poll_allocate(3).expect("the demand goes out");
    let ask = b
        .asks
        .iter()
        .find(|a| a.resource_name == "*" && a.priority.0 == 3)
        .expect("the declared kind's ask at priority 3");
    // Its own size and resources; at most its max of 3.
    assert_eq!(
        (
            ask.num_containers,
            ask.capability.memory_mb,
            ask.capability.vcores
        ),
        (3, 1024, 2)
    );
    assert_eq!(ask.resources, vec![(ACCEL.to_string(), 1)]);
    c.handle_allocated(3, b, super::tests::answered());

    let b = c.poll_allocate(1_000).expect("a heartbeat is due");
    let mut granted = container(7, "nm1", 3);
    granted.memory_mb = 1024;
    granted.vcores = 2;
    let reply = RmReply::Allocated(Box::new(Allocation {
        response_id: 1,
        allocated: vec![granted],
        ..Default::default()
    }));
    c.handle_allocated(1_000, b, reply);
    let launches = c.poll_launches();
    assert_eq!(launches.len(), 1);
    // Kind 2 of 4 numbers 3, 7, 11, ...; the launch carries the kind's shape and env.
    let l = &launches[0];
    assert_eq!((l.kind, l.executor.to_string()), (2, "3".to_string()));
    let d = l.declared.as_ref().expect("a declared kind's launch");
    assert_eq!(d.shape.vcores, 2);
    assert_eq!(d.env["SPARK_YARNAM_PROFILE_ID"], "1");
    c.handle_launched(
        1_000,
        LaunchReport::Started {
            container: l.container.id.clone(),
        },
    );
    let view = c.view();
    let e = view
        .executors
        .iter()
        .find(|e| e.id.to_string() == "3")
        .unwrap();
    assert_eq!(e.kind.as_deref(), Some("rp1"));
    assert_eq!(view.kinds[2].running, 1);
}

#[test]
fn declarations_beyond_the_room_reserved_are_refused() {
    let mut c = roomy_core();
    c.handle_start(0, 0);
    declare(&mut c, declaration("rp1", 1)).unwrap();
    assert_eq!(declare(&mut c, declaration("rp2", 1)).unwrap().index, 3);
    let err = declare(&mut c, declaration("rp3", 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("room for 4 executor kinds"), "{err}");
    // An app without room (the plain pool: 2 kinds, 2 stripes) declares none.
    let mut c = AmCore::new(pool(), None, Duration::from_secs(3), 10);
    assert!(declare(&mut c, declaration("rp1", 1)).is_err());
}

#[test]
fn an_adopted_executor_of_a_kind_this_attempt_does_not_know_is_released() {
    let mut c = roomy_core();
    // Executor 4 is of stripe 3 (4 kinds): declared with the earlier attempt, unknown now.
    // Executor 2 is of the accel kind, known.
    let ids = std::collections::HashMap::from([
        (
            "container_1_0001_01_000002".to_string(),
            crate::ids::ExecutorId::new(4),
        ),
        (
            "container_1_0001_01_000003".to_string(),
            crate::ids::ExecutorId::new(2),
        ),
    ]);
    let adopted = c.handle_adopt(
        0,
        &[
            fixtures::container("container_1_0001_01_000002", "nm1"),
            fixtures::container("container_1_0001_01_000003", "nm2"),
        ],
        &ids,
        &[],
    );
    assert_eq!(adopted, 1);
    c.handle_start(0, 0);
    let view = c.view();
    let live: Vec<String> = view.executors.iter().map(|e| e.id.to_string()).collect();
    assert_eq!(live, ["2"]);
    let b = c.poll_allocate(1).expect("the release goes out");
    assert_eq!(b.releases.len(), 1, "{:?}", b.releases);
}
