//! The application's key-value store, sans-IO: string keys and values that the AM keeps for
//! the app's life (Dask and Ray publish a scheduler's address to their workers this way).
//!
//! [`KvStore`] holds the entries and decides every operation: limits, versions, prefix
//! listings and whether a watch is answered. It reads no clock and touches no file: the AM
//! core applies requests to it ([`KvStore::apply`]), hands the resulting journal entries to
//! the shell, which makes them durable before the reply goes out, and a next AM attempt
//! rebuilds the same store from the journal ([`KvStore::replay`]). The wire shapes and the
//! containers' credential are in [`yarn_am_wire::kv`].
//!
//! # Versions
//! One revision counter for the whole store, raised by every write and delete; an entry's
//! `version` is the revision of its last write. So versions never repeat for a key, even
//! across a delete and a new put, and a watcher that saw version `v` waits for `version > v`.
//! The counter is replayed from the journal, so versions keep growing across AM attempts.

mod desk;
mod store;

pub use desk::{Ack, KvAnswer, KvDesk, KvRequest};
pub use store::{KvError, KvLimits, KvStore};

#[cfg(test)]
mod tests;
