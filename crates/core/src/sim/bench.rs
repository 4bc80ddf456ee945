//! Inputs for the update-step benchmarks, from the simulator's traces.

use std::collections::HashMap;

use super::trace::{Trace, TraceConfig};
use crate::allocator::{Demand, HostName, RackName, Snapshot, Topology};

/// Builds a demand for the benchmarks: `tasks` tasks over `hosts` hosts with 3 skewed replicas
/// each, `target` executors wanted, nothing running or pending.
pub fn bench_snapshot(
    hosts: usize,
    tasks: usize,
    target: u32,
    tasks_per_executor: u32,
    seed: u64,
) -> Snapshot {
    let config = TraceConfig {
        racks: hosts.div_ceil(40).max(1),
        datanode_only: 0,
        capacity: u32::MAX,
        tasks_per_executor,
        max_executors: target,
        stages: vec![tasks],
        node_locality_delay: 0,
        ..TraceConfig::standard("bench", hosts, 0.5, seed)
    };
    let trace = Trace::generate(config);
    let mut counts: HashMap<HostName, u32> = HashMap::new();
    for t in &trace.stages[0] {
        for &h in t {
            *counts.entry(trace.hosts[h as usize].clone()).or_insert(0) += 1;
        }
    }
    Snapshot {
        demand: Demand {
            target_executors: target,
            locality_aware_tasks: tasks as u32,
            host_to_local_task_count: counts,
            ..Demand::default()
        },
        tasks_per_executor,
        ..Snapshot::default()
    }
}

/// The topology `bench_snapshot` uses (40 hosts a rack).
pub fn bench_topology(hosts: usize) -> Topology {
    let racks = hosts.div_ceil(40).max(1);
    Topology::new(
        (0..hosts)
            .map(|i| {
                (
                    HostName::from(format!("nm{i:05}")),
                    RackName::from(format!("/rack{:03}", i % racks)),
                )
            })
            .collect(),
    )
}
