//! The `yarn-am` library: the parts of the ApplicationMaster that do not touch the network,
//! shared by the binary, the benchmarks and the integration tests.

pub mod allocator;
pub mod demand;
pub mod driver;
pub mod executor_id;
pub mod inputs;
pub mod poll_auth;
pub mod request_book;
pub mod topology;
