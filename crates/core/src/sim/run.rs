//! One simulated run: the allocator under test against the RM model ([`super::rm`]), round by
//! round, with the driver's demand and delay scheduling around it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::rm::{heartbeat_order, Book, RmKey};
use super::trace::{fnv, Locations, Rng, Trace, TraceConfig};
use super::{place_round, ROUND_MS};
use crate::allocator::exit_status;
use crate::allocator::matching::Container;
use crate::allocator::tracker::{Action, Allocator, AllocatorConfig, ContainerExit, Event};
use crate::allocator::{Demand, HostName, RackName, Topology};
use crate::ids::ExecutorId;

/// What one strategy achieved on one trace.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SimResult {
    /// Share of pending locality-aware task-rounds with an executor on a preferred host.
    pub node_local: f64,
    /// Share with an executor on a preferred host or its rack.
    pub rack_local: f64,
    /// Container requests sent (added to the table).
    pub requests: u64,
    /// Requests asked again with more nodes (default strategy, rule 4): no new container,
    /// but a change to YARN's table.
    pub reasked: u64,
    /// Containers granted.
    pub granted: u64,
    /// Of those, containers the RM granted off-switch (no node or rack ask matched the node).
    pub off_switch: u64,
    /// Of the off-switch ones, those granted for a key that named no location at all (ANY
    /// only: YARN gives such a key no off-switch wait).
    pub off_switch_no_location: u64,
    /// Node-level asks on hosts without a NodeManager, summed over rounds: asks YARN can
    /// never grant (it still counts them as locations, see the module docs).
    pub asks_without_nodemanager: u64,
    pub rounds: u64,
    /// Distinct hosts the run's executors were launched on (how much YARN packed them).
    pub executor_hosts: u64,
    /// Granted containers the allocator gave back at once (surplus: beyond the target or
    /// matching no request).
    pub released: u64,
    /// The most executors running or starting at once, and the most the driver wanted.
    pub peak_executors: u64,
    pub peak_target: u64,
}

/// [`super::simulate`] with an allocator configured by hand (e.g. to switch off a rule); the
/// executors' size (`tasks_per_executor`) is the trace's.
pub fn simulate_with(trace: &Trace, config: AllocatorConfig) -> SimResult {
    let cfg = &trace.config;
    let mut run = Run::new(trace, config);
    let mut pending: Vec<[u32; 3]> = Vec::new();
    for (k, stage) in trace.stages.iter().enumerate() {
        pending.extend_from_slice(stage);
        // Pipelined: the next stage arrives when this one is half done.
        let threshold = if cfg.pipelined && k + 1 < trace.stages.len() {
            stage.len() / 2
        } else {
            0
        };
        let mut rounds_in_stage = 0;
        while pending.len() > threshold && rounds_in_stage < 200 {
            rounds_in_stage += 1;
            run.round(&mut pending);
        }
        if cfg.release_between_stages && threshold == 0 {
            run.end_stage();
        }
    }
    run.finish()
}

/// A request's host and rack indices, as the RM counts them (no racks given: its hosts').
struct Locator {
    host_index: HashMap<HostName, usize>,
    rack_index: HashMap<RackName, usize>,
    topology: Topology,
    /// The hosts with pending work and their racks, this round
    /// (`what_if_unplaced_name_work`): what a request naming no host counts as.
    work_hosts: Option<Locations>,
}

impl Locator {
    fn new(trace: &Trace, topology: Topology) -> Locator {
        Locator {
            host_index: trace
                .hosts
                .iter()
                .enumerate()
                .map(|(i, h)| (h.clone(), i))
                .collect(),
            rack_index: trace
                .racks
                .iter()
                .enumerate()
                .map(|(i, r)| (r.clone(), i))
                .collect(),
            topology,
            work_hosts: None,
        }
    }

    fn locate(&self, nodes: &[HostName], racks: &[RackName]) -> Locations {
        if nodes.is_empty() {
            if let Some(l) = self.work_hosts.as_ref() {
                return l.clone();
            }
        }
        let hs: Vec<usize> = nodes
            .iter()
            .filter_map(|n| self.host_index.get(n).copied())
            .collect();
        let rs: HashSet<usize> = if racks.is_empty() {
            nodes
                .iter()
                .map(|n| self.rack_index[self.topology.rack_of(n)])
                .collect()
        } else {
            racks.iter().map(|r| self.rack_index[r]).collect()
        };
        (hs, rs.into_iter().collect())
    }
}

