//! What the AM loop pays for the job part of the view it publishes after every event, at
//! 100,000 finished tasks: the old pass (build the summary with every task record and turn it
//! into a `serde_json::Value`, every pass) against the new one (`JobRun::report` in
//! `src/am/job.rs`: the value is built once per driver change and shared as an `Arc`).
//!
//! `JobRun` lives in the binary crate, so this measures the library pieces it uses
//! (`driver::report::Report::summary`, `serde_json::to_value`) and a stand-in with the same
//! cache logic as `JobRun::report`. The pool's part of the view (executor list, O(executors))
//! is not measured here.
//!
//! `cargo bench --bench am_view`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use yarn_am::driver::report::{Report, TaskRecord};
use yarn_am::driver::scheduler::Locality;

const TASKS: usize = 100_000;
const EXECUTORS: usize = 10_000;

fn record(i: usize) -> TaskRecord {
    TaskRecord {
        task_id: format!("task-{i}"),
        executor_id: (i % EXECUTORS + 1).to_string(),
        host: format!("host-{}", i % 1_000),
        locality: Locality::NodeLocal,
        attempts: 1,
        duration_ms: 1_000 + i as u64 % 500,
        exit_code: 0,
        last_failure: None,
    }
}

/// The old pass: what `JobRun::report` did on every event.
fn old_pass(report: &Report) -> serde_json::Value {
    serde_json::to_value(report.summary("big", None, 0, 60_000)).unwrap_or_default()
}

/// Same logic as `JobRun::report`: `None` after a driver change, else the shared value.
struct Cached {
    report: Report,
    value: Option<Arc<serde_json::Value>>,
}

impl Cached {
    fn view(&mut self) -> Arc<serde_json::Value> {
        if let Some(v) = &self.value {
            return Arc::clone(v);
        }
        let v = Arc::new(old_pass(&self.report));
        self.value = Some(Arc::clone(&v));
        v
    }
}

fn am_view(c: &mut Criterion) {
    let mut report = Report::new(TASKS);
    for i in 0..TASKS {
        report.record(i, record(i));
    }
    let mut cached = Cached {
        report,
        value: None,
    };
    // Same answer, so the comparison is fair.
    assert_eq!(*cached.view(), old_pass(&cached.report));

    let mut group = c.benchmark_group("am_view_job_100k_tasks");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("old_every_pass", |b| {
        b.iter(|| black_box(old_pass(black_box(&cached.report))))
    });
    group.bench_function("new_pass_no_change", |b| {
        b.iter(|| black_box(cached.view()))
    });
    group.bench_function("new_pass_one_task_finished", |b| {
        b.iter(|| {
            cached.report.record(7, record(7));
            cached.value = None;
            black_box(cached.view())
        })
    });
    group.finish();
}

criterion_group!(benches, am_view);
criterion_main!(benches);
