//! ContainerManagementProtocol client: start, stop and query containers on one NodeManager.
//! Each NM wants the NM token the RM issued for that node (SASL TOKEN auth).

use std::collections::BTreeMap;

use crate::ids::node_id_string;
use crate::proto::yarn::{
    ContainerIdProto, ContainerLaunchContextProto, ContainerProto,
    GetContainerStatusesRequestProto, GetContainerStatusesResponseProto, LocalResourceProto,
    StartContainerRequestProto, StartContainersRequestProto, StartContainersResponseProto,
    StopContainersRequestProto, StopContainersResponseProto, StringLocalResourceMapProto,
    StringStringMapProto,
};
use crate::rpc::{Auth, RpcClient, RpcConfig, RpcError};
use crate::token::Token;

pub const PROTOCOL: &str = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB";

/// What to run in a container. The NM joins `command` with spaces and runs it with bash.
#[derive(Debug, Clone, Default)]
pub struct LaunchSpec {
    pub command: Vec<String>,
    pub environment: BTreeMap<String, String>,
    pub local_resources: BTreeMap<String, LocalResourceProto>,
    /// A Writable token-storage blob (`Credentials::encode`); omit rather than send empty.
    pub tokens: Option<Vec<u8>>,
}

impl LaunchSpec {
    pub fn to_proto(&self) -> ContainerLaunchContextProto {
        ContainerLaunchContextProto {
            local_resources: self
                .local_resources
                .iter()
                .map(|(k, v)| StringLocalResourceMapProto {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect(),
            tokens: self.tokens.clone(),
            service_data: vec![],
            environment: self
                .environment
                .iter()
                .map(|(k, v)| StringStringMapProto {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect(),
            command: self.command.clone(),
        }
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
