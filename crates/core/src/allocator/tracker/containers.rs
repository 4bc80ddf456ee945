//! The allocator's container side: grants matched to requests and launched or released,
//! launches, completions and kills, node reports, and the failures that count against the
//! app. The one owner of container <-> executor and launch phase.

use std::collections::{HashMap, HashSet};

use tracing::{debug, info, warn};

use super::super::exit_status::{classify, ExitCause};
use super::super::matching::{match_containers, Container, MatchOutcome};
use super::super::state::{HostName, PendingRequest};
use super::{
    Action, Allocator, ContainerExit, ContainerIdStr, DriverNotice, ExecutorId, NodeUpdate, Phase,
};

#[derive(Debug, Clone)]
pub(super) struct Tracked {
    pub(super) executor: ExecutorId,
    pub(super) host: HostName,
    pub(super) phase: Phase,
}

fn dec(map: &mut HashMap<HostName, u32>, host: &HostName) {
    if let Some(n) = map.get_mut(host) {
        *n -= 1;
        if *n == 0 {
            map.remove(host);
        }
    }
}

impl Allocator {
    /// Failures that count against the app and are still within the validity window.
    pub fn failed_executors(&mut self, now_ms: u64) -> usize {
        self.expire_failures(now_ms);
        self.failures_ms.len()
    }

    pub(super) fn granted(&mut self, containers: Vec<Container>) -> Vec<Action> {
        // A container granted again (an RM that restarted or answered a retried call from
        // its cache) is already ours, live or on its way back: it must neither take a
        // request nor be released again.
        let mut seen = HashSet::new();
        let containers: Vec<Container> = containers
            .into_iter()
            .filter(|c| {
                let fresh = !self.is_ours(&c.id) && seen.insert(c.id.clone());
                if !fresh {
                    debug!(container = %c.id, "granted again; already tracked, ignored");
                }
                fresh
            })
            .collect();
        for c in &containers {
            if let Some(key) = c.allocation_request_id {
                self.keys.granted_for(key, self.heartbeats);
            }
        }
        let outcome = self.match_by_key(&containers);
        let mut actions = Vec::new();
        let mut matched_requests: HashSet<usize> = HashSet::new();
        for &(c, r, locality) in &outcome.matched {
            matched_requests.insert(r);
            // A withdrawn or parked request is not in YARN's table any more: this is a
            // container YARN gave it before the withdrawal reached it.
            let req = &mut self.pending[r];
            if req.in_table {
                req.in_table = false;
                actions.push(Action::RequestSatisfied(req.id));
                let key = req.key;
                let k = self.keys.state(key);
                k.asked = k.asked.saturating_sub(1);
            }
            let container = containers[c].clone();
            let have = u64::from(self.starting) + u64::from(self.running());
            if have >= u64::from(self.demand.target_executors) {
                // Beyond the target: give it back rather than keep it idle.
                debug!(container = %container.id, "releasing a container beyond the target");
                actions.push(self.release(container.id));
                continue;
            }
            let executor = self.next_executor;
            self.next_executor = self.config.ids.after(executor);
            self.starting += 1;
            *self
                .starting_per_host
                .entry(container.host.clone())
                .or_insert(0) += 1;
            self.executors.insert(executor, container.id.clone());
            self.containers.insert(
                container.id.clone(),
                Tracked {
                    executor,
                    host: container.host.clone(),
                    phase: Phase::Starting,
                },
            );
            actions.push(Action::LaunchExecutor {
                executor,
                container,
                locality,
            });
        }
        let mut i = 0;
        self.pending.retain(|_| {
            let keep = !matched_requests.contains(&i);
            i += 1;
            keep
        });
        for c in outcome.unmatched {
            debug!(container = %containers[c].id, "releasing a container no request wants");
            actions.push(self.release(containers[c].id.clone()));
        }
        actions
    }

    /// Matches granted containers to pending requests, each container first against the
    /// requests of the key YARN granted it for (when it says, and we have such requests), so
    /// that our count of that key falls as YARN's did; the rest against every request left.
    fn match_by_key(&self, containers: &[Container]) -> MatchOutcome {
        let topology = self.topology.read();
        let pending: Vec<PendingRequest> = self.pending.iter().map(|r| r.req.clone()).collect();
        let mut by_key: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut rest: Vec<usize> = Vec::new();
        for (i, c) in containers.iter().enumerate() {
            match c.allocation_request_id {
                Some(k) if self.pending.iter().any(|r| r.key == k) => {
                    by_key.entry(k).or_default().push(i)
                }
                _ => rest.push(i),
            }
        }
        if by_key.is_empty() {
            return match_containers(containers, &pending, &topology);
        }
        let mut used = vec![false; pending.len()];
        let mut outcome = MatchOutcome::default();
        let mut part = |cs: &[usize], take: &dyn Fn(usize) -> bool, used: &mut Vec<bool>| {
            let idx: Vec<usize> = (0..pending.len()).filter(|&i| take(i)).collect();
            let sub_c: Vec<Container> = cs.iter().map(|&c| containers[c].clone()).collect();
            let sub_p: Vec<PendingRequest> = idx.iter().map(|&i| pending[i].clone()).collect();
            let o = match_containers(&sub_c, &sub_p, &topology);
            for (c, p, l) in o.matched {
                used[idx[p]] = true;
                outcome.matched.push((cs[c], idx[p], l));
            }
            o.unmatched
                .into_iter()
                .map(|c| cs[c])
                .collect::<Vec<usize>>()
        };
        let mut keys: Vec<_> = by_key.into_iter().collect();
        keys.sort_unstable();
        for (k, cs) in keys {
            let left = part(&cs, &|i| self.pending[i].key == k, &mut used);
            rest.extend(left);
        }
        if !rest.is_empty() {
            rest.sort_unstable();
            let free = used.clone();
            let left = part(&rest, &|i| !free[i], &mut used);
            outcome.unmatched.extend(left);
        }
        outcome
    }

