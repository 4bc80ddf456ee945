//! Averages the simulator over 20 seeds of the "shifting data, busy cluster" trace, where
//! single runs are dominated by chance: which few nodes happen to have room early.
//!
//! `cargo run --release --example sim_sweep`

use yarn_am::allocator::sim::{simulate, Trace, TraceConfig};
use yarn_am::allocator::Strategy;

fn main() {
    const SEEDS: u64 = 20;
    println!("| nodes | spark node-local | default node-local | spark rack-local+ | default rack-local+ | default better / worse (node-local, of {SEEDS} seeds) |");
    println!("|---|---|---|---|---|---|");
    for nodes in [100usize, 1000] {
        let (mut sn, mut sr, mut dn, mut dr) = (0.0, 0.0, 0.0, 0.0);
        let (mut better, mut worse) = (0, 0);
        for seed in 0..SEEDS {
            let trace = Trace::generate(TraceConfig::shifting("sweep", nodes, 100 + seed));
            let s = simulate(&trace, Strategy::Spark);
            let d = simulate(&trace, Strategy::Default);
            sn += s.node_local;
            sr += s.rack_local;
            dn += d.node_local;
            dr += d.rack_local;
            if d.node_local > s.node_local {
                better += 1;
            } else if d.node_local < s.node_local {
                worse += 1;
            }
        }
        let k = SEEDS as f64 / 100.0;
        println!(
            "| {nodes} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {better} / {worse} |",
            sn / k,
            dn / k,
            sr / k,
            dr / k
        );
    }
}
