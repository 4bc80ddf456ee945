//! What register and allocate answer, as plain records: the AM reads these, never the wire
//! types, so the protos stay inside this crate. Converted from the responses here.

use crate::ids::{container_id_string, node_id_string};
use crate::proto::yarn::{
    AllocateResponseProto, ContainerProto, ContainerStatusProto, NmTokenProto, NodeReportProto,
    NodeStateProto, PreemptionContainerProto, PreemptionMessageProto,
    RegisterApplicationMasterResponseProto,
};
use crate::request_table as table;
use crate::token::Token;

/// A container the RM granted (or handed back from an earlier attempt).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AllocatedContainer {
    /// `container_...` (with an epoch after an RM restart: `container_e01_...`).
    pub id: String,
    /// The NodeManager's host.
    pub host: String,
    /// The NodeManager's NodeId, `host:port`: where it is started, and the NM token's key.
    pub node: String,
    /// The NodeManager's web address, `host:port` (its logs are served there).
    pub node_http_address: String,
    pub memory_mb: i64,
    pub vcores: i32,
    /// Countable resources beyond memory and vcores the container holds, by name (a GPU
    /// count, a cluster's own types); empty on clusters that declare none.
    pub resources: Vec<(String, i64)>,
    /// The container token the NodeManager wants at start (opaque to the AM).
    pub token: Option<Token>,
    /// YARN's allocation request id (`ContainerProto` field 8): the id of the request key
    /// the scheduler allocated it against (the AM's strict requests use their own id), `-1`
    /// when the RM left it out (the proto's default, and the id of requests that set none).
    pub allocation_request_id: i64,
    /// The priority of the request it was allocated against (`ContainerProto` field 5):
    /// an AM that asks several container sizes asks each at its own priority, since YARN
    /// keys requests by priority, and tells its grants apart by it. 0 when absent.
    pub priority: i32,
}

/// A container that ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompletedContainer {
    pub id: String,
    pub exit_status: i32,
    pub diagnostics: String,
}

/// A NodeManager whose state changed, as an allocate response reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeReport {
    pub host: String,
    /// `None` when the RM left it out.
    pub rack: Option<String>,
    /// `RUNNING` (healthy); false for lost, unhealthy, decommissioned nodes.
    pub running: bool,
    /// Total size of the node, if reported.
    pub memory_mb: Option<i64>,
    pub vcores: Option<i32>,
    /// The node's labels (its partition); empty for the default partition.
    pub labels: Vec<String>,
    /// `DECOMMISSIONING`: an admin asked for a graceful decommission; the node runs what
    /// it runs until its timeout but should get nothing new.
    pub decommissioning: bool,
    /// The graceful decommission's timeout in seconds, when the RM reports one.
    pub decommissioning_timeout_s: Option<u32>,
}

/// The RM asking resources back before it takes them (YARN's `PreemptionMessage`).
///
/// `strict`: containers it will take whatever the AM does. `containers` and `resources`
/// (the negotiable contract): the containers it will take unless the AM gives back as much
/// on its own, and that amount (the CapacityScheduler sends one `*` ask of the minimum
/// allocation times a count, derived from those containers).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preemption {
    pub strict: Vec<String>,
    pub containers: Vec<String>,
    pub resources: Vec<PreemptionAsk>,
}

/// One resource ask of a negotiable preemption contract.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PreemptionAsk {
    pub memory_mb: i64,
    pub vcores: i32,
    pub count: i32,
}

impl Preemption {
    /// True when the message asks for nothing (the RM may send an empty one).
    pub fn is_empty(&self) -> bool {
        self.strict.is_empty()
            && self.containers.is_empty()
            && self.resources.iter().all(|r| r.count <= 0)
    }
}

/// One allocate answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allocation {
    pub response_id: i32,
    pub allocated: Vec<AllocatedContainer>,
    pub completed: Vec<CompletedContainer>,
    pub updated_nodes: Vec<NodeReport>,
    /// What the RM asks back (`preempt`, field 8), when it does.
    pub preemption: Option<Preemption>,
    /// NM tokens by NodeId (`host:port`); the RM sends each only once.
    pub nm_tokens: Vec<(String, Token)>,
    /// A rolled-over AMRM token.
    pub amrm_token: Option<Token>,
}

