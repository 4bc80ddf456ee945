//! The job journal, sans-IO: what an AM attempt records as it happens so that the next
//! attempt (after a crash) resumes the job instead of running it again, and the writes of
//! the key-value store ([`crate::kv`]), which the next attempt replays.
//!
//! One JSON object per line. Lines are only ever appended, so the one thing a crash can
//! leave behind is a torn last line (no newline, or cut inside the object): [`decode`]
//! ignores it — that outcome is lost and its task simply runs again. A bad line that is not
//! the last means the file is not ours or was damaged; it is reported, never guessed at.
//!
//! Why a log of outcomes instead of a snapshot of the job: each entry is written once, when
//! it happens, with one small append (no rewrite of a growing file on every task), and
//! replaying in order gives the same state the dead attempt had: successes, failures
//! counted against retries, and attempt numbers that keep growing.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::report::TaskRecord;
use super::scheduler::ExecutorId;
use super::Driver;
use crate::ids::TaskAttempt;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Entry {
    /// An AM attempt started (its number, from the container id).
    AmAttempt { attempt: u32 },
    /// The AM started an executor in this container.
    Executor {
        #[serde(with = "crate::ids::as_number")]
        id: ExecutorId,
        container: String,
        host: String,
    },
    /// A task attempt was handed to an executor.
    Launched {
        task_id: String,
        attempt: u32,
        executor_id: ExecutorId,
    },
    /// A task attempt ended; `record` is what the report keeps for it.
    Finished { attempt: u32, record: TaskRecord },
    /// A key-value store write (see [`crate::kv`]), journaled before it is
    /// acknowledged.
    KvPut {
        key: String,
        value: String,
        version: u64,
    },
    /// A key-value store delete.
    KvDelete { key: String, version: u64 },
}

/// One entry as a journal line (with its newline).
pub fn encode(entry: &Entry) -> String {
    let mut line = serde_json::to_string(entry).expect("journal entries always serialise");
    line.push('\n');
    line
}

/// A journal that cannot be read as one.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("journal line {line} is not a journal entry: {error}")]
pub struct DecodeError {
    pub line: usize,
    pub error: String,
}

/// Every whole entry in `text`. A last line without its newline is a write the crash cut
/// short and is dropped (the writer cuts it off before appending, see [`whole_len`]); any
/// other bad line is an error.
pub fn decode(text: &str) -> Result<Vec<Entry>, DecodeError> {
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    let lines: Vec<&str> = complete.split('\n').collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(line) {
            Ok(e) => out.push(e),
            Err(e) => {
                return Err(DecodeError {
                    line: n + 1,
                    error: e.to_string(),
                })
            }
        }
    }
    Ok(out)
}

/// The length of `text` without a torn last line: where the next append must start.
pub fn whole_len(text: &[u8]) -> usize {
    text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// The executors earlier attempts started, by container id: the containers a new attempt
/// gets back from YARN are adopted under these ids.
pub fn executors(entries: &[Entry]) -> std::collections::HashMap<String, ExecutorId> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Executor { id, container, .. } => Some((container.clone(), *id)),
            _ => None,
        })
        .collect()
}

/// The attempts still running when the journal ends: each task's latest launch, unless
/// that attempt finished. With the executor it runs on, in journal order.
pub fn in_flight(entries: &[Entry]) -> Vec<(TaskAttempt, ExecutorId)> {
    let mut latest: Vec<(TaskAttempt, ExecutorId)> = Vec::new();
    for e in entries {
        match e {
            Entry::Launched {
                task_id,
                attempt,
                executor_id,
            } => {
                latest.retain(|(t, _)| &t.task_id != task_id);
                latest.push((TaskAttempt::new(task_id.clone(), *attempt), *executor_id));
            }
            Entry::Finished { attempt, record } => {
                latest.retain(|(t, _)| !(t.task_id == record.task_id && t.attempt == *attempt));
            }
            _ => {}
        }
    }
    latest
}

/// What replaying a journal found, for the AM's log and its id numbering.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replayed {
    /// Tasks that had succeeded: they never run again.
    pub succeeded: usize,
    /// Failed attempts counted against their tasks' retries.
    pub failed: usize,
    /// The highest executor id any earlier attempt used (0: none).
    pub max_executor_id: ExecutorId,
    /// The AM attempts the journal names.
    pub am_attempts: Vec<u32>,
}

