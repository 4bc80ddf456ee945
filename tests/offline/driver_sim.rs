//! The driver against a tiny deterministic fake cluster: executors come up some time after the
//! demand asks for them (on the hosts the demand prefers), tasks take a fixed time, and,
//! when asked, tasks fail and executors die at pseudo-random moments. Pure logic: no clock,
//! no processes; time is the simulation's.
//!
//! Checked on every action: no executor is given more cpus than it has, no task runs on two
//! executors at once, tasks only go to live executors not being killed, and the target stays
//! in `[min, max]`. At the end (when nothing fails): every task succeeded exactly once.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use proptest::prelude::*;
use yarn_am_core::driver::{
    Demand, Driver, DriverAction, DriverEvent, ExecutorId, Job, JobSummary, TaskSpec,
};

/// Faults to inject, as chances in 1000.
#[derive(Debug, Clone, Copy, Default)]
struct Faults {
    task_fail_per_mille: u64,
    executor_loss_per_mille: u64,
}

#[derive(Debug)]
struct SimExec {
    host: String,
    cores: u32,
    used: u32,
    killing: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Pending {
    Up {
        host: String,
    },
    Finish {
        task: String,
        attempt: u32,
        exec: ExecutorId,
        code: i32,
        took: u64,
    },
    Lost {
        exec: ExecutorId,
    },
    Tick,
}

struct Sim {
    driver: Driver,
    job: Job,
    hosts: Vec<(String, String)>,
    startup_ms: u64,
    tick_ms: u64,
    faults: Faults,
    rng: u64,
    now: u64,
    seq: u64,
    queue: BinaryHeap<Reverse<(u64, u64, Pending)>>,
    execs: BTreeMap<ExecutorId, SimExec>,
    starting: Vec<String>,
    next_exec: u32,
    target: u32,
    demand: Demand,
    /// task -> (attempt, executor, cpus) while it runs.
    running: HashMap<String, (u32, ExecutorId, u32)>,
    successes: BTreeMap<String, u32>,
    result: Option<(bool, JobSummary)>,
    duration: Box<dyn Fn(&TaskSpec) -> u64>,
    /// Ignore the demand's hosts: place executors on these hosts, in turn.
    blind: Option<Vec<&'static str>>,
    placed: usize,
}

impl Sim {
    fn new(job: Job, hosts: &[(&str, &str)], duration: Box<dyn Fn(&TaskSpec) -> u64>) -> Sim {
        let hosts: Vec<(String, String)> = hosts
            .iter()
            .map(|(h, r)| (h.to_string(), r.to_string()))
            .collect();
        let driver = Driver::new(
            job.clone(),
            hosts.iter().cloned().collect::<HashMap<String, String>>(),
        )
        .unwrap();
        Sim {
            driver,
            job,
            hosts,
            startup_ms: 500,
            tick_ms: 100,
            faults: Faults::default(),
            rng: 0x9E37_79B9_7F4A_7C15,
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            execs: BTreeMap::new(),
            starting: Vec::new(),
            next_exec: 0,
            target: 0,
            demand: Demand::default(),
            running: HashMap::new(),
            successes: BTreeMap::new(),
            result: None,
            duration,
            blind: None,
            placed: 0,
        }
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        // xorshift64: deterministic, good enough for fault injection.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        per_mille > 0 && self.rng % 1000 < per_mille
    }

    fn at(&mut self, t: u64, p: Pending) {
        self.seq += 1;
        self.queue.push(Reverse((t, self.seq, p)));
    }

    fn rack(&self, host: &str) -> String {
        self.hosts
            .iter()
            .find(|(h, _)| h == host)
            .unwrap()
            .1
            .clone()
    }

