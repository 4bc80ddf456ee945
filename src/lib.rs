//! `yarn-am`: a YARN ApplicationMaster for elastic, locality-aware work.
//!
//! # Layout
//!
//! One library holds every module; `src/main.rs` only parses the command line and
//! dispatches. The folders name a layer or a process (docs/architecture.md has the map):
//!
//! - [`core`]: the sans-IO core. Ids, demand, topology, the allocator, the embedded
//!   driver, input splits, the key-value store, and the AM's decisions (`AmCore`, the
//!   executor pool, the registry, poll deliveries). Plain data in, plain data out; no
//!   sockets, no clock reads.
//! - [`protocol`]: the contracts between processes, one file each: the driver API's JSON,
//!   the executor poll protocol with its MAC scheme, the key-value store's endpoints and
//!   container key, the submitter -> AM spec, the driver API's TLS (one pinned certificate
//!   per application) and the driver's secret file.
//! - [`am`]: the AM process, the tokio shell that carries out what the core decides.
//! - [`http`]: the AM's HTTP face: the driver API (the key-value store's endpoints too) and
//!   the executor poll endpoint (TLS only),
//!   the tracking page (also alone on a plain port for the RM's proxy) and the metrics.
//! - [`executor`]: the executor process (runs the embedded driver's tasks).
//! - [`split`]: `yarn-am split cat`, the reader a task over an HDFS input runs to get its
//!   split's records (the record rule itself is sans-IO, in `core::inputs::records`).
//! - [`submit`]: the submitter (`yarn-am submit`): spec, credentials, staging, the RM call.
//! - [`staging`]: the application's folder of files, local or on HDFS.
//! - [`tools`]: the small commands (`nodes`, `status`, `kill`, `logs`, `plan`, `kv`).
//! - [`cluster`]: how a process reaches the cluster, shared by the processes: the RM from a
//!   command's flags and the Hadoop configuration, HDFS listings, an application's report.
//! - [`sim`]: the locality simulator, a model of the RM's scheduler for comparing
//!   placement strategies offline (tests, benches, the `sim` example).
//! - [`cli`]: the command line's definitions.
//!
//! The network protocols themselves (Hadoop IPC, SASL, RM REST, WebHDFS) are the
//! `yarn-client` crate's.

pub mod am;
pub mod cli;
pub mod cluster;
pub mod executor;
pub mod http;
pub mod split;
pub mod staging;
pub mod submit;
pub mod tools;
