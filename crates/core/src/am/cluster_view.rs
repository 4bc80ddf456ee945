//! The cluster as the allocator needs it: which hosts run a NodeManager, their racks, and how
//! many of our executors each can hold. Read from the RM's node list at start; kept current
//! afterwards from the node reports in allocate responses, and from the node list fetched
//! again (off the loop) when a container lands on a host nobody knew: a NodeManager that
//! joined after the start gets its real rack, not `/default-rack`. The racks go into the
//! AM's one [`SharedTopology`] (see [`crate::topology`]), which the allocator, the request
//! table ([`rack_resolver`]), the pool and the driver all read.

use std::collections::{HashMap, HashSet};

use crate::allocator::tracker::NodeUpdate;
use crate::allocator::{Cluster, Topology};
use crate::topology::SharedTopology;
use yarn_am_wire::spec::ExecutorKind;
use yarn_client::amrm::NodeReport;
use yarn_client::request_table::RackResolver;
use yarn_client::rest::NodeInfo;

/// Executors of `memory_mb` x `vcores` that fit in a node of the given size.
pub fn executors_per_node(node_mb: i64, node_vcores: i64, memory_mb: i64, vcores: i32) -> u32 {
    let by_mem = node_mb / memory_mb.max(1);
    let by_cpu = node_vcores / i64::from(vcores.max(1));
    by_mem.min(by_cpu).max(0) as u32
}

/// The request table's node -> rack lookups, answered from the one topology.
pub fn rack_resolver(topology: &SharedTopology) -> impl RackResolver {
    let topology = topology.clone();
    move |host: &str| topology.rack_of(host).to_string()
}

/// Whether executors asked with `label` can land on a node labelled `labels`: YARN grants a
/// labelled request only in its partition. Without a label, as before: every node (an
/// exclusive partition's nodes simply never grant).
fn in_partition(label: Option<&str>, labels: &[String]) -> bool {
    label.is_none_or(|l| labels.iter().any(|n| n == l))
}

/// Builds the allocator's view from the RM REST node list.
pub fn from_nodes(nodes: &[NodeInfo], executor: &ExecutorKind) -> (SharedTopology, Cluster) {
    let mut racks = HashMap::new();
    let mut usable = HashSet::new();
    let mut capacity = HashMap::new();
    let none_excluded = HashSet::new();
    for n in nodes {
        let u = listed_node_update(n, &none_excluded, executor);
        racks.insert(u.host.clone(), u.rack);
        if u.usable {
            usable.insert(u.host.clone());
        }
        capacity.insert(u.host, u.capacity.unwrap_or(0));
    }
    let cluster = Cluster {
        nodes: Some(usable),
        capacity,
        excluded: HashSet::new(),
    };
    (Topology::new(racks).into(), cluster)
}

/// A node of the RM REST node list (fetched again during the run) as an allocator update.
/// Hosts the driver excluded, and those outside the executors' node label, stay unusable.
pub fn listed_node_update(
    n: &NodeInfo,
    excluded: &HashSet<String>,
    executor: &ExecutorKind,
) -> NodeUpdate {
    let (memory_mb, vcores) = (executor.memory_mb, executor.vcores);
    NodeUpdate {
        usable: n.state == "RUNNING"
            && !excluded.contains(&n.node_host_name)
            && in_partition(executor.node_label.as_deref(), &n.node_labels),
        rack: n.rack.as_str().into(),
        host: n.node_host_name.as_str().into(),
        capacity: Some(executors_per_node(
            n.memory_mb(),
            n.vcores(),
            memory_mb,
            vcores,
        )),
    }
}

/// A node report from an allocate response as an allocator update. Hosts the driver
/// excluded, and those outside the executors' node label, are reported unusable whatever
/// YARN says about them.
pub fn node_update(
    r: &NodeReport,
    excluded: &HashSet<String>,
    executor: &ExecutorKind,
) -> Option<NodeUpdate> {
    let (memory_mb, vcores) = (executor.memory_mb, executor.vcores);
    let host = Some(r.host.clone()).filter(|h| !h.is_empty())?;
    let capacity = r
        .memory_mb
        .zip(r.vcores)
        .map(|(mb, cores)| executors_per_node(mb, i64::from(cores), memory_mb, vcores));
    Some(NodeUpdate {
        usable: r.running
            && !excluded.contains(&host)
            && in_partition(executor.node_label.as_deref(), &r.labels),
        rack: r
            .rack
            .as_deref()
            .unwrap_or(crate::topology::DEFAULT_RACK)
            .into(),
        host: host.as_str().into(),
        capacity,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_is_the_tighter_of_memory_and_cpu() {
        assert_eq!(executors_per_node(4096, 4, 256, 1), 4);
        assert_eq!(executors_per_node(4096, 16, 1024, 1), 4);
        assert_eq!(executors_per_node(1000, 4, 2048, 1), 0);
    }

    #[test]
    fn with_a_node_label_only_that_partitions_nodes_are_usable() {
        let node = |host: &str, labels: &[&str]| NodeInfo {
            node_labels: labels.iter().map(|l| l.to_string()).collect(),
            ..crate::am::fixtures::node(host, "/r1", 4096, 4)
        };
        let nodes = [node("a", &[]), node("b", &["gpu"]), node("c", &[""])];
        let mut spec = crate::am::fixtures::spec(4).all_kinds().remove(0);
        let usable = |spec: &ExecutorKind| {
            let mut u: Vec<String> = from_nodes(&nodes, spec)
                .1
                .nodes
                .unwrap()
                .into_iter()
                .map(|h| h.to_string())
                .collect();
            u.sort();
            u
        };
        assert_eq!(usable(&spec), ["a", "b", "c"]);
        spec.node_label = Some("gpu".into());
        assert_eq!(usable(&spec), ["b"]);
        let report = NodeReport {
            host: "a".into(),
            running: true,
            ..Default::default()
        };
        assert!(!node_update(&report, &HashSet::new(), &spec).unwrap().usable);
        let labelled = NodeReport {
            labels: vec!["gpu".into()],
            ..report
        };
        assert!(
            node_update(&labelled, &HashSet::new(), &spec)
                .unwrap()
                .usable
        );
    }
}
