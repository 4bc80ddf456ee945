//! The two placement strategies: how much each preferred host still needs.
//!
//! # `spark`
//!
//! Exactly Spark's `LocalityPreferredContainerPlacementStrategy` (see docs/allocator.md):
//! `expected(h) = count(h) * ceil(aware_tasks / tasks_per_executor) / sum(count)`, minus the
//! executors running on `h` and `h`'s share of the pending local requests, rounded up. The
//! arithmetic is done in `f64` in Spark's order so the results agree exactly.
//!
//! # `default` (ours)
//!
//! Spark's placement, told to YARN so that YARN can act on it. Spark's needs, pending shares,
//! staleness, scaling and number of requests are kept: every host keeps its place in the
//! placement, and each request records the hosts it was placed on
//! ([`PendingRequest::placed`]) so the next step's bookkeeping is Spark's too. What changes is
//! what YARN is asked (rules 1, 2, 4) and stale requests with the target met (rule 3).
//!
//! Why the asks matter: YARN's request table has one count per host, per rack and ANY, and
//! the CapacityScheduler fills a node that heartbeats with room with as many node-local
//! containers as that node's count allows. Spark's nested requests name its most-needed host
//! in every request (count = the number of containers being placed), so the first preferred
//! nodes that heartbeat take as many executors as they can hold, and the executors end up
//! packed on a few nodes whose local tasks run out long before the job does. The default asks
//! for each host only the executors its tasks can keep busy, so the same containers land on
//! more of the preferred hosts.
//!
//! 1. **Hosts YARN cannot use** (a DataNode without a NodeManager, when the cluster's node
//!    list is known; an excluded or unhealthy node) are never named to YARN. Their racks are
//!    still asked for, as often as Spark asks for them. Requests made before a node became
//!    unusable keep naming it (YARN does not place on an excluded node), as Spark keeps them.
//! 2. **Capacity and work.** A node whose capacity for this app is known and already full of
//!    our executors is not named in new requests. Any other host is named by at most
//!    `ceil(count(h) x target / aware_tasks) - running(h)` new requests (at least one when no
//!    usable host is below that, so that something is named): with the
//!    target's executors running, the locality-aware tasks last `aware_tasks / (target x
//!    tasks_per_executor)` waves, so the host's `count(h)` tasks keep that many executors busy
//!    (`work_cap`). Within those caps the hosts are filled level by level (`level_caps`): a
//!    host's level is its executors (running or starting) plus the pending requests naming it, and no host is named
//!    past the lowest level that gives the step enough names (with replicated blocks a task
//!    counts on three hosts, so the work caps alone allowed two executors on every host of a
//!    uniform trace). The names are dealt over the requests placed on the host, to those that
//!    name the fewest hosts so far (`placement` module docs), so that requests name different
//!    hosts and, where there are names enough, every request names one. A request asks for
//!    the racks of the hosts it names (and of the unusable or full hosts it was placed on), so
//!    a rack is not asked for more often than its most-named host: a rack count Spark's
//!    size would let YARN put node-local containers on the first nodes of a rack and rack-local
//!    ones on any of them, which is the packing again. Requests past every cap name no
//!    location: YARN may place them anywhere, and they stay placed on Spark's hosts.
//! 3. **Stale requests when the target is exactly met.** Spark only cancels stale requests
//!    (placed on no host any task wants) when executors are missing; with `missing == 0`
//!    they linger. We swap them, oldest first, for as many new requests with locality as the
//!    placement finds for that many containers (any-host requests are left alone: trading
//!    them would only delay executors). A stale request is kept when nothing local replaces
//!    it: it still names racks that may serve.
//! 4. **Spread first, then take what comes.** A request that rule 2 kept off some of its hosts
//!    and that YARN has not filled after one NodeManager heartbeat interval
//!    ([`AllocatorConfig::spread_wait_ms`](super::tracker::AllocatorConfig)) is asked again
//!    naming every host it was placed on that YARN can use and that has room. In a cluster
//!    with room, every node has been offered by then and the spread has happened; in a busy
//!    one, few nodes have room, and an executor on any preferred host beats waiting. A strict
//!    request (rule 5) is asked again relaxed then, even when it gains no host, in two
//!    heartbeats: withdrawn first, then asked relaxed if the answer did not fill it (so that
//!    YARN is never asked twice for a container it granted meanwhile; `tracker`).
//! 5. **Strict until the spread wait.** New requests that name hosts are asked with relax
//!    locality off (under their own allocation request id, since YARN keeps one relax flag
//!    per rack and ANY entry of a request key; an id below the relaxed ones', so that the
//!    scheduler tries them first, see `request_book::STRICT_REQUEST_ID`) until rule 4
//!    relaxes them. Why, on the real
//!    CapacityScheduler (Hadoop 3.4.1, stock per-node-heartbeat settings: several containers
//!    per node heartbeat, one of them off-switch): a relaxed request may go off-switch once
//!    `min(nodes, outstanding x min(1, (locations - 1) / nodes))` scheduling opportunities
//!    were missed, counted per request key and reset by every node- or rack-local container.
//!    With few containers left that is under one: three containers for `nm1..nm3` asked at
//!    once landed node-local on the node that heartbeat first (the AM's, as the NMs heartbeat
//!    in a fixed order), then the last one off-switch on the next node in the same heartbeat
//!    (`tests/cluster/it_spread_all.rs`: 8 of 8 rounds packed before this rule and the dealing).
//!    Strict, each is held for its node, which takes it on its heartbeat, within one interval.
//!
//! Rule 3 lives in the update step, rules 4 and 5 in the tracker (they need the time), rules 1
//! and 2 here (as caps on how many new requests may name a host, see [`HostNeed::cap`]) and in
//! the placement (dealing, racks).
//!
//! ## What the simulator says about these rules (BENCHMARKS.md has the numbers)
//!
//! Over 20 seeds of each trace family at 100, 1,000 and 5,000 nodes, the default has the
//! higher node-local and the higher rack-local share on every family. Node-local: by 12 to 32
//! points where nodes hold 4 executors and the cluster has room (3 to 4 on very skewed traces,
//! where a few hosts have work for many executors and packing costs Spark less), 0.3 to 0.4
//! with one slot a node (nothing to spread), 0.3 to 1.8 on the busy traces. The busy 100-node
//! trace is a near tie (over 100 seeds: node-local 58.97% against 58.77%, rack-local 99.50%
//! against 99.43%). On the busy 1,000- and 5,000-node traces it takes 3% to 5% more rounds,
//! and it re-asks (rule 4) 36% to 43% of its requests once; it never asks for more containers.
//!
//! Measured and rejected:
//! - the work cap with Spark's rack counts (the earlier version of rule 2): node-local as
//!   now, but rack-local below Spark's on three families at 100 nodes, and on the busy traces
//!   the requests past the caps asked for racks only and lingered (rounds 44.5 against 39.9);
//! - rule 4 asking again at every wait, as a remove and an add, with the old rack list:
//!   rack-local below Spark's on the busy 100-node trace, 40% to 55% more requests, and on
//!   the real request table a chance to re-inflate YARN's ask while grants are in flight;
//! - naming every rack a preferred host is on in every request: rack-local grants land on the
//!   wrong racks (very skewed, 5,000 nodes: rack-local 87.7% -> 73.7%);
//! - dealing the capped node names round-robin over the requests, so that no request names
//!   nothing: in the simulator the wide requests that matching removes stop carrying the
//!   narrow hosts, and the busy traces lose 8 points node-local. Taken back with rule 5 after
//!   the real scheduler packed the nested lists (the simulator keeps strict requests in a
//!   key of their own only in its calibrated configuration, `strict_requests`, and does not
//!   model the off-switch wait above);
//! - a cap at `ceil(aware x need / sum of needs)` (each host's share of the containers): worse
//!   than Spark on very skewed traces, where popular hosts have work for more executors;
//! - leaving out of the node lists only the hosts YARN cannot use, with no work cap (the
//!   previous default): never better than Spark, and slightly worse where DataNodes run no
//!   NodeManager, because YARN's off-switch wait counts every named host, real or not.

