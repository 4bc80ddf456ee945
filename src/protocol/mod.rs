//! The contracts between yarn-am's processes, one file each: what a driver sends the AM
//! (`driver_api`), what an executor and the AM say to each other (`poll`), and what the
//! submitter hands the AM (`spec`).

pub mod credentials;
pub mod driver_api;
pub mod poll;
pub mod spec;
