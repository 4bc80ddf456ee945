//! The AM's session with the ResourceManager's scheduler port: register, allocate,
//! re-register, unregister.
//!
//! The session owns the [`AmRmClient`] and nothing else of the AM. An allocate call takes the
//! session by value and hands it back with the outcome ([`RmSession::allocate`]), so the
//! call is a future that borrows nothing: the loop keeps serving the driver API, executor
//! polls and launch reports while it is in flight (a slow or stalled RM costs the AM's
//! clients nothing). An RM that lost our registration (it restarted) is registered with
//! again inside the same future, so the core only learns that it must resend its whole
//! state.
//!
//! The RM's answers reach the rest of the AM as yarn-client's plain records
//! ([`Allocation`], [`Registered`]), never as wire types.

use std::time::Duration;

use yarn_client::amrm::Registration as Registered;
use yarn_client::amrm::{recovery, AllocateInput, Allocation, AmRmClient, FinalStatus, Recovery};
use yarn_client::request_table::AllocateBatch;
use yarn_client::rpc::{RpcConfig, RpcError};
use yarn_client::token::Token;

use yarn_am_core::am::events::RmReply;

/// How the AM registers (and registers again after an RM restart).
#[derive(Debug, Clone)]
pub struct AmEndpoint {
    pub host: String,
    pub rpc_port: i32,
    pub tracking_url: String,
}

pub struct RmSession {
    client: AmRmClient,
    registration: AmEndpoint,
}

impl RmSession {
    /// A session on a new connection. Also how the AM unregisters when its session is lost
    /// in an abandoned call (with the newest AMRM token).
    pub fn new(addr: &str, amrm_token: Token, registration: AmEndpoint, rpc: RpcConfig) -> Self {
        Self {
            client: AmRmClient::new(addr, amrm_token, rpc),
            registration,
        }
    }

    pub async fn register(&mut self) -> Result<Registered, RpcError> {
        let r = &self.registration;
        let resp = self
            .client
            .register(&r.host, r.rpc_port, &r.tracking_url)
            .await?;
        Ok(Registered::from(&resp))
    }

    /// One allocate call with `batch`, reporting `progress` (0 to 1); returns the session,
    /// the batch (the core restores or resends it on failure) and the outcome. Borrows
    /// nothing.
    pub async fn allocate(
        mut self,
        batch: AllocateBatch,
        progress: f32,
    ) -> (Self, AllocateBatch, RmReply) {
        let input = AllocateInput::from_batch(&batch, progress);
        let reply = match self.client.allocate(&input).await {
            Ok(resp) => RmReply::Allocated(Box::new(Allocation::from(&resp))),
            Err(e) => self.after_failure(e).await,
        };
        (self, batch, reply)
    }

    async fn after_failure(&mut self, e: RpcError) -> RmReply {
        match recovery(&e) {
            Recovery::Retry => RmReply::Failed {
                answered: e.remote().is_some(),
                error: e.to_string(),
            },
            Recovery::Reregister => {
                tracing::warn!(%e, "the RM lost our registration; registering again");
                match self.register().await {
                    Ok(r) => RmReply::Reregistered {
                        nm_tokens: r.nm_tokens_from_previous_attempts,
                    },
                    // The RM is there but refuses us, or went away again: a refusal ends
                    // the AM, a network error is retried by the next allocate (which gets
                    // NOT_REGISTERED again and comes back here).
                    Err(e) if recovery(&e) == Recovery::Retry => RmReply::Failed {
                        answered: e.remote().is_some(),
                        error: format!("re-registering: {e}"),
                    },
                    Err(e) => RmReply::Refused(format!("re-registering: {e}")),
                }
            }
            Recovery::Shutdown | Recovery::FixRequest => RmReply::Refused(e.to_string()),
        }
    }

    /// Unregisters. Rides out an RM that is restarting (network errors are retried until
    /// `UNREGISTER_LIMIT`) and one that lost our registration (register, then again), so a
    /// job that ends while the RM restarts is not left to fail its attempt.
    pub async fn finish(&mut self, status: FinalStatus, diagnostics: &str) -> Result<(), RpcError> {
        let url = self.registration.tracking_url.clone();
        let start = std::time::Instant::now();
        loop {
            let e = match self
                .client
                .finish(status, diagnostics, &url, Duration::from_secs(20))
                .await
            {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            match recovery(&e) {
                Recovery::Reregister => {
                    tracing::warn!(%e, "unregistering: the RM lost our registration; registering again");
                    if let Err(e) = self.register().await {
                        if recovery(&e) != Recovery::Retry {
                            return Err(e);
                        }
                    }
                }
                Recovery::Retry if start.elapsed() < UNREGISTER_LIMIT => {
                    tracing::warn!(%e, "unregistering failed; trying again");
                }
                _ => return Err(e),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// How long unregistering keeps trying through RM trouble (an RM restart takes tens of
/// seconds here; the AM exits with an error after this).
const UNREGISTER_LIMIT: Duration = Duration::from_secs(90);
