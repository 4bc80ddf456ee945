//! Ratio round-up placement, computed as groups.
//!
//! Spark's placement emits one request per container: request `i` names every host whose scaled
//! ratio is still above `i`. The host sets are therefore *nested*: sorted by ratio, request `i`
//! names a prefix of the hosts, and the prefix only shrinks. We sort the hosts by ratio once and
//! describe each run of identical requests by `(count, prefix length)`; racks likewise get their
//! own sorted list and prefix length. That is
//! O(hosts log hosts) whatever the number of containers, and a group's node list is a slice
//! of one shared vector instead of a copy per container.
//!
//! A host may be capped (default strategy): then it is named to YARN by fewer requests than its
//! ratio, possibly none, while it keeps its place in the requests' bookkeeping (a third sorted
//! list, `placed`, whose prefixes are exactly Spark's node lists). The capped names are then
//! *dealt* over the requests placed on each host rather than given to the widest ones: each
//! host goes to the requests that name the fewest hosts so far, so that the requests name
//! different hosts and, where there are enough names, every request names one. Why: YARN's
//! request table has one count per host, and the CapacityScheduler gives a request that names
//! nothing (or a last container whose locations are few) to the first node that heartbeats,
//! often next to a node-local one in the same heartbeat; three requests naming `nm1`, `nm2`
//! and `nm3` one each, asked strictly (see `strategy`, rule 5), land one on each node. Dealt
//! lists are owned per run of identical requests: O(names + requests), only when caps apply.

use std::collections::HashMap;

use super::names;
use super::state::{HostName, RackName, Topology};

/// How many containers a host should still get, before scaling (Spark's `need(h)`).
///
/// The host is borrowed from the demand: the update step builds one of these per preferred
/// host, and cloning the shared name (an atomic increment, and a decrement on drop) was a
/// measurable part of a step at 10,000 hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostNeed<'a> {
    pub host: &'a HostName,
    pub need: u64,
    /// The most new requests that may name this host to YARN. `None`: no limit, which is what
    /// Spark does. The default strategy gives 0 for a host YARN cannot use (no NodeManager,
    /// excluded) and for a node already full of our executors. A host over its limit keeps its
    /// place in the requests' bookkeeping (`placed`) and its rack; only the node name is left
    /// out of what YARN sees.
    pub cap: Option<u64>,
}

/// Where `potential` containers should go.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// Hosts named to YARN by at least one request, most-named first (ties by name, for
    /// determinism). With capped hosts it stays empty (the dealt lists name the hosts) unless
    /// the spans are read after all (`drop_unlocated` left no dealt request): `named` gives it.
    hosts: Vec<HostName>,
    /// With capped hosts: `hosts` as indices into `placed`. Indices, not names: cloning a
    /// shared name is an atomic increment (and a decrement on drop), and at 10,000 hosts
    /// the copies `hosts` held cost more than anything read from it.
    named: Vec<u32>,
    /// Every host the ratio round-up gives some request, by ratio (Spark's node order). Empty
    /// when it is the same as `hosts` (no host over its cap).
    placed: Vec<HostName>,
    /// Racks asked for, most-asked first: a rack is asked for by every request in which one of
    /// its preferred hosts is above water, named or not.
    racks: Vec<RackName>,
    /// Runs of identical requests, widest first (the order Spark emits them).
    groups: Vec<Span>,
    /// Containers placed without locality.
    any_host: u64,
    /// With capped hosts: the requests with the capped names dealt over them, runs of
    /// identical requests widest first. Replaces the spans' node and rack lists (the spans
    /// still give Spark's `placed` prefixes and the counts).
    dealt: Vec<Dealt>,
    /// The dealt requests' node and rack lists, one after another (ranges in `dealt`): one
    /// vector each rather than two per run of requests, nearly every request being its own run.
    dealt_nodes: Vec<HostName>,
    dealt_racks: Vec<RackName>,
}

/// A run of identical requests whose node list was dealt (see the module docs).
#[derive(Debug, Clone, PartialEq)]
struct Dealt {
    count: u64,
    /// Range in `Placement::dealt_nodes`.
    nodes: std::ops::Range<usize>,
    /// Range in `Placement::dealt_racks`.
    racks: std::ops::Range<usize>,
    /// Length of the `placed` prefix these requests were placed on.
    placed: usize,
}

