//! Where hosts sit: the one host -> rack map of the AM.
//!
//! [`Topology`] is the plain map the allocator's pure steps read. [`SharedTopology`] is the
//! AM's one copy of it: the allocator, the request table's rack lookups, the executor pool
//! and the embedded driver each hold a handle to the same map, so a rack learned once (the
//! RM's node list at start, a node report in an allocate response, the node list fetched
//! again when a container lands on a host nobody knew) is seen by all of them. Before this
//! there were four copies, filled once at start, and a NodeManager that joined later stayed
//! on [`DEFAULT_RACK`] for the request table and the driver.
//!
//! Sans-IO: a map behind a lock, never waited on for long (every holder runs on the AM's
//! loop; the lock only makes the handle `Send + Sync` for the request table's resolver).

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use yarn_am_wire::ids::{HostName, RackName};

/// The rack YARN uses for a host its topology script does not know.
pub const DEFAULT_RACK: &str = "/default-rack";

/// Host -> rack resolution. Hosts the topology does not know sit on [`DEFAULT_RACK`].
///
/// Racks are interned: each distinct rack name has one shared copy and a small id (the
/// default rack is id 0), so that the update step can group preferred hosts by rack with an
/// array indexed by id instead of hashing and comparing rack names once per host (at 10,000
/// hosts that was a tenth of the step). Equal names have equal ids.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Host -> rack id.
    racks: HashMap<HostName, u32>,
    /// Rack id -> name; `names[0]` is [`DEFAULT_RACK`].
    names: Vec<RackName>,
    /// Rack name -> id.
    ids: HashMap<RackName, u32>,
}

impl Default for Topology {
    fn default() -> Self {
        let default_rack = RackName::from(DEFAULT_RACK);
        Topology {
            racks: HashMap::new(),
            names: vec![default_rack.clone()],
            ids: HashMap::from([(default_rack, 0)]),
        }
    }
}

impl Topology {
    pub fn new(racks: HashMap<HostName, RackName>) -> Self {
        let mut topology = Topology::default();
        topology.racks.reserve(racks.len());
        for (host, rack) in racks {
            topology.set_rack(host, rack);
        }
        topology
    }

    pub fn rack_of(&self, host: &str) -> &RackName {
        &self.names[self.rack_id(host) as usize]
    }

    /// The host's rack if the topology knows the host (no [`DEFAULT_RACK`] fallback).
    pub fn known_rack(&self, host: &str) -> Option<&RackName> {
        self.racks.get(host).map(|&id| &self.names[id as usize])
    }

    /// The id of the host's rack (0, [`DEFAULT_RACK`]'s, for a host not known): below
    /// [`rack_count`](Self::rack_count), named by [`rack_name`](Self::rack_name).
    pub fn rack_id(&self, host: &str) -> u32 {
        self.racks.get(host).copied().unwrap_or(0)
    }

    /// The rack with this id.
    pub fn rack_name(&self, id: u32) -> &RackName {
        &self.names[id as usize]
    }

    /// Hosts known (each with its rack).
    pub fn host_count(&self) -> usize {
        self.racks.len()
    }

    /// Distinct racks known, the default rack included: rack ids are below it.
    pub fn rack_count(&self) -> usize {
        self.names.len()
    }

    pub fn set_rack(&mut self, host: HostName, rack: RackName) {
        let id = match self.ids.get(&rack) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(rack.clone());
                self.ids.insert(rack, id);
                id
            }
        };
        self.racks.insert(host, id);
    }
}

/// A handle to the AM's one [`Topology`]; clones share the map (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct SharedTopology(Arc<RwLock<Topology>>);

impl SharedTopology {
    pub fn new(topology: Topology) -> Self {
        SharedTopology(Arc::new(RwLock::new(topology)))
    }

    /// The map, for a pure step that looks up many hosts. A panic while the map was being
    /// written cannot leave it half-changed (one insert), so a poisoned lock is still read.
    pub fn read(&self) -> RwLockReadGuard<'_, Topology> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Topology> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The host's rack, [`DEFAULT_RACK`] for a host not known (yet).
    pub fn rack_of(&self, host: &str) -> RackName {
        self.read().rack_of(host).clone()
    }

    /// The host's rack if known.
    pub fn known_rack(&self, host: &str) -> Option<RackName> {
        self.read().known_rack(host).cloned()
    }

    pub fn knows(&self, host: &str) -> bool {
        self.read().known_rack(host).is_some()
    }

    /// Records (or corrects) a host's rack; every handle sees it at once.
    pub fn set_rack(&self, host: HostName, rack: RackName) {
        self.write().set_rack(host, rack);
    }

    /// Records a rack only for a host not known yet: what others report second-hand (an
    /// executor's registration) never overrides what the RM reported, and [`DEFAULT_RACK`]
    /// (what a lookup answers for a host not known yet) is not recorded as a fact, so the
    /// RM's answer can still come.
    pub fn learn(&self, host: &str, rack: &str) {
        if rack != DEFAULT_RACK && !self.knows(host) {
            self.set_rack(host.into(), rack.into());
        }
    }
}

impl From<Topology> for SharedTopology {
    fn from(t: Topology) -> Self {
        SharedTopology::new(t)
    }
}

impl From<HashMap<String, String>> for SharedTopology {
    fn from(racks: HashMap<String, String>) -> Self {
        SharedTopology::new(Topology::new(
            racks
                .into_iter()
                .map(|(h, r)| (HostName::from(h), RackName::from(r)))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_handle_sees_a_rack_learned_later() {
        let a = SharedTopology::from(HashMap::from([("nm1".to_string(), "/r1".to_string())]));
        let b = a.clone();
        assert_eq!(&*b.rack_of("nm4"), DEFAULT_RACK);
        assert!(!b.knows("nm4"));
        a.set_rack("nm4".into(), "/r2".into());
        assert_eq!(&*b.rack_of("nm4"), "/r2");
        assert_eq!(b.known_rack("nm1").as_deref(), Some("/r1"));
    }

    #[test]
    fn learning_never_overrides_a_known_rack() {
        let t = SharedTopology::from(HashMap::from([("nm1".to_string(), "/r1".to_string())]));
        t.learn("nm1", "/r9");
        t.learn("nm2", "/r2");
        t.learn("nm3", DEFAULT_RACK);
        assert_eq!(&*t.rack_of("nm1"), "/r1");
        assert_eq!(&*t.rack_of("nm2"), "/r2");
        assert!(!t.knows("nm3"), "the fallback rack is not a fact");
    }
}
