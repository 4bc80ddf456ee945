//! Runs the locality simulator on the standard trace families and prints Markdown tables
//! comparing the `spark` and `default` strategies.
//!
//! `cargo run --release --example sim [-- --quick] [--seeds N] [--sizes 100,1000,5000]
//! [--slow-rm K]`
//!
//! `--slow-rm K` prints instead, per family, what a slow RM does to the grants (the per-key
//! model with grants handed over 1 to K calls late, `TraceConfig::rm_delay_rounds`):
//! containers granted and released as surplus, and the peak of executors against the peak
//! target.
//!
//! A single run of a trace depends on chance (which nodes offer room first, which hosts hold
//! the popular blocks), and on the busy trace a few offers a round decide it. So each family
//! runs over `N` seeds (20 unless stated; the first is the family's reported seed) and the
//! first table gives the means and, per seed, whether the default was better, equal or worse.
//! The second table is the first seed of each family in full. "node-local reached / bound":
//! the offline optimum lies between the two. The bound (`sim::offline_bound`) is a proven
//! upper bound: no placement of the same executors does better on the standard families
//! (`sim::bound`; for the busy family, whose stages overlap and whose nodes are busy, it bounds
//! the static model only). "Reached" (`sim::placed_share`) is the bound's candidate placement
//! played through the same rounds without YARN: a share some placement reaches. "Per-key
//! model": the default strategy with the simulator's RM keeping strict and relaxed requests
//! in two request keys, strict first (`strict_requests`, `strict_first`), as the real
//! CapacityScheduler does (the model that predicts the 1,000-node harness).

use std::time::Instant;

use yarn_am_core::sim;

use sim::{offline_bound, placed_share, simulate, SimResult, Trace, TraceConfig};
use yarn_am_core::allocator::Strategy;

/// A trace family: its configuration for the k-th seed.
type Family = Box<dyn Fn(u64) -> TraceConfig>;

/// The families at one size, with their names.
fn families(nodes: usize) -> Vec<(String, Family)> {
    let name = |label: &str| format!("{nodes} nodes, {label}");
    let standard = move |skew: f64, base: u64| {
        move |k: u64| TraceConfig::standard("", nodes, skew, base + 100 * k)
    };
    vec![
        (name("uniform"), Box::new(standard(0.0, 1))),
        (name("skewed"), Box::new(standard(0.8, 2))),
        (name("very skewed"), Box::new(standard(1.2, 3))),
        (
            name("skewed, 1 slot/node"),
            Box::new(move |k| TraceConfig {
                capacity: 1,
                ..standard(0.8, 4)(k)
            }),
        ),
        (
            name("skewed, 30% DataNode-only"),
            Box::new(move |k| TraceConfig {
                datanode_only: nodes * 3 / 10,
                ..standard(0.8, 5)(k)
            }),
        ),
        (
            name("shifting data, busy"),
            Box::new(move |k| TraceConfig::shifting("", nodes, 6 + 100 * k)),
        ),
    ]
}

/// Better / equal / worse counts of the default strategy against Spark's.
#[derive(Default)]
struct Tally([u32; 3]);

impl Tally {
    fn add(&mut self, ours: f64, spark: f64) {
        self.0[if ours > spark {
            0
        } else if ours == spark {
            1
        } else {
            2
        }] += 1;
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} / {} / {}", self.0[0], self.0[1], self.0[2])
    }
}

