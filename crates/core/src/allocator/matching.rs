//! Granted containers against pending requests: node level, then rack, then any.
//!
//! YARN answers an allocate call with whatever it granted since the previous one, not with an
//! answer per request, so the AM has to decide which request each container satisfies. We do
//! it in three passes over all granted containers (a container only competes at rack level once
//! every container has had its chance at node level); at node level the narrowest request
//! naming the container's host first, then one placed there without naming it (the default
//! strategy's work cap leaves some hosts unnamed), at rack and any level the oldest first.
//! At the any level we consume any-host requests before local ones, so a local request keeps
//! its chance of a local container. A container no request wants is released at once.
//!
//! Cost: requests that share a node list (one group of the update step) are inspected once,
//! so building the index is O(requests + distinct node lists), not O(requests x hosts).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use tracing::info;

use super::state::{HostName, ListKey, PendingRequest, RackName, Topology};

/// A container as YARN granted it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Container {
    /// YARN's container id, e.g. `container_1700000000000_0001_01_000002`.
    pub id: Arc<str>,
    pub host: HostName,
    pub rack: RackName,
    /// The allocation request id (request key) YARN granted it for, when known: the
    /// allocator charges it to a request of that key first (`tracker::RequestKeys`).
    pub allocation_request_id: Option<i64>,
}

pub use yarn_am_wire::placement::Locality;

/// The outcome for the containers of one allocate response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchOutcome {
    /// `(container index, pending index, level)`; every pending index at most once.
    pub matched: Vec<(usize, usize, Locality)>,
    /// Containers that matched no request: release them.
    pub unmatched: Vec<usize>,
}

/// Matches `containers` against `pending` (oldest first). Pure: the caller removes the matched
/// requests from its table.
pub fn match_containers(
    containers: &[Container],
    pending: &[PendingRequest],
    topology: &Topology,
) -> MatchOutcome {
    let mut queues = Queues::build(containers, pending, topology);
    let mut used = vec![false; pending.len()];
    let mut outcome = MatchOutcome::default();
    let left = queues.match_node_then_rack(containers, &mut used, &mut outcome);
    match_any(left, &mut queues.any_host, &mut used, &mut outcome);
    log_matches(containers, pending, &outcome);
    outcome
}

/// The pending requests (indices) each container could take, per level: keyed by the
/// containers' hosts and racks only, so a request naming a thousand hosts costs a lookup each,
/// not a queue each.
struct Queues<'a> {
    /// Requests naming a host, narrowest first (see `build`).
    by_host: HashMap<&'a str, VecDeque<usize>>,
    by_rack: HashMap<&'a str, VecDeque<usize>>,
    /// Requests placed on a host without naming it to YARN (the default strategy's work cap):
    /// a container there is where the request wanted one, but a request naming the host is
    /// taken first, so that what YARN was told stays what it counted down.
    by_placed: HashMap<&'a str, VecDeque<usize>>,
    /// Requests naming no location, oldest first.
    any_host: VecDeque<usize>,
}

impl<'a> Queues<'a> {
    fn build(
        containers: &'a [Container],
        pending: &[PendingRequest],
        topology: &Topology,
    ) -> Queues<'a> {
        let mut by_host: HashMap<&str, VecDeque<usize>> = containers
            .iter()
            .map(|c| (&*c.host, VecDeque::new()))
            .collect();
        let mut by_rack: HashMap<&str, VecDeque<usize>> = containers
            .iter()
            .map(|c| (&*c.rack, VecDeque::new()))
            .collect();
        let mut any_host: VecDeque<usize> = VecDeque::new();
        let mut by_placed: HashMap<&str, VecDeque<usize>> = containers
            .iter()
            .map(|c| (&*c.host, VecDeque::new()))
            .collect();

        // Which of the containers' hosts / racks a request names, and hosts it was placed on
        // without naming them, cached per shared list.
        let mut seen: HashMap<ListKey, Wanted> = HashMap::new();
        for (i, req) in pending.iter().enumerate() {
            if req.is_any_host() {
                any_host.push_back(i);
            }
            let key = req.list_key();
            let (hosts, racks, placed_only) = seen
                .entry(key)
                .or_insert_with(|| wanted(req, &by_host, &by_rack, &by_placed, topology));
            for h in hosts.iter() {
                by_host.get_mut(h).expect("indexed host").push_back(i);
            }
            for r in racks.iter() {
                by_rack.get_mut(r).expect("indexed rack").push_back(i);
            }
            for h in placed_only.iter() {
                by_placed.get_mut(h).expect("indexed host").push_back(i);
            }
        }

