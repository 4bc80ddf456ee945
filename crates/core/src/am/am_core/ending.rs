//! How [`AmCore`] notices the AM's end after every input (the job's end, too many
//! failures, the executors-only rule) and when an ending AM may stop (see the module doc of
//! `am_core`).

use super::*;

impl AmCore {
    /// After every input: silent executors are declared lost, the job learns of lost
    /// executors, the AM's end is noticed and the driver's timer follows the job.
    pub(super) fn settle(&mut self, now_ms: u64) {
        self.settle_inner(now_ms);
        self.arm_driver_tick();
    }

    fn settle_inner(&mut self, now_ms: u64) {
        self.check_silence(now_ms);
        let gone = self.pool.take_gone();
        if let Some(j) = self.job.as_mut() {
            if !gone.is_empty() {
                j.executors_gone(now_ms, gone, &mut self.pool);
            }
        }
        self.drain_idle(now_ms);
        if self.pool.take_urgent() || std::mem::take(&mut self.urgent) {
            self.interval.reset();
            self.arm_heartbeat(now_ms);
            // Remembered in case a call is in flight: the next one goes out when it is back.
            self.urgent = self.in_flight;
        }
        if self.ending.is_some() {
            return;
        }
        if let Some(summary) = self.job.as_ref().and_then(JobRun::finished) {
            let outcome = if summary.succeeded {
                Outcome::Succeeded
            } else {
                Outcome::Failed
            };
            let diagnostics = job_diagnostics_line(summary);
            self.end(
                now_ms,
                Ending::Finish {
                    outcome,
                    diagnostics,
                },
            );
            return;
        }
        let failures = self.pool.failures(now_ms);
        let diagnostics = if failures >= self.max_executor_failures {
            format!(
                "{failures} executor failures (limit {}); last: {}",
                self.max_executor_failures,
                self.pool.last_failure()
            )
        } else if let Some(hosts) = self.pool.all_hosts_failing() {
            format!(
                "executors failed on every host: all {hosts} excluded after repeated failures; \
                 last: {}",
                self.pool.last_failure()
            )
        } else {
            self.check_completion(now_ms);
            return;
        };
        self.end(
            now_ms,
            Ending::Finish {
                outcome: Outcome::Failed,
                diagnostics,
            },
        );
    }

    /// The executors-only rule (see the module doc): executors that exited 0 since the last
    /// look are not replaced, and the last of them ends the app.
    fn check_completion(&mut self, now_ms: u64) {
        let Some(rule) = self.to_completion.as_mut() else {
            return;
        };
        let done = self.pool.registry.succeeded();
        if done == rule.seen {
            return;
        }
        rule.seen = done;
        let target = rule.target;
        if done >= target {
            let diagnostics = format!("all {target} executors exited 0");
            self.end(
                now_ms,
                Ending::Finish {
                    outcome: Outcome::Succeeded,
                    diagnostics,
                },
            );
            return;
        }
        info!(done, of = target, "executors exited 0; not replacing them");
        self.pool.ask_initial(now_ms, self.initial);
    }

    pub(super) fn end(&mut self, now_ms: u64, why: Ending) {
        if self.ending.is_none() {
            info!(?why, "the ApplicationMaster is ending");
            self.ending = Some(why);
            // Only the drain's timer is left: no more calls, ticks or silence checks.
            self.timers = Timers::default();
            let until = now_ms + DRAIN_LIMIT.as_millis() as u64;
            self.timers.set(Timer::Drain, Some(until));
        }
    }

    pub fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    /// Whether an ending AM may stop now: every executor still running has been told to
    /// stop, or the drain limit passed. An AM the RM refused does not wait.
    pub fn drained(&self, now_ms: u64) -> bool {
        match &self.ending {
            None => false,
            Some(Ending::Abort(_)) => true,
            Some(Ending::Finish { .. }) => {
                self.job.is_none()
                    || self.timers.expired(Timer::Drain, now_ms)
                    || self
                        .pool
                        .registry
                        .live_ids()
                        .all(|id| self.told_to_stop.contains(&id))
            }
        }
    }
}
