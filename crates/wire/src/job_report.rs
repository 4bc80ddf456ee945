//! What happened to each task, and the job in numbers: the record the AM writes when the
//! job ends, and what the benchmarks compare.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ids::ExecutorId;
use crate::placement::TaskLocality;

/// The last finished attempt of one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: String,
    pub executor_id: ExecutorId,
    pub host: String,
    pub locality: TaskLocality,
    /// Launches, this one included (lost and failed attempts count).
    pub attempts: u32,
    pub duration_ms: u64,
    pub exit_code: i32,
    /// Why the task's latest failed attempt failed, if one did (e.g. "attempt 0 timed out
    /// after 3000 ms (killed) on executor 2 (nm1)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

/// Succeeded tasks by the locality of their successful attempt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalityCounts {
    pub node_local: u32,
    pub no_pref: u32,
    pub rack_local: u32,
    pub any: u32,
}

impl LocalityCounts {
    pub fn add(&mut self, l: TaskLocality) {
        match l {
            TaskLocality::NodeLocal => self.node_local += 1,
            TaskLocality::NoPref => self.no_pref += 1,
            TaskLocality::RackLocal => self.rack_local += 1,
            TaskLocality::Any => self.any += 1,
        }
    }

    /// Takes back an [`Self::add`] (a task's successful record replaced).
    pub fn remove(&mut self, l: TaskLocality) {
        let n = match l {
            TaskLocality::NodeLocal => &mut self.node_local,
            TaskLocality::NoPref => &mut self.no_pref,
            TaskLocality::RackLocal => &mut self.rack_local,
            TaskLocality::Any => &mut self.any,
        };
        *n -= 1;
    }

    pub fn total(&self) -> u32 {
        self.node_local + self.no_pref + self.rack_local + self.any
    }
}

/// Registered executors at a time; a sample is kept only when the count changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutorSample {
    pub t_ms: u64,
    pub executors: u32,
}

/// The job in numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSummary {
    pub name: String,
    pub succeeded: bool,
    /// Why the job failed, if it did.
    pub failure: Option<String>,
    pub tasks_total: u32,
    pub tasks_succeeded: u32,
    /// Tasks that used up their retries (the first one ends the job, so 0 or 1).
    pub tasks_failed: u32,
    pub by_locality: LocalityCounts,
    pub executors_over_time: Vec<ExecutorSample>,
    /// From the driver's first event to the end.
    pub wall_time_ms: u64,
    /// In job order; tasks that never finished an attempt are left out.
    pub tasks: Vec<TaskRecord>,
}

impl JobSummary {
    /// `failed`, `succeeded` or `running`, as the tracking page says it.
    pub fn state_word(&self) -> &'static str {
        match (&self.failure, self.succeeded) {
            (Some(_), _) => "failed",
            (None, true) => "succeeded",
            (None, false) => "running",
        }
    }

    /// The summary in an application's final diagnostics, where the AM puts it as one JSON
    /// line after a line for people; with that line, for printing as it came.
    pub fn from_diagnostics(diagnostics: &str) -> Option<(&str, JobSummary)> {
        diagnostics
            .lines()
            .map(str::trim)
            .find_map(|l| serde_json::from_str(l).ok().map(|s| (l, s)))
    }
}

/// Most executor-count samples kept in a report.
pub const MAX_SAMPLES: usize = 1000;

/// Task records per chunk of [`Records`]: small, so that changing a record while a
/// published view shares its chunk copies only this many pointers.
const CHUNK: usize = 64;

type Chunk = Vec<Option<Arc<TaskRecord>>>;

/// The task records in job order, in shared chunks: a view of them is one pointer copy;
/// the first change after a view copies the chunk pointers (one per [`CHUNK`] tasks), and
/// changing a record copies its chunk's pointers, only while a view still holds it.
#[derive(Debug, Clone, Default)]
struct Records {
    chunks: Arc<Vec<Arc<Chunk>>>,
    /// Records present (tasks that finished an attempt).
    present: usize,
}

