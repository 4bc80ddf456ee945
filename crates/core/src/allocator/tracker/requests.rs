//! The allocator's request side: the update step that turns the demand into requests,
//! rule 4's relaxing of spread requests, and the request keys lowered and parked so that
//! no `*` count is sent over grants in flight.

use std::collections::HashSet;
use std::sync::Arc;

use tracing::{debug, info};

use super::super::state::{HostName, ListKey, PendingRequest, RackName, Snapshot};
use super::super::strategy::Strategy;
use super::super::update::update_requests;
use super::{Action, Allocator, AllocatorRequestId};

#[derive(Debug, Clone)]
pub(super) struct Request {
    pub(super) id: AllocatorRequestId,
    pub(super) req: PendingRequest,
    /// When it was added, for rule 4 of the default strategy.
    pub(super) since_ms: u64,
    /// Rule 4 has looked at it (once is enough).
    pub(super) relaxed: bool,
    /// Asked with strict locality (rule 5 of the default strategy) until rule 4 relaxes it.
    pub(super) strict: bool,
    /// Rule 4 took this strict request out of YARN's table at heartbeat `n` (the first half
    /// of relaxing it); it is asked again relaxed at the first heartbeat after `n`, if no
    /// container granted meanwhile satisfied it. Not in YARN's table until then.
    pub(super) withdrawn: Option<u64>,
    /// Taken out of YARN's table at heartbeat `n` with the rest of its key, because another
    /// request of that key was cancelled or withdrawn while grants may be on their way for it
    /// ([`RequestKeys`]); asked again as it was, under a quiet key, at the first heartbeat
    /// after `n`.
    pub(super) parked: Option<u64>,
    /// The allocation request id it is (or was last) asked under.
    pub(super) key: i64,
    /// In YARN's table now (neither withdrawn nor parked).
    pub(super) in_table: bool,
    /// Cancelled by this heartbeat's update step (dropped once its key is lowered).
    pub(super) gone: bool,
}

/// A request's node and rack lists.
pub(super) type Lists = (Arc<[HostName]>, Arc<[RackName]>);

/// Rule 4's lists for a request: every host it was placed on that YARN can use and that has
/// room, and their racks joined to its own (YARN counts a node's rack with it, and matching
/// reads the rack list). `None` when that names no host the request does not name already.
fn widened(
    req: &PendingRequest,
    topology: &super::super::state::Topology,
    has_room: &impl Fn(&HostName) -> bool,
) -> Option<Lists> {
    let named: HashSet<&HostName> = req.nodes.iter().collect();
    let adds = req.placed.iter().any(|h| has_room(h) && !named.contains(h));
    adds.then(|| {
        let nodes: Arc<[HostName]> = req.placed.iter().filter(|h| has_room(h)).cloned().collect();
        let mut racks: Vec<RackName> = req.racks.to_vec();
        for n in nodes.iter() {
            let rack = topology.rack_of(n);
            if !racks.contains(rack) {
                racks.push(rack.clone());
            }
        }
        racks.sort();
        (nodes, Arc::from(racks))
    })
}

/// One group's lists in rule 4's pass, and what becomes of its requests.
struct Relaxed {
    key: ListKey,
    lists: Option<Lists>,
    removed: Vec<AllocatorRequestId>,
    added: Vec<AllocatorRequestId>,
    /// Strict requests withdrawn at an earlier heartbeat, now asked relaxed.
    readd: bool,
    /// The key they are asked under: a quiet relaxed one for `readd`, else their own.
    ask_key: i64,
}

impl Relaxed {
    /// The group's ask: withdrawn strict requests added again relaxed, the others replaced;
    /// none when its lists gained no host.
    fn into_action(self) -> Option<Action> {
        let (nodes, racks) = self.lists?;
        Some(if self.readd {
            Action::AddRequests {
                ids: self.added,
                nodes,
                racks,
                strict: false,
                key: self.ask_key,
            }
        } else {
            Action::ReplaceRequests {
                old: self.removed,
                ids: self.added,
                nodes,
                racks,
            }
        })
    }
}

