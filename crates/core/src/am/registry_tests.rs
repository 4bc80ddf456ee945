use super::*;

fn e(n: u64) -> ExecutorId {
    ExecutorId::new(n)
}

type Kept = HashMap<ExecutorId, (String, Phase, bool)>;

fn held(kept: &Kept, id: ExecutorId) -> Option<Held<'_>> {
    kept.get(&id).map(|(c, phase, _)| Held {
        container: c,
        phase: *phase,
    })
}

/// The registry with a stand-in for the tracker: each executor's container and phase,
/// and whether the AM gave it back, until its container completes.
struct Fixture {
    r: Registry,
    held: Kept,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            r: Registry::new(),
            held: HashMap::new(),
        }
    }

    fn held(&self, id: ExecutorId) -> Option<Held<'_>> {
        held(&self.held, id)
    }

    fn launching(&mut self, id: ExecutorId, c: &str, host: &str, rack: &str, at: MatchLevel) {
        self.held
            .insert(id, (c.to_string(), Phase::Starting, false));
        let held = held(&self.held, id).unwrap();
        self.r
            .launching(id, host, rack, at, held, Granted::default());
    }

    fn running(&mut self, id: ExecutorId) {
        let Some(h) = self.held.get_mut(&id) else {
            return;
        };
        if h.1 == Phase::Starting {
            h.1 = Phase::Running;
            let held = held(&self.held, id).unwrap();
            self.r.running(id, held);
        }
    }

    fn released(&mut self, id: ExecutorId) {
        if let Some(h) = self.held.get_mut(&id) {
            h.2 = true;
        }
    }

    fn completed(&mut self, id: ExecutorId, status: i32, diagnostics: &str) {
        if let Some((c, _, released)) = self.held.remove(&id) {
            self.r.completed(id, &c, status, diagnostics, released);
        }
    }

    /// As the pool: the registry hears whether the container was already being given
    /// back before the tracker marks it so.
    fn launch_failed(&mut self, id: ExecutorId, error: &str) {
        if let Some((c, _, released)) = self.held.get_mut(&id).map(|h| {
            let before = h.clone();
            h.2 = true;
            before
        }) {
            self.r.launch_failed(id, &c, error, released);
        }
    }

    fn views(&mut self) -> Listed<ExecutorView> {
        let kept = &self.held;
        self.r.views_with(|id| held(kept, id))
    }

    /// The list rendered from scratch from the records and the tracker's stand-in.
    fn rebuilt(&self) -> Vec<ExecutorView> {
        self.r
            .executors
            .iter()
            .map(|(&id, r)| match r {
                Record::Exited(v) => (**v).clone(),
                Record::Live(p) => render(id, p, self.held(id).unwrap()),
            })
            .collect()
    }
}

/// A long app: 10,000 executors come and go (every third one crashes) while a few stay
/// live throughout. Only the last FINISHED_KEPT finished ones are kept, the live ones
/// always, and the failure count stays exact.
#[test]
fn ten_thousand_lifecycles_keep_a_bounded_history() {
    let mut f = Fixture::new();
    for id in 1..=3 {
        f.launching(e(id), &format!("live{id}"), "nm1", "/r", MatchLevel::Node);
        f.running(e(id));
    }
    let mut crashes = 0;
    for id in 4..10_004u64 {
        let c = format!("c{id}");
        f.launching(e(id), &c, "nm2", "/r", MatchLevel::Any);
        f.running(e(id));
        if id % 3 == 0 {
            crashes += 1;
            f.completed(e(id), 1, "Exception from container-launch");
        } else {
            f.released(e(id));
            f.completed(e(id), -105, "killed");
        }
        let finished = (id - 3) as usize;
        assert_eq!(f.r.executors.len(), 3 + finished.min(FINISHED_KEPT));
        assert_eq!(f.r.counts_against_app(), crashes);
    }
    assert_eq!(f.r.recent().len(), RECENT_EVENTS);
    assert_eq!(f.r.live_ids().collect::<Vec<_>>(), [e(1), e(2), e(3)]);
    let views = f.views();
    // The kept finished executors are the newest ones.
    assert_eq!(views[3].id, e(10_004 - FINISHED_KEPT as u64));
    assert_eq!(views[0].container_id, "live1");
    assert_eq!(
        views[3].container_id,
        format!("c{}", 10_004 - FINISHED_KEPT)
    );
    let ret = f.r.retention();
    assert_eq!(ret.forgotten, 10_000 - FINISHED_KEPT as u64);
    assert_eq!(ret.last_id, e(10_003));
    assert!(ret.forgot(e(4)) && !ret.forgot(e(10_004)));
    // A late second completion of a forgotten executor is ignored.
    f.r.completed(e(4), "c4", 1, "again", false);
    assert_eq!(f.r.counts_against_app(), crashes);
    assert_eq!(f.views().len(), 3 + FINISHED_KEPT);
}