impl Driver {
    /// Replays an earlier AM attempt's journal before the first event, so that the job
    /// resumes where it was: succeeded tasks are done (and in the report), failures count,
    /// and attempt numbers continue. Duplicate lines change nothing.
    pub fn replay(&mut self, entries: &[Entry]) -> Replayed {
        let mut out = Replayed::default();
        let mut seen: HashSet<(&str, u32)> = HashSet::new();
        let note_executor = |out: &mut Replayed, id: ExecutorId| {
            out.max_executor_id = out.max_executor_id.max(id);
        };
        for e in entries {
            match e {
                Entry::AmAttempt { attempt } => out.am_attempts.push(*attempt),
                Entry::Executor { id, .. } => note_executor(&mut out, *id),
                Entry::Launched {
                    task_id,
                    attempt,
                    executor_id,
                } => {
                    note_executor(&mut out, *executor_id);
                    self.scheduler.restore_launch(task_id, *attempt);
                }
                Entry::Finished { attempt, record } => {
                    note_executor(&mut out, record.executor_id);
                    if !seen.insert((record.task_id.as_str(), *attempt)) {
                        continue;
                    }
                    let Some(&index) = self.index.get(&record.task_id) else {
                        continue;
                    };
                    if self.scheduler.restore_finished(
                        &record.task_id,
                        *attempt,
                        record.executor_id,
                        record.exit_code,
                    ) {
                        if record.exit_code == 0 {
                            out.succeeded += 1;
                        } else {
                            out.failed += 1;
                        }
                        self.report.record(index, record.clone());
                    }
                }
                // The store replays these itself (`KvStore::replay`).
                Entry::KvPut { .. } | Entry::KvDelete { .. } => {}
            }
        }
        out
    }