impl Allocator {
    /// Rule 4 of the default strategy: a request the work cap kept off some of its hosts, still
    /// pending after `spread_wait_ms`, is asked again naming every host it was placed on that
    /// YARN can use and that has room. YARN had its chance to spread the executors; now any of
    /// those hosts is better than a rack-local or off-switch container later. Requests of one
    /// group share their lists, so each list is filtered once.
    ///
    /// A strict request is relaxed in two heartbeats, so that YARN is never asked for more
    /// containers than executors are missing. YARN's asks are absolute per (priority,
    /// allocation request id, location), and strict and relaxed requests have different
    /// allocation request ids: a relaxed ask sent with the strict one's cancellation would not
    /// know the containers the scheduler gave the strict requests since our last allocate call
    /// (they come back in the answer to this one), and YARN would fill both: at 1,000 nodes,
    /// 1,000 containers for 600 executors. So the first heartbeat only takes the strict
    /// request out of YARN's table (YARN applies the cancellation before it hands over what it
    /// granted, so nothing more is granted for it); the answer brings the containers it got
    /// meanwhile, which match it as usual; at the next heartbeat what is still pending is asked
    /// again relaxed. A relaxed request that gains hosts is replaced at once: it shares its
    /// `*` entry with its replacement, which `RequestTable::replace` does not re-send.
    pub(super) fn relax_spread(&mut self, now_ms: u64) -> Vec<Action> {
        if self.config.strategy != Strategy::Default {
            return Vec::new();
        }
        let (relaxed, lowered) = self.regroup_spread(now_ms);
        let mut actions = self.lower_keys(&lowered);
        let withdrawn = actions.len();
        actions.extend(relaxed.into_iter().filter_map(Relaxed::into_action));
        if !actions.is_empty() {
            debug!(
                withdrawn,
                asked_again = actions.len() - withdrawn,
                "spread requests: strict ones withdrawn, then asked again relaxed naming every usable host they were placed on"
            );
        }
        actions
    }

    /// Rule 4's pass over the pending requests: the strict ones due withdrawn (their keys
    /// returned, to be lowered), and the others due renumbered with their group's widened
    /// lists (the groups returned, to be asked).
    fn regroup_spread(&mut self, now_ms: u64) -> (Vec<Relaxed>, HashSet<i64>) {
        // A handle of our own, so that the keys can be lowered with the map still read.
        let shared = self.topology.clone();
        let topology = shared.read();
        let (cluster, running, topology) = (&self.cluster, &self.running_per_host, &*topology);
        let has_room = |h: &HostName| cluster.has_room(h, running.get(h).copied().unwrap_or(0));
        let heartbeat = self.heartbeats;
        let mut relaxed: Vec<Relaxed> = Vec::new();
        let mut lowered: HashSet<i64> = HashSet::new();
        for r in &mut self.pending {
            if r.parked.is_some() {
                continue;
            }
            let readd = match r.withdrawn {
                // Withdrawn at this heartbeat: its answer has not come back yet.
                Some(at) if !self.keys.settled(at, heartbeat) => continue,
                Some(_) => true,
                None => {
                    if r.relaxed
                        || (r.req.placed.is_empty() && !r.strict)
                        || now_ms.saturating_sub(r.since_ms) < self.config.spread_wait_ms
                    {
                        continue;
                    }
                    // Looked at once: a request as wide as it can be stays as it is, and a
                    // re-asked one is not re-asked again.
                    r.relaxed = true;
                    if r.strict {
                        // First half (rule 5 ends here): out of YARN's table now (below, with
                        // its key), asked again relaxed at the next heartbeat.
                        r.withdrawn = Some(heartbeat);
                        lowered.insert(r.key);
                        continue;
                    }
                    false
                }
            };
            let req = &r.req;
            let key = req.list_key();
            let g = match relaxed
                .iter()
                .position(|g| g.key == key && g.readd == readd)
            {
                Some(i) => &mut relaxed[i],
                None => {
                    let lists = widened(req, topology, &has_room);
                    // A withdrawn strict request is asked again even when it gains no host.
                    let lists =
                        lists.or_else(|| readd.then(|| (req.nodes.clone(), req.racks.clone())));
                    let ask_key = if readd {
                        self.keys.open(false, heartbeat)
                    } else {
                        r.key
                    };
                    relaxed.push(Relaxed {
                        key,
                        lists,
                        removed: Vec::new(),
                        added: Vec::new(),
                        readd,
                        ask_key,
                    });
                    relaxed.last_mut().expect("just pushed")
                }
            };
            let Some((nodes, racks)) = &g.lists else {
                continue;
            };
            g.removed.push(r.id);
            r.id = self.next_request;
            self.next_request += 1;
            g.added.push(r.id);
            if readd {
                r.key = g.ask_key;
                r.in_table = true;
                let k = self.keys.state(g.ask_key);
                k.asked += 1;
                k.changed_at = heartbeat;
            }
            r.strict = false;
            r.withdrawn = None;
            r.req.nodes = nodes.clone();
            r.req.racks = racks.clone();
        }
        (relaxed, lowered)
    }

