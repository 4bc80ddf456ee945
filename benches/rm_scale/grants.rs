//! The RM's side of a run, grant by grant: the containers the harness's RM committed
//! (`grants.tsv`) joined with the round whose answer brought each and with this AM's asks of
//! the call before (`rm_grants` in the printed line).

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::{Am, AskKind};

/// One container the RM committed, as the harness recorded it (`grants.tsv`, written by
/// `scale/src/yarnam/scale/RecordingCapacityScheduler.java`).
pub(super) struct RmGrant {
    t_ms: u64,
    container: String,
    alloc_id: i64,
    /// NODE_LOCAL, RACK_LOCAL or OFF_SWITCH: how the scheduler assigned it.
    kind: String,
    /// The key's missed scheduling opportunities, outstanding ANY count and location map
    /// size (zero counts included) just before the commit.
    missed: u64,
    outstanding: u64,
    unique: u64,
    nodes: u64,
}

pub(super) fn read_grants(path: &Path) -> Result<Vec<RmGrant>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 13 {
            bail!("{}:{}: {} fields, want 13", path.display(), i + 1, f.len());
        }
        let n = |k: usize| -> Result<i64> {
            f[k].parse()
                .with_context(|| format!("{}:{}: field {k} '{}'", path.display(), i + 1, f[k]))
        };
        out.push(RmGrant {
            t_ms: n(0)? as u64,
            container: f[1].to_string(),
            alloc_id: n(3)?,
            kind: f[4].to_string(),
            missed: n(7)?.max(0) as u64,
            outstanding: n(8)?.max(0) as u64,
            unique: n(9)?.max(0) as u64,
            nodes: n(12)?.max(1) as u64,
        });
    }
    Ok(out)
}

/// The RM's grants broken down by request key and locality, and the off-switch ones by the
/// round that brought them with the AM's asks of the call before (what the RM was filling),
/// and by what the key's off-switch wait was at the time: Hadoop 3.4.1's
/// `RegularContainerAllocator` lets a key go off-switch with no wait when its location map
/// holds ANY only (unique == 1), else once its missed opportunities exceed
/// `min(nodes, outstanding x min(1, (unique - 1) / nodes))`.
pub(super) fn grant_breakdown(grants: &[RmGrant], am: &Am) -> serde_json::Value {
    let col = |t: &str| match t {
        "NODE_LOCAL" => 0,
        "RACK_LOCAL" => 1,
        _ => 2,
    };
    let mut by_key: std::collections::BTreeMap<i64, [u64; 3]> = Default::default();
    // Per round: node, rack, off-switch, off-switch from a key holding ANY only.
    let mut by_round: std::collections::BTreeMap<u64, [u64; 4]> = Default::default();
    let (mut any_only, mut past_wait, mut waits) = (0u64, 0u64, Vec::new());
    let mut off_t = Vec::new();
    for g in grants {
        by_key.entry(g.alloc_id).or_default()[col(&g.kind)] += 1;
        let round = am.granted_in.get(&g.container).copied().unwrap_or(0);
        by_round.entry(round).or_default()[col(&g.kind)] += 1;
        if col(&g.kind) != 2 {
            continue;
        }
        off_t.push(g.t_ms);
        if g.unique <= 1 {
            any_only += 1;
            by_round.entry(round).or_default()[3] += 1;
        } else {
            past_wait += 1;
            let factor = ((g.unique - 1) as f64 / g.nodes as f64).min(1.0);
            let wait = (g.outstanding as f64 * factor).min(g.nodes as f64);
            waits.push(json!({ "wait": (wait * 10.0).round() / 10.0, "missed": g.missed, "outstanding": g.outstanding, "unique": g.unique }));
        }
    }
    let kinds = |a: &[u64; AskKind::COUNT]| {
        AskKind::NAMES
            .iter()
            .zip(a)
            .map(|(k, n)| ((*k).to_string(), json!(n)))
            .collect::<serde_json::Map<_, _>>()
    };
    let rounds: Vec<_> = by_round
        .iter()
        .map(|(&r, c)| {
            // Grants in round r's answer were made after call r-1, against its asks.
            let asked = r
                .checked_sub(2)
                .and_then(|i| am.asks_by_round.get(i as usize));
            json!({
                "round": r, "node": c[0], "rack": c[1], "off": c[2], "off_any_only": c[3],
                "asks_before": asked.map(kinds),
            })
        })
        .collect();
    waits.truncate(40);
    json!({
        "by_key": by_key.iter().map(|(k, c)| json!({ "alloc_id": k, "node": c[0], "rack": c[1], "off": c[2] })).collect::<Vec<_>>(),
        "off_switch_key_any_only": any_only,
        "off_switch_after_wait": past_wait,
        "off_switch_waits": waits,
        "off_switch_first_ms": off_t.iter().min(),
        "off_switch_last_ms": off_t.iter().max(),
        "by_round": rounds,
    })
}
