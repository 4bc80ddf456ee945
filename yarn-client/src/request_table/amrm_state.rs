//! Everything an AM must remember between allocate calls, put together: the request
//! table, releases, exclusions, the response id and tokens. This is the sans-IO core of
//! `AMRMClientImpl.allocate`: the IPC layer calls [`AmrmState::take_batch`], sends it,
//! and reports back with [`AmrmState::on_allocate_success`], [`AmrmState::restore_batch`]
//! (any failure) or [`AmrmState::resync`] (ApplicationMasterNotRegisteredException).
//!
//! Retries are subtle: when an allocate fails on the wire, the RM may or may not have
//! processed it. The retry carries the same response id; if the RM had processed the
//! first call it answers the retry with its cached response and ignores the retry's
//! contents (docs/hadoop-rpc-facts.md 5.6). Anything queued between the failure and the retry would
//! then be silently dropped. So the batch of a retry is "in doubt" and is queued once
//! more after it succeeds (newer changes still win; absolute counts make the repeat
//! harmless; releases are repeated only while not confirmed).

use tracing::{debug, warn};

use super::exclusions::{ExclusionDelta, Exclusions};
use super::rack::RackResolver;
use super::releases::Releases;
use super::response_id::ResponseId;
use super::rm_tokens::{AmrmToken, NmTokenCache};
use super::table::RequestTable;
use super::types::ContainerId;
use crate::ask::Ask;
use crate::token::Token;

/// The contents of one AllocateRequest (progress is the caller's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocateBatch {
    pub response_id: i32,
    pub asks: Vec<Ask>,
    pub releases: Vec<ContainerId>,
    pub exclusions: ExclusionDelta,
}

/// The parts of an AllocateResponse this state cares about.
#[derive(Debug, Clone, Default)]
pub struct AllocateOutcome {
    pub response_id: i32,
    /// Ids of `completed_container_statuses`.
    pub completed: Vec<ContainerId>,
    /// `nm_tokens`, keyed by NodeId `host:port`.
    pub nm_tokens: Vec<(String, Token)>,
    pub amrm_token: Option<Token>,
}

#[derive(Debug, Default)]
pub struct AmrmState {
    pub table: RequestTable,
    pub releases: Releases,
    pub exclusions: Exclusions,
    pub response_id: ResponseId,
    pub amrm_token: AmrmToken,
    pub nm_tokens: NmTokenCache,
    /// The last call failed; the next batch is a retry.
    retrying: bool,
    /// A retry batch the RM may have answered from its cache without reading it.
    in_doubt: Option<AllocateBatch>,
}

impl AmrmState {
    pub fn new(resolver: impl RackResolver + 'static, amrm_token: Option<Token>) -> Self {
        Self {
            table: RequestTable::new(resolver),
            amrm_token: AmrmToken::new(amrm_token),
            ..Self::default()
        }
    }

    /// Registration succeeded: the RM expects response id 0 next, and may hand over
    /// NMTokens of containers kept from previous attempts.
    pub fn on_registered(&mut self, nm_tokens_from_previous_attempts: Vec<(String, Token)>) {
        self.response_id.reset();
        self.nm_tokens.extend(nm_tokens_from_previous_attempts);
    }

    /// Everything to send on the next allocate; the queues are cleared optimistically.
    pub fn take_batch(&mut self) -> AllocateBatch {
        let batch = AllocateBatch {
            response_id: self.response_id.current(),
            asks: self.table.take_asks(),
            releases: self.releases.take(),
            exclusions: self.exclusions.take(),
        };
        if std::mem::take(&mut self.retrying) {
            self.in_doubt = Some(batch.clone());
        }
        batch
    }

    /// The allocate call failed (I/O error, RM error): queue its contents again so the
    /// next call carries them. Changes made since the batch was taken take precedence.
    pub fn restore_batch(&mut self, batch: AllocateBatch) {
        self.retrying = true;
        self.in_doubt = None;
        self.table.restore_asks(batch.asks);
        self.releases.restore(batch.releases);
        self.exclusions.restore(batch.exclusions);
    }

    /// The allocate call succeeded.
    pub fn on_allocate_success(&mut self, outcome: AllocateOutcome) {
        self.response_id.on_response(outcome.response_id);
        self.releases.on_completed(&outcome.completed);
        self.nm_tokens.extend(outcome.nm_tokens);
        if let Some(token) = outcome.amrm_token {
            self.amrm_token.update(token);
        }
        if let Some(doubt) = self.in_doubt.take() {
            debug!("re-queuing the contents of a retried allocate once more");
            self.table.restore_asks(doubt.asks);
            let pending: Vec<ContainerId> = doubt
                .releases
                .into_iter()
                .filter(|id| self.releases.is_pending(id))
                .collect();
            self.releases.restore(pending);
            self.exclusions.restore(doubt.exclusions);
        }
    }

    /// The RM no longer knows this attempt as registered (it restarted or failed over):
    /// it has lost our asks, releases and exclusions. Queue the whole request table with
    /// absolute counts, every release not yet confirmed and the full exclusion list, and
    /// reset the response id to 0. The caller then re-registers and allocates again. Pass
    /// the batch whose allocate failed so nothing in it (e.g. a 0-count ask, an exclusion
    /// removal) is lost.
    pub fn resync(&mut self, failed: Option<AllocateBatch>) {
        warn!("ApplicationMaster out of sync with the ResourceManager; resyncing full state");
        if let Some(batch) = failed {
            self.restore_batch(batch);
        }
        self.table.queue_all();
        self.releases.requeue_pending();
        self.exclusions.requeue_all();
        self.response_id.reset();
        // Everything is being sent in full anyway, to an RM that starts from scratch.
        self.retrying = false;
        self.in_doubt = None;
    }
}
