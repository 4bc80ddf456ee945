//! The update step: turns the demand and the request table into requests to add and cancel.
//!
//! Pure and allocation-light: O(pending + hosts log hosts). The placement is returned as
//! groups ([`Placement`]); nothing here creates one object per container.

use super::placement::{Placement, RequestGroup};
use std::collections::HashSet;

use super::state::{Cluster, PendingRequest, RackName, Snapshot, Topology};
use super::strategy::{Preferences, Strategy};

/// What one update step changes in the request table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdatePlan {
    /// Indices into `Snapshot::pending` to cancel, ascending.
    pub cancel: Vec<usize>,
    /// New requests with locality.
    pub local: Placement,
    /// New requests for any host.
    pub any_host: u64,
}

impl UpdatePlan {
    /// New requests, locality groups first (widest first), then the any-host group if any.
    pub fn add_groups(&self) -> impl Iterator<Item = RequestGroup<'_>> + '_ {
        let any = (self.any_host > 0).then_some(RequestGroup {
            count: self.any_host,
            nodes: &[],
            racks: &[],
            placed: &[],
        });
        self.local.groups().chain(any)
    }

    /// Requests added in total.
    pub fn added(&self) -> u64 {
        self.local.local_count() + self.any_host
    }
}

/// Pending requests by what they are still good for.
#[derive(Debug, Default)]
struct PendingByUse {
    local: Vec<usize>,
    stale: Vec<usize>,
    any_host: Vec<usize>,
}

impl PendingByUse {
    /// Sorts the pending requests by use: a request placed on a host some task still prefers
    /// is local, one naming nothing is any-host, the rest are stale.
    fn of(snapshot: &Snapshot, prefs: &Preferences<'_>, topology: &Topology) -> PendingByUse {
        let mut split = PendingByUse::default();
        // Racks some task still wants, for requests that name racks only and carry no record of
        // the hosts behind them (`plan` input can give those).
        let mut wanted_racks: Option<HashSet<&RackName>> = None;
        for (i, req) in snapshot.pending.iter().enumerate() {
            let placed = req.placed_hosts();
            let local = if !placed.is_empty() {
                placed.iter().any(|n| prefs.is_preferred(n))
            } else if req.is_any_host() {
                split.any_host.push(i);
                continue;
            } else {
                // Racks only, and no record of the hosts behind them (e.g. `plan` input): keep it
                // while some task wants a host on one of its racks.
                let wanted = wanted_racks.get_or_insert_with(|| {
                    let counts = &snapshot.demand.host_to_local_task_count;
                    counts
                        .iter()
                        .filter(|(_, &c)| c > 0)
                        .map(|(h, _)| topology.rack_of(h))
                        .collect()
                });
                req.racks.iter().any(|r| wanted.contains(r))
            };
            if local {
                split.local.push(i);
            } else {
                split.stale.push(i);
            }
        }
        split
    }
}

/// Runs one update step (docs/allocator.md, "Update requests, step by step").
pub fn update_requests(
    snapshot: &Snapshot,
    strategy: Strategy,
    topology: &Topology,
    cluster: &Cluster,
) -> UpdatePlan {
    let prefs = Preferences::new(
        strategy,
        &snapshot.demand,
        snapshot.tasks_per_executor,
        cluster,
    );
    let split = PendingByUse::of(snapshot, &prefs, topology);

    let missing = snapshot.missing();
    // Rule 3 of the default strategy: with the target exactly met, stale requests are swapped
    // for requests with locality instead of lingering.
    let replace_stale = strategy == Strategy::Default && missing == 0 && !split.stale.is_empty();
    let mut plan = UpdatePlan::default();
    if missing > 0 || replace_stale {
        let available = missing as u64 + split.stale.len() as u64;
        // When only re-placing stale requests, leave the any-host ones alone: they are about to
        // be granted, and trading them for local requests only delays executors.
        let tradable = if missing > 0 {
            split.any_host.len() as u64
        } else {
            0
        };
        let potential = available + tradable;
        // A request with no host behind it (racks only) adds to no host's share.
        let local_pending: Vec<&PendingRequest> = split
            .local
            .iter()
            .map(|&i| &snapshot.pending[i])
            .filter(|r| !r.placed_hosts().is_empty())
            .collect();
        let needs = prefs.needs(
            &snapshot.running,
            &snapshot.starting_per_host,
            &local_pending,
            potential,
        );
        // The default strategy's fresh placement (no local request pending) deals names to
        // any request (`Placement::round_up`, `strategy::level_caps`).
        let fresh = strategy == Strategy::Default && local_pending.is_empty();
        plan.local = Placement::round_up(potential, &needs, topology, fresh);
        plan.cancel = split.stale;
        if replace_stale {
            // Only swap a stale request for a request with locality: an old request still names
            // racks that may serve; one that names nothing to YARN (an any-host request, or a
            // request past every cap) does not.
            plan.local.drop_unlocated();
        }
        let new_local = plan.local.local_count();
        if replace_stale {
            plan.cancel.truncate(new_local as usize);
        } else if available >= new_local {
            plan.any_host = available - new_local;
        } else {
            // Trade the oldest any-host requests for local ones. Never more than exist:
            // new_local <= potential = available + any_host.
            let trade = (new_local - available) as usize;
            plan.cancel.extend_from_slice(&split.any_host[..trade]);
        }
    } else if missing < 0 && !snapshot.pending.is_empty() {
        let excess = missing.unsigned_abs().min(snapshot.pending.len() as u64) as usize;
        plan.cancel = split
            .stale
            .iter()
            .chain(&split.any_host)
            .chain(&split.local)
            .copied()
            .take(excess)
            .collect();
    }
    plan.cancel.sort_unstable();
    plan
}
