//! Tasks placed on executor slots the way the driver's delay scheduling aims for, and the
//! offline optimum's brackets: [`offline_bound`] above, [`placed_share`] below.

use super::bound;
use super::trace::Trace;

/// An upper bound on the node-local share any placement of the same executors could reach
/// on `trace` ([`bound`]): per stage, the executors the driver asks for at its start
/// (pending tasks / tasks per executor, capped), kept through it. The model matches the
/// simulator's runs on the standard traces (every executor granted in a stage's first
/// round); on pipelined, busy or preempting traces it is a bound for that model only.
pub fn offline_bound(trace: &Trace) -> f64 {
    let cfg = &trace.config;
    let (mut local, mut tasks) = (0u64, 0u64);
    for stage in &trace.stages {
        let executors = (stage.len() as u32)
            .div_ceil(cfg.tasks_per_executor.max(1))
            .min(cfg.max_executors);
        local += bound::Stage {
            tasks: stage,
            nodes: cfg.nodes,
            capacity: cfg.capacity,
            executors,
            slots: cfg.tasks_per_executor.max(1),
        }
        .node_local_bound();
        tasks += stage.len() as u64;
    }
    local as f64 / tasks.max(1) as f64
}

/// The node-local share the bound's candidate placement ([`bound::Stage::placement`]) reaches
/// on `trace` when played through the simulator's rounds (its executors kept through each
/// stage, every free slot taking a task, [`place_round`]'s node-local-first choice): what
/// some placement of the same executors achieves, a lower bound on the optimum that
/// [`offline_bound`] bounds from above. No YARN in the loop.
pub fn placed_share(trace: &Trace) -> f64 {
    let cfg = &trace.config;
    let (mut local, mut tasks) = (0u64, 0u64);
    for stage in &trace.stages {
        let slots = cfg.tasks_per_executor.max(1);
        let executors = (stage.len() as u32).div_ceil(slots).min(cfg.max_executors);
        let x = bound::Stage {
            tasks: stage,
            nodes: cfg.nodes,
            capacity: cfg.capacity,
            executors,
            slots,
        }
        .placement();
        let mut host_slots = vec![0usize; trace.hosts.len()];
        for (h, &k) in x.iter().enumerate() {
            host_slots[h] = (k * slots) as usize;
        }
        let total: usize = host_slots.iter().sum();
        let mut pending = stage.clone();
        while !pending.is_empty() && total > 0 {
            let runnable = total.min(pending.len());
            let (l, _, _) = place_round(
                trace,
                &mut pending,
                host_slots.clone(),
                runnable,
                true,
                true,
            );
            local += l as u64;
        }
        tasks += stage.len() as u64;
    }
    local as f64 / tasks.max(1) as f64
}

/// One round of tasks on executor slots (`host_slots[h]` free task slots on host `h`), as the
/// driver's delay scheduling aims for: node-local first, then rack-local when `rack_ok`, then
/// the oldest others up to `runnable` when `any_ok`. The tasks that ran leave `pending`.
/// Returns (node-local, rack-local, launched). Shared with `benches/rm_scale.rs`, which
/// measures the real scheduler's grants the same way.
pub fn place_round(
    trace: &Trace,
    pending: &mut Vec<[u32; 3]>,
    mut host_slots: Vec<usize>,
    runnable: usize,
    rack_ok: bool,
    any_ok: bool,
) -> (usize, usize, usize) {
    let mut placed = vec![false; pending.len()];
    let mut local = 0usize;
    for (i, t) in pending.iter().enumerate() {
        if local == runnable {
            break;
        }
        if let Some(&h) = t.iter().find(|&&h| host_slots[h as usize] > 0) {
            host_slots[h as usize] -= 1;
            placed[i] = true;
            local += 1;
        }
    }
    let mut rack_slots = vec![0usize; trace.racks.len()];
    for (h, &s) in host_slots.iter().enumerate() {
        rack_slots[trace.host_rack[h]] += s;
    }
    let mut rack = 0usize;
    for (i, t) in pending.iter().enumerate() {
        if local + rack == runnable || !rack_ok {
            break;
        }
        if placed[i] {
            continue;
        }
        if let Some(&h) = t
            .iter()
            .find(|&&h| rack_slots[trace.host_rack[h as usize]] > 0)
        {
            rack_slots[trace.host_rack[h as usize]] -= 1;
            placed[i] = true;
            rack += 1;
        }
    }
    // Run them: the placed ones, then the oldest others up to the free slots.
    let mut others = if any_ok { runnable - local - rack } else { 0 };
    let launched = local + rack + others;
    let mut remaining = Vec::with_capacity(pending.len() - launched);
    for (i, t) in pending.iter().enumerate() {
        if placed[i] {
            continue;
        }
        if others > 0 {
            others -= 1;
            continue;
        }
        remaining.push(*t);
    }
    *pending = remaining;
    (local, rack, launched)
}
