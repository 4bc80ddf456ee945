//! The event-driven allocator, on the scenarios of Spark's YarnAllocatorSuite restated as
//! events and expected actions, plus the leak Spark has (SPARK-49783).

use std::sync::Arc;

use yarn_am_core::allocator::matching::{Container, Locality};
use yarn_am_core::allocator::tracker::{
    Action, Allocator, AllocatorConfig, ContainerExit, DriverNotice, Event, ExecutorId,
};
use yarn_am_core::allocator::{Demand, HostName, RackName, Strategy};

struct Am {
    alloc: Allocator,
    next_container: u32,
    now: u64,
}

impl Am {
    fn new(target: u32) -> Am {
        Am::with_config(
            target,
            AllocatorConfig {
                strategy: Strategy::Spark,
                ..AllocatorConfig::default()
            },
        )
    }

    fn with_config(target: u32, config: AllocatorConfig) -> Am {
        let mut am = Am {
            alloc: Allocator::new(config),
            next_container: 1,
            now: 0,
        };
        am.target(target);
        am
    }

    fn target(&mut self, n: u32) -> Vec<Action> {
        self.alloc.on_event(
            self.now,
            Event::DemandChanged(Demand {
                target_executors: n,
                ..Demand::default()
            }),
        );
        self.alloc.on_event(self.now, Event::Heartbeat)
    }

    fn container(&mut self, host: &str) -> Container {
        let id = format!("container_1_0001_01_{:06}", self.next_container);
        self.next_container += 1;
        Container {
            id: Arc::from(id),
            host: HostName::from(host),
            rack: RackName::from("/default-rack"),
            allocation_request_id: None,
        }
    }

    /// Grants containers and reports every launched executor as up.
    fn grant(&mut self, hosts: &[&str]) -> (Vec<Container>, Vec<Action>) {
        let cs: Vec<Container> = hosts.iter().map(|h| self.container(h)).collect();
        let actions = self
            .alloc
            .on_event(self.now, Event::ContainersGranted(cs.clone()));
        for a in &actions {
            if let Action::LaunchExecutor { container, .. } = a {
                self.alloc.on_event(
                    self.now,
                    Event::ExecutorLaunched {
                        container: container.id.clone(),
                    },
                );
            }
        }
        (cs, actions)
    }

    fn complete(&mut self, cs: &[&Container], status: i32) -> Vec<Action> {
        let done = cs
            .iter()
            .map(|c| ContainerExit {
                id: c.id.clone(),
                exit_status: status,
                diagnostics: String::new(),
            })
            .collect();
        self.alloc
            .on_event(self.now, Event::ContainersCompleted(done))
    }
}

fn launches(actions: &[Action]) -> usize {
    actions
        .iter()
        .filter(|a| matches!(a, Action::LaunchExecutor { .. }))
        .count()
}

fn releases(actions: &[Action]) -> Vec<Arc<str>> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::ReleaseContainer(id) => Some(id.clone()),
            _ => None,
        })
        .collect()
}

fn executor_of(actions: &[Action], c: &Container) -> ExecutorId {
    actions
        .iter()
        .find_map(|a| match a {
            Action::LaunchExecutor {
                executor,
                container,
                ..
            } if container.id == c.id => Some(*executor),
            _ => None,
        })
        .expect("launched")
}

#[test]
fn single_container_allocated() {
    let mut am = Am::new(1);
    assert_eq!(am.alloc.pending_requests(), 1);
    let (cs, actions) = am.grant(&["host1"]);
    assert_eq!(launches(&actions), 1);
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::RequestSatisfied(_))),
        "the matched request leaves the table"
    );
    assert_eq!(am.alloc.running(), 1);
    assert_eq!(am.alloc.running_on("host1"), 1);
    assert_eq!(am.alloc.pending_requests(), 0);
    assert!(releases(&actions).is_empty(), "{:?}", cs);
}

#[test]
fn no_container_is_used_once_the_target_is_met() {
    let mut am = Am::new(1);
    am.grant(&["host1"]);
    let (cs, actions) = am.grant(&["host2"]);
    assert_eq!(launches(&actions), 0);
    assert_eq!(
        releases(&actions),
        vec![cs[0].id.clone()],
        "surplus is released, not kept"
    );
    assert_eq!(am.alloc.running(), 1);
}

