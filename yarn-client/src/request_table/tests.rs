//! Behaviour tests of the request table and AMRM state (unit rules, a fake RM for the
//! over-allocation trap, and proptest invariants).

use std::collections::BTreeMap;

use super::*;
use crate::ask::{Ask, Capability, Priority, ANY};
use crate::token::Token;

/// Nodes `hN` live on rack `/rN%2`.
fn resolver(node: &str) -> String {
    let n: u32 = node.trim_start_matches('h').parse().unwrap_or(0);
    format!("/r{}", n % 2)
}

fn table() -> RequestTable {
    RequestTable::new(resolver)
}

const P1: Priority = Priority(1);
const P2: Priority = Priority(2);

fn cap(mb: i64) -> Capability {
    Capability::new(mb, 1)
}

fn req(mb: i64) -> ContainerRequest {
    ContainerRequest::anywhere(cap(mb), P1)
}

fn asks_by_location(asks: &[Ask]) -> BTreeMap<String, i32> {
    asks.iter()
        .map(|a| (a.resource_name.clone(), a.num_containers))
        .collect()
}

fn find<'a>(asks: &'a [Ask], location: &str) -> &'a Ask {
    asks.iter()
        .find(|a| a.resource_name == location)
        .unwrap_or_else(|| panic!("no ask for {location} in {asks:?}"))
}

#[test]
fn node_request_raises_node_its_rack_and_any() {
    let mut t = table();
    t.add(req(1024).with_nodes(["h1"])).unwrap();
    let asks = t.take_asks();
    assert_eq!(
        asks_by_location(&asks),
        BTreeMap::from([("h1".into(), 1), ("/r1".into(), 1), (ANY.into(), 1)])
    );
    assert!(asks.iter().all(|a| a.relax_locality && a.priority == P1));
}

#[test]
fn default_resolver_puts_nodes_on_default_rack() {
    let mut t = RequestTable::default();
    t.add(req(1024).with_nodes(["anyhost"])).unwrap();
    assert_eq!(t.count(0, P1, DEFAULT_RACK, cap(1024)), 1);
}

#[test]
fn explicit_rack_raises_rack_and_any_only() {
    let mut t = table();
    t.add(req(1024).with_racks(["/r9"])).unwrap();
    assert_eq!(
        asks_by_location(&t.take_asks()),
        BTreeMap::from([("/r9".into(), 1), (ANY.into(), 1)])
    );
}

#[test]
fn duplicates_and_shared_racks_count_once_per_request() {
    let mut t = table();
    // h1 and h3 are both on /r1, which is also named explicitly.
    t.add(
        req(1024)
            .with_nodes(["h1", "h1", "h3"])
            .with_racks(["/r1", "/r1"]),
    )
    .unwrap();
    assert_eq!(t.count(0, P1, "h1", cap(1024)), 1);
    assert_eq!(t.count(0, P1, "h3", cap(1024)), 1);
    assert_eq!(t.count(0, P1, "/r1", cap(1024)), 1);
    assert_eq!(t.count(0, P1, ANY, cap(1024)), 1);
}

#[test]
fn asks_carry_absolute_counts_of_changed_entries_only() {
    let mut t = table();
    t.add(req(1024).with_nodes(["h1"])).unwrap();
    t.add(req(1024).with_nodes(["h2"])).unwrap();
    assert_eq!(t.take_asks().len(), 5, "h1, h2, /r1, /r0, *");
    assert!(t.take_asks().is_empty(), "nothing changed since");

    t.add(req(1024).with_nodes(["h1"])).unwrap();
    let asks = t.take_asks();
    // Only h1, /r1 and * changed; each carries the total, not +1.
    assert_eq!(
        asks_by_location(&asks),
        BTreeMap::from([("h1".into(), 2), ("/r1".into(), 2), (ANY.into(), 3)])
    );
}

#[test]
fn different_sizes_and_priorities_are_separate_entries() {
    let mut t = table();
    t.add(req(1024)).unwrap();
    t.add(req(2048)).unwrap();
    t.add(ContainerRequest::anywhere(cap(1024), P2)).unwrap();
    let asks = t.take_asks();
    assert_eq!(asks.len(), 3);
    assert!(asks
        .iter()
        .all(|a| a.num_containers == 1 && a.resource_name == ANY));
}

