//! The client-side table of outstanding container requests and the ask list derived from
//! it (Hadoop's `RemoteRequestsTable` + the `ask` set of `AMRMClientImpl`).
//!
//! # Counting rules
//!
//! Every outstanding [`ContainerRequest`] adds 1 to one entry per location it accepts:
//! each distinct node it names, the rack of each of those nodes, each rack it names, and
//! [`ANY`]. An entry is keyed by (allocation request id, priority, location, capability);
//! its count is what the RM is told is outstanding there.
//!
//! # Why absolute counts, and the YARN-1902 trap
//!
//! `ResourceRequestProto.num_containers` is absolute: the RM *replaces* its copy of the
//! entry with each ask it receives, and decrements its copy by itself whenever it
//! allocates a container. The client never sees those decrements. So if the application
//! receives a container and does not remove the request it satisfied, the client's count
//! stays one too high; the next time that entry is sent (because any other request at the
//! same key was added or removed, or on resync) the stale count overwrites the RM's
//! correct, lower one, and the RM allocates the same container again. Repeat and the
//! application is flooded with surplus containers (YARN-1902; Spark, Flink and Gobblin
//! all hit it). The cure, which this table makes easy: for every granted container, find
//! one satisfied request with [`RequestTable::match_allocated`] (or
//! [`RequestTable::matching_requests`]) and [`RequestTable::remove`] it. Removal
//! decrements node, rack *and* `*` entries together, so every level the RM decremented is
//! decremented here too. Containers that match nothing are surplus: release them.
//!
//! # Locality relaxation
//!
//! Node entries are always sent with relax_locality=true (a node is the most specific
//! level; the flag there means nothing to the RM). The racks inferred from a request's
//! nodes and the `*` entry carry the request's own flag: a strict (relax_locality=false)
//! node-only request leaves them at false, which tells the scheduler "do not fall back to
//! this level". Explicitly named racks are always relaxed. Because the RM stores one flag
//! per (priority, location), a request whose flag disagrees with an existing entry at the
//! same priority and location is refused ([`RequestError::LocalityConflict`]), exactly as
//! Hadoop does; so a rack/`*` entry is strict only while no request relaxes it. Strict
//! requests are not matchable at the levels they refuse (they are only linked into
//! entries added with relax=true), so a container on the wrong rack never consumes one.

use std::collections::{BTreeMap, BTreeSet};

use tracing::{debug, warn};

use super::error::RequestError;
use super::rack::{DefaultRackResolver, RackResolver};
use super::types::{AskKey, ContainerRequest, RequestId};
use crate::ask::{Ask, Capability, Priority, ANY};

/// One entry of the table: what the RM is told about one (priority, location, size).
#[derive(Debug, Clone)]
struct Entry {
    num_containers: i32,
    relax_locality: bool,
    node_label: Option<String>,
    resources: Vec<(String, i64)>,
    /// Requests that may be satisfied by a container at this location, oldest first.
    linked: BTreeSet<RequestId>,
}

/// A request as stored: the user's request plus the locations it was counted at, so that
/// removal decrements exactly what addition incremented even if the rack map changed since.
#[derive(Debug, Clone)]
struct Stored {
    request: ContainerRequest,
    nodes: BTreeSet<String>,
    racks: BTreeSet<String>,
}

impl Stored {
    /// The entries this request counts in: its nodes, its racks and `*`.
    fn keys(&self) -> BTreeSet<AskKey> {
        self.nodes
            .iter()
            .chain(self.racks.iter())
            .map(String::as_str)
            .chain(std::iter::once(ANY))
            .map(|l| key_of(&self.request, l))
            .collect()
    }
}

/// Outstanding requests, their per-location counts and the asks not yet sent. No I/O.
pub struct RequestTable {
    resolver: Box<dyn RackResolver>,
    entries: BTreeMap<AskKey, Entry>,
    requests: BTreeMap<RequestId, Stored>,
    asks: BTreeMap<AskKey, Ask>,
    next_id: u64,
}

impl Default for RequestTable {
    fn default() -> Self {
        Self::new(DefaultRackResolver)
    }
}

impl std::fmt::Debug for RequestTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestTable")
            .field("requests", &self.requests.len())
            .field("entries", &self.entries.len())
            .field("pending_asks", &self.asks.len())
            .finish()
    }
}

impl RequestTable {
    pub fn new(resolver: impl RackResolver + 'static) -> Self {
        Self {
            resolver: Box::new(resolver),
            entries: BTreeMap::new(),
            requests: BTreeMap::new(),
            asks: BTreeMap::new(),
            next_id: 0,
        }
    }