use std::collections::HashMap;

use super::placement::{HostNeed, Scaling};
use super::state::{Cluster, Demand, HostName, PendingRequest};

pub use yarn_am_wire::placement::{Strategy, UnknownStrategy};

/// Host preferences as a strategy sees them.
#[derive(Debug, Clone)]
pub(crate) struct Preferences<'a> {
    strategy: Strategy,
    demand: &'a Demand,
    tasks_per_executor: u32,
    cluster: &'a Cluster,
    total: f64,
}

impl<'a> Preferences<'a> {
    pub(crate) fn new(
        strategy: Strategy,
        demand: &'a Demand,
        tasks_per_executor: u32,
        cluster: &'a Cluster,
    ) -> Preferences<'a> {
        // Spark sums integers; converting the integer sum keeps the arithmetic identical.
        let total = demand
            .host_to_local_task_count
            .values()
            .map(|&c| u64::from(c))
            .sum::<u64>() as f64;
        Preferences {
            strategy,
            demand,
            tasks_per_executor,
            cluster,
            total,
        }
    }
}

impl<'a> Preferences<'a> {
    /// Does a pending request placed on this host still serve some task? Both strategies:
    /// the host is a key of `host_to_local_task_count` (Spark's rule). The default strategy
    /// applies it to every host a request was placed on, named to YARN or not.
    pub(crate) fn is_preferred(&self, host: &str) -> bool {
        self.demand.host_to_local_task_count.contains_key(host)
    }

