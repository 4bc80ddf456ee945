//! ApplicationClientProtocol on the RM's client port (`yarn.resourcemanager.address`, 8032):
//! a new application id and the submission itself, over Hadoop IPC.
//!
//! Why beside the REST submission ([`crate::rest`]): Hadoop 3.4.1's RM keeps only memory
//! and vcores of a REST submission's AM resource (`RMWebAppUtil
//! .createAppSubmissionContextResource`), so an AM container that asks a GPU or a cluster's
//! own resource type must be submitted here. One [`Submission`] describes the app; this
//! module is its second wire form ([`submission_context`]), the REST JSON its first
//! (`Submission::to_json`). The AM's launch context is encoded by [`crate::nm::LaunchSpec`],
//! the encoding the NodeManagers get for executors.
//!
//! Authentication: SIMPLE only (the connection context names the user, as `user.name` does
//! for REST on an insecure cluster). Kerberos (SASL GSSAPI) on IPC is not built, so callers
//! must not use this against a secure cluster.

use std::time::Duration;

use crate::amrm::resource_proto;
use crate::ids::{app_id_string, parse_app_id};
use crate::nm::LaunchSpec;
use crate::proto::yarn::{
    ApplicationSubmissionContextProto, ApplicationTimeoutMapProto, ApplicationTimeoutTypeProto,
    GetNewApplicationRequestProto, GetNewApplicationResponseProto, LogAggregationContextProto,
    PriorityProto, ResourceRequestProto, SubmitApplicationRequestProto,
    SubmitApplicationResponseProto,
};
use crate::rest::{AmContainerSpec, LogAggregation, Submission};
use crate::rpc::{Auth, RemoteError, RpcClient, RpcConfig, RpcError};

pub const PROTOCOL: &str = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

/// `ResourceRequest.ANY`, the AM's request location.
const ANY: &str = "*";
/// `RMAppAttemptImpl.AM_CONTAINER_PRIORITY`: the RM's priority for an AM request.
const AM_CONTAINER_PRIORITY: i32 = 0;

#[derive(Debug, thiserror::Error)]
pub enum ClientRmError {
    #[error("{0:?} is not an application id (application_<cluster timestamp>_<number>)")]
    BadAppId(String),
    #[error("the RM's getNewApplication reply has no application id")]
    NoAppId,
    #[error("the lifetime {0:?} is below one second or beyond the RM's range")]
    BadLifetime(Duration),
    /// The RM refused the call (e.g. `InvalidResourceRequestException` for an AM asking more
    /// of a resource than any node has).
    #[error("the RM refused {method}: {remote}")]
    Refused { method: String, remote: RemoteError },
    #[error(transparent)]
    Rpc(RpcError),
}

impl ClientRmError {
    fn from_call(method: &str, e: RpcError) -> Self {
        match e {
            RpcError::Remote { remote, .. } => ClientRmError::Refused {
                method: method.to_string(),
                remote,
            },
            e => ClientRmError::Rpc(e),
        }
    }

    /// True when the call may have reached the RM without an answer coming back: the RM
    /// may have acted on it. A failed connect sent nothing.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, ClientRmError::Rpc(e) if !matches!(e, RpcError::Connect { .. }))
    }
}

/// What `getNewApplication` hands out: the id to submit under and the largest container the
/// scheduler grants, with its resource types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApplication {
    pub application_id: String,
    pub max_memory_mb: i64,
    pub max_vcores: i32,
    /// The other resource types of the largest container, by name.
    pub max_resources: Vec<(String, i64)>,
}

/// A client of the RM's client port for one user.
pub struct ClientRm {
    rpc: RpcClient,
}

impl ClientRm {
    /// SIMPLE authentication as `user` (an insecure cluster). `cfg`'s timeouts bound the
    /// connect, the handshake and every call.
    pub fn simple(addr: &str, user: &str, cfg: RpcConfig) -> Self {
        Self {
            rpc: RpcClient::new(
                addr,
                PROTOCOL,
                1,
                Auth::Simple {
                    user: user.to_string(),
                },
                cfg,
            ),
        }
    }

    pub fn addr(&self) -> &str {
        self.rpc.addr()
    }