/// A host the ratio round-up places requests on, for the dealing.
#[derive(Debug, Clone, Copy)]
struct Placed<'a> {
    /// Requests placed on it (Spark's ratio).
    ratio: u64,
    host: &'a HostName,
    /// Requests that may name it to YARN (its capped ratio); 0 when YARN cannot use it.
    named: u64,
    /// Its rack's id: an index into the racks in the order first seen.
    rack: u32,
    /// Its position in name order (ties in `named` go by it).
    rank: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    count: u64,
    hosts: usize,
    placed: usize,
    racks: usize,
}

/// Requests naming each host, and each rack.
pub type LocationCounts = (Vec<(HostName, u64)>, Vec<(RackName, u64)>);

/// `count` identical requests naming `nodes` and `racks` to YARN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestGroup<'a> {
    pub count: u64,
    pub nodes: &'a [HostName],
    pub racks: &'a [RackName],
    /// Every host the placement gave these requests, `nodes` included; empty when the same as
    /// `nodes` (see [`PendingRequest::placed`](super::PendingRequest::placed)).
    pub placed: &'a [HostName],
}

/// Spark's scaling of the hosts' needs to `potential` requests: `aware` of them are
/// locality-aware (`min(potential, sum of needs)`), and request `j` (from 0) is placed on
/// the hosts whose ratio, `ceil(need x aware / largest need)`, exceeds `j`. One owner,
/// because the default strategy's levels (`strategy::level_caps`) must agree with the
/// placement on every ratio.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scaling {
    pub aware: u64,
    largest: u64,
}

/// The most requests with locality one update step places: a million, past any YARN cluster's
/// executors. The default strategy deals names to each of them (`deal`, O(requests) memory),
/// so without a bound an extreme demand (a target near `u32::MAX`, e.g. from `yarn-am plan`
/// input) made the update step allocate tens of gigabytes and abort (security audit L7).
/// Requests past it are asked without locality.
pub const MAX_AWARE_REQUESTS: u64 = 1 << 20;

impl Scaling {
    /// `None` when no request is locality-aware (no potential, or no host with a need).
    pub(crate) fn of(potential: u64, needs: &[HostNeed<'_>]) -> Option<Scaling> {
        let aware = potential
            .min(needs.iter().fold(0u64, |s, n| s.saturating_add(n.need)))
            .min(MAX_AWARE_REQUESTS);
        let largest = needs.iter().map(|n| n.need).max().unwrap_or(0);
        (aware > 0 && largest > 0).then_some(Scaling { aware, largest })
    }

    /// Spark scales in floating point: ceil(need * aware / largest). Same order of
    /// operations, so the results agree bit for bit.
    pub(crate) fn ratio(&self, need: u64) -> u64 {
        (need as f64 * self.aware as f64 / self.largest as f64).ceil() as u64
    }
}

impl Placement {
    /// Places `potential` containers given each preferred host's need (steps 4-6 of the
    /// strategy in docs/allocator.md).
    ///
    /// `anywhere` (the default strategy's fresh placement, `strategy::level_caps`): a host's
    /// names are not limited to its ratio nor dealt to the requests placed on it only, but to
    /// any request, one per request where there are names enough; each request is then placed
    /// on the hosts it names (its `placed` list empty) and asks for their racks only. Why:
    /// Spark's ratios place the narrow requests on the few most popular hosts only, which hold
    /// four executors each, so most requests could name no host and went to YARN with no
    /// location; YARN gives such a request to the first node that heartbeats, beside a strict
    /// container (BENCHMARKS.md, "Closing the gap").
    pub fn round_up(
        potential: u64,
        needs: &[HostNeed<'_>],
        topology: &Topology,
        anywhere: bool,
    ) -> Placement {
        let Some(scaling) = Scaling::of(potential, needs) else {
            return Placement {
                any_host: potential,
                ..Placement::default()
            };
        };
        let aware = scaling.aware;
        let free = potential - aware;
        let Rated {
            mut placed,
            mut nodes,
            rack_list,
            rack_ratio,
            capped,
        } = Rated::of(needs, topology, scaling, anywhere);
        let named_at = order_hosts(capped, &mut placed, &mut nodes);
        let mut racks: Vec<(u64, &RackName)> = rack_ratio
            .iter()
            .zip(&rack_list)
            .map(|(&v, &r)| (v, r))
            .collect();
        racks.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));

