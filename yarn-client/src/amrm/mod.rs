//! ApplicationMasterProtocol client (RM scheduler port, 8030): register, allocate, finish.
//!
//! This is the wire-level client only; the AMRMClient-style request table (which turns
//! container requests into absolute node/rack/ANY counts) lives elsewhere and hands us
//! the asks to send. The protocol's state has one owner, and it is not this client:
//! the `response_id` to send and the NM tokens (the RM sends each only once) live in
//! [`crate::request_table::AmrmState`] (its `response_id` and `nm_tokens`), which a caller
//! feeds every reply. This client keeps only what its connections need: the current AMRM
//! token, switched when a reply rolls it over.

use std::time::Duration;

use tracing::info;

use crate::ask::Ask;
use crate::proto::yarn::{
    AllocateRequestProto, AllocateResponseProto, ContainerIdProto, FinalApplicationStatusProto,
    FinishApplicationMasterRequestProto, FinishApplicationMasterResponseProto,
    RegisterApplicationMasterRequestProto, RegisterApplicationMasterResponseProto,
    ResourceBlacklistRequestProto, ResourceRequestProto,
};
use crate::rpc::{Auth, RpcClient, RpcConfig, RpcError};
use crate::token::Token;

mod convert;
pub(crate) use convert::resource_proto;
mod records;

pub use records::{
    AllocatedContainer, Allocation, CompletedContainer, NodeReport, Preemption, PreemptionAsk,
    Registration,
};

pub const PROTOCOL: &str = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";

/// Java exception classes the RM throws at an AM, as they arrive in `RemoteError::class`.
pub mod exceptions {
    /// The RM lost our registration (RM restart, failover): re-register and resend the
    /// full ask table, pending releases and blacklist.
    pub const NOT_REGISTERED: &str =
        "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException";
    /// The RM does not know this attempt any more: shut down.
    pub const ATTEMPT_NOT_FOUND: &str =
        "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException";
    /// An ask is invalid (e.g. above the maximum allocation); fix the ask, do not retry it.
    pub const INVALID_RESOURCE_REQUEST: &str =
        "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException";
    /// Second register for the same attempt, or a wrong `response_id`.
    pub const INVALID_AM_REQUEST: &str =
        "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException";
}

/// What an AM should do about a failed AMRM call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Call `register` again, then resend the whole request state.
    Reregister,
    /// The attempt is gone or our credentials are refused: exit.
    Shutdown,
    /// The request itself is wrong; retrying it unchanged will fail again.
    FixRequest,
    /// Network trouble or a server hiccup: retry the same call (allocate is idempotent
    /// for the same `response_id`).
    Retry,
}

/// Classifies an error from register/allocate/finish.
pub fn recovery(e: &RpcError) -> Recovery {
    if e.is_auth_failure() || e.is_class(exceptions::ATTEMPT_NOT_FOUND) {
        Recovery::Shutdown
    } else if e.is_class(exceptions::NOT_REGISTERED) {
        Recovery::Reregister
    } else if e.is_class(exceptions::INVALID_RESOURCE_REQUEST)
        || e.is_class(exceptions::INVALID_AM_REQUEST)
    {
        Recovery::FixRequest
    } else {
        Recovery::Retry
    }
}
/// Everything one heartbeat carries to the RM.
#[derive(Debug, Clone, Default)]
pub struct AllocateInput {
    pub asks: Vec<Ask>,
    pub releases: Vec<ContainerIdProto>,
    pub blacklist_additions: Vec<String>,
    pub blacklist_removals: Vec<String>,
    pub progress: f32,
    /// `response_id` to send: the last one the RM answered with, 0 after registering
    /// (kept by `request_table::AmrmState`).
    pub response_id: i32,
}

/// Final status reported by `finish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalStatus {
    Succeeded,
    Failed,
    Killed,
}

pub struct AmRmClient {
    rpc: RpcClient,
}

