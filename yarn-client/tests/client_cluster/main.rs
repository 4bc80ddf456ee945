//! This crate's integration tests against the real YARN cluster (`tests/cluster/cluster.sh`
//! of the repository), in one binary: IPC to the RM's client port, the RM's REST API,
//! WebHDFS, and the example `test_am` submitted and run on the cluster. None of them
//! disturbs the cluster or needs it to itself, so they run side by side.

mod common;

mod it_client_port;
mod it_cluster;
mod it_test_am;
mod it_webhdfs;
