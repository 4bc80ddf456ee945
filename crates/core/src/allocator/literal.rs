//! A literal, per-container port of Spark's update step, kept as the baseline for the
//! benchmarks and as an independent oracle in the tests.
//!
//! It deliberately keeps Spark's shape: the placement returns one locality object per
//! container, each with its own host and rack lists, and every container costs a pass over all
//! hosts (O(containers x hosts)). Do not use it in the AM; use [`super::update_requests`].

use std::collections::{HashMap, HashSet};

use super::{HostName, PendingRequest, RackName, Snapshot, Topology};

/// One container's locality, as Spark's placement returns it: `None` means no preference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerLocality {
    pub nodes: Option<Vec<HostName>>,
    pub racks: Option<Vec<RackName>>,
}

/// The literal step's result: one entry per new request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiteralPlan {
    pub cancel: Vec<usize>,
    /// Each new request's node list (empty: any host).
    pub add: Vec<Vec<HostName>>,
}

/// Spark's placement, one object per container.
pub fn localities(
    count: u64,
    snapshot: &Snapshot,
    local_pending: &[&PendingRequest],
    topology: &Topology,
) -> Vec<ContainerLocality> {
    let demand = &snapshot.demand;
    let total: u64 = demand
        .host_to_local_task_count
        .values()
        .map(|&c| u64::from(c))
        .sum();
    let executors = demand
        .locality_aware_tasks
        .div_ceil(snapshot.tasks_per_executor.max(1));

    let mut mentions: HashMap<&HostName, u64> = HashMap::new();
    for r in local_pending {
        for n in r.nodes.iter() {
            *mentions.entry(n).or_insert(0) += 1;
        }
    }
    let all_mentions: u64 = mentions.values().sum();

    let mut needs: HashMap<&HostName, i64> = HashMap::new();
    for (host, &c) in &demand.host_to_local_task_count {
        let expected = f64::from(c) * f64::from(executors) / total as f64;
        let pending = mentions.get(host).map_or(0.0, |&m| {
            m as f64 * local_pending.len() as f64 / all_mentions as f64
        });
        let existed = f64::from(snapshot.running.get(host).copied().unwrap_or(0)) + pending;
        let need = (expected - existed).ceil();
        needs.insert(
            host,
            if need.is_nan() {
                0
            } else {
                (need as i64).max(0)
            },
        );
    }
    let aware_sum: i64 = needs.values().sum();
    let free = (count as i64 - aware_sum).max(0);
    let aware = count as i64 - free;

    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..free {
        out.push(ContainerLocality {
            nodes: None,
            racks: None,
        });
    }
    if aware > 0 {
        let largest = *needs.values().max().expect("aware > 0 implies a host");
        let mut ratios: HashMap<&HostName, i64> = needs
            .iter()
            .map(|(h, &n)| (*h, (n as f64 * aware as f64 / largest as f64).ceil() as i64))
            .collect();
        for _ in 0..aware {
            let hosts: Vec<HostName> = ratios
                .iter()
                .filter(|(_, &r)| r > 0)
                .map(|(h, _)| (*h).clone())
                .collect();
            let racks: HashSet<RackName> =
                hosts.iter().map(|h| topology.rack_of(h).clone()).collect();
            out.push(ContainerLocality {
                nodes: Some(hosts),
                racks: Some(racks.into_iter().collect()),
            });
            for r in ratios.values_mut() {
                *r -= 1;
            }
        }
    }
    out
}

/// Spark's update step with one request object per container.
pub fn update_requests(snapshot: &Snapshot, topology: &Topology) -> LiteralPlan {
    let preferred: HashSet<&HostName> = snapshot.demand.host_to_local_task_count.keys().collect();
    let (mut local, mut stale, mut any) = (Vec::new(), Vec::new(), Vec::new());
    for (i, r) in snapshot.pending.iter().enumerate() {
        if r.nodes.is_empty() {
            any.push(i);
        } else if r.nodes.iter().any(|n| preferred.contains(n)) {
            local.push(i);
        } else {
            stale.push(i);
        }
    }
    let missing = snapshot.missing();
    let mut plan = LiteralPlan::default();
    if missing > 0 {
        plan.cancel.extend(&stale);
        let available = missing + stale.len() as i64;
        let potential = available + any.len() as i64;
        let local_reqs: Vec<&PendingRequest> =
            local.iter().map(|&i| &snapshot.pending[i]).collect();
        let new_local: Vec<Vec<HostName>> =
            localities(potential as u64, snapshot, &local_reqs, topology)
                .into_iter()
                .filter_map(|l| l.nodes)
                .collect();
        let n_local = new_local.len() as i64;
        plan.add = new_local;
        if available >= n_local {
            plan.add
                .extend((0..available - n_local).map(|_| Vec::new()));
        } else {
            plan.cancel
                .extend(any.iter().take((n_local - available) as usize));
        }
    } else if missing < 0 && !snapshot.pending.is_empty() {
        let n = (-missing).min(snapshot.pending.len() as i64) as usize;
        plan.cancel = stale
            .iter()
            .chain(&any)
            .chain(&local)
            .copied()
            .take(n)
            .collect();
    }
    plan.cancel.sort_unstable();
    plan
}