        // Every one of the `aware` requests is placed: the largest need scales to `aware`.
        let widest = aware;
        let mut placement = Placement {
            hosts: if capped {
                Vec::new()
            } else {
                nodes.iter().map(|(_, h)| (*h).clone()).collect()
            },
            named: named_at,
            placed: placed.iter().map(|p| p.host.clone()).collect(),
            racks: racks.iter().map(|(_, r)| (*r).clone()).collect(),
            any_host: free,
            groups: spans(widest, &nodes, &placed, &racks),
            dealt: Vec::new(),
            dealt_nodes: Vec::new(),
            dealt_racks: Vec::new(),
        };
        if capped {
            deal(aware, &mut placed, &rack_list, &mut placement, anywhere);
        }
        placement
    }

    /// The requests with locality, widest first.
    pub fn groups(&self) -> impl Iterator<Item = RequestGroup<'_>> + '_ {
        let spans = if self.dealt.is_empty() {
            &self.groups[..]
        } else {
            &[]
        };
        let spans = spans.iter().map(|s| RequestGroup {
            count: s.count,
            nodes: &self.hosts[..s.hosts],
            racks: &self.racks[..s.racks],
            placed: &self.placed[..s.placed],
        });
        let dealt = self.dealt.iter().map(|d| RequestGroup {
            count: d.count,
            nodes: &self.dealt_nodes[d.nodes.clone()],
            racks: &self.dealt_racks[d.racks.clone()],
            placed: &self.placed[..d.placed],
        });
        spans.chain(dealt)
    }

