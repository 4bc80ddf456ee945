//! The simulator's promises about the two strategies on the same traces (BENCHMARKS.md has
//! the full tables, over 20 seeds of each family at 100, 1,000 and 5,000 nodes).
//!
//! - Where a node holds several executors and the cluster has room, Spark's requests let YARN
//!   pack the first preferred nodes that heartbeat; the default strategy's work cap spreads
//!   the same executors over more preferred hosts, and more tasks run node-local.
//! - In a busy cluster, spread requests that YARN does not fill within a NodeManager heartbeat
//!   are asked again naming every host they were placed on (rule 4), so executors do not
//!   arrive much later than Spark's.
//! - The default strategy never asks YARN for a host without a NodeManager.
//!
//! Sizes are small so that `cargo test` (debug) runs this in a few seconds.

use yarn_am_core::sim;

use sim::{offline_bound, placed_share, simulate, simulate_with, SimResult, Trace, TraceConfig};
use yarn_am_core::allocator::tracker::AllocatorConfig;
use yarn_am_core::allocator::Strategy;

fn both(config: TraceConfig) -> (SimResult, SimResult) {
    let trace = Trace::generate(config);
    (
        simulate(&trace, Strategy::Spark),
        simulate(&trace, Strategy::Default),
    )
}

#[test]
fn default_spreads_executors_over_more_preferred_hosts() {
    let mut traces = Vec::new();
    for seed in 0..3 {
        for skew in [0.0, 0.8, 1.2] {
            traces.push(TraceConfig::standard("standard", 200, skew, 50 + seed));
        }
        let mut no_nm = TraceConfig::standard("30% DataNode-only", 200, 0.8, 60 + seed);
        no_nm.datanode_only = 60;
        traces.push(no_nm);
    }
    let (mut spark_sum, mut ours_sum) = ([0.0; 2], [0.0; 2]);
    for config in traces {
        let what = format!(
            "{} (skew {}, seed {})",
            config.name, config.skew, config.seed
        );
        // Very skewed traces have a few hosts with work for many executors, where packing
        // costs little: better on average (below), not on every seed.
        let every_seed = config.skew < 1.0;
        let (spark, ours) = both(config);
        assert!(spark.granted > 0, "{what}: the trace did something");
        if every_seed {
            assert!(
                ours.node_local > spark.node_local,
                "{what}: node-local {ours:?} <= {spark:?}"
            );
        }
        assert_eq!(ours.rounds, spark.rounds, "{what}: as fast");
        assert_eq!(ours.requests, spark.requests, "{what}: as many requests");
        for (sum, r) in [(&mut spark_sum, spark), (&mut ours_sum, ours)] {
            sum[0] += r.node_local;
            sum[1] += r.rack_local;
        }
    }
    assert!(
        ours_sum[0] > spark_sum[0],
        "node-local {ours_sum:?} <= {spark_sum:?}"
    );
    assert!(
        ours_sum[1] >= spark_sum[1],
        "rack-local {ours_sum:?} < {spark_sum:?}"
    );
}

#[test]
fn spread_requests_are_asked_again_so_a_busy_cluster_is_not_slower() {
    let (mut spark, mut ours, mut never) = (0, 0, 0);
    for seed in 0..4 {
        let trace = Trace::generate(TraceConfig::shifting("busy", 100, 70 + seed));
        spark += simulate(&trace, Strategy::Spark).rounds;
        ours += simulate(&trace, Strategy::Default).rounds;
        never += simulate_with(
            &trace,
            AllocatorConfig {
                strategy: Strategy::Default,
                spread_wait_ms: u64::MAX,
                ..AllocatorConfig::default()
            },
        )
        .rounds;
    }
    // Relaxing is done in two heartbeats since the over-grant fix (withdraw, then ask again
    // relaxed), and the simulator now rebuilds YARN's tables from the AM's actions, so a
    // withdrawn request is out of YARN's table for one round: on this trace rule 4 no longer
    // wins rounds (it did when withdrawn requests stayed grantable in the model), but it
    // must not cost more than that one round per relaxed request.
    assert!(
        ours * 100 <= never * 105,
        "rule 4 costs at most 5% more rounds: {ours} rounds, {never} without"
    );
    assert!(
        ours * 100 <= spark * 105,
        "within 5% of Spark's rounds: {ours} against {spark}"
    );
}

#[test]
fn default_never_asks_for_a_host_without_a_nodemanager() {
    for mut config in [
        TraceConfig::standard("skewed", 60, 0.8, 12),
        TraceConfig::shifting("shifting", 60, 30),
    ] {
        config.datanode_only = 20;
        let name = config.name.clone();
        let (spark, ours) = both(config);
        assert!(
            spark.asks_without_nodemanager > 0,
            "{name}: Spark asks for hosts YARN does not have"
        );
        assert_eq!(ours.asks_without_nodemanager, 0, "{name}");
        assert!(ours.granted > 0, "{name}: the trace did something");
    }
}

