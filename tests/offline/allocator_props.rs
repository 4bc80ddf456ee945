//! Properties of the update step and matching over random allocator states.

use crate::support::allocator;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use allocator::{expanded_adds, snapshot, sorted_lists};
use proptest::prelude::*;
use yarn_am_core::allocator::literal;
use yarn_am_core::allocator::matching::{match_containers, Container, Locality};
use yarn_am_core::allocator::tracker::{
    Action, Allocator, AllocatorConfig, ContainerExit, Event, Phase,
};
use yarn_am_core::allocator::{
    update_requests, Cluster, Demand, HostName, PendingRequest, RackName, Snapshot, Strategy,
    Topology, UpdatePlan,
};

const HOSTS: usize = 8;

/// Whether the default strategy places this step fresh (`update_requests`: no pending request
/// placed on a host some task wants).
fn fresh(s: &Snapshot) -> bool {
    !s.pending.iter().any(|r| {
        let placed = r.placed_hosts();
        !placed.is_empty()
            && placed
                .iter()
                .any(|h| s.demand.host_to_local_task_count.contains_key(h))
    })
}

fn host(i: usize) -> HostName {
    HostName::from(format!("h{i}"))
}

fn topology() -> Topology {
    Topology::new(
        (0..HOSTS)
            .map(|i| (host(i), RackName::from(format!("/r{}", i % 3))))
            .collect(),
    )
}

prop_compose! {
    fn arb_pending()(mask in 0u32..(1 << HOSTS), any in any::<bool>()) -> PendingRequest {
        if any || mask == 0 {
            PendingRequest::any_host()
        } else {
            PendingRequest::with_nodes((0..HOSTS).filter(|i| mask & (1 << i) != 0).map(host).collect())
        }
    }
}

prop_compose! {
    /// Pending requests as the default strategy's table holds them: also rack-only ones.
    fn arb_default_pending()(req in arb_pending(), rack in prop::option::of(0usize..3)) -> PendingRequest {
        match rack {
            Some(r) if req.is_any_host() => PendingRequest::on_racks(&[&format!("/r{r}")]),
            _ => req,
        }
    }
}

prop_compose! {
    fn arb_snapshot()(
        target in 0u32..40,
        tasks_per_executor in 1u32..5,
        aware in 0u32..120,
        counts in prop::collection::vec(prop::option::of(0u32..60), HOSTS),
        running in prop::collection::vec(0u32..4, HOSTS),
        starting in prop::collection::vec(prop::sample::select(vec![0u32, 0, 0, 1, 2]), HOSTS),
        pending in prop::collection::vec(arb_pending(), 0..12),
    ) -> Snapshot {
        let hosts: Vec<(HostName, u32)> = counts.iter().enumerate().filter_map(|(i, c)| c.map(|c| (host(i), c))).collect();
        let running: Vec<(HostName, u32)> = running.iter().enumerate().filter(|(_, &r)| r > 0).map(|(i, &r)| (host(i), r)).collect();
        let starting_per_host: HashMap<HostName, u32> = starting.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| (host(i), n)).collect();
        Snapshot {
            starting: starting_per_host.values().sum(),
            starting_per_host,
            ..snapshot(target, tasks_per_executor, aware, &hosts, &running, pending)
        }
    }
}

