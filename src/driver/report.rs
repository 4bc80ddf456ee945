//! What happened to each task, and the job in numbers: the record the AM writes when the
//! job ends, and what the benchmarks compare.

use serde::{Deserialize, Serialize};

use super::scheduler::{ExecutorId, Locality};

/// The last finished attempt of one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: String,
    pub executor_id: ExecutorId,
    pub host: String,
    pub locality: Locality,
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
    pub fn add(&mut self, l: Locality) {
        match l {
            Locality::NodeLocal => self.node_local += 1,
            Locality::NoPref => self.no_pref += 1,
            Locality::RackLocal => self.rack_local += 1,
            Locality::Any => self.any += 1,
        }
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

/// Collects records and samples as the job runs.
#[derive(Debug, Clone, Default)]
pub struct Report {
    records: Vec<Option<TaskRecord>>,
    succeeded: Vec<bool>,
    samples: Vec<ExecutorSample>,
}

impl Report {
    pub fn new(tasks: usize) -> Report {
        Report {
            records: vec![None; tasks],
            succeeded: vec![false; tasks],
            samples: Vec::new(),
        }
    }

    /// Record a finished attempt of the task at `index` (job order); a later one replaces it.
    pub fn record(&mut self, index: usize, record: TaskRecord) {
        self.succeeded[index] = record.exit_code == 0;
        self.records[index] = Some(record);
    }

    /// Note the executor count at `t_ms`; kept only if it differs from the last sample.
    /// A long app with churn would grow this without end, so past [`MAX_SAMPLES`] every
    /// other sample is dropped (halving the resolution, keeping the first and the newest).
    pub fn sample(&mut self, t_ms: u64, executors: u32) {
        if self.samples.last().map(|s| s.executors) != Some(executors) {
            self.samples.push(ExecutorSample { t_ms, executors });
            if self.samples.len() > MAX_SAMPLES {
                let last = self.samples.len() - 1;
                let mut i = 0;
                self.samples.retain(|_| {
                    i += 1;
                    (i - 1) % 2 == 0 || i - 1 == last
                });
            }
        }
    }

    pub fn summary(
        &self,
        name: &str,
        failure: Option<&str>,
        tasks_failed: u32,
        wall_time_ms: u64,
    ) -> JobSummary {
        let mut by_locality = LocalityCounts::default();
        let mut tasks_succeeded = 0;
        for r in self.records.iter().flatten() {
            if r.exit_code == 0 {
                tasks_succeeded += 1;
                by_locality.add(r.locality);
            }
        }
        JobSummary {
            name: name.to_string(),
            succeeded: failure.is_none() && tasks_succeeded as usize == self.records.len(),
            failure: failure.map(str::to_string),
            tasks_total: self.records.len() as u32,
            tasks_succeeded,
            tasks_failed,
            by_locality,
            executors_over_time: self.samples.clone(),
            wall_time_ms,
            tasks: self.records.iter().flatten().cloned().collect(),
        }
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

    fn rec(id: &str, locality: Locality, exit_code: i32) -> TaskRecord {
        TaskRecord {
            task_id: id.into(),
            executor_id: "e1".into(),
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
        r.record(0, rec("a", Locality::NodeLocal, 0));
        r.record(1, rec("b", Locality::Any, 1));
        r.record(1, rec("b", Locality::RackLocal, 0));
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
