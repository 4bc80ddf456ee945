//! What one AM loop pass pays for the view it publishes (`GET /v1/job`, `/v1/state`,
//! `/v1/executors`, the tracking page), at 100,000 tasks and 10,000 executors, old way
//! (baseline) against new, in the same run.
//!
//! A pass here is what follows a busy stretch of executor polls: 100 tasks finish (their
//! records replace nothing or an earlier attempt's), the executor count is sampled, 3
//! executors end and are replaced, then the view is published.
//! - old: the job summary rebuilt from every task record and turned into a
//!   `serde_json::Value`, the executor list and recent events copied entry by entry (what
//!   `JobRun::report` and `Pool::view` did on every pass after a change; measured here as
//!   the pool's view copied out entry by entry, so the old figure includes the new view);
//! - new: `Report::view` (counts kept up to date on each record, task records shared in
//!   chunks) and `Pool::view`, whose executor list (`Registry::views`, `Listed`) is rebuilt
//!   only where it changed, as pointer copies.
//!
//! Everything is the library's own code: the job part is `driver::report::Report`, the
//! executor part a real `Pool` (built as the AM builds it, by the `bench` feature's
//! fixtures) whose executors are granted, launched, ended and replaced through the pool's
//! own inputs. A second group runs the driver's own rounds (`driver::Driver`, the real
//! scheduler) for the same 100 task ends, to show what the rest of such a pass costs.
//!
//! `cargo bench --features bench --bench am_view`

use std::collections::{HashMap, VecDeque};
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use yarn_am_core::am::events::LaunchReport;
use yarn_am_core::am::fixtures;
use yarn_am_core::am::pool::Pool;
use yarn_am_core::am::registry::FINISHED_KEPT;
use yarn_am_core::driver::report::{Report, TaskRecord};
use yarn_am_core::driver::scheduler::TaskLocality;
use yarn_am_core::driver::{Driver, DriverAction, DriverEvent, ExecutorId, Job};
use yarn_am_wire::driver_api::{Demand, ExecutorEvent, ExecutorView, StateView};
use yarn_client::amrm::{AllocatedContainer, Allocation, CompletedContainer};

const TASKS: usize = 100_000;
const EXECUTORS: usize = 10_000;
const HOSTS: usize = 1_000;
/// Task ends per pass.
const TASK_ENDS: usize = 100;
/// Executors ending (and replaced) per pass.
const EXECUTOR_CHANGES: usize = 3;

fn host(i: usize) -> String {
    format!("host-{}", i % HOSTS)
}

fn record(i: usize, attempts: u32) -> TaskRecord {
    TaskRecord {
        task_id: format!("task-{i}"),
        executor_id: ExecutorId::new((i % EXECUTORS + 1) as u64),
        host: host(i),
        locality: TaskLocality::NodeLocal,
        attempts,
        duration_ms: 1_000 + i as u64 % 500,
        exit_code: 0,
        last_failure: None,
    }
}

fn container(n: usize) -> AllocatedContainer {
    fixtures::container(&format!("container_1700000000000_0001_01_{n:06}"), &host(n))
}

/// The AM's executor pool with `EXECUTORS` running and `FINISHED_KEPT` finished.
struct Executors {
    pool: Pool,
    now: u64,
    /// Containers granted so far (the next one's number).
    granted: usize,
    /// Running executors, oldest first.
    live: VecDeque<ExecutorId>,
}

impl Executors {
    fn new() -> Executors {
        let nodes: Vec<_> = (0..HOSTS)
            .map(|i| fixtures::node(&host(i), &format!("/rack-{}", i % 25), 65536, 64))
            .collect();
        let mut pool = fixtures::pool(&nodes, EXECUTORS as u32 + 100);
        let demand = Demand {
            target_executors: EXECUTORS as u32,
            ..Default::default()
        };
        pool.set_demand(0, demand);
        let mut e = Executors {
            pool,
            now: 0,
            granted: 0,
            live: VecDeque::new(),
        };
        e.grant(EXECUTORS, Vec::new());
        e.replace(FINISHED_KEPT);
        e
    }

    /// One allocate round trip granting `n` containers and completing `completed`; the
    /// executors granted are launched.
    fn grant(&mut self, n: usize, completed: Vec<CompletedContainer>) {
        self.now += 1;
        black_box(self.pool.heartbeat(self.now));
        let allocated = (self.granted..self.granted + n).map(container).collect();
        self.granted += n;
        let resp = Allocation {
            response_id: 1,
            allocated,
            completed,
            ..Default::default()
        };
        self.pool.allocated(self.now, resp);
        for l in self.pool.take_launches() {
            let container = l.container.id.clone();
            self.pool
                .on_launch(self.now, LaunchReport::Started { container });
            self.live.push_back(l.executor);
        }
    }

    /// The `n` oldest executors' containers end; as many new ones replace them.
    fn replace(&mut self, n: usize) {
        let completed = (0..n)
            .map(|_| {
                let id = self.live.pop_front().expect("live");
                CompletedContainer {
                    id: self.pool.container_of(id).expect("live executor"),
                    exit_status: 0,
                    diagnostics: "exited".into(),
                }
            })
            .collect();
        // Ended in one answer, replaced in the next: the allocator asks for the
        // replacements in between.
        self.grant(0, completed);
        self.grant(n, Vec::new());
    }

    /// Old: every entry copied.
    fn old_view(&mut self) -> (Vec<ExecutorView>, Vec<ExecutorEvent>) {
        let v = self.pool.view();
        (
            v.executors.iter().map(|e| (**e).clone()).collect(),
            v.recent_events.iter().map(|e| (**e).clone()).collect(),
        )
    }