    /// With capped hosts, the hosts named to YARN, most-named first (`hosts`' order).
    fn named_hosts(&self) -> impl Iterator<Item = &HostName> + '_ {
        self.named.iter().map(|&i| &self.placed[i as usize])
    }

    /// Leaves out the requests that name no location to YARN (past every cap).
    pub fn drop_unlocated(&mut self) {
        if self.dealt.is_empty() {
            // Nested lists: the requests naming nothing are the narrowest, the last spans.
            while self
                .groups
                .last()
                .is_some_and(|s| s.hosts == 0 && s.racks == 0)
            {
                self.groups.pop();
            }
        } else {
            self.dealt
                .retain(|d| !d.nodes.is_empty() || !d.racks.is_empty());
            if self.dealt.is_empty() {
                // The spans are what `groups` reads now: they need the names.
                self.hosts = self.named_hosts().cloned().collect();
            }
        }
    }

    /// Containers placed with locality (one request each).
    pub fn local_count(&self) -> u64 {
        self.groups().map(|g| g.count).sum()
    }

    /// Containers placed without locality.
    pub fn any_host_count(&self) -> u64 {
        self.any_host
    }

    /// How many requests name each host, and each rack: the numbers YARN's request table holds
    /// for this placement (a request naming a host also names its rack and ANY).
    pub fn location_counts(&self) -> LocationCounts {
        if !self.dealt.is_empty() {
            let mut hosts: Vec<(HostName, u64)> =
                self.named_hosts().map(|h| (h.clone(), 0)).collect();
            let mut racks: Vec<(RackName, u64)> =
                self.racks.iter().map(|r| (r.clone(), 0)).collect();
            let host_at: HashMap<&HostName, usize> = self
                .named_hosts()
                .enumerate()
                .map(|(i, h)| (h, i))
                .collect();
            let rack_at: HashMap<&RackName, usize> =
                self.racks.iter().enumerate().map(|(i, r)| (r, i)).collect();
            for d in &self.dealt {
                for h in &self.dealt_nodes[d.nodes.clone()] {
                    hosts[host_at[h]].1 += d.count;
                }
                for r in &self.dealt_racks[d.racks.clone()] {
                    racks[rack_at[r]].1 += d.count;
                }
            }
            return (hosts, racks);
        }
        // Spans are widest first, so the spans covering position i of a list are a prefix of
        // the spans, and that prefix only grows as i shrinks.
        fn covering<T: Clone>(
            items: &[T],
            spans: &[Span],
            len: impl Fn(&Span) -> usize,
        ) -> Vec<(T, u64)> {
            let mut out = Vec::with_capacity(items.len());
            let (mut g, mut total) = (0, 0);
            for (i, item) in items.iter().enumerate().rev() {
                while g < spans.len() && len(&spans[g]) > i {
                    total += spans[g].count;
                    g += 1;
                }
                out.push((item.clone(), total));
            }
            out.reverse();
            out
        }
        (
            covering(&self.hosts, &self.groups, |s| s.hosts),
            covering(&self.racks, &self.groups, |s| s.racks),
        )
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

/// Every host with a need, rated: the first step of [`Placement::round_up`].
struct Rated<'a> {
    /// Every host with a need, in the needs' order (sorted by `order_hosts`).
    placed: Vec<Placed<'a>>,
    /// The hosts named to YARN at all, with how many requests name them.
    nodes: Vec<(u64, &'a HostName)>,
    /// Racks in the order first seen (the ids in `Placed::rack`).
    rack_list: Vec<&'a RackName>,
    /// How many requests ask for each rack, by id.
    rack_ratio: Vec<u64>,
    /// Whether some host is named by fewer requests than its ratio (or, dealt anywhere, by
    /// another number than its ratio).
    capped: bool,
}

impl<'a> Rated<'a> {
    /// Request i (from 0) is placed on every host whose ratio exceeds i (Spark's node list),
    /// and names to YARN the hosts whose capped ratio exceeds i. It asks for the racks of
    /// the hosts it names, and for the racks of the hosts it is placed on that YARN cannot
    /// give a container (capped to 0: no NodeManager, excluded, full), so a rack is asked
    /// for as often as its most-named host is named, or as Spark asks for it where only such
    /// hosts need it. Without caps that is exactly Spark's node and rack lists. Requests
    /// past every capped ratio and rack name no location: YARN sees them as "anywhere",
    /// while they stay placed on Spark's hosts (see the module docs of `strategy`).
    /// Racks get ids in the order first seen; `rack_ratio` is indexed by them. The
    /// topology's interned rack ids map to them through an array: no rack name is hashed
    /// or compared per host.
    fn of(
        needs: &[HostNeed<'a>],
        topology: &'a Topology,
        scaling: Scaling,
        anywhere: bool,
    ) -> Rated<'a> {
        let aware = scaling.aware;
        let ratio = |n: &HostNeed<'_>| scaling.ratio(n.need);
        let mut placed: Vec<Placed> = Vec::with_capacity(needs.len());
        let mut nodes: Vec<(u64, &HostName)> = Vec::with_capacity(needs.len());
        let mut rack_id: Vec<u32> = vec![u32::MAX; topology.rack_count()];
        let mut rack_list: Vec<&RackName> = Vec::new();
        let mut rack_ratio: Vec<u64> = Vec::new();
        let mut capped = false;
        for n in needs.iter().filter(|n| n.need > 0) {
            let r = ratio(n);
            let named = match n.cap {
                Some(c) if anywhere => c.min(aware),
                Some(c) => r.min(c),
                None => r,
            };
            capped |= named < r || (anywhere && named != r);
            let global = topology.rack_id(n.host) as usize;
            if rack_id[global] == u32::MAX {
                rack_id[global] = rack_list.len() as u32;
                rack_list.push(topology.rack_name(global as u32));
                rack_ratio.push(0);
            }
            let id = rack_id[global];
            let e = &mut rack_ratio[id as usize];
            *e = (*e).max(if named > 0 { named } else { r });
            placed.push(Placed {
                ratio: r,
                host: n.host,
                named,
                rack: id,
                rank: 0,
            });
            if named > 0 {
                nodes.push((named, n.host));
            }
        }
        Rated {
            placed,
            nodes,
            rack_list,
            rack_ratio,
            capped,
        }
    }
}

/// Sorts `nodes` most-named first, and with caps `placed` in Spark's order (ratio down), both
/// ties by name. Without caps `placed` is emptied (it would equal `nodes`); with caps `nodes`
/// is rebuilt from `placed` and the named hosts are returned as indices into it.
fn order_hosts<'a>(
    capped: bool,
    placed: &mut Vec<Placed<'a>>,
    nodes: &mut Vec<(u64, &'a HostName)>,
) -> Vec<u32> {
    let by_count =
        |a: &(u64, &HostName), b: &(u64, &HostName)| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1));
    // With caps, the named hosts as indices into the final `placed`.
    let mut named_at: Vec<u32> = Vec::new();
    if capped {
        // Both lists break ties by name: rank the names once (they are unique, keys of
        // the demand's map), then sort by counts, with the ranks as the tie-break: one
        // name sort, not two, and by integer keys (`names`).
        let host_names: Vec<&str> = placed.iter().map(|p| &**p.host).collect();
        for (p, rank) in placed.iter_mut().zip(names::ranks(&host_names)) {
            p.rank = rank;
        }
        placed.sort_unstable_by(|a, b| b.ratio.cmp(&a.ratio).then(a.rank.cmp(&b.rank)));
        let mut named: Vec<(u64, u32, u32)> = (placed.iter().enumerate())
            .filter(|(_, p)| p.named > 0)
            .map(|(i, p)| (p.named, p.rank, i as u32))
            .collect();
        named.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        *nodes = named
            .iter()
            .map(|&(n, _, i)| (n, placed[i as usize].host))
            .collect();
        named_at = named.iter().map(|&(_, _, i)| i).collect();
    } else {
        nodes.sort_unstable_by(by_count);
        placed.clear();
    }
    named_at
}

