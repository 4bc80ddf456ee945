//! What staging hands YARN: a staged file as a local resource of a container (the types
//! are contracts, in the wire layer).

pub use crate::protocol::staged::{ResourceKind, StagedFile, Visibility};
