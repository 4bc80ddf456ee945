//! The contracts between yarn-am's processes and with its users, one file each: what a
//! driver sends the AM (`driver_api`), what an executor and the AM say to each other
//! (`poll`), what the AM launches an executor with (`executor_env`) and the driver it runs
//! (`driver_process`), what the submitter hands the AM (`spec`, `credentials`), how a driver
//! and an executor know they reach their own AM over TLS (`tls`), the driver's secret file
//! and the app secret's form (`driver_secret`), the key-value store's endpoints and container
//! credential (`kv`), and `--service-data` (`service_data`).
//!
//! It also owns the data those contracts are made of: ids ([`ids`]), a driver's demand
//! ([`demand`]), the words of placement ([`placement`]), the job file ([`job`], [`inputs`],
//! [`glob`]) and its report ([`job_report`]), staged files ([`staged`]).
//!
//! `yarn-am-core` decides with these types and the `yarn-am` processes carry them; this crate
//! depends on neither (the compiler keeps it so), only on `yarn-client`'s record types.
//!
//! # Usage
//!
//! Each type writes and reads its own wire form, e.g. the executor's launch environment:
//!
//! ```
//! use yarn_am_wire::executor_env::ExecutorEnv;
//!
//! let env = ExecutorEnv {
//!     id: "3".into(),
//!     container: "container_1_0001_01_000004".into(),
//!     app: "application_1_0001".into(),
//!     driver_url: "https://nm1:40000".into(),
//!     cores: 2,
//!     kind: None,
//!     resources: vec![],
//!     staging: None,
//! };
//! let vars: std::collections::HashMap<_, _> = env.to_env().into_iter().collect();
//! assert_eq!(ExecutorEnv::from_vars(|k| vars.get(k).cloned()), Ok(env));
//! ```

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
