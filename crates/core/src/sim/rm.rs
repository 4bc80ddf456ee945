//! The ResourceManager model: the AM's requests as the RM's table holds them ([`Book`]), and
//! each request key's counts, location entries and missed opportunities as the
//! CapacityScheduler keeps them ([`RmKey`]); the order nodes heartbeat in.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::trace::{unit, Locations, Rng, Trace};
use crate::allocator::tracker::{Action, AllocatorRequestId};
use crate::allocator::{HostName, RackName};

/// The order in which the nodes heartbeat in one interval (see
/// [`TraceConfig::heartbeat_phase_jitter`]): a fresh shuffle, or the phase order with each
/// node moved by a random 0 to `jitter` places.
pub(super) fn heartbeat_order(rng: &mut Rng, phases: &[usize], jitter: Option<f64>) -> Vec<usize> {
    let mut order = phases.to_vec();
    match jitter {
        None => rng.shuffle(&mut order),
        Some(j) if j > 0.0 => {
            let mut keyed: Vec<(f64, usize)> = phases
                .iter()
                .enumerate()
                .map(|(place, &n)| (place as f64 + j * unit(rng), n))
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            order = keyed.into_iter().map(|(_, n)| n).collect();
        }
        Some(_) => {}
    }
    order
}

/// The AM's outstanding requests as the RM's table holds them, kept from the allocator's
/// request actions (added, removed, replaced) as the AM's request book applies them: by id,
/// each request's host and rack indices, whether it is strict, and its allocation request id.
#[derive(Default)]
pub struct Book {
    pub requests: HashMap<AllocatorRequestId, (Arc<Locations>, bool, i64)>,
    /// Allocation request ids whose `*` count an applied action changed (sent to the RM at
    /// the next call); a satisfied request changes none. Cleared by the caller.
    pub dirty: HashSet<i64>,
}

impl Book {
    pub fn apply(
        &mut self,
        actions: &[Action],
        locate: &impl Fn(&[HostName], &[RackName]) -> Locations,
    ) {
        for a in actions {
            match a {
                Action::AddRequests {
                    ids,
                    nodes,
                    racks,
                    strict,
                    key,
                } => {
                    let l = Arc::new(locate(nodes, racks));
                    for &id in ids {
                        self.requests.insert(id, (l.clone(), *strict, *key));
                    }
                    self.dirty.insert(*key);
                }
                Action::RemoveRequest(id) => {
                    if let Some(r) = self.requests.remove(id) {
                        self.dirty.insert(r.2);
                    }
                }
                Action::RequestSatisfied(id) => {
                    self.requests.remove(id);
                }
                Action::ReplaceRequests {
                    old,
                    ids,
                    nodes,
                    racks,
                } => {
                    let l = Arc::new(locate(nodes, racks));
                    for (o, &id) in old.iter().zip(ids) {
                        if let Some(r) = self.requests.remove(o) {
                            self.requests.insert(id, (l.clone(), false, r.2));
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// One of YARN's request keys for our executors as the CapacityScheduler holds it: per host,
/// per rack and ANY counts, the location entries the off-switch wait counts (module docs), and
/// the missed scheduling opportunities, which YARN counts per key.
pub(super) struct RmKey {
    pub(super) hosts: Vec<u64>,
    pub(super) racks: Vec<u64>,
    pub(super) any: u64,
    pub(super) host_entry: Vec<bool>,
    pub(super) rack_entry: Vec<bool>,
    pub(super) locations: usize,
    pub(super) missed: u64,
}

impl RmKey {
    pub(super) fn new(trace: &Trace) -> RmKey {
        RmKey {
            hosts: vec![0; trace.hosts.len()],
            racks: vec![0; trace.racks.len()],
            any: 0,
            host_entry: vec![false; trace.hosts.len()],
            rack_entry: vec![false; trace.racks.len()],
            locations: 0,
            missed: 0,
        }
    }

    /// This round's allocate call: the AM's absolute counts for the key's requests. An ANY of
    /// 0 (nothing pending) makes the RM drop the whole key, zero entries included; otherwise
    /// every location sent stays an entry, even once the AM has set it back to 0.
    pub(super) fn load<'a>(
        &mut self,
        requests: impl Iterator<Item = &'a (Arc<Locations>, bool, i64)>,
    ) {
        self.hosts.iter_mut().for_each(|c| *c = 0);
        self.racks.iter_mut().for_each(|c| *c = 0);
        self.any = 0;
        for (l, _, _) in requests {
            self.any += 1;
            for &h in &l.0 {
                self.hosts[h] += 1;
            }
            for &r in &l.1 {
                self.racks[r] += 1;
            }
        }
        if self.any == 0 {
            self.host_entry.iter_mut().for_each(|e| *e = false);
            self.rack_entry.iter_mut().for_each(|e| *e = false);
        }
        for (e, &c) in self.host_entry.iter_mut().zip(&self.hosts) {
            *e |= c > 0;
        }
        for (e, &c) in self.rack_entry.iter_mut().zip(&self.racks) {
            *e |= c > 0;
        }
        self.locations = self.host_entry.iter().filter(|&&e| e).count()
            + self.rack_entry.iter().filter(|&&e| e).count();
    }

    /// One scheduling opportunity for the key on node `n` (rack `r`): `Some(off_switch)` when
    /// it takes a container there. Node-local always (the rack's count must be above 0 too:
    /// the scheduler checks the rack first); rack-local after `delay` missed opportunities;
    /// off-switch after `min(nodes, ANY x min(1, locations / nodes))`. A strict key places
    /// node-local only. A node- or rack-local container resets the missed count.
    pub(super) fn offer(
        &mut self,
        n: usize,
        r: usize,
        delay: u64,
        nodes: usize,
        strict: bool,
    ) -> Option<bool> {
        self.missed += 1;
        let wait_factor = (self.locations as f64 / nodes as f64).min(1.0);
        let off_switch_wait = (nodes as f64).min(self.any as f64 * wait_factor);
        // An entry the allocation brings to 0 leaves the RM's map until the AM's next call
        // sends it again.
        let locations = &mut self.locations;
        let mut take = |count: &mut u64| {
            *count -= 1;
            if *count == 0 {
                *locations -= 1;
            }
        };
        let off_switch = if self.hosts[n] > 0 && self.racks[r] > 0 {
            take(&mut self.hosts[n]);
            take(&mut self.racks[r]);
            self.missed = 0;
            false
        } else if !strict && self.racks[r] > 0 && self.missed > delay {
            take(&mut self.racks[r]);
            self.missed = 0;
            false
        } else if !strict && (self.missed as f64) > off_switch_wait {
            true
        } else {
            return None;
        };
        self.any -= 1;
        Some(off_switch)
    }
}
