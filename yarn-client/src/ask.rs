//! One line of the ask table (`ResourceRequestProto`) and the values it is made of: the
//! shared vocabulary of the request table, which computes asks, and the AMRM client,
//! which sends them (the wire conversion lives in `amrm`).

use std::fmt;

/// `ResourceRequest.ANY`: the off-switch location, "anywhere in the cluster".
pub const ANY: &str = "*";

/// Memory and vcores of a container, as in `ResourceProto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Capability {
    pub memory_mb: i64,
    pub vcores: i32,
}

impl Capability {
    pub fn new(memory_mb: i64, vcores: i32) -> Self {
        Self { memory_mb, vcores }
    }

    /// True when a request for `self` is satisfied by a container of size `allocated`:
    /// both memory and vcores fit. The RM rounds requests up to its minimum/increment allocation, so granted containers
    /// are often larger than asked for; matching must accept them.
    pub fn fits_in(&self, allocated: &Capability) -> bool {
        self.memory_mb <= allocated.memory_mb && self.vcores <= allocated.vcores
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<memory:{}, vCores:{}>", self.memory_mb, self.vcores)
    }
}

/// Scheduling priority; in YARN a *lower* number is served first. The RM keys outstanding
/// asks by (priority, allocation request id) and ignores capability, so callers should use
/// one priority per container size (docs/hadoop-rpc-facts.md 5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Priority(pub i32);

/// One entry of the ask list sent in `AllocateRequest.ask`, i.e. a `ResourceRequestProto`.
/// `num_containers` is always the ABSOLUTE number outstanding at this location: the RM
/// replaces its copy with it, it never adds it. Node, rack and `*` lines are separate asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub priority: Priority,
    /// A host name, a rack (`/rack1`) or [`ANY`].
    pub resource_name: String,
    pub capability: Capability,
    pub num_containers: i32,
    pub relax_locality: bool,
    pub node_label: Option<String>,
    pub allocation_request_id: i64,
    /// Countable resources beyond memory and vcores (`yarn.io/gpu`, a cluster's own types),
    /// by name: sent in the capability of every line of the request.
    pub resources: Vec<(String, i64)>,
}

impl Ask {
    /// A hand-written ask line: locality relaxed, no node label, and the proto's default
    /// allocation request id (-1).
    pub fn new(priority: Priority, resource_name: &str, capability: Capability, n: i32) -> Self {
        Self {
            priority,
            resource_name: resource_name.to_string(),
            capability,
            num_containers: n,
            relax_locality: true,
            node_label: None,
            allocation_request_id: -1,
            resources: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_in_needs_both_dimensions() {
        let req = Capability::new(1024, 2);
        assert!(req.fits_in(&Capability::new(1024, 2)));
        assert!(req.fits_in(&Capability::new(2048, 4)));
        assert!(!req.fits_in(&Capability::new(2048, 1)));
        assert!(!req.fits_in(&Capability::new(512, 8)));
    }
}
