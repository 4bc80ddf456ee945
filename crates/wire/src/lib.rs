//! The contracts between yarn-am's processes and with its users, one file each: what a
//! driver sends the AM (`driver_api`), what an executor and the AM say to each other
//! (`poll`), what the AM launches an executor with (`executor_env`) and the driver it runs
//! (`driver_process`), what the submitter hands the AM (`spec`, `credentials`), how a driver
//! and an executor know they reach their own AM over TLS (`tls`), the driver's secret file
//! and the app secret's form (`driver_secret`), the key-value store's endpoints and container
//! credential (`kv`), and `--service-data` (`service_data`).
//!
//! Nothing here depends on a process module (`am`, `http`, `executor`, `submit`, `tools`,
//! `split`) or on `cluster`: every process may use it.

pub mod credentials;
pub mod demand;
pub mod driver_api;
pub mod driver_process;
pub mod driver_secret;
pub mod executor_env;
pub mod glob;
pub mod ids;
pub mod inputs;
pub mod job;
pub mod job_report;
pub mod kv;
pub mod placement;
pub mod poll;
pub mod service_data;
pub mod spec;
pub mod staged;
pub mod tls;

/// The application type yarn-am submits as: what the RM lists, and what `yarn-am list` asks
/// it for (`submit --application-type` may give another).
pub const APPLICATION_TYPE: &str = "YARN-AM";