#[test]
fn simulation_is_deterministic() {
    let trace = Trace::generate(TraceConfig::standard("again", 40, 0.8, 21));
    assert_eq!(
        simulate(&trace, Strategy::Spark),
        simulate(&trace, Strategy::Spark)
    );
    let trace = Trace::generate(TraceConfig::shifting("again", 40, 22));
    assert_eq!(
        simulate(&trace, Strategy::Default),
        simulate(&trace, Strategy::Default)
    );
}

/// The shape of the real-cluster A/B (examples/locality_trace.rs): 12 nodes on 4 racks, room
/// for 2 executors a node, 96 tasks, at most 8 executors.
fn real_ab_shape(skew: f64) -> TraceConfig {
    TraceConfig {
        racks: 4,
        capacity: 2,
        stages: vec![96],
        node_locality_delay: 3,
        max_executors: 8,
        datanode_only: 0,
        ..TraceConfig::standard("calibration", 12, skew, 1)
    }
}

/// The knobs that bring the model closer to a real run (BENCHMARKS.md, "Simulator against
/// the real scheduler") act as they should: a target ramped up 1, 2, 4, ... takes longer to
/// finish, and while executors keep arriving a driver that holds tasks for their hosts runs
/// more of them node-local (with every executor there from the start, waiting cannot help:
/// each round already runs every task that has an executor on one of its hosts).
#[test]
fn delay_scheduling_and_ramp_up_are_modelled() {
    let base = real_ab_shape(0.0);
    let ramped = TraceConfig {
        ramp_up: true,
        ..base.clone()
    };
    let waiting = TraceConfig {
        locality_wait_rounds: 3,
        ..ramped.clone()
    };
    for strategy in [Strategy::Spark, Strategy::Default] {
        let b = simulate(&Trace::generate(base.clone()), strategy);
        let r = simulate(&Trace::generate(ramped.clone()), strategy);
        assert!(
            r.rounds > b.rounds,
            "{strategy}: ramped {r:?} against {b:?}"
        );
        let w = simulate(&Trace::generate(waiting.clone()), strategy);
        match strategy {
            Strategy::Spark => assert!(
                w.node_local > r.node_local,
                "{strategy}: waiting {w:?} against {r:?}"
            ),
            // The default's fresh placement (a stage's first ask names each host by the work its
            // tasks leave) already runs all but one of the 96 tasks node-local when ramped, so
            // waiting has nothing left to win here (Spark's strategy shows the knob acting);
            // it must not lose any.
            Strategy::Default => {
                assert!(r.node_local >= 95.0 / 96.0, "{strategy}: ramped {r:?}");
                assert!(
                    w.node_local >= r.node_local,
                    "{strategy}: waiting {w:?} against {r:?}"
                );
            }
        }
        let twice = TraceConfig {
            offers_per_round: 2,
            ..base.clone()
        };
        let t = simulate(&Trace::generate(twice), strategy);
        assert!(t.granted > 0, "{strategy}: {t:?}");
    }
}

/// The calibration's scheduler knobs act as the real cluster showed (BENCHMARKS.md,
/// "Simulator calibration against the real scheduler"): NodeManagers that keep their
/// heartbeat phase hand Spark's wide requests to the same first nodes at every interval, so
/// its executors land on fewer hosts than with a fresh order each time; and once strict
/// requests are placed node-local only, as YARN does, the default strategy's containers on
/// this trace are no longer placed off-switch (its relaxed re-asks could be, but are not here).
#[test]
fn heartbeat_phases_pack_and_strict_requests_stay_local() {
    // Skewed, over several draws of the scheduler's randomness.
    let base = TraceConfig {
        offers_per_round: 2,
        ramp_up: true,
        ..real_ab_shape(0.8)
    };
    let hosts = |config: &TraceConfig, strategy| -> (u64, u64) {
        let (mut hosts, mut off_switch) = (0, 0);
        for draw in 0..10 {
            let trace = Trace::generate(TraceConfig {
                rm_draw: draw,
                ..config.clone()
            });
            let r = simulate(&trace, strategy);
            hosts += r.executor_hosts;
            off_switch += r.off_switch;
        }
        (hosts, off_switch)
    };
    let fresh = hosts(&base, Strategy::Spark).0;
    let phased = TraceConfig {
        heartbeat_phase_jitter: Some(0.0),
        ..base.clone()
    };
    let fixed = hosts(&phased, Strategy::Spark).0;
    assert!(
        fixed < fresh,
        "executor hosts: fixed phases {fixed}, fresh order {fresh}"
    );

    let (_, relaxed) = hosts(&phased, Strategy::Default);
    let strict = TraceConfig {
        strict_requests: true,
        ..phased
    };
    let (_, strict) = hosts(&strict, Strategy::Default);
    assert!(relaxed > 0, "the relaxed model places some off-switch");
    assert_eq!(strict, 0, "strict requests are never placed off-switch");
}