/// A container the driver killed while it was starting, whose launch then fails (the
/// RM killed it under the launcher): our doing, not the app's failure.
#[test]
fn a_failed_launch_of_a_container_given_back_does_not_count() {
    let mut f = Fixture::new();
    f.launching(e(1), "c1", "nm1", "/rack1", MatchLevel::Node);
    f.launching(e(2), "c2", "nm2", "/rack1", MatchLevel::Node);
    f.released(e(1));
    f.launch_failed(e(1), "container killed");
    f.launch_failed(e(2), "refused");
    let v = f.views();
    assert_eq!(v[0].counts_against_app, Some(false));
    assert_eq!(v[1].counts_against_app, Some(true));
    assert_eq!(f.r.counts_against_app(), 1);
}

#[test]
fn lifecycle_released_vs_failed() {
    let mut f = Fixture::new();
    f.launching(e(1), "c1", "nm1", "/rack1", MatchLevel::Node);
    f.launching(e(2), "c2", "nm3", "/rack2", MatchLevel::Any);
    f.running(e(1));
    f.running(e(2));
    assert_eq!(f.r.live_host(e(2)), Some("nm3"));
    assert_eq!(f.r.live_host(e(9)), None);
    f.released(e(1));
    // Given back, not yet reported completed: still live.
    assert!(f.r.is_live(e(1)));
    f.completed(e(1), -105, "Container killed by the ApplicationMaster.");
    f.completed(e(2), 1, "Exception from container-launch");
    let v = f.views();
    assert_eq!(
        v[0].reason.as_deref(),
        Some("released by the AM (killed by the driver)")
    );
    assert_eq!(v[0].counts_against_app, Some(false));
    assert_eq!(v[0].container_id, "c1");
    assert_eq!(v[1].exit_status, Some(1));
    assert_eq!(v[1].counts_against_app, Some(true));
    assert_eq!(v[1].locality, Locality::Any);
    assert_eq!(f.r.counts_against_app(), 1);
    assert!(!f.r.is_live(e(2)));
    assert_eq!(f.r.live_host(e(2)), None);
    let names: Vec<_> = std::iter::from_fn(|| f.r.poll_event())
        .map(|e| e.name())
        .collect();
    assert_eq!(
        names,
        [
            "executor_added",
            "executor_added",
            "executor_updated",
            "executor_updated",
            "executor_removed",
            "executor_removed"
        ]
    );
    // A second completion report for the same executor changes nothing.
    f.r.completed(e(2), "c2", 0, "", false);
    assert_eq!(f.views()[1].exit_status, Some(1));
}

/// One step of a random executor history.
#[derive(Debug, Clone)]
enum Step {
    Launch,
    Run(usize),
    Release(usize),
    Complete(usize, i32),
    LaunchFailed(usize),
    Publish,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        3 => Just(Step::Launch),
        2 => any::<usize>().prop_map(Step::Run),
        1 => any::<usize>().prop_map(Step::Release),
        2 => (any::<usize>(), prop_oneof![Just(0), Just(1), Just(-105), Just(143)])
            .prop_map(|(i, s)| Step::Complete(i, s)),
        1 => any::<usize>().prop_map(Step::LaunchFailed),
        2 => Just(Step::Publish),
    ]
}

proptest::proptest! {
    /// After any history, what the registry publishes equals a list rendered from
    /// scratch from its records and the tracker's containers and phases, the failure
    /// count kept on each exit equals a recount (every exit that counted, forgotten or
    /// not), and a list published earlier still shows the executors as they were then.
    #[test]
    fn published_lists_equal_a_rebuild(steps in proptest::collection::vec(step(), 0..300)) {
        let mut f = Fixture::new();
        let mut launched = 0u64;
        let mut earlier: Option<(Listed<ExecutorView>, Vec<ExecutorView>)> = None;
        for s in steps {
            let x = |i: usize| e(i as u64 % launched.max(1) + 1);
            match s {
                Step::Launch => {
                    launched += 1;
                    f.launching(e(launched), &format!("c{launched}"), "nm1", "/r", MatchLevel::Node);
                }
                Step::Run(i) => f.running(x(i)),
                Step::Release(i) => f.released(x(i)),
                Step::Complete(i, status) => f.completed(x(i), status, "diagnostics"),
                Step::LaunchFailed(i) => f.launch_failed(x(i), "refused"),
                Step::Publish => {
                    if let Some((list, was)) = &earlier {
                        let now: Vec<ExecutorView> = list.iter().map(|e| (**e).clone()).collect();
                        proptest::prop_assert_eq!(&now, was);
                    }
                    let list = f.views();
                    let was = list.iter().map(|e| (**e).clone()).collect();
                    earlier = Some((list, was));
                }
            }
            let rebuilt = f.rebuilt();
            let published: Vec<ExecutorView> = f.views().iter().map(|e| (**e).clone()).collect();
            proptest::prop_assert_eq!(published, rebuilt);
            let recent: Vec<ExecutorEvent> = f.r.recent.iter().map(|e| (**e).clone()).collect();
            let published: Vec<ExecutorEvent> = f.r.recent().iter().map(|e| (**e).clone()).collect();
            proptest::prop_assert_eq!(published, recent);
            // Fewer than FINISHED_KEPT executors finish here, so none is forgotten and
            // the recount is over the records (`ten_thousand_lifecycles...` covers
            // forgetting).
            let kept = f.r.exited_views().filter(|e| e.counts_against_app == Some(true)).count() as u32;
            proptest::prop_assert_eq!(f.r.counts_against_app(), kept);
        }
    }
}
