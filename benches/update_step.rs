//! The update step at 100 / 1,000 / 10,000 hosts with 10,000 containers to place and 100,000
//! locality-aware tasks (3 skewed replicas each), grouped (ours) against the literal
//! per-container port of Spark's step, in the same run.
//!
//! `cargo bench --bench update_step`; sample sizes are small so the run takes a few minutes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use yarn_am_core::allocator::literal;
use yarn_am_core::allocator::{update_requests, Cluster, Strategy};

use yarn_am_core::sim;

use sim::{bench_snapshot, bench_topology};

const CONTAINERS: u32 = 10_000;
const TASKS: usize = 100_000;
const TASKS_PER_EXECUTOR: u32 = 10;

fn update_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("update_step");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3));
    for hosts in [100usize, 1_000, 10_000] {
        let snapshot = bench_snapshot(hosts, TASKS, CONTAINERS, TASKS_PER_EXECUTOR, 42);
        let topology = bench_topology(hosts);
        let cluster = Cluster::default();
        // Same answer, so the comparison is fair.
        let plan = update_requests(&snapshot, Strategy::Spark, &topology, &cluster);
        let lit = literal::update_requests(&snapshot, &topology);
        assert_eq!(plan.added() as usize, lit.add.len());
        assert_eq!(plan.added(), u64::from(CONTAINERS));

        group.bench_with_input(BenchmarkId::new("grouped_spark", hosts), &hosts, |b, _| {
            b.iter(|| {
                black_box(update_requests(
                    black_box(&snapshot),
                    Strategy::Spark,
                    &topology,
                    &cluster,
                ))
            })
        });
        group.bench_with_input(
            BenchmarkId::new("grouped_default", hosts),
            &hosts,
            |b, _| {
                b.iter(|| {
                    black_box(update_requests(
                        black_box(&snapshot),
                        Strategy::Default,
                        &topology,
                        &cluster,
                    ))
                })
            },
        );
        group.bench_with_input(BenchmarkId::new("literal_port", hosts), &hosts, |b, _| {
            b.iter(|| black_box(literal::update_requests(black_box(&snapshot), &topology)))
        });
    }
    group.finish();
}

criterion_group!(benches, update_step);
criterion_main!(benches);
