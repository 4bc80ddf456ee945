//! AMRM bookkeeping without I/O: what Hadoop's `AMRMClientImpl` remembers between
//! heartbeats, as plain Rust types.
//!
//! * [`RequestTable`]: container requests -> per-location absolute counts -> the ask list;
//!   matching granted containers back to requests (see its docs for the over-allocation
//!   trap, YARN-1902).
//! * [`Releases`], [`Exclusions`]: what to give back and where not to run.
//! * [`ResponseId`], [`AmrmToken`], [`NmTokenCache`]: heartbeat and token state.
//! * [`AmrmState`]: all of the above plus the allocate / failure / resync transitions.
//!
//! Asks, sizes and priorities are the shared types of [`crate::ask`]; tokens are
//! [`crate::token::Token`]. There is deliberately no protobuf here: the IPC layer converts
//! [`Ask`](crate::ask::Ask) to `ResourceRequestProto` (and responses to
//! [`AllocateOutcome`]) at the edge. Only the GUARANTEED execution type is modelled.

mod amrm_state;
mod error;
mod exclusions;
mod rack;
mod releases;
mod response_id;
mod rm_tokens;
mod table;
mod types;

#[cfg(test)]
mod tests;

pub use amrm_state::{AllocateBatch, AllocateOutcome, AmrmState};
pub use error::RequestError;
pub use exclusions::{ExclusionDelta, Exclusions};
pub use rack::{DefaultRackResolver, MapRackResolver, RackResolver};
pub use releases::Releases;
pub use response_id::{next_response_id, ResponseId};
pub use rm_tokens::{AmrmToken, NmTokenCache};
pub use table::RequestTable;
pub use types::{ContainerId, ContainerRequest, RequestId, DEFAULT_RACK};
