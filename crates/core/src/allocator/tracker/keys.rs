//! The allocator's YARN request keys (allocation request ids), kept so that no `*` count
//! is ever sent over grants in flight.

use std::collections::HashMap;

/// What the allocator knows of one of its YARN request keys (allocation request ids).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct KeyState {
    /// Our requests in YARN's table under this key: the `*` count we last told YARN, less
    /// the grants matched since. YARN's own count is never above it.
    pub(super) asked: u64,
    /// The heartbeat whose allocate call last sent this key's `*` count.
    pub(super) changed_at: u64,
    /// The heartbeat that opened it for new requests (while nothing was in flight for it).
    pub(super) opened_at: Option<u64>,
}

/// The allocator's YARN request keys, so that no `*` count is ever sent over grants in
/// flight ("no over-grant").
///
/// YARN's asks are absolute per key and it lowers its copy itself as it allocates. Between
/// two allocate calls it may allocate any part of what it holds; those containers come back
/// in the next answer (or later). So any `*` count sent for a key whose count YARN holds
/// above 0 overwrites decrements we have not seen: raised, it asks again for containers
/// already granted (the 781 containers for 600 executors at 1,000 nodes); lowered by a
/// cancellation, it keeps asking for the other requests although some of them were
/// granted meanwhile. The only counts that are safe to send are a first count for a key
/// YARN holds at 0 and a 0. Hence:
/// - a key is *quiet* at heartbeat `n` when none of our requests is in YARN's table under
///   it and its count was last sent before `n` (the answer to that call has been digested,
///   so nothing can be in flight for it);
/// - new requests go under a quiet key of their kind (strict below 0, relaxed 0 and up,
///   lowest first), opened for the whole heartbeat;
/// - a request leaves a key that is not open at this heartbeat only with all the others:
///   the key is sent at 0 and its other requests are parked, asked again under a quiet key
///   at the next heartbeat, once the grants that were on their way have been matched;
/// - a request a granted container satisfied leaves YARN's table silently
///   ([`Action::RequestSatisfied`]), and a container is charged to a request of the key it
///   was granted for first, so that our count follows YARN's.
///
/// What remains is the protocol's own race: YARN can grant a request before the call that
/// cancels it reaches it (at most one container per cancelled request, released if surplus).
///
/// All of this assumes the answer to a call brings every container allocated before it, as
/// YARN's allocate does. An RM that hands some over a call or more later shows it: a grant
/// for a key we emptied calls ago. `late` keeps the most calls seen, and keys, parked and
/// withdrawn requests wait that many heartbeats more before they count as settled; what
/// such an RM grants before the first one is seen is the slack above.
#[derive(Debug, Default)]
pub(super) struct RequestKeys {
    pub(super) keys: HashMap<i64, KeyState>,
    /// Most heartbeats a grant has come back after its key was emptied (0: none seen).
    pub(super) late: u64,
}

/// The most heartbeats `RequestKeys::late` waits, so that one odd grant cannot stall asks.
const MAX_LATE: u64 = 4;

impl RequestKeys {
    /// A grant for `key` came back at heartbeat `n`: if we had emptied that key calls
    /// before, YARN allocated it before then and handed it over late.
    pub(super) fn granted_for(&mut self, key: i64, n: u64) {
        if let Some(k) = self.keys.get(&key) {
            if k.asked == 0 && k.opened_at.is_none_or(|o| o < k.changed_at) {
                self.late = self.late.max(n.saturating_sub(k.changed_at)).min(MAX_LATE);
            }
        }
    }

    /// Whether something changed at heartbeat `at` has settled by heartbeat `n`: every
    /// grant made before it has come back.
    pub(super) fn settled(&self, at: u64, n: u64) -> bool {
        at + self.late < n
    }

    /// A key of this kind that may take new requests at heartbeat `n`.
    pub(super) fn open(&mut self, strict: bool, n: u64) -> i64 {
        let mut id: i64 = if strict { -1 } else { 0 };
        let late = self.late;
        loop {
            let k = self.keys.entry(id).or_default();
            if k.opened_at == Some(n) || (k.asked == 0 && k.changed_at + late < n) {
                k.opened_at = Some(n);
                return id;
            }
            id += if strict { -1 } else { 1 };
        }
    }

    pub(super) fn state(&mut self, key: i64) -> &mut KeyState {
        self.keys.entry(key).or_default()
    }
}
