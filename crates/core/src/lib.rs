//! `yarn-am-core`: every decision yarn-am makes, as plain data in and plain data out.
//!
//! No sockets, no clock reads, no tasks, no files: the processes of the `yarn-am` crate feed
//! it inputs with the time they happened (`now_ms`) and carry out what it returns. The
//! dependencies say so too: this crate has no tokio and no HTTP client, so a decision that
//! reaches for I/O does not compile here.
//!
//! # Usage
//!
//! The AM's shell drives one [`AmCore`] through its `handle_*` inputs and drains its
//! `poll_*` outputs (commands to carry out, replies keyed by the caller's [`ReplyTo`],
//! executor events, the next deadline). The allocator can be run alone, offline, by the
//! locality simulator:
//!
//! ```
//! use yarn_am_core::sim::{simulate, Trace, TraceConfig};
//! use yarn_am_core::Strategy;
//!
//! // 20 nodes, skewed data (popularity exponent 0.8), seed 7.
//! let trace = Trace::generate(TraceConfig::standard("skewed", 20, 0.8, 7));
//! let ours = simulate(&trace, Strategy::Default);
//! let spark = simulate(&trace, Strategy::Spark);
//! assert!(ours.node_local >= 0.0 && spark.node_local <= 1.0);
//! ```
//!
//! # Layout
//!
//! - [`allocator`]: where executors go: the request tracker, the update step, placement.
//! - [`am`]: the AM's decisions ([`AmCore`], the executor pool, the registry, preemption).
//! - [`driver`]: the embedded driver (delay scheduling, retries, the executor target).
//! - [`inputs`]: HDFS inputs split into tasks; [`kv`]: the key-value store.
//! - [`sim`]: a model of the RM's scheduler for comparing placement strategies offline.
//! - [`topology`], [`request_book`]: the host -> rack map; requests <-> YARN's table.
//!
//! The data its inputs and outputs are made of (ids, demand, the job file, views) is the
//! contracts crate's, `yarn-am-wire`.

pub mod allocator;
pub mod am;
pub mod driver;
pub mod inputs;
pub mod kv;
pub mod request_book;
pub mod sim;
pub mod topology;

pub use allocator::Strategy;
pub use am::am_core::AmCore;
pub use am::events::{DriverCommand, Reply, ReplyTo};
// Contract types this crate's modules name as their own.
pub use yarn_am_wire::{demand, ids};
