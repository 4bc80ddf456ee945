//! Which task assignments reached their executor.
//!
//! The AM hands tasks out in poll replies, and a reply can be lost after the AM sent it (the
//! executor's HTTP call timed out, the connection broke). Without a check the driver would
//! think the attempt runs until that executor is lost. So every poll carries the attempts the
//! executor knows of (`running`) and its results (`finished`); an attempt sent earlier that is
//! in neither never arrived and goes out again. The executor runs an attempt at most once, so
//! a resend that crosses a slow reply is harmless.

use std::collections::{HashMap, HashSet};

use crate::ids::ExecutorId;
use crate::ids::TaskAttempt;
use yarn_am_wire::poll::{TaskAssignment, TaskResult};

#[derive(Debug, Default)]
pub struct Deliveries {
    /// Per executor: assignments sent and not yet reported finished.
    sent: HashMap<ExecutorId, Vec<TaskAssignment>>,
}

/// The attempts a poll names, to look assignments up in without copying an id: a poll
/// names a task or two, so a short list is scanned; a long one is hashed.
enum Named<'a> {
    Few(Vec<(&'a str, u32)>),
    Many(HashSet<(&'a str, u32)>),
}

/// Up to this many attempts are scanned rather than hashed.
const SCANNED: usize = 16;

impl<'a> Named<'a> {
    fn new(attempts: impl ExactSizeIterator<Item = (&'a str, u32)>) -> Self {
        if attempts.len() <= SCANNED {
            Named::Few(attempts.collect())
        } else {
            Named::Many(attempts.collect())
        }
    }

    fn contains(&self, t: &TaskAssignment) -> bool {
        let key = (t.task_id.as_str(), t.attempt);
        match self {
            Named::Few(v) => v.contains(&key),
            Named::Many(s) => s.contains(&key),
        }
    }
}

impl Deliveries {
    /// Assignments handed to `executor` in a reply.
    pub fn sent(&mut self, executor: ExecutorId, tasks: &[TaskAssignment]) {
        if !tasks.is_empty() {
            self.sent
                .entry(executor)
                .or_default()
                .extend(tasks.iter().cloned());
        }
    }

    /// A poll from `executor`: forgets the attempts it reports finished and returns those
    /// sent before that it does not know of, to be sent again.
    pub fn lost_on_the_way(
        &mut self,
        executor: ExecutorId,
        running: &[TaskAttempt],
        finished: &[TaskResult],
    ) -> Vec<TaskAssignment> {
        let Some(sent) = self.sent.get_mut(&executor) else {
            return Vec::new();
        };
        let done = Named::new(finished.iter().map(|r| (r.task_id.as_str(), r.attempt)));
        let known = Named::new(running.iter().map(|r| (r.task_id.as_str(), r.attempt)));
        sent.retain(|t| !done.contains(t));
        sent.iter()
            .filter(|t| !known.contains(t))
            .cloned()
            .collect()
    }

    /// The AM gave up on an attempt (it timed out): never send it again, whether or not the
    /// executor got it.
    pub fn cancel(&mut self, executor: ExecutorId, task_id: &str, attempt: u32) {
        if let Some(sent) = self.sent.get_mut(&executor) {
            sent.retain(|t| !(t.task_id == task_id && t.attempt == attempt));
        }
    }

    /// The executor is gone: the driver re-queues its attempts itself.
    pub fn forget(&mut self, executor: ExecutorId) {
        self.sent.remove(&executor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: ExecutorId = ExecutorId::new(1);

    fn task(id: &str) -> TaskAssignment {
        TaskAssignment {
            task_id: id.into(),
            attempt: 0,
            command: "true".into(),
            cpus: 1,
        }
    }

    fn r(id: &str) -> TaskAttempt {
        TaskAttempt {
            task_id: id.into(),
            attempt: 0,
        }
    }

    fn done(id: &str) -> TaskResult {
        TaskResult {
            task_id: id.into(),
            attempt: 0,
            exit_code: 0,
            duration_ms: 1,
        }
    }

    #[test]
    fn an_assignment_the_executor_does_not_know_is_sent_again_until_it_does() {
        let mut d = Deliveries::default();
        d.sent(ONE, &[task("a"), task("b")]);
        // "a" arrived and runs; "b" was lost with the reply.
        assert_eq!(d.lost_on_the_way(ONE, &[r("a")], &[]), vec![task("b")]);
        // Resent; the executor now knows both: nothing to resend.
        assert!(d.lost_on_the_way(ONE, &[r("a"), r("b")], &[]).is_empty());
        // Finished attempts are forgotten, so they are never resent.
        assert!(d
            .lost_on_the_way(ONE, &[], &[done("a"), done("b")])
            .is_empty());
        assert!(d.lost_on_the_way(ONE, &[], &[]).is_empty());
        // Another attempt of a task is another assignment.
        let mut again = task("a");
        again.attempt = 1;
        d.sent(ONE, std::slice::from_ref(&again));
        assert_eq!(d.lost_on_the_way(ONE, &[r("a")], &[]), vec![again]);
    }

    /// A poll naming more attempts than are scanned (an executor with many cores) finds
    /// them as a short one does.
    #[test]
    fn a_long_poll_is_matched_like_a_short_one() {
        let ids: Vec<String> = (0..SCANNED + 4).map(|i| format!("t{i}")).collect();
        let mut d = Deliveries::default();
        d.sent(ONE, &ids.iter().map(|i| task(i)).collect::<Vec<_>>());
        // All but the last arrived; the first two finished.
        let running: Vec<TaskAttempt> = ids[2..ids.len() - 1].iter().map(|i| r(i)).collect();
        let finished: Vec<TaskResult> = ids[..2].iter().map(|i| done(i)).collect();
        let last = ids.last().unwrap();
        assert_eq!(
            d.lost_on_the_way(ONE, &running, &finished),
            vec![task(last)]
        );
        // The finished ones are forgotten: named as running nowhere, they are not resent.
        let running: Vec<TaskAttempt> = ids[2..].iter().map(|i| r(i)).collect();
        assert!(d.lost_on_the_way(ONE, &running, &[]).is_empty());
    }

    #[test]
    fn forgotten_assignments_are_not_resent() {
        let mut d = Deliveries::default();
        d.sent(ONE, &[task("a"), task("b")]);
        assert_eq!(d.lost_on_the_way(ONE, &[], &[]), vec![task("a"), task("b")]);
        d.forget(ONE);
        assert!(d.lost_on_the_way(ONE, &[], &[]).is_empty());
        assert!(d
            .lost_on_the_way(ExecutorId::new(2), &[r("x")], &[])
            .is_empty());
    }
}
