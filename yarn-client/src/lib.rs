//! yarn-client: the parts of Hadoop YARN's protocols that an ApplicationMaster needs,
//! written from the wire facts up (no JVM, no generated Hadoop code).
//!
//! Each module owns one concern; add new ones here, one line each.

pub mod conf;
pub mod request_table;
pub mod rest;
