//! The simulator's side: its predictions for the trace and the allocator's first asks per
//! stage, printed beside the real outcome (and alone with `--sim-only`).

use std::collections::HashMap;

use serde_json::json;
use yarn_am_core::allocator::tracker::{Action, Allocator, AllocatorConfig, Event};
use yarn_am_core::allocator::{HostName, Strategy};
use yarn_am_core::sim::{simulate, Trace, TraceConfig};

use super::{round_demand, AskKind};

/// The simulator's predictions for the trace: the base model (every request in one key, as
/// the big tables in BENCHMARKS.md) and the per-key model (`strict_requests` and
/// `strict_first`: strict and relaxed requests in YARN's two keys, strict first, as the real
/// scheduler holds them; the model that explains the real off-switch grants).
pub(super) fn predictions(trace: &Trace, strategy: Strategy) -> serde_json::Value {
    let one = |t: &Trace| {
        let p = simulate(t, strategy);
        json!({
            "node_local": p.node_local,
            "rack_local": p.rack_local,
            "granted": p.granted,
            "off_switch": p.off_switch,
            "off_switch_no_location": p.off_switch_no_location,
            "rounds": p.rounds,
        })
    };
    let keyed = Trace::generate(TraceConfig {
        strict_requests: true,
        strict_first: true,
        ..trace.config.clone()
    });
    let what_if = Trace::generate(TraceConfig {
        what_if_unplaced_name_work: true,
        ..keyed.config.clone()
    });
    let own_key = Trace::generate(TraceConfig {
        what_if_no_location_key_first: true,
        ..keyed.config.clone()
    });
    json!({
        "base": one(trace),
        "keys": one(&keyed),
        "keys_what_if_name_work": one(&what_if),
        "keys_what_if_own_key": one(&own_key),
    })
}

/// What the allocator asks at the start of each stage (nothing running, nothing pending, the
/// stage's whole demand), by request kind, and how much node-local room it leaves unasked:
/// for every NodeManager host with work, `min(work cap, capacity)` minus the requests that
/// name it (the work cap as `allocator::strategy`'s rule 2 computes it). Evidence for the
/// off-switch breakdown: a request with no location is ANY-only for YARN (no off-switch wait).
pub(super) fn first_asks(trace: &Trace, strategy: Strategy) -> serde_json::Value {
    let cfg = &trace.config;
    let topology = trace.topology();
    let mut out = Vec::new();
    for stage in &trace.stages {
        let mut alloc = Allocator::new(AllocatorConfig {
            strategy,
            tasks_per_executor: cfg.tasks_per_executor,
            ..AllocatorConfig::default()
        })
        .with_cluster(topology.clone(), trace.cluster());
        let demand = round_demand(trace, stage);
        let (target, aware) = (
            u64::from(demand.target_executors),
            u64::from(demand.locality_aware_tasks.max(1)),
        );
        let counts = demand.host_to_local_task_count.clone();
        let mut actions = alloc.on_event(0, Event::DemandChanged(demand));
        actions.extend(alloc.on_event(0, Event::Heartbeat));
        let mut kinds = [0u64; AskKind::COUNT];
        let mut named: HashMap<HostName, u64> = HashMap::new();
        let mut widest = 0usize;
        for a in &actions {
            if let Action::AddRequests {
                ids,
                nodes,
                racks,
                strict,
                ..
            } = a
            {
                kinds[AskKind::of(nodes, racks, *strict) as usize] += ids.len() as u64;
                widest = widest.max(nodes.len());
                for h in nodes.iter() {
                    *named.entry(h.clone()).or_insert(0) += ids.len() as u64;
                }
            }
        }
        let (mut spare, mut spare_hosts) = (0u64, 0u64);
        for (h, &c) in &counts {
            let is_nm = trace.hosts[..cfg.nodes].contains(h);
            if !is_nm {
                continue;
            }
            let cap = (u64::from(c) * target)
                .div_ceil(aware)
                .min(u64::from(cfg.capacity));
            let left = cap.saturating_sub(named.get(h).copied().unwrap_or(0));
            spare += left;
            spare_hosts += u64::from(left > 0);
        }
        out.push(json!({
            "asks": AskKind::NAMES.iter().zip(kinds).map(|(k, n)| ((*k).to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "hosts_named": named.len(),
            "widest_request_hosts": widest,
            "unasked_node_local_room": spare,
            "hosts_with_unasked_room": spare_hosts,
        }));
    }
    json!(out)
}