    /// `need(h)` for every preferred host (step 3 of the strategy), and for the default
    /// strategy how many new requests may name it to YARN (rules 1 and 2 of the module docs).
    /// `new_requests`: how many requests the step may add (the level the default strategy
    /// fills hosts to is the lowest that gives that many names, rule 2). `starting`: the
    /// containers still launching per host, read by the default strategy's levels only (Spark's
    /// arithmetic and the work caps count running executors, as Spark does).
    pub(crate) fn needs(
        &self,
        running: &HashMap<HostName, u32>,
        starting: &HashMap<HostName, u32>,
        local_pending: &[&PendingRequest],
        new_requests: u64,
    ) -> Vec<HostNeed<'a>> {
        let demand: &'a Demand = self.demand;
        let executors = f64::from(
            demand
                .locality_aware_tasks
                .div_ceil(self.tasks_per_executor.max(1)),
        );
        let shares = pending_shares(local_pending);
        let running_on = |host: &HostName| running.get(host).copied().unwrap_or(0);
        // Rule 2: while some usable host's tasks could keep another executor busy, hosts whose
        // tasks already keep all theirs busy are not named (Spark's ramp 1 -> 3 otherwise put
        // the second executor beside the first); when none could, each is named once.
        let some_below = self.strategy == Strategy::Default
            && demand.host_to_local_task_count.iter().any(|(h, &c)| {
                let r = running_on(h);
                self.cluster.has_room(h, r) && work_cap(c, demand) > u64::from(r)
            });
        let mut needs = Vec::with_capacity(demand.host_to_local_task_count.len());
        for (host, &count) in &demand.host_to_local_task_count {
            let expected = f64::from(count) * executors / self.total;
            let running_here = running.get(host).copied().unwrap_or(0);
            let have = f64::from(running_here);
            let share = shares.get(host).copied().unwrap_or(0.0);
            // NaN (no tasks at all) becomes 0, as on the JVM.
            let need = ceil_to_u64(expected - (have + share));
            let cap = match self.strategy {
                Strategy::Spark => None,
                // Rules 1 and 2: a host YARN cannot use, or a node that holds all the executors
                // it can, is never named to YARN.
                Strategy::Default if !self.cluster.has_room(host, running_here) => Some(0),
                // Rule 2: any other host by no more new requests than its tasks can keep
                // executors busy.
                Strategy::Default => {
                    let left = work_cap(count, demand).saturating_sub(u64::from(running_here));
                    Some(if some_below { left } else { left.max(1) })
                }
            };
            needs.push(HostNeed { host, need, cap });
        }
        if self.strategy == Strategy::Default && some_below {
            let work = |h: &HostName| -> (u32, Option<u32>) {
                let count = demand.host_to_local_task_count.get(h).copied().unwrap_or(0);
                (count, self.cluster.capacity.get(h).copied())
            };
            level_caps(
                &mut needs,
                &work,
                demand,
                running,
                starting,
                local_pending,
                new_requests,
            );
        }
        needs
    }
}

