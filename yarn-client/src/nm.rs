//! ContainerManagementProtocol client: start, stop and query containers on one NodeManager.
//! Each NM wants the NM token the RM issued for that node (SASL TOKEN auth).

use std::collections::BTreeMap;

use crate::amrm::AllocatedContainer;
use crate::ids::node_id_string;
use crate::proto::common::TokenProto;
use crate::proto::yarn::{
    ContainerIdProto, ContainerLaunchContextProto, ContainerProto,
    GetContainerStatusesRequestProto, GetContainerStatusesResponseProto, LocalResourceProto,
    LocalResourceTypeProto, LocalResourceVisibilityProto, StartContainerRequestProto,
    StartContainersRequestProto, StartContainersResponseProto, StopContainersRequestProto,
    StopContainersResponseProto, StringBytesMapProto, StringLocalResourceMapProto,
    StringStringMapProto, UrlProto,
};
use crate::rest::LocalResource;
use crate::rpc::{Auth, RpcClient, RpcConfig, RpcError};
use crate::token::Token;

pub const PROTOCOL: &str = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB";

/// What to run in a container. The NM joins `command` with spaces and runs it with bash.
#[derive(Debug, Clone, Default)]
pub struct LaunchSpec {
    pub command: Vec<String>,
    pub environment: BTreeMap<String, String>,
    pub local_resources: BTreeMap<String, LocalResource>,
    /// A Writable token-storage blob (`Credentials::encode`); omit rather than send empty.
    pub tokens: Option<Vec<u8>>,
    /// The app's ACLs: a NodeManager takes them from the first launch context of the app it
    /// sees, so every container carries them (see [`crate::acl`]).
    pub acls: crate::acl::AppAcls,
    /// Data for the NodeManager's auxiliary services, by service name (the launch context's
    /// `service_data`, field 3): the NM hands each named service its bytes when the
    /// container starts (`AuxiliaryService.initializeApplication`), e.g. Spark's external
    /// shuffle service (`spark_shuffle`) the app's shuffle secret. A NodeManager refuses a
    /// container naming a service it does not run. The bytes may be secret: never logged.
    pub service_data: BTreeMap<String, Vec<u8>>,
}

