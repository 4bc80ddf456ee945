//! What staging hands YARN: a staged file as a local resource of a container (the types
//! are contracts, in the wire layer).

pub use yarn_am_wire::staged::{ResourceKind, StagedFile, Visibility};