impl Records {
    fn new(tasks: usize) -> Records {
        let chunks = (0..tasks.div_ceil(CHUNK))
            .map(|c| Arc::new(vec![None; CHUNK.min(tasks - c * CHUNK)]))
            .collect();
        Records {
            chunks: Arc::new(chunks),
            present: 0,
        }
    }

    fn get(&self, index: usize) -> Option<&TaskRecord> {
        self.chunks
            .get(index / CHUNK)?
            .get(index % CHUNK)?
            .as_deref()
    }

    /// Sets the record at `index`; returns the one it replaces.
    fn set(&mut self, index: usize, record: TaskRecord) -> Option<Arc<TaskRecord>> {
        let chunk = &mut Arc::make_mut(&mut self.chunks)[index / CHUNK];
        let slot = &mut Arc::make_mut(chunk)[index % CHUNK];
        let old = slot.replace(Arc::new(record));
        if old.is_none() {
            self.present += 1;
        }
        old
    }

    /// The records present, in job order.
    fn iter(&self) -> impl Iterator<Item = &TaskRecord> {
        self.chunks
            .iter()
            .flat_map(|c| c.iter().flatten().map(|r| &**r))
    }

    fn from_list(tasks: Vec<TaskRecord>) -> Records {
        let present = tasks.len();
        let mut it = tasks.into_iter().map(|t| Some(Arc::new(t)));
        let mut chunks = Vec::new();
        loop {
            let chunk: Chunk = it.by_ref().take(CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            chunks.push(Arc::new(chunk));
        }
        Records {
            chunks: Arc::new(chunks),
            present,
        }
    }
}

/// Collects records and samples as the job runs. The counts a summary shows are kept up to
/// date on each record rather than counted again, so that [`Report::view`] costs the same
/// at 100 tasks as at 100,000.
#[derive(Debug, Clone, Default)]
pub struct Report {
    tasks_total: usize,
    records: Records,
    tasks_succeeded: u32,
    by_locality: LocalityCounts,
    samples: Arc<Vec<ExecutorSample>>,
}

impl Report {
    pub fn new(tasks: usize) -> Report {
        Report {
            tasks_total: tasks,
            records: Records::new(tasks),
            ..Report::default()
        }
    }

    /// Record a finished attempt of the task at `index` (job order); a later one replaces it.
    pub fn record(&mut self, index: usize, record: TaskRecord) {
        let (ok, locality) = (record.exit_code == 0, record.locality);
        if let Some(old) = self.records.set(index, record) {
            if old.exit_code == 0 {
                self.tasks_succeeded -= 1;
                self.by_locality.remove(old.locality);
            }
        }
        if ok {
            self.tasks_succeeded += 1;
            self.by_locality.add(locality);
        }
    }

    /// The record of the task at `index`, if it finished an attempt.
    pub fn get(&self, index: usize) -> Option<&TaskRecord> {
        self.records.get(index)
    }

    /// Note the executor count at `t_ms`; kept only if it differs from the last sample.
    /// A long app with churn would grow this without end, so past [`MAX_SAMPLES`] every
    /// other sample is dropped (halving the resolution, keeping the first and the newest).
    pub fn sample(&mut self, t_ms: u64, executors: u32) {
        if self.samples.last().map(|s| s.executors) != Some(executors) {
            let samples = Arc::make_mut(&mut self.samples);
            samples.push(ExecutorSample { t_ms, executors });
            if samples.len() > MAX_SAMPLES {
                let last = samples.len() - 1;
                let mut i = 0;
                samples.retain(|_| {
                    i += 1;
                    (i - 1) % 2 == 0 || i - 1 == last
                });
            }
        }
    }

