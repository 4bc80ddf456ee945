//! One offer pass: the allowed level advanced, tasks launched level by level round the
//! executors with free cpus, and the reset rule (see the module docs of `scheduler`).

use super::super::job::TaskSpec;
use super::*;

impl Scheduler {
    /// One offer pass over every free slot (see the module doc for the exact rule).
    pub fn offer(&mut self, now: u64) -> Vec<TaskLaunch> {
        self.offer_by_index(now)
            .into_iter()
            .map(|(_, l)| l)
            .collect()
    }

    /// [`Self::offer`], each launch with its task's place in the job's list (what the
    /// driver keeps its per-task tables by), so the driver need not look the id up.
    pub fn offer_by_index(&mut self, now: u64) -> Vec<(usize, TaskLaunch)> {
        if self.pending.is_empty() || self.failure.is_some() {
            return Vec::new();
        }
        let allowed = self.allowed_level(now);
        let mut launches = Vec::new();
        for level in [
            TaskLocality::NodeLocal,
            TaskLocality::NoPref,
            TaskLocality::RackLocal,
            TaskLocality::Any,
        ] {
            if level != TaskLocality::NoPref && level > allowed {
                continue;
            }
            loop {
                // Nothing left this level could pick: no executor needs asking (a job's
                // tail has many free executors and a task or two to place).
                if self.nothing_to_pick(level) {
                    break;
                }
                let free: Vec<ExecutorId> = self.offerable.iter().cloned().collect();
                let mut launched = false;
                for id in free {
                    if self.nothing_to_pick(level) {
                        break;
                    }
                    if let Some(i) = self.pick(id, level) {
                        launches.push((i, self.launch(now, i, id)));
                        launched = true;
                    }
                }
                if !launched {
                    break;
                }
            }
        }
        if !launches.is_empty() && !self.rejected_an_offer() {
            let best = launches
                .iter()
                .map(|(_, l)| l.locality)
                .filter(|&l| l != TaskLocality::NoPref)
                .min();
            if let Some(best) = best {
                self.level = best;
            }
            self.since = Some(now);
        }
        launches
    }

    /// Step 1 of a pass: the loosest level a launch may have now.
    fn allowed_level(&mut self, now: u64) -> TaskLocality {
        if self.usable == 0 {
            // Nobody to offer to, so nobody is being turned away: hold the level and start
            // the clock afresh, rather than skipping every level for want of executors.
            self.since = Some(now);
            return self.level;
        }
        let mut since = *self.since.get_or_insert(now);
        loop {
            let wait = match self.level {
                TaskLocality::NodeLocal => self.waits.node,
                TaskLocality::RackLocal => self.waits.rack,
                _ => break,
            };
            let next = match self.level {
                TaskLocality::NodeLocal => TaskLocality::RackLocal,
                _ => TaskLocality::Any,
            };
            if !self.runnable_at(self.level) {
                self.level = next;
                since = now;
            } else if now.saturating_sub(since) >= wait {
                since += wait;
                self.level = next;
            } else {
                break;
            }
        }
        self.since = Some(since);
        self.level
    }

    /// Could some pending task run at `level` on some live executor, cpus aside?
    fn runnable_at(&self, level: TaskLocality) -> bool {
        match level {
            TaskLocality::NodeLocal => {
                // Whichever side is smaller is walked.
                if self.usable_hosts.len() <= self.pending_by_host.len() {
                    self.usable_hosts
                        .keys()
                        .any(|h| self.pending_by_host.contains_key(h))
                } else {
                    self.pending_by_host
                        .keys()
                        .any(|h| self.usable_hosts.contains_key(h))
                }
            }
            TaskLocality::RackLocal => self
                .pending_specs()
                .any(|t| self.usable_racks.keys().any(|r| self.in_rack(t, r))),
            _ => !self.pending.is_empty(),
        }
    }

    /// First pending task (job order) that fits the executor and matches `level` there.
    fn pick(&self, exec_id: ExecutorId, level: TaskLocality) -> Option<usize> {
        let exec = &self.executors[&exec_id];
        let fits = |i: &usize| {
            let task = &self.tasks[*i];
            task.spec.cpus <= exec.free && !self.excluded(task, exec_id)
        };
        match level {
            TaskLocality::NodeLocal => self
                .pending_by_host
                .get(&exec.host)?
                .iter()
                .copied()
                .find(fits),
            TaskLocality::NoPref => self.pending_no_pref.iter().copied().find(fits),
            TaskLocality::RackLocal => self
                .pending
                .iter()
                .copied()
                .find(|i| fits(i) && self.in_rack(&self.tasks[*i].spec, &exec.rack)),
            TaskLocality::Any => self.pending.iter().copied().find(fits),
        }
    }

    fn launch(&mut self, now: u64, i: usize, exec_id: ExecutorId) -> TaskLaunch {
        let locality = self.locality_of(&self.tasks[i].spec, exec_id);
        let exec = self.executors.get_mut(&exec_id).expect("offered executor");
        let task = &mut self.tasks[i];
        exec.free -= task.spec.cpus;
        if exec.running.insert(i) {
            self.running += 1;
        }
        let attempt = task.launches;
        task.launches += 1;
        task.started_ms = now;
        task.state = State::Running {
            attempt,
            executor: exec_id,
            host: exec.host.clone(),
            locality,
        };
        let launch = TaskLaunch {
            task_id: task.spec.id.clone(),
            attempt,
            executor_id: exec_id,
            locality,
        };
        self.dequeue(i);
        self.touched(exec_id);
        launch
    }

    /// The level a launch of `task` on this executor has, whatever pass it came from.
    fn locality_of(&self, task: &TaskSpec, exec_id: ExecutorId) -> TaskLocality {
        let exec = &self.executors[&exec_id];
        if task.preferred_hosts.contains(&exec.host) {
            TaskLocality::NodeLocal
        } else if task.has_no_preference() {
            TaskLocality::NoPref
        } else if self.in_rack(task, &exec.rack) {
            TaskLocality::RackLocal
        } else {
            TaskLocality::Any
        }
    }

    fn in_rack(&self, task: &TaskSpec, rack: &str) -> bool {
        if task.preferred_racks.iter().any(|r| r == rack) {
            return true;
        }
        let topology = self.topology.read();
        task.preferred_hosts
            .iter()
            .any(|h| topology.known_rack(h).is_some_and(|r| &**r == rack))
    }

    /// Excluded after a failure there, unless that would leave the task nowhere to go.
    fn excluded(&self, task: &Task, exec_id: ExecutorId) -> bool {
        task.excluded.contains(&exec_id)
            && self
                .executors
                .iter()
                .any(|(id, e)| e.usable && !task.excluded.contains(id))
    }

    /// No pending task could be picked at `level`, whatever the executor (see [`Self::pick`]).
    fn nothing_to_pick(&self, level: TaskLocality) -> bool {
        match level {
            TaskLocality::NodeLocal => self.pending_by_host.is_empty(),
            TaskLocality::NoPref => self.pending_no_pref.is_empty(),
            _ => self.pending.is_empty(),
        }
    }

    /// After a pass: does an executor still have room some pending task could use?
    fn rejected_an_offer(&self) -> bool {
        if self.pending.is_empty() {
            return false;
        }
        self.offerable.iter().any(|id| {
            let e = &self.executors[id];
            self.pending.iter().any(|&i| {
                let t = &self.tasks[i];
                t.spec.cpus <= e.free && !self.excluded(t, *id)
            })
        })
    }
}