/// A request a granted container satisfied leaves the table without sending its lower `*`
/// count (the RM lowered its own), unless an `*` ask was queued already (the newest count
/// wins then). Its node and rack entries are sent as by a removal.
#[test]
fn a_satisfied_request_does_not_resend_its_any_count() {
    let mut t = table();
    let a = t.add(req(1024).with_nodes(["h1"])).unwrap();
    let b = t.add(req(1024).with_nodes(["h2"])).unwrap();
    t.take_asks();
    t.remove_satisfied(a).unwrap();
    let asks = asks_by_location(&t.take_asks());
    assert_eq!(
        asks,
        BTreeMap::from([("h1".into(), 0), ("/r1".into(), 0)]),
        "no `*` over grants in flight"
    );
    assert_eq!(t.count(0, P1, ANY, cap(1024)), 1);
    // Queued already (an add in the same heartbeat): the queued `*` follows the count.
    t.add(req(1024)).unwrap();
    t.remove_satisfied(b).unwrap();
    assert_eq!(asks_by_location(&t.take_asks())[ANY], 1);
}

#[test]
fn removal_queues_zero_and_drops_the_entry() {
    let mut t = table();
    let id = t.add(req(1024).with_nodes(["h1"])).unwrap();
    t.take_asks();
    let removed = t.remove(id).unwrap();
    assert_eq!(removed.nodes, vec!["h1".to_string()]);
    let asks = t.take_asks();
    assert_eq!(
        asks_by_location(&asks),
        BTreeMap::from([("h1".into(), 0), ("/r1".into(), 0), (ANY.into(), 0)])
    );
    assert!(t.snapshot().is_empty());
    assert!(t.is_empty());
    assert_eq!(t.remove(id), Err(RequestError::UnknownRequest(id)));
}

#[test]
fn add_after_remove_before_allocate_sends_latest_count() {
    let mut t = table();
    let id = t.add(req(1024)).unwrap();
    t.take_asks();
    t.remove(id).unwrap();
    t.add(req(1024)).unwrap();
    let asks = t.take_asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].num_containers, 1);
}

#[test]
fn replace_sends_only_the_entries_whose_count_changes() {
    let mut t = table();
    let id = t.add(req(1024).with_nodes(["h1"])).unwrap();
    t.add(req(1024)).unwrap();
    t.take_asks();
    // The same container asked for on one more node: h2 and its rack change, h1, its rack
    // and * keep their counts and are not sent.
    let new = t.replace(id, req(1024).with_nodes(["h1", "h2"])).unwrap();
    assert_ne!(new, id);
    assert_eq!(
        asks_by_location(&t.take_asks()),
        BTreeMap::from([("h2".into(), 1), ("/r0".into(), 1)])
    );
    assert_eq!(t.count(0, P1, ANY, cap(1024)), 2);
    assert_eq!(t.get(id), None);
    assert_eq!(t.get(new).unwrap().nodes, vec!["h1", "h2"]);
    // An entry queued for another reason stays queued, with its current count.
    t.add(req(1024)).unwrap();
    t.replace(new, req(1024).with_nodes(["h2"])).unwrap();
    assert_eq!(
        asks_by_location(&t.take_asks()),
        BTreeMap::from([("h1".into(), 0), ("/r1".into(), 0), (ANY.into(), 3)])
    );
    // An unknown id changes nothing.
    assert_eq!(
        t.replace(id, req(1024)),
        Err(RequestError::UnknownRequest(id))
    );
    assert_eq!(t.len(), 3);
}

