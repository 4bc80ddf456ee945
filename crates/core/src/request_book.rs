//! The allocator's request actions applied to yarn-client's request table.
//!
//! The allocator names its container requests with its own ids and knows nothing of the wire;
//! the request table knows YARN's request shapes and nothing of the allocator. This book is
//! the one place where the two meet: it keeps the id mapping and turns each request action
//! (add, remove, replace) into a table change, so the AM's pool and the real-scheduler
//! benchmark (`benches/rm_scale.rs`) drive the RM with the same requests.

use std::collections::HashMap;

use tracing::warn;
use yarn_client::ask::{Capability, Priority};
use yarn_client::request_table::{ContainerRequest, RequestId, RequestTable};

use crate::allocator::tracker::Action;
use crate::allocator::{HostName, RackName};

/// Executors of one kind use one priority and one size: YARN keys requests by priority, so
/// one size per priority is what keeps its table and ours in step. Kind `k` of an app with
/// several asks at this + `k`.
pub const EXECUTOR_PRIORITY: Priority = Priority(1);
/// The allocation request id of strict requests (rule 5 of the default strategy); relaxed
/// ones use 0, so YARN keeps the two kinds apart. Below 0 so that the CapacityScheduler tries
/// strict requests first on every node: it tries an app's request keys (priority, then
/// allocation request id) in order and, in Hadoop 3.4.1's `RegularContainerAllocator`, a key
/// still inside its locality delay on a node it does not name skips the whole app on that
/// node (`LOCALITY_SKIPPED` at the off-switch level becomes `APP_SKIPPED`), while a strict key
/// there only skips itself (`PRIORITY_SKIPPED`: its rack and `*` entries refuse to relax). With
/// strict requests after relaxed ones (id 1, as before), relaxed requests waiting for their
/// off-switch delay kept strict ones off the nodes they named, until they went off-switch
/// there: 1,000-node scale run, 346 of 600 containers off-switch.
/// -1 is also the wire default of `allocation_request_id`; nothing in YARN treats it apart.
/// The first strict key: the allocator opens -2, -3, ... (and relaxed 1, 2, ...) while
/// grants may be in flight for the lower ones (`tracker::RequestKeys`), so strict requests
/// still come before relaxed ones.
pub const STRICT_REQUEST_ID: i64 = -1;

/// Allocator request ids mapped onto request-table ids, for executors of one size.
#[derive(Debug)]
pub struct RequestBook {
    capability: Capability,
    /// The executors' node label expression (one label: their partition), on every request.
    node_label: Option<String>,
    /// Countable resources beyond memory and vcores, on every request.
    resources: Vec<(String, i64)>,
    /// The priority every request is asked at ([`EXECUTOR_PRIORITY`] unless the app has
    /// several executor kinds, each at its own).
    priority: Priority,
    ids: HashMap<u64, RequestId>,
}

impl RequestBook {
    pub fn new(capability: Capability, node_label: Option<String>) -> Self {
        Self {
            capability,
            node_label,
            resources: Vec::new(),
            priority: EXECUTOR_PRIORITY,
            ids: HashMap::new(),
        }
    }

    /// Asks every request with these countable resources too (the executors' own).
    pub fn with_resources(mut self, resources: Vec<(String, i64)>) -> Self {
        self.resources = resources;
        self
    }

    /// Asks every request at `priority` (an executor kind's own).
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// Applies `action` to `table` if it is a request action; any other action is handed
    /// back for the caller (releases, launches, notices are not the book's business).
    pub fn apply(&mut self, table: &mut RequestTable, action: Action) -> Option<Action> {
        match action {
            Action::AddRequests {
                ids,
                nodes,
                racks,
                strict,
                key,
            } => {
                for id in ids {
                    match table.add(self.request(&nodes, &racks, strict, key)) {
                        Ok(tid) => {
                            self.ids.insert(id, tid);
                        }
                        Err(e) => warn!(%e, "request refused by the request table"),
                    }
                }
                None
            }
            Action::RemoveRequest(id) => {
                if let Some(tid) = self.ids.remove(&id) {
                    let _ = table.remove(tid);
                }
                None
            }
            Action::RequestSatisfied(id) => {
                if let Some(tid) = self.ids.remove(&id) {
                    let _ = table.remove_satisfied(tid);
                }
                None
            }
            Action::ReplaceRequests {
                old,
                ids,
                nodes,
                racks,
            } => {
                for (old, id) in old.into_iter().zip(ids) {
                    let Some(tid) = self.ids.remove(&old) else {
                        continue;
                    };
                    // Same key: the two share their `*` entry, which is not re-sent.
                    let key = table.get(tid).map_or(0, |r| r.allocation_request_id);
                    match table.replace(tid, self.request(&nodes, &racks, false, key)) {
                        Ok(new) => {
                            self.ids.insert(id, new);
                        }
                        Err(e) => {
                            warn!(%e, "request replacement refused by the request table");
                            self.ids.insert(id, tid);
                        }
                    }
                }
                None
            }
            other => Some(other),
        }
    }

    /// A strict request names its hosts only (relax locality off, a key below 0); a relaxed
    /// one names hosts and racks and may fall back to any node. `key` is the allocation
    /// request id the allocator chose (`tracker::RequestKeys`).
    fn request(
        &self,
        nodes: &[HostName],
        racks: &[RackName],
        strict: bool,
        key: i64,
    ) -> ContainerRequest {
        let mut req = ContainerRequest::anywhere(self.capability, self.priority)
            .with_nodes(nodes.iter().map(|h| h.to_string()).collect::<Vec<_>>());
        req.allocation_request_id = key;
        req.node_label = self.node_label.clone();
        req.resources = self.resources.clone();
        if strict {
            req.relax_locality(false)
        } else {
            req.with_racks(racks.iter().map(|r| r.to_string()).collect::<Vec<_>>())
        }
    }
}