/// The runs of identical requests, widest first: walks the distinct ratio values from
/// `widest` down; a span ends at the next value down in any of the (sorted) lists.
fn spans(
    widest: u64,
    nodes: &[(u64, &HostName)],
    placed: &[Placed],
    racks: &[(u64, &RackName)],
) -> Vec<Span> {
    let mut groups = Vec::new();
    let (mut ni, mut pi, mut ri) = (0usize, 0usize, 0usize);
    let mut level = widest;
    while level > 0 {
        while ni < nodes.len() && nodes[ni].0 >= level {
            ni += 1;
        }
        while pi < placed.len() && placed[pi].ratio >= level {
            pi += 1;
        }
        while ri < racks.len() && racks[ri].0 >= level {
            ri += 1;
        }
        let next = nodes
            .get(ni)
            .map_or(0, |n| n.0)
            .max(placed.get(pi).map_or(0, |p| p.ratio))
            .max(racks.get(ri).map_or(0, |r| r.0));
        groups.push(Span {
            count: level - next,
            hosts: ni,
            placed: pi,
            racks: ri,
        });
        level = next;
    }
    groups.reverse();
    groups
}

/// Deals the capped names over the `aware` requests (see the module docs). `placed`: every
/// placed host, Spark's order (ratio down, then name; request `i` is placed on the hosts whose
/// ratio exceeds `i`), with how many requests may name it (`named`, 0 for none) and its rack's
/// id in `racks`. A host goes, narrowest first (it fits the fewest requests), to the requests
/// placed on it that name the fewest hosts so far, the widest of them on ties. A request asks
/// for the racks of the hosts it names and of the hosts it was placed on that YARN cannot give
/// a container (named by none), as the nested lists do.
///
/// Cost: O(hosts + names + requests) besides sorting the racks by name. No host name is hashed
/// or compared: the narrowest-first order is `placed` read backwards run by run, and the
/// requests by load are kept as one sorted queue per load (see `Loads`).
fn deal(
    aware: u64,
    placed: &mut [Placed],
    racks: &[&RackName],
    into: &mut Placement,
    anywhere: bool,
) {
    let requests = usize::try_from(aware).expect("requests fit in memory");
    let order = narrowest_first(placed);
    let dealt_names = deal_names(&order, placed, requests, anywhere);
    let (starts, flat) = names_by_request(dealt_names, requests);
    let rack_names = renumber_racks(racks, placed);
    let placed = &*placed;
    let unusable_racks = unusable_racks(placed, rack_names.len());

    // Runs of identical requests: compared as index slices, lists built once per run. The
    // node lists hold at most every name dealt; reserving that (and as much for the racks,
    // about one per name) saves growing vectors of up to a megabyte by copies.
    into.dealt_nodes.reserve(flat.len());
    into.dealt_racks.reserve(flat.len());
    let out = &mut into.dealt;
    let mut last: Option<(&[u32], usize, usize)> = None;
    let mut placed_len = placed.len();
    let mut unusable_len = unusable_racks.len();
    let mut rack_ids: Vec<u32> = Vec::new();
    for (i, w) in starts.windows(2).enumerate() {
        let i = i as u64;
        while placed_len > 0 && placed[placed_len - 1].ratio <= i {
            placed_len -= 1;
        }
        while unusable_len > 0 && unusable_racks[unusable_len - 1].0 <= i {
            unusable_len -= 1;
        }
        let hosts = &flat[w[0]..w[1]];
        // Dealt anywhere: a request naming hosts is placed on them (`RequestGroup::placed`
        // empty) and asks for their racks only. One naming none keeps Spark's placement (hosts
        // YARN cannot give a container: a DataNode without a NodeManager, a full node) and asks
        // for their racks, as the nested lists do: the blocks are rack-local there, and without
        // them it would go to YARN with no location at all.
        let (placed_len, unusable_len) = if anywhere && !hosts.is_empty() {
            (0, 0)
        } else {
            (placed_len, unusable_len)
        };
        if let (Some((h, p, u)), Some(d)) = (last, out.last_mut()) {
            if h == hosts && p == placed_len && u == unusable_len {
                d.count += 1;
                continue;
            }
        }
        let nodes = into.dealt_nodes.len();
        into.dealt_nodes
            .extend(hosts.iter().map(|&k| placed[k as usize].host.clone()));
        rack_ids.clear();
        rack_ids.extend(hosts.iter().map(|&k| placed[k as usize].rack));
        rack_ids.extend(unusable_racks[..unusable_len].iter().map(|&(_, r)| r));
        rack_ids.sort_unstable();
        rack_ids.dedup();
        let racks = into.dealt_racks.len();
        into.dealt_racks
            .extend(rack_ids.iter().map(|&k| rack_names[k as usize].clone()));
        out.push(Dealt {
            count: 1,
            nodes: nodes..into.dealt_nodes.len(),
            racks: racks..into.dealt_racks.len(),
            placed: placed_len,
        });
        last = Some((hosts, placed_len, unusable_len));
    }
}

