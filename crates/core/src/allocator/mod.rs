//! The allocator: from a driver's task demand to YARN container requests, and from YARN's
//! grants and completions back to executor launches and driver notices.
//!
//! Sans-IO: nothing in here opens a socket, reads a clock or spawns a task. The AM's event loop
//! feeds in what happened (with the time, when it matters) and carries out the actions that
//! come back. That keeps every decision reproducible in tests, benchmarks and the simulator.
//!
//! - [`state`]: the inputs of one step (demand, pending requests, topology, cluster facts);
//! - [`strategy`]: `spark` and `default` placement rules;
//! - [`placement`]: ratio round-up, computed as `(count, nodes, racks)` groups;
//! - [`update`]: the update step (split, cancel, place, fill or trade);
//! - `names`: host names in name order by integer keys (the placement's tie-break);
//! - [`matching`]: granted containers against pending requests (node, rack, any);
//! - [`exit_status`]: why a container ended, and whether it counts against the app;
//! - [`tracker`]: the event-driven allocator the AM drives.
//!
//! [`literal`] is Spark's step ported per container, as Spark writes it: the benchmark
//! baseline and the oracle the property tests check [`update_requests`] against. The AM never
//! calls it. The locality simulator is [`crate::sim`].

pub mod exit_status;
pub mod literal;
pub mod matching;
mod names;
pub mod placement;
pub mod state;
pub mod strategy;
pub mod tracker;
pub mod update;

pub use placement::{HostNeed, Placement, RequestGroup};
pub use state::{
    Cluster, Demand, HostName, PendingRequest, RackName, Snapshot, Topology, DEFAULT_RACK,
};
pub use strategy::Strategy;
pub use update::{update_requests, UpdatePlan};
