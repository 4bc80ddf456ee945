//! The small commands (`nodes`, `status`, `list`, `kill`, `logs`, `plan`, `kv`). How they
//! reach the ResourceManager and HDFS is [`crate::cluster`]'s.

pub mod aggregated_logs;
pub mod kv;
pub mod logs;
pub mod nodes;
pub mod plan;
pub mod status;
