//! The update step on fixed cases: the acceptance examples of docs/allocator.md and the issue,
//! and the cases of Spark's ContainerPlacementStrategySuite / YarnAllocatorSuite restated as
//! allocator states (Spark's executors there have 5 cores and tasks 1 cpu: 5 tasks per
//! executor; its test resolver puts host3 on /rack2 and every other host on /rack1).

use crate::support::allocator;

use std::collections::HashMap;

use allocator::{counts, expanded_adds, snapshot, sorted, sorted_lists};
use yarn_am_core::allocator::literal;
use yarn_am_core::allocator::{
    update_requests, Cluster, HostName, PendingRequest, RackName, Snapshot, Strategy, Topology,
    UpdatePlan,
};

fn spark_topology() -> Topology {
    Topology::new(
        ["host1", "host2", "host3", "host4", "host5"]
            .iter()
            .map(|&h| {
                (
                    HostName::from(h),
                    RackName::from(if h == "host3" { "/rack2" } else { "/rack1" }),
                )
            })
            .collect(),
    )
}

/// `(count, sorted nodes, sorted racks)` for each added group.
fn groups(plan: &UpdatePlan) -> Vec<(u64, Vec<String>, Vec<String>)> {
    plan.add_groups()
        .map(|g| (g.count, sorted(g.nodes.iter()), sorted(g.racks.iter())))
        .collect()
}

/// `(count, sorted hosts the requests were placed on)`: for the default strategy, Spark's node
/// lists (hosts left out of what YARN sees included). Adjacent groups placed on the same hosts
/// are merged: the default strategy splits one of Spark's groups where a host stops being named.
fn placed(plan: &UpdatePlan) -> Vec<(u64, Vec<String>)> {
    let mut out: Vec<(u64, Vec<String>)> = Vec::new();
    for g in plan
        .add_groups()
        .filter(|g| !g.nodes.is_empty() || !g.racks.is_empty() || !g.placed.is_empty())
    {
        let hosts = if g.placed.is_empty() {
            g.nodes
        } else {
            g.placed
        };
        let n = sorted(hosts.iter());
        match out.last_mut() {
            Some((count, last)) if *last == n => *count += g.count,
            _ => out.push((g.count, n)),
        }
    }
    out
}

fn nodes(plan: &UpdatePlan) -> Vec<(u64, Vec<String>)> {
    groups(plan).into_iter().map(|(c, n, _)| (c, n)).collect()
}