    /// Replace the node -> rack resolver (e.g. after new node reports). Requests already
    /// added keep the racks they were counted at.
    pub fn set_rack_resolver(&mut self, resolver: impl RackResolver + 'static) {
        self.resolver = Box::new(resolver);
    }

    /// Add one container request; every entry it touches is queued as an ask.
    pub fn add(&mut self, request: ContainerRequest) -> Result<RequestId, RequestError> {
        validate(&request)?;
        let nodes = dedup("node", &request.nodes);
        let explicit_racks = dedup("rack", &request.racks);
        let inferred_racks: BTreeSet<String> = nodes
            .iter()
            .map(|n| self.resolver.resolve(n))
            .filter(|r| !explicit_racks.contains(r))
            .collect();

        let relax = request.relax_locality;
        self.check_conflict(&request, [ANY], relax)?;
        self.check_conflict(&request, explicit_racks.iter().map(String::as_str), true)?;
        self.check_conflict(&request, inferred_racks.iter().map(String::as_str), relax)?;

        let id = RequestId(self.next_id);
        self.next_id += 1;
        for node in &nodes {
            self.increment(&request, node, true, id);
        }
        for rack in &explicit_racks {
            self.increment(&request, rack, true, id);
        }
        for rack in &inferred_racks {
            self.increment(&request, rack, relax, id);
        }
        self.increment(&request, ANY, relax, id);

        debug!(%id, priority = request.priority.0, capability = %request.capability,
               nodes = nodes.len(), relax, "container request added");
        let racks = explicit_racks.union(&inferred_racks).cloned().collect();
        self.requests.insert(
            id,
            Stored {
                request,
                nodes,
                racks,
            },
        );
        Ok(id)
    }

    /// Remove an outstanding request (because a container satisfied it, or it is no longer
    /// wanted): decrements its node, rack and `*` entries, queues them as asks even at 0
    /// (a 0 overrides the count the RM holds), and drops entries that reached 0.
    pub fn remove(&mut self, id: RequestId) -> Result<ContainerRequest, RequestError> {
        let stored = self
            .requests
            .remove(&id)
            .ok_or(RequestError::UnknownRequest(id))?;
        for key in stored.keys() {
            let Some(entry) = self.entries.get_mut(&key) else {
                let location = &key.resource_name;
                warn!(%id, location, "no table entry to decrement; table out of step");
                continue;
            };
            entry.num_containers = (entry.num_containers - 1).max(0);
            entry.linked.remove(&id);
            self.queue(&key);
            if self.entries[&key].num_containers == 0 {
                self.entries.remove(&key);
            }
        }
        debug!(%id, "container request removed");
        Ok(stored.request)
    }

    /// Remove a request a granted container satisfied. As [`Self::remove`], except that the
    /// lower `*` count is not queued: the RM lowered its own copy when it allocated the
    /// container, and may have lowered it again since for containers still on their way to
    /// us; sending ours would overwrite those decrements and ask again for containers
    /// already granted (the YARN-1902 race, even with every satisfied request removed).
    /// Node and rack entries are queued as usual (the RM decrements only those of the
    /// level it allocated at, and they never raise the total past `*`). An `*` ask already
    /// queued is updated to the new count, so the newest count still wins.
    pub fn remove_satisfied(&mut self, id: RequestId) -> Result<ContainerRequest, RequestError> {
        let any = self
            .requests
            .get(&id)
            .map(|s| key_of(&s.request, ANY))
            .ok_or(RequestError::UnknownRequest(id))?;
        let queued = self.asks.contains_key(&any);
        let request = self.remove(id)?;
        if !queued {
            self.asks.remove(&any);
        }
        Ok(request)
    }

    /// Replace an outstanding request by another, e.g. the same container asked for with
    /// more nodes. Entries only one of them counts change and are queued as usual; entries
    /// both count (`*`, shared nodes and racks) keep their count and are not queued for it.
    /// Sending them would overwrite the RM's copy, which grants still on their way to us may
    /// have lowered: the YARN-1902 trap without any forgotten request. A remove and an add
    /// would queue them. The new request gets a new id; on an error nothing changes.
    pub fn replace(
        &mut self,
        id: RequestId,
        request: ContainerRequest,
    ) -> Result<RequestId, RequestError> {
        let old_keys = self.keys_of(id)?;
        let queued_before: BTreeSet<AskKey> = old_keys
            .iter()
            .filter(|k| self.asks.contains_key(*k))
            .cloned()
            .collect();
        let new_id = self.add(request)?;
        self.remove(id)?;
        let new_keys = self.keys_of(new_id)?;
        for key in old_keys.intersection(&new_keys) {
            if !queued_before.contains(key) {
                self.asks.remove(key);
            }
        }
        Ok(new_id)
    }

