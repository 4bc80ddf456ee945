//! An upper bound on the node-local share any placement of the simulator's executors could
//! reach: the offline optimum the strategies are measured against.
//!
//! # The model the bound is for
//!
//! One stage of `N` tasks, each preferring up to 3 hosts; `E` executors of `s` task slots
//! each, placed on the NodeManager hosts (at most `C` on a node) before the stage and kept
//! through it; every round every free slot runs a pending task (the simulator's driver with
//! no locality wait), so the stage takes `R = ceil(N / (s E))` rounds. That is the
//! simulator's run when YARN grants every executor in the stage's first round, as it does on
//! the standard traces (their 58 rounds are exactly the three stages' `R`). A task runs
//! node-local when a slot on one of its hosts takes it. The optimum is the most node-local
//! tasks over every placement and every schedule.
//!
//! # The relaxation
//!
//! Over a whole stage, host `h` with `x_h` executors runs at most `s R x_h` tasks, and a task
//! can run node-local only on a host with an executor. Dropping the round structure gives a
//! problem whose optimum is at least the schedule's: choose `x_h` in `0..=C` with
//! `sum x_h <= E`, and give each task to at most one of its hosts with `x_h > 0`, at most
//! `s R x_h` tasks to host `h`. Its Lagrangian relaxation, with a price `mu_t` in `[0, 1]` for
//! each task's "at most one host", splits by host:
//!
//! `L(mu) = sum_t mu_t + max { sum_h v_h(x_h) : sum_h x_h <= E }`, where `v_h(x)` is the sum
//! of the `s R x` largest positive `1 - mu_t` over the tasks preferring `h`.
//!
//! Weak duality: for any prices, `L(mu)` is at least the value of every feasible assignment
//! (each adds `sum_t mu_t (1 - tasks' hosts)` >= 0), hence at least the optimum. `v_h` is
//! concave in `x` (it adds slices of a sorted list), so taking the `E` largest per-executor
//! gains over all hosts solves the inner problem exactly. A subgradient search lowers the
//! prices' bound; every `L(mu)` it computes is a bound, and the smallest is kept. Not a
//! greedy placement: nothing here claims to be achievable.
//!
//! Where it is loose: the round structure (a schedule launches exactly `s E` tasks a round,
//! so a host cannot bank its slots for the last round), and the duality gap of the
//! "at most one host" coupling (small prices cannot tell three hosts apart). Where it is
//! tight: tasks that prefer one host each and a stage of one round (tests below).
//!
//! Pure: numbers in, numbers out; no clock, no I/O.

/// One stage's placement problem (module docs).
#[derive(Debug, Clone, Copy)]
pub struct Stage<'a> {
    /// Each task's preferred hosts (indices; repeats count once).
    pub tasks: &'a [[u32; 3]],
    /// Hosts `0..nodes` run a NodeManager; higher indices hold data only.
    pub nodes: usize,
    /// Executors a node can hold (`C`).
    pub capacity: u32,
    /// Executors to place (`E`).
    pub executors: u32,
    /// Task slots per executor (`s`).
    pub slots: u32,
}

/// Subgradient steps: each is O(tasks x 3 + hosts log hosts).
const STEPS: usize = 60;

