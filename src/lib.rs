//! `yarn-am`: a YARN ApplicationMaster for elastic, locality-aware work.
//!
//! # Layout
//!
//! The workspace is layered, and the compiler keeps the layers (a wrong import does not
//! build): this crate (the processes) -> `yarn-am-core` (`crates/core`, the sans-IO
//! decisions) -> `yarn-am-wire` (`crates/wire`, every contract) -> `yarn-client` (Hadoop
//! IPC, SASL, RM REST, WebHDFS). `src/main.rs` only parses the command line and dispatches.
//!
//! The folders here name a process or a layer the processes share (docs/architecture.md
//! has the map); no process folder imports another (the suite checks it):
//!
//! - processes: [`am`] (with [`http`], its HTTP face), [`executor`], [`submit`], [`tools`]
//!   (`nodes`, `status`, `kill`, `logs`, `plan`, `kv`), [`split`] (`yarn-am split cat`);
//! - shared: [`staging`] (the application's folder, one file system trait with a local and
//!   a WebHDFS implementation), [`cluster`] (the RM from flags and the Hadoop
//!   configuration, HDFS listings, an app's report, a next AM attempt's address), [`cli`]
//!   (the command line's definitions).

pub mod am;
pub mod cli;
pub mod cluster;
pub mod executor;
pub mod http;
pub mod split;
pub mod staging;
pub mod submit;
pub mod tools;