/// The hosts YARN may be told of (`named > 0`) as indices into `placed`, narrowest first, ties
/// by name: `placed` has ratios going down and names going up within a ratio, so its runs of
/// equal ratio, last run first, each read forwards.
fn narrowest_first(placed: &[Placed]) -> Vec<u32> {
    let mut order: Vec<u32> = Vec::with_capacity(placed.len());
    let mut end = placed.len();
    while end > 0 {
        let ratio = placed[end - 1].ratio;
        let mut start = end - 1;
        while start > 0 && placed[start - 1].ratio == ratio {
            start -= 1;
        }
        order.extend(
            (start..end)
                .filter(|&k| placed[k].named > 0)
                .map(|k| k as u32),
        );
        end = start;
    }
    order
}

/// `(request, index in placed)` for every name dealt: each host in `order` goes to as many of
/// the open requests as it may be named by, the least loaded first.
fn deal_names(
    order: &[u32],
    placed: &[Placed],
    requests: usize,
    anywhere: bool,
) -> Vec<(u32, u32)> {
    let mut dealt_names: Vec<(u32, u32)> = Vec::new();
    let mut loads = Loads::default();
    let mut taken: Vec<(u32, u32)> = Vec::new();
    for &at in order {
        let p = placed[at as usize];
        // The open requests are exactly those placed on this host (index below its ratio):
        // hosts come narrowest first, so they only grow. Dealt anywhere: every request.
        let reach = if anywhere {
            requests
        } else {
            usize::try_from(p.ratio).unwrap_or(usize::MAX).min(requests)
        };
        loads.open_to(reach as u32);
        for _ in 0..p.named {
            let Some((load, i)) = loads.pop() else {
                break;
            };
            dealt_names.push((i, at));
            taken.push((load + 1, i));
        }
        loads.put_back(&mut taken);
    }
    dealt_names
}