/// Rule 2's spread: the work caps fill the hosts level by level. A host's level is its
/// executors (running or still starting) plus the pending requests that name it; the new
/// requests may name a host only up to the lowest level `L` at which the hosts' names
/// (`min(cap, L - level)` each) still give every new request with locality as many names as
/// the caps alone would (a request placed on a few popular hosts only must keep one of them),
/// so no host is named again while another with work is lower. Why: a work cap counts a host's
/// tasks alone, but with replicated blocks every task is local to several hosts (three on
/// HDFS), so on a uniform trace every host's tasks "keep two executors busy" and two strict
/// requests named each host: the node that heartbeats first after the ask took both (two
/// containers in one heartbeat), and the node that took the last batch's first executor was
/// named again for the next (8 executors on 4 hosts, real cluster, BENCHMARKS.md "After the
/// level fix"). A container still starting counts as its host's: a request is gone once
/// granted, so without it a host whose executor is still launching would be back at level 0
/// when the target ramps, and named again. Hosts that get no name keep their place in the
/// bookkeeping, as with any cap.
///
/// **Fresh placement** (no local request pending: a stage's first ask): the levels
/// are weighted by work, a node is named no more often than it has room, and the level is the
/// lowest that gives as many names as requests (not the coverage test). A host's level then
/// counts from the work its tasks leave (the unrounded work cap minus its executors), so a
/// host whose tasks keep four executors busy is named four times before one whose tasks keep
/// one busy is named at all: the offline bound's placement (`sim::bound`) stacks executors on
/// the hosts most tasks prefer, and the equal levels spread one a host. The names then add up
/// to about the requests, so YARN's per-host counts are the placement itself; with the
/// coverage test they were 5-6 times the requests (1,148 names for 200 on the skewed
/// 1,000-node trace) and the first nodes to heartbeat took the containers whoever they were.
/// Measured (simulator, 1,000 nodes, BENCHMARKS.md "Closing the gap"): node-local 36% -> 60%
/// on the skewed traces (64.5% after the share fix; its per-key figures are in "After the
/// share fix"). Where the room is known the order counts each host's work twice
/// (`FRESH_STEEPNESS`). With requests pending (a busy cluster, a ramp) the equal levels and
/// the coverage test stay: there the weighted fill took 3x the rounds on the busy trace (the
/// popular hosts rarely have room, and a request named on one host waits for it).
#[allow(clippy::too_many_arguments)]
fn level_caps(
    needs: &mut [HostNeed<'_>],
    work: &dyn Fn(&HostName) -> (u32, Option<u32>),
    demand: &Demand,
    running: &HashMap<HostName, u32>,
    starting: &HashMap<HostName, u32>,
    local_pending: &[&PendingRequest],
    new_requests: u64,
) {
    let fresh = local_pending.is_empty();
    let mut named: HashMap<&HostName, u64> = HashMap::new();
    for req in local_pending {
        for n in req.nodes.iter() {
            *named.entry(n).or_insert(0) += 1;
        }
    }
    // The placement names a host in no more requests than its ratio (`Placement::round_up`,
    // the same `Scaling`), and request `j` (widest first) is placed on the hosts whose ratio
    // exceeds `j`.
    let Some(scaling) = Scaling::of(new_requests, needs) else {
        return;
    };
    let level_of = |h: &HostName| -> u64 {
        u64::from(running.get(h).copied().unwrap_or(0))
            + u64::from(starting.get(h).copied().unwrap_or(0))
            + named.get(h).copied().unwrap_or(0)
    };
    let mut open = open_hosts(needs, work, demand, &level_of, scaling, fresh);
    let Some(most) = open.iter().map(|o| o.1).max() else {
        return;
    };
    // A host's place in the fill order: 0 for the one with the most work left, one `UNIT`
    // further for every executor less. At level `l` a host is named once for every whole
    // `UNIT` from its place up to `l` (so hosts with the same work left are filled one
    // executor at a time, level by level, and a host with three executors' work left more
    // than another is filled three levels ahead of it).
    for o in &mut open {
        o.1 = most - o.1;
    }
    let Some(level) = fill_level(&open, scaling.aware, fresh) else {
        return;
    };
    for &(i, place, _, cap) in &open {
        needs[i].cap = Some(cap_at(level, place, cap));
    }
}

/// A host `level_caps` may name: `(index in needs, work left or place, ratio, cap)`.
type OpenHost = (usize, i64, u64, u64);

/// Every host that may be named at all, with its work left: in `UNIT`ths of an executor, the
/// host's share of the target's work (its tasks over all the hosts' task counts) minus its
/// level (`level_of`). A host with no room left (fresh) gets cap 0 in `needs` here.
fn open_hosts(
    needs: &mut [HostNeed<'_>],
    work: &dyn Fn(&HostName) -> (u32, Option<u32>),
    demand: &Demand,
    level_of: &dyn Fn(&HostName) -> u64,
    scaling: Scaling,
    fresh: bool,
) -> Vec<OpenHost> {
    let aware = scaling.aware;
    // The hosts' task counts add up to about the replication factor times the locality-aware
    // tasks (a task counts on each host holding its block: three on HDFS), so the per-host work
    // is divided by their sum, not by the tasks, for the estimates to add up to the target.
    // With the tasks as divisor every host's work was three times its share: the gaps between
    // hosts were too, and with the node capacity unknown 12 requests went 6 and 6 on the two
    // busiest hosts of many (`fresh_names_follow_the_work_share`).
    let counted: u128 = demand
        .host_to_local_task_count
        .values()
        .map(|&c| u128::from(c))
        .sum::<u128>()
        .max(1);
    let target = u128::from(demand.target_executors);
    let mut open: Vec<OpenHost> = Vec::with_capacity(needs.len());
    for (i, n) in needs.iter_mut().enumerate() {
        let level = level_of(n.host);
        let (count, capacity) = work(n.host);
        // Fresh: a node is not named past its room (the requests past it would wait for a
        // container the node cannot hold, then go wherever YARN puts them, rule 4).
        let room = match capacity {
            Some(c) if fresh => u64::from(c).saturating_sub(level),
            _ => u64::MAX,
        };
        if room == 0 {
            n.cap = Some(0);
            continue;
        }
        let r = scaling.ratio(n.need).min(aware);
        // Fresh: dealt to any request (`Placement::round_up`), so not limited by the ratio.
        let cap = n.cap.unwrap_or(u64::MAX).min(room);
        let cap = if fresh { cap.min(aware) } else { cap.min(r) };
        if n.need == 0 || cap == 0 {
            continue;
        }
        // Not fresh: every host's work counts as none, which leaves the equal levels.
        let count = if fresh { count } else { 0 };
        // Where the node's room is known, the fill order counts each host's work twice
        // (`FRESH_STEEPNESS`): the gaps between hosts double, so the hosts most tasks prefer
        // are named more times before the quiet ones are reached. The room caps them.
        let steep = if capacity.is_some() {
            FRESH_STEEPNESS
        } else {
            1
        };
        let busy =
            (u128::from(count) * target * UNIT as u128 * steep / counted).min(1 << 60) as i64;
        let left = busy.saturating_sub((level.min(1 << 40) as i64).saturating_mul(UNIT));
        open.push((i, left, r, cap));
    }
    open
}

/// How many times a host at fill-order `place` with cap `cap` is named at level `l`.
fn cap_at(l: i64, place: i64, cap: u64) -> u64 {
    if l < place {
        0
    } else {
        cap.min(((l - place) / UNIT) as u64 + 1)
    }
}

/// The lowest `l` in `(lo, hi]` for which `ok` holds, given that `ok(hi)` holds and `ok(lo)`
/// is not known to.
fn lowest_with(mut lo: i64, mut hi: i64, ok: &mut dyn FnMut(i64) -> bool) -> i64 {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The level to fill the `open` hosts (by their places) to: the lowest with enough names
/// (see `level_caps`). `None` when no host is open.
fn fill_level(open: &[OpenHost], aware: u64, fresh: bool) -> Option<i64> {
    let (Some(lowest), Some(highest)) = (
        open.iter().map(|o| o.1).min(),
        (open.iter())
            .map(|o| {
                o.1.saturating_add(UNIT.saturating_mul(o.3.min(1 << 40) as i64 - 1))
            })
            .max(),
    ) else {
        return None;
    };
    // At `highest` every host has its whole cap (the caps as they were). A level is enough
    // when the narrow requests get as many names as they would get then: the requests from
    // `j` on can use `min(names, ratio - j)` of each host's names, and that is kept at every
    // `j` (or is at least the `aware - j` requests there), so that filling the hosts level
    // by level never leaves a request placed on a few popular hosts naming none of them.
    // What each `j` must keep: `min(top(j), aware - j)`, computed once for every level tried.
    let mut coverage = Coverage::default();
    let wants: Vec<i64> = (coverage
        .of(open.iter().map(|o| (o.2, o.3)), aware)
        .enumerate())
    .map(|(j, top)| top.min(aware as i64 - j as i64))
    .collect();
    let mut enough = |l: i64| {
        let got = coverage.of(open.iter().map(|o| (o.2, cap_at(l, o.1, o.3))), aware);
        got.zip(&wants).all(|(got, &want)| got >= want)
    };
    // `enough` holds from some level on (names only grow with it): the lowest. Its `j = 0`
    // term alone (enough names in all) is O(hosts) and usually decides: bisect on it first,
    // then search upwards with the whole test (O(hosts + aware)), doubling then bisecting.
    let names_at = |l: i64| -> i64 { open.iter().map(|o| cap_at(l, o.1, o.3) as i64).sum() };
    let wanted = wants[0];
    let first = lowest_with(lowest - 1, highest, &mut |l| names_at(l) >= wanted);
    let mut level = first;
    if !fresh && !enough(first) {
        // Only the caps as they were may do (on skewed demand the narrowest requests are
        // placed on the most popular host alone and need all of its names): one test tells,
        // instead of a search all the way up (15 tests at 10,000 hosts, a fifth of the step).
        level = highest;
        if enough(highest - 1) {
            let (mut lo, mut step) = (first, UNIT);
            loop {
                let hi = first.saturating_add(step).min(highest);
                if enough(hi) {
                    level = lowest_with(lo, hi, &mut enough);
                    break;
                }
                lo = hi;
                step = step.saturating_mul(2);
            }
        }
    }
    Some(level)
}

/// The resolution of the levels in `level_caps`: a 64th of an executor's work.
const UNIT: i64 = 64;

/// How many times its share of the target a host's work counts in a fresh placement's fill
/// order when the node's room is known (`level_caps`). The share itself (tasks over all the
/// hosts' task counts) spreads the names too thin: with replicated blocks a task counts on
/// three hosts, and the bound's placement (`sim::bound`) stacks executors on the hosts most
/// tasks prefer (up to the node's room), each of which then runs the tasks its quieter
/// replicas would have. Measured (simulator, per-key model, 10 seeds; BENCHMARKS.md "A
/// steeper fill order"): 1,000 nodes very skewed 70.9% node-local at 1x, 80.7% at 2x, 80.0%
/// at 3x (the old divisor), 78.4% at 4x; skewed 81.7 / 85.0 / 82.5 / 80.0%; 30% DataNode-only
/// 73.3 / 78.3 / 76.6 / 74.5%; the 12-node skewed trace 91.3 / 90.5 / 88.5 / 86.8%. With the
/// room unknown nothing stops a steeper order from naming one host more times than it can
/// hold (at 3x the design doc's example named two hosts 6 and 6 times instead of 4, 4, 3, 1),
/// so it stays 1x there; the simulator knows every node's room and cannot measure that case.
const FRESH_STEEPNESS: u128 = 2;

/// Item `j` for `j < aware`: how many names hosts of `(ratio, names)` can give the requests
/// from `j` on (a host's names go to distinct requests among the first `ratio`): the sum of
/// `min(names, ratio - j)` over the hosts with `ratio > j`. O(hosts + aware), by difference
/// arrays: a host adds `names` up to `ratio - names`, then `ratio - j` up to `ratio`. The
/// arrays are O(aware): bounded because the update step places at most
/// `placement::MAX_AWARE_REQUESTS` requests with locality (security audit L7: with a target
/// near `u32::MAX` they took 32 GiB and the process aborted). A piecewise linear form
/// without them was tried: 4-5x slower at 10,000 hosts (a sort per level tried).
///
/// One value keeps the arrays between calls: `level_caps` asks once per level it tries, and
/// allocating and zeroing fresh arrays each time (new pages, faulted in) was a tenth of an
/// update step at 10,000 hosts. The two arrays are interleaved, (constant, slope) per item,
/// so that a host's two updates at one index touch one cache line.
#[derive(Debug, Default)]
struct Coverage {
    diff: Vec<(i64, i64)>,
}

impl Coverage {
    fn of(
        &mut self,
        hosts: impl Iterator<Item = (u64, u64)>,
        aware: u64,
    ) -> impl Iterator<Item = i64> + '_ {
        let n = aware as usize + 1;
        self.diff.clear();
        self.diff.resize(n, (0, 0));
        let diff = &mut self.diff[..];
        for (ratio, names) in hosts {
            let r = ratio.min(aware);
            // `names` clamped to `r`, not `ratio`: with `ratio > aware`, `r - c` would underflow.
            let (r, c) = (r as usize, names.min(r) as usize);
            let a = r - c;
            diff[0].0 += c as i64;
            diff[a].0 += r as i64 - c as i64;
            diff[a].1 += 1;
            diff[r].0 -= r as i64;
            diff[r].1 -= 1;
        }
        let (mut k, mut m) = (0i64, 0i64);
        (self.diff[..n - 1].iter().enumerate()).map(move |(j, &(constant, slope))| {
            k += constant;
            m += slope;
            k - m * j as i64
        })
    }
}

/// Pending local requests count as containers already placed, spread over the hosts they were
/// placed on (for Spark: the nodes they name) so that the shares add up to the number of
/// requests.
fn pending_shares<'a>(local_pending: &[&'a PendingRequest]) -> HashMap<&'a HostName, f64> {
    let mut mentions: HashMap<&HostName, u64> = HashMap::new();
    for req in local_pending {
        for n in req.placed_hosts() {
            *mentions.entry(n).or_insert(0) += 1;
        }
    }
    let total: u64 = mentions.values().sum();
    let requests = local_pending.len() as f64;
    mentions
        .into_iter()
        .map(|(h, m)| (h, m as f64 * requests / total as f64))
        .collect()
}