/// The state of one run: the allocator, the RM model's tables and grants, the executors, the
/// driver's ramp-up and delay scheduling, and the counts reported.
struct Run<'t> {
    trace: &'t Trace,
    cfg: &'t TraceConfig,
    alloc: Allocator,
    rng: Rng,
    /// The NodeManagers' heartbeat phases, when they keep them (`heartbeat_phase_jitter`).
    phase_order: Vec<usize>,
    locator: Locator,
    /// Executors (and containers on their way) per node.
    used: Vec<u32>,
    executors: HashMap<Arc<str>, usize>,
    /// The round from which each executor takes tasks (`launch_rounds` after its grant).
    ready_at: HashMap<Arc<str>, u64>,
    launched_ids: Vec<(ExecutorId, Arc<str>)>,
    next_container: u64,
    /// The AM's requests as the RM's table holds them, by id (see [`Book`]), and YARN's two
    /// request keys: relaxed (allocation request id 0) and strict (1), each with its own
    /// missed opportunities and location entries. (A third key, tried first, for requests
    /// with no location: `what_if_no_location_key_first`.)
    book: Book,
    keys: [RmKey; 3],
    /// The slow RM (`rm_delay_rounds`): its keys by allocation request id, and its grants
    /// not yet handed over, with the round that hands each over.
    slow: bool,
    id_keys: BTreeMap<i64, RmKey>,
    in_flight: Vec<(Container, u64)>,
    executor_hosts: HashSet<usize>,
    /// Ramp-up: (target, next increase).
    ramp: (u32, u32),
    /// Delay scheduling: the task set's allowed level (0 node, 1 rack, 2 any) and the rounds
    /// since its last launch at that level.
    level: u8,
    since: u32,
    tasks_seen: u64,
    node_hits: u64,
    rack_hits: u64,
    out: SimResult,
}