    /// The entries an outstanding request counts in.
    fn keys_of(&self, id: RequestId) -> Result<BTreeSet<AskKey>, RequestError> {
        self.requests
            .get(&id)
            .map(Stored::keys)
            .ok_or(RequestError::UnknownRequest(id))
    }

    /// The request behind an id, if still outstanding.
    pub fn get(&self, id: RequestId) -> Option<&ContainerRequest> {
        self.requests.get(&id).map(|s| &s.request)
    }

    /// All outstanding requests, oldest first.
    pub fn requests(&self) -> impl Iterator<Item = (RequestId, &ContainerRequest)> {
        self.requests.iter().map(|(id, s)| (*id, &s.request))
    }

    pub fn len(&self) -> usize {
        self.requests.len()
    }

    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Current count of one table entry (0 when absent).
    pub fn count(
        &self,
        allocation_request_id: i64,
        priority: Priority,
        location: &str,
        capability: Capability,
    ) -> i32 {
        let key = AskKey {
            allocation_request_id,
            priority,
            resource_name: location.to_string(),
            capability,
        };
        self.entries.get(&key).map_or(0, |e| e.num_containers)
    }

    /// The whole table as asks (what a resync sends), in key order.
    pub fn snapshot(&self) -> Vec<Ask> {
        self.entries.iter().map(|(k, e)| to_ask(k, e)).collect()
    }

    /// Requests that a container granted at `location` (a host, a rack or [`ANY`]) with
    /// `capability` at `priority` may satisfy, over every allocation request id. An entry
    /// of exactly that capability comes first, then every smaller entry that fits (largest
    /// first), each oldest request first. Strict requests are only found at the locations
    /// they accept.
    pub fn matching_requests(
        &self,
        priority: Priority,
        location: &str,
        capability: Capability,
    ) -> Vec<RequestId> {
        let alloc_ids: BTreeSet<i64> = self
            .entries
            .keys()
            .map(|k| k.allocation_request_id)
            .collect();
        self.matching_over(alloc_ids, priority, location, capability)
    }

    /// As [`Self::matching_requests`], restricted to one allocation request id (the
    /// container's `allocation_request_id`, when the RM reports it).
    pub fn matching_requests_for(
        &self,
        allocation_request_id: i64,
        priority: Priority,
        location: &str,
        capability: Capability,
    ) -> Vec<RequestId> {
        self.matching_over([allocation_request_id], priority, location, capability)
    }

    /// The request a container granted on `host` should be charged to. Exact-size matches
    /// are preferred at every level (host, then its rack, then `*` — the order the RM
    /// relaxes in) before any smaller request that merely fits, so that a container is
    /// charged to the same (priority, size) entry the RM decremented when it allocated it.
    /// Fits are only needed when the RM rounded the size up; use one priority per size so
    /// that even then the charge is unambiguous. `None` means the container is surplus
    /// (e.g. its request was removed after it was sent): release it.
    pub fn match_allocated(
        &self,
        priority: Priority,
        host: &str,
        capability: Capability,
    ) -> Option<RequestId> {
        let rack = self.resolver.resolve(host);
        let levels = [host, rack.as_str(), ANY];
        let exact = levels.iter().find_map(|location| {
            self.matching_requests(priority, location, capability)
                .into_iter()
                .find(|id| self.requests[id].request.capability == capability)
        });
        let found = exact.or_else(|| {
            levels.iter().find_map(|location| {
                self.matching_requests(priority, location, capability)
                    .first()
                    .copied()
            })
        });
        found
    }

    /// Take the asks changed since the last call (absolute counts), clearing the queue.
    /// Hand them back with [`Self::restore_asks`] if the allocate call fails.
    pub fn take_asks(&mut self) -> Vec<Ask> {
        std::mem::take(&mut self.asks).into_values().collect()
    }

    /// Asks queued for the next allocate, without taking them.
    pub fn pending_asks(&self) -> impl Iterator<Item = &Ask> {
        self.asks.values()
    }

    /// Re-queue asks of a failed allocate call. An entry changed since they were taken has
    /// a newer absolute count queued already; that one wins and the old one is dropped.
    pub fn restore_asks(&mut self, asks: Vec<Ask>) {
        for ask in asks {
            self.asks.entry(AskKey::from(&ask)).or_insert(ask);
        }
    }

    /// Queue every entry of the table (resync: the RM has forgotten our asks). Entries
    /// already queued at 0 stay queued; sending them is harmless.
    pub fn queue_all(&mut self) {
        let keys: Vec<AskKey> = self.entries.keys().cloned().collect();
        for key in keys {
            self.queue(&key);
        }
    }

