//! A locality simulator: a small model of the ResourceManager fed by demand traces, to compare
//! the strategies on the same input.
//!
//! The model, deliberately simple but faithful where locality is decided:
//! - the cluster has NodeManagers on racks, each holding `capacity` executors; some DataNodes
//!   (hosts holding replicas) run no NodeManager;
//! - each task prefers the 3 hosts holding its block's replicas, drawn with skewed popularity
//!   (weight `1 / rank^skew`) from NodeManagers and DataNode-only hosts alike;
//! - every round the driver sends its whole demand (target = pending tasks / tasks per
//!   executor, capped), the allocator updates its requests, and the RM sees the absolute
//!   request table as YARN does: per host, per rack and ANY counts;
//! - the RM offers every node once per round (a round is one NodeManager heartbeat interval,
//!   [`ROUND_MS`], the time the allocator is given), in random order (or in their heartbeat
//!   phases' order, below; a node busy with other
//!   tenants offers nothing), with capacity-scheduler delay scheduling: node-local always; rack-local
//!   after `node_locality_delay` missed offers; off-switch after
//!   `min(nodes, ANY * min(1, locations / nodes))` missed offers; a non-off-switch grant resets
//!   the count. A node-local container needs the rack's count above 0 too (YARN checks the
//!   rack first). A node keeps taking containers in one heartbeat while it has room, but stops
//!   after its first off-switch one;
//! - `locations` is the number of host and rack entries the RM holds for our requests, which
//!   is not the number of locations with a positive count (below);
//! - granted containers go through the allocator's matching; launched executors start at once;
//!   each executor then finishes `tasks_per_executor` pending tasks per round (the same tasks
//!   whatever the strategy, so both see the same demand);
//! - at the end of each stage all executors are released (idle timeout), unless the trace
//!   keeps them.
//!
//! # The CapacityScheduler facts behind the off-switch rule
//!
//! Read in the Hadoop 3.x source (`RegularContainerAllocator`, `LocalityAppPlacementAllocator`,
//! `AppSchedulingInfo`, `CapacityScheduler`, `CapacitySchedulerConfiguration`):
//! - the off-switch check allows a container once the missed scheduling opportunities exceed
//!   `min(cluster nodes, ANY count * min(1, (unique location asks - 1) / cluster nodes))`,
//!   where the unique location asks are the size of the app's per-key map of resource
//!   requests (hosts, racks and ANY);
//! - an ask from the AM is stored in that map whatever its count, 0 included, and stays there:
//!   an entry leaves the map only when the scheduler's own allocation brings its count to 0,
//!   and the whole map is dropped only when the AM sends an ANY count of 0. The AM sends a 0
//!   for every location whose count it lowers to 0 (our request table does, as Hadoop's
//!   `AMRMClient` does), including right after the scheduler dropped that entry. So the map
//!   holds every host and rack the AM has named since its table was last empty. A host that
//!   runs no NodeManager counts like any other: the RM does not check the names it is sent;
//! - before a node-local or rack-local container the scheduler checks that the app's count for
//!   the node's rack is above 0: host asks cannot outlast their rack's count;
//! - one node heartbeat assigns at most one off-switch container
//!   (`yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments`, default 1);
//!   node- and rack-local ones may be several.
//!
//! The model follows these facts: each round's allocate call adds every location with a
//! positive count to the RM's entries (or clears them when nothing is pending), and a location
//! whose count the round's grants bring to 0 stops counting until the next round.
//! Consequence for the strategies: the more distinct hosts an application names, the longer
//! YARN holds out for locality, whether or not YARN could ever place a container on them.
//!
//! Calibration knobs, off by default (the big tables in BENCHMARKS.md run without them;
//! `examples/locality_trace.rs` sets them to match the real 12-node test cluster):
//! `offers_per_round` (NodeManager heartbeats per one-second round: 2 at the test cluster's
//! 500 ms), `locality_wait_rounds` (the driver's delay scheduling, Spark 3.1's reset rule),
//! `ramp_up` (Spark's executor target growing 1, 2, 4, ... a round), `launch_rounds` (grant
//! to first task), `heartbeat_phase_jitter` and `strict_requests` (below), and `rm_draw` (which
//! draw of the scheduler's randomness a run gets, so that a prediction can be the mean of
//! several, as a real figure is the mean of several runs). With delay scheduling the shares
//! are of launched tasks, as the real job report counts them.
//!
//! # Heartbeat phases and strict requests (found on the real 12-node cluster)
//!
//! The CapacityScheduler places containers only when a NodeManager heartbeats (asynchronous
//! scheduling is off), and each NodeManager beats every interval at its own phase. An allocate
//! call that adds requests naming many hosts, as Spark's do, is filled by the first nodes
//! that heartbeat after it, each taking as many containers as its counts and room allow, in
//! the same heartbeat (several assignments per heartbeat). The real RM log showed these
//! grants 10 to 90 ms after the call, and Spark's ramp-up sends its batches at the same point
//! of the cycle every second, so the same few nodes take them batch after batch, whether they
//! hold the job's data or not (very skewed trace, seed 2: the two hosts holding most of the
//! data never got an executor). A fresh random order at every heartbeat, as the base model
//! has, spreads the same requests over more hosts and is optimistic for Spark's strategy
//! wherever the data sits on a few hosts. With `heartbeat_phase_jitter` the nodes keep a
//! phase order drawn once per run, each interval moved by a random few places.
//!
//! Requests asked with relax locality off (the default strategy's rule 5) are a separate
//! request key for YARN (their own allocation request id) and are placed node-local only;
//! with `strict_requests` the model keeps two keys, each with its own counts, entries and
//! missed opportunities, relaxed first (YARN's key order while strict requests used id 1),
//! strict first with `strict_first` (id -1, now). This is what the real scheduler does at
//! 1,000 nodes (verified grant by grant, `scale/`'s `RecordingCapacityScheduler`): the
//! relaxed key holds only what the strict one does not, often no location at all (requests
//! past every work cap: no off-switch wait) or one host or rack named many times over (a
//! wait of `ANY x 1 / nodes`, under one missed offer), so those requests go off-switch on
//! the first nodes that heartbeat, one a node. Pooled into one key, as the base model has
//! them, they share the strict requests' hundreds of locations and wait for them. Two
//! what-if knobs (`what_if_unplaced_name_work`, `what_if_no_location_key_first`) change how
//! those requests reach the model's RM, to estimate a change to the allocator before making it.
//!
//! Reported: over every round, the share of pending locality-aware tasks that had an executor
//! on one of their hosts (could run node-local) or on one of their hosts' racks (rack-local or
//! better), the number of container requests the allocator sent, how many containers the RM
//! granted (off-switch among them), and how many node asks named hosts without a NodeManager.

//!
//! The parts: [`trace`] (the demand traces and their cluster), [`rm`] (the RM model: its
//! request table and per-key delay scheduling), [`run`] (one run, round by round),
//! [`measure`] (tasks placed on executors, and the offline optimum's brackets from
//! [`bound`]), [`bench`] (inputs for the benchmarks).

mod bench;
pub mod bound;
mod measure;
mod rm;
mod run;
mod trace;

pub use bench::{bench_snapshot, bench_topology};
pub use measure::{offline_bound, place_round, placed_share};
pub use rm::Book;
pub use run::{simulate_with, SimResult};
pub use trace::{Locations, Trace, TraceConfig};

use crate::allocator::tracker::AllocatorConfig;
use crate::allocator::Strategy;

/// One round: every node heartbeats once, at YARN's default NodeManager heartbeat interval.
pub const ROUND_MS: u64 = 1_000;

/// Runs `trace` with `strategy`. Deterministic for a given trace.
pub fn simulate(trace: &Trace, strategy: Strategy) -> SimResult {
    simulate_with(
        trace,
        AllocatorConfig {
            strategy,
            ..AllocatorConfig::default()
        },
    )
}