impl Stage<'_> {
    /// Executors that fit on the nodes.
    fn placeable(&self) -> u64 {
        u64::from(self.executors).min(self.nodes as u64 * u64::from(self.capacity))
    }

    /// Rounds the stage takes with every executor there from its start (`R`).
    pub fn rounds(&self) -> u64 {
        let per_round = u64::from(self.slots) * self.placeable();
        if per_round == 0 {
            return 0;
        }
        (self.tasks.len() as u64).div_ceil(per_round)
    }

    /// Each task's distinct NodeManager hosts.
    fn hosts_of(&self, t: usize) -> impl Iterator<Item = usize> + '_ {
        let p = self.tasks[t];
        (0..3)
            .filter(move |&i| !p[..i].contains(&p[i]))
            .map(move |i| p[i] as usize)
            .filter(move |&h| h < self.nodes)
    }

    /// An upper bound on the node-local tasks of any placement and schedule (module docs).
    pub fn node_local_bound(&self) -> u64 {
        self.solve().0
    }

    /// A placement of every executor that fits (executors per NodeManager host): the inner
    /// solution at the prices of the best bound, the executors it leaves out put on the
    /// hosts most tasks prefer. A candidate, not an optimum: played through the simulator's
    /// rounds it gives a share some placement reaches, a lower bound on the optimum.
    pub fn placement(&self) -> Vec<u32> {
        let mut x = self.solve().1;
        let mut left = self.placeable() - x.iter().map(|&k| u64::from(k)).sum::<u64>();
        let mut by_tasks: Vec<(usize, usize)> = vec![(0, 0); self.nodes];
        for (h, b) in by_tasks.iter_mut().enumerate() {
            b.1 = h;
        }
        for t in 0..self.tasks.len() {
            for h in self.hosts_of(t) {
                by_tasks[h].0 += 1;
            }
        }
        by_tasks.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        while left > 0 {
            let before = left;
            for &(_, h) in &by_tasks {
                if left > 0 && x[h] < self.capacity {
                    x[h] += 1;
                    left -= 1;
                }
            }
            if left == before {
                break;
            }
        }
        x
    }

    /// The best bound and the inner solution's executors per host at its prices.
    fn solve(&self) -> (u64, Vec<u32>) {
        let n = self.tasks.len();
        let e = self.placeable();
        let per = u64::from(self.slots) * self.rounds();
        let mut best_x = vec![0u32; self.nodes];
        if n == 0 || e == 0 || per == 0 {
            return (0, best_x);
        }
        let mut by_host: Vec<Vec<u32>> = vec![Vec::new(); self.nodes];
        let mut coverable = 0u64;
        for t in 0..n {
            let mut any = false;
            for h in self.hosts_of(t) {
                by_host[h].push(t as u32);
                any = true;
            }
            coverable += u64::from(any);
        }
        let mut best = coverable as f64;
        let mut mu = vec![0.0f64; n];
        let mut assigned = vec![0i32; n];
        let mut values: Vec<(f64, u32)> = Vec::new();
        let mut gains: Vec<(f64, usize)> = Vec::new();
        for step in 0..STEPS {
            // The inner problem: per-executor gains of every host, the `e` largest.
            gains.clear();
            for (h, ts) in by_host.iter().enumerate() {
                priced(ts, &mu, &mut values);
                for x in 0..u64::from(self.capacity) {
                    let from = (per * x).min(values.len() as u64) as usize;
                    let to = (per * (x + 1)).min(values.len() as u64) as usize;
                    if from == to {
                        break;
                    }
                    gains.push((values[from..to].iter().map(|v| v.0).sum(), h));
                }
            }
            gains.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            gains.truncate(e as usize);
            let bound: f64 = mu.iter().sum::<f64>() + gains.iter().map(|g| g.0).sum::<f64>();
            let mut x = vec![0u64; self.nodes];
            for &(_, h) in &gains {
                x[h] += 1;
            }
            if bound < best {
                best = bound;
                best_x = x.iter().map(|&k| k as u32).collect();
            }
            // A subgradient: 1 - (hosts the inner solution gave each task to).
            assigned.iter_mut().for_each(|a| *a = 0);
            for (h, ts) in by_host.iter().enumerate() {
                if x[h] == 0 {
                    continue;
                }
                priced(ts, &mu, &mut values);
                for v in values.iter().take((per * x[h]) as usize) {
                    assigned[v.1 as usize] += 1;
                }
            }
            let alpha = 0.25 / (1.0 + step as f64 / 16.0);
            for (m, &a) in mu.iter_mut().zip(&assigned) {
                *m = (*m - alpha * f64::from(1 - a)).clamp(0.0, 1.0);
            }
        }
        // Every `L(mu)` is at least the (whole) optimum; the slack absorbs rounding.
        (((best + 1e-6).floor() as u64).min(coverable), best_x)
    }
}

/// The positive values `1 - mu_t` of the tasks `ts`, largest first, into `values`.
fn priced(ts: &[u32], mu: &[f64], values: &mut Vec<(f64, u32)>) {
    values.clear();
    values.extend(
        ts.iter()
            .map(|&t| (1.0 - mu[t as usize], t))
            .filter(|v| v.0 > 0.0),
    );
    values.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
}

#[cfg(test)]
mod tests {
    use super::Stage;

    /// The optimum by brute force: every placement of exactly the executors that fit, every
    /// split of the tasks over the rounds (`s E` a round, the rest in the last), and in each
    /// round the most tasks matched to slots on their hosts.
    fn brute_force(s: &Stage) -> u64 {
        let e = s.placeable();
        let per_round = (u64::from(s.slots) * e) as usize;
        let rounds = s.rounds() as usize;
        let mut best = 0;
        let mut x = vec![0u32; s.nodes];
        placements(s, &mut x, 0, e as u32, &mut |x| {
            let slots: Vec<usize> = x.iter().map(|&k| (k * s.slots) as usize).collect();
            let mut round = vec![0usize; s.tasks.len()];
            best = best.max(schedules(s, &slots, &mut round, 0, per_round, rounds));
        });
        best
    }

    fn placements(s: &Stage, x: &mut [u32], h: usize, left: u32, f: &mut dyn FnMut(&[u32])) {
        if h == s.nodes {
            if left == 0 {
                f(x);
            }
            return;
        }
        for k in 0..=s.capacity.min(left) {
            x[h] = k;
            placements(s, x, h + 1, left - k, f);
        }
        x[h] = 0;
    }

