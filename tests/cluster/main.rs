//! The integration tests against the real YARN cluster of `cluster.sh` (in this folder), in
//! one binary: the yarn-am crate is linked once, and the tests run concurrently under the
//! cluster gate (`support::gate`): a test that disturbs the cluster (restarts or stops a
//! daemon, pauses, kills or decommissions a node, fills the nodes, labels a node, switches the
//! profile, or asserts where YARN places containers on the whole cluster) runs alone, the
//! others a few at a time beside each other. `scripts/test.sh` gives the harness a thread per
//! test (`--test-threads 256`) so that the gate, not the harness's order, decides.
//!
//! The tests of the other profiles (`secure_cluster`, `qop_cluster`, `https_cluster`,
//! `amrmproxy_cluster` in their names) restart the cluster in their profile: run them with
//! those names as filters, one profile per run, and skip them in the plain run (as
//! `scripts/test.sh` does).

mod support;

mod cli_nodes;
mod it_am;
mod it_am_crash;
mod it_amrmproxy;
mod it_api_limits;
mod it_aux;
mod it_commands;
mod it_decommission;
mod it_exclusion;
mod it_failover;
mod it_hdfs_input;
mod it_https;
mod it_job;
mod it_kv;
mod it_liveness;
mod it_loop;
mod it_nodes;
mod it_preemption;
mod it_production;
mod it_qop;
mod it_secret;
mod it_secure;
mod it_spark;
mod it_split;
mod it_spread;
mod it_spread_all;
mod it_surface;
mod it_webhdfs;
