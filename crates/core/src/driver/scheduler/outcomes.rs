//! How attempts end (finished, timed out: re-queued or failed, executors excluded) and
//! what a later AM attempt restores from the journal.

use super::*;

impl Scheduler {
    /// An attempt ended. `None` when it is not the attempt we think is running there (a late
    /// report for a task already re-queued after its executor was lost, or a duplicate).
    pub fn task_finished(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        exit_code: i32,
    ) -> Option<Finished> {
        let what = || format!("exited {exit_code}");
        self.end_attempt(task_id, attempt, executor_id, exit_code, what)
    }

    /// The running attempt passed its timeout: it counts as failed with exit code
    /// [`TIMED_OUT_EXIT_CODE`] and a reason naming the timeout, and is retried like any
    /// failure (the caller has the executor kill it). `None` as for [`Self::task_finished`].
    pub fn task_timed_out(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        timeout_ms: u64,
    ) -> Option<Finished> {
        let what = || format!("timed out after {timeout_ms} ms (killed)");
        self.end_attempt(task_id, attempt, executor_id, TIMED_OUT_EXIT_CODE, what)
    }

    /// `what`: how the attempt ended, for the failure reason ("exited 1"); only a failure
    /// asks for it.
    fn end_attempt(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        exit_code: i32,
        what: impl FnOnce() -> String,
    ) -> Option<Finished> {
        let i = *self.index.get(task_id)?;
        let task = &mut self.tasks[i];
        let State::Running {
            attempt: a,
            executor,
            host,
            locality,
        } = &task.state
        else {
            return None;
        };
        if *a != attempt || *executor != executor_id {
            return None;
        }
        let (host, locality) = (host.clone(), *locality);
        let mut requeue = false;
        let mut freed = false;
        if let Some(e) = self.executors.get_mut(&executor_id) {
            // Saturating: a task returns what it took, so this stays within the cores.
            e.free = e.free.saturating_add(task.spec.cpus);
            if e.running.remove(&i) {
                self.running -= 1;
            }
            freed = true;
        }
        let outcome = if exit_code == 0 {
            task.state = State::Succeeded;
            self.succeeded += 1;
            TaskOutcome::Succeeded
        } else {
            task.failures += 1;
            task.excluded.insert(executor_id);
            let what = what();
            task.last_failure = Some(format!(
                "attempt {attempt} {what} on executor {executor_id} ({host})"
            ));
            if task.failures >= self.max_failures {
                task.state = State::Failed;
                if self.failure.is_none() {
                    self.failure = Some(format!(
                        "task `{task_id}` failed {} times; last attempt {attempt} {what} on \
                         executor {executor_id} ({host})",
                        task.failures
                    ));
                }
                TaskOutcome::JobFailed
            } else {
                task.state = State::Pending;
                requeue = true;
                TaskOutcome::WillRetry
            }
        };
        let attempts = task.launches;
        let last_failure = task.last_failure.clone();
        if freed {
            self.touched(executor_id);
        }
        if requeue {
            self.enqueue(i);
        }
        Some(Finished {
            task_id: task_id.to_string(),
            task: i,
            attempt,
            executor_id,
            host,
            locality,
            attempts,
            outcome,
            last_failure,
        })
    }

    /// An attempt an earlier AM attempt started is still running on `executor_id` (an
    /// executor the new attempt adopted): it runs on there and its result will count,
    /// instead of the task being queued again. `false` for an unknown task, an unknown
    /// executor, or a task no longer pending (already done, or running elsewhere).
    pub fn adopt_running(&mut self, task_id: &str, attempt: u32, executor_id: ExecutorId) -> bool {
        let Some(&i) = self.index.get(task_id) else {
            return false;
        };
        let Some(e) = self.executors.get_mut(&executor_id) else {
            return false;
        };
        let task = &mut self.tasks[i];
        if task.state != State::Pending {
            return false;
        }
        e.free = e.free.saturating_sub(task.spec.cpus);
        if e.running.insert(i) {
            self.running += 1;
        }
        task.launches = task.launches.max(attempt + 1);
        task.state = State::Running {
            attempt,
            executor: executor_id,
            host: e.host.clone(),
            locality: TaskLocality::Any,
        };
        self.dequeue(i);
        self.touched(executor_id);
        true
    }

    /// Replays a launch an earlier AM attempt made: this task's later launches number past
    /// it, so no two attempts of a task share a number across AM attempts.
    pub fn restore_launch(&mut self, task_id: &str, attempt: u32) {
        if let Some(&i) = self.index.get(task_id) {
            let t = &mut self.tasks[i];
            t.launches = t.launches.max(attempt + 1);
        }
    }

    /// Replays a finished attempt from an earlier AM attempt's journal: a success takes the
    /// task out of the queue for good, a failure counts against its retries (and may fail
    /// the job, as it would have then). `false` when it changes nothing (an unknown task, a
    /// task already over).
    pub fn restore_finished(
        &mut self,
        task_id: &str,
        attempt: u32,
        executor_id: ExecutorId,
        exit_code: i32,
    ) -> bool {
        let Some(&i) = self.index.get(task_id) else {
            return false;
        };
        self.restore_launch(task_id, attempt);
        let task = &mut self.tasks[i];
        if task.state != State::Pending {
            return false;
        }
        if exit_code == 0 {
            task.state = State::Succeeded;
            self.succeeded += 1;
            self.dequeue(i);
            return true;
        }
        task.excluded.insert(executor_id);
        task.failures += 1;
        if task.failures >= self.max_failures {
            task.state = State::Failed;
            if self.failure.is_none() {
                self.failure = Some(format!(
                    "task `{task_id}` failed {} times; last attempt {attempt} exited \
                     {exit_code} on executor {executor_id} (before the AM restarted)",
                    task.failures
                ));
            }
            self.dequeue(i);
        }
        true
    }
}