/// Re-asking a request while the RM has granted it but the grant has not reached us must
/// not re-inflate the RM's `*` count (a remove and an add would).
#[test]
fn replace_with_grants_in_flight_does_not_over_allocate() {
    let mut t = table();
    let mut rm = FakeRm::default();
    let a = t.add(req(1024).with_nodes(["h1"])).unwrap();
    t.add(req(1024).with_nodes(["h1"])).unwrap();
    rm.heartbeat(t.take_asks());
    let granted = rm.allocate_all();
    assert_eq!(granted.len(), 2);
    // Before the grants arrive, the application asks for one of them on more nodes.
    t.replace(a, req(1024).with_nodes(["h1", "h2"])).unwrap();
    rm.heartbeat(t.take_asks());
    assert_eq!(rm.allocate_all().len(), 0, "the RM's * stays at 0");
    for (priority, capability) in granted {
        let id = t.match_allocated(priority, "h1", capability).unwrap();
        t.remove(id).unwrap();
    }
    rm.heartbeat(t.take_asks());
    rm.allocate_all();
    assert_eq!(rm.allocated, 2);
    assert!(t.is_empty());

    // The same with a remove and an add: `*` is sent at 2 over the RM's 0.
    let mut t = table();
    let mut rm = FakeRm::default();
    let a = t.add(req(1024).with_nodes(["h1"])).unwrap();
    t.add(req(1024).with_nodes(["h1"])).unwrap();
    rm.heartbeat(t.take_asks());
    rm.allocate_all();
    t.remove(a).unwrap();
    t.add(req(1024).with_nodes(["h1", "h2"])).unwrap();
    rm.heartbeat(t.take_asks());
    assert_eq!(rm.allocate_all().len(), 2, "two surplus containers");
}

#[test]
fn restore_asks_keeps_newer_counts() {
    let mut t = table();
    t.add(req(1024).with_nodes(["h1"])).unwrap();
    let failed = t.take_asks();
    t.add(req(1024)).unwrap(); // * changes to 2 while the call is in flight
    t.restore_asks(failed);
    let asks = t.take_asks();
    assert_eq!(
        asks_by_location(&asks),
        BTreeMap::from([("h1".into(), 1), ("/r1".into(), 1), (ANY.into(), 2)])
    );
}

#[test]
fn removal_uses_the_racks_counted_at_add_time() {
    let mut t = table();
    let id = t.add(req(1024).with_nodes(["h1"])).unwrap();
    t.set_rack_resolver(|_: &str| "/elsewhere".to_string());
    t.remove(id).unwrap();
    assert!(t.snapshot().is_empty(), "{:?}", t.snapshot());
}

#[test]
fn strict_node_request_keeps_rack_and_any_strict() {
    let mut t = table();
    t.add(req(1024).with_nodes(["h1"]).relax_locality(false))
        .unwrap();
    let asks = t.take_asks();
    assert!(
        find(&asks, "h1").relax_locality,
        "node entries are always relaxed"
    );
    assert!(!find(&asks, "/r1").relax_locality);
    assert!(!find(&asks, ANY).relax_locality);
    // Counts are still raised: the RM needs them to size the request.
    assert_eq!(find(&asks, ANY).num_containers, 1);
}

#[test]
fn strict_request_with_explicit_rack_relaxes_only_that_rack() {
    let mut t = table();
    t.add(
        req(1024)
            .with_nodes(["h2"])
            .with_racks(["/r1"])
            .relax_locality(false),
    )
    .unwrap();
    let asks = t.take_asks();
    assert!(find(&asks, "/r1").relax_locality);
    assert!(!find(&asks, "/r0").relax_locality, "inferred rack of h2");
    assert!(!find(&asks, ANY).relax_locality);
}

#[test]
fn strict_request_needs_a_location() {
    let mut t = table();
    assert_eq!(
        t.add(req(1024).relax_locality(false)),
        Err(RequestError::StrictWithoutLocation(P1))
    );
}

#[test]
fn mixing_strict_and_relaxed_at_one_priority_is_refused_atomically() {
    let mut t = table();
    t.add(req(1024).with_nodes(["h1"]).relax_locality(false))
        .unwrap();
    t.take_asks();
    let err = t.add(req(2048).with_nodes(["h3"])).unwrap_err();
    assert!(
        matches!(err, RequestError::LocalityConflict { ref location, requested: true, existing: false, .. } if location == ANY),
        "{err:?}"
    );
    assert!(t.take_asks().is_empty(), "refused request left no asks");
    assert_eq!(t.len(), 1);
    // Explicit racks are relaxed, so naming the strict request's inferred rack conflicts.
    let err = t
        .add(
            req(1024)
                .with_nodes(["h1"])
                .with_racks(["/r1"])
                .relax_locality(false),
        )
        .unwrap_err();
    assert!(
        matches!(err, RequestError::LocalityConflict { ref location, .. } if location == "/r1")
    );
    // Another priority is independent.
    t.add(ContainerRequest::anywhere(cap(1024), P2)).unwrap();
    // Once the strict request is gone the location can be relaxed again.
    let strict = t.requests().next().unwrap().0;
    t.remove(strict).unwrap();
    t.add(req(1024).with_nodes(["h1"])).unwrap();
}