impl<'t> Run<'t> {
    fn new(trace: &'t Trace, config: AllocatorConfig) -> Run<'t> {
        let cfg = &trace.config;
        let topology = trace.topology();
        let config = AllocatorConfig {
            tasks_per_executor: cfg.tasks_per_executor,
            ..config
        };
        let alloc = Allocator::new(config).with_cluster(topology.clone(), trace.cluster());
        let mut rng = Rng::new(cfg.seed ^ 0x5EED ^ cfg.rm_draw.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut phase_order: Vec<usize> = (0..cfg.nodes).collect();
        if cfg.heartbeat_phase_jitter.is_some() {
            rng.shuffle(&mut phase_order);
        }
        Run {
            trace,
            cfg,
            alloc,
            rng,
            phase_order,
            locator: Locator::new(trace, topology),
            used: vec![0u32; cfg.nodes],
            executors: HashMap::new(),
            ready_at: HashMap::new(),
            launched_ids: Vec::new(),
            next_container: 0,
            book: Book::default(),
            keys: [RmKey::new(trace), RmKey::new(trace), RmKey::new(trace)],
            slow: cfg.rm_delay_rounds > 0,
            id_keys: BTreeMap::new(),
            in_flight: Vec::new(),
            executor_hosts: HashSet::new(),
            ramp: (0, 1),
            level: 0,
            since: 0,
            tasks_seen: 0,
            node_hits: 0,
            rack_hits: 0,
            out: SimResult::default(),
        }
    }

    /// Hands `event` to the allocator; its request actions go into the RM's table.
    fn event(&mut self, now: u64, event: Event) -> Vec<Action> {
        let actions = self.alloc.on_event(now, event);
        let locator = &self.locator;
        self.book
            .apply(&actions, &|n: &[HostName], r: &[RackName]| {
                locator.locate(n, r)
            });
        actions
    }

    /// One round: the driver's demand and the allocator's heartbeat, the RM's offers, the
    /// grants launched, preemption, and this round's tasks placed on the executors.
    fn round(&mut self, pending: &mut Vec<[u32; 3]>) {
        self.out.rounds += 1;
        let now = self.out.rounds * ROUND_MS;
        let target = self.ask(now, pending);
        self.load_keys();
        let granted = self.offer_nodes();
        self.out.granted += granted.len() as u64;
        let granted = self.hand_over(granted);
        self.launch(now, granted, target);
        // Containers the allocator released at once free their slot again; those still
        // on their way hold theirs.
        self.recount_used();
        for (c, _) in &self.in_flight {
            self.used[self.locator.host_index[&c.host]] += 1;
        }
        self.preempt(now);
        self.run_tasks(pending);
    }

    /// The driver's whole demand for `pending`, then the allocator's heartbeat. Returns the
    /// target asked.
    fn ask(&mut self, now: u64, pending: &[[u32; 3]]) -> u32 {
        let cfg = self.cfg;
        let mut counts: HashMap<HostName, u32> = HashMap::new();
        for t in pending {
            for &h in t {
                *counts
                    .entry(self.trace.hosts[h as usize].clone())
                    .or_insert(0) += 1;
            }
        }
        let need = (pending.len() as u32)
            .div_ceil(cfg.tasks_per_executor)
            .min(cfg.max_executors);
        let target = if cfg.ramp_up {
            if need > self.ramp.0 {
                self.ramp = ((self.ramp.0 + self.ramp.1).min(need), self.ramp.1 * 2);
            } else {
                self.ramp = (need, 1);
            }
            self.ramp.0
        } else {
            need
        };
        if cfg.what_if_unplaced_name_work {
            let hs: Vec<usize> = counts
                .keys()
                .map(|h| self.locator.host_index[h])
                .filter(|&i| i < cfg.nodes)
                .collect();
            let rs: HashSet<usize> = hs.iter().map(|&i| self.trace.host_rack[i]).collect();
            self.locator.work_hosts = Some((hs, rs.into_iter().collect()));
        }
        let demand = Demand {
            target_executors: target,
            locality_aware_tasks: pending.len() as u32,
            host_to_local_task_count: counts,
            ..Demand::default()
        };
        self.event(now, Event::DemandChanged(demand));
        for a in self.event(now, Event::Heartbeat) {
            match a {
                Action::AddRequests { ids, .. } => self.out.requests += ids.len() as u64,
                Action::ReplaceRequests { ids, .. } => self.out.reasked += ids.len() as u64,
                _ => {}
            }
        }
        target
    }

    /// Whether requests that name no location have a key of their own, tried first
    /// (`what_if_no_location_key_first`, with strict requests).
    fn own_key(&self) -> bool {
        self.cfg.strict_requests && self.cfg.what_if_no_location_key_first
    }

    /// This round's allocate call: the RM's absolute tables, one per request key.
    fn load_keys(&mut self) {
        debug_assert_eq!(self.book.requests.len(), self.alloc.asked_requests());
        let nodes = self.cfg.nodes;
        let strict_key = self.cfg.strict_requests;
        let own_key = self.own_key();
        let key_of = |r: &(Arc<Locations>, bool, i64)| -> usize {
            if r.1 && strict_key {
                1
            } else if own_key && r.0 .0.is_empty() && r.0 .1.is_empty() {
                2
            } else {
                0
            }
        };
        if self.slow {
            // The slow RM: only the keys this round's actions changed are sent.
            for id in std::mem::take(&mut self.book.dirty) {
                let key = self
                    .id_keys
                    .entry(id)
                    .or_insert_with(|| RmKey::new(self.trace));
                key.load(self.book.requests.values().filter(|r| r.2 == id));
            }
            for key in self.id_keys.values() {
                self.out.asks_without_nodemanager += key.hosts[nodes..].iter().sum::<u64>();
            }
        } else {
            self.book.dirty.clear();
            for (k, key) in self.keys.iter_mut().enumerate() {
                key.load(self.book.requests.values().filter(|r| key_of(r) == k));
                self.out.asks_without_nodemanager += key.hosts[nodes..].iter().sum::<u64>();
            }
        }
    }

    /// The RM's offers this round: every node heartbeats (`offers_per_round` times), in
    /// random or phase order, unless other tenants keep it busy. Returns the containers
    /// granted.
    fn offer_nodes(&mut self) -> Vec<Container> {
        let cfg = self.cfg;
        let strict_key = cfg.strict_requests;
        let own_key = self.own_key();
        let delay = u64::from(cfg.node_locality_delay).min(cfg.nodes as u64);
        // YARN's key order: (priority, allocation request id).
        let key_order: [usize; 3] = match (strict_key && cfg.strict_first, own_key) {
            (true, true) => [2, 1, 0],
            (true, false) => [1, 0, 2],
            (false, true) => [2, 0, 1],
            (false, false) => [0, 1, 2],
        };
        // The keys in YARN's order, each with whether it is strict.
        let mut ordered: Vec<(&mut RmKey, bool, Option<i64>)> = if self.slow {
            self.id_keys
                .iter_mut()
                .map(|(&id, k)| (k, id < 0, Some(id)))
                .collect()
        } else {
            let mut v: Vec<(usize, &mut RmKey)> = self.keys.iter_mut().enumerate().collect();
            v.sort_by_key(|(k, _)| key_order.iter().position(|o| o == k));
            v.into_iter().map(|(k, key)| (key, k == 1, None)).collect()
        };
        let mut granted = Vec::new();
        for _ in 0..cfg.offers_per_round.max(1) {
            let offers =
                heartbeat_order(&mut self.rng, &self.phase_order, cfg.heartbeat_phase_jitter);
            // Draw every node's coin whatever happens, so both strategies see the same offers.
            let busy: Vec<bool> = (0..cfg.nodes)
                .map(|_| {
                    (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
                        >= cfg.offer_probability
                })
                .collect();
            for n in offers {
                if busy[n] {
                    continue;
                }
                let r = self.trace.host_rack[n];
                // One heartbeat: the node takes containers while it has room and a key
                // asks (keys in YARN's order, relaxed first), and stops after its first
                // off-switch container.
                'heartbeat: while self.used[n] < cfg.capacity {
                    let mut placed = None;
                    for (key, strict, id) in ordered.iter_mut() {
                        if key.any == 0 {
                            continue;
                        }
                        let no_location = key.locations == 0;
                        if let Some(off_switch) = key.offer(n, r, delay, cfg.nodes, *strict) {
                            placed = Some((off_switch, no_location, *id));
                            break;
                        }
                    }
                    let Some((off_switch, no_location, id)) = placed else {
                        break 'heartbeat;
                    };
                    self.used[n] += 1;
                    self.next_container += 1;
                    granted.push(Container {
                        id: Arc::from(format!("c{}", self.next_container)),
                        host: self.trace.hosts[n].clone(),
                        rack: self.trace.racks[r].clone(),
                        allocation_request_id: id,
                    });
                    if off_switch {
                        self.out.off_switch += 1;
                        self.out.off_switch_no_location += u64::from(no_location);
                        break;
                    }
                }
            }
        }
        granted
    }

    /// The grants this round's answer brings: all of them, or with a slow RM those made
    /// rounds ago and due now (each is handed over 1 to `rm_delay_rounds` calls after it
    /// was made).
    fn hand_over(&mut self, granted: Vec<Container>) -> Vec<Container> {
        if !self.slow {
            return granted;
        }
        let k = u64::from(self.cfg.rm_delay_rounds);
        for c in granted {
            let due = self.out.rounds + 1 + fnv(&c.id) % k;
            self.in_flight.push((c, due));
        }
        let rounds = self.out.rounds;
        let (due, late): (Vec<_>, Vec<_>) = self.in_flight.drain(..).partition(|c| c.1 <= rounds);
        self.in_flight = late;
        due.into_iter().map(|c| c.0).collect()
    }

    /// The allocator hears of `granted`; the executors it launches start (taking tasks
    /// `launch_rounds` later).
    fn launch(&mut self, now: u64, granted: Vec<Container>, target: u32) {
        let actions = self.event(now, Event::ContainersGranted(granted));
        self.out.released += actions
            .iter()
            .filter(|a| matches!(a, Action::ReleaseContainer(_)))
            .count() as u64;
        self.out.peak_target = self.out.peak_target.max(u64::from(target));
        for a in actions {
            if let Action::LaunchExecutor {
                container,
                executor,
                ..
            } = a
            {
                let n = self.locator.host_index[&container.host];
                self.executor_hosts.insert(n);
                self.executors.insert(container.id.clone(), n);
                self.ready_at.insert(
                    container.id.clone(),
                    self.out.rounds + self.cfg.launch_rounds,
                );
                self.launched_ids.push((executor, container.id.clone()));
                self.event(
                    now,
                    Event::ExecutorLaunched {
                        container: container.id,
                    },
                );
            }
        }
        self.out.peak_executors = self
            .out
            .peak_executors
            .max(u64::from(self.alloc.running() + self.alloc.starting()));
    }

    /// `used` from the executors alone.
    fn recount_used(&mut self) {
        self.used.iter_mut().for_each(|u| *u = 0);
        for &n in self.executors.values() {
            self.used[n] += 1;
        }
    }

    /// Preemption: each executor's fate is a hash of (seed, round, container), so it does
    /// not depend on how many random numbers either strategy drew.
    fn preempt(&mut self, now: u64) {
        let cfg = self.cfg;
        if cfg.preemption <= 0.0 {
            return;
        }
        let rounds = self.out.rounds;
        let mut gone: Vec<Arc<str>> = self
            .executors
            .keys()
            .filter(|id| {
                let mut h = Rng::new(cfg.seed ^ rounds.wrapping_mul(0x9E37) ^ fnv(id));
                ((h.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < cfg.preemption
            })
            .cloned()
            .collect();
        gone.sort();
        for id in &gone {
            self.executors.remove(id);
        }
        if !gone.is_empty() {
            let done = gone
                .into_iter()
                .map(|id| ContainerExit {
                    id,
                    exit_status: exit_status::codes::PREEMPTED,
                    diagnostics: String::new(),
                })
                .collect();
            self.event(now, Event::ContainersCompleted(done));
            self.recount_used();
        }
    }

    /// Measure: place this round's tasks on executor slots, node-local first, then
    /// rack-local, then anywhere (what the driver's delay scheduling aims for).
    fn run_tasks(&mut self, pending: &mut Vec<[u32; 3]>) {
        let mut host_slots = vec![0usize; self.trace.hosts.len()];
        for (id, &n) in &self.executors {
            if self.ready_at.get(id).is_none_or(|&r| r <= self.out.rounds) {
                host_slots[n] += self.cfg.tasks_per_executor as usize;
            }
        }
        let slots: usize = host_slots.iter().sum();
        let runnable = slots.min(pending.len());
        let (rack_ok, any_ok) = self.allowed_levels(pending, &host_slots, slots);
        let before = pending.len();
        let (local, rack, launched) =
            place_round(self.trace, pending, host_slots, runnable, rack_ok, any_ok);
        self.tasks_seen += launched as u64;
        self.node_hits += local as u64;
        self.rack_hits += (local + rack) as u64;
        // Spark 3.1's reset rule (SPARK-18886): only a round that launched something and
        // declined nothing (no free slot left that a pending task could take at a looser
        // level) brings the level back to the most local one it launched at and restarts
        // the clock; otherwise the clock keeps running.
        let declined = !any_ok && launched < slots && launched < before;
        if launched > 0 && !declined {
            self.level = if local > 0 {
                0
            } else if rack > 0 {
                1
            } else {
                2
            };
            self.since = 0;
        } else {
            self.since += 1;
        }
    }

    /// Delay scheduling (the driver's, after Spark 3.1's TaskSetManager): a level no
    /// pending task can use is skipped; otherwise the set moves on once
    /// `locality_wait_rounds` have passed since the clock last restarted. Returns whether
    /// rack-local and any-host launches are allowed this round.
    fn allowed_levels(
        &mut self,
        pending: &[[u32; 3]],
        host_slots: &[usize],
        slots: usize,
    ) -> (bool, bool) {
        let (trace, wait) = (self.trace, self.cfg.locality_wait_rounds);
        if wait == 0 {
            return (true, true);
        }
        if slots == 0 {
            // No live executor: nothing was declined, the clock restarts.
            self.since = 0;
            return (false, false);
        }
        let mut rack_has = vec![false; trace.racks.len()];
        for (h, &s) in host_slots.iter().enumerate() {
            rack_has[trace.host_rack[h]] |= s > 0;
        }
        let node_valid = pending
            .iter()
            .any(|t| t.iter().any(|&h| host_slots[h as usize] > 0));
        let rack_valid = pending
            .iter()
            .any(|t| t.iter().any(|&h| rack_has[trace.host_rack[h as usize]]));
        loop {
            let valid = match self.level {
                0 => node_valid,
                1 => rack_valid,
                _ => break,
            };
            if !valid {
                self.since = 0;
            } else if self.since >= wait {
                self.since -= wait;
            } else {
                break;
            }
            self.level += 1;
        }
        (self.level >= 1, self.level >= 2)
    }

    /// Stage over: idle executors go away.
    fn end_stage(&mut self) {
        let now = self.out.rounds * ROUND_MS;
        for (executor, id) in std::mem::take(&mut self.launched_ids) {
            if self.executors.remove(&id).is_some() {
                self.event(now, Event::KillExecutor { executor });
                self.event(
                    now,
                    Event::ContainersCompleted(vec![ContainerExit {
                        id,
                        exit_status: exit_status::codes::KILLED_BY_APPMASTER,
                        diagnostics: String::new(),
                    }]),
                );
            }
        }
        self.used.iter_mut().for_each(|u| *u = 0);
    }

    fn finish(mut self) -> SimResult {
        self.out.executor_hosts = self.executor_hosts.len() as u64;
        self.out.node_local = self.node_hits as f64 / self.tasks_seen.max(1) as f64;
        self.out.rack_local = self.rack_hits as f64 / self.tasks_seen.max(1) as f64;
        self.out
    }
}
