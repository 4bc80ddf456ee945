//! Plain value types of the request table itself: the user's [`ContainerRequest`], its
//! handle, the key of a table entry and container ids. The ask vocabulary it shares with
//! the AMRM client (`Ask`, `Capability`, `Priority`, `ANY`) is in `crate::ask`.
//!
//! They mirror the fields of YARN's protos one to one, so that converting them to and from
//! protobuf (done by the IPC layer, not here) is a field copy. Keeping protobuf out of this
//! module lets the bookkeeping be tested without any wire code.

use std::fmt;

use crate::ask::{Ask, Capability, Priority};

/// What Hadoop's `RackResolver` answers for a node it has no topology for.
pub const DEFAULT_RACK: &str = "/default-rack";

/// A user-level request for one container: the unit the application adds, matches and
/// removes. One `ContainerRequest` contributes +1 to several table entries (its nodes, their
/// racks, its explicit racks and `*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerRequest {
    pub capability: Capability,
    /// Preferred hosts (hostnames as the NMs report them). Duplicates are ignored.
    pub nodes: Vec<String>,
    /// Preferred racks, in addition to the racks of `nodes`. Duplicates are ignored.
    pub racks: Vec<String>,
    pub priority: Priority,
    /// `false` = only the named nodes/racks are acceptable: the scheduler must not fall
    /// back to the rack of a node or to `*`.
    pub relax_locality: bool,
    /// Node label expression; only sent on the `*` entry, as Hadoop does.
    pub node_label: Option<String>,
    /// Hadoop's `ContainerRequest` defaults this to 0 (the proto default is -1).
    pub allocation_request_id: i64,
    /// Countable resources beyond memory and vcores, by name (see [`crate::ask::Ask`]).
    /// Matching grants ignores them: the RM grants a request's resources as asked.
    pub resources: Vec<(String, i64)>,
}

impl ContainerRequest {
    /// A request that may run anywhere (`relax_locality = true`, no preferred locations).
    pub fn anywhere(capability: Capability, priority: Priority) -> Self {
        Self {
            capability,
            nodes: Vec::new(),
            racks: Vec::new(),
            priority,
            relax_locality: true,
            node_label: None,
            allocation_request_id: 0,
            resources: Vec::new(),
        }
    }

    /// Builder-style: prefer these nodes.
    pub fn with_nodes<I, S>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.nodes = nodes.into_iter().map(Into::into).collect();
        self
    }

    /// Builder-style: prefer these racks.
    pub fn with_racks<I, S>(mut self, racks: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.racks = racks.into_iter().map(Into::into).collect();
        self
    }

    /// Builder-style: set locality relaxation.
    pub fn relax_locality(mut self, relax: bool) -> Self {
        self.relax_locality = relax;
        self
    }
}

/// Handle of a request held by the table. Ids grow monotonically, so ordering by id is
/// ordering by insertion (oldest first), which is how matches are returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "req#{}", self.0)
    }
}

/// Identity of a table entry / ask: everything but the count (and the flags that go with
/// it). Two asks with the same key replace each other; the newer absolute count wins.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct AskKey {
    pub allocation_request_id: i64,
    pub priority: Priority,
    pub resource_name: String,
    pub capability: Capability,
}

impl From<&Ask> for AskKey {
    fn from(a: &Ask) -> Self {
        AskKey {
            allocation_request_id: a.allocation_request_id,
            priority: a.priority,
            resource_name: a.resource_name.clone(),
            capability: a.capability,
        }
    }
}

/// A container id with the fields of `ContainerIdProto` (application id, attempt id and
/// the container number, whose bits above 40 carry the RM epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContainerId {
    pub cluster_timestamp: i64,
    pub app_id: i32,
    pub attempt_id: i32,
    pub id: i64,
}

impl fmt::Display for ContainerId {
    /// Hadoop's `ContainerId.toString()` layout, so that logs can be grepped against RM
    /// and NM logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let epoch = self.id >> 40;
        let seq = self.id & 0xFF_FFFF_FFFF;
        if epoch > 0 {
            write!(f, "container_e{epoch:02}_")?;
        } else {
            write!(f, "container_")?;
        }
        write!(
            f,
            "{}_{:04}_{:02}_{:06}",
            self.cluster_timestamp, self.app_id, self.attempt_id, seq
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_id_formats_like_hadoop() {
        let plain = ContainerId {
            cluster_timestamp: 1_700_000_000_000,
            app_id: 7,
            attempt_id: 1,
            id: 2,
        };
        assert_eq!(plain.to_string(), "container_1700000000000_0007_01_000002");
        let with_epoch = ContainerId {
            id: (3 << 40) | 12,
            ..plain
        };
        assert_eq!(
            with_epoch.to_string(),
            "container_e03_1700000000000_0007_01_000012"
        );
    }
}
