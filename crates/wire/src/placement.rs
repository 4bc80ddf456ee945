//! The vocabulary of placement that crosses process boundaries: how local a container or a
//! task turned out (the driver API, the job report) and which placement rules the allocator
//! follows (a submit flag, carried in the spec).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How well a container fits the request it satisfied. Also what the driver API shows
/// (`node`, `rack`, `any`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Locality {
    Node,
    Rack,
    Any,
}

/// How close a launch is to the data it wanted. Ordered from most to least local.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskLocality {
    NodeLocal,
    NoPref,
    RackLocal,
    Any,
}

/// Which placement rules the allocator follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Spark's placement and update step, reproduced exactly.
    Spark,
    /// Spark's algorithm with the blind spots fixed (module docs).
    #[default]
    Default,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown strategy `{0}` (expected `spark` or `default`)")]
pub struct UnknownStrategy(pub String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "spark" => Ok(Strategy::Spark),
            "default" => Ok(Strategy::Default),
            other => Err(UnknownStrategy(other.to_string())),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strategy::Spark => "spark",
            Strategy::Default => "default",
        })
    }
}
