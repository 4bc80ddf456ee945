//! Ratio round-up placement, computed as groups.
//!
//! Spark's placement emits one request per container: request `i` names every host whose scaled
//! ratio is still above `i`. The host sets are therefore *nested*: sorted by ratio, request `i`
//! names a prefix of the hosts, and the prefix only shrinks. We sort the hosts by ratio once and
//! describe each run of identical requests by `(count, prefix length)`. That is
//! O(hosts log hosts) whatever the number of containers, and a group's node list is a slice
//! of one shared vector instead of a copy per container.

use std::collections::HashMap;

use super::state::{HostName, RackName, Topology};

/// How many containers a host should still get, before scaling (Spark's `need(h)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostNeed {
    pub host: HostName,
    pub need: u64,
    /// The most requests that may name this host (default strategy: what the node can still
    /// hold). `None`: no limit, which is what Spark does.
    pub cap: Option<u64>,
}

/// Where `potential` containers should go.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// Hosts named by at least one request, most-named first (ties by name, for determinism).
    hosts: Vec<HostName>,
    /// Distinct racks of `hosts`, in order of first appearance.
    racks: Vec<RackName>,
    /// Runs of identical requests, widest first (the order Spark emits them).
    groups: Vec<Span>,
    /// Containers placed without locality.
    any_host: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    count: u64,
    hosts: usize,
    racks: usize,
}

/// `count` identical requests naming `nodes` and `racks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestGroup<'a> {
    pub count: u64,
    pub nodes: &'a [HostName],
    pub racks: &'a [RackName],
}

impl Placement {
    /// Places `potential` containers given each preferred host's need (steps 4-6 of the
    /// strategy in docs/allocator.md).
    pub fn round_up(potential: u64, needs: &[HostNeed], topology: &Topology) -> Placement {
        let aware_total: u64 = needs.iter().map(|n| n.need).sum();
        let free = potential.saturating_sub(aware_total);
        let aware = potential - free;
        let Some(largest) = needs.iter().map(|n| n.need).max().filter(|&m| m > 0) else {
            return Placement {
                any_host: potential,
                ..Placement::default()
            };
        };
        if aware == 0 {
            return Placement {
                any_host: potential,
                ..Placement::default()
            };
        }

        // Spark scales in floating point: ceil(need * aware / largest). Same order of operations,
        // so the results agree bit for bit.
        let mut ranked: Vec<(u64, &HostName)> = needs
            .iter()
            .filter(|n| n.need > 0)
            .map(|n| {
                let scaled = (n.need as f64 * aware as f64 / largest as f64).ceil() as u64;
                (n.cap.map_or(scaled, |c| scaled.min(c)), &n.host)
            })
            .filter(|&(r, _)| r > 0)
            .collect();
        ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));

        // With caps the widest host may be named fewer than `aware` times; the rest of the
        // locality-aware containers can go anywhere.
        let named = ranked.first().map_or(0, |r| r.0);
        let mut placement = Placement {
            hosts: Vec::with_capacity(ranked.len()),
            any_host: free + (aware - named),
            ..Placement::default()
        };
        let mut seen_racks: HashMap<&RackName, ()> = HashMap::new();
        // Walk from the most-named host down; a span ends where the ratio drops.
        let mut spans_desc = Vec::new();
        for (i, &(ratio, host)) in ranked.iter().enumerate() {
            placement.hosts.push(host.clone());
            let rack = topology.rack_of(host);
            if seen_racks.insert(rack, ()).is_none() {
                placement.racks.push(rack.clone());
            }
            let next = ranked.get(i + 1).map_or(0, |r| r.0);
            if next < ratio {
                spans_desc.push(Span {
                    count: ratio - next,
                    hosts: i + 1,
                    racks: placement.racks.len(),
                });
            }
        }
        spans_desc.reverse();
        placement.groups = spans_desc;
        placement
    }

    /// The requests with locality, widest first.
    pub fn groups(&self) -> impl Iterator<Item = RequestGroup<'_>> + '_ {
        self.groups.iter().map(|s| RequestGroup {
            count: s.count,
            nodes: &self.hosts[..s.hosts],
            racks: &self.racks[..s.racks],
        })
    }

    /// Containers placed with locality (one request each).
    pub fn local_count(&self) -> u64 {
        self.groups.iter().map(|s| s.count).sum()
    }

    /// Containers placed without locality.
    pub fn any_host_count(&self) -> u64 {
        self.any_host
    }

    /// How many requests name each host, and each rack: the numbers YARN's request table holds
    /// for this placement (a request naming a host also names its rack and ANY).
    pub fn location_counts(
        &self,
        topology: &Topology,
    ) -> (Vec<(HostName, u64)>, Vec<(RackName, u64)>) {
        let mut per_host: Vec<(HostName, u64)> = Vec::with_capacity(self.hosts.len());
        let mut per_rack: HashMap<RackName, u64> = HashMap::new();
        let mut suffix_total: Vec<u64> = vec![0; self.groups.len() + 1];
        for (i, s) in self.groups.iter().enumerate().rev() {
            suffix_total[i] = suffix_total[i + 1] + s.count;
        }
        // From the least-named host up: the spans covering host i are those with a prefix longer
        // than i, i.e. the first `g` spans (widest first), and `g` only grows as i shrinks.
        let mut g = 0;
        for (i, host) in self.hosts.iter().enumerate().rev() {
            while g < self.groups.len() && self.groups[g].hosts > i {
                g += 1;
            }
            let count = suffix_total[0] - suffix_total[g];
            per_host.push((host.clone(), count));
            let rack = topology.rack_of(host).clone();
            let e = per_rack.entry(rack).or_insert(0);
            *e = (*e).max(count);
        }
        per_host.reverse();
        let mut racks: Vec<(RackName, u64)> = per_rack.into_iter().collect();
        racks.sort();
        (per_host, racks)
    }

    /// One node list per locality request, in emission order. For tests and the literal
    /// comparison only: this is exactly the per-container blow-up the groups avoid.
    pub fn expand(&self) -> Vec<Vec<HostName>> {
        let mut out = Vec::new();
        for g in self.groups() {
            for _ in 0..g.count {
                out.push(g.nodes.to_vec());
            }
        }
        out
    }
}