    fn release(&mut self, id: ContainerIdStr) -> Action {
        self.released.insert(id.clone());
        Action::ReleaseContainer(id)
    }

    /// A container an earlier AM attempt started executor `executor` in, handed back by
    /// YARN at registration: tracked as running (it counts towards the target), nothing
    /// launched. A container or executor already tracked is left alone (`false`).
    pub fn adopt(&mut self, container: Container, executor: ExecutorId) -> bool {
        if self.is_ours(&container.id) || self.executors.contains_key(&executor) {
            return false;
        }
        self.next_executor = self
            .next_executor
            .max(self.config.ids.at_or_after(executor.next()));
        *self
            .running_per_host
            .entry(container.host.clone())
            .or_insert(0) += 1;
        self.executors.insert(executor, container.id.clone());
        self.containers.insert(
            container.id,
            Tracked {
                executor,
                host: container.host,
                phase: Phase::Running,
            },
        );
        true
    }

    /// The executor started: running from now, counted as such unless its container is
    /// being given back (then only its phase changes, for the API).
    pub(super) fn launched(&mut self, id: &ContainerIdStr) {
        let given_back = self.released.contains(id);
        if let Some(t) = self.containers.get_mut(id) {
            if t.phase == Phase::Starting {
                t.phase = Phase::Running;
                if !given_back {
                    self.starting -= 1;
                    dec(&mut self.starting_per_host, &t.host);
                    *self.running_per_host.entry(t.host.clone()).or_insert(0) += 1;
                }
            }
        }
    }

    /// Gives a counted container back: its executor stops counting, whatever phase it was
    /// in, and the container is released; it stays known until YARN reports it completed.
    /// `None` when it was not counted (unknown, or already on its way back).
    fn give_back(&mut self, id: &ContainerIdStr) -> Option<(Tracked, Action)> {
        if self.released.contains(id) {
            return None;
        }
        let t = self.containers.get(id)?.clone();
        self.uncount(&t);
        Some((t, self.release(id.clone())))
    }

    fn uncount(&mut self, t: &Tracked) {
        match t.phase {
            Phase::Starting => {
                self.starting -= 1;
                dec(&mut self.starting_per_host, &t.host);
            }
            Phase::Running => dec(&mut self.running_per_host, &t.host),
        }
    }

    /// YARN reported the container completed: its executor is forgotten (and uncounted,
    /// unless it was `given_back`, which uncounted it then).
    fn forget(&mut self, id: &ContainerIdStr, given_back: bool) -> Option<Tracked> {
        let t = self.containers.remove(id)?;
        self.executors.remove(&t.executor);
        if !given_back {
            self.uncount(&t);
        }
        Some(t)
    }

    pub(super) fn launch_failed(
        &mut self,
        now_ms: u64,
        id: ContainerIdStr,
        error: &str,
    ) -> Vec<Action> {
        let Some((t, release)) = self.give_back(&id) else {
            return Vec::new();
        };
        warn!(container = %id, %error, "executor launch failed");
        self.failures_ms.push_back(now_ms);
        vec![
            release,
            Action::TellDriver(DriverNotice::ExecutorExited {
                executor: t.executor,
                host: t.host,
                counts_against_app: true,
                reason: format!("the executor could not be launched: {error}"),
            }),
        ]
    }

    pub(super) fn kill(&mut self, executor: ExecutorId) -> Vec<Action> {
        let Some(id) = self.executors.get(&executor).cloned() else {
            return Vec::new();
        };
        // `None`: already on its way back.
        self.give_back(&id)
            .map(|(_, release)| release)
            .into_iter()
            .collect()
    }

    pub(super) fn completed(&mut self, now_ms: u64, completed: Vec<ContainerExit>) -> Vec<Action> {
        let mut actions = Vec::new();
        for c in completed {
            let given_back = self.released.remove(&c.id);
            let forgotten = self.forget(&c.id, given_back);
            if given_back {
                // We asked for it; whatever the status says, this is expected.
                continue;
            }
            let Some(t) = forgotten else {
                debug!(container = %c.id, "completion for a container we do not know (repeat?)");
                continue;
            };
            let verdict = classify(c.exit_status, &c.diagnostics);
            if verdict.counts_against_app {
                self.failures_ms.push_back(now_ms);
            }
            if verdict.cause != ExitCause::Exited {
                info!(container = %c.id, host = %t.host, reason = %verdict.reason, "executor container ended");
            }
            actions.push(Action::TellDriver(DriverNotice::ExecutorExited {
                executor: t.executor,
                host: t.host,
                counts_against_app: verdict.counts_against_app,
                reason: verdict.reason,
            }));
        }
        actions
    }

    pub(super) fn nodes_updated(&mut self, nodes: Vec<NodeUpdate>) {
        for n in nodes {
            self.topology.set_rack(n.host.clone(), n.rack);
            if n.usable {
                self.cluster.excluded.remove(&n.host);
            } else {
                self.cluster.excluded.insert(n.host.clone());
            }
            if let Some(known) = self.cluster.nodes.as_mut() {
                known.insert(n.host.clone());
            }
            match n.capacity {
                Some(c) => self.cluster.capacity.insert(n.host, c),
                None => self.cluster.capacity.remove(&n.host),
            };
        }
    }

    fn expire_failures(&mut self, now_ms: u64) {
        if let Some(window) = self.config.failure_validity_ms {
            while self
                .failures_ms
                .front()
                .is_some_and(|&t| now_ms.saturating_sub(t) > window)
            {
                self.failures_ms.pop_front();
            }
        }
    }
}
