//! Runs the simulator over 20 seeds of the "shifting data, busy cluster" trace, where single
//! runs are dominated by chance: which few nodes happen to have room early.
//!
//! `cargo run --release --example sim_sweep`

use yarn_am::allocator::sim::{simulate, Trace, TraceConfig};
use yarn_am::allocator::Strategy;

/// Better / equal / worse counts of the default strategy against Spark's.
#[derive(Default)]
struct Tally {
    better: u32,
    equal: u32,
    worse: u32,
}

impl Tally {
    fn add(&mut self, ours: f64, spark: f64) {
        if ours > spark {
            self.better += 1;
        } else if ours < spark {
            self.worse += 1;
        } else {
            self.equal += 1;
        }
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} / {} / {}", self.better, self.equal, self.worse)
    }
}

fn main() {
    const SEEDS: u64 = 20;
    println!("| nodes | spark node-local | default node-local | spark rack-local+ | default rack-local+ | node-local better / equal / worse | rack-local+ better / equal / worse | requests fewer / equal / more |");
    println!("|---|---|---|---|---|---|---|---|");
    for nodes in [100usize, 1000, 5000] {
        let (mut sn, mut sr, mut dn, mut dr) = (0.0, 0.0, 0.0, 0.0);
        let (mut node, mut rack, mut requests) =
            (Tally::default(), Tally::default(), Tally::default());
        for seed in 0..SEEDS {
            let trace = Trace::generate(TraceConfig::shifting("sweep", nodes, 100 + seed));
            let s = simulate(&trace, Strategy::Spark);
            let d = simulate(&trace, Strategy::Default);
            sn += s.node_local;
            sr += s.rack_local;
            dn += d.node_local;
            dr += d.rack_local;
            node.add(d.node_local, s.node_local);
            rack.add(d.rack_local, s.rack_local);
            // Fewer requests is better.
            requests.add(s.requests as f64, d.requests as f64);
        }
        let k = SEEDS as f64 / 100.0;
        println!(
            "| {nodes} | {:.2}% | {:.2}% | {:.2}% | {:.2}% | {node} | {rack} | {requests} |",
            sn / k,
            dn / k,
            sr / k,
            dr / k
        );
    }
}