    /// Run until the job finishes or `limit_ms` of simulated time passes.
    fn run(&mut self, limit_ms: u64) {
        self.at(0, Pending::Tick);
        while let Some(Reverse((t, _, p))) = self.queue.pop() {
            if self.result.is_some() || t > limit_ms {
                break;
            }
            self.now = t;
            let event = match p {
                Pending::Tick => {
                    self.at(t + self.tick_ms, Pending::Tick);
                    DriverEvent::Tick
                }
                Pending::Up { host } => {
                    if let Some(i) = self.starting.iter().position(|h| *h == host) {
                        self.starting.remove(i);
                    }
                    self.next_exec += 1;
                    let id = ExecutorId::new(u64::from(self.next_exec));
                    let cores = self.job.executor.cores;
                    self.execs.insert(
                        id,
                        SimExec {
                            host: host.clone(),
                            cores,
                            used: 0,
                            killing: false,
                        },
                    );
                    if self.chance(self.faults.executor_loss_per_mille) {
                        let when = t + 1 + self.rng % 3000;
                        self.at(when, Pending::Lost { exec: id });
                    }
                    if std::env::var("SIM_DEBUG").is_ok() {
                        eprintln!("{t} up {id} on {host}");
                    }
                    DriverEvent::ExecutorAdded {
                        id,
                        rack: self.rack(&host),
                        host,
                        cores,
                    }
                }
                Pending::Finish {
                    task,
                    attempt,
                    exec,
                    code,
                    took,
                } => {
                    match self.running.get(&task) {
                        Some((a, e, cpus)) if *a == attempt && *e == exec => {
                            let cpus = *cpus;
                            self.running.remove(&task);
                            if let Some(x) = self.execs.get_mut(&exec) {
                                x.used -= cpus;
                            }
                            if code == 0 {
                                *self.successes.entry(task.clone()).or_default() += 1;
                            }
                        }
                        // The executor died first: this attempt's report never comes.
                        _ => continue,
                    }
                    DriverEvent::TaskFinished {
                        task_id: task,
                        attempt,
                        executor_id: exec,
                        exit_code: code,
                        duration_ms: took,
                    }
                }
                Pending::Lost { exec } => {
                    if self.execs.remove(&exec).is_none() {
                        continue;
                    }
                    self.running.retain(|_, (_, e, _)| *e != exec);
                    DriverEvent::ExecutorRemoved {
                        id: exec,
                        reason: "lost".into(),
                    }
                }
            };
            let actions = self.driver.on_event(t, event);
            self.apply(actions);
            // Replace lost executors, as the allocator would.
            self.start_executors();
        }
    }

    fn apply(&mut self, actions: Vec<DriverAction>) {
        for a in actions {
            match a {
                DriverAction::KillTask { task_id, .. } => {
                    panic!("{task_id} timed out, but simulated jobs set no timeout")
                }
                DriverAction::LaunchTask {
                    task_id,
                    attempt,
                    executor_id,
                    ..
                } => {
                    let spec = self
                        .job
                        .tasks
                        .iter()
                        .find(|t| t.id == task_id)
                        .unwrap()
                        .clone();
                    let exec = self
                        .execs
                        .get_mut(&executor_id)
                        .unwrap_or_else(|| panic!("{task_id} launched on unknown {executor_id}"));
                    assert!(
                        !exec.killing,
                        "{task_id} launched on {executor_id}, being killed"
                    );
                    exec.used += spec.cpus;
                    assert!(
                        exec.used <= exec.cores,
                        "{executor_id} overcommitted: {} of {} cpus",
                        exec.used,
                        exec.cores
                    );
                    let prev = self
                        .running
                        .insert(task_id.clone(), (attempt, executor_id, spec.cpus));
                    assert!(prev.is_none(), "{task_id} already running: {prev:?}");
                    if std::env::var("SIM_DEBUG").is_ok() {
                        eprintln!("{} launch {task_id}#{attempt} on {executor_id}", self.now);
                    }
                    let took = (self.duration)(&spec);
                    let code = i32::from(self.chance(self.faults.task_fail_per_mille));
                    self.at(
                        self.now + took,
                        Pending::Finish {
                            task: task_id,
                            attempt,
                            exec: executor_id,
                            code,
                            took,
                        },
                    );
                }
                DriverAction::SetDemand(d) => {
                    let e = &self.job.executor;
                    assert!(
                        (e.min_executors..=e.max_executors).contains(&d.target_executors),
                        "target {} outside [{}, {}]",
                        d.target_executors,
                        e.min_executors,
                        e.max_executors
                    );
                    self.target = d.target_executors;
                    self.demand = d;
                    self.start_executors();
                }
                DriverAction::KillExecutors(ids) => {
                    for id in ids {
                        let exec = self.execs.get_mut(&id).expect("kill of a live executor");
                        assert_eq!(exec.used, 0, "{id} killed while running tasks");
                        exec.killing = true;
                        self.at(self.now + 10, Pending::Lost { exec: id });
                    }
                    self.start_executors();
                }
                DriverAction::JobFinished { succeeded, summary } => {
                    self.result = Some((succeeded, *summary));
                }
            }
        }
    }

