//! [`KvDesk`]: the store as the AM core serves it. Reads are answered at once; a write is
//! applied, and its answer held with its journal entry until the shell says the entry is
//! durable ([`KvDesk::take_acks`]): a client never hears "stored" for a write a next AM
//! attempt could not replay. Answers go to the caller a request names by its [`ReplyTo`];
//! the desk holds no channel.

use super::store::{KvError, KvStore};
use crate::am::events::ReplyTo;
use crate::driver::journal::Entry;
use yarn_am_wire::kv::{KvDeleted, KvEntry, KvListing, KvStored};

/// One request to the store (from a driver or a container, through the HTTP face).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KvRequest {
    Get {
        key: String,
    },
    /// Answered with the entry once its version is above `after` (see [`KvStore::watch`]).
    Watch {
        key: String,
        after: u64,
    },
    Put {
        key: String,
        value: String,
    },
    Delete {
        key: String,
    },
    List {
        prefix: String,
    },
}

/// The store's answer to one [`KvRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KvAnswer {
    /// `Get` and `Watch`: the entry, or nothing (absent, or no version above `after` yet).
    Entry(Option<KvEntry>),
    Stored(KvStored),
    Deleted(KvDeleted),
    Listing(KvListing),
    Refused(KvError),
    /// The write is applied but its journal append failed or did not finish in time: a next
    /// AM attempt may not have it.
    NotJournaled,
}

/// A write's answer, waiting for its journal entry.
pub type Ack = (ReplyTo, KvAnswer);

/// The store, the journal entries not yet handed to the shell, and the answers that wait for
/// them.
#[derive(Debug, Default)]
pub struct KvDesk {
    store: KvStore,
    journal: Vec<Entry>,
    acks: Vec<Ack>,
}

impl KvDesk {
    pub fn new(store: KvStore) -> Self {
        Self {
            store,
            ..Self::default()
        }
    }

    pub fn store(&self) -> &KvStore {
        &self.store
    }

    /// Applies `request`: the answer for `reply` now (a read, or a write that changed
    /// nothing or was refused), or `None` when it waits for its journal entry to be durable
    /// (then [`Self::take_acks`] has it).
    pub fn handle(&mut self, request: KvRequest, reply: ReplyTo) -> Option<KvAnswer> {
        let (answer, entry) = self.apply(request);
        match entry {
            Some(e) => {
                self.journal.push(e);
                self.acks.push((reply, answer));
                None
            }
            None => Some(answer),
        }
    }

    /// The answer to `request`, and the journal entry of a write that changed the store.
    pub fn apply(&mut self, request: KvRequest) -> (KvAnswer, Option<Entry>) {
        let refused = |e| (KvAnswer::Refused(e), None);
        match request {
            KvRequest::Get { key } => match self.store.check_key(&key) {
                Ok(()) => (KvAnswer::Entry(self.store.get(&key)), None),
                Err(e) => refused(e),
            },
            KvRequest::Watch { key, after } => match self.store.check_key(&key) {
                Ok(()) => (KvAnswer::Entry(self.store.watch(&key, after)), None),
                Err(e) => refused(e),
            },
            KvRequest::List { prefix } => (KvAnswer::Listing(self.store.list(&prefix)), None),
            KvRequest::Put { key, value } => match self.store.put(&key, &value) {
                Ok((version, entry)) => (KvAnswer::Stored(KvStored { key, version }), Some(entry)),
                Err(e) => refused(e),
            },
            KvRequest::Delete { key } => match self.store.delete(&key) {
                Ok(Some((version, entry))) => (
                    KvAnswer::Deleted(KvDeleted {
                        key,
                        deleted: true,
                        version: Some(version),
                    }),
                    Some(entry),
                ),
                Ok(None) => (
                    KvAnswer::Deleted(KvDeleted {
                        key,
                        deleted: false,
                        version: None,
                    }),
                    None,
                ),
                Err(e) => refused(e),
            },
        }
    }

    /// The journal entries of the writes since the last call, for the shell to make
    /// durable before it calls [`Self::take_acks`].
    pub fn take_journal(&mut self) -> Vec<Entry> {
        std::mem::take(&mut self.journal)
    }

    /// The held answers, to send now that their entries are durable (`journaled`), or
    /// [`KvAnswer::NotJournaled`] in their place when the append failed.
    pub fn take_acks(&mut self, journaled: bool) -> Vec<Ack> {
        let mut acks = std::mem::take(&mut self.acks);
        if !journaled {
            for (_, a) in &mut acks {
                *a = KvAnswer::NotJournaled;
            }
        }
        acks
    }
}