#[test]
fn strict_requests_match_only_where_they_accept() {
    let mut t = table();
    let id = t
        .add(req(1024).with_nodes(["h1"]).relax_locality(false))
        .unwrap();
    assert_eq!(t.matching_requests(P1, "h1", cap(1024)), vec![id]);
    assert!(t.matching_requests(P1, "/r1", cap(1024)).is_empty());
    assert!(t.matching_requests(P1, ANY, cap(1024)).is_empty());
    assert_eq!(t.match_allocated(P1, "h1", cap(1024)), Some(id));
    assert_eq!(
        t.match_allocated(P1, "h3", cap(1024)),
        None,
        "same rack, wrong node"
    );
}

#[test]
fn countable_resources_go_on_every_line_of_a_request() {
    let mut t = table();
    let mut r = req(1024).with_nodes(["h1"]);
    r.resources = vec![("yarn.io/gpu".into(), 2)];
    t.add(r).unwrap();
    let asks = t.take_asks();
    for at in [ANY, "h1", "/r1"] {
        assert_eq!(
            find(&asks, at).resources,
            [("yarn.io/gpu".to_string(), 2)],
            "{at}"
        );
    }
}

#[test]
fn node_label_is_sent_on_any_only() {
    let mut t = table();
    let mut r = req(1024).with_nodes(["h1"]);
    r.node_label = Some("gpu".into());
    t.add(r).unwrap();
    let asks = t.take_asks();
    assert_eq!(find(&asks, ANY).node_label.as_deref(), Some("gpu"));
    assert_eq!(find(&asks, "h1").node_label, None);
    assert_eq!(find(&asks, "/r1").node_label, None);

    let mut bad = req(1024);
    bad.node_label = Some("a && b".into());
    assert_eq!(
        t.add(bad),
        Err(RequestError::NodeLabelExpression("a && b".into()))
    );
}

#[test]
fn negative_capability_is_refused() {
    let mut t = table();
    assert!(matches!(
        t.add(req(-1)),
        Err(RequestError::NegativeCapability { .. })
    ));
}

#[test]
fn matching_prefers_exact_size_then_largest_fit_then_oldest() {
    let mut t = table();
    let small_a = t.add(req(512)).unwrap();
    let small_b = t.add(req(512)).unwrap();
    let mid = t.add(req(1024)).unwrap();
    let big = t.add(req(4096)).unwrap();
    assert_eq!(
        t.matching_requests(P1, ANY, cap(1024)),
        vec![mid, small_a, small_b]
    );
    // A container rounded up to 2048 fits the 1024 and 512 requests, not the 4096 one.
    assert_eq!(
        t.matching_requests(P1, ANY, cap(2048)),
        vec![mid, small_a, small_b]
    );
    assert_eq!(t.matching_requests(P1, ANY, cap(8192))[0], big);
    // vcores count too.
    assert!(t
        .matching_requests(P1, ANY, Capability::new(8192, 0))
        .is_empty());
    assert!(t.matching_requests(P2, ANY, cap(8192)).is_empty());
}

#[test]
fn match_allocated_falls_back_node_rack_any() {
    let mut t = table();
    let on_h1 = t.add(req(1024).with_nodes(["h1"])).unwrap();
    let on_r0 = t.add(req(1024).with_racks(["/r0"])).unwrap();
    let anywhere = t.add(req(1024)).unwrap();
    assert_eq!(t.match_allocated(P1, "h1", cap(1024)), Some(on_h1));
    assert_eq!(t.match_allocated(P1, "h2", cap(1024)), Some(on_r0));
    t.remove(on_r0).unwrap();
    // h2 is on /r0, now unrequested: the oldest request at * wins (h1's is relaxed).
    assert_eq!(t.match_allocated(P1, "h2", cap(1024)), Some(on_h1));
    t.remove(on_h1).unwrap();
    assert_eq!(t.match_allocated(P1, "h2", cap(1024)), Some(anywhere));
}

