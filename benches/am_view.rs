//! What one AM loop pass pays for the view it publishes (`GET /v1/job`, `/v1/state`,
//! `/v1/executors`, the tracking page), at 100,000 tasks and 10,000 executors, old way
//! (baseline) against new, in the same run.
//!
//! A pass here is what follows a busy stretch of executor polls: 100 tasks finish (their
//! records replace nothing or an earlier attempt's), the executor count is sampled, 3
//! executors change state, then the view is published.
//! - old: the job summary rebuilt from every task record and turned into a
//!   `serde_json::Value`, the executor list and recent events copied entry by entry (what
//!   `JobRun::report` and `Pool::view` did on every pass after a change);
//! - new: `Report::view` (counts kept up to date on each record, task records shared in
//!   chunks) and the executor list as `Arc`ed entries whose list is rebuilt as a pointer
//!   copy only after a change (`am::executors::Registry::views`, `api::model::Listed`).
//!
//! The registry and `JobRun` live in the binary crate, so the executor part uses a
//! stand-in entry with the same fields as `ExecutorView` and the same list logic; the job
//! part is the library's `driver::report::Report` itself. A second group runs the driver's
//! own rounds (`driver::Driver`, the real scheduler) for the same 100 task ends, to show
//! what the rest of such a pass costs.
//!
//! `cargo bench --bench am_view`

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use yarn_am::core::driver::report::{Report, TaskRecord};
use yarn_am::core::driver::scheduler::TaskLocality;
use yarn_am::core::driver::{Driver, DriverAction, DriverEvent, ExecutorId, Job};

const TASKS: usize = 100_000;
const EXECUTORS: usize = 10_000;
/// Finished executors the registry keeps besides the live ones.
const FINISHED_KEPT: usize = 1_000;
const RECENT_EVENTS: usize = 50;
/// Task ends per pass.
const TASK_ENDS: usize = 100;
/// Executors changing state per pass.
const EXECUTOR_CHANGES: usize = 3;

fn record(i: usize, attempts: u32) -> TaskRecord {
    TaskRecord {
        task_id: format!("task-{i}"),
        executor_id: ExecutorId::new((i % EXECUTORS + 1) as u64),
        host: format!("host-{}", i % 1_000),
        locality: TaskLocality::NodeLocal,
        attempts,
        duration_ms: 1_000 + i as u64 % 500,
        exit_code: 0,
        last_failure: None,
    }
}

/// Stand-in for `api::model::ExecutorView` (same fields and sizes).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct ExecutorView {
    id: String,
    container_id: String,
    host: String,
    rack: String,
    locality: u8,
    state: u8,
    exit_status: Option<i32>,
    reason: Option<String>,
    counts_against_app: Option<bool>,
}

fn executor(i: usize, state: u8) -> ExecutorView {
    ExecutorView {
        id: i.to_string(),
        container_id: format!("container_1700000000000_0001_01_{i:06}"),
        host: format!("host-{}", i % 1_000),
        rack: format!("/rack-{}", i % 25),
        locality: 0,
        state,
        exit_status: (state == 2).then_some(0),
        reason: (state == 2).then(|| "released by the AM (killed by the driver)".into()),
        counts_against_app: (state == 2).then_some(false),
    }
}

/// A published list, as `api::model::Listed`.
type Listed = Arc<[Arc<ExecutorView>]>;

/// The executor records as the registry keeps them, with the published lists.
struct Executors {
    map: BTreeMap<u64, Arc<ExecutorView>>,
    recent: VecDeque<Arc<ExecutorView>>,
    listed: Option<Listed>,
    listed_recent: Option<Listed>,
}

impl Executors {
    fn new() -> Executors {
        let map: BTreeMap<u64, Arc<ExecutorView>> = (1..=EXECUTORS + FINISHED_KEPT)
            .map(|i| (i as u64, Arc::new(executor(i, u8::from(i > EXECUTORS) * 2))))
            .collect();
        let recent = map.values().take(RECENT_EVENTS).cloned().collect();
        Executors {
            map,
            recent,
            listed: None,
            listed_recent: None,
        }
    }

    /// Executor `id` changes state (an event is recorded, the lists are stale).
    fn change(&mut self, id: u64, state: u8) {
        let e = Arc::make_mut(self.map.get_mut(&id).expect("kept"));
        e.state = state;
        let ev = Arc::new(e.clone());
        self.recent.push_back(ev);
        self.recent.pop_front();
        self.listed = None;
        self.listed_recent = None;
    }

    /// Old: every entry copied.
    fn old_view(&self) -> (Vec<ExecutorView>, Vec<ExecutorView>) {
        (
            self.map.values().map(|e| (**e).clone()).collect(),
            self.recent.iter().map(|e| (**e).clone()).collect(),
        )
    }

    /// New: the lists rebuilt as pointer copies after a change, shared otherwise.
    fn new_view(&mut self) -> (Listed, Listed) {
        let l = self
            .listed
            .get_or_insert_with(|| self.map.values().cloned().collect());
        let r = self
            .listed_recent
            .get_or_insert_with(|| self.recent.iter().cloned().collect());
        (Arc::clone(l), Arc::clone(r))
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

fn executor_changes(executors: &mut Executors, pass: usize) {
    for k in 0..EXECUTOR_CHANGES {
        let id = ((pass * EXECUTOR_CHANGES + k) % EXECUTORS + 1) as u64;
        executors.change(id, (pass % 2) as u8);
    }
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
    let (new_list, _) = executors.new_view();
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
            executor_changes(&mut executors, pass);
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
            executor_changes(&mut executors, pass);
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