/// Each request's names, in Spark's order, as `(starts, flat)`: request `i`'s names are
/// `flat[starts[i]..starts[i + 1]]`. A counting sort by request (one flat vector instead of a
/// list per request), then each request's few names sorted in place.
fn names_by_request(dealt_names: Vec<(u32, u32)>, requests: usize) -> (Vec<usize>, Vec<u32>) {
    let mut starts = vec![0usize; requests + 1];
    for &(i, _) in &dealt_names {
        starts[i as usize + 1] += 1;
    }
    for i in 0..requests {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let mut flat = vec![0u32; dealt_names.len()];
    for &(i, at) in &dealt_names {
        flat[fill[i as usize]] = at;
        fill[i as usize] += 1;
    }
    drop((dealt_names, fill));
    for w in starts.windows(2) {
        flat[w[0]..w[1]].sort_unstable();
    }
    (starts, flat)
}

/// Renumbers the hosts' rack ids to follow the racks' names, so that sorting ids sorts names
/// (and ties go by name, as with names); equal names share an id. Returns the names by new id.
fn renumber_racks<'a>(racks: &[&'a RackName], placed: &mut [Placed]) -> Vec<&'a RackName> {
    let mut by_name: Vec<u32> = (0..racks.len() as u32).collect();
    by_name.sort_unstable_by(|&a, &b| racks[a as usize].cmp(racks[b as usize]));
    let mut rank = vec![0u32; racks.len()];
    let mut rack_names: Vec<&RackName> = Vec::with_capacity(racks.len());
    for &id in &by_name {
        let name = racks[id as usize];
        if rack_names.last() != Some(&name) {
            rack_names.push(name);
        }
        rank[id as usize] = rack_names.len() as u32 - 1;
    }
    for p in placed.iter_mut() {
        p.rack = rank[p.rack as usize];
    }
    rack_names
}

/// Racks of the hosts YARN cannot use that a request was placed on, as `(ratio, rack id)`,
/// highest ratio first (ties by id): request i has those whose best such host has a ratio
/// above i.
fn unusable_racks(placed: &[Placed], rack_count: usize) -> Vec<(u64, u32)> {
    let mut unusable: Vec<Option<u64>> = vec![None; rack_count];
    for p in placed.iter().filter(|p| p.named == 0) {
        let e = unusable[p.rack as usize].get_or_insert(0);
        *e = (*e).max(p.ratio);
    }
    let mut unusable_racks: Vec<(u64, u32)> = unusable
        .iter()
        .enumerate()
        .filter_map(|(r, v)| v.map(|v| (v, r as u32)))
        .collect();
    unusable_racks.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    unusable_racks
}

/// The open requests by how many names they were dealt so far (their load), for the dealing:
/// `pop` gives the least (load, request index), as a heap would, in O(1). Why one sorted queue
/// per load is enough: requests open at load 0 in index order and leave it smallest first, so
/// load 0 is the range `zero..open`; a request moves from load `l` to `l + 1` after being
/// popped, and pops from one load come in increasing index order over time (each queue is
/// sorted and loses its front), so what joins load `l + 1` is always above everything in it.
/// By induction every queue stays sorted. Requests taken for one host go back only after that
/// host's names are dealt (`put_back`), so no request gets a host twice.
#[derive(Debug, Default)]
struct Loads {
    /// Load 0: requests `zero..open`.
    zero: u32,
    open: u32,
    /// `above[l]`: the requests at load `l + 1`, by index.
    above: Vec<std::collections::VecDeque<u32>>,
    /// The lowest `above` queue that may be non-empty.
    lowest: usize,
}

impl Loads {
    fn open_to(&mut self, reach: u32) {
        self.open = self.open.max(reach);
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        if self.zero < self.open {
            self.zero += 1;
            return Some((0, self.zero - 1));
        }
        while self.lowest < self.above.len() {
            if let Some(i) = self.above[self.lowest].pop_front() {
                return Some((self.lowest as u32 + 1, i));
            }
            self.lowest += 1;
        }
        None
    }

    /// Puts back requests taken (with their new loads, in the order they were popped).
    fn put_back(&mut self, taken: &mut Vec<(u32, u32)>) {
        for (load, i) in taken.drain(..) {
            let l = load as usize - 1;
            if self.above.len() <= l {
                self.above.resize_with(l + 1, Default::default);
            }
            self.above[l].push_back(i);
            self.lowest = self.lowest.min(l);
        }
    }
}
