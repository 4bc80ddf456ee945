//! yarn-client: the parts of Hadoop YARN's protocols that an ApplicationMaster needs,
//! written from the wire facts up (no JVM, no generated Hadoop code).
//!
//! Each module owns one concern; add new ones here, one line each.

pub mod amrm;
pub mod ask;
pub mod conf;
pub mod credentials;
pub mod gssapi;
pub mod http_auth;
pub mod ids;
pub mod nm;
pub mod proto;
pub mod request_table;
pub mod rest;
pub mod rpc;
pub mod sasl;
pub mod token;
pub mod webhdfs;