/// The register answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registration {
    /// The largest container the cluster gives, if reported.
    pub max_memory_mb: Option<i64>,
    pub containers_from_previous_attempts: Vec<AllocatedContainer>,
    pub nm_tokens_from_previous_attempts: Vec<(String, Token)>,
}

impl From<&ContainerProto> for AllocatedContainer {
    fn from(c: &ContainerProto) -> Self {
        let r = c.resource.clone().unwrap_or_default();
        AllocatedContainer {
            id: c.id.as_ref().map(container_id_string).unwrap_or_default(),
            host: c
                .node_id
                .as_ref()
                .and_then(|n| n.host.clone())
                .unwrap_or_default(),
            node: c.node_id.as_ref().map(node_id_string).unwrap_or_default(),
            node_http_address: c.node_http_address.clone().unwrap_or_default(),
            memory_mb: r.memory(),
            vcores: r.virtual_cores(),
            resources: r
                .resource_value_map
                .iter()
                .filter(|i| i.key != "memory-mb" && i.key != "vcores" && i.value() != 0)
                .map(|i| (i.key.clone(), i.value()))
                .collect(),
            token: c.container_token.clone().map(Token::from),
            allocation_request_id: c.allocation_request_id(),
            priority: c.priority.as_ref().map_or(0, |p| p.priority()),
        }
    }
}

impl From<&ContainerStatusProto> for CompletedContainer {
    fn from(s: &ContainerStatusProto) -> Self {
        CompletedContainer {
            id: s
                .container_id
                .as_ref()
                .map(container_id_string)
                .unwrap_or_default(),
            exit_status: s.exit_status(),
            diagnostics: s.diagnostics().to_string(),
        }
    }
}

impl From<&NodeReportProto> for NodeReport {
    fn from(r: &NodeReportProto) -> Self {
        NodeReport {
            host: r
                .node_id
                .as_ref()
                .and_then(|n| n.host.clone())
                .unwrap_or_default(),
            rack: r.rack_name.clone(),
            running: r.node_state() == NodeStateProto::NsRunning,
            memory_mb: r.capability.as_ref().map(|c| c.memory.unwrap_or(0)),
            vcores: r.capability.as_ref().map(|c| c.virtual_cores.unwrap_or(0)),
            labels: r
                .node_labels
                .iter()
                .filter(|l| !l.is_empty())
                .cloned()
                .collect(),
            decommissioning: r.node_state() == NodeStateProto::NsDecommissioning,
            decommissioning_timeout_s: r.decommissioning_timeout,
        }
    }
}

fn preempted_ids(cs: &[PreemptionContainerProto]) -> Vec<String> {
    cs.iter()
        .filter_map(|c| c.id.as_ref().map(container_id_string))
        .collect()
}