#[test]
fn some_containers_allocated() {
    let mut am = Am::new(4);
    am.grant(&["host1", "host1", "host2"]);
    assert_eq!(am.alloc.running(), 3);
    assert_eq!(am.alloc.running_on("host1"), 2);
    assert_eq!(am.alloc.running_on("host2"), 1);
    assert_eq!(am.alloc.pending_requests(), 1);
}

#[test]
fn more_containers_than_requested() {
    let mut am = Am::new(2);
    let (cs, actions) = am.grant(&["host1", "host2", "host4"]);
    assert_eq!(am.alloc.running(), 2);
    assert_eq!(am.alloc.running_on("host4"), 0);
    assert_eq!(releases(&actions), vec![cs[2].id.clone()]);
}

#[test]
fn decrease_total_requested_executors() {
    let mut am = Am::new(4);
    am.target(3);
    assert_eq!(am.alloc.pending_requests(), 3);
    am.grant(&["host1"]);
    assert_eq!(am.alloc.running(), 1);
    am.target(2);
    assert_eq!(am.alloc.pending_requests(), 1);
}

#[test]
fn decrease_below_running_cancels_everything_but_keeps_executors() {
    let mut am = Am::new(4);
    am.target(3);
    am.grant(&["host1", "host2"]);
    let actions = am.target(1);
    assert_eq!(
        actions
            .iter()
            .filter(|a| matches!(a, Action::RemoveRequest(_)))
            .count(),
        1
    );
    assert_eq!(am.alloc.pending_requests(), 0);
    assert_eq!(am.alloc.running(), 2);
}

#[test]
fn killed_executors_complete_as_expected() {
    let mut am = Am::new(4);
    let (cs, actions) = am.grant(&["host1", "host2"]);
    am.alloc.on_event(
        0,
        Event::DemandChanged(Demand {
            target_executors: 1,
            ..Demand::default()
        }),
    );
    for c in &cs {
        let kill = am.alloc.on_event(
            0,
            Event::KillExecutor {
                executor: executor_of(&actions, c),
            },
        );
        assert_eq!(releases(&kill), vec![c.id.clone()]);
    }
    am.alloc.on_event(0, Event::Heartbeat);
    let notices = am.complete(&[&cs[0], &cs[1]], 0);
    assert!(
        notices.is_empty(),
        "our own releases are not news for the driver: {notices:?}"
    );
    assert_eq!(am.alloc.running(), 0);
    assert_eq!(am.alloc.pending_requests(), 1);
    assert_eq!(am.alloc.failed_executors(0), 0);
}

#[test]
fn killing_the_same_executor_twice_is_harmless() {
    let mut am = Am::new(2);
    let (cs, actions) = am.grant(&["host1", "host2"]);
    let e = executor_of(&actions, &cs[0]);
    assert_eq!(
        releases(&am.alloc.on_event(0, Event::KillExecutor { executor: e })).len(),
        1
    );
    for _ in 0..3 {
        assert!(am
            .alloc
            .on_event(0, Event::KillExecutor { executor: e })
            .is_empty());
    }
    assert_eq!(am.alloc.running(), 1);
    am.target(2);
    assert_eq!(am.alloc.pending_requests(), 1);
}

#[test]
fn the_same_completion_twice_is_counted_once() {
    let mut am = Am::new(2);
    let (cs, _) = am.grant(&["host1", "host2"]);
    let notices = am.complete(&[&cs[0], &cs[0], &cs[1]], 0);
    assert_eq!(notices.len(), 2);
    assert_eq!(am.alloc.running(), 0);
}