    /// The report as it stands, to publish: shares the records instead of copying them.
    pub fn view(
        &self,
        name: &str,
        failure: Option<&str>,
        tasks_failed: u32,
        wall_time_ms: u64,
    ) -> ReportView {
        ReportView(Arc::new(Parts {
            name: name.to_string(),
            succeeded: failure.is_none() && self.tasks_succeeded as usize == self.tasks_total,
            failure: failure.map(str::to_string),
            tasks_total: self.tasks_total as u32,
            tasks_succeeded: self.tasks_succeeded,
            tasks_failed,
            by_locality: self.by_locality,
            samples: Arc::clone(&self.samples),
            wall_time_ms,
            records: self.records.clone(),
        }))
    }

    pub fn summary(
        &self,
        name: &str,
        failure: Option<&str>,
        tasks_failed: u32,
        wall_time_ms: u64,
    ) -> JobSummary {
        self.view(name, failure, tasks_failed, wall_time_ms)
            .summary()
    }
}

/// A job report as of one moment, as the AM publishes it for `GET /v1/job`, `/v1/state` and
/// the tracking page: cheap to take (it shares the task records with the [`Report`]) and
/// serialized exactly as the [`JobSummary`] it stands for. Turning it into JSON walks every
/// task, which is the reader's work, never the AM loop's. A clone is a pointer copy.
#[derive(Debug, Clone)]
pub struct ReportView(Arc<Parts>);

#[derive(Debug)]
struct Parts {
    name: String,
    succeeded: bool,
    failure: Option<String>,
    tasks_total: u32,
    tasks_succeeded: u32,
    tasks_failed: u32,
    by_locality: LocalityCounts,
    samples: Arc<Vec<ExecutorSample>>,
    wall_time_ms: u64,
    records: Records,
}

impl ReportView {
    /// The summary without its task list; the list is [`Self::tasks`].
    pub fn brief(&self) -> JobSummary {
        let p = &*self.0;
        JobSummary {
            name: p.name.clone(),
            succeeded: p.succeeded,
            failure: p.failure.clone(),
            tasks_total: p.tasks_total,
            tasks_succeeded: p.tasks_succeeded,
            tasks_failed: p.tasks_failed,
            by_locality: p.by_locality,
            executors_over_time: p.samples.as_ref().clone(),
            wall_time_ms: p.wall_time_ms,
            tasks: Vec::new(),
        }
    }

    /// The whole summary, every task record copied.
    pub fn summary(&self) -> JobSummary {
        JobSummary {
            tasks: self.tasks().cloned().collect(),
            ..self.brief()
        }
    }

    /// The last finished attempt of each task that finished one, in job order.
    pub fn tasks(&self) -> impl Iterator<Item = &TaskRecord> {
        self.0.records.iter()
    }

    /// How many tasks [`Self::tasks`] lists.
    pub fn tasks_listed(&self) -> usize {
        self.0.records.present
    }

    /// Succeeded tasks over all, 0 to 1 (0 for a job of no tasks).
    pub fn done_fraction(&self) -> f32 {
        let p = &*self.0;
        if p.tasks_total == 0 {
            0.0
        } else {
            (p.tasks_succeeded as f32 / p.tasks_total as f32).min(1.0)
        }
    }
}

impl From<JobSummary> for ReportView {
    fn from(s: JobSummary) -> ReportView {
        ReportView(Arc::new(Parts {
            name: s.name,
            succeeded: s.succeeded,
            failure: s.failure,
            tasks_total: s.tasks_total,
            tasks_succeeded: s.tasks_succeeded,
            tasks_failed: s.tasks_failed,
            by_locality: s.by_locality,
            samples: Arc::new(s.executors_over_time),
            wall_time_ms: s.wall_time_ms,
            records: Records::from_list(s.tasks),
        }))
    }
}

impl PartialEq for ReportView {
    fn eq(&self, other: &ReportView) -> bool {
        self.brief() == other.brief() && self.tasks().eq(other.tasks())
    }
}

impl Eq for ReportView {}

/// The field names and order of [`JobSummary`]'s derived form, borrowed.
#[derive(Serialize)]
struct SummaryRef<'a> {
    name: &'a str,
    succeeded: bool,
    failure: Option<&'a str>,
    tasks_total: u32,
    tasks_succeeded: u32,
    tasks_failed: u32,
    by_locality: LocalityCounts,
    executors_over_time: &'a [ExecutorSample],
    wall_time_ms: u64,
    tasks: TaskList<'a>,
}