    pub async fn new_application(&self) -> Result<NewApplication, ClientRmError> {
        const METHOD: &str = "getNewApplication";
        let r: GetNewApplicationResponseProto = self
            .rpc
            .call(METHOD, &GetNewApplicationRequestProto::default())
            .await
            .map_err(|e| ClientRmError::from_call(METHOD, e))?;
        let id = r.application_id.as_ref().ok_or(ClientRmError::NoAppId)?;
        let max = r.maximum_capability.unwrap_or_default();
        Ok(NewApplication {
            application_id: app_id_string(id),
            max_memory_mb: max.memory(),
            max_vcores: max.virtual_cores(),
            max_resources: max
                .resource_value_map
                .iter()
                .filter(|r| !matches!(r.key.as_str(), "memory-mb" | "vcores"))
                .map(|r| (r.key.clone(), r.value()))
                .collect(),
        })
    }

    /// Submits the app. The RM answers once it has recorded the app (before it is
    /// scheduled): a refusal here is final, the app does not exist.
    pub async fn submit(&self, sub: &Submission) -> Result<(), ClientRmError> {
        const METHOD: &str = "submitApplication";
        let req = SubmitApplicationRequestProto {
            application_submission_context: Some(submission_context(sub)?),
        };
        let _: SubmitApplicationResponseProto = self
            .rpc
            .call(METHOD, &req)
            .await
            .map_err(|e| ClientRmError::from_call(METHOD, e))?;
        Ok(())
    }
}

/// The AM's launch context as the NodeManager protocol encodes it ([`LaunchSpec`]): the
/// command as one element (the NM joins elements with spaces, REST sends one string), the
/// credentials as a Writable token-storage blob (what the RM's REST path makes of its JSON
/// `credentials`), the ACLs. The AM's container has no service data.
pub fn am_launch_spec(am: &AmContainerSpec) -> LaunchSpec {
    LaunchSpec {
        command: vec![am.command.clone()],
        environment: am.environment.clone(),
        local_resources: am.local_resources.clone(),
        tokens: Some(am.credentials.encode(crate::credentials::Format::Writable)),
        acls: am.acls.clone(),
        service_data: Default::default(),
    }
}

fn log_aggregation_proto(l: &LogAggregation) -> Option<LogAggregationContextProto> {
    (!l.is_empty()).then(|| LogAggregationContextProto {
        include_pattern: l.include.clone(),
        exclude_pattern: l.exclude.clone(),
        rolled_logs_include_pattern: l.rolled_include.clone(),
        rolled_logs_exclude_pattern: l.rolled_exclude.clone(),
    })
}

