//! Why executors are not coming: how long the AM's requests have gone without a grant, and
//! the likely reason, from a look at the cluster (its nodes and the app's queue).
//!
//! No YARN framework tells its user this; the RM itself only says "pending". The AM knows
//! what it asked and since when, so once requests have waited [`LOOK_AFTER_MS`] without a
//! grant it asks the shell for a look (RM REST: the app's queue, the node list), at most
//! every [`LOOK_EVERY_MS`], and [`diagnose`] names the first reason that fits: a queue that
//! is not running, executors larger than any node, a queue at its maximum capacity, a full
//! cluster, preferred hosts without room, or none of those (YARN should grant soon).
//! Sans-IO: times come in as arguments; the look comes in as data.

use std::collections::BTreeSet;

use yarn_client::rest::{NodeInfo, QueueInfo};

/// Requests waiting this long without a grant are looked into.
pub const LOOK_AFTER_MS: u64 = 3_000;
/// And looked into again this often while they keep waiting.
pub const LOOK_EVERY_MS: u64 = 5_000;

/// What the AM found out about the cluster (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct ClusterLook {
    /// The app's leaf queue, when the scheduler reports one.
    pub queue: Option<QueueInfo>,
    pub nodes: Vec<NodeInfo>,
}

/// What is waiting: executors of one size, and the hosts they prefer (empty when any host
/// will do for some of them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ask {
    pub executors: u32,
    pub memory_mb: i64,
    pub vcores: i64,
    pub preferred_hosts: BTreeSet<String>,
}

pub use yarn_am_wire::driver_api::WaitingView;

/// The wait, as the core follows it.
#[derive(Debug, Default)]
pub struct Waiting {
    since_ms: Option<u64>,
    executors: u32,
    waited_ms: u64,
    looking: bool,
    last_look_ms: Option<u64>,
    reason: Option<String>,
}

impl Waiting {
    /// How many executors are pending now (every loop pass): the wait starts with the
    /// first pending request and ends when none is left.
    pub fn observe(&mut self, now_ms: u64, executors: u32) {
        self.executors = executors;
        if executors == 0 {
            self.since_ms = None;
            self.reason = None;
            self.waited_ms = 0;
            return;
        }
        let since = *self.since_ms.get_or_insert(now_ms);
        self.waited_ms = now_ms.saturating_sub(since);
    }

    /// A container was granted: the scheduler is working, so the wait starts again.
    pub fn granted(&mut self, now_ms: u64) {
        if self.since_ms.is_some() {
            self.since_ms = Some(now_ms);
            self.waited_ms = 0;
            self.reason = None;
        }
    }

    /// Whether to look at the cluster now; true once per look (until [`Self::looked`]).
    pub fn look_wanted(&mut self, now_ms: u64) -> bool {
        let waited_enough = self
            .since_ms
            .is_some_and(|s| now_ms >= s.saturating_add(LOOK_AFTER_MS));
        let not_too_soon = self
            .last_look_ms
            .is_none_or(|t| now_ms >= t.saturating_add(LOOK_EVERY_MS));
        let wanted = waited_enough && not_too_soon && !self.looking;
        self.looking |= wanted;
        wanted
    }

    /// The look came back (`None`: it failed; the reason stays what it was), with what
    /// is pending now.
    pub fn looked(&mut self, now_ms: u64, look: Option<&ClusterLook>, ask: &Ask) {
        self.looking = false;
        self.last_look_ms = Some(now_ms);
        if let (Some(look), Some(_)) = (look, self.since_ms) {
            self.reason = Some(diagnose(ask, look));
        }
    }

    pub fn view(&self) -> Option<WaitingView> {
        self.since_ms.map(|_| WaitingView {
            executors: self.executors,
            waited_ms: self.waited_ms,
            reason: self.reason.clone(),
        })
    }
}

fn running(nodes: &[NodeInfo]) -> impl Iterator<Item = &NodeInfo> {
    nodes.iter().filter(|n| n.state == "RUNNING")
}