/// The per-key model (`strict_requests` with `strict_first`: YARN's two request keys, the
/// strict one first) reproduced what the real CapacityScheduler did at 1,000 nodes, grant by
/// grant (BENCHMARKS.md, "The real scheduler at 1,000 nodes"): the default strategy's
/// requests past every work cap named no location, so their key had no off-switch wait and
/// they went off-switch on the first nodes that heartbeat. The fresh placement (a
/// stage's first ask names hosts by the work their tasks leave, the names adding up to the
/// requests) leaves no request without a location on this trace: per key, no container goes
/// off-switch, and the proposal's what-ifs (naming the hosts with work, a key of their own
/// for the requests without one) have nothing left to change. The base model, every request
/// relaxed in one key, still sends some off-switch once the locality delay runs out. Spark's
/// strategy asks nothing strict: the same either way.
#[test]
fn per_key_model_sends_no_request_off_switch_after_the_fresh_placement() {
    let base = TraceConfig::standard("standard", 200, 0.8, 1);
    let keyed = TraceConfig {
        strict_requests: true,
        strict_first: true,
        ..base.clone()
    };
    let (pooled, keys) = (Trace::generate(base), Trace::generate(keyed));
    let (p, k) = (
        simulate(&pooled, Strategy::Default),
        simulate(&keys, Strategy::Default),
    );
    assert_eq!(p.off_switch_no_location, 0, "pooled: {p:?}");
    assert!(p.off_switch > 0, "pooled: {p:?}");
    assert_eq!(k.off_switch_no_location, 0, "per key: {k:?}");
    assert_eq!(k.off_switch, 0, "per key: {k:?}");
    assert!(k.node_local > p.node_local, "per key {k:?}, pooled {p:?}");
    assert_eq!(
        simulate(&pooled, Strategy::Spark),
        simulate(&keys, Strategy::Spark)
    );

    // The proposal's what-ifs (BENCHMARKS.md): with every request named, neither changes a
    // grant.
    let what_if = |f: fn(&mut TraceConfig)| {
        let mut c = keys.config.clone();
        f(&mut c);
        simulate(&Trace::generate(c), Strategy::Default)
    };
    assert_eq!(what_if(|c| c.what_if_unplaced_name_work = true), k);
    assert_eq!(what_if(|c| c.what_if_no_location_key_first = true), k);
}

/// With a slow RM (every grant handed over at the next allocate call, not in the
/// answer to the call it follows) and one RM key per allocation request id, neither strategy
/// is granted a container beyond its target while the demand holds still: no `*` count is
/// re-sent over grants in flight. (Before the request keys, the relaxed `*` was re-sent while
/// being filled; this model had no grants in flight, so it could not show that.)
#[test]
fn a_slow_rm_grants_no_surplus_container() {
    for skew in [0.0, 1.2] {
        let config = TraceConfig {
            strict_requests: true,
            strict_first: true,
            rm_delay_rounds: 1,
            ..TraceConfig::standard("slow", 100, skew, 27)
        };
        let (s, d) = both(config);
        for r in [s, d] {
            assert_eq!(r.released, 0, "{r:?}");
            assert!(r.peak_executors <= r.peak_target, "{r:?}");
            assert!(r.granted > 0);
        }
    }
}

/// On the standard traces (every executor granted in a stage's first round,
/// the bound's model) neither strategy beats the offline bound, nor does the bound's own
/// candidate placement played through the rounds (a share some placement reaches).
#[test]
fn no_strategy_beats_the_offline_bound() {
    for (skew, seed) in [(0.0, 1), (0.8, 2), (1.2, 3)] {
        let trace = Trace::generate(TraceConfig::standard("bound", 100, skew, seed));
        let (bound, placed) = (offline_bound(&trace), placed_share(&trace));
        let (s, d) = (
            simulate(&trace, Strategy::Spark),
            simulate(&trace, Strategy::Default),
        );
        assert!(
            s.node_local <= bound && d.node_local <= bound,
            "{bound} {s:?} {d:?}"
        );
        assert!(placed <= bound, "{placed} > {bound}");
        assert_eq!(s.rounds, d.rounds, "the model's rounds");
    }
}
