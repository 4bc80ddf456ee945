//! Tasks from HDFS inputs: the job file's `inputs` section, and the pure logic that turns
//! listed files and their block locations into one task per split.
//!
//! Everything here is sans-IO (no sockets, no clock): `submit` lists the inputs through
//! WebHDFS at the edge (`src/cluster/hdfs_listing.rs`) and feeds what HDFS said to these functions,
//! so globbing, splitting and the choice of preferred hosts are unit- and property-tested
//! without a cluster.

pub use yarn_am_wire::glob;
pub mod records;
pub mod split;

pub use yarn_am_wire::inputs::*;