    /// The allocator's part, crudely: start executors up to the target, each on the host with
    /// the most pending local tasks per executor already there.
    fn start_executors(&mut self) {
        let live = self.execs.values().filter(|e| !e.killing).count() + self.starting.len();
        let cores = i64::from(self.job.executor.cores);
        for _ in live..self.target as usize {
            let mut per_host: HashMap<&str, usize> = HashMap::new();
            for e in self.execs.values().filter(|e| !e.killing) {
                *per_host.entry(e.host.as_str()).or_default() += 1;
            }
            for h in &self.starting {
                *per_host.entry(h.as_str()).or_default() += 1;
            }
            if let Some(order) = &self.blind {
                let host = order[self.placed % order.len()].to_string();
                self.placed += 1;
                self.starting.push(host.clone());
                self.at(self.now + self.startup_ms, Pending::Up { host });
                continue;
            }
            let host = self
                .hosts
                .iter()
                .map(|(h, _)| {
                    let want = *self
                        .demand
                        .host_to_local_task_count
                        .get(h.as_str())
                        .unwrap_or(&0) as i64;
                    let have = *per_host.get(h.as_str()).unwrap_or(&0) as i64;
                    (want - have * cores, Reverse(have), h.clone())
                })
                .max_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)).then(b.2.cmp(&a.2)))
                .unwrap()
                .2;
            self.starting.push(host.clone());
            self.at(self.now + self.startup_ms, Pending::Up { host });
        }
    }
}

fn example_job() -> Job {
    Job::from_json(include_str!("../../conf/examples/job.json")).expect("the example job is valid")
}

#[test]
fn the_example_job_is_mostly_node_local() {
    let job = example_job();
    assert_eq!(job.tasks.len(), 60);
    for h in ["nm1", "nm2", "nm3"] {
        let n = job
            .tasks
            .iter()
            .filter(|t| t.preferred_hosts == [h])
            .count();
        assert_eq!(n, 20, "{h}");
    }
    let hosts = [("nm1", "/r1"), ("nm2", "/r1"), ("nm3", "/r1")];
    let mut sim = Sim::new(job, &hosts, Box::new(|_| 1000));
    sim.run(600_000);
    let (ok, summary) = sim.result.expect("the job finished");
    assert!(ok, "{summary:?}");
    assert_eq!(summary.tasks_succeeded, 60);
    assert!(sim.successes.values().all(|&n| n == 1));
    let node = summary.by_locality.node_local;
    assert!(
        node * 10 >= 60 * 9,
        "only {node}/60 NODE_LOCAL: {:?}",
        summary.by_locality
    );
    // Executors rose to the maximum and went away once idle.
    let peak = summary
        .executors_over_time
        .iter()
        .map(|s| s.executors)
        .max()
        .unwrap();
    assert_eq!(peak, 6);
    eprintln!(
        "locality {:?}; wall {} ms; executors {:?}",
        summary.by_locality, summary.wall_time_ms, summary.executors_over_time
    );
}