impl AmRmClient {
    /// `scheduler_addr` is `yarn.resourcemanager.scheduler.address` (`rm:8030`);
    /// `amrm_token` is the `YARN_AM_RM_TOKEN` from the container's token file.
    pub fn new(scheduler_addr: &str, amrm_token: Token, cfg: RpcConfig) -> Self {
        Self {
            rpc: RpcClient::new(scheduler_addr, PROTOCOL, 1, Auth::Token(amrm_token), cfg),
        }
    }

    pub async fn register(
        &mut self,
        host: &str,
        rpc_port: i32,
        tracking_url: &str,
    ) -> Result<RegisterApplicationMasterResponseProto, RpcError> {
        let req = RegisterApplicationMasterRequestProto {
            host: Some(host.to_string()),
            rpc_port: Some(rpc_port),
            tracking_url: Some(tracking_url.to_string()),
        };
        let resp: RegisterApplicationMasterResponseProto =
            self.rpc.call("registerApplicationMaster", &req).await?;
        info!(queue = ?resp.queue, max = ?resp.maximum_capability, "registered with the RM");
        Ok(resp)
    }

    /// One heartbeat. On success switches to a rolled-over AMRM token for future
    /// connections; the response id and NM tokens of the reply are the caller's to keep.
    pub async fn allocate(
        &mut self,
        input: &AllocateInput,
    ) -> Result<AllocateResponseProto, RpcError> {
        let blacklist =
            if input.blacklist_additions.is_empty() && input.blacklist_removals.is_empty() {
                None
            } else {
                Some(ResourceBlacklistRequestProto {
                    blacklist_additions: input.blacklist_additions.clone(),
                    blacklist_removals: input.blacklist_removals.clone(),
                })
            };
        let req = AllocateRequestProto {
            ask: input.asks.iter().map(ResourceRequestProto::from).collect(),
            release: input.releases.clone(),
            blacklist_request: blacklist,
            response_id: Some(input.response_id),
            progress: Some(input.progress),
            tracking_url: None,
        };
        let resp: AllocateResponseProto = self.rpc.call("allocate", &req).await?;
        // Which request key each grant filled (the AM's strict and relaxed requests use
        // different ids): the AM's matching logs which of its requests it charged it to.
        for c in &resp.allocated_containers {
            info!(
                container = %c.id.as_ref().map(crate::ids::container_id_string).unwrap_or_default(),
                host = c.node_id.as_ref().and_then(|n| n.host.as_deref()).unwrap_or(""),
                allocation_request_id = c.allocation_request_id(),
                "granted by the RM"
            );
        }
        if let Some(t) = &resp.am_rm_token {
            info!("AMRM token rolled over; new connections use the new one");
            self.rpc.set_token(t.clone().into());
        }
        Ok(resp)
    }

    /// Unregisters, repeating until the RM says `isUnregistered` (it usually does not on the
    /// first call) or `deadline` passes.
    pub async fn finish(
        &mut self,
        status: FinalStatus,
        diagnostics: &str,
        tracking_url: &str,
        deadline: Duration,
    ) -> Result<(), RpcError> {
        let req = FinishApplicationMasterRequestProto {
            diagnostics: Some(diagnostics.to_string()),
            tracking_url: Some(tracking_url.to_string()),
            final_application_status: Some(match status {
                FinalStatus::Succeeded => FinalApplicationStatusProto::AppSucceeded,
                FinalStatus::Failed => FinalApplicationStatusProto::AppFailed,
                FinalStatus::Killed => FinalApplicationStatusProto::AppKilled,
            } as i32),
        };
        let start = std::time::Instant::now();
        loop {
            let resp: FinishApplicationMasterResponseProto =
                self.rpc.call("finishApplicationMaster", &req).await?;
            if resp.is_unregistered() {
                info!("unregistered from the RM");
                return Ok(());
            }
            if start.elapsed() >= deadline {
                return Err(RpcError::Timeout {
                    addr: self.rpc.addr().to_string(),
                    what: "unregistering (finishApplicationMaster)",
                    after: deadline,
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Keepalive ping on the RM connection (no reply; errors only if the write fails).
    pub async fn ping(&self) -> Result<(), RpcError> {
        self.rpc.ping().await
    }

    pub async fn is_connected(&self) -> bool {
        self.rpc.is_connected().await
    }
}

#[cfg(test)]
mod tests;