struct TaskList<'a>(&'a Records);

impl Serialize for TaskList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

impl Serialize for ReportView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = &*self.0;
        SummaryRef {
            name: &p.name,
            succeeded: p.succeeded,
            failure: p.failure.as_deref(),
            tasks_total: p.tasks_total,
            tasks_succeeded: p.tasks_succeeded,
            tasks_failed: p.tasks_failed,
            by_locality: p.by_locality,
            executors_over_time: &p.samples,
            wall_time_ms: p.wall_time_ms,
            tasks: TaskList(&p.records),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ReportView {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ReportView, D::Error> {
        JobSummary::deserialize(d).map(ReportView::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_found_on_its_own_line_of_the_diagnostics() {
        let summary = Report::new(0).summary("j", None, 0, 5);
        let json = serde_json::to_string(&summary).unwrap();
        let diagnostics = format!("job j succeeded: 0/0 tasks\n{json}\n");
        let (line, found) = JobSummary::from_diagnostics(&diagnostics).unwrap();
        assert_eq!((line, found), (json.as_str(), summary));
        assert!(JobSummary::from_diagnostics("AM container exited with 1\n{}").is_none());
    }

    fn rec(id: &str, locality: TaskLocality, exit_code: i32) -> TaskRecord {
        TaskRecord {
            task_id: id.into(),
            executor_id: ExecutorId::new(1),
            host: "nm1".into(),
            locality,
            attempts: 1,
            duration_ms: 10,
            exit_code,
            last_failure: None,
        }
    }

    #[test]
    fn samples_are_kept_on_change_only() {
        let mut r = Report::new(0);
        for (t, n) in [(0, 0), (5, 0), (10, 2), (20, 2), (30, 1)] {
            r.sample(t, n);
        }
        let s = r.summary("j", None, 0, 30);
        let got: Vec<(u64, u32)> = s
            .executors_over_time
            .iter()
            .map(|s| (s.t_ms, s.executors))
            .collect();
        assert_eq!(got, vec![(0, 0), (10, 2), (30, 1)]);
    }

    #[test]
    fn samples_stay_bounded_for_long_apps() {
        let mut r = Report::new(0);
        for t in 0..10_000u64 {
            r.sample(t, (t % 7) as u32);
            assert!(r.samples.len() <= MAX_SAMPLES, "at {t}");
        }
        let first = r.samples[0];
        let last = *r.samples.last().unwrap();
        assert_eq!((first.t_ms, first.executors), (0, 0));
        assert_eq!((last.t_ms, last.executors), (9_999, (9_999 % 7) as u32));
        assert!(r.samples.windows(2).all(|w| w[0].t_ms < w[1].t_ms));
        assert!(r.samples.len() > MAX_SAMPLES / 2);
    }

    #[test]
    fn summary_counts_and_serializes() {
        let mut r = Report::new(3);
        r.record(0, rec("a", TaskLocality::NodeLocal, 0));
        r.record(1, rec("b", TaskLocality::Any, 1));
        r.record(1, rec("b", TaskLocality::RackLocal, 0));
        let s = r.summary("j", None, 0, 99);
        assert!(!s.succeeded, "c never ran");
        assert_eq!((s.tasks_total, s.tasks_succeeded), (3, 2));
        assert_eq!(
            s.by_locality,
            LocalityCounts {
                node_local: 1,
                rack_local: 1,
                ..Default::default()
            }
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["tasks"][1]["locality"], "RACK_LOCAL");
        assert_eq!(json["by_locality"]["node_local"], 1);
        let back: JobSummary = serde_json::from_value(json).unwrap();
        assert_eq!(back, s);
    }
}

#[cfg(test)]
mod view_tests {
    use proptest::prelude::*;

    use super::*;

    const LOCALITIES: [TaskLocality; 4] = [
        TaskLocality::NodeLocal,
        TaskLocality::NoPref,
        TaskLocality::RackLocal,
        TaskLocality::Any,
    ];

    /// The summary counted from scratch, as `Report::summary` did before the counts were
    /// kept up to date: every record walked.
    fn recount(tasks: &[Option<TaskRecord>], name: &str, wall: u64) -> JobSummary {
        let mut by_locality = LocalityCounts::default();
        let mut tasks_succeeded = 0;
        for r in tasks.iter().flatten() {
            if r.exit_code == 0 {
                tasks_succeeded += 1;
                by_locality.add(r.locality);
            }
        }
        JobSummary {
            name: name.into(),
            succeeded: tasks_succeeded as usize == tasks.len(),
            failure: None,
            tasks_total: tasks.len() as u32,
            tasks_succeeded,
            tasks_failed: 0,
            by_locality,
            executors_over_time: Vec::new(),
            wall_time_ms: wall,
            tasks: tasks.iter().flatten().cloned().collect(),
        }
    }

    fn record(task: usize, locality: usize, exit_code: i32, attempts: u32) -> TaskRecord {
        TaskRecord {
            task_id: format!("t{task}"),
            executor_id: ExecutorId::new((task % 7) as u64),
            host: format!("nm{}", task % 3),
            locality: LOCALITIES[locality],
            attempts,
            duration_ms: task as u64 * 10,
            exit_code,
            last_failure: (exit_code != 0).then(|| format!("exit {exit_code}")),
        }
    }

    proptest! {
        /// After any sequence of finished attempts (successes, failures, a task's record
        /// replaced by a later attempt, either way), the kept counts equal a recount, the
        /// view serializes exactly as the summary, and a view taken earlier still shows
        /// the report as it was then.
        #[test]
        fn kept_counts_equal_a_recount(
            tasks in 1usize..300,
            steps in proptest::collection::vec(
                (any::<usize>(), 0usize..4, prop_oneof![3 => Just(0), 1 => -2i32..3]),
                0..400,
            ),
        ) {
            let mut report = Report::new(tasks);
            let mut model: Vec<Option<TaskRecord>> = vec![None; tasks];
            let mut earlier: Option<(ReportView, JobSummary)> = None;
            for (n, (task, locality, exit)) in steps.into_iter().enumerate() {
                let i = task % tasks;
                let r = record(i, locality, exit, n as u32);
                model[i] = Some(r.clone());
                report.record(i, r);
                let view = report.view("j", None, 0, n as u64);
                let expected = recount(&model, "j", n as u64);
                prop_assert_eq!(view.summary(), expected.clone());
                prop_assert_eq!(view.tasks_listed(), expected.tasks.len());
                prop_assert_eq!(report.get(i), model[i].as_ref());
                if n % 17 == 0 {
                    prop_assert_eq!(
                        serde_json::to_value(&view).unwrap(),
                        serde_json::to_value(&expected).unwrap()
                    );
                    if let Some((v, s)) = &earlier {
                        prop_assert_eq!(&v.summary(), s);
                    }
                    earlier = Some((view, expected));
                }
            }
        }
    }

    #[test]
    fn a_view_reads_back_from_its_json() {
        let mut r = Report::new(130);
        for i in (0..130).step_by(3) {
            r.record(i, record(i, i % 4, (i % 5) as i32, 1));
        }
        r.sample(5, 2);
        let view = r.view("j", Some("task t3 failed"), 1, 77);
        let json = serde_json::to_string(&view).unwrap();
        let back: ReportView = serde_json::from_str(&json).unwrap();
        assert_eq!(back, view);
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert_eq!(
            serde_json::from_str::<JobSummary>(&json).unwrap(),
            view.summary()
        );
    }
}
