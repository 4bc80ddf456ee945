//! Why a container request was refused.

use super::types::RequestId;
use crate::ask::Priority;

/// Errors of [`super::RequestTable`]. All are raised before the table is touched, so a
/// refused request leaves no partial counts behind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// Hadoop's `InvalidContainerRequestException`: at one priority (and allocation
    /// request id) a location is either relaxed or strict for every request, because the
    /// RM keeps a single relax flag per (priority, location). Mixing them would silently
    /// turn one request's "anywhere" into another's "only here", or the reverse.
    #[error(
        "cannot request location {location} at priority {priority} with relax_locality={requested}: \
         it is already requested with relax_locality={existing}"
    )]
    LocalityConflict {
        location: String,
        priority: i32,
        requested: bool,
        existing: bool,
    },
    /// The RM accepts a single label per request; `&&` / `||` expressions are refused by
    /// Hadoop's client too.
    #[error("node label expression {0:?} names more than one label")]
    NodeLabelExpression(String),
    /// relax_locality=false with no node and no rack would mean "nowhere".
    #[error("relax_locality=false needs at least one node or rack (priority {0:?})")]
    StrictWithoutLocation(Priority),
    /// Negative sizes cannot be granted and would break fit checks.
    #[error("capability must not be negative: {memory_mb} MB, {vcores} vcores")]
    NegativeCapability { memory_mb: i64, vcores: i32 },
    /// The id was never handed out or its request was already removed.
    #[error("no outstanding container request {0}")]
    UnknownRequest(RequestId),
}