#[test]
fn with_nm3_unreachable_its_tasks_still_finish() {
    // The cluster only has nm1 and nm2; a third of the example's tasks want nm3.
    let hosts = [("nm1", "/r1"), ("nm2", "/r1")];
    let mut sim = Sim::new(example_job(), &hosts, Box::new(|_| 1000));
    sim.run(600_000);
    let (ok, summary) = sim.result.expect("the job finished");
    assert!(ok);
    let nm3: Vec<_> = summary
        .tasks
        .iter()
        .filter(|r| r.task_id[1..].parse::<u32>().unwrap() % 3 == 2)
        .collect();
    assert_eq!(nm3.len(), 20);
    assert!(nm3.iter().all(|r| r.host != "nm3"));
    assert_eq!(summary.by_locality.node_local, 40);
}

fn arb_job() -> impl Strategy<Value = Job> {
    (
        1u32..=4,
        0u32..=2,
        1u32..=6,
        prop::collection::vec((0u8..16, 1u32..=4, prop::bool::ANY), 1..30),
        0u64..=3000,
        0u64..=3000,
        1u64..=3000,
        prop::sample::select(vec![0.5f64, 1.0]),
    )
        .prop_map(
            |(cores, min, span, tasks, node_wait, rack_wait, idle, ratio)| {
                let tasks: Vec<TaskSpec> = tasks
                    .into_iter()
                    .enumerate()
                    .map(|(i, (mask, cpus, rack_pref))| TaskSpec {
                        id: format!("t{i}"),
                        command: "true".into(),
                        preferred_hosts: (0..4)
                            .filter(|b| mask & (1 << b) != 0)
                            .map(|b| format!("nm{}", b + 1))
                            .collect(),
                        preferred_racks: if rack_pref {
                            vec!["/r2".into()]
                        } else {
                            vec![]
                        },
                        cpus: cpus.min(cores),
                        timeout_ms: None,
                        kind: None,
                    })
                    .collect();
                let text = serde_json::json!({
                    "name": "prop",
                    "executor": {"cores": cores, "memory_mb": 1, "min_executors": min,
                                 "max_executors": min + span, "idle_timeout_ms": idle},
                    "locality_wait_ms": {"node": node_wait, "rack": rack_wait},
                    "allocation": {"executor_allocation_ratio": ratio},
                    "tasks": tasks,
                });
                Job::from_json(&text.to_string()).unwrap()
            },
        )
}

// nm4 is not in the cluster: tasks preferring only it must fall back.
const HOSTS: [(&str, &str); 3] = [("nm1", "/r1"), ("nm2", "/r1"), ("nm3", "/r2")];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_task_finishes_exactly_once_without_faults(job in arb_job(), base in 50u64..2000) {
        let n = job.tasks.len();
        let mut sim = Sim::new(job, &HOSTS, Box::new(move |t| base + 37 * t.cpus as u64));
        sim.run(3_600_000);
        let (ok, summary) = sim.result.clone().expect("finished within the hour");
        prop_assert!(ok, "{:?}", summary);
        prop_assert_eq!(summary.tasks_succeeded as usize, n);
        prop_assert_eq!(sim.successes.len(), n);
        prop_assert!(sim.successes.values().all(|&c| c == 1));
        prop_assert!(summary.tasks.iter().all(|r| r.attempts == 1));
    }

    #[test]
    fn invariants_hold_with_failures_and_lost_executors(
        job in arb_job(),
        fail in 0u64..300,
        loss in 0u64..500,
        seed in 1u64..u64::MAX,
    ) {
        let mut sim = Sim::new(job, &HOSTS, Box::new(|t| 200 + 50 * t.cpus as u64));
        sim.faults = Faults { task_fail_per_mille: fail, executor_loss_per_mille: loss };
        sim.rng = seed;
        // The per-action checks are the property; the job may fail or run out of time.
        sim.run(600_000);
        if let Some((ok, summary)) = &sim.result {
            prop_assert_eq!(*ok, summary.failure.is_none());
            if *ok {
                prop_assert!(sim.successes.values().all(|&c| c == 1));
            }
        }
    }
}

