//! The small commands (`nodes`, `status`, `list`, `kill`, `logs`, `plan`, `kv`) and the way
//! every command reaches the ResourceManager from its flags and the Hadoop configuration
//! (`rm`).

pub mod aggregated_logs;
pub mod kv;
pub mod logs;
pub mod nodes;
pub mod plan;
pub mod rm;
pub mod status;
