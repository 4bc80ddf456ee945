//! What a driver wants from the AM, as one whole state: the embedded driver's output, the
//! body of `POST /v1/demand` and the allocator's input are this one type.
//!
//! Neutral ground: neither the driver nor the allocator owns it, so neither imports the
//! other. How many tasks an executor runs at once is not part of it: that follows from the
//! executor's size, which the AM fixes at start (the allocator's
//! `AllocatorConfig::tasks_per_executor`).
//!
//! Hosts are shared names ([`HostName`]) in a hash map, as the allocator's update step looks
//! them up for every pending request (10,000 hosts and more); the JSON lists them sorted, so
//! what `GET /v1/state` shows does not change from one read to the next.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize, Serializer};

use crate::ids::HostName;

/// A driver's whole demand, as Spark's RequestExecutors: replaces the previous one.
/// Unknown fields are refused, so a typo in a `POST /v1/demand` body is a 400 naming it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demand {
    /// Executors wanted in total (running + starting + pending).
    pub target_executors: u32,
    /// Pending tasks that name at least one preferred host (rack-only preferences cannot be
    /// expressed per host, so they are not counted).
    #[serde(default)]
    pub locality_aware_tasks: u32,
    /// For each preferred host, the pending tasks naming it.
    #[serde(default, serialize_with = "sorted")]
    pub host_to_local_task_count: HashMap<HostName, u32>,
    /// Hosts YARN must not place executors on (the embedded driver names none).
    #[serde(default)]
    pub excluded_hosts: Vec<String>,
    /// The executor kind this demand is for (`submit --executor-kind`, a job's `kinds`);
    /// `None`: the default kind. Each kind has its own demand; one for a kind the app does
    /// not have is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

fn sorted<S: Serializer>(map: &HashMap<HostName, u32>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(map.iter().collect::<BTreeMap<_, _>>())
}

impl Demand {
    /// The demand from counts already kept: pending tasks naming hosts, and per host.
    pub fn from_counts<'a>(
        target: u32,
        locality_aware_tasks: usize,
        per_host: impl IntoIterator<Item = (&'a str, usize)>,
    ) -> Demand {
        Demand {
            target_executors: target,
            locality_aware_tasks: locality_aware_tasks as u32,
            host_to_local_task_count: per_host
                .into_iter()
                .map(|(h, n)| (HostName::from(h), n as u32))
                .collect(),
            excluded_hosts: Vec::new(),
            kind: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_serialize_sorted_and_read_back() {
        let d = Demand::from_counts(3, 5, [("nm3", 1), ("nm1", 4), ("nm2", 2)]);
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(
            json,
            r#"{"target_executors":3,"locality_aware_tasks":5,"host_to_local_task_count":{"nm1":4,"nm2":2,"nm3":1},"excluded_hosts":[]}"#
        );
        assert_eq!(serde_json::from_str::<Demand>(&json).unwrap(), d);
        let e = serde_json::from_str::<Demand>(r#"{"target_executors":1,"tasks":2}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `tasks`"), "{e}");
    }
}