/// How many executors a host's pending local tasks can keep busy at the target's pace: with
/// `target` executors running `tasks_per_executor` tasks each, the locality-aware tasks last
/// `aware / (target x tasks_per_executor)` waves, and `count` tasks fill
/// `count / tasks_per_executor` executor-waves, so `count x target / aware` executors at once.
/// Integer arithmetic, rounded up.
fn work_cap(count: u32, demand: &Demand) -> u64 {
    (u64::from(count) * u64::from(demand.target_executors))
        .div_ceil(u64::from(demand.locality_aware_tasks.max(1)))
}

fn ceil_to_u64(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x.ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::Coverage;

    /// The difference arrays against the sum they stand for, on every small case.
    #[test]
    fn covered_is_the_sum_of_min_names_and_ratio_minus_j() {
        let aware = 5u64;
        let pairs: Vec<(u64, u64)> = (1..=aware)
            .flat_map(|r| (0..=r).map(move |c| (r, c)))
            .collect();
        for a in &pairs {
            for b in &pairs {
                let hosts = [*a, *b, (aware, 1)];
                let got: Vec<i64> = Coverage::default()
                    .of(hosts.iter().copied(), aware)
                    .collect();
                let want: Vec<i64> = (0..aware)
                    .map(|j| {
                        hosts
                            .iter()
                            .map(|&(r, c)| c.min(r.saturating_sub(j)) as i64)
                            .sum()
                    })
                    .collect();
                assert_eq!(got, want, "{hosts:?}");
            }
        }
    }

    /// Security audit L7: an extreme demand is planned in memory bounded by the hosts and
    /// `MAX_AWARE_REQUESTS`, not the target (the per-`j` arrays alone were 2 x 8 x 2^32 bytes
    /// here, and the process aborted); the requests past the bound are asked without locality.
    #[test]
    fn an_extreme_target_is_planned_without_arrays_of_its_size() {
        use crate::allocator::{update_requests, Cluster, Demand, Snapshot, Strategy};
        use crate::topology::Topology;
        let hosts: Vec<crate::allocator::HostName> =
            (0..200).map(|i| format!("h{i}").as_str().into()).collect();
        let snapshot = Snapshot {
            demand: Demand {
                target_executors: u32::MAX,
                locality_aware_tasks: u32::MAX,
                host_to_local_task_count: hosts
                    .iter()
                    .enumerate()
                    .map(|(i, h)| (h.clone(), u32::MAX / (i as u32 + 1)))
                    .collect(),
                ..Demand::default()
            },
            tasks_per_executor: 1,
            ..Snapshot::default()
        };
        let plan = update_requests(
            &snapshot,
            Strategy::Default,
            &Topology::default(),
            &Cluster::default(),
        );
        assert_eq!(plan.added(), u64::from(u32::MAX));
    }
}