    pub(super) fn update(&mut self, now_ms: u64) -> Vec<Action> {
        // The step's snapshot, with the demand and the per-host counts lent to it rather
        // than copied: every event runs an update, and at 1,000 hosts the copy cost more
        // than the step.
        let snapshot = Snapshot {
            demand: std::mem::take(&mut self.demand),
            running: std::mem::take(&mut self.running_per_host),
            starting: self.starting,
            starting_per_host: std::mem::take(&mut self.starting_per_host),
            tasks_per_executor: self.config.tasks_per_executor,
            pending: self.pending.iter().map(|r| r.req.clone()).collect(),
        };
        let plan = update_requests(
            &snapshot,
            self.config.strategy,
            &self.topology.read(),
            &self.cluster,
        );
        (self.demand, self.running_per_host, self.starting_per_host) = (
            snapshot.demand,
            snapshot.running,
            snapshot.starting_per_host,
        );
        let mut actions = Vec::new();
        if !plan.cancel.is_empty() {
            let mut lowered = HashSet::new();
            for &i in &plan.cancel {
                let r = &mut self.pending[i];
                r.gone = true;
                // A withdrawn or parked request is in our table only.
                if r.in_table {
                    lowered.insert(r.key);
                }
            }
            actions = self.lower_keys(&lowered);
            self.pending.retain(|r| !r.gone);
        }
        for g in plan.add_groups() {
            let nodes: Arc<[HostName]> = Arc::from(g.nodes);
            let racks: Arc<[RackName]> = Arc::from(g.racks);
            let placed: Arc<[HostName]> = Arc::from(g.placed);
            // Rule 5: the default strategy's requests that name hosts are strict until rule 4
            // relaxes them.
            let strict = self.config.strategy == Strategy::Default && !nodes.is_empty();
            let key = self.keys.open(strict, self.heartbeats);
            let k = self.keys.state(key);
            k.asked += g.count;
            k.changed_at = self.heartbeats;
            let ids: Vec<AllocatorRequestId> =
                (0..g.count).map(|k| self.next_request + k).collect();
            self.next_request += g.count;
            for &id in &ids {
                self.pending.push(Request {
                    id,
                    req: PendingRequest {
                        nodes: nodes.clone(),
                        racks: racks.clone(),
                        placed: placed.clone(),
                    },
                    since_ms: now_ms,
                    relaxed: false,
                    strict,
                    withdrawn: None,
                    parked: None,
                    key,
                    in_table: true,
                    gone: false,
                });
            }
            actions.push(Action::AddRequests {
                ids,
                nodes,
                racks,
                strict,
                key,
            });
        }
        if !actions.is_empty() {
            info!(
                cancelled = plan.cancel.len(),
                added = plan.added(),
                pending = self.pending.len(),
                "updated container requests"
            );
        }
        actions
    }

    /// Takes out of YARN's table the requests of `keys` that leave it (cancelled, or withdrawn
    /// by rule 4). Under a key opened at this heartbeat they simply go: nothing was sent for
    /// it yet. Under any other, grants may be on their way, so the key goes to 0 as a whole
    /// and its other requests are parked, to be asked again at the next heartbeat
    /// ([`RequestKeys`]).
    fn lower_keys(&mut self, keys: &HashSet<i64>) -> Vec<Action> {
        let n = self.heartbeats;
        let mut actions = Vec::new();
        if keys.is_empty() {
            return actions;
        }
        for r in self.pending.iter_mut() {
            if !r.in_table || !keys.contains(&r.key) {
                continue;
            }
            let leaving = r.gone || r.withdrawn.is_some();
            let k = self.keys.state(r.key);
            if leaving || k.opened_at != Some(n) {
                actions.push(Action::RemoveRequest(r.id));
                r.in_table = false;
                k.asked = k.asked.saturating_sub(1);
                k.changed_at = n;
                if !leaving {
                    r.parked = Some(n);
                }
            }
        }
        actions
    }

    /// Parked requests (taken out of YARN's table with their key at an earlier heartbeat) are
    /// asked again as they were, under a quiet key of their kind: the grants that were on
    /// their way for the old key have come back and been matched by now.
    pub(super) fn unpark(&mut self) -> Vec<Action> {
        let n = self.heartbeats;
        struct Group {
            list: ListKey,
            strict: bool,
            key: i64,
            ids: Vec<AllocatorRequestId>,
            lists: Lists,
        }
        let mut groups: Vec<Group> = Vec::new();
        for r in &mut self.pending {
            if r.parked.is_none_or(|at| !self.keys.settled(at, n)) {
                continue;
            }
            r.parked = None;
            r.in_table = true;
            let list = r.req.list_key();
            let g = match groups
                .iter()
                .position(|g| g.list == list && g.strict == r.strict)
            {
                Some(i) => &mut groups[i],
                None => {
                    groups.push(Group {
                        list,
                        strict: r.strict,
                        key: self.keys.open(r.strict, n),
                        ids: Vec::new(),
                        lists: (r.req.nodes.clone(), r.req.racks.clone()),
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            r.id = self.next_request;
            self.next_request += 1;
            r.key = g.key;
            g.ids.push(r.id);
            let k = self.keys.state(g.key);
            k.asked += 1;
            k.changed_at = n;
        }
        groups
            .into_iter()
            .map(|g| Action::AddRequests {
                ids: g.ids,
                nodes: g.lists.0,
                racks: g.lists.1,
                strict: g.strict,
                key: g.key,
            })
            .collect()
    }
}