    fn increment(&mut self, req: &ContainerRequest, location: &str, relax: bool, id: RequestId) {
        let key = key_of(req, location);
        let entry = self.entries.entry(key.clone()).or_insert_with(|| Entry {
            num_containers: 0,
            relax_locality: relax,
            node_label: None,
            resources: Vec::new(),
            linked: BTreeSet::new(),
        });
        entry.num_containers += 1;
        entry.resources = req.resources.clone();
        if relax {
            entry.linked.insert(id);
        }
        if location == ANY {
            entry.node_label = req.node_label.clone();
        }
        self.queue(&key);
    }

    fn queue(&mut self, key: &AskKey) {
        if let Some(entry) = self.entries.get(key) {
            self.asks.insert(key.clone(), to_ask(key, entry));
        }
    }

    /// The requests linked to entries at `location` that `capability` fits, over the given
    /// allocation request ids, best fit first (see [`Self::matching_requests`]).
    fn matching_over(
        &self,
        alloc_ids: impl IntoIterator<Item = i64>,
        priority: Priority,
        location: &str,
        capability: Capability,
    ) -> Vec<RequestId> {
        let mut groups: Vec<(&AskKey, &Entry)> = alloc_ids
            .into_iter()
            .flat_map(|a| self.location_entries(a, priority, location))
            .filter(|(k, e)| k.capability.fits_in(&capability) && !e.linked.is_empty())
            .collect();
        sort_best_fit_first(&mut groups, capability);
        groups
            .into_iter()
            .flat_map(|(_, e)| e.linked.iter().copied())
            .collect()
    }

    fn location_entries<'a>(
        &'a self,
        allocation_request_id: i64,
        priority: Priority,
        location: &str,
    ) -> impl Iterator<Item = (&'a AskKey, &'a Entry)> + 'a {
        let bound = |capability| AskKey {
            allocation_request_id,
            priority,
            resource_name: location.to_string(),
            capability,
        };
        self.entries.range(
            bound(Capability::new(i64::MIN, i32::MIN))..=bound(Capability::new(i64::MAX, i32::MAX)),
        )
    }

    fn check_conflict<'l>(
        &self,
        req: &ContainerRequest,
        locations: impl IntoIterator<Item = &'l str>,
        relax: bool,
    ) -> Result<(), RequestError> {
        for location in locations {
            let clash = self
                .location_entries(req.allocation_request_id, req.priority, location)
                .find(|(_, e)| e.relax_locality != relax);
            if let Some((_, existing)) = clash {
                return Err(RequestError::LocalityConflict {
                    location: location.to_string(),
                    priority: req.priority.0,
                    requested: relax,
                    existing: existing.relax_locality,
                });
            }
        }
        Ok(())
    }
}

fn validate(req: &ContainerRequest) -> Result<(), RequestError> {
    let cap = req.capability;
    if cap.memory_mb < 0 || cap.vcores < 0 {
        return Err(RequestError::NegativeCapability {
            memory_mb: cap.memory_mb,
            vcores: cap.vcores,
        });
    }
    if let Some(label) = &req.node_label {
        if label.contains("&&") || label.contains("||") {
            return Err(RequestError::NodeLabelExpression(label.clone()));
        }
    }
    if !req.relax_locality && req.nodes.is_empty() && req.racks.is_empty() {
        return Err(RequestError::StrictWithoutLocation(req.priority));
    }
    Ok(())
}

fn dedup(what: &str, names: &[String]) -> BTreeSet<String> {
    let set: BTreeSet<String> = names.iter().cloned().collect();
    if set.len() != names.len() {
        warn!(
            ?names,
            "container request names a {what} more than once; counted once"
        );
    }
    set
}

fn key_of(req: &ContainerRequest, location: &str) -> AskKey {
    AskKey {
        allocation_request_id: req.allocation_request_id,
        priority: req.priority,
        resource_name: location.to_string(),
        capability: req.capability,
    }
}

fn to_ask(key: &AskKey, entry: &Entry) -> Ask {
    Ask {
        priority: key.priority,
        resource_name: key.resource_name.clone(),
        capability: key.capability,
        num_containers: entry.num_containers,
        relax_locality: entry.relax_locality,
        node_label: entry.node_label.clone(),
        allocation_request_id: key.allocation_request_id,
        resources: entry.resources.clone(),
    }
}

/// Exact size first, then larger requested sizes before smaller (memory, then vcores),
/// then allocation request id: the request that wastes least of the container wins.
fn sort_best_fit_first(groups: &mut [(&AskKey, &Entry)], allocated: Capability) {
    groups.sort_by(|(a, _), (b, _)| {
        let exact = |k: &AskKey| k.capability != allocated;
        exact(a)
            .cmp(&exact(b))
            .then(b.capability.cmp(&a.capability))
            .then(a.allocation_request_id.cmp(&b.allocation_request_id))
    });
}