impl LaunchSpec {
    pub fn to_proto(&self) -> ContainerLaunchContextProto {
        ContainerLaunchContextProto {
            local_resources: self
                .local_resources
                .iter()
                .map(|(k, v)| StringLocalResourceMapProto {
                    key: Some(k.clone()),
                    value: Some(local_resource(v)),
                })
                .collect(),
            tokens: self.tokens.clone(),
            service_data: self
                .service_data
                .iter()
                .map(|(k, v)| StringBytesMapProto {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect(),
            environment: self
                .environment
                .iter()
                .map(|(k, v)| StringStringMapProto {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect(),
            command: self.command.clone(),
            application_ac_ls: self.acls.to_proto(),
        }
    }
}

/// A resource URL (`file:///path`, `hdfs://host:port/path`) as YARN's URL record:
/// `file:///path` has no host and port -1; `hdfs://host:port/path` keeps both (the NM's
/// HDFS client connects there); an HA nameservice has no port.
fn yarn_url(url: &str) -> UrlProto {
    let (scheme, rest) = url.split_once("://").unwrap_or(("file", url));
    let (authority, file) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if p.parse::<i32>().is_ok() => (h, p.parse().unwrap_or(-1)),
        _ => (authority, -1),
    };
    UrlProto {
        scheme: Some(scheme.to_string()),
        host: (!host.is_empty()).then(|| host.to_string()),
        port: Some(port),
        file: Some(file.to_string()),
        user_info: None,
    }
}

/// A local resource as the NM protocol's record. Unknown type or visibility names fall
/// back to `FILE` and `APPLICATION`.
fn local_resource(r: &LocalResource) -> LocalResourceProto {
    let kind = match r.kind.as_str() {
        "ARCHIVE" => LocalResourceTypeProto::Archive,
        "PATTERN" => LocalResourceTypeProto::Pattern,
        _ => LocalResourceTypeProto::File,
    };
    let visibility = match r.visibility.as_str() {
        "PUBLIC" => LocalResourceVisibilityProto::Public,
        "PRIVATE" => LocalResourceVisibilityProto::Private,
        _ => LocalResourceVisibilityProto::Application,
    };
    LocalResourceProto {
        resource: Some(yarn_url(&r.resource)),
        size: Some(r.size as i64),
        timestamp: Some(r.timestamp as i64),
        r#type: Some(kind as i32),
        visibility: Some(visibility as i32),
        pattern: None,
        should_be_uploaded_to_shared_cache: None,
    }
}

pub struct NmClient {
    rpc: RpcClient,
}

impl NmClient {
    /// `node` is the container's NodeId (`host:port`, the NM IPC address).
    pub fn new(node: &str, nm_token: Token, cfg: RpcConfig) -> Self {
        Self {
            rpc: RpcClient::new(node, PROTOCOL, 1, Auth::Token(nm_token), cfg),
        }
    }

    /// For an allocated container: connects to its node.
    pub fn for_container(c: &ContainerProto, nm_token: Token, cfg: RpcConfig) -> Self {
        let node = c.node_id.as_ref().map(node_id_string).unwrap_or_default();
        Self::new(&node, nm_token, cfg)
    }

    /// Starts one granted container. The NodeManager's refusal is an error naming its
    /// message.
    pub async fn start_allocated(
        &self,
        c: &AllocatedContainer,
        spec: LaunchSpec,
    ) -> Result<Result<(), String>, RpcError> {
        let req = StartContainersRequestProto {
            start_container_request: vec![StartContainerRequestProto {
                container_launch_context: Some(spec.to_proto()),
                container_token: c.token.as_ref().map(TokenProto::from),
            }],
        };
        let resp: StartContainersResponseProto = self.rpc.call("startContainers", &req).await?;
        Ok(match resp.failed_requests.first() {
            Some(f) => Err(f
                .exception
                .as_ref()
                .and_then(|e| e.message.clone())
                .unwrap_or_else(|| "no message".into())),
            None => Ok(()),
        })
    }

    /// Starts containers. Per-container failures are in `failed_requests`, not errors.
    pub async fn start(
        &self,
        containers: &[(&ContainerProto, LaunchSpec)],
    ) -> Result<StartContainersResponseProto, RpcError> {
        let req = StartContainersRequestProto {
            start_container_request: containers
                .iter()
                .map(|(c, spec)| StartContainerRequestProto {
                    container_launch_context: Some(spec.to_proto()),
                    container_token: c.container_token.clone(),
                })
                .collect(),
        };
        self.rpc.call("startContainers", &req).await
    }

    pub async fn stop(
        &self,
        ids: &[ContainerIdProto],
    ) -> Result<StopContainersResponseProto, RpcError> {
        let req = StopContainersRequestProto {
            container_id: ids.to_vec(),
        };
        self.rpc.call("stopContainers", &req).await
    }

    pub async fn statuses(
        &self,
        ids: &[ContainerIdProto],
    ) -> Result<GetContainerStatusesResponseProto, RpcError> {
        let req = GetContainerStatusesRequestProto {
            container_id: ids.to_vec(),
        };
        self.rpc.call("getContainerStatuses", &req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_urls_become_yarn_url_records() {
        let f = yarn_url("file:///tmp/yarn-am-staging/app/yarn-am");
        assert_eq!(f.scheme.as_deref(), Some("file"));
        assert_eq!(f.host, None);
        assert_eq!(f.port, Some(-1));
        assert_eq!(f.file.as_deref(), Some("/tmp/yarn-am-staging/app/yarn-am"));

        let h = yarn_url("hdfs://rm:8020/user/root/.yarn-am-staging/app/yarn-am");
        assert_eq!(h.scheme.as_deref(), Some("hdfs"));
        assert_eq!(h.host.as_deref(), Some("rm"));
        assert_eq!(h.port, Some(8020));
        assert_eq!(
            h.file.as_deref(),
            Some("/user/root/.yarn-am-staging/app/yarn-am")
        );

        // An HA nameservice has no port.
        let ha = yarn_url("hdfs://mycluster/user/x/f");
        assert_eq!(ha.host.as_deref(), Some("mycluster"));
        assert_eq!(ha.port, Some(-1));
        assert_eq!(ha.file.as_deref(), Some("/user/x/f"));
    }

    #[test]
    fn service_data_is_field_3_of_the_launch_context_as_name_and_bytes_entries() {
        use prost::Message as _;
        let spec = LaunchSpec {
            service_data: BTreeMap::from([
                ("spark_shuffle".to_string(), vec![]),
                ("mapreduce_shuffle".to_string(), vec![0, 1, 0xff]),
            ]),
            ..Default::default()
        };
        let bytes = spec.to_proto().encode_to_vec();
        // Entries in name order; each is field 3, length-delimited (tag 0x1a), holding the
        // key (field 1, tag 0x0a) and the value (field 2, tag 0x12; sent even when empty, as
        // Java's ByteBuffer of 0 bytes is).
        let mut want = vec![0x1a, 24, 0x0a, 17];
        want.extend_from_slice(b"mapreduce_shuffle");
        want.extend_from_slice(&[0x12, 3, 0, 1, 0xff]);
        want.extend_from_slice(&[0x1a, 17, 0x0a, 13]);
        want.extend_from_slice(b"spark_shuffle");
        want.extend_from_slice(&[0x12, 0]);
        assert_eq!(bytes, want);
        // Nothing at all without service data.
        assert!(LaunchSpec::default().to_proto().encode_to_vec().is_empty());
    }

    #[test]
    fn a_staged_file_becomes_an_application_file_resource() {
        let r = local_resource(&LocalResource {
            resource: "hdfs://rm:8020/f".into(),
            kind: "FILE".into(),
            visibility: "APPLICATION".into(),
            size: 7,
            timestamp: 9,
        });
        assert_eq!(r.r#type, Some(LocalResourceTypeProto::File as i32));
        assert_eq!(
            r.visibility,
            Some(LocalResourceVisibilityProto::Application as i32)
        );
        assert_eq!((r.size, r.timestamp), (Some(7), Some(9)));
        assert_eq!(r.resource.unwrap().port, Some(8020));
    }
}
