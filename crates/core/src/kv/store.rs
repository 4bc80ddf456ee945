//! [`KvStore`]: the entries, their limits and versions (see the module doc of
//! [`crate::kv`]).

use std::collections::BTreeMap;

use crate::driver::journal::Entry;
use yarn_am_wire::kv::{KvEntry, KvListing};

/// How much the store may hold. Every write is checked against all four before anything
/// changes, so a refused write stores nothing; the total bounds the AM's memory whatever
/// the mix of key and value sizes (10,000 keys at the largest value would be 650 MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvLimits {
    pub max_key_bytes: usize,
    pub max_value_bytes: usize,
    pub max_keys: usize,
    /// Keys and values together, in bytes.
    pub max_total_bytes: usize,
}

impl Default for KvLimits {
    fn default() -> Self {
        Self {
            max_key_bytes: 1024,
            max_value_bytes: 64 << 10,
            max_keys: 10_000,
            max_total_bytes: 16 << 20,
        }
    }
}

/// Why a request was refused. [`KvError::is_too_large`] tells the size and count limits
/// (HTTP 413) from a malformed key (400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    #[error("the key is empty")]
    EmptyKey,
    #[error("the key is {len} bytes, over the limit of {max}")]
    KeyTooLong { len: usize, max: usize },
    #[error("the key contains a control character (byte {byte:#04x})")]
    ControlInKey { byte: u8 },
    #[error("the key is `.` or `..`, which URLs drop as path steps")]
    DotKey,
    #[error("the value is {len} bytes, over the limit of {max}")]
    ValueTooLarge { len: usize, max: usize },
    #[error("the store already holds its limit of {max} keys")]
    TooManyKeys { max: usize },
    #[error("the store would hold {would} bytes of keys and values, over its limit of {max}")]
    StoreFull { would: usize, max: usize },
}

impl KvError {
    /// A size or count limit (rather than a malformed request).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            KvError::ValueTooLarge { .. } | KvError::TooManyKeys { .. } | KvError::StoreFull { .. }
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Stored {
    value: String,
    version: u64,
}

/// The entries (ordered by key, so a prefix is one range), the revision counter and the
/// bytes held.
#[derive(Debug, Clone, Default)]
pub struct KvStore {
    limits: KvLimits,
    entries: BTreeMap<String, Stored>,
    revision: u64,
    total_bytes: usize,
}

impl KvStore {
    pub fn new(limits: KvLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// The revision of the last write or delete (0: none yet).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of keys and values held.
    pub fn total_bytes(&self) -> usize {
        self.total_bytes
    }

    /// Checks a key: not empty, within the limit, no control character (keys travel in URL
    /// paths and log lines).
    pub fn check_key(&self, key: &str) -> Result<(), KvError> {
        if key.is_empty() {
            return Err(KvError::EmptyKey);
        }
        if key.len() > self.limits.max_key_bytes {
            return Err(KvError::KeyTooLong {
                len: key.len(),
                max: self.limits.max_key_bytes,
            });
        }
        if key == "." || key == ".." {
            return Err(KvError::DotKey);
        }
        match key.bytes().find(|b| b.is_ascii_control()) {
            Some(byte) => Err(KvError::ControlInKey { byte }),
            None => Ok(()),
        }
    }

    pub fn get(&self, key: &str) -> Option<KvEntry> {
        self.entries.get(key).map(|s| entry(key, s))
    }

    /// Every entry whose key starts with `prefix` (all for ""), in key order.
    pub fn list(&self, prefix: &str) -> KvListing {
        let entries = self
            .entries
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, s)| entry(k, s))
            .collect();
        KvListing {
            entries,
            revision: self.revision,
        }
    }

    /// What a watch of `key` waiting for a version above `after` gets now: the entry if it
    /// is there with such a version, else nothing (keep waiting). A delete is not an event:
    /// a watch of a deleted key waits for its next put.
    pub fn watch(&self, key: &str, after: u64) -> Option<KvEntry> {
        self.entries
            .get(key)
            .filter(|s| s.version > after)
            .map(|s| entry(key, s))
    }

    /// Sets `key` to `value` if every limit allows; returns the new version and the journal
    /// entry that must be durable before the write is acknowledged.
    pub fn put(&mut self, key: &str, value: &str) -> Result<(u64, Entry), KvError> {
        self.check_key(key)?;
        if value.len() > self.limits.max_value_bytes {
            return Err(KvError::ValueTooLarge {
                len: value.len(),
                max: self.limits.max_value_bytes,
            });
        }
        let old = self.entries.get(key);
        if old.is_none() && self.entries.len() >= self.limits.max_keys {
            return Err(KvError::TooManyKeys {
                max: self.limits.max_keys,
            });
        }
        let freed = old.map_or(0, |s| key.len() + s.value.len());
        let would = self.total_bytes - freed + key.len() + value.len();
        if would > self.limits.max_total_bytes {
            return Err(KvError::StoreFull {
                would,
                max: self.limits.max_total_bytes,
            });
        }
        let version = self.revision + 1;
        self.set(key, value, version);
        let journal = Entry::KvPut {
            key: key.to_string(),
            value: value.to_string(),
            version,
        };
        Ok((version, journal))
    }

    /// Removes `key`; `None` when it was not there (nothing changes, nothing to journal).
    pub fn delete(&mut self, key: &str) -> Result<Option<(u64, Entry)>, KvError> {
        self.check_key(key)?;
        if !self.entries.contains_key(key) {
            return Ok(None);
        }
        let version = self.revision + 1;
        self.remove(key, version);
        let journal = Entry::KvDelete {
            key: key.to_string(),
            version,
        };
        Ok(Some((version, journal)))
    }

    /// Rebuilds the store from an earlier attempt's journal (other entries are skipped). The
    /// limits are not checked again: every entry passed them when it was written. Entries
    /// not above the revision reached (a line written twice) change nothing.
    pub fn replay(&mut self, entries: &[Entry]) -> usize {
        let mut applied = 0;
        for e in entries {
            match e {
                Entry::KvPut {
                    key,
                    value,
                    version,
                } if *version > self.revision => {
                    self.set(key, value, *version);
                    applied += 1;
                }
                Entry::KvDelete { key, version } if *version > self.revision => {
                    self.remove(key, *version);
                    applied += 1;
                }
                _ => {}
            }
        }
        applied
    }

    fn set(&mut self, key: &str, value: &str, version: u64) {
        let stored = Stored {
            value: value.to_string(),
            version,
        };
        match self.entries.insert(key.to_string(), stored) {
            Some(old) => self.total_bytes -= old.value.len(),
            None => self.total_bytes += key.len(),
        }
        self.total_bytes += value.len();
        self.revision = version;
    }

    fn remove(&mut self, key: &str, version: u64) {
        if let Some(old) = self.entries.remove(key) {
            self.total_bytes -= key.len() + old.value.len();
        }
        self.revision = version;
    }
}

fn entry(key: &str, s: &Stored) -> KvEntry {
    KvEntry {
        key: key.to_string(),
        value: s.value.clone(),
        version: s.version,
    }
}