#[test]
fn lost_executors_are_replaced_and_counted() {
    let mut am = Am::new(4);
    let (cs, _) = am.grant(&["host1", "host2"]);
    am.target(2);
    let notices = am.complete(&[&cs[0], &cs[1]], -1);
    assert_eq!(notices.len(), 2);
    for n in &notices {
        match n {
            Action::TellDriver(DriverNotice::ExecutorExited {
                counts_against_app,
                reason,
                ..
            }) => {
                assert!(counts_against_app);
                assert_eq!(reason, "the executor failed with exit code -1");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    am.alloc.on_event(0, Event::Heartbeat);
    assert_eq!(am.alloc.running(), 0);
    assert_eq!(am.alloc.pending_requests(), 2);
    assert_eq!(am.alloc.failed_executors(0), 2);
}

#[test]
fn preemption_does_not_count_against_the_app() {
    let mut am = Am::new(2);
    let (cs, _) = am.grant(&["host1", "host2"]);
    let notices = am.complete(&[&cs[0]], -102);
    assert!(matches!(
        &notices[0],
        Action::TellDriver(DriverNotice::ExecutorExited {
            counts_against_app: false,
            ..
        })
    ));
    assert_eq!(am.alloc.failed_executors(0), 0);
}

#[test]
fn failures_expire_after_the_validity_window() {
    let config = AllocatorConfig {
        strategy: Strategy::Spark,
        failure_validity_ms: Some(100_000),
        ..AllocatorConfig::default()
    };
    let mut am = Am::with_config(4, config);
    let (cs, _) = am.grant(&["host1", "host2", "host3", "host4"]);
    assert_eq!(am.alloc.failed_executors(0), 0);
    am.now = 100_000;
    am.complete(&[&cs[0]], -1);
    assert_eq!(am.alloc.failed_executors(100_000), 1);
    assert_eq!(am.alloc.failed_executors(201_000), 0);
    am.now = 201_000;
    am.complete(&[&cs[1], &cs[2]], -1);
    assert_eq!(am.alloc.failed_executors(201_000), 2);
    am.now = 251_000;
    am.complete(&[&cs[3]], -1);
    assert_eq!(am.alloc.failed_executors(251_000), 3);
    assert_eq!(am.alloc.failed_executors(302_000), 1);
    assert_eq!(am.alloc.failed_executors(352_000), 0);
}

#[test]
fn launch_failure_releases_the_container_and_tells_the_driver() {
    let mut am = Am::new(1);
    let c = am.container("host1");
    let actions = am
        .alloc
        .on_event(0, Event::ContainersGranted(vec![c.clone()]));
    assert_eq!(launches(&actions), 1);
    assert_eq!(am.alloc.starting(), 1);
    let actions = am.alloc.on_event(
        0,
        Event::ExecutorLaunchFailed {
            container: c.id.clone(),
            error: "NM said no".into(),
        },
    );
    assert_eq!(releases(&actions), vec![c.id.clone()]);
    assert_eq!(am.alloc.starting(), 0);
    assert_eq!(am.alloc.failed_executors(0), 1);
    // The release completes later: expected, no second notice.
    assert!(am.complete(&[&c], -100).is_empty());
    am.alloc.on_event(0, Event::Heartbeat);
    assert_eq!(
        am.alloc.pending_requests(),
        1,
        "the lost executor is asked for again"
    );
}

#[test]
fn matched_but_unwanted_containers_are_released_not_leaked() {
    // SPARK-49783: with a request still pending but the target already covered by starting
    // executors, Spark matches the container and then neither launches nor releases it.
    let mut am = Am::new(2);
    let c1 = am.container("host1");
    am.alloc.on_event(0, Event::ContainersGranted(vec![c1]));
    // The driver lowers its target before the heartbeat that would cancel the request.
    am.alloc.on_event(
        0,
        Event::DemandChanged(Demand {
            target_executors: 1,
            ..Demand::default()
        }),
    );
    let c2 = am.container("host2");
    let actions = am
        .alloc
        .on_event(0, Event::ContainersGranted(vec![c2.clone()]));
    assert_eq!(launches(&actions), 0);
    assert_eq!(releases(&actions), vec![c2.id.clone()]);
    assert_eq!(
        am.alloc.pending_requests(),
        0,
        "the matched request left the table too"
    );
}

#[test]
fn node_local_matches_win_over_rack_and_any() {
    let mut alloc = Allocator::new(AllocatorConfig {
        strategy: Strategy::Spark,
        ..AllocatorConfig::default()
    });
    let demand = Demand {
        target_executors: 2,
        locality_aware_tasks: 2,
        host_to_local_task_count: [(HostName::from("h2"), 2)].into_iter().collect(),
        ..Demand::default()
    };
    alloc.on_event(0, Event::DemandChanged(demand));
    alloc.on_event(0, Event::Heartbeat);
    let c = |id: &str, h: &str| Container {
        id: Arc::from(id),
        host: HostName::from(h),
        rack: RackName::from("/default-rack"),
        allocation_request_id: None,
    };
    let actions = alloc.on_event(
        0,
        Event::ContainersGranted(vec![c("a", "h1"), c("b", "h2")]),
    );
    let levels: Vec<(String, Locality)> = actions
        .iter()
        .filter_map(|a| match a {
            Action::LaunchExecutor {
                container,
                locality,
                ..
            } => Some((container.id.to_string(), *locality)),
            _ => None,
        })
        .collect();
    assert!(levels.contains(&("b".to_string(), Locality::Node)));
    assert!(levels.contains(&("a".to_string(), Locality::Rack)));
}

#[test]
fn a_launch_reported_after_completion_is_ignored() {
    // SPARK-43510: the container completes before its launch is reported.
    let mut am = Am::new(1);
    let c = am.container("host1");
    am.alloc
        .on_event(0, Event::ContainersGranted(vec![c.clone()]));
    assert_eq!(am.alloc.starting(), 1);
    am.complete(&[&c], 0);
    assert_eq!(am.alloc.starting(), 0);
    am.alloc.on_event(
        0,
        Event::ExecutorLaunched {
            container: c.id.clone(),
        },
    );
    assert_eq!(am.alloc.running(), 0);
    assert_eq!(am.alloc.starting(), 0);
}

#[test]
fn unusable_nodes_are_no_longer_named() {
    use yarn_am_core::allocator::tracker::NodeUpdate;
    let mut alloc = Allocator::new(AllocatorConfig {
        strategy: Strategy::Default,
        ..AllocatorConfig::default()
    });
    let demand = |n| Demand {
        target_executors: n,
        locality_aware_tasks: 4,
        host_to_local_task_count: [(HostName::from("h1"), 4), (HostName::from("h2"), 4)]
            .into_iter()
            .collect(),
        ..Demand::default()
    };
    alloc.on_event(0, Event::DemandChanged(demand(2)));
    alloc.on_event(0, Event::Heartbeat);
    // Filled level by level (rule 2): one request names h1, the other h2.
    assert!(alloc
        .pending()
        .any(|r| r.nodes.iter().any(|n| &**n == "h1")));
    // h1 goes unhealthy (decommissioning, lost): new requests leave it out.
    alloc.on_event(
        0,
        Event::NodesUpdated(vec![NodeUpdate {
            host: HostName::from("h1"),
            rack: RackName::from("/default-rack"),
            usable: false,
            capacity: None,
        }]),
    );
    alloc.on_event(0, Event::DemandChanged(demand(4)));
    let actions = alloc.on_event(0, Event::Heartbeat);
    let added: Vec<&Action> = actions
        .iter()
        .filter(|a| matches!(a, Action::AddRequests { .. }))
        .collect();
    assert!(!added.is_empty());
    for a in added {
        if let Action::AddRequests { nodes, .. } = a {
            assert!(nodes.iter().all(|n| &**n != "h1"), "{nodes:?}");
        }
    }
    assert_eq!(alloc.pending_requests(), 4);
}

#[test]
fn spread_requests_name_every_placed_host_after_one_nodemanager_heartbeat() {
    let topology = yarn_am_core::allocator::Topology::new(
        [("h1", "/r1"), ("h2", "/r2")]
            .into_iter()
            .map(|(h, r)| (HostName::from(h), RackName::from(r)))
            .collect(),
    );
    let mut alloc = Allocator::new(AllocatorConfig {
        strategy: Strategy::Default,
        ..AllocatorConfig::default()
    })
    .with_cluster(topology, yarn_am_core::allocator::Cluster::default());
    // 8 tasks, 4 executors: h1's 2 tasks keep ceil(2 x 4 / 8) = 1 executor busy, h2's 6 keep 3.
    alloc.on_event(
        0,
        Event::DemandChanged(Demand {
            target_executors: 4,
            locality_aware_tasks: 8,
            host_to_local_task_count: [(HostName::from("h1"), 2), (HostName::from("h2"), 6)]
                .into_iter()
                .collect(),
            ..Demand::default()
        }),
    );
    // The request ids the actions leave live must always be the table's.
    let mut live: std::collections::BTreeSet<u64> = Default::default();
    let mut apply = |actions: &[Action]| {
        for a in actions {
            match a {
                Action::AddRequests { ids, .. } => {
                    for id in ids {
                        assert!(live.insert(*id), "id {id} added twice");
                    }
                }
                Action::RemoveRequest(id) | Action::RequestSatisfied(id) => {
                    assert!(live.remove(id), "id {id} not live")
                }
                Action::ReplaceRequests { old, ids, .. } => {
                    assert_eq!(old.len(), ids.len());
                    for (o, n) in old.iter().zip(ids) {
                        assert!(live.remove(o), "replaced id {o} not live");
                        assert!(live.insert(*n), "id {n} added twice");
                    }
                }
                _ => {}
            }
        }
        live.clone()
    };
    let first = alloc.on_event(0, Event::Heartbeat);
    // Rule 5: requests naming hosts are asked strictly, each naming one host here (dealt).
    for a in &first {
        if let Action::AddRequests { nodes, strict, .. } = a {
            assert_eq!((nodes.len(), *strict), (1, true), "{first:?}");
        }
    }
    apply(&first);
    let named = |alloc: &Allocator, host: &str| {
        alloc
            .pending()
            .filter(|r| r.nodes.iter().any(|n| &**n == host))
            .count()
    };
    assert_eq!(alloc.pending_requests(), 4);
    assert_eq!((named(&alloc, "h1"), named(&alloc, "h2")), (1, 3));
    let before: Vec<_> = alloc.pending().cloned().collect();

    // Within the wait nothing changes.
    let wait = AllocatorConfig::default().spread_wait_ms;
    assert!(alloc.on_event(wait - 1, Event::Heartbeat).is_empty());

    // YARN granted nothing in a NodeManager heartbeat. Strict requests are relaxed in two
    // steps: first they leave YARN's table (so that containers YARN gave them meanwhile, on
    // their way to us, are not asked for again relaxed) ...
    let withdrawn = alloc.on_event(wait, Event::Heartbeat);
    assert!(withdrawn
        .iter()
        .all(|a| matches!(a, Action::RemoveRequest(_))));
    assert_eq!(withdrawn.len(), before.len(), "{withdrawn:?}");
    assert!(apply(&withdrawn).is_empty());
    assert_eq!((alloc.asked_requests(), alloc.pending_requests()), (0, 4));
    // ... then, at the next heartbeat (after the allocate call's answer), every request still
    // pending names every host it was placed on, relaxed, as one add per group. (Strict
    // requests already naming all of them are asked again relaxed, with the same lists.) This
    // was a stage's first ask, which the default places fresh: each request is
    // placed on the host it names (h1 once, h2 three times, by the work their tasks leave), so
    // none is widened: all four are asked again relaxed with the same hosts.
    let actions = alloc.on_event(wait + 1, Event::Heartbeat);
    let ids_now = apply(&actions);
    assert!(actions
        .iter()
        .all(|a| matches!(a, Action::AddRequests { strict: false, .. })));
    let replaced: usize = actions
        .iter()
        .map(|a| match a {
            Action::AddRequests { ids, .. } => ids.len(),
            _ => 0,
        })
        .sum();
    let widened = before
        .iter()
        .filter(|r| r.placed_hosts().len() > r.nodes.len())
        .count();
    assert_eq!(widened, 0, "placed on the host each names: {before:?}");
    assert_eq!(replaced, before.len(), "every strict request relaxed");
    assert_eq!(
        ids_now.len(),
        alloc.pending_requests(),
        "asked again, not more"
    );
    assert_eq!(
        (named(&alloc, "h1"), named(&alloc, "h2")),
        (1, 3),
        "the hosts they were placed on"
    );
    // Each asks for the rack of the host it names.
    for r in alloc.pending() {
        let racks: Vec<&str> = r.racks.iter().map(|k| &**k).collect();
        let rack = if &*r.nodes[0] == "h1" { "/r1" } else { "/r2" };
        assert_eq!((r.nodes.len(), racks), (1, vec![rack]), "{r:?}");
    }
    // Looked at once: nothing more later.
    assert!(alloc.on_event(3 * wait, Event::Heartbeat).is_empty());
}

#[test]
fn a_container_granted_again_is_neither_released_nor_launched_twice() {
    let mut am = Am::new(2);
    let (cs, actions) = am.grant(&["host1"]);
    assert_eq!(launches(&actions), 1);
    assert_eq!(am.alloc.pending_requests(), 1);
    // The same container again (an RM restart, a retried allocate answered from its cache),
    // twice in one answer.
    let again = am.alloc.on_event(
        am.now,
        Event::ContainersGranted(vec![cs[0].clone(), cs[0].clone()]),
    );
    assert!(releases(&again).is_empty(), "{again:?}");
    assert_eq!(launches(&again), 0, "{again:?}");
    assert_eq!(
        am.alloc.pending_requests(),
        1,
        "the other request still waits"
    );
    assert_eq!(am.alloc.running(), 1);
}

#[test]
fn a_container_granted_again_on_its_way_back_is_not_launched_on() {
    let mut am = Am::new(1);
    let (cs, actions) = am.grant(&["host1"]);
    let executor = executor_of(&actions, &cs[0]);
    // Killed: its container goes back, and a replacement is asked for.
    let kill = am.alloc.on_event(am.now, Event::KillExecutor { executor });
    assert_eq!(releases(&kill), vec![cs[0].id.clone()]);
    am.alloc.on_event(am.now, Event::Heartbeat);
    assert_eq!(am.alloc.pending_requests(), 1);
    assert!(am.alloc.is_ours(&cs[0].id));
    // The same container granted again before YARN reports it completed: still ours, on
    // its way back; no executor starts in it and the request still waits.
    let again = am
        .alloc
        .on_event(am.now, Event::ContainersGranted(vec![cs[0].clone()]));
    assert!(again.is_empty(), "{again:?}");
    assert_eq!((am.alloc.starting(), am.alloc.pending_requests()), (0, 1));
    // Its completion ends it: ours no more.
    assert!(am.complete(&[&cs[0]], -105).is_empty());
    assert!(!am.alloc.is_ours(&cs[0].id));
}

#[test]
fn adopted_executors_count_as_running_and_new_ids_never_reuse_theirs() {
    // An AM attempt after a crash: executors 4 and 7 of the earlier attempt come back.
    let mut alloc = Allocator::new(AllocatorConfig {
        strategy: Strategy::Spark,
        ..AllocatorConfig::default()
    })
    .with_first_executor_id(ExecutorId::new(5));
    let c = |id: &str, h: &str| Container {
        id: Arc::from(id),
        host: HostName::from(h),
        rack: RackName::from("/default-rack"),
        allocation_request_id: None,
    };
    alloc.adopt(c("old-a", "h1"), ExecutorId::new(4));
    alloc.adopt(c("old-b", "h2"), ExecutorId::new(7));
    alloc.adopt(c("old-b", "h2"), ExecutorId::new(9)); // handed back twice: still one executor
    assert_eq!((alloc.running(), alloc.starting()), (2, 0));
    // A target of 3 asks for one more container only.
    alloc.on_event(
        0,
        Event::DemandChanged(Demand {
            target_executors: 3,
            ..Demand::default()
        }),
    );
    alloc.on_event(0, Event::Heartbeat);
    assert_eq!(alloc.pending_requests(), 1);
    let actions = alloc.on_event(0, Event::ContainersGranted(vec![c("new", "h3")]));
    let ids: Vec<ExecutorId> = actions
        .iter()
        .filter_map(|a| match a {
            Action::LaunchExecutor { executor, .. } => Some(*executor),
            _ => None,
        })
        .collect();
    assert_eq!(
        ids,
        [ExecutorId::new(8)],
        "past both the journal's highest and every adopted id"
    );
    // An adopted executor's container ending is a loss like any other.
    alloc.on_event(
        0,
        Event::ContainersCompleted(vec![ContainerExit {
            id: Arc::from("old-a"),
            exit_status: -100,
            diagnostics: String::new(),
        }]),
    );
    assert_eq!(alloc.running(), 1);
}

/// No `*` count over grants in flight. A raise while a key's count is out goes
/// under a new key; a cancellation in a key whose count went out at an earlier heartbeat
/// takes the whole key to 0 and asks its other requests again at the next heartbeat, under
/// a quiet key (the grants that were on their way have been matched by then).
#[test]
fn a_busy_key_is_lowered_only_to_zero_and_raised_only_under_a_new_key() {
    fn adds(actions: &[Action]) -> Vec<(usize, i64)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::AddRequests { ids, key, .. } => Some((ids.len(), *key)),
                _ => None,
            })
            .collect()
    }
    let removes = |actions: &[Action]| {
        actions
            .iter()
            .filter(|a| matches!(a, Action::RemoveRequest(_)))
            .count()
    };
    let mut am = Am::new(3);
    assert_eq!(am.alloc.asked_requests(), 3);
    // Heartbeat 2: key 0's 3 may be being granted; the 2 more go under key 1.
    assert_eq!(adds(&am.target(5)), vec![(2, 1)]);
    // Heartbeat 3: one fewer. The oldest (key 0) is cancelled: key 0 goes to 0 as a whole.
    let actions = am.target(4);
    assert_eq!((removes(&actions), adds(&actions)), (3, vec![]));
    assert_eq!(
        (am.alloc.pending_requests(), am.alloc.asked_requests()),
        (4, 2)
    );
    // Heartbeat 4: the 2 parked ones are asked again under key 0, quiet since heartbeat 3.
    let actions = am.alloc.on_event(am.now, Event::Heartbeat);
    assert_eq!(adds(&actions), vec![(2, 0)]);
    assert_eq!(am.alloc.asked_requests(), 4);
}