#[test]
fn match_allocated_prefers_exact_size_at_a_coarser_level() {
    let mut t = table();
    let small_on_h1 = t.add(req(512).with_nodes(["h1"])).unwrap();
    let big_anywhere = t.add(req(1024)).unwrap();
    // A 1024 container on h1 was allocated for the 1024 ask (the RM decremented that
    // entry), so charging it to the 512 request on h1 would leave the 1024 count stale.
    assert_eq!(t.match_allocated(P1, "h1", cap(1024)), Some(big_anywhere));
    t.remove(big_anywhere).unwrap();
    assert_eq!(t.match_allocated(P1, "h1", cap(1024)), Some(small_on_h1));
}

#[test]
fn allocation_request_ids_are_separate_tables() {
    let mut t = table();
    let mut r = req(1024);
    r.allocation_request_id = 7;
    let seven = t.add(r).unwrap();
    let zero = t.add(req(1024)).unwrap();
    assert_eq!(t.count(7, P1, ANY, cap(1024)), 1);
    assert_eq!(t.count(0, P1, ANY, cap(1024)), 1);
    assert_eq!(t.matching_requests_for(7, P1, ANY, cap(1024)), vec![seven]);
    assert_eq!(t.matching_requests_for(0, P1, ANY, cap(1024)), vec![zero]);
    assert_eq!(t.matching_requests(P1, ANY, cap(1024)), vec![zero, seven]);
}

/// A ResourceManager reduced to what matters for over-allocation: it stores the last
/// absolute count per key and decrements `*` by itself when it allocates.
#[derive(Default)]
struct FakeRm {
    any: BTreeMap<(Priority, Capability), i32>,
    allocated: u32,
}

impl FakeRm {
    fn heartbeat(&mut self, asks: Vec<Ask>) {
        for a in asks.into_iter().filter(|a| a.resource_name == ANY) {
            self.any
                .insert((a.priority, a.capability), a.num_containers);
        }
    }

    /// Allocate everything outstanding; returns the containers granted.
    fn allocate_all(&mut self) -> Vec<(Priority, Capability)> {
        let mut out = Vec::new();
        for (key, n) in &mut self.any {
            while *n > 0 {
                *n -= 1;
                out.push(*key);
            }
        }
        self.allocated += out.len() as u32;
        out
    }
}

/// YARN-1902: without removing satisfied requests, the stale absolute count re-inflates
/// the RM's ask as soon as the entry is sent again.
#[test]
fn yarn_1902_not_removing_matched_requests_over_allocates() {
    let mut t = table();
    let mut rm = FakeRm::default();
    t.add(req(1024)).unwrap();
    t.add(req(1024)).unwrap();
    rm.heartbeat(t.take_asks());
    assert_eq!(rm.allocate_all().len(), 2);
    // The application forgets to remove the two satisfied requests, then wants one more.
    t.add(req(1024)).unwrap();
    rm.heartbeat(t.take_asks());
    rm.allocate_all();
    assert_eq!(rm.allocated, 5, "3 wanted, 5 granted: the trap");
}

#[test]
fn yarn_1902_removing_matched_requests_allocates_exactly() {
    let mut t = table();
    let mut rm = FakeRm::default();
    t.add(req(1024)).unwrap();
    t.add(req(1024)).unwrap();
    rm.heartbeat(t.take_asks());
    for (priority, capability) in rm.allocate_all() {
        let id = t.match_allocated(priority, "h5", capability).unwrap();
        t.remove(id).unwrap();
    }
    t.add(req(1024)).unwrap();
    rm.heartbeat(t.take_asks());
    for (priority, capability) in rm.allocate_all() {
        let id = t.match_allocated(priority, "h5", capability).unwrap();
        t.remove(id).unwrap();
    }
    assert_eq!(rm.allocated, 3);
    assert!(t.is_empty());
    // A later resync re-sends the table: nothing outstanding, nothing re-inflated.
    t.queue_all();
    rm.heartbeat(t.take_asks());
    assert!(rm.allocate_all().is_empty());
}

