//! Runs the locality simulator on the standard traces and prints a Markdown table comparing
//! the `spark` and `default` strategies.
//!
//! `cargo run --release --example sim` (add `-- --quick` for the 100-node traces only).

use std::time::Instant;

use yarn_am::allocator::sim::{simulate, Trace, TraceConfig};
use yarn_am::allocator::Strategy;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let mut traces = Vec::new();
    for &nodes in if quick { &[100][..] } else { &[100, 5000][..] } {
        for (label, skew, seed) in [
            ("uniform", 0.0, 1),
            ("skewed", 0.8, 2),
            ("very skewed", 1.2, 3),
        ] {
            traces.push(TraceConfig::standard(
                &format!("{nodes} nodes, {label}"),
                nodes,
                skew,
                seed,
            ));
        }
        let mut tight = TraceConfig::standard(
            &format!("{nodes} nodes, skewed, 1 slot/node"),
            nodes,
            0.8,
            4,
        );
        tight.capacity = 1;
        traces.push(tight);
        let mut no_nm = TraceConfig::standard(
            &format!("{nodes} nodes, skewed, 30% DataNode-only"),
            nodes,
            0.8,
            5,
        );
        no_nm.datanode_only = nodes * 3 / 10;
        traces.push(no_nm);
        traces.push(TraceConfig::shifting(
            &format!("{nodes} nodes, shifting data, busy"),
            nodes,
            6,
        ));
    }
    println!("| trace | strategy | node-local | rack-local or better | requests sent | containers granted | off-switch | asks on hosts without NM | rounds | time |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for config in traces {
        let name = config.name.clone();
        let trace = Trace::generate(config);
        for strategy in [Strategy::Spark, Strategy::Default] {
            let start = Instant::now();
            let r = simulate(&trace, strategy);
            println!(
                "| {name} | {strategy} | {:.2}% | {:.2}% | {} | {} | {} | {} | {} | {:.2} s |",
                r.node_local * 100.0,
                r.rack_local * 100.0,
                r.requests,
                r.granted,
                r.off_switch,
                r.asks_without_nodemanager,
                r.rounds,
                start.elapsed().as_secs_f64()
            );
        }
    }
}