/// The submission as `ApplicationSubmissionContextProto`, field for field what the RM's
/// REST path builds from `Submission::to_json` (RMWebServices
/// `createAppSubmissionContext`), plus what REST cannot say: the AM's resource types (in
/// field 9's `resource_value_map`) and the lifetime (field 18, seconds).
///
/// - Tags are lower-cased, as the Java record's setter does for REST (the RM reads a raw
///   proto's tags as they are).
/// - An AM node label becomes one AM resource request (field 17) at `*` with the AM's
///   whole size, as REST's `am-container-node-label-expression` does; the app's own label
///   (field 16) stays unset, as REST leaves it.
pub fn submission_context(
    sub: &Submission,
) -> Result<ApplicationSubmissionContextProto, ClientRmError> {
    let app_id = parse_app_id(&sub.application_id)
        .ok_or_else(|| ClientRmError::BadAppId(sub.application_id.clone()))?;
    let resource = resource_proto(
        sub.am_resource.memory,
        sub.am_resource.vcores,
        &sub.am_resources,
    );
    let am_request = sub
        .am_node_label
        .as_ref()
        .map(|label| ResourceRequestProto {
            priority: Some(PriorityProto {
                priority: Some(AM_CONTAINER_PRIORITY),
            }),
            resource_name: Some(ANY.to_string()),
            capability: Some(resource.clone()),
            num_containers: Some(1),
            relax_locality: Some(true),
            node_label_expression: Some(label.clone()),
            ..Default::default()
        });
    let timeouts = match sub.lifetime {
        None => Vec::new(),
        Some(d) => {
            let secs = i64::try_from(d.as_secs())
                .ok()
                .filter(|s| *s >= 1)
                .ok_or(ClientRmError::BadLifetime(d))?;
            vec![ApplicationTimeoutMapProto {
                application_timeout_type: Some(
                    ApplicationTimeoutTypeProto::AppTimeoutLifetime as i32,
                ),
                timeout: Some(secs),
            }]
        }
    };
    Ok(ApplicationSubmissionContextProto {
        application_id: Some(app_id),
        application_name: Some(sub.name.clone()),
        queue: Some(sub.queue.clone()),
        priority: sub.priority.map(|p| PriorityProto { priority: Some(p) }),
        am_container_spec: Some(am_launch_spec(&sub.am).to_proto()),
        unmanaged_am: Some(false),
        max_app_attempts: Some(i32::try_from(sub.max_app_attempts).unwrap_or(i32::MAX)),
        resource: Some(resource),
        application_type: Some(sub.application_type.clone()),
        keep_containers_across_application_attempts: Some(sub.keep_containers),
        application_tags: sub.tags.iter().map(|t| t.to_lowercase()).collect(),
        attempt_failures_validity_interval: sub.attempt_failures_validity_interval_ms,
        log_aggregation_context: log_aggregation_proto(&sub.log_aggregation),
        node_label_expression: None,
        am_container_resource_request: am_request.into_iter().collect(),
        application_timeouts: timeouts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::yarn::ContainerLaunchContextProto;
    use crate::rest::{LocalResource, Resource};
    use prost::Message;

    fn sample() -> Submission {
        let mut am = AmContainerSpec {
            command: "./yarn-am am 1><LOG_DIR>/stdout".into(),
            ..Default::default()
        };
        am.environment.insert("A".into(), "1".into());
        am.local_resources.insert(
            "yarn-am".into(),
            LocalResource {
                resource: "hdfs://nn:8020/user/a/.yarn-am/yarn-am".into(),
                kind: "FILE".into(),
                visibility: "APPLICATION".into(),
                size: 10,
                timestamp: 1234,
            },
        );
        am.credentials
            .secrets
            .push(("yarn-am.secret".into(), b"s3cret".to_vec()));
        am.acls.view = Some("bob ops".into());
        Submission {
            application_id: "application_1700000000000_0042".into(),
            name: "t".into(),
            queue: "q".into(),
            application_type: "YARN-AM".into(),
            tags: vec!["Mixed".into()],
            max_app_attempts: 2,
            keep_containers: true,
            am_resource: Resource {
                memory: 256,
                vcores: 1,
            },
            am,
            priority: Some(5),
            attempt_failures_validity_interval_ms: Some(60_000),
            log_aggregation: LogAggregation {
                include: Some("stdout$".into()),
                ..LogAggregation::default()
            },
            am_node_label: None,
            am_resources: vec![("example.com/accelerator".into(), 1)],
            lifetime: Some(Duration::from_secs(15)),
        }
    }

    /// Reads one field's raw bytes (length-delimited) or varint from an encoded message, by
    /// field number: the check that our field numbers are Hadoop's, independent of prost.
    fn raw_fields(mut buf: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        while !buf.is_empty() {
            let key = prost::encoding::decode_varint(&mut buf).unwrap();
            let (field, wire) = ((key >> 3) as u32, key & 7);
            match wire {
                0 => {
                    let v = prost::encoding::decode_varint(&mut buf).unwrap();
                    out.push((field, v.to_le_bytes().to_vec()));
                }
                2 => {
                    let len = prost::encoding::decode_varint(&mut buf).unwrap() as usize;
                    out.push((field, buf[..len].to_vec()));
                    buf = &buf[len..];
                }
                w => panic!("unexpected wire type {w}"),
            }
        }
        out
    }

    fn field(bytes: &[u8], n: u32) -> Vec<Vec<u8>> {
        raw_fields(bytes)
            .into_iter()
            .filter(|(f, _)| *f == n)
            .map(|(_, v)| v)
            .collect()
    }

    fn varint(v: &[u8]) -> u64 {
        u64::from_le_bytes(v.try_into().unwrap())
    }

    #[test]
    fn every_fact_lands_in_hadoops_field_numbers() {
        let bytes = submission_context(&sample()).unwrap().encode_to_vec();
        // 1: ApplicationIdProto {id = 1, cluster_timestamp = 2}.
        let id = &field(&bytes, 1)[0];
        assert_eq!(varint(&field(id, 1)[0]), 42);
        assert_eq!(varint(&field(id, 2)[0]), 1_700_000_000_000);
        assert_eq!(field(&bytes, 2), [b"t".to_vec()]);
        assert_eq!(field(&bytes, 3), [b"q".to_vec()]);
        assert_eq!(varint(&field(&field(&bytes, 4)[0], 1)[0]), 5);
        assert_eq!(varint(&field(&bytes, 7)[0]), 0);
        assert_eq!(varint(&field(&bytes, 8)[0]), 2);
        // 9: ResourceProto {memory = 1, virtual_cores = 2, resource_value_map = 3 {key = 1,
        // value = 2}}.
        let r = &field(&bytes, 9)[0];
        assert_eq!(varint(&field(r, 1)[0]), 256);
        assert_eq!(varint(&field(r, 2)[0]), 1);
        let info = &field(r, 3)[0];
        assert_eq!(field(info, 1), [b"example.com/accelerator".to_vec()]);
        assert_eq!(varint(&field(info, 2)[0]), 1);
        assert_eq!(field(&bytes, 10), [b"YARN-AM".to_vec()]);
        assert_eq!(varint(&field(&bytes, 11)[0]), 1);
        assert_eq!(field(&bytes, 12), [b"mixed".to_vec()]);
        assert_eq!(varint(&field(&bytes, 13)[0]), 60_000);
        assert_eq!(field(&field(&bytes, 14)[0], 1), [b"stdout$".to_vec()]);
        assert!(field(&field(&bytes, 14)[0], 2).is_empty());
        assert!(field(&bytes, 16).is_empty() && field(&bytes, 17).is_empty());
        // 18: ApplicationTimeoutMapProto {type = 1 (LIFETIME), timeout = 2 (seconds)}.
        let t = &field(&bytes, 18)[0];
        assert_eq!((varint(&field(t, 1)[0]), varint(&field(t, 2)[0])), (1, 15));
        // Nothing we did not mean to send (6: cancel tokens, 15: reservation).
        let numbers: std::collections::BTreeSet<u32> =
            raw_fields(&bytes).into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            numbers.into_iter().collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 18]
        );
    }

    #[test]
    fn the_am_launch_context_is_the_nm_encoding_with_the_credentials_as_token_storage() {
        let sub = sample();
        let ctx = submission_context(&sub).unwrap();
        let bytes = ctx.encode_to_vec();
        let clc = ContainerLaunchContextProto::decode(&field(&bytes, 5)[0][..]).unwrap();
        assert_eq!(clc, am_launch_spec(&sub.am).to_proto());
        assert_eq!(clc.command, std::slice::from_ref(&sub.am.command));
        let creds = crate::credentials::Credentials::decode(clc.tokens()).unwrap();
        assert_eq!(creds.secret("yarn-am.secret"), Some(&b"s3cret"[..]));
        assert_eq!(clc.application_ac_ls.len(), 1);
        assert!(clc.service_data.is_empty());
        let lr = &clc.local_resources[0];
        assert_eq!(lr.key(), "yarn-am");
        let url = lr.value.as_ref().unwrap().resource.as_ref().unwrap();
        assert_eq!(
            (url.host(), url.port(), url.file()),
            ("nn", 8020, "/user/a/.yarn-am/yarn-am")
        );
        // Decode what we encode: the whole context survives the round trip.
        assert_eq!(
            ApplicationSubmissionContextProto::decode(&bytes[..]).unwrap(),
            ctx
        );
    }

    #[test]
    fn an_am_node_label_is_one_am_request_at_any_with_the_whole_size() {
        let mut sub = sample();
        sub.am_node_label = Some("gpu".into());
        sub.priority = None;
        sub.lifetime = None;
        sub.attempt_failures_validity_interval_ms = None;
        sub.log_aggregation = LogAggregation::default();
        let ctx = submission_context(&sub).unwrap();
        assert_eq!(ctx.node_label_expression, None);
        let [req] = ctx.am_container_resource_request.as_slice() else {
            panic!("{:?}", ctx.am_container_resource_request)
        };
        assert_eq!(req.resource_name(), "*");
        assert_eq!(req.node_label_expression(), "gpu");
        assert_eq!(
            (req.num_containers(), req.priority.unwrap().priority()),
            (1, 0)
        );
        assert_eq!(req.capability, ctx.resource);
        let bytes = ctx.encode_to_vec();
        for absent in [4, 13, 14, 16, 18] {
            assert!(field(&bytes, absent).is_empty(), "field {absent}");
        }
        assert_eq!(field(&bytes, 17).len(), 1);
    }

    #[test]
    fn bad_ids_and_lifetimes_are_typed_errors() {
        let mut sub = sample();
        sub.application_id = "app_1_2".into();
        assert!(matches!(
            submission_context(&sub),
            Err(ClientRmError::BadAppId(_))
        ));
        let mut sub = sample();
        sub.lifetime = Some(Duration::from_millis(500));
        assert!(matches!(
            submission_context(&sub),
            Err(ClientRmError::BadLifetime(_))
        ));
    }
}