impl From<&PreemptionMessageProto> for Preemption {
    fn from(m: &PreemptionMessageProto) -> Self {
        let strict = m
            .strict_contract
            .as_ref()
            .map(|s| preempted_ids(&s.container))
            .unwrap_or_default();
        let (containers, resources) = match &m.contract {
            Some(c) => (
                preempted_ids(&c.container),
                c.resource
                    .iter()
                    .filter_map(|r| r.resource.as_ref())
                    .map(|r| {
                        let cap = r.capability.clone().unwrap_or_default();
                        PreemptionAsk {
                            memory_mb: cap.memory(),
                            vcores: cap.virtual_cores(),
                            count: r.num_containers(),
                        }
                    })
                    .collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        Preemption {
            strict,
            containers,
            resources,
        }
    }
}

fn nm_tokens(tokens: &[NmTokenProto]) -> Vec<(String, Token)> {
    tokens
        .iter()
        .filter_map(|t| {
            Some((
                node_id_string(t.node_id.as_ref()?),
                Token::from(t.token.clone()?),
            ))
        })
        .collect()
}

impl From<&AllocateResponseProto> for Allocation {
    fn from(r: &AllocateResponseProto) -> Self {
        Allocation {
            response_id: r.response_id(),
            allocated: r.allocated_containers.iter().map(Into::into).collect(),
            completed: r
                .completed_container_statuses
                .iter()
                .map(Into::into)
                .collect(),
            updated_nodes: r.updated_nodes.iter().map(Into::into).collect(),
            preemption: r
                .preempt
                .as_ref()
                .map(Preemption::from)
                .filter(|p| !p.is_empty()),
            nm_tokens: nm_tokens(&r.nm_tokens),
            amrm_token: r.am_rm_token.clone().map(Token::from),
        }
    }
}

impl From<&RegisterApplicationMasterResponseProto> for Registration {
    fn from(r: &RegisterApplicationMasterResponseProto) -> Self {
        Registration {
            max_memory_mb: r.maximum_capability.as_ref().and_then(|c| c.memory),
            containers_from_previous_attempts: r
                .containers_from_previous_attempts
                .iter()
                .map(Into::into)
                .collect(),
            nm_tokens_from_previous_attempts: nm_tokens(&r.nm_tokens_from_previous_attempts),
        }
    }
}

impl From<&Allocation> for table::AllocateOutcome {
    fn from(a: &Allocation) -> Self {
        table::AllocateOutcome {
            response_id: a.response_id,
            completed: a
                .completed
                .iter()
                .filter_map(|c| crate::ids::parse_container_id(&c.id))
                .map(|p| table::ContainerId::from(&p))
                .collect(),
            nm_tokens: a.nm_tokens.clone(),
            amrm_token: a.amrm_token.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::parse_container_id;
    use crate::proto::common::TokenProto;
    use crate::proto::yarn::{NodeIdProto, ResourceProto};

    fn token(b: u8) -> TokenProto {
        TokenProto::from(&Token {
            identifier: vec![b],
            password: vec![b],
            kind: "k".into(),
            service: "s".into(),
        })
    }

    #[test]
    fn an_allocate_answer_reads_the_same_as_the_table_sees_it() {
        let id = "container_e01_1700000000000_0042_02_000017";
        let node = NodeIdProto {
            host: Some("nm1".into()),
            port: Some(45454),
        };
        let r = AllocateResponseProto {
            response_id: Some(7),
            allocated_containers: vec![ContainerProto {
                id: parse_container_id(id),
                node_id: Some(node.clone()),
                resource: Some(ResourceProto {
                    memory: Some(512),
                    virtual_cores: Some(2),
                    ..Default::default()
                }),
                container_token: Some(token(1)),
                ..Default::default()
            }],
            completed_container_statuses: vec![ContainerStatusProto {
                container_id: parse_container_id(id),
                exit_status: Some(-100),
                diagnostics: Some("released".into()),
                ..Default::default()
            }],
            nm_tokens: vec![NmTokenProto {
                node_id: Some(node),
                token: Some(token(2)),
            }],
            ..Default::default()
        };
        let a = Allocation::from(&r);
        let c = &a.allocated[0];
        assert_eq!(
            (c.id.as_str(), c.host.as_str(), c.node.as_str()),
            (id, "nm1", "nm1:45454")
        );
        assert_eq!((c.memory_mb, c.vcores), (512, 2));
        assert_eq!(c.token.as_ref().unwrap().identifier, [1]);
        assert_eq!(a.completed[0].exit_status, -100);
        assert_eq!(a.completed[0].diagnostics, "released");
        // What the request table takes from it.
        let o = table::AllocateOutcome::from(&a);
        assert_eq!(o.response_id, 7);
        let cid = table::ContainerId::from(&parse_container_id(id).unwrap());
        assert_eq!(o.completed, [cid]);
        assert_eq!(o.nm_tokens.len(), 1);
        assert_eq!(o.nm_tokens[0].0, "nm1:45454");
        assert_eq!(o.nm_tokens[0].1.identifier, [2]);
        assert!(o.amrm_token.is_none());
    }
}

#[cfg(test)]
mod decode_tests {
    use prost::Message;

    use super::*;

    /// Field 8 as the RM writes it: tag `0x40` (field 8, varint), then the id; negative ids
    /// are ten-byte varints. Absent, the proto's default -1.
    #[test]
    fn allocation_request_id_is_decoded_from_field_8() {
        let c = ContainerProto::decode(&[0x40, 0x05][..]).unwrap();
        assert_eq!(AllocatedContainer::from(&c).allocation_request_id, 5);
        let minus_one = [
            0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        let c = ContainerProto::decode(&minus_one[..]).unwrap();
        assert_eq!(AllocatedContainer::from(&c).allocation_request_id, -1);
        let c = ContainerProto::decode(&[][..]).unwrap();
        assert_eq!(
            AllocatedContainer::from(&c).allocation_request_id,
            -1,
            "absent: the proto's default"
        );
    }

    /// Field 5, a `PriorityProto` (its field 1): tag `0x2a`, length 2, then `0x08 0x03`.
    #[test]
    fn the_priority_is_decoded_from_field_5() {
        let c = ContainerProto::decode(&[0x2a, 0x02, 0x08, 0x03][..]).unwrap();
        assert_eq!(AllocatedContainer::from(&c).priority, 3);
        let c = ContainerProto::decode(&[][..]).unwrap();
        assert_eq!(AllocatedContainer::from(&c).priority, 0);
    }

    #[test]
    fn an_allocation_keeps_each_containers_request_id_in_order() {
        let container = |seq: i64, id: Option<i64>| ContainerProto {
            id: Some(crate::proto::yarn::ContainerIdProto {
                id: Some(seq),
                ..Default::default()
            }),
            allocation_request_id: id,
            ..Default::default()
        };
        let resp = AllocateResponseProto {
            allocated_containers: vec![
                container(2, Some(0)),
                container(3, None),
                container(4, Some(-1)),
            ],
            ..Default::default()
        };
        let bytes = resp.encode_to_vec();
        let a = Allocation::from(&AllocateResponseProto::decode(&bytes[..]).unwrap());
        assert_eq!(a.allocated.len(), 3);
        let ids: Vec<i64> = a
            .allocated
            .iter()
            .map(|c| c.allocation_request_id)
            .collect();
        assert_eq!(ids, vec![0, -1, -1]);
    }
}

#[cfg(test)]
mod preemption_tests {
    use prost::Message;

    use super::*;
    use crate::ids::parse_container_id;
    use crate::proto::yarn::{
        PreemptionContractProto, PreemptionResourceRequestProto, ResourceProto,
        ResourceRequestProto, StrictPreemptionContractProto,
    };

    fn container(id: &str) -> PreemptionContainerProto {
        PreemptionContainerProto {
            id: parse_container_id(id),
        }
    }

    /// The shape the CapacityScheduler sends (no strict contract; the containers it marked
    /// and one `*` ask of the minimum allocation times a count), read back from the wire.
    #[test]
    fn a_negotiable_contract_is_read_from_field_8() {
        let a = "container_1700000000000_0042_01_000003";
        let b = "container_1700000000000_0042_01_000004";
        let msg = PreemptionMessageProto {
            strict_contract: None,
            contract: Some(PreemptionContractProto {
                resource: vec![PreemptionResourceRequestProto {
                    resource: Some(ResourceRequestProto {
                        resource_name: Some("*".into()),
                        capability: Some(ResourceProto {
                            memory: Some(128),
                            virtual_cores: Some(1),
                            ..Default::default()
                        }),
                        num_containers: Some(8),
                        ..Default::default()
                    }),
                }],
                container: vec![container(a), container(b)],
            }),
        };
        let bytes = AllocateResponseProto {
            preempt: Some(msg.clone()),
            ..Default::default()
        }
        .encode_to_vec();
        // Field 8, length-delimited: tag 0x42.
        assert_eq!(bytes[0], 0x42);
        let r = AllocateResponseProto::decode(&bytes[..]).unwrap();
        let p = Allocation::from(&r)
            .preemption
            .expect("a preemption message");
        assert!(p.strict.is_empty());
        assert_eq!(p.containers, [a, b]);
        assert_eq!(
            p.resources,
            [PreemptionAsk {
                memory_mb: 128,
                vcores: 1,
                count: 8
            }]
        );
    }

    #[test]
    fn a_strict_contract_and_an_empty_message() {
        let a = "container_e02_1700000000000_0042_01_000007";
        let msg = PreemptionMessageProto {
            strict_contract: Some(StrictPreemptionContractProto {
                container: vec![container(a)],
            }),
            contract: None,
        };
        assert_eq!(Preemption::from(&msg).strict, [a]);
        let empty = AllocateResponseProto {
            preempt: Some(PreemptionMessageProto::default()),
            ..Default::default()
        };
        assert_eq!(Allocation::from(&empty).preemption, None);
        assert_eq!(
            Allocation::from(&AllocateResponseProto::default()).preemption,
            None
        );
    }

    #[test]
    fn a_decommissioning_node_and_its_timeout() {
        let r = NodeReportProto {
            node_state: Some(NodeStateProto::NsDecommissioning as i32),
            decommissioning_timeout: Some(30),
            ..Default::default()
        };
        let n = NodeReport::from(&r);
        assert!(n.decommissioning && !n.running);
        assert_eq!(n.decommissioning_timeout_s, Some(30));
    }
}
