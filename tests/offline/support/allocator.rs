//! Helpers shared by the allocator tests: snapshots from host counts, and plans as sorted
//! node lists so that the grouped plan can be compared with the literal per-container port.
#![allow(dead_code)]

use std::collections::HashMap;

use yarn_am_core::allocator::{Demand, HostName, PendingRequest, Snapshot, UpdatePlan};

pub fn counts<H: AsRef<str>>(pairs: &[(H, u32)]) -> HashMap<HostName, u32> {
    pairs
        .iter()
        .map(|(h, c)| (HostName::from(h.as_ref()), *c))
        .collect()
}

/// A snapshot with nothing starting: `hosts` are the pending tasks' preferred hosts with
/// their task counts, `running` the executors per host.
pub fn snapshot<H: AsRef<str>>(
    target: u32,
    tasks_per_executor: u32,
    aware: u32,
    hosts: &[(H, u32)],
    running: &[(H, u32)],
    pending: Vec<PendingRequest>,
) -> Snapshot {
    Snapshot {
        demand: Demand {
            target_executors: target,
            locality_aware_tasks: aware,
            host_to_local_task_count: counts(hosts),
            ..Demand::default()
        },
        tasks_per_executor,
        running: counts(running),
        starting: 0,
        starting_per_host: HashMap::new(),
        pending,
    }
}

pub fn sorted<S: ToString>(names: impl IntoIterator<Item = S>) -> Vec<String> {
    let mut v: Vec<String> = names.into_iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Node lists as a sorted list of sorted lists: a multiset of node sets.
pub fn sorted_lists(lists: impl IntoIterator<Item = Vec<HostName>>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = lists.into_iter().map(sorted).collect();
    out.sort();
    out
}

/// The containers a plan adds, one node list each (empty: any host), as [`sorted_lists`].
pub fn expanded_adds(plan: &UpdatePlan) -> Vec<Vec<String>> {
    sorted_lists(
        plan.local
            .expand()
            .into_iter()
            .chain((0..plan.any_host).map(|_| Vec::new())),
    )
}