        // At node level a container takes the request with the fewest named hosts first
        // (oldest among equals): a wide request can still serve a container on one of its
        // other hosts, a narrow one cannot. Oldest-first alone lets containers on a popular
        // host use up the requests that were the only ones naming a less popular host, whose
        // containers then fall to the any level although their host was asked for.
        for queue in by_host.values_mut() {
            queue
                .make_contiguous()
                .sort_by_key(|&i| (pending[i].nodes.len(), i));
        }
        Queues {
            by_host,
            by_rack,
            by_placed,
            any_host,
        }
    }

    /// The node pass over every container, then the rack pass over those left; returns the
    /// containers still unmatched, in order.
    fn match_node_then_rack(
        &mut self,
        containers: &[Container],
        used: &mut [bool],
        outcome: &mut MatchOutcome,
    ) -> Vec<usize> {
        let mut left: Vec<usize> = (0..containers.len()).collect();
        for level in [Locality::Node, Locality::Rack] {
            let mut still = Vec::new();
            for &c in &left {
                let host = &*containers[c].host;
                let found = match level {
                    Locality::Node => take(self.by_host.get_mut(host), used)
                        .or_else(|| take(self.by_placed.get_mut(host), used)),
                    _ => take(self.by_rack.get_mut(&*containers[c].rack), used),
                };
                match found {
                    Some(r) => outcome.matched.push((c, r, level)),
                    None => still.push(c),
                }
            }
            left = still;
        }
        left
    }
}

/// Which of the containers' hosts / racks a request names, and the containers' hosts it was
/// placed on without naming them.
type Wanted<'a> = (Vec<&'a str>, Vec<&'a str>, Vec<&'a str>);

/// `req`'s [`Wanted`]: each key once, as the index's own (borrowed from the containers).
fn wanted<'a>(
    req: &PendingRequest,
    by_host: &HashMap<&'a str, VecDeque<usize>>,
    by_rack: &HashMap<&'a str, VecDeque<usize>>,
    by_placed: &HashMap<&'a str, VecDeque<usize>>,
    topology: &Topology,
) -> Wanted<'a> {
    let mut hosts: Vec<&str> = Vec::new();
    let mut racks: Vec<&str> = Vec::new();
    let named: HashSet<&str> = req.nodes.iter().map(|n| &**n).collect();
    let placed_only: Vec<&str> = req
        .placed
        .iter()
        .filter(|n| !named.contains(&***n))
        .filter_map(|n| by_placed.get_key_value(&**n).map(|(k, _)| *k))
        .collect();
    let mut add_rack = |r: &'_ str| {
        if let Some((k, _)) = by_rack.get_key_value(r) {
            if !racks.contains(k) {
                racks.push(k);
            }
        }
    };
    for n in req.nodes.iter() {
        if let Some((k, _)) = by_host.get_key_value(&**n) {
            if !hosts.contains(k) {
                hosts.push(k);
            }
        }
        if req.racks.is_empty() {
            add_rack(topology.rack_of(n));
        }
    }
    for r in req.racks.iter() {
        add_rack(r);
    }
    (hosts, racks, placed_only)
}

/// Any level: any-host requests first, then the oldest remaining request of any kind.
fn match_any(
    left: Vec<usize>,
    any_host: &mut VecDeque<usize>,
    used: &mut [bool],
    outcome: &mut MatchOutcome,
) {
    let mut oldest = 0usize;
    for c in left {
        let r = take(Some(&mut *any_host), used).or_else(|| {
            while oldest < used.len() && used[oldest] {
                oldest += 1;
            }
            (oldest < used.len()).then(|| {
                used[oldest] = true;
                oldest
            })
        });
        match r {
            Some(r) => outcome.matched.push((c, r, Locality::Any)),
            None => outcome.unmatched.push(c),
        }
    }
}

fn log_matches(containers: &[Container], pending: &[PendingRequest], outcome: &MatchOutcome) {
    for &(c, r, level) in &outcome.matched {
        let req = &pending[r];
        info!(
            container = %containers[c].id,
            host = %containers[c].host,
            ?level,
            request = %NamedHosts(req),
            placed = req.placed_hosts().len(),
            "grant matched to a request"
        );
    }
}

/// A request's named hosts for the log: the first few names and how many, its racks.
/// Which YARN request key filled the grant (strict or relaxed) is yarn-client's
/// `granted by the RM` line for the same container.
struct NamedHosts<'a>(&'a PendingRequest);