fn v(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// A case of Spark's ContainerPlacementStrategySuite: 5 tasks per executor on its
/// five-host topology, through [`spark`].
fn spark_suite(
    target: u32,
    aware: u32,
    hosts: &[(&str, u32)],
    running: &[(&str, u32)],
    pending: Vec<PendingRequest>,
) -> UpdatePlan {
    let s = snapshot(target, 5, aware, hosts, running, pending);
    spark(&s, &spark_topology())
}

/// The default strategy's plan with no cluster facts and every host on the default rack.
fn default_plan(s: &Snapshot) -> UpdatePlan {
    update_requests(
        s,
        Strategy::Default,
        &Topology::default(),
        &Cluster::default(),
    )
}

fn spark(s: &Snapshot, t: &Topology) -> UpdatePlan {
    let plan = update_requests(s, Strategy::Spark, t, &Cluster::default());
    // Every fixed case is also checked against the literal per-container port.
    let lit = literal::update_requests(s, t);
    assert_eq!(
        plan.cancel, lit.cancel,
        "cancel differs from the literal port"
    );
    assert_eq!(
        expanded_adds(&plan),
        sorted_lists(lit.add),
        "adds differ from the literal port"
    );
    plan
}

const WORKED_HOSTS: &[(&str, u32)] = &[("h1", 30), ("h2", 30), ("h3", 20), ("h4", 10)];
const ONE_EACH: &[(&str, u32)] = &[("h1", 1), ("h2", 1), ("h3", 1), ("h4", 1)];

#[test]
fn worked_example_of_the_design_doc() {
    let s = snapshot(16, 2, 30, WORKED_HOSTS, ONE_EACH, vec![]);
    let expected = vec![
        (3, v(&["h1", "h2", "h3", "h4"])),
        (6, v(&["h1", "h2", "h3"])),
        (3, v(&["h1", "h2"])),
    ];
    let theirs = update_requests(
        &s,
        Strategy::Spark,
        &Topology::default(),
        &Cluster::default(),
    );
    assert!(theirs.cancel.is_empty());
    assert_eq!(nodes(&theirs), expected);
    // The default's fresh placement (a stage's first ask: no local request pending): each host
    // is named in proportion to the work its tasks leave. A host's share of the target is its
    // tasks over all the hosts' task counts (90: every task counts on each of its 3 hosts):
    // h1 and h2 30/90 x 16 = 5.33 executors, h3 3.56, h4 1.78; less the one each runs, 4.33,
    // 4.33, 2.56 and 0.78 left. The 12 requests name one host each, filled by the work left:
    // h1 and h2 4 each, h3 3, h4 1 (the names add up to the requests, so YARN's per-host
    // counts are the placement itself), each request placed on the host it names. (Dividing by
    // the 30 tasks instead of the 90 counts made every share 3x: h1 and h2 took 6 each.)
    let ours = update_requests(
        &s,
        Strategy::Default,
        &Topology::default(),
        &Cluster::default(),
    );
    assert!(ours.cancel.is_empty());
    assert_eq!(
        placed(&ours),
        vec![
            (1, v(&["h4"])),
            (3, v(&["h3"])),
            (4, v(&["h1"])),
            (4, v(&["h2"])),
        ]
    );
    let (hosts, _) = ours.local.location_counts();
    let hosts: HashMap<String, u64> = hosts.into_iter().map(|(h, c)| (h.to_string(), c)).collect();
    assert_eq!(
        hosts,
        [("h1", 4), ("h2", 4), ("h3", 3), ("h4", 1)]
            .iter()
            .map(|&(h, c)| (h.to_string(), c))
            .collect()
    );
    assert!(ours.add_groups().all(|g| g.nodes.len() == 1));
    spark(&s, &Topology::default());
}

#[test]
fn issue_example_trades_the_any_host_request() {
    let topo = Topology::new(
        [(HostName::from("h1"), RackName::from("/rack1"))]
            .into_iter()
            .collect(),
    );
    let s = snapshot(
        16,
        2,
        30,
        WORKED_HOSTS,
        ONE_EACH,
        vec![
            PendingRequest::on(&["h1", "h2"]),
            PendingRequest::any_host(),
        ],
    );
    let plan = spark(&s, &topo);
    assert_eq!(plan.cancel, vec![1]);
    let racks = v(&["/default-rack", "/rack1"]);
    assert_eq!(
        groups(&plan),
        vec![
            (3, v(&["h1", "h2", "h3", "h4"]), racks.clone()),
            (6, v(&["h1", "h2", "h3"]), racks.clone()),
            (2, v(&["h1", "h2"]), racks),
        ]
    );
}

// --- ContainerPlacementStrategySuite, restated. `n` containers to place = target - running.

/// The pending tasks' hosts most of the suite's cases use.
const SUITE_HOSTS: &[(&str, u32)] = &[("host1", 15), ("host2", 15), ("host3", 10)];

#[test]
fn spark_enough_resource_no_matched_containers() {
    // 2 executors on host1/host2, which no task wants; 3 containers to place.
    let plan = spark_suite(
        5,
        15,
        &[("host3", 15), ("host4", 15), ("host5", 10)],
        &[("host1", 1), ("host2", 1)],
        vec![],
    );
    assert_eq!(
        nodes(&plan),
        vec![
            (2, v(&["host3", "host4", "host5"])),
            (1, v(&["host3", "host4"]))
        ]
    );
    assert_eq!(groups(&plan)[1].2, v(&["/rack1", "/rack2"]));
}

#[test]
fn spark_enough_resource_partially_matched_containers() {
    let plan = spark_suite(6, 15, SUITE_HOSTS, &[("host1", 2), ("host2", 1)], vec![]);
    assert_eq!(nodes(&plan), vec![(2, v(&["host2", "host3"])), (1, vec![])]);
}

#[test]
fn spark_limited_resource_partially_matched_containers() {
    let plan = spark_suite(4, 15, SUITE_HOSTS, &[("host1", 2), ("host2", 1)], vec![]);
    assert_eq!(nodes(&plan), vec![(1, v(&["host2", "host3"]))]);
}

#[test]
fn spark_fully_matched_containers_need_no_locality() {
    let plan = spark_suite(
        8,
        15,
        SUITE_HOSTS,
        &[("host1", 2), ("host2", 2), ("host3", 1)],
        vec![],
    );
    assert_eq!(nodes(&plan), vec![(3, vec![])]);
}

#[test]
fn spark_no_locality_preference() {
    let plan = spark_suite(3, 0, &[], &[("host1", 1), ("host2", 1)], vec![]);
    assert_eq!(nodes(&plan), vec![(1, vec![])]);
}

#[test]
fn spark_pending_requests_count_as_placed() {
    // Pending {host2,host3} and {host1,host4} each count half a container on their hosts.
    let pending = vec![
        PendingRequest::on(&["host2", "host3"]),
        PendingRequest::on(&["host1", "host4"]),
    ];
    let plan = spark_suite(6, 15, SUITE_HOSTS, &[("host1", 2), ("host2", 1)], pending);
    assert!(plan.cancel.is_empty());
    assert_eq!(nodes(&plan), vec![(1, v(&["host3"]))]);
}

// --- The update step's own branches.

#[test]
fn stale_requests_are_cancelled_when_executors_are_missing() {
    let pending = vec![
        PendingRequest::on(&["old1"]),
        PendingRequest::on(&["h1"]),
        PendingRequest::on(&["old2", "old3"]),
    ];
    let s = snapshot(5, 1, 10, &[("h1", 10)], &[], pending);
    let plan = spark(&s, &Topology::default());
    assert_eq!(plan.cancel, vec![0, 2]);
    // 2 missing + 2 stale = 4 to place; h1 needs 10 - 0.5(own pending share: 1 request) → capped by 4.
    assert_eq!(plan.added(), 4);
}

#[test]
fn shrinking_cancels_stale_then_any_host_then_local() {
    let pending = vec![
        PendingRequest::on(&["h1"]),
        PendingRequest::any_host(),
        PendingRequest::on(&["gone"]),
        PendingRequest::any_host(),
        PendingRequest::on(&["h1", "h2"]),
    ];
    let s = snapshot(1, 1, 2, &[("h1", 1), ("h2", 1)], &[], pending.clone());
    // missing = 1 - 5 = -4: stale (2), any-host (1, 3), then the oldest local (0).
    let plan = spark(&s, &Topology::default());
    assert_eq!(plan.cancel, vec![0, 1, 2, 3]);
    assert_eq!(plan.added(), 0);
    let s = snapshot(4, 1, 2, &[("h1", 1), ("h2", 1)], &[], pending);
    assert_eq!(spark(&s, &Topology::default()).cancel, vec![2]);
}

#[test]
fn nothing_changes_when_the_target_is_met_without_stale_requests() {
    let s = snapshot(
        3,
        1,
        2,
        &[("h1", 1)],
        &[("h1", 2)],
        vec![PendingRequest::on(&["h1"])],
    );
    for strategy in [Strategy::Spark, Strategy::Default] {
        let plan = update_requests(&s, strategy, &Topology::default(), &Cluster::default());
        assert_eq!(plan, UpdatePlan::default(), "{strategy}");
    }
}

// --- Where the default strategy differs.

#[test]
fn default_replaces_stale_requests_when_the_target_is_exactly_met() {
    // One executor running, one request pending on a host nobody wants any more: target met.
    let s = snapshot(
        2,
        1,
        4,
        &[("h2", 4)],
        &[("h1", 1)],
        vec![PendingRequest::on(&["h9"])],
    );
    let spark_plan = spark(&s, &Topology::default());
    assert_eq!(
        spark_plan,
        UpdatePlan::default(),
        "Spark leaves the stale request alone"
    );
    let ours = default_plan(&s);
    assert_eq!(ours.cancel, vec![0]);
    assert_eq!(nodes(&ours), vec![(1, v(&["h2"]))]);
}

#[test]
fn default_swaps_stale_requests_only_for_requests_that_name_a_location() {
    // Target 3 met by 3 stale requests; h2's 4 of 12 tasks keep ceil(4 x 3 / 12) = 1 executor
    // busy, so of the 3 requests placed on h2 only 1 names it: 1 stale request is swapped for
    // it, the other 2 keep their racks rather than become requests for anywhere.
    let stale = || PendingRequest::on(&["h9"]);
    let s = snapshot(3, 1, 12, &[("h2", 4)], &[], vec![stale(), stale(), stale()]);
    assert_eq!(s.missing(), 0);
    let ours = default_plan(&s);
    assert_eq!(ours.cancel, vec![0]);
    assert_eq!(groups(&ours), vec![(1, v(&["h2"]), v(&["/default-rack"]))]);
    assert_eq!(ours.any_host, 0);
}

#[test]
fn default_asks_for_the_rack_of_hosts_without_a_nodemanager() {
    // dn1 is a DataNode without a NodeManager on /r1, where nm1 and nm2 run NodeManagers.
    let topo = Topology::new(
        [
            ("dn1", "/r1"),
            ("nm1", "/r1"),
            ("nm2", "/r1"),
            ("nm3", "/r2"),
        ]
        .iter()
        .map(|&(h, r)| (HostName::from(h), RackName::from(r)))
        .collect(),
    );
    let cluster = Cluster {
        nodes: Some(
            ["nm1", "nm2", "nm3"]
                .iter()
                .map(|&h| HostName::from(h))
                .collect(),
        ),
        ..Cluster::default()
    };
    let s = snapshot(4, 1, 4, &[("dn1", 4)], &[], vec![]);
    let spark_plan = spark(&s, &topo);
    assert_eq!(
        nodes(&spark_plan),
        vec![(4, v(&["dn1"]))],
        "Spark names a host YARN cannot use"
    );
    let ours = update_requests(&s, Strategy::Default, &topo, &cluster);
    assert_eq!(
        groups(&ours),
        vec![(4, vec![], v(&["/r1"]))],
        "rack-only requests"
    );
    assert_eq!(
        placed(&ours),
        nodes(&spark_plan),
        "placed as Spark places them"
    );
    // With a usable host in the mix, that host is named and dn1 only contributes its rack.
    // nm3's 4 tasks keep ceil(4 x 4 / 8) = 2 of the 4 executors busy (the work cap), so it is
    // named by 2 requests. The fresh placement (a stage's first ask) places those 2 on nm3,
    // the host they name, so they ask for its rack only; the 2 naming no host keep Spark's
    // placement (dn1 and nm3) and ask for dn1's rack, where its blocks are rack-local.
    let s = snapshot(4, 1, 8, &[("dn1", 4), ("nm3", 4)], &[], vec![]);
    let ours = update_requests(&s, Strategy::Default, &topo, &cluster);
    assert_eq!(
        groups(&ours),
        vec![(2, v(&["nm3"]), v(&["/r2"])), (2, vec![], v(&["/r1"]))]
    );
    assert_eq!(nodes(&spark(&s, &topo)), vec![(4, v(&["dn1", "nm3"]))]);
    assert_eq!(
        placed(&ours),
        vec![(2, v(&["nm3"])), (2, v(&["dn1", "nm3"]))]
    );
}

#[test]
fn default_never_names_an_excluded_host_but_keeps_sparks_bookkeeping() {
    let cluster = Cluster {
        excluded: [HostName::from("bad")].into_iter().collect(),
        ..Cluster::default()
    };
    // A request made before "bad" was excluded still names it.
    let s = snapshot(
        3,
        1,
        6,
        &[("bad", 3), ("good", 3)],
        &[],
        vec![PendingRequest::on(&["bad"])],
    );
    let topo = Topology::new(
        [(HostName::from("bad"), RackName::from("/lonely"))]
            .into_iter()
            .collect(),
    );
    let spark_plan = spark(&s, &topo);
    let ours = update_requests(&s, Strategy::Default, &topo, &cluster);
    // Spark's rule: the old request serves a host some task prefers, so it stays (YARN will
    // not place on an excluded node, and the request still asks for /lonely and ANY).
    assert!(spark_plan.cancel.is_empty());
    assert_eq!(ours.cancel, spark_plan.cancel);
    // New requests: placed as Spark places them, named to YARN without "bad", and still
    // asking for bad's rack.
    assert_eq!(nodes(&spark_plan), vec![(2, v(&["bad", "good"]))]);
    assert_eq!(placed(&ours), nodes(&spark_plan));
    assert_eq!(
        groups(&ours),
        vec![(2, v(&["good"]), v(&["/default-rack", "/lonely"]))]
    );
}

#[test]
fn default_never_names_a_full_node() {
    // Worked example, but h1 holds only the executor it already runs; h2 has room for one more.
    let cluster = Cluster {
        capacity: counts(&[("h1", 1), ("h2", 2)]),
        ..Cluster::default()
    };
    let s = snapshot(16, 2, 30, WORKED_HOSTS, ONE_EACH, vec![]);
    let ours = update_requests(&s, Strategy::Default, &Topology::default(), &cluster);
    let per_host: HashMap<String, u64> = ours
        .local
        .location_counts()
        .0
        .into_iter()
        .map(|(h, c)| (h.to_string(), c))
        .collect();
    assert!(!per_host.contains_key("h1"), "{per_host:?}");
    // Only the full node is dropped. The fresh placement (a stage's first ask) names a node no
    // more often than it has room: h2 once. The other 11 names go to h3 and h4 by the work
    // their tasks leave (h3 20/90 x 16 - 1 = 2.56 executors, h4 10/90 x 16 - 1 = 0.78: h3 is
    // 1.78 executors ahead), within their work caps (10 and 5): h3 6, h4 5. The names add up
    // to the 12 requests, every request naming one host.
    assert_eq!(
        per_host,
        [("h2", 1), ("h3", 6), ("h4", 5)]
            .iter()
            .map(|&(h, c)| (h.to_string(), c))
            .collect(),
    );
    assert!(ours.add_groups().all(|g| g.nodes.len() == 1));
    assert_eq!(ours.added(), 12, "the total asked does not change");
    // Each request is placed on the host it names, so none on the full node.
    assert!(
        placed(&ours)
            .iter()
            .all(|(_, hosts)| hosts.len() == 1 && hosts[0] != "h1"),
        "{:?}",
        placed(&ours)
    );
    // Its rack is still asked for by every request.
    assert_eq!(
        ours.local.location_counts().1,
        vec![(RackName::from("/default-rack"), 12)]
    );
}

#[test]
fn location_counts_match_the_expansion() {
    let s = snapshot(16, 2, 30, WORKED_HOSTS, ONE_EACH, vec![]);
    let plan = spark(&s, &Topology::default());
    let (hosts, racks) = plan.local.location_counts();
    let hosts: HashMap<String, u64> = hosts.into_iter().map(|(h, c)| (h.to_string(), c)).collect();
    assert_eq!(
        hosts,
        [("h1", 12), ("h2", 12), ("h3", 9), ("h4", 3)]
            .iter()
            .map(|&(h, c)| (h.to_string(), c))
            .collect()
    );
    assert_eq!(racks, vec![(RackName::from("/default-rack"), 12)]);
}

#[test]
fn default_keeps_rack_only_requests_while_their_rack_is_wanted() {
    let topo = Topology::new(
        [("dn1", "/r1"), ("h2", "/r2")]
            .iter()
            .map(|&(h, r)| (HostName::from(h), RackName::from(r)))
            .collect(),
    );
    let cluster = Cluster {
        nodes: Some([HostName::from("h2")].into_iter().collect()),
        ..Cluster::default()
    };
    // Target met by the two pending requests: one rack-only on /r1 (dn1's rack, still wanted),
    // one rack-only on /r9 (nobody's rack any more).
    let pending = vec![
        PendingRequest::on_racks(&["/r1"]),
        PendingRequest::on_racks(&["/r9"]),
    ];
    let s = snapshot(2, 1, 4, &[("dn1", 2), ("h2", 2)], &[], pending);
    let plan = update_requests(&s, Strategy::Default, &topo, &cluster);
    assert_eq!(
        plan.cancel,
        vec![1],
        "only the request on an unwanted rack is stale"
    );
    assert_eq!(plan.added(), 1, "and it is swapped for one with locality");
    assert!(plan.add_groups().all(|g| !g.racks.is_empty()));
}

#[test]
fn default_names_a_host_only_as_often_as_its_tasks_keep_executors_busy() {
    // 8 tasks for 4 executors: h1's 2 tasks keep ceil(2 x 4 / 8) = 1 busy, h2's 6 keep 3.
    // Spark names h1 in 2 requests and h2 in all 4 (YARN may put all 4 on h2 if it heartbeats
    // first); the default names h1 once and h2 three times, dealt so that each request names
    // one host. The fresh placement (a stage's first ask) places each request on the host it
    // names, so the three naming h2 are alike (one group).
    let s = snapshot(4, 1, 8, &[("h1", 2), ("h2", 6)], &[], vec![]);
    let topo = Topology::default();
    let theirs = nodes(&spark(&s, &topo));
    assert_eq!(theirs, vec![(2, v(&["h1", "h2"])), (2, v(&["h2"]))]);
    let ours = update_requests(&s, Strategy::Default, &topo, &Cluster::default());
    assert_eq!(
        groups(&ours),
        vec![
            (1, v(&["h1"]), v(&["/default-rack"])),
            (3, v(&["h2"]), v(&["/default-rack"])),
        ]
    );
    assert_eq!(placed(&ours), vec![(1, v(&["h1"])), (3, v(&["h2"]))]);
    assert_eq!(
        ours.any_host, 0,
        "still locality requests in the bookkeeping"
    );
}

/// The real test cluster's layout: nm1 and nm2 on /rack1, nm3 on /rack2.
fn test_cluster_topology() -> Topology {
    Topology::new(
        [("nm1", "/rack1"), ("nm2", "/rack1"), ("nm3", "/rack2")]
            .iter()
            .map(|&(h, r)| (HostName::from(h), RackName::from(r)))
            .collect(),
    )
}

#[test]
fn default_deals_one_host_to_each_request_when_each_host_keeps_one_busy() {
    // 3 executors asked at once for 8 tasks on each of nm1..nm3 (the real cluster's
    // `it_spread_all`): Spark names all three hosts in all three requests (YARN's table holds
    // 3 per host, and the first node to heartbeat takes all three); the default names each
    // host once, one host per request, so that strict requests land one per node. The fresh
    // placement (a stage's first ask) places each request on the host it names.
    let topo = test_cluster_topology();
    let s = snapshot(3, 1, 24, &[("nm1", 8), ("nm2", 8), ("nm3", 8)], &[], vec![]);
    let theirs = nodes(&spark(&s, &topo));
    assert_eq!(theirs, vec![(3, v(&["nm1", "nm2", "nm3"]))]);
    let ours = update_requests(&s, Strategy::Default, &topo, &Cluster::default());
    assert_eq!(
        groups(&ours),
        vec![
            (1, v(&["nm1"]), v(&["/rack1"])),
            (1, v(&["nm2"]), v(&["/rack1"])),
            (1, v(&["nm3"]), v(&["/rack2"])),
        ]
    );
    assert_eq!(
        placed(&ours),
        vec![(1, v(&["nm1"])), (1, v(&["nm2"])), (1, v(&["nm3"]))],
        "placed on the host each names"
    );
    let (hosts, racks) = ours.local.location_counts();
    assert!(hosts.iter().all(|(_, n)| *n == 1), "{hosts:?}");
    assert_eq!(
        sorted(racks.iter().map(|(r, n)| format!("{r}={n}"))),
        ["/rack1=2", "/rack2=1"]
    );
}

#[test]
fn default_names_no_host_at_its_work_cap_while_another_is_below() {
    // Spark's dynamic allocation ramping 1 -> 3 for 20 tasks on each of nm1..nm3 (2 cores an
    // executor): the first executor runs on nm2; each host's tasks keep ceil(20 x 3 / 60) = 1
    // executor busy, so nm2 is at its work cap and the two new requests name nm1 and nm3, one
    // each (before: nm2 was still named once and could take the second executor).
    let topo = test_cluster_topology();
    let s = snapshot(
        3,
        2,
        60,
        &[("nm1", 20), ("nm2", 20), ("nm3", 20)],
        &[("nm2", 1)],
        vec![],
    );
    let ours = update_requests(&s, Strategy::Default, &topo, &Cluster::default());
    let named: Vec<Vec<String>> = groups(&ours)
        .into_iter()
        .flat_map(|(c, n, _)| (0..c).map(move |_| n.clone()))
        .collect();
    assert_eq!(named, vec![v(&["nm1"]), v(&["nm3"])]);
    // When no usable host is below its work cap (nm3 has no NodeManager here), the usable
    // ones are still named, once each.
    let s = snapshot(
        3,
        2,
        60,
        &[("nm1", 20), ("nm2", 20), ("nm3", 20)],
        &[("nm1", 1), ("nm2", 1)],
        vec![],
    );
    let cluster = Cluster {
        nodes: Some(
            [HostName::from("nm1"), HostName::from("nm2")]
                .into_iter()
                .collect(),
        ),
        ..Cluster::default()
    };
    let ours = update_requests(&s, Strategy::Default, &topo, &cluster);
    let named: Vec<Vec<String>> = groups(&ours).into_iter().map(|(_, n, _)| n).collect();
    assert_eq!(named, vec![v(&["nm1", "nm2"])]);
}

/// The 12-node test cluster's uniform trace: 96 tasks, each local to 3 of nm1..nm12 (24 a
/// host), executors of 2 tasks, 8 at most. Each host's tasks alone "keep 2 executors busy".
fn uniform_12(target: u32, running: &[(&str, u32)], pending: Vec<PendingRequest>) -> Snapshot {
    let hosts: Vec<(String, u32)> = (1..=12).map(|i| (format!("nm{i}"), 24)).collect();
    let running: Vec<(String, u32)> = running.iter().map(|&(h, n)| (h.to_string(), n)).collect();
    snapshot(target, 2, 96, &hosts, &running, pending)
}

fn uniform_12_topology() -> Topology {
    Topology::new(
        (1..=12)
            .map(|i| {
                (
                    HostName::from(format!("nm{i}").as_str()),
                    RackName::from(format!("/rack{}", (i - 1) / 3 + 1).as_str()),
                )
            })
            .collect(),
    )
}

#[test]
fn default_names_no_host_twice_while_another_host_with_work_is_lower() {
    // The real cluster's uniform runs (BENCHMARKS.md "After the level fix"): with the work
    // cap alone (2 a host) a batch of 4 named every host in 2 strict requests, and the node
    // that heartbeat first took two containers at once; the host running the first executor
    // was named again in the next batch and took the second.
    let topo = uniform_12_topology();
    let ours = update_requests(
        &uniform_12(4, &[], vec![]),
        Strategy::Default,
        &topo,
        &Cluster::default(),
    );
    assert_eq!(ours.added(), 4);
    let (hosts, _) = ours.local.location_counts();
    assert!(
        hosts.iter().all(|(_, n)| *n <= 1),
        "a host named twice in one batch: {hosts:?}"
    );
    assert!(
        ours.add_groups().all(|g| !g.nodes.is_empty()),
        "every request names a host"
    );

    let ours = update_requests(
        &uniform_12(3, &[("nm4", 1)], vec![]),
        Strategy::Default,
        &topo,
        &Cluster::default(),
    );
    assert_eq!(ours.added(), 2);
    let (hosts, _) = ours.local.location_counts();
    assert!(
        hosts.iter().all(|(h, n)| *n == 0 || h.as_ref() != "nm4"),
        "nm4 runs one already and 11 hosts run none: {hosts:?}"
    );
    assert!(hosts.iter().all(|(_, n)| *n <= 1), "{hosts:?}");

    // A pending request naming nm5 counts as nm5's: the new ones name the other hosts.
    let ours = update_requests(
        &uniform_12(3, &[("nm4", 1)], vec![PendingRequest::on(&["nm5"])]),
        Strategy::Default,
        &topo,
        &Cluster::default(),
    );
    assert_eq!(ours.added(), 1);
    let (hosts, _) = ours.local.location_counts();
    assert!(
        hosts
            .iter()
            .all(|(h, n)| *n == 0 || !["nm4", "nm5"].contains(&h.as_ref())),
        "{hosts:?}"
    );

    // Once every host runs one, the second level opens (each host's tasks keep 2 busy).
    let all_one: Vec<(String, u32)> = (1..=12).map(|i| (format!("nm{i}"), 1)).collect();
    let all_one: Vec<(&str, u32)> = all_one.iter().map(|(h, n)| (h.as_str(), *n)).collect();
    let ours = update_requests(
        &uniform_12(14, &all_one, vec![]),
        Strategy::Default,
        &topo,
        &Cluster::default(),
    );
    assert_eq!(ours.added(), 2);
    assert!(
        ours.add_groups().all(|g| !g.nodes.is_empty()),
        "every request names a host"
    );
}

#[test]
fn default_counts_containers_still_starting_in_a_hosts_level() {
    // Target 4 granted on nm1..nm4, all four still launching (no executor running, no request
    // pending); the target ramps to 8. A granted request is gone, so without the starting
    // containers nm1..nm4 were back at level 0 and could be named again: two executors on one
    // host, the packing the levels stop (seen once on the real cluster).
    let launching = ["nm1", "nm2", "nm3", "nm4"];
    let s = Snapshot {
        starting: 4,
        starting_per_host: launching.iter().map(|&h| (HostName::from(h), 1)).collect(),
        ..uniform_12(8, &[], vec![])
    };
    let ours = update_requests(
        &s,
        Strategy::Default,
        &uniform_12_topology(),
        &Cluster::default(),
    );
    assert_eq!(ours.added(), 4);
    let (hosts, _) = ours.local.location_counts();
    assert!(
        hosts
            .iter()
            .all(|(h, n)| *n == 0 || !launching.contains(&h.as_ref())),
        "a host whose container is still starting is named again while 8 hosts have none: {hosts:?}"
    );
    assert!(hosts.iter().all(|(_, n)| *n <= 1), "{hosts:?}");
    assert!(
        ours.add_groups().all(|g| !g.nodes.is_empty()),
        "every request names a host"
    );

    // Spark's arithmetic does not see them per host: its plan is the same with or without.
    let spark = |s: &Snapshot| {
        update_requests(
            s,
            Strategy::Spark,
            &uniform_12_topology(),
            &Cluster::default(),
        )
    };
    let total_only = Snapshot {
        starting_per_host: HashMap::new(),
        ..s.clone()
    };
    assert_eq!(spark(&s), spark(&total_only));
}