    /// New: the pool's view as the AM publishes it.
    fn new_view(&mut self) -> StateView {
        self.pool.view()
    }
}

/// Half the job done, every task once.
fn half_done() -> Report {
    let mut report = Report::new(TASKS);
    for i in 0..TASKS / 2 {
        report.record(i, record(i, 1));
    }
    report
}

/// The job-side state changes of one pass: `TASK_ENDS` records (new ones, or a second
/// attempt replacing the first) and the executor sample.
fn task_ends(report: &mut Report, pass: &mut usize) {
    for k in 0..TASK_ENDS {
        let i = (*pass * TASK_ENDS + k) % TASKS;
        report.record(i, record(i, 2));
    }
    report.sample(*pass as u64, (EXECUTORS + *pass % 2) as u32);
    *pass += 1;
}

fn executor_changes(executors: &mut Executors) {
    executors.replace(EXECUTOR_CHANGES);
}

fn view_pass(c: &mut Criterion) {
    let mut report = half_done();
    let mut executors = Executors::new();
    // Same content both ways, so the comparison is fair.
    let old = serde_json::to_value(report.summary("big", None, 0, 60_000)).unwrap();
    assert_eq!(
        serde_json::to_value(report.view("big", None, 0, 60_000)).unwrap(),
        old
    );
    let (old_list, _) = executors.old_view();
    let new_list = executors.new_view().executors;
    assert_eq!(old_list.len(), EXECUTORS + FINISHED_KEPT);
    assert!(old_list.iter().eq(new_list.iter().map(|e| &**e)));

    let mut group = c.benchmark_group("am_view_pass_100k_tasks_10k_executors");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3));
    let mut pass = 0;
    group.bench_function("old_rebuild_after_change", |b| {
        b.iter(|| {
            task_ends(&mut report, &mut pass);
            executor_changes(&mut executors);
            let job = serde_json::to_value(report.summary("big", None, 0, 60_000));
            black_box((job.unwrap_or_default(), executors.old_view()))
        })
    });
    // The published view is held until the next pass replaces it, as the AM's watch
    // channel does: changing a record then copies its chunk (shared with the view).
    let mut published = None;
    group.bench_function("new_incremental_after_change", |b| {
        b.iter(|| {
            task_ends(&mut report, &mut pass);
            executor_changes(&mut executors);
            published = Some(black_box((
                report.view("big", None, 0, 60_000),
                executors.new_view(),
            )));
        })
    });
    group.bench_function("new_publish_no_change", |b| {
        b.iter(|| {
            published = Some(black_box((
                report.view("big", None, 0, 60_000),
                executors.new_view(),
            )));
        })
    });
    group.finish();
    drop(published);
}

/// A job of `TASKS` one-cpu tasks with `EXECUTORS` one-core executors registered, each
/// running a task; returns the driver and the attempts running (task, attempt, executor).
fn busy_driver() -> (Driver, VecDeque<(String, u32, ExecutorId)>) {
    let tasks: Vec<String> = (0..TASKS)
        .map(|i| format!(r#"{{"id":"task-{i}","command":"true"}}"#))
        .collect();
    let text = format!(
        r#"{{"name":"big","executor":{{"cores":1,"memory_mb":256,"max_executors":{EXECUTORS},
            "idle_timeout_ms":600000}},"tasks":[{}]}}"#,
        tasks.join(",")
    );
    let mut driver = Driver::new(Job::from_json(&text).expect("job"), HashMap::new()).unwrap();
    let mut running = VecDeque::new();
    for e in 1..=EXECUTORS {
        let out = driver.on_event(
            0,
            DriverEvent::ExecutorAdded {
                id: ExecutorId::new(e as u64),
                host: format!("host-{}", e % 1_000),
                rack: "/default-rack".into(),
                cores: 1,
            },
        );
        take_launches(out, &mut running);
    }
    (driver, running)
}

/// The attempts a round launched, now running.
fn take_launches(actions: Vec<DriverAction>, running: &mut VecDeque<(String, u32, ExecutorId)>) {
    for a in actions {
        if let DriverAction::LaunchTask {
            task_id,
            attempt,
            executor_id,
            ..
        } = a
        {
            running.push_back((task_id, attempt, executor_id));
        }
    }
}

fn finished((task_id, attempt, executor_id): (String, u32, ExecutorId)) -> DriverEvent {
    DriverEvent::TaskFinished {
        task_id,
        attempt,
        executor_id,
        exit_code: 0,
        duration_ms: 1_000,
    }
}

/// `TASK_ENDS` task ends through the driver (each a round: the freed slot gets the next
/// task), then the job part of the view. The driver is started over (outside the timing)
/// before it runs out of tasks.
fn driver_passes(iters: u64, fresh: &(Driver, VecDeque<(String, u32, ExecutorId)>)) -> Duration {
    let (mut driver, mut running) = fresh.clone();
    let mut now = 1_000_000;
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        if running.len() < TASK_ENDS * 2 || driver.is_finished() {
            (driver, running) = fresh.clone();
        }
        let t = Instant::now();
        for _ in 0..TASK_ENDS {
            now += 1;
            let out = driver.on_event(now, finished(running.pop_front().expect("running")));
            take_launches(out, &mut running);
        }
        black_box(driver.view());
        total += t.elapsed();
    }
    total
}

fn driver_pass(c: &mut Criterion) {
    let fresh = busy_driver();
    let mut group = c.benchmark_group("am_driver_pass_100k_tasks_10k_executors");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("100_task_ends_rounds_and_view", |b| {
        b.iter_custom(|iters| driver_passes(iters, &fresh))
    });
    group.finish();
}

criterion_group!(benches, view_pass, driver_pass);
criterion_main!(benches);