/// Container `id` of attempt 1 of app 1 (also used by the unit tests of `releases`).
pub(super) fn cid(id: i64) -> ContainerId {
    ContainerId {
        cluster_timestamp: 1,
        app_id: 1,
        attempt_id: 1,
        id,
    }
}

/// A token told apart by `b` (also used by the unit tests of `tokens`).
pub(super) fn token(b: u8) -> Token {
    Token {
        identifier: vec![b],
        password: vec![b],
        kind: "K".into(),
        service: String::new(),
    }
}

#[test]
fn batch_round_trip_success_and_failure() {
    let mut s = AmrmState::new(resolver, Some(token(1)));
    s.table.add(req(1024)).unwrap();
    s.releases.release(cid(2));
    s.exclusions.update(["bad"], Vec::<String>::new());

    let batch = s.take_batch();
    assert_eq!(batch.response_id, 0);
    assert_eq!(batch.asks.len(), 1);
    assert_eq!(batch.releases, vec![cid(2)]);
    assert_eq!(batch.exclusions.additions, vec!["bad".to_string()]);

    // The call fails: the next batch carries the same contents.
    s.restore_batch(batch.clone());
    let again = s.take_batch();
    assert_eq!(again, batch);

    s.on_allocate_success(AllocateOutcome {
        response_id: 1,
        completed: vec![],
        nm_tokens: vec![("h1:8041".into(), token(9))],
        amrm_token: Some(token(2)),
    });
    assert_eq!(s.response_id.current(), 1);
    assert_eq!(s.nm_tokens.get("h1:8041"), Some(&token(9)));
    assert_eq!(s.amrm_token.current(), Some(&token(2)));
    // The retry may have been answered from the RM's cache: its contents go once more.
    let repeat = s.take_batch();
    assert_eq!(repeat.response_id, 1);
    assert_eq!((repeat.asks, repeat.releases), (batch.asks, batch.releases));
    assert_eq!(repeat.exclusions, batch.exclusions);
    s.on_allocate_success(AllocateOutcome {
        response_id: 2,
        ..Default::default()
    });
    let empty = s.take_batch();
    assert_eq!(empty.response_id, 2);
    assert!(empty.asks.is_empty() && empty.releases.is_empty() && empty.exclusions.is_empty());
}

#[test]
fn retried_batch_is_queued_once_more_after_success() {
    let mut s = AmrmState::new(resolver, None);
    s.table.add(req(1024)).unwrap();
    s.releases.release(cid(2));
    let first = s.take_batch();
    s.restore_batch(first); // lost on the wire: maybe processed, maybe not
    s.table.add(req(2048)).unwrap(); // queued between failure and retry
    let retry = s.take_batch();
    assert_eq!(retry.asks.len(), 2);
    // The RM may answer the retry from its cache, ignoring the 2048 ask: send it again.
    s.on_allocate_success(AllocateOutcome {
        response_id: 1,
        completed: vec![cid(2)],
        ..Default::default()
    });
    let next = s.take_batch();
    assert_eq!(next.response_id, 1);
    let mut sizes: Vec<i64> = next.asks.iter().map(|a| a.capability.memory_mb).collect();
    sizes.sort();
    assert_eq!(sizes, vec![1024, 2048]);
    assert!(
        next.releases.is_empty(),
        "container 2 is confirmed completed"
    );
    // Only once: a normal success does not repeat anything.
    s.on_allocate_success(AllocateOutcome {
        response_id: 2,
        ..Default::default()
    });
    assert!(s.take_batch().asks.is_empty());
}

#[test]
fn newer_changes_win_over_a_requeued_retry() {
    let mut s = AmrmState::new(resolver, None);
    let id = s.table.add(req(1024)).unwrap();
    let first = s.take_batch();
    s.restore_batch(first);
    s.take_batch();
    s.table.remove(id).unwrap(); // the container arrived and was matched meanwhile
    s.on_allocate_success(AllocateOutcome {
        response_id: 1,
        ..Default::default()
    });
    let next = s.take_batch();
    assert_eq!(next.asks.len(), 1);
    assert_eq!(next.asks[0].num_containers, 0);
}