#[test]
fn faults_cause_retries_and_the_job_still_finishes() {
    let mut sim = Sim::new(
        example_job(),
        &[("nm1", "/r1"), ("nm2", "/r1"), ("nm3", "/r1")],
        Box::new(|_| 1000),
    );
    sim.faults = Faults {
        task_fail_per_mille: 100,
        executor_loss_per_mille: 300,
    };
    sim.run(600_000);
    let (ok, summary) = sim.result.expect("the job finished");
    assert!(ok, "{:?}", summary.failure);
    let retried = summary.tasks.iter().filter(|r| r.attempts > 1).count();
    assert!(retried > 0);
    assert!(sim.successes.values().all(|&c| c == 1));
    assert_eq!(sim.successes.len(), 60);
    eprintln!(
        "retried {retried}; locality {:?}; executors {:?}",
        summary.by_locality,
        summary.executors_over_time.len()
    );
}

#[test]
fn the_example_job_is_mostly_node_local_even_with_blind_placement() {
    let hosts = [("nm1", "/r1"), ("nm2", "/r1"), ("nm3", "/r1")];
    let mut sim = Sim::new(example_job(), &hosts, Box::new(|_| 1000));
    sim.blind = Some(vec!["nm1", "nm2", "nm3"]);
    sim.run(600_000);
    let (ok, summary) = sim.result.expect("the job finished");
    assert!(ok);
    let node = summary.by_locality.node_local;
    assert!(
        node * 10 >= 60 * 9,
        "only {node}/60 NODE_LOCAL: {:?}",
        summary.by_locality
    );
}

#[test]
fn lopsided_executors_trade_some_locality_for_time() {
    // nm2 gets one executor of six: alone it would need 10 s for its 20 one-second tasks.
    // Once nm1's work runs out, its idle executors are refused nm2's tasks for the node wait,
    // then take them RACK_LOCAL, and the job ends well before nm2 could finish alone.
    let hosts = [("nm1", "/r1"), ("nm2", "/r1"), ("nm3", "/r1")];
    let mut sim = Sim::new(example_job(), &hosts, Box::new(|_| 1000));
    sim.blind = Some(vec!["nm1", "nm3", "nm1", "nm1", "nm2", "nm3"]);
    sim.run(600_000);
    let (ok, summary) = sim.result.expect("the job finished");
    assert!(ok);
    let l = summary.by_locality;
    assert!(l.rack_local > 0 && l.node_local >= 40, "{l:?}");
    assert!(summary.wall_time_ms < 13_500, "{}", summary.wall_time_ms);
    eprintln!("lopsided: {l:?}, wall {} ms", summary.wall_time_ms);
}

#[test]
fn a_large_job_runs_in_reasonable_time() {
    // 5000 tasks over 50 hosts, 40 executors of 4 cores: the scheduler must not be quadratic
    // in a way that shows here (debug build, well under a few seconds).
    let hosts: Vec<(String, String)> = (0..50)
        .map(|i| (format!("h{i}"), format!("/r{}", i % 5)))
        .collect();
    let tasks: Vec<serde_json::Value> = (0..5000)
        .map(|i| {
            serde_json::json!({"id": format!("t{i}"), "command": "x",
            "preferred_hosts": [format!("h{}", i % 50), format!("h{}", (i * 7 + 3) % 50)]})
        })
        .collect();
    let job = Job::from_json(
        &serde_json::json!({"name": "big",
            "executor": {"cores": 4, "memory_mb": 1, "max_executors": 40},
            "tasks": tasks})
        .to_string(),
    )
    .unwrap();
    let host_refs: Vec<(&str, &str)> = hosts
        .iter()
        .map(|(h, r)| (h.as_str(), r.as_str()))
        .collect();
    let started = std::time::Instant::now();
    let mut sim = Sim::new(
        job,
        &host_refs,
        Box::new(|t| 500 + (t.id.len() as u64 * 97) % 700),
    );
    sim.run(3_600_000);
    let (ok, summary) = sim.result.expect("finished");
    assert!(ok);
    eprintln!(
        "large: {:?}, wall {} ms simulated, {:?} real",
        summary.by_locality,
        summary.wall_time_ms,
        started.elapsed()
    );
}
