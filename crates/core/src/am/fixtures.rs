//! Fixtures for the AM's sans-IO parts, shared by the core's unit tests and the benches
//! (`benches/am_loop_pass.rs`, `benches/am_view.rs`, through the `bench` feature), so that
//! all build their pool the way the AM does, and ask the core as the shell does.

use crate::allocator::tracker::{Allocator, AllocatorConfig};
use yarn_client::amrm::AllocatedContainer;
use yarn_client::request_table::AmrmState;
use yarn_client::rest::NodeInfo;

use super::am_core::AmCore;
use super::events::{DriverCommand, Reply, ReplyTo};
use super::pool::Pool;
use super::registry::Registry;
use yarn_am_wire::spec::ExecutorSpec;

/// Executors of 256 MB x 1 vcore, none at start, at most `max`.
pub fn spec(max: u32) -> ExecutorSpec {
    ExecutorSpec {
        command: "yarn-am executor".into(),
        memory_mb: 256,
        vcores: 1,
        initial: 0,
        min: 0,
        max,
        env: Default::default(),
        files: Default::default(),
        acls: Default::default(),
        node_label: None,
        resources: Default::default(),
        kinds: Vec::new(),
        max_kinds: 0,
    }
}

/// A running node of the RM REST node list with `memory_mb` and `vcores` available.
pub fn node(host: &str, rack: &str, memory_mb: u64, vcores: u64) -> NodeInfo {
    serde_json::from_value(serde_json::json!({
        "id": format!("{host}:45454"), "rack": rack, "state": "RUNNING",
        "nodeHostName": host, "availMemoryMB": memory_mb, "availableVirtualCores": vcores,
    }))
    .expect("a node of the RM's node list")
}

/// The AM's pool over `nodes`, with the default allocator and [`spec`]`(max)`.
pub fn pool(nodes: &[NodeInfo], max: u32) -> Pool {
    pool_with(nodes, max, AllocatorConfig::default())
}

/// [`pool`] with an allocator configured otherwise.
pub fn pool_with(nodes: &[NodeInfo], max: u32, config: AllocatorConfig) -> Pool {
    let (topo, cluster) = super::cluster_view::from_nodes(nodes, &spec(max).all_kinds()[0]);
    let table = AmrmState::new(super::cluster_view::rack_resolver(&topo), None);
    Pool::new(
        Allocator::new(config).with_cluster(topo, cluster),
        table,
        Registry::new(),
        spec(max),
        "application_1_0001".into(),
    )
}

/// A 256 MB x 1 container YARN granted on `host`, as the tests and benches' executors are.
pub fn container(id: &str, host: &str) -> AllocatedContainer {
    AllocatedContainer {
        id: id.into(),
        host: host.into(),
        node: format!("{host}:45454"),
        node_http_address: format!("{host}:8042"),
        memory_mb: 256,
        vcores: 1,
        resources: Vec::new(),
        token: None,
        allocation_request_id: -1,
        priority: 1,
    }
}

/// Feeds `core` the command `make` builds for a caller, and returns the answer the core
/// queued for that caller at once (as the shell's `poll_reply` would hand it on).
pub fn ask<R: TryFrom<Reply>>(
    core: &mut AmCore,
    now_ms: u64,
    make: impl FnOnce(ReplyTo) -> DriverCommand,
) -> R {
    let to = ReplyTo(u64::MAX);
    core.handle_command(now_ms, make(to));
    let answer = std::iter::from_fn(|| core.poll_reply())
        .find(|(id, _)| *id == to)
        .expect("the command is answered at once")
        .1;
    R::try_from(answer)
        .ok()
        .expect("the answer of the command's own kind")
}
