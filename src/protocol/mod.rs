//! The contracts between yarn-am's processes, one file each: what a driver sends the AM
//! (`driver_api`), what an executor and the AM say to each other (`poll`), and what the
//! submitter hands the AM (`spec`), how a driver and an executor know they reach their own
//! AM over TLS (`tls`), the driver's secret file (`driver_secret`), and the key-value store's endpoints and
//! container credential (`kv`).

pub mod credentials;
pub mod driver_api;
pub mod driver_process;
pub mod driver_secret;
pub mod executor_env;
pub mod kv;
pub mod poll;
pub mod spec;
pub mod tls;