impl std::fmt::Display for NamedHosts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 4;
        let nodes = &self.0.nodes;
        if nodes.is_empty() {
            f.write_str("no host")?;
        } else {
            for (i, n) in nodes.iter().take(SHOWN).enumerate() {
                write!(f, "{}{n}", if i == 0 { "" } else { "," })?;
            }
            if nodes.len() > SHOWN {
                write!(f, ",+{}", nodes.len() - SHOWN)?;
            }
        }
        write!(f, " ({} racks)", self.0.racks.len())
    }
}

/// Pops the oldest request in `queue` not yet used, and marks it used.
fn take(queue: Option<&mut VecDeque<usize>>, used: &mut [bool]) -> Option<usize> {
    let queue = queue?;
    while let Some(i) = queue.pop_front() {
        if !used[i] {
            used[i] = true;
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(id: &str, host: &str, topology: &Topology) -> Container {
        Container {
            id: Arc::from(id),
            host: host.into(),
            rack: topology.rack_of(host).clone(),
            allocation_request_id: None,
        }
    }

    /// One container on each of `hosts`, ids `c0`, `c1`, ... in order.
    fn containers_on(hosts: &[&str], topology: &Topology) -> Vec<Container> {
        hosts
            .iter()
            .enumerate()
            .map(|(i, h)| container(&format!("c{i}"), h, topology))
            .collect()
    }

    /// What the real cluster showed (tests/cluster/it_spread.rs): 3 requests name {nm1, nm3} and 3 are
    /// placed on both but name nothing (work cap). Three containers on each host: all six are
    /// node-local, the named requests taken first.
    #[test]
    fn a_container_on_a_host_a_request_was_placed_on_is_node_local() {
        let topology = Topology::default();
        let both: Arc<[HostName]> = Arc::from(vec!["nm1".into(), "nm3".into()]);
        let named = PendingRequest::with_nodes(both.clone());
        let unnamed = PendingRequest {
            placed: both,
            ..PendingRequest::any_host()
        };
        let pending = vec![
            named.clone(),
            named.clone(),
            named,
            unnamed.clone(),
            unnamed.clone(),
            unnamed,
        ];
        let containers = containers_on(&["nm1", "nm1", "nm1", "nm3", "nm3", "nm3"], &topology);
        let out = match_containers(&containers, &pending, &topology);
        assert!(out.unmatched.is_empty());
        let mut matched = out.matched.clone();
        matched.sort();
        assert!(matched.iter().all(|m| m.2 == Locality::Node), "{matched:?}");
        assert_eq!(
            matched.iter().map(|m| m.1).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5],
            "the named requests go to the first containers"
        );
        // An any-level container (on a host no request was placed on) takes an unnamed one
        // only at the any level.
        let out = match_containers(
            &[container("x", "nm2", &topology)],
            &pending[3..],
            &topology,
        );
        assert_eq!(out.matched, vec![(0, 0, Locality::Any)]);
    }

    /// What the real cluster showed (tests/cluster/it_am.rs): requests 2 x {nm1, nm3} (older) and
    /// 2 x {nm3}; containers on nm3 came first in the response. Oldest-first gave the nm3
    /// containers both wide requests and left the nm1 containers only {nm3}: any level.
    #[test]
    fn a_container_takes_the_narrowest_request_naming_its_host() {
        let topology = Topology::new(
            [("nm1", "/rack1"), ("nm3", "/rack2")]
                .into_iter()
                .map(|(h, r)| (h.into(), r.into()))
                .collect(),
        );
        let wide: Arc<[HostName]> = Arc::from(vec!["nm1".into(), "nm3".into()]);
        let narrow: Arc<[HostName]> = Arc::from(vec!["nm3".into()]);
        let pending = vec![
            PendingRequest::with_nodes(wide.clone()),
            PendingRequest::with_nodes(wide),
            PendingRequest::with_nodes(narrow.clone()),
            PendingRequest::with_nodes(narrow),
        ];
        let containers = containers_on(&["nm3", "nm3", "nm1", "nm1"], &topology);
        let out = match_containers(&containers, &pending, &topology);
        assert!(out.unmatched.is_empty());
        let mut got: Vec<(usize, usize, Locality)> = out.matched;
        got.sort();
        assert_eq!(
            got,
            vec![
                (0, 2, Locality::Node),
                (1, 3, Locality::Node),
                (2, 0, Locality::Node),
                (3, 1, Locality::Node)
            ]
        );
    }
}