    fn schedules(
        s: &Stage,
        slots: &[usize],
        round: &mut [usize],
        t: usize,
        per_round: usize,
        rounds: usize,
    ) -> u64 {
        if t == s.tasks.len() {
            // Every round but the last full.
            let full = (0..rounds.saturating_sub(1))
                .all(|r| round.iter().filter(|&&k| k == r).count() == per_round);
            if !full {
                return 0;
            }
            return (0..rounds)
                .map(|r| {
                    let ts: Vec<usize> = (0..s.tasks.len()).filter(|&i| round[i] == r).collect();
                    matching(s, &ts, slots)
                })
                .sum();
        }
        let mut best = 0;
        for r in 0..rounds {
            round[t] = r;
            best = best.max(schedules(s, slots, round, t + 1, per_round, rounds));
        }
        best
    }

    /// Most tasks of `ts` matched to slots on their hosts (augmenting paths).
    fn matching(s: &Stage, ts: &[usize], slots: &[usize]) -> u64 {
        let mut load = vec![Vec::<usize>::new(); s.nodes];
        fn augment(
            s: &Stage,
            t: usize,
            slots: &[usize],
            load: &mut Vec<Vec<usize>>,
            seen: &mut Vec<bool>,
        ) -> bool {
            for h in s.hosts_of(t).collect::<Vec<_>>() {
                if seen[h] {
                    continue;
                }
                seen[h] = true;
                if load[h].len() < slots[h] {
                    load[h].push(t);
                    return true;
                }
                for i in 0..load[h].len() {
                    let other = load[h][i];
                    if augment(s, other, slots, load, seen) {
                        load[h][i] = t;
                        return true;
                    }
                }
            }
            false
        }
        ts.iter()
            .filter(|&&t| augment(s, t, slots, &mut load, &mut vec![false; s.nodes]))
            .count() as u64
    }

    /// SplitMix64, for the random small cases.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// On random small stages (up to 3 nodes and a data-only host, 6 tasks, 3 rounds) the
    /// bound is never below the optimum.
    #[test]
    fn the_bound_is_never_below_the_brute_force_optimum() {
        let mut rng = 27u64;
        for _ in 0..300 {
            let nodes = 1 + (next(&mut rng) % 3) as usize;
            let hosts = nodes as u64 + 1;
            let n = 1 + (next(&mut rng) % 6) as usize;
            let tasks: Vec<[u32; 3]> = (0..n)
                .map(|_| {
                    let k = 1 + next(&mut rng) % 3;
                    let mut p = [0u32; 3];
                    for i in 0..3 {
                        p[i] = if (i as u64) < k {
                            (next(&mut rng) % hosts) as u32
                        } else {
                            p[0]
                        };
                    }
                    p
                })
                .collect();
            let stage = Stage {
                tasks: &tasks,
                nodes,
                capacity: 1 + (next(&mut rng) % 2) as u32,
                executors: 1 + (next(&mut rng) % 3) as u32,
                slots: 1 + (next(&mut rng) % 2) as u32,
            };
            if stage.rounds() > 3 {
                continue;
            }
            let (bound, opt) = (stage.node_local_bound(), brute_force(&stage));
            assert!(bound >= opt, "{stage:?}: bound {bound} < optimum {opt}");
        }
    }

    /// Tight where the relaxation loses nothing: one round, each task preferring one host.
    #[test]
    fn the_bound_is_the_optimum_when_tasks_prefer_one_host_in_one_round() {
        // h0 wanted by 3 tasks, h1 by 2, h2 by 1, h3 (data only) by 1; 2 executors of 2 slots,
        // one a node: the best is h0 and h1, 2 + 2 tasks.
        let tasks = [
            [0, 0, 0],
            [0, 0, 0],
            [0, 0, 0],
            [1, 1, 1],
            [1, 1, 1],
            [2, 2, 2],
            [3, 3, 3],
        ];
        let stage = Stage {
            tasks: &tasks,
            nodes: 3,
            capacity: 1,
            executors: 2,
            slots: 2,
        };
        assert_eq!(stage.rounds(), 2);
        let one_round = Stage {
            tasks: &tasks[..4],
            executors: 2,
            ..stage
        };
        assert_eq!(one_round.rounds(), 1);
        assert_eq!(one_round.node_local_bound(), brute_force(&one_round));
        assert_eq!(one_round.node_local_bound(), 3);
        // Two rounds: the bound (h0 3 + h1 2 over 4 slot-rounds each) is still the optimum here.
        assert_eq!(stage.node_local_bound(), brute_force(&stage));
        assert_eq!(stage.node_local_bound(), 5);
    }

    /// Tasks preferring only hosts without a NodeManager can never be node-local.
    #[test]
    fn data_only_hosts_give_nothing() {
        let tasks = [[5, 6, 7]; 4];
        let stage = Stage {
            tasks: &tasks,
            nodes: 3,
            capacity: 2,
            executors: 3,
            slots: 1,
        };
        assert_eq!(stage.node_local_bound(), 0);
    }
}