fn arg<T: std::str::FromStr>(name: &str) -> Option<T> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == name)?;
    let value = args.get(i + 1)?;
    match value.parse() {
        Ok(v) => Some(v),
        Err(_) => {
            eprintln!("{name}: cannot read `{value}`");
            std::process::exit(2);
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let seeds: u64 = arg("--seeds").unwrap_or(20).max(1);
    let sizes: Vec<usize> = match arg::<String>("--sizes") {
        Some(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        None if quick => vec![100],
        None => vec![100, 5000],
    };
    if let Some(k) = arg::<u32>("--slow-rm") {
        slow_rm(&sizes, seeds, k);
        return;
    }
    let mut first: Vec<(String, SimResult, SimResult)> = Vec::new();
    println!("Means over {seeds} seeds; better / equal / worse counts the seeds where the default strategy beat, tied or lost to Spark's.\n");
    println!("| trace | node-local spark | node-local default | node-local reached / bound | node-local default, per-key model | rack-local+ spark | rack-local+ default | node-local better / equal / worse | rack-local+ better / equal / worse | requests spark / default | default re-asks | rounds spark / default | time |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &nodes in &sizes {
        for (name, config) in families(nodes) {
            let start = Instant::now();
            let (mut node, mut rack) = (Tally::default(), Tally::default());
            let mut sums = [0.0f64; 12];
            for k in 0..seeds {
                let trace = Trace::generate(config(k));
                let s = simulate(&trace, Strategy::Spark);
                let d = simulate(&trace, Strategy::Default);
                // The per-key model (strict and relaxed requests in YARN's two keys, strict
                // first): the one that matches the real RM at 1,000 nodes.
                let keys = simulate(
                    &Trace::generate(TraceConfig {
                        strict_requests: true,
                        strict_first: true,
                        ..config(k)
                    }),
                    Strategy::Default,
                );
                node.add(d.node_local, s.node_local);
                rack.add(d.rack_local, s.rack_local);
                for (sum, x) in sums.iter_mut().zip([
                    s.node_local,
                    d.node_local,
                    s.rack_local,
                    d.rack_local,
                    s.requests as f64,
                    d.requests as f64,
                    s.rounds as f64,
                    d.rounds as f64,
                    d.reasked as f64,
                    offline_bound(&trace),
                    placed_share(&trace),
                    keys.node_local,
                ]) {
                    *sum += x / seeds as f64;
                }
                if k == 0 {
                    first.push((name.clone(), s, d));
                }
            }
            println!(
                "| {name} | {} | {} | {} / {} | {} | {} | {} | {node} | {rack} | {:.0} / {:.0} | {:.0} | {:.1} / {:.1} | {:.1} s |",
                pct(sums[0]),
                pct(sums[1]),
                pct(sums[10]),
                pct(sums[9]),
                pct(sums[11]),
                pct(sums[2]),
                pct(sums[3]),
                sums[4],
                sums[5],
                sums[8],
                sums[6],
                sums[7],
                start.elapsed().as_secs_f64()
            );
        }
    }
    println!("\nThe first seed of each family:\n");
    println!("| trace | strategy | node-local | rack-local or better | requests sent | re-asked | containers granted | off-switch | asks on hosts without NM | rounds |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, s, d) in first {
        for (strategy, r) in [(Strategy::Spark, s), (Strategy::Default, d)] {
            println!(
                "| {name} | {strategy} | {} | {} | {} | {} | {} | {} | {} | {} |",
                pct(r.node_local),
                pct(r.rack_local),
                r.requests,
                r.reasked,
                r.granted,
                r.off_switch,
                r.asks_without_nodemanager,
                r.rounds,
            );
        }
    }
}

/// The slow-RM table (`--slow-rm K`): sums over the seeds.
fn slow_rm(sizes: &[usize], seeds: u64, k: u32) {
    println!("Slow RM: grants handed over 1 to {k} calls late, one RM key per allocation request id, strict keys first; sums over {seeds} seeds.\n");
    println!("| trace | strategy | granted | released (surplus) | peak executors / peak target | node-local | rounds |");
    println!("|---|---|---|---|---|---|---|");
    for &nodes in sizes {
        for (name, config) in families(nodes) {
            for strategy in [Strategy::Spark, Strategy::Default] {
                let mut sums = [0u64; 5];
                let mut node_local = 0.0;
                for seed in 0..seeds {
                    let trace = Trace::generate(TraceConfig {
                        strict_requests: true,
                        strict_first: true,
                        rm_delay_rounds: k,
                        ..config(seed)
                    });
                    let r = simulate(&trace, strategy);
                    for (sum, x) in sums.iter_mut().zip([
                        r.granted,
                        r.released,
                        r.peak_executors,
                        r.peak_target,
                        r.rounds,
                    ]) {
                        *sum += x;
                    }
                    node_local += r.node_local / seeds as f64;
                }
                println!(
                    "| {name} | {strategy} | {} | {} | {} / {} | {} | {} |",
                    sums[0],
                    sums[1],
                    sums[2],
                    sums[3],
                    pct(node_local),
                    sums[4]
                );
            }
        }
    }
}