#[test]
fn resync_requeues_full_state_and_resets_response_id() {
    let mut s = AmrmState::new(resolver, None);
    let keep = s.table.add(req(1024).with_nodes(["h1"])).unwrap();
    let gone = s.table.add(req(2048)).unwrap();
    s.releases.release(cid(2));
    s.releases.release(cid(3));
    s.exclusions.update(["bad1", "bad2"], Vec::<String>::new());
    s.take_batch();
    s.on_allocate_success(AllocateOutcome {
        response_id: 1,
        completed: vec![cid(2)],
        ..Default::default()
    });
    s.table.remove(gone).unwrap();
    s.exclusions.update(Vec::<String>::new(), ["bad2"]);
    let failed = s.take_batch();
    assert_eq!(failed.response_id, 1);

    // ApplicationMasterNotRegisteredException for that batch.
    s.resync(Some(failed));
    s.on_registered(vec![("h7:8041".into(), token(7))]);
    let batch = s.take_batch();
    assert_eq!(batch.response_id, 0);
    let asks = asks_by_location(
        &batch
            .asks
            .iter()
            .filter(|a| a.capability == cap(1024))
            .cloned()
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        asks,
        BTreeMap::from([("h1".into(), 1), ("/r1".into(), 1), (ANY.into(), 1)])
    );
    // The removal's 0 from the failed batch is not lost.
    let zero = batch
        .asks
        .iter()
        .find(|a| a.capability == cap(2048))
        .unwrap();
    assert_eq!(zero.num_containers, 0);
    assert_eq!(batch.releases, vec![cid(3)], "2 completed, 3 still pending");
    assert_eq!(batch.exclusions.additions, vec!["bad1".to_string()]);
    assert_eq!(batch.exclusions.removals, vec!["bad2".to_string()]);
    assert_eq!(s.nm_tokens.get("h7:8041"), Some(&token(7)));
    assert!(s.table.get(keep).is_some());
}