    /// The entries this driver produced since the last call, oldest first, for the AM to
    /// append to the journal.
    pub fn take_journal(&mut self) -> Vec<Entry> {
        std::mem::take(&mut self.journal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{DriverAction, DriverEvent, Job, TaskLocality};
    use std::collections::HashMap;

    /// Executor `n`.
    fn e(n: u64) -> ExecutorId {
        ExecutorId::new(n)
    }

    fn driver(tasks: usize, retries: u32) -> Driver {
        let tasks: Vec<_> = (0..tasks)
            .map(|i| format!(r#"{{"id":"t{i}","command":"true"}}"#))
            .collect();
        let job = Job::from_json(&format!(
            r#"{{"name":"j","executor":{{"cores":1,"memory_mb":256}},"task_retries":{retries},
                "tasks":[{}]}}"#,
            tasks.join(",")
        ))
        .unwrap();
        Driver::new(job, HashMap::new()).unwrap()
    }

    fn finished(task: &str, attempt: u32, executor: u64, exit_code: i32) -> Entry {
        Entry::Finished {
            attempt,
            record: TaskRecord {
                task_id: task.into(),
                executor_id: e(executor),
                host: "nm1".into(),
                locality: TaskLocality::NoPref,
                attempts: attempt + 1,
                duration_ms: 5,
                exit_code,
                last_failure: None,
            },
        }
    }

    fn launches(actions: &[DriverAction]) -> Vec<TaskAttempt> {
        actions
            .iter()
            .filter_map(|a| match a {
                DriverAction::LaunchTask {
                    task_id, attempt, ..
                } => Some(TaskAttempt::new(task_id.clone(), *attempt)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn entries_round_trip_and_a_torn_last_line_is_dropped() {
        let entries = vec![
            Entry::AmAttempt { attempt: 1 },
            Entry::Executor {
                id: e(3),
                container: "container_1_0001_01_000002".into(),
                host: "nm1".into(),
            },
            Entry::Launched {
                task_id: "t0".into(),
                attempt: 0,
                executor_id: e(3),
            },
            finished("t0", 0, 3, 0),
        ];
        let text: String = entries.iter().map(encode).collect();
        assert_eq!(decode(&text).unwrap(), entries);
        let torn = encode(&finished("t1", 0, 3, 0));
        for cut in 1..torn.len() {
            let t = format!("{text}{}", &torn[..cut]);
            assert_eq!(decode(&t).unwrap(), entries, "cut at {cut}");
        }
        assert_eq!(decode("").unwrap(), vec![]);
        let t = format!("{text}{}", &torn[..9]);
        assert_eq!(whole_len(t.as_bytes()), text.len());
        assert_eq!(whole_len(b"no newline"), 0);
    }

    /// Lines as the AM wrote them when executor ids were a `u64` in `executor` lines and a
    /// string elsewhere: they still decode, replay, and encode to the same bytes.
    #[test]
    fn a_journal_written_before_the_typed_executor_id_reads_the_same() {
        let old = concat!(
            r#"{"ev":"am_attempt","attempt":1}"#,
            "\n",
            r#"{"ev":"executor","id":12,"container":"container_1_0001_01_000002","host":"nm1"}"#,
            "\n",
            r#"{"ev":"launched","task_id":"t0","attempt":0,"executor_id":"12"}"#,
            "\n",
            r#"{"ev":"finished","attempt":0,"record":{"task_id":"t0","executor_id":"12","host":"nm1","locality":"NO_PREF","attempts":1,"duration_ms":5,"exit_code":0}}"#,
            "\n",
        );
        let entries = decode(old).unwrap();
        assert_eq!(entries[..3], {
            [
                Entry::AmAttempt { attempt: 1 },
                Entry::Executor {
                    id: e(12),
                    container: "container_1_0001_01_000002".into(),
                    host: "nm1".into(),
                },
                Entry::Launched {
                    task_id: "t0".into(),
                    attempt: 0,
                    executor_id: e(12),
                },
            ]
        });
        assert_eq!(entries[3], finished("t0", 0, 12, 0));
        assert_eq!(entries.iter().map(encode).collect::<String>(), old);
        let r = driver(1, 3).replay(&entries);
        assert_eq!((r.succeeded, r.max_executor_id), (1, e(12)));
        // A line naming an executor by something that is no id is a damaged journal.
        let bad = r#"{"ev":"launched","task_id":"t0","attempt":0,"executor_id":"e1"}"#;
        let err = decode(&format!("{bad}\n")).unwrap_err();
        assert!(
            err.to_string().contains("\"e1\" is not an executor id"),
            "{err}"
        );
    }

    #[test]
    fn a_bad_line_in_the_middle_is_an_error_naming_it() {
        let text = format!(
            "{}not json\n{}",
            encode(&Entry::AmAttempt { attempt: 1 }),
            encode(&Entry::AmAttempt { attempt: 2 })
        );
        let e = decode(&text).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("journal line 2"), "{e}");
    }

    #[test]
    fn replayed_successes_never_run_again_and_attempts_continue() {
        let mut d = driver(3, 3);
        let r = d.replay(&[
            Entry::AmAttempt { attempt: 1 },
            Entry::Launched {
                task_id: "t0".into(),
                attempt: 0,
                executor_id: e(7),
            },
            finished("t0", 0, 7, 0),
            finished("t0", 0, 7, 0), // a duplicate line changes nothing
            Entry::Launched {
                task_id: "t1".into(),
                attempt: 0,
                executor_id: e(7),
            },
            finished("t1", 0, 7, 1),
            // t2 was running when the AM died: launched, never finished.
            Entry::Launched {
                task_id: "t2".into(),
                attempt: 0,
                executor_id: e(8),
            },
        ]);
        assert_eq!(
            r,
            Replayed {
                succeeded: 1,
                failed: 1,
                max_executor_id: e(8),
                am_attempts: vec![1],
            }
        );
        let acts = d.on_event(
            10,
            DriverEvent::ExecutorAdded {
                id: e(9),
                host: "nm1".into(),
                rack: "/r".into(),
                cores: 4,
            },
        );
        let mut l = launches(&acts);
        l.sort();
        assert_eq!(l, [TaskAttempt::new("t1", 1), TaskAttempt::new("t2", 1)]);
        // Both succeed: the job is over, with t0's record from the journal.
        let mut done = Vec::new();
        for TaskAttempt {
            task_id: t,
            attempt: a,
        } in l
        {
            done = d.on_event(
                20,
                DriverEvent::TaskFinished {
                    task_id: t,
                    attempt: a,
                    executor_id: e(9),
                    exit_code: 0,
                    duration_ms: 1,
                },
            );
        }
        let Some(DriverAction::JobFinished { succeeded, summary }) = done.last() else {
            panic!("job not finished: {done:?}");
        };
        assert!(succeeded);
        let t0 = summary.tasks.iter().find(|t| t.task_id == "t0").unwrap();
        assert_eq!((t0.attempts, t0.executor_id), (1, e(7)));
    }

    #[test]
    fn an_adopted_executors_running_attempt_counts_and_is_not_run_again() {
        let mut d = driver(2, 3);
        d.replay(&[Entry::Launched {
            task_id: "t0".into(),
            attempt: 0,
            executor_id: e(4),
        }]);
        let acts = d.on_event(
            0,
            DriverEvent::ExecutorAdopted {
                id: e(4),
                host: "nm1".into(),
                rack: "/r".into(),
                cores: 1,
                running: vec![TaskAttempt::new("t0", 0)],
            },
        );
        // Its one core is busy with t0: t1 waits for another slot.
        assert!(launches(&acts).is_empty(), "{acts:?}");
        let acts = d.on_event(
            1,
            DriverEvent::TaskFinished {
                task_id: "t0".into(),
                attempt: 0,
                executor_id: e(4),
                exit_code: 0,
                duration_ms: 9,
            },
        );
        assert_eq!(launches(&acts), [TaskAttempt::new("t1", 0)]);
        assert_eq!(d.scheduler().succeeded_count(), 1);
        assert_eq!(
            executors(&[Entry::Executor {
                id: e(4),
                container: "c".into(),
                host: "h".into()
            }]),
            std::collections::HashMap::from([("c".to_string(), e(4))])
        );
    }

    #[test]
    fn in_flight_attempts_are_each_tasks_latest_unfinished_launch() {
        let launched = |t: &str, a: u32, n: u64| Entry::Launched {
            task_id: t.into(),
            attempt: a,
            executor_id: e(n),
        };
        let entries = [
            launched("t0", 0, 1),
            launched("t1", 0, 1),
            launched("t1", 1, 2), // t1's first attempt was lost with its executor
            launched("t2", 0, 2),
            finished("t2", 0, 2, 0),
        ];
        assert_eq!(
            in_flight(&entries),
            [
                (TaskAttempt::new("t0", 0), e(1)),
                (TaskAttempt::new("t1", 1), e(2))
            ]
        );
    }

    #[test]
    fn a_journal_with_every_task_done_finishes_the_job_at_once() {
        let mut d = driver(2, 3);
        d.replay(&[finished("t0", 0, 1, 0), finished("t1", 2, 1, 0)]);
        let acts = d.on_event(0, DriverEvent::Tick);
        assert!(
            matches!(
                acts.last(),
                Some(DriverAction::JobFinished {
                    succeeded: true,
                    ..
                })
            ),
            "{acts:?}"
        );
    }

    #[test]
    fn replayed_failures_count_against_retries() {
        let mut d = driver(1, 2);
        d.replay(&[finished("t0", 0, 1, 3), finished("t0", 1, 2, 3)]);
        let acts = d.on_event(0, DriverEvent::Tick);
        let Some(DriverAction::JobFinished { succeeded, summary }) = acts.last() else {
            panic!("{acts:?}");
        };
        assert!(!succeeded);
        assert!(summary.failure.as_deref().unwrap().contains("t0"));
    }

    #[test]
    fn the_driver_journals_launches_and_accepted_finishes_only() {
        let mut d = driver(1, 3);
        d.on_event(
            0,
            DriverEvent::ExecutorAdded {
                id: e(1),
                host: "nm1".into(),
                rack: "/r".into(),
                cores: 1,
            },
        );
        // A report for an attempt that is not running is not journaled.
        d.on_event(
            1,
            DriverEvent::TaskFinished {
                task_id: "t0".into(),
                attempt: 5,
                executor_id: e(1),
                exit_code: 0,
                duration_ms: 1,
            },
        );
        d.on_event(
            2,
            DriverEvent::TaskFinished {
                task_id: "t0".into(),
                attempt: 0,
                executor_id: e(1),
                exit_code: 0,
                duration_ms: 1,
            },
        );
        let j = d.take_journal();
        assert_eq!(j.len(), 2, "{j:?}");
        assert!(matches!(&j[0], Entry::Launched { task_id, attempt: 0, .. } if task_id == "t0"));
        assert!(matches!(&j[1], Entry::Finished { attempt: 0, record } if record.exit_code == 0));
        assert!(d.take_journal().is_empty());
    }
}
