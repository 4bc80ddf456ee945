//! The simulator's promise: the default strategy is at least as good as Spark's on the same
//! traces.

use yarn_am::allocator::sim::{simulate, Trace, TraceConfig};
use yarn_am::allocator::Strategy;

fn small_traces() -> Vec<TraceConfig> {
    let mut traces = vec![
        TraceConfig::standard("uniform", 60, 0.0, 11),
        TraceConfig::standard("skewed", 60, 1.0, 12),
    ];
    let mut no_nm = TraceConfig::standard("datanode-only", 60, 0.8, 14);
    no_nm.datanode_only = 20;
    traces.push(no_nm);
    let mut tight = TraceConfig::standard("one slot", 60, 0.8, 15);
    tight.capacity = 1;
    traces.push(tight);

    traces
}

#[test]
fn default_is_at_least_as_good_as_spark() {
    for config in small_traces() {
        let name = config.name.clone();
        let trace = Trace::generate(config);
        let spark = simulate(&trace, Strategy::Spark);
        let ours = simulate(&trace, Strategy::Default);
        assert!(
            spark.rounds > 0 && spark.granted > 0,
            "{name}: the trace did something"
        );
        assert!(
            ours.node_local >= spark.node_local,
            "{name}: node-local {ours:?} < {spark:?}"
        );
        assert!(
            ours.rack_local >= spark.rack_local,
            "{name}: rack-local {ours:?} < {spark:?}"
        );
        assert!(
            ours.requests <= spark.requests,
            "{name}: more requests {ours:?} than {spark:?}"
        );
    }
}

#[test]
fn simulation_is_deterministic() {
    let trace = Trace::generate(TraceConfig::standard("again", 40, 0.8, 21));
    assert_eq!(
        simulate(&trace, Strategy::Spark),
        simulate(&trace, Strategy::Spark)
    );
}
