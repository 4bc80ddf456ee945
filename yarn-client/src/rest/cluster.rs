//! The cluster's resources: its info, nodes (and a node's own web pages), and queues.

use crate::redact::RedactedUrl;
use serde::Deserialize;
use serde::Serialize;

use super::{RestError, Result, RmRest};

/// `GET /ws/v1/cluster/info` -> `clusterInfo`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfo {
    pub id: i64,
    pub state: String,
    #[serde(default)]
    pub ha_state: Option<String>,
    #[serde(default)]
    pub hadoop_version: Option<String>,
    #[serde(default)]
    pub resource_manager_version: Option<String>,
}

/// One entry of `GET /ws/v1/cluster/nodes`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    /// The NodeId, `host:port`.
    pub id: String,
    pub rack: String,
    pub state: String,
    pub node_host_name: String,
    #[serde(rename = "nodeHTTPAddress", default)]
    pub node_http_address: String,
    #[serde(default)]
    pub num_containers: i64,
    #[serde(rename = "usedMemoryMB", default)]
    pub used_memory_mb: i64,
    #[serde(rename = "availMemoryMB", default)]
    pub avail_memory_mb: i64,
    #[serde(default)]
    pub used_virtual_cores: i64,
    #[serde(default)]
    pub available_virtual_cores: i64,
    #[serde(default)]
    pub health_report: String,
    /// The node's labels (its partition); the RM leaves the field out, or lists `""`, for
    /// the default partition.
    #[serde(default)]
    pub node_labels: Vec<String>,
}

impl NodeInfo {
    /// Total memory of the node (used + available), what the NM advertised.
    pub fn memory_mb(&self) -> i64 {
        self.used_memory_mb + self.avail_memory_mb
    }
    /// Total vcores of the node (used + available).
    pub fn vcores(&self) -> i64 {
        self.used_virtual_cores + self.available_virtual_cores
    }
}

/// One leaf queue of the scheduler, from `GET /ws/v1/cluster/scheduler` (the Capacity
/// Scheduler's fields; percentages are of the whole cluster).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueInfo {
    pub queue_name: String,
    #[serde(default)]
    pub queue_path: String,
    /// RUNNING, STOPPED or DRAINING.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub absolute_used_capacity: f64,
    #[serde(default = "hundred")]
    pub absolute_max_capacity: f64,
    #[serde(default)]
    pub num_pending_applications: i64,
}

fn hundred() -> f64 {
    100.0
}

/// The leaf queue named `name` (its short name or its path, `root.default`) anywhere in a
/// scheduler tree (`schedulerInfo`, whose children sit under `queues.queue`).
pub fn find_leaf_queue(scheduler_info: &serde_json::Value, name: &str) -> Option<QueueInfo> {
    let children = scheduler_info
        .get("queues")
        .and_then(|q| q.get("queue"))
        .and_then(|q| q.as_array());
    match children {
        Some(children) if !children.is_empty() => {
            children.iter().find_map(|c| find_leaf_queue(c, name))
        }
        _ => {
            let q: QueueInfo = serde_json::from_value(scheduler_info.clone()).ok()?;
            (q.queue_name == name || q.queue_path == name).then_some(q)
        }
    }
}

/// The nodes of a `GET /ws/v1/cluster/nodes` reply (`null` or a missing list is none),
/// `url` naming it in errors. Pure, so it is fuzzed (`hostile_input_tests`).
pub(crate) fn parse_nodes(url: &str, v: serde_json::Value) -> Result<Vec<NodeInfo>> {
    let list = v
        .get("nodes")
        .and_then(|n| n.get("node"))
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    if list.is_null() {
        return Ok(Vec::new());
    }
    serde_json::from_value(list).map_err(|e| RestError::BadReply {
        url: RedactedUrl::new(url),
        reason: format!("`nodes.node` has an unexpected shape: {e}"),
    })
}

impl RmRest {
    /// Any RM web-services GET as JSON (e.g. `/ws/v1/cluster/apps/<id>/appattempts`).
    pub async fn get_value(&self, path: &str) -> Result<serde_json::Value> {
        self.get_json(path).await
    }

    /// A NodeManager's web address (`host:port`, as the RM lists it) as a base URL, in the
    /// RM's scheme (a cluster on HTTPS serves its NodeManagers on HTTPS too).
    fn node_base(&self, node: &str) -> String {
        let scheme = if self.base.starts_with("https://") {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{node}")
    }

    /// A NodeManager web-services GET as JSON, authenticated as calls to the RM are.
    pub async fn node_value(&self, node: &str, path: &str) -> Result<serde_json::Value> {
        self.json_at(self.url_at(&self.node_base(node), path)).await
    }

    /// A NodeManager web-services GET as text (a container's log file).
    pub async fn node_text(&self, node: &str, path: &str) -> Result<String> {
        let url = self.url_at(&self.node_base(node), path);
        Ok(self.send_accepting("GET", url, None, "text/plain").await?.1)
    }

    pub async fn cluster_info(&self) -> Result<ClusterInfo> {
        let path = "/ws/v1/cluster/info";
        let v = self.get_json(path).await?;
        self.field(path, v, "clusterInfo")
    }

    /// Nodes in the given states (e.g. `["RUNNING"]`); all nodes when `states` is empty.
    pub async fn nodes(&self, states: &[&str]) -> Result<Vec<NodeInfo>> {
        let path = if states.is_empty() {
            "/ws/v1/cluster/nodes".to_string()
        } else {
            format!("/ws/v1/cluster/nodes?states={}", states.join(","))
        };
        let v = self.get_json(&path).await?;
        parse_nodes(&self.url(&path), v)
    }

    /// The leaf queue `name` (short name or path); `None` when the scheduler has no such
    /// queue or reports no tree (the Fifo scheduler).
    pub async fn leaf_queue(&self, name: &str) -> Result<Option<QueueInfo>> {
        let path = "/ws/v1/cluster/scheduler";
        let v = self.get_json(path).await?;
        let info = v
            .get("scheduler")
            .and_then(|s| s.get("schedulerInfo"))
            .ok_or_else(|| RestError::BadReply {
                url: RedactedUrl::new(&self.url(path)),
                reason: "no `scheduler.schedulerInfo` in reply".into(),
            })?;
        Ok(find_leaf_queue(info, name))
    }
}
