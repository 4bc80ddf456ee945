//! One whole AM loop pass at 100,000 tasks and 10,000 executors: the AM core's handling of
//! executor polls (each carrying a finished task, each a driver round whose freed slot
//! gets the next task), a few executor changes through the RM (one container ends on its
//! own, one is granted and launched, and its executor polls for the first time), then the
//! view the API and the page publish. Everything here is the library's own code (the `bench`
//! feature exposes its fixtures): the real `AmCore`, `Pool`, `JobRun`, `Registry` and `Driver`.
//!
//! Baseline, in the same run: the same pass, plus after every input the from-scratch
//! computations that the kept state replaced (what every round did before): the list of
//! usable executors with their busy flags (`Scheduler::usable_executors`, what the
//! allocation got), the idle executors rebuilt from it into a map, and the executors the
//! job knows diffed against the registry's live ones.
//!
//! `cargo bench --features bench --bench am_loop_pass`

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use yarn_am_core::driver::{Driver, ExecutorId, Job};
use yarn_client::amrm::{AllocatedContainer, Allocation, CompletedContainer};
use yarn_client::rest::NodeInfo;

use yarn_am_core::am::am_core::AmCore;
use yarn_am_core::am::events::{DriverCommand, LaunchReport, RmReply};
use yarn_am_core::am::fixtures;
use yarn_am_core::am::job_run::JobRun;
use yarn_am_core::am::pool::Pool;
use yarn_am_wire::poll::{PollReply, PollRequest, TaskResult};

const TASKS: usize = 100_000;
const EXECUTORS: usize = 10_000;
const HOSTS: usize = 1_000;
/// Task ends per pass (each in its own executor poll).
const TASK_ENDS: usize = 100;

fn host(i: usize) -> String {
    format!("host-{}", i % HOSTS)
}

fn pool() -> Pool {
    let nodes: Vec<NodeInfo> = (0..HOSTS)
        .map(|i| fixtures::node(&host(i), &format!("/rack-{}", i % 25), 65536, 64))
        .collect();
    fixtures::pool(&nodes, EXECUTORS as u32 + 100)
}

fn job() -> JobRun {
    let tasks: Vec<_> = (0..TASKS)
        .map(|i| serde_json::json!({"id": format!("task-{i}"), "command": "true"}))
        .collect();
    let job = Job::from_json(
        &serde_json::json!({
            "name": "big",
            "executor": {"cores": 1, "memory_mb": 256, "initial_executors": EXECUTORS,
                         "max_executors": EXECUTORS, "idle_timeout_ms": 600_000},
            "tasks": tasks,
        })
        .to_string(),
    )
    .expect("job");
    JobRun::new(Driver::new(job, HashMap::new()).expect("driver"))
}

fn container(n: usize) -> AllocatedContainer {
    fixtures::container(&format!("container_1_0001_01_{n:06}"), &host(n))
}

/// An attempt an executor runs: (executor id, host, task, attempt).
type Running = (String, String, String, u32);

struct Bench {
    core: AmCore,
    now: u64,
    running: VecDeque<Running>,
    /// Containers granted so far (the next one's number).
    granted: usize,
}

fn poll(core: &mut AmCore, now: u64, id: &str, host: &str, done: Option<(&str, u32)>) -> PollReply {
    let request = PollRequest {
        executor_id: id.into(),
        host: host.into(),
        free_cpus: 1,
        finished: done
            .into_iter()
            .map(|(t, a)| TaskResult {
                task_id: t.into(),
                attempt: a,
                exit_code: 0,
                duration_ms: 1_000,
            })
            .collect(),
        running: Vec::new(),
    };
    fixtures::ask(core, now, |reply| DriverCommand::ExecutorPoll {
        request,
        reply,
    })
}

impl Bench {
    fn pending(&self) -> usize {
        self.core
            .job()
            .map_or(0, |j| j.driver().scheduler().pending_count())
    }

    /// 10,000 executors granted, launched, registered, each running one task.
    fn new() -> Bench {
        let mut core = AmCore::new(pool(), Some(job()), Duration::from_secs(3), 1_000)
            .with_executor_silence(Duration::from_secs(365 * 24 * 3600));
        core.handle_start(0, 0);
        let mut b = Bench {
            core,
            now: 0,
            running: VecDeque::new(),
            granted: 0,
        };
        b.grant(EXECUTORS, Vec::new());
        b
    }

    /// One allocate round trip granting `n` containers and completing `completed`; the
    /// executors launched then poll once and take their tasks.
    fn grant(&mut self, n: usize, completed: Vec<CompletedContainer>) {
        self.now += 3_000;
        let batch = self.core.poll_allocate(self.now).expect("heartbeat due");
        let allocated = (self.granted..self.granted + n).map(container).collect();
        self.granted += n;
        let reply = RmReply::Allocated(Box::new(Allocation {
            response_id: 1,
            allocated,
            completed,
            ..Default::default()
        }));
        self.core.handle_allocated(self.now, batch, reply);
        for l in self.core.poll_launches() {
            let container = l.container.id.clone();
            self.core
                .handle_launched(self.now, LaunchReport::Started { container });
            let (id, host) = (l.executor.to_string(), l.container.host.clone());
            let reply = poll(&mut self.core, self.now, &id, &host, None);
            for t in reply.tasks {
                self.running
                    .push_back((id.clone(), host.clone(), t.task_id, t.attempt));
            }
        }
    }

