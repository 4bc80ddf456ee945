//! Conversions between the plain types (`crate::ask`, `crate::request_table`) and the
//! wire types, so the AM can feed the table's asks straight into `allocate` and the
//! allocate results back into the table. The table stays free of protobuf on purpose.

use super::AllocateInput;
use crate::ask::Ask;
use crate::proto::yarn::{
    AllocateResponseProto, ApplicationAttemptIdProto, ApplicationIdProto, ContainerIdProto,
    ExecutionTypeProto, ExecutionTypeRequestProto, PriorityProto, ResourceInformationProto,
    ResourceProto, ResourceRequestProto,
};
use crate::request_table as table;

/// A container size as YARN's `ResourceProto`: memory, vcores and the countable resources
/// beyond them by name (`resource_value_map`, in the RM's default units). Executor asks and
/// the AM's own container (`client_rm`) both ask this way.
pub(crate) fn resource_proto(
    memory_mb: i64,
    vcores: i32,
    others: &[(String, i64)],
) -> ResourceProto {
    ResourceProto {
        memory: Some(memory_mb),
        virtual_cores: Some(vcores),
        resource_value_map: others
            .iter()
            .map(|(name, value)| ResourceInformationProto {
                key: name.clone(),
                value: Some(*value),
                ..Default::default()
            })
            .collect(),
    }
}

impl From<&Ask> for ResourceRequestProto {
    fn from(a: &Ask) -> Self {
        ResourceRequestProto {
            priority: Some(PriorityProto {
                priority: Some(a.priority.0),
            }),
            resource_name: Some(a.resource_name.clone()),
            capability: Some(resource_proto(
                a.capability.memory_mb,
                a.capability.vcores,
                &a.resources,
            )),
            num_containers: Some(a.num_containers),
            relax_locality: Some(a.relax_locality),
            node_label_expression: a.node_label.clone(),
            execution_type_request: Some(ExecutionTypeRequestProto {
                execution_type: Some(ExecutionTypeProto::Guaranteed as i32),
                enforce_execution_type: Some(false),
            }),
            allocation_request_id: Some(a.allocation_request_id),
        }
    }
}

impl From<&table::ContainerId> for ContainerIdProto {
    fn from(c: &table::ContainerId) -> Self {
        let app = ApplicationIdProto {
            id: Some(c.app_id),
            cluster_timestamp: Some(c.cluster_timestamp),
        };
        ContainerIdProto {
            app_id: Some(app),
            app_attempt_id: Some(ApplicationAttemptIdProto {
                application_id: Some(app),
                attempt_id: Some(c.attempt_id),
            }),
            id: Some(c.id),
        }
    }
}

impl From<&ContainerIdProto> for table::ContainerId {
    /// Hadoop 3 fills only `app_attempt_id`; the legacy `app_id` is a fallback.
    fn from(c: &ContainerIdProto) -> Self {
        let attempt = c.app_attempt_id.unwrap_or_default();
        let app = attempt.application_id.or(c.app_id).unwrap_or_default();
        table::ContainerId {
            cluster_timestamp: app.cluster_timestamp.unwrap_or(0),
            app_id: app.id.unwrap_or(0),
            attempt_id: attempt.attempt_id.unwrap_or(0),
            id: c.id.unwrap_or(0),
        }
    }
}

impl AllocateInput {
    /// One heartbeat from a request-table batch (asks, releases, blacklist delta and the
    /// table's own response id).
    pub fn from_batch(batch: &table::AllocateBatch, progress: f32) -> Self {
        AllocateInput {
            asks: batch.asks.clone(),
            releases: batch.releases.iter().map(ContainerIdProto::from).collect(),
            blacklist_additions: batch.exclusions.additions.clone(),
            blacklist_removals: batch.exclusions.removals.clone(),
            progress,
            response_id: batch.response_id,
        }
    }
}

impl From<&AllocateResponseProto> for table::AllocateOutcome {
    fn from(r: &AllocateResponseProto) -> Self {
        table::AllocateOutcome::from(&super::Allocation::from(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ask::{Capability, Priority};
    use crate::ids::{container_id_string, parse_container_id};

    #[test]
    fn container_ids_convert_both_ways_and_print_alike() {
        let s = "container_e03_1700000000000_0042_02_000017";
        let proto = parse_container_id(s).unwrap();
        let plain = table::ContainerId::from(&proto);
        assert_eq!(plain.to_string(), s);
        assert_eq!(ContainerIdProto::from(&plain), proto);
        assert_eq!(container_id_string(&ContainerIdProto::from(&plain)), s);
    }

    #[test]
    fn asks_become_resource_requests() {
        let a = Ask {
            priority: Priority(3),
            resource_name: "/rack1".into(),
            capability: Capability::new(512, 2),
            num_containers: 4,
            relax_locality: false,
            node_label: None,
            allocation_request_id: 0,
            resources: vec![("example.com/accelerator".into(), 2)],
        };
        let p = ResourceRequestProto::from(&a);
        let extra = &p.capability.as_ref().unwrap().resource_value_map;
        assert_eq!(
            (
                extra.len(),
                extra[0].key.as_str(),
                extra[0].value,
                extra[0].units.as_deref()
            ),
            (1, "example.com/accelerator", Some(2), None)
        );
        assert_eq!(p.priority.unwrap().priority, Some(3));
        assert_eq!(p.resource_name.as_deref(), Some("/rack1"));
        assert_eq!(p.capability.unwrap().memory, Some(512));
        assert_eq!(p.num_containers, Some(4));
        assert_eq!(p.relax_locality, Some(false));
        assert_eq!(p.allocation_request_id, Some(0));
    }
}