mod props {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Add {
            prio: i32,
            mb: i64,
            nodes: Vec<u8>,
            racks: Vec<u8>,
            relax: bool,
        },
        Remove(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (
                1..3i32,
                prop::sample::select(vec![512i64, 1024, 2048]),
                prop::collection::vec(0..5u8, 0..3),
                prop::collection::vec(0..3u8, 0..2),
                prop::bool::weighted(0.8),
            )
                .prop_map(|(prio, mb, nodes, racks, relax)| Op::Add {
                    prio,
                    mb,
                    nodes,
                    racks,
                    relax
                }),
            2 => any::<usize>().prop_map(Op::Remove),
        ]
    }

    fn to_request(prio: i32, mb: i64, nodes: &[u8], racks: &[u8], relax: bool) -> ContainerRequest {
        ContainerRequest::anywhere(cap(mb), Priority(prio))
            .with_nodes(nodes.iter().map(|n| format!("h{n}")))
            .with_racks(racks.iter().map(|r| format!("/r{r}")))
            .relax_locality(relax)
    }

    /// Apply ops, return the table and the outstanding requests it should hold.
    fn run(ops: &[Op]) -> (RequestTable, BTreeMap<RequestId, ContainerRequest>) {
        let mut t = table();
        let mut live = BTreeMap::new();
        for op in ops {
            match op {
                Op::Add {
                    prio,
                    mb,
                    nodes,
                    racks,
                    relax,
                } => {
                    let r = to_request(*prio, *mb, nodes, racks, *relax);
                    if let Ok(id) = t.add(r.clone()) {
                        live.insert(id, r);
                    }
                }
                Op::Remove(i) if !live.is_empty() => {
                    let id = *live.keys().nth(i % live.len()).unwrap();
                    t.remove(id).unwrap();
                    live.remove(&id);
                }
                Op::Remove(_) => {}
            }
        }
        (t, live)
    }

    fn locations(r: &ContainerRequest) -> BTreeSet<String> {
        let mut l: BTreeSet<String> = r.nodes.iter().cloned().collect();
        l.extend(r.racks.iter().cloned());
        l.extend(r.nodes.iter().map(|n| resolver(n)));
        l.insert(ANY.to_string());
        l
    }

    proptest! {
        /// (a) `*` counts = outstanding requests per (priority, capability);
        /// (b) node/rack counts = outstanding requests naming them (racks also via nodes);
        /// (c) no count is ever negative, and no zero entry lingers in the table.
        #[test]
        fn counts_equal_outstanding_requests(ops in prop::collection::vec(op(), 0..40)) {
            let (t, live) = run(&ops);
            let mut expected: BTreeMap<(Priority, Capability, String), i32> = BTreeMap::new();
            for r in live.values() {
                for l in locations(r) {
                    *expected.entry((r.priority, r.capability, l)).or_default() += 1;
                }
            }
            let actual: BTreeMap<(Priority, Capability, String), i32> = t
                .snapshot()
                .into_iter()
                .map(|a| ((a.priority, a.capability, a.resource_name), a.num_containers))
                .collect();
            prop_assert!(actual.values().all(|n| *n > 0));
            prop_assert_eq!(actual, expected);
        }

        /// (c) asks are never negative either, at any point of the sequence.
        #[test]
        fn asks_never_negative(ops in prop::collection::vec(op(), 0..40)) {
            let mut t = table();
            let mut live: Vec<RequestId> = Vec::new();
            for op in &ops {
                match op {
                    Op::Add { prio, mb, nodes, racks, relax } => {
                        if let Ok(id) = t.add(to_request(*prio, *mb, nodes, racks, *relax)) {
                            live.push(id);
                        }
                    }
                    Op::Remove(i) if !live.is_empty() => {
                        let id = live.remove(i % live.len());
                        t.remove(id).unwrap();
                    }
                    Op::Remove(_) => {}
                }
                prop_assert!(t.pending_asks().all(|a| a.num_containers >= 0));
            }
        }

        /// (d) granting containers and charging each to a matched request never lets the
        /// RM's outstanding ask exceed the outstanding requests: after every heartbeat the
        /// RM holds exactly the table's `*` counts, and with no user removals every
        /// granted container matches a request (no surplus) and grants never exceed adds.
        #[test]
        fn matching_and_removing_never_over_allocates(
            steps in prop::collection::vec(
                (op(), prop::collection::vec((0..5u8, any::<prop::sample::Index>()), 0..4), any::<bool>()),
                1..30,
            ),
            user_removes in any::<bool>(),
        ) {
            let mut t = table();
            let mut rm = FakeRm::default();
            let mut added = 0u32;
            let mut kept = 0u32;
            let mut surplus = 0u32;
            let mut removed = 0u32;
            for (op, grants, heartbeat) in &steps {
                match op {
                    Op::Add { prio, mb, nodes, .. } => {
                        // Relaxed requests: the fake RM allocates at * only.
                        if t.add(to_request(*prio, *mb, nodes, &[], true)).is_ok() {
                            added += 1;
                        }
                    }
                    Op::Remove(i) if user_removes && !t.is_empty() => {
                        let id = t.requests().nth(i % t.len()).unwrap().0;
                        t.remove(id).unwrap();
                        removed += 1;
                    }
                    Op::Remove(_) => {}
                }
                if *heartbeat {
                    rm.heartbeat(t.take_asks());
                    for ((p, c), n) in &rm.any {
                        prop_assert_eq!(*n, t.count(0, *p, ANY, *c));
                    }
                }
                for (host, pick) in grants {
                    let open: Vec<(Priority, Capability)> =
                        rm.any.iter().filter(|(_, n)| **n > 0).map(|(k, _)| *k).collect();
                    if open.is_empty() {
                        break;
                    }
                    let key = open[pick.index(open.len())];
                    *rm.any.get_mut(&key).unwrap() -= 1;
                    rm.allocated += 1;
                    match t.match_allocated(key.0, &format!("h{host}"), key.1) {
                        Some(id) => {
                            t.remove(id).unwrap();
                            kept += 1;
                        }
                        None => surplus += 1,
                    }
                }
                prop_assert!(rm.any.values().all(|n| *n >= 0));
                if !user_removes {
                    // Between heartbeats the RM never holds more than the table wants.
                    for ((p, c), n) in &rm.any {
                        prop_assert!(*n <= t.count(0, *p, ANY, *c));
                    }
                }
            }
            // Every added request is outstanding, satisfied once, or withdrawn.
            prop_assert_eq!(kept + removed + t.len() as u32, added);
            if !user_removes {
                prop_assert_eq!(surplus, 0);
                prop_assert!(rm.allocated <= added);
            }
        }
    }
}