    /// One loop pass (see the module doc); `reference` adds the from-scratch computations
    /// after every input.
    fn pass(&mut self, reference: bool) {
        let t0 = thread_cpu();
        for _ in 0..TASK_ENDS {
            self.now += 1;
            let (id, host, task, attempt) = self.running.pop_front().expect("running");
            let reply = poll(&mut self.core, self.now, &id, &host, Some((&task, attempt)));
            for t in reply.tasks {
                self.running
                    .push_back((id.clone(), host.clone(), t.task_id, t.attempt));
            }
            if reference {
                black_box(from_scratch(&mut self.core));
            }
        }
        let t1 = thread_cpu();
        // One executor's container ends on its own (its task goes back to the queue), a
        // new container replaces it.
        // (Each executor has one core, so the entry taken was its only running attempt.)
        let (id, _, _, _) = self.running.pop_front().expect("running");
        let n: ExecutorId = id.parse().expect("numeric id");
        let cid = self.core.container_of(n).expect("live executor");
        let completed = vec![CompletedContainer {
            id: cid,
            exit_status: 1,
            diagnostics: "exited".into(),
        }];
        self.grant(1, completed);
        if reference {
            black_box(from_scratch(&mut self.core));
        }
        let t2 = thread_cpu();
        // The executor events the shell sends to the event stream before it publishes.
        while let Some(event) = self.core.poll_event() {
            black_box(event);
        }
        black_box(self.core.view());
        if !reference {
            let mut p = PARTS.lock().expect("parts");
            p[0] += t1 - t0;
            p[1] += t2 - t1;
            p[2] += thread_cpu() - t2;
        }
    }
}

/// What a round computed from scratch before the state was kept: every usable executor
/// with its busy flag, the idle ones rebuilt into a map, and the executors the job knows
/// checked against the registry's live ones.
fn from_scratch(core: &mut AmCore) -> usize {
    let job = core.job().expect("job");
    let usable = job.driver().scheduler().usable_executors();
    let idle: BTreeMap<&ExecutorId, u64> = usable
        .iter()
        .filter(|(_, busy)| !busy)
        .map(|(id, _)| (id, 0))
        .collect();
    let live: HashSet<ExecutorId> = core.pool_registry().live_ids().collect();
    let lost = usable.iter().filter(|(id, _)| !live.contains(id)).count();
    usable.len() + idle.len() + lost
}

/// The CPU time this thread has used: the machine the figures come from is shared, so the
/// wall time criterion reports includes waiting for a core; this does not.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec the call fills in.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time and passes, per mode (reference, incremental), over the measured runs.
static CPU: std::sync::Mutex<[(Duration, u64); 2]> =
    std::sync::Mutex::new([(Duration::ZERO, 0); 2]);

/// CPU time of the incremental passes' parts: the polls, the RM change, the view.
static PARTS: std::sync::Mutex<[Duration; 3]> = std::sync::Mutex::new([Duration::ZERO; 3]);

/// `iters` passes; the set-up (10,000 executors launched and registered) is kept between
/// calls and made again, outside the timing, before the job runs short of pending tasks:
/// what is measured is the busy steady state. (In a job's tail, with executors going idle,
/// a round that has a task to place, say one re-queued from a lost executor, offers it to
/// every free executor in turn, as the old code did too.)
fn run(bench: &mut Option<Bench>, iters: u64, reference: bool) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let b = match bench {
            Some(b) if b.pending() >= TASK_ENDS * 2 => b,
            _ => bench.insert(Bench::new()),
        };
        let (t, cpu) = (Instant::now(), thread_cpu());
        b.pass(reference);
        total += t.elapsed();
        let mut c = CPU.lock().expect("cpu");
        let slot = &mut c[usize::from(!reference)];
        slot.0 += thread_cpu() - cpu;
        slot.1 += 1;
    }
    total
}

fn loop_pass(c: &mut Criterion) {
    let mut bench = Some(Bench::new());
    let b = bench.as_ref().expect("set up");
    assert_eq!(b.running.len(), EXECUTORS, "every executor runs a task");
    let mut group = c.benchmark_group("am_loop_pass_100k_tasks_10k_executors");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10));
    group.bench_function("from_scratch_reference_per_input", |b| {
        b.iter_custom(|iters| run(&mut bench, iters, true))
    });
    group.bench_function("incremental", |b| {
        b.iter_custom(|iters| run(&mut bench, iters, false))
    });
    group.finish();
    let c = CPU.lock().expect("cpu");
    for (name, (cpu, n)) in ["from_scratch_reference_per_input", "incremental"]
        .iter()
        .zip(c.iter())
    {
        let per = cpu.as_secs_f64() * 1e3 / (*n).max(1) as f64;
        println!("{name}: thread CPU time {per:.3} ms per pass over {n} passes (warm-up included)");
    }
    let n = c[1].1.max(1) as f64;
    let p = PARTS.lock().expect("parts");
    println!(
        "incremental, thread CPU per pass: {TASK_ENDS} polls {:.3} ms, RM change {:.3} ms, view {:.3} ms",
        p[0].as_secs_f64() * 1e3 / n,
        p[1].as_secs_f64() * 1e3 / n,
        p[2].as_secs_f64() * 1e3 / n
    );
}

criterion_group!(benches, loop_pass);
criterion_main!(benches);
