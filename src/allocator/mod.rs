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
//! - [`matching`]: granted containers against pending requests (node, rack, any);
//! - [`exit_status`]: why a container ended, and whether it counts against the app;
//! - [`tracker`]: the event-driven allocator the AM drives.
//!
//! The evaluation tools are not part of the AM's build: the literal per-container port of
//! Spark's step (the benchmark baseline and a test oracle) and the locality simulator live in
//! `tests/support/{literal,sim}.rs`, shared by the tests, benches and the `sim` example
//! through `#[path]`.

pub mod exit_status;
pub mod matching;
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