prop_compose! {
    fn arb_cluster()(
        known in prop::option::of(0u32..(1 << HOSTS)),
        excluded in 0u32..(1 << HOSTS),
        capacity in prop::collection::vec(prop::option::of(0u32..6), HOSTS),
    ) -> Cluster {
        Cluster {
            nodes: known.map(|m| (0..HOSTS).filter(|i| m & (1 << i) != 0).map(host).collect()),
            excluded: (0..HOSTS).filter(|i| excluded & (1 << i) != 0 && i % 3 == 0).map(host).collect(),
            capacity: capacity.iter().enumerate().filter_map(|(i, c)| c.map(|c| (host(i), c))).collect(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// After a step, pending + starting + running == target whenever the target covers what is
    /// already starting and running.
    #[test]
    fn requests_are_conserved(s in arb_snapshot(), cluster in arb_cluster()) {
        for (strategy, cluster) in [(Strategy::Spark, Cluster::default()), (Strategy::Default, cluster)] {
            let plan = update_requests(&s, strategy, &topology(), &cluster);
            let after = s.pending.len() as u64 - plan.cancel.len() as u64 + plan.added();
            let have = u64::from(s.starting) + s.running_total();
            if u64::from(s.demand.target_executors) >= have {
                prop_assert_eq!(after + have, u64::from(s.demand.target_executors), "{}", strategy);
            } else {
                prop_assert_eq!(after, 0, "{}: everything pending is cancelled", strategy);
            }
            let distinct: HashSet<usize> = plan.cancel.iter().copied().collect();
            prop_assert_eq!(distinct.len(), plan.cancel.len());
            prop_assert!(plan.cancel.iter().all(|&i| i < s.pending.len()));
        }
    }

    /// The default strategy conserves requests with rack-only requests pending too, and never
    /// cancels a request twice.
    #[test]
    fn default_conserves_with_rack_only_pending(
        s in arb_snapshot(),
        extra in prop::collection::vec(arb_default_pending(), 0..6),
        cluster in arb_cluster(),
    ) {
        let mut s = s;
        s.pending.extend(extra);
        let plan = update_requests(&s, Strategy::Default, &topology(), &cluster);
        let after = s.pending.len() as u64 - plan.cancel.len() as u64 + plan.added();
        let have = u64::from(s.starting) + s.running_total();
        if u64::from(s.demand.target_executors) >= have {
            prop_assert_eq!(after + have, u64::from(s.demand.target_executors));
        } else {
            prop_assert_eq!(after, 0);
        }
        let distinct: HashSet<usize> = plan.cancel.iter().copied().collect();
        prop_assert_eq!(distinct.len(), plan.cancel.len());
    }

    /// With executors missing, no pending request naming only unwanted hosts survives (both
    /// strategies: Spark's rule, a host is wanted when it is a key of the task counts), and no
    /// new request names an unwanted host. The default strategy never names to YARN a host it
    /// cannot use or a node already full.
    #[test]
    fn no_stale_request_survives(s in arb_snapshot(), cluster in arb_cluster()) {
        prop_assume!(s.missing() > 0);
        let wanted = |h: &HostName| s.demand.host_to_local_task_count.contains_key(h);
        let full = |h: &HostName| cluster.capacity.get(h).is_some_and(|&c| s.running.get(h).copied().unwrap_or(0) >= c);
        for (strategy, cluster) in [(Strategy::Spark, Cluster::default()), (Strategy::Default, cluster.clone())] {
            let plan = update_requests(&s, strategy, &topology(), &cluster);
            let cancelled: HashSet<usize> = plan.cancel.iter().copied().collect();
            for (i, r) in s.pending.iter().enumerate() {
                if !r.is_any_host() && !cancelled.contains(&i) {
                    prop_assert!(r.nodes.iter().any(wanted), "{}: stale request {} survived", strategy, i);
                }
            }
            for g in plan.add_groups() {
                prop_assert!(g.nodes.iter().all(wanted), "{}: new request names an unwanted host", strategy);
                prop_assert!(g.placed.iter().all(wanted), "{}: new request placed on an unwanted host", strategy);
                let expect: HashSet<String> = g.nodes.iter().map(|h| topology().rack_of(h).to_string()).collect();
                let got: HashSet<String> = g.racks.iter().map(|r| r.to_string()).collect();
                match strategy {
                    Strategy::Spark => {
                        prop_assert_eq!(got, expect, "a group's racks are its nodes' racks");
                        prop_assert!(g.placed.is_empty(), "Spark names every host it places");
                    }
                    Strategy::Default => {
                        prop_assert!(g.nodes.iter().all(|h| cluster.is_usable(h) && !full(h)), "names a host YARN cannot use");
                        let hosts = if g.placed.is_empty() { g.nodes } else { g.placed };
                        let placed: HashSet<String> = hosts.iter().map(|h| topology().rack_of(h).to_string()).collect();
                        prop_assert!(got.is_superset(&expect) && got.is_subset(&placed), "asks for the racks of the hosts it names, and only racks it was placed on");
                    }
                }
            }
        }
    }

    /// The default strategy's plan is Spark's plan with node names taken out, for a reason:
    /// same cancellations and counts, and the hosts each request is placed on are Spark's node
    /// list. A host is left out of a request only when YARN cannot use it (no NodeManager,
    /// excluded, full), or when the requests naming it already reach its work cap
    /// (`max(1, ceil(count * target / aware) - running)`); the requests naming a host are the
    /// requests placed on it that name the fewest hosts so far. A request asks for the racks of the hosts it names and of
    /// the hosts it was placed on that YARN cannot use or that are full, and for no other.
    /// (Rule 3, stale requests with the target exactly met, is the one place the plans part.)
    #[test]
    fn default_is_spark_minus_what_yarn_cannot_use_or_keep_busy(s in arb_snapshot(), cluster in arb_cluster()) {
        let spark = update_requests(&s, Strategy::Spark, &topology(), &Cluster::default());
        let ours = update_requests(&s, Strategy::Default, &topology(), &cluster);
        // With the target met Spark changes nothing; ours may swap stale requests (rule 3).
        prop_assume!(!(s.missing() == 0 && ours != UpdatePlan::default()));
        prop_assert_eq!(&ours.cancel, &spark.cancel);
        prop_assert_eq!(ours.any_host, spark.any_host);
        if fresh(&s) {
            // The fresh placement parts from Spark's hosts (`fresh_placement_...` below).
            prop_assert_eq!(ours.local.local_count(), spark.local.local_count());
            return Ok(());
        }
        let theirs: Vec<(u64, Vec<HostName>)> = spark.local.groups().map(|g| (g.count, g.nodes.to_vec())).collect();
        // Ours may split one of Spark's groups where a capped host drops out; expand to compare.
        let expand = |v: Vec<(u64, Vec<HostName>)>| -> Vec<Vec<HostName>> {
            v.into_iter().flat_map(|(c, n)| (0..c).map(move |_| n.clone())).collect()
        };
        let ours_placed: Vec<(u64, Vec<HostName>)> = ours.local.groups().map(|g| {
            let hosts = if g.placed.is_empty() { g.nodes } else { g.placed };
            (g.count, hosts.to_vec())
        }).collect();
        prop_assert_eq!(expand(ours_placed), expand(theirs));
        let topo = topology();
        let d = &s.demand;
        let running = |h: &HostName| s.running.get(h).copied().unwrap_or(0);
        let cannot = |h: &HostName| !cluster.is_usable(h) || cluster.capacity.get(h).is_some_and(|&c| running(h) >= c);
        let work = |h: &HostName| (u64::from(d.host_to_local_task_count[h]) * u64::from(d.target_executors)).div_ceil(u64::from(d.locality_aware_tasks.max(1)));
        // Some usable host's tasks could keep another executor busy: hosts at their work cap
        // are then named by no request.
        let some_below = d.host_to_local_task_count.keys().any(|h| !cannot(h) && work(h) > u64::from(running(h)));
        let at_work_cap = |h: &HostName| some_below && work(h) <= u64::from(running(h));
        // Requests placed on / naming each host. The names are dealt (placement module docs):
        // where every request is placed on every named host, the requests name numbers of
        // hosts that differ by at most one.
        let mut placed_on: HashMap<HostName, u64> = HashMap::new();
        let mut named: HashMap<HostName, u64> = HashMap::new();
        let mut per_request: Vec<usize> = Vec::new();
        let mut placed_sets: Vec<HashSet<&HostName>> = Vec::new();
        for g in ours.local.groups() {
            let hosts = if g.placed.is_empty() { g.nodes } else { g.placed };
            let kept: Vec<&HostName> = hosts.iter().filter(|h| g.nodes.contains(h)).collect();
            prop_assert_eq!(kept.len(), g.nodes.len(), "names only hosts it placed");
            for h in hosts {
                *placed_on.entry(h.clone()).or_default() += g.count;
                if g.nodes.contains(h) {
                    *named.entry(h.clone()).or_default() += g.count;
                }
            }
            for _ in 0..g.count {
                per_request.push(g.nodes.len());
                placed_sets.push(hosts.iter().collect());
            }
        }
        let everywhere = named.keys().all(|h| placed_sets.iter().all(|p| p.contains(h)));
        if everywhere && !per_request.is_empty() {
            let (lo, hi) = (per_request.iter().min().unwrap(), per_request.iter().max().unwrap());
            prop_assert!(hi - lo <= 1, "names dealt evenly: {:?}", per_request);
        }
        // A host named by no new request (YARN cannot use it, at its work cap, or above the
        // level the others are filled to) has its rack asked by every request placed on it.
        for g in ours.local.groups() {
            let hosts = if g.placed.is_empty() { g.nodes } else { g.placed };
            let unnamed = |h: &&HostName| !named.contains_key(*h);
            let want: HashSet<&RackName> = g.nodes.iter().chain(hosts.iter().filter(unnamed)).map(|h| topo.rack_of(h)).collect();
            let got: HashSet<&RackName> = g.racks.iter().collect();
            prop_assert_eq!(got, want, "racks of the named hosts and of the placed hosts not named");
            prop_assert!(hosts.iter().filter(|h| cannot(h) || at_work_cap(h)).all(|h| !named.contains_key(h)));
        }
        // Rule 2's levels: a host's level is its executors (running or starting) plus the
        // pending requests naming it; the new names fill the hosts up to one level `top`, each
        // within its work cap and its placement (with no host below its work cap, each usable
        // host once).
        let starting = |h: &HostName| s.starting_per_host.get(h).copied().unwrap_or(0);
        let level = |h: &HostName| u64::from(running(h)) + u64::from(starting(h)) + s.pending.iter().filter(|r| {
            !r.placed_hosts().is_empty() && r.placed_hosts().iter().any(|p| d.host_to_local_task_count.contains_key(p))
        }).filter(|r| r.nodes.contains(h)).count() as u64;
        let top = named.iter().map(|(h, n)| level(h) + n).max().unwrap_or(0);
        for (h, &placed) in &placed_on {
            let named = named.get(h).copied().unwrap_or(0);
            let running = s.running.get(h).copied().unwrap_or(0);
            let full = cluster.capacity.get(h).is_some_and(|&c| running >= c);
            if !cluster.is_usable(h) || full {
                prop_assert_eq!(named, 0, "{} cannot take a container but is named", h);
                continue;
            }
            let left = work(h).saturating_sub(u64::from(running));
            let cap = if some_below { left.min(top.saturating_sub(level(h))) } else { left.max(1) };
            prop_assert_eq!(named, placed.min(cap), "{}: placed {}, capped at {} (level {}, filled to {})", h, placed, cap, level(h), top);
        }
    }

    /// The default strategy's fresh placement (no local request pending): as many
    /// requests with locality as Spark's, each placed on the hosts it names and asking for
    /// their racks only; names dealt evenly over the requests; a host named no more often
    /// than its work cap, its room and the requests allow; and hosts filled by the work they
    /// have left: a host named `k` times had, before its last name, more work left than any
    /// host below its caps before its next one (work in 64ths of an executor, as the step
    /// counts it: twice its share where the node's room is known).
    #[test]
    fn fresh_placement_fills_the_hosts_with_most_work_left_first(s in arb_snapshot(), cluster in arb_cluster()) {
        // Fresh: only pending requests placed on no wanted host (stale, any-host) are kept.
        let mut s = s;
        let wanted_host = |r: &PendingRequest, d: &Demand| r.placed_hosts().iter().any(|h| d.host_to_local_task_count.contains_key(h));
        let demand = s.demand.clone();
        s.pending.retain(|r| r.placed_hosts().is_empty() || !wanted_host(r, &demand));
        prop_assert!(fresh(&s));
        prop_assume!(s.missing() > 0);
        let ours = update_requests(&s, Strategy::Default, &topology(), &cluster);
        let spark = update_requests(&s, Strategy::Spark, &topology(), &Cluster::default());
        prop_assert_eq!(ours.local.local_count(), spark.local.local_count());
        let topo = topology();
        let d = &s.demand;
        let running = |h: &HostName| s.running.get(h).copied().unwrap_or(0);
        let level = |h: &HostName| u64::from(running(h)) + u64::from(s.starting_per_host.get(h).copied().unwrap_or(0));
        let cannot = |h: &HostName| !cluster.is_usable(h) || cluster.capacity.get(h).is_some_and(|&c| running(h) >= c);
        let work = |h: &HostName| (u64::from(d.host_to_local_task_count[h]) * u64::from(d.target_executors)).div_ceil(u64::from(d.locality_aware_tasks.max(1)));
        let some_below = d.host_to_local_task_count.keys().any(|h| !cannot(h) && work(h) > u64::from(running(h)));
        let mut named: HashMap<HostName, u64> = HashMap::new();
        let mut per_request: Vec<usize> = Vec::new();
        for g in ours.local.groups() {
            if g.nodes.is_empty() {
                // Naming none: Spark's placement and its racks (`no_stale_request_survives`).
                continue;
            }
            prop_assert!(g.placed.is_empty(), "placed on the hosts it names");
            let distinct: HashSet<&HostName> = g.nodes.iter().collect();
            prop_assert_eq!(distinct.len(), g.nodes.len());
            let want: HashSet<&RackName> = g.nodes.iter().map(|h| topo.rack_of(h)).collect();
            let got: HashSet<&RackName> = g.racks.iter().collect();
            prop_assert_eq!(got, want, "the racks of the hosts it names");
            for h in g.nodes {
                prop_assert!(d.host_to_local_task_count.contains_key(h) && !cannot(h), "{} named", h);
                *named.entry(h.clone()).or_default() += g.count;
            }
            for _ in 0..g.count {
                per_request.push(g.nodes.len());
            }
        }
        if let (Some(lo), Some(hi)) = (per_request.iter().min(), per_request.iter().max()) {
            prop_assert!(hi - lo <= 1, "names dealt evenly: {:?}", per_request);
        }
        let aware = ours.local.local_count();
        // Spark's need(h) > 0: the hosts the placement places at all.
        let executors = f64::from(d.locality_aware_tasks.div_ceil(s.tasks_per_executor.max(1)));
        let total = d.host_to_local_task_count.values().map(|&c| u64::from(c)).sum::<u64>() as f64;
        let needed = |h: &HostName| f64::from(d.host_to_local_task_count[h]) * executors / total - f64::from(running(h)) > 0.0;
        let cap = |h: &HostName| -> u64 {
            let left = work(h).saturating_sub(u64::from(running(h)));
            let left = if some_below { left } else { left.max(1) };
            let room = if some_below {
                cluster.capacity.get(h).map_or(u64::MAX, |&c| u64::from(c).saturating_sub(level(h)))
            } else {
                u64::MAX
            };
            left.min(room).min(aware)
        };
        for (h, &k) in &named {
            prop_assert!(k <= cap(h), "{} named {} times, cap {}", h, k, cap(h));
        }
        if some_below {
            // A host's share of the target's work: its tasks over all the hosts' task counts
            // (a replicated task counts on each of its hosts), so the shares add up to the target;
            // counted twice in the fill order where the node's room is known (the steeper order).
            let counted = d.host_to_local_task_count.values().map(|&c| u128::from(c)).sum::<u128>().max(1);
            let left = |h: &HostName| -> i64 {
                let steep = if cluster.capacity.contains_key(h) { 2 } else { 1 };
                let busy = (u128::from(d.host_to_local_task_count[h]) * u128::from(d.target_executors) * 64 * steep
                    / counted) as i64;
                busy - 64 * level(h) as i64
            };
            for (b, &kb) in &named {
                for a in d.host_to_local_task_count.keys() {
                    let ka = named.get(a).copied().unwrap_or(0);
                    if cannot(a) || !needed(a) || ka >= cap(a) {
                        continue;
                    }
                    prop_assert!(
                        left(b) - 64 * (kb as i64 - 1) > left(a) - 64 * ka as i64,
                        "{} named {} times (work left {}) while {} named {} (work left {})", b, kb, left(b), a, ka, left(a)
                    );
                }
            }
        }
    }

    /// Spark's grouped output equals the literal per-container port, as multisets of node sets.
    #[test]
    fn grouped_equals_per_container_expansion(s in arb_snapshot()) {
        let plan = update_requests(&s, Strategy::Spark, &topology(), &Cluster::default());
        let lit = literal::update_requests(&s, &topology());
        prop_assert_eq!(&plan.cancel, &lit.cancel);
        prop_assert_eq!(expanded_adds(&plan), sorted_lists(lit.add));
        // Groups are nested: each names a subset of the one before.
        let groups: Vec<HashSet<HostName>> = plan.local.groups().map(|g| g.nodes.iter().cloned().collect()).collect();
        for w in groups.windows(2) {
            prop_assert!(w[1].is_subset(&w[0]));
        }
    }

    /// Matching uses each request at most once, places every container exactly once, and only
    /// claims node/rack locality the request really has.
    #[test]
    fn matching_never_uses_a_request_twice(
        pending in prop::collection::vec(arb_pending(), 0..12),
        grants in prop::collection::vec(0usize..HOSTS + 2, 0..16),
    ) {
        let topo = topology();
        let containers: Vec<Container> = grants.iter().enumerate().map(|(i, &h)| Container {
            id: Arc::from(format!("c{i}")),
            host: host(h),
            rack: topo.rack_of(&host(h)).clone(),
            allocation_request_id: None,
        }).collect();
        let out = match_containers(&containers, &pending, &topo);
        let used: Vec<usize> = out.matched.iter().map(|m| m.1).collect();
        let distinct: HashSet<usize> = used.iter().copied().collect();
        prop_assert_eq!(distinct.len(), used.len());
        let mut placed: Vec<usize> = out.matched.iter().map(|m| m.0).chain(out.unmatched.iter().copied()).collect();
        placed.sort();
        prop_assert_eq!(placed, (0..containers.len()).collect::<Vec<_>>());
        prop_assert_eq!(out.matched.len(), containers.len().min(pending.len()));
        for &(c, r, level) in &out.matched {
            match level {
                Locality::Node => prop_assert!(pending[r].placed_hosts().contains(&containers[c].host)),
                Locality::Rack => prop_assert!(pending[r].nodes.iter().any(|n| topo.rack_of(n) == &containers[c].rack)),
                Locality::Any => {}
            }
        }
    }

    /// Driving the tracker: every granted container is launched or released, never both, never
    /// neither, and running + starting never exceeds the target.
    #[test]
    fn tracker_never_leaks_or_overshoots(
        steps in prop::collection::vec((
            0u32..12,
            prop::collection::vec(0usize..HOSTS, 0..8),
            any::<bool>(),
            prop::collection::vec((any::<prop::sample::Index>(), 0u8..3), 0..3),
        ), 1..12),
    ) {
        let mut alloc = Allocator::new(AllocatorConfig { strategy: Strategy::Default, ..AllocatorConfig::default() });
        let mut n = 0;
        let mut launched: Vec<Arc<str>> = Vec::new();
        for (target, hosts, launch, ends) in steps {
            alloc.on_event(0, Event::DemandChanged(Demand { target_executors: target, ..Demand::default() }));
            alloc.on_event(0, Event::Heartbeat);
            let cs: Vec<Container> = hosts.iter().map(|&h| { n += 1; Container {
                id: Arc::from(format!("c{n}")), host: host(h), rack: RackName::from("/r"), allocation_request_id: None,
            }}).collect();
            let before = alloc.starting() + alloc.running();
            let actions = alloc.on_event(0, Event::ContainersGranted(cs.clone()));
            let mut fate: HashMap<Arc<str>, u32> = HashMap::new();
            for a in &actions {
                match a {
                    Action::LaunchExecutor { container, .. } => *fate.entry(container.id.clone()).or_default() += 1,
                    Action::ReleaseContainer(id) => *fate.entry(id.clone()).or_default() += 1,
                    _ => {}
                }
            }
            for c in &cs {
                prop_assert_eq!(fate.get(&c.id).copied(), Some(1), "container {} launched xor released", &c.id);
            }
            let after = alloc.starting() + alloc.running();
            prop_assert!(after <= target.max(before), "over the target: {} > {}", after, target);
            for a in &actions {
                if let Action::LaunchExecutor { container, .. } = a {
                    launched.push(container.id.clone());
                    if launch {
                        alloc.on_event(0, Event::ExecutorLaunched { container: container.id.clone() });
                    }
                }
            }
            // Executors ending in any phase, given back or not, some of them twice.
            for (i, how) in ends {
                if launched.is_empty() {
                    break;
                }
                let id = launched[i.index(launched.len())].clone();
                match how {
                    0 => { alloc.on_event(0, Event::ExecutorLaunchFailed { container: id, error: "refused".into() }); }
                    1 => if let Some(executor) = alloc.executor_of(&id) {
                        alloc.on_event(0, Event::KillExecutor { executor });
                    },
                    _ => { alloc.on_event(0, Event::ContainersCompleted(vec![ContainerExit { id, exit_status: 0, diagnostics: String::new() }])); }
                }
            }
            per_host_counts_match_a_recount(&alloc)?;
        }
    }

    /// The request ids in the actions track the allocator's table while time passes, so that
    /// the default strategy's re-asks (rule 4) happen between grants and demand changes: an
    /// id is added once, removed or replaced only while live, and the live ids are always as
    /// many as the requests asked of YARN (the pending ones but those withdrawn, rule 4).
    #[test]
    fn request_ids_track_the_table_as_time_passes(
        steps in prop::collection::vec((
            0u32..12,
            prop::collection::vec(0u32..30, HOSTS),
            prop::collection::vec(0usize..HOSTS, 0..4),
            0u64..2_500,
        ), 1..12),
        capacity in prop::collection::vec(prop::option::of(1u32..4), HOSTS),
    ) {
        let cluster = Cluster {
            capacity: capacity.iter().enumerate().filter_map(|(i, c)| c.map(|c| (host(i), c))).collect(),
            ..Cluster::default()
        };
        let mut alloc = Allocator::new(AllocatorConfig { strategy: Strategy::Default, ..AllocatorConfig::default() })
            .with_cluster(topology(), cluster);
        let mut live: HashSet<u64> = HashSet::new();
        let (mut now, mut n) = (0u64, 0u32);
        for (target, counts, grants, dt) in steps {
            now += dt;
            let host_to_local_task_count: HashMap<HostName, u32> =
                counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (host(i), c)).collect();
            let aware = counts.iter().sum::<u32>().div_ceil(3);
            alloc.on_event(now, Event::DemandChanged(Demand { target_executors: target, locality_aware_tasks: aware, host_to_local_task_count, ..Demand::default() }));
            let mut actions = alloc.on_event(now, Event::Heartbeat);
            let cs: Vec<Container> = grants.iter().map(|&h| { n += 1; Container {
                id: Arc::from(format!("c{n}")), host: host(h), rack: topology().rack_of(&host(h)).clone(), allocation_request_id: None,
            }}).collect();
            let granted = alloc.on_event(now, Event::ContainersGranted(cs));
            for a in &granted {
                if let Action::LaunchExecutor { container, .. } = a {
                    alloc.on_event(now, Event::ExecutorLaunched { container: container.id.clone() });
                }
            }
            actions.extend(granted);
            for a in &actions {
                match a {
                    Action::AddRequests { ids, .. } => for id in ids { prop_assert!(live.insert(*id), "id {} added twice", id); },
                    Action::RemoveRequest(id) | Action::RequestSatisfied(id) => prop_assert!(live.remove(id), "removed id {} not live", id),
                    Action::ReplaceRequests { old, ids, .. } => {
                        prop_assert_eq!(old.len(), ids.len());
                        for (o, i) in old.iter().zip(ids) {
                            prop_assert!(live.remove(o), "replaced id {} not live", o);
                            prop_assert!(live.insert(*i), "id {} added twice", i);
                        }
                    }
                    _ => {}
                }
            }
            // Strict requests rule 4 has withdrawn are pending but not in YARN's table.
            prop_assert_eq!(live.len(), alloc.asked_requests());
            prop_assert!(alloc.asked_requests() <= alloc.pending_requests());
        }
    }
}

/// The tracker's incremental per-host counts (running, and starting: the default strategy's
/// levels read both) against a recount of the executors it tracks.
fn per_host_counts_match_a_recount(alloc: &Allocator) -> Result<(), TestCaseError> {
    // (starting, running) per host.
    let mut recount: HashMap<HostName, (u32, u32)> = HashMap::new();
    for (_, _, host, phase) in alloc.tracked() {
        let n = recount.entry(host.clone()).or_default();
        match phase {
            Phase::Starting => n.0 += 1,
            Phase::Running => n.1 += 1,
        }
    }
    for h in (0..HOSTS).map(host) {
        let (starting, running) = recount.get(&h).copied().unwrap_or_default();
        prop_assert_eq!(alloc.starting_on(&h), starting, "starting on {}", &h);
        prop_assert_eq!(alloc.running_on(&h), running, "running on {}", &h);
    }
    prop_assert_eq!(alloc.starting(), recount.values().map(|n| n.0).sum::<u32>());
    prop_assert_eq!(alloc.running(), recount.values().map(|n| n.1).sum::<u32>());
    Ok(())
}