fn has_room(n: &NodeInfo, ask: &Ask) -> bool {
    n.avail_memory_mb >= ask.memory_mb && n.available_virtual_cores >= ask.vcores
}

fn queue_full(q: &QueueInfo) -> bool {
    q.absolute_max_capacity > 0.0 && q.absolute_used_capacity >= q.absolute_max_capacity * 0.99
}

/// The likely reason `ask` is not granted, given `look` (see the module doc for the order).
pub fn diagnose(ask: &Ask, look: &ClusterLook) -> String {
    let size = format!("{} MB and {} vcores", ask.memory_mb, ask.vcores);
    if let Some(q) = &look.queue {
        if !q.state.is_empty() && q.state != "RUNNING" {
            return format!(
                "queue {} is {}: it takes no new containers",
                q.queue_path, q.state
            );
        }
    }
    let nodes: Vec<&NodeInfo> = running(&look.nodes).collect();
    if nodes.is_empty() {
        return "no NodeManager is RUNNING".to_string();
    }
    let fits_some_node = nodes
        .iter()
        .any(|n| n.memory_mb() >= ask.memory_mb && n.vcores() >= ask.vcores);
    if !fits_some_node {
        let largest = nodes
            .iter()
            .max_by_key(|n| (n.memory_mb(), n.vcores()))
            .expect("not empty");
        return format!(
            "no node is large enough: each executor asks for {size}; the largest node ({}) has {} MB and {} vcores in all",
            largest.node_host_name,
            largest.memory_mb(),
            largest.vcores()
        );
    }
    let with_room: Vec<&&NodeInfo> = nodes.iter().filter(|n| has_room(n, ask)).collect();
    if let Some(q) = look.queue.as_ref().filter(|q| queue_full(q)) {
        return format!(
            "queue {} is at its maximum capacity: it uses {:.0}% of the cluster, its maximum is {:.0}%; executors come as other apps' containers end",
            q.queue_path, q.absolute_used_capacity, q.absolute_max_capacity
        );
    }
    if with_room.is_empty() {
        let most = nodes
            .iter()
            .max_by_key(|n| (n.avail_memory_mb, n.available_virtual_cores))
            .expect("not empty");
        let queue = look
            .queue
            .as_ref()
            .map(|q| {
                format!(
                    "; queue {} uses {:.0}% of the cluster",
                    q.queue_path, q.absolute_used_capacity
                )
            })
            .unwrap_or_default();
        return format!(
            "the cluster is full: no node has {size} free (the most free: {} with {} MB and {} vcores){queue}; executors come as other containers end",
            most.node_host_name, most.avail_memory_mb, most.available_virtual_cores
        );
    }
    if !ask.preferred_hosts.is_empty()
        && !with_room
            .iter()
            .any(|n| ask.preferred_hosts.contains(&n.node_host_name))
    {
        let hosts: Vec<&str> = ask
            .preferred_hosts
            .iter()
            .take(5)
            .map(String::as_str)
            .collect();
        return format!(
            "waiting for locality: the preferred hosts ({}) have no room for {size}, other nodes do; requests relax to them after the locality wait",
            hosts.join(", ")
        );
    }
    let n = with_room[0];
    format!(
        "nodes have room ({} has {} MB and {} vcores free): YARN should grant on their next heartbeats",
        n.node_host_name, n.avail_memory_mb, n.available_virtual_cores
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(host: &str, free_mb: i64, free_vcores: i64) -> NodeInfo {
        NodeInfo {
            id: format!("{host}:45454"),
            rack: "/rack1".into(),
            state: "RUNNING".into(),
            node_host_name: host.into(),
            node_http_address: String::new(),
            num_containers: 0,
            used_memory_mb: 4096 - free_mb,
            avail_memory_mb: free_mb,
            used_virtual_cores: 4 - free_vcores,
            available_virtual_cores: free_vcores,
            health_report: String::new(),
            node_labels: vec![],
        }
    }

    fn queue(state: &str, used: f64, max: f64) -> QueueInfo {
        QueueInfo {
            queue_name: "default".into(),
            queue_path: "root.default".into(),
            state: state.into(),
            absolute_used_capacity: used,
            absolute_max_capacity: max,
            num_pending_applications: 0,
        }
    }

    fn ask(memory_mb: i64, hosts: &[&str]) -> Ask {
        Ask {
            executors: 2,
            memory_mb,
            vcores: 1,
            preferred_hosts: hosts.iter().map(|h| h.to_string()).collect(),
        }
    }

    fn look(q: Option<QueueInfo>, nodes: Vec<NodeInfo>) -> ClusterLook {
        ClusterLook { queue: q, nodes }
    }

    #[test]
    fn each_reason_in_its_order() {
        let free = vec![node("nm1", 512, 1), node("nm2", 2048, 2)];
        let cases = [
            (ask(1024, &[]), look(Some(queue("STOPPED", 0.0, 100.0)), free.clone()), "queue root.default is STOPPED"),
            (ask(1024, &[]), look(None, vec![]), "no NodeManager is RUNNING"),
            (ask(8192, &[]), look(None, free.clone()), "no node is large enough: each executor asks for 8192 MB and 1 vcores; the largest node (nm2) has 4096 MB"),
            (ask(1024, &[]), look(Some(queue("RUNNING", 40.0, 40.0)), free.clone()), "queue root.default is at its maximum capacity: it uses 40% of the cluster, its maximum is 40%"),
            (ask(4096, &[]), look(Some(queue("RUNNING", 75.0, 100.0)), free.clone()), "the cluster is full: no node has 4096 MB and 1 vcores free (the most free: nm2 with 2048 MB and 2 vcores); queue root.default uses 75% of the cluster"),
            (ask(1024, &["nm1"]), look(None, free.clone()), "waiting for locality: the preferred hosts (nm1) have no room"),
            (ask(1024, &["nm2"]), look(None, free.clone()), "nodes have room (nm2 has 2048 MB and 2 vcores free)"),
        ];
        for (a, l, want) in cases {
            let got = diagnose(&a, &l);
            assert!(
                got.starts_with(want),
                "{got:?} does not start with {want:?}"
            );
        }
    }

    #[test]
    fn a_look_is_asked_after_the_wait_and_not_again_too_soon() {
        let mut w = Waiting::default();
        w.observe(0, 0);
        assert!(w.view().is_none() && !w.look_wanted(0), "nothing pending");
        w.observe(1_000, 2);
        assert!(!w.look_wanted(1_000 + LOOK_AFTER_MS - 1));
        w.observe(1_000 + LOOK_AFTER_MS, 2);
        assert!(w.look_wanted(1_000 + LOOK_AFTER_MS));
        assert!(!w.look_wanted(1_000 + LOOK_AFTER_MS), "one look at a time");
        let full = look(None, vec![node("nm1", 0, 0)]);
        w.looked(5_000, Some(&full), &ask(1024, &[]));
        let v = w.view().unwrap();
        assert_eq!((v.executors, v.waited_ms), (2, LOOK_AFTER_MS));
        assert!(v.reason.unwrap().starts_with("the cluster is full"));
        assert!(!w.look_wanted(5_000 + LOOK_EVERY_MS - 1));
        assert!(w.look_wanted(5_000 + LOOK_EVERY_MS));
        w.looked(12_000, None, &ask(1024, &[]));
        assert!(
            w.view().unwrap().reason.is_some(),
            "a failed look keeps the reason"
        );
    }

    #[test]
    fn a_grant_starts_the_wait_again_and_nothing_pending_ends_it() {
        let mut w = Waiting::default();
        w.observe(0, 2);
        w.observe(9_000, 2);
        assert!(w.look_wanted(9_000));
        w.looked(
            9_000,
            Some(&look(None, vec![node("nm1", 0, 0)])),
            &ask(1024, &[]),
        );
        w.granted(10_000);
        w.observe(11_000, 2);
        let v = w.view().unwrap();
        assert_eq!((v.waited_ms, v.reason), (1_000, None));
        w.observe(12_000, 0);
        assert!(w.view().is_none());
    }
}
