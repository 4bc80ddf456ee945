//! Everything an AM must remember between allocate calls, put together: the request
//! table, releases, exclusions, the response id and tokens. This is the sans-IO core of
//! `AMRMClientImpl.allocate`: the IPC layer calls [`AmrmState::take_batch`], sends it,
//! and reports back with [`AmrmState::on_allocate_success`], [`AmrmState::restore_batch`]
//! (any failure) or [`AmrmState::resync`] (ApplicationMasterNotRegisteredException).

use tracing::warn;

use super::exclusions::{ExclusionDelta, Exclusions};
use super::rack::RackResolver;
use super::releases::Releases;
use super::response_id::ResponseId;
use super::table::RequestTable;
use super::tokens::{AmrmToken, NmTokenCache};
use super::types::{Ask, ContainerId, Token};

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
        AllocateBatch {
            response_id: self.response_id.current(),
            asks: self.table.take_asks(),
            releases: self.releases.take(),
            exclusions: self.exclusions.take(),
        }
    }

    /// The allocate call failed (I/O error, RM error): queue its contents again so the
    /// next call carries them. Changes made since the batch was taken take precedence.
    pub fn restore_batch(&mut self, batch: AllocateBatch) {
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
    }
}
