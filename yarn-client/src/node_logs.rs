//! Container logs as a user reads them without log aggregation: from the NodeManagers' web
//! services, with the RM client's authentication and trust.
//!
//! YARN has no one place that lists an application's containers once they end, so they
//! are gathered from what does: each attempt's AM container and node (RM web services),
//! every container id the AM's own log names, and the containers each NodeManager lists
//! now. A container's files come from `/ws/v1/node/containers/<id>/logs` and their text from
//! `/ws/v1/node/containerlogs/<id>/<file>`, asked of the node that ran it or, when that is
//! not known, of each node in turn. NodeManagers keep these until
//! `yarn.nodemanager.log.retain-seconds` pass (no aggregation); with aggregation on they
//! hand them to HDFS when the app ends, which this module does not read.

use std::collections::BTreeMap;

use crate::rest::{Result, RmRest};

/// Whether `word` (e.g. from a log line) is a container id of application `app_id`. After
/// an RM restart container ids carry the RM's epoch (`container_e01_<ts>_<app>_...`), so a
/// plain `container_<ts>_<app>` prefix is not enough.
pub fn is_container_of(word: &str, app_id: &str) -> bool {
    let Some(app) = app_id.strip_prefix("application_") else {
        return false;
    };
    let Some(rest) = word.strip_prefix("container_") else {
        return false;
    };
    let rest = match rest.strip_prefix('e').and_then(|r| r.split_once('_')) {
        Some((epoch, after)) if !epoch.is_empty() && epoch.bytes().all(|b| b.is_ascii_digit()) => {
            after
        }
        _ => rest,
    };
    rest.strip_prefix(app).is_some_and(|r| r.starts_with('_'))
}

/// The file's text from the NM's `containerlogs` answer, without the header the service
/// puts before it (up to `LogContents:`) and the footer after (`End of LogType:<name>.`,
/// which follows the file's last byte directly); the whole answer when it has no header.
pub fn strip_log_wrapper<'a>(body: &'a str, name: &str) -> &'a str {
    const HEAD: &str = "LogContents:\n";
    let Some(start) = body.find(HEAD).map(|i| i + HEAD.len()) else {
        return body;
    };
    let foot = format!("End of LogType:{name}.");
    match body.rfind(&foot).filter(|&e| e >= start) {
        Some(end) => &body[start..end],
        None => &body[start..],
    }
}

fn one_or_many(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    match v {
        serde_json::Value::Array(a) => a.iter().collect(),
        serde_json::Value::Null => Vec::new(),
        other => vec![other],
    }
}

/// One application's containers and their logs.
pub struct NodeLogs<'a> {
    rest: &'a RmRest,
    app_id: String,
    /// NodeManager web addresses (`host:port`), from the RM's node list.
    nodes: Vec<String>,
}

impl<'a> NodeLogs<'a> {
    /// Reads the node list once; the app's containers come from [`Self::containers`].
    pub async fn new(rest: &'a RmRest, app_id: &str) -> Result<NodeLogs<'a>> {
        let mut nodes: Vec<String> = rest
            .nodes(&[])
            .await?
            .into_iter()
            .map(|n| n.node_http_address)
            .filter(|a| !a.is_empty())
            .collect();
        nodes.sort();
        nodes.dedup();
        Ok(NodeLogs {
            rest,
            app_id: app_id.to_string(),
            nodes,
        })
    }

    /// The AM containers of each attempt, with their nodes.
    pub async fn am_containers(&self) -> Result<Vec<(String, String)>> {
        let path = format!("/ws/v1/cluster/apps/{}/appattempts", self.app_id);
        let v = self.rest.get_value(&path).await?;
        Ok(one_or_many(&v["appAttempts"]["appAttempt"])
            .into_iter()
            .filter_map(|a| {
                let c = a["containerId"].as_str()?;
                let n = a["nodeHttpAddress"].as_str().unwrap_or_default();
                Some((c.to_string(), n.to_string()))
            })
            .collect())
    }

    /// Container id -> the node known to have it (`None`: ask each node), as the module doc
    /// says they are found.
    pub async fn containers(&self) -> Result<BTreeMap<String, Option<String>>> {
        let mut found = BTreeMap::new();
        for (am, node) in self.am_containers().await? {
            if !node.is_empty() {
                let log = self.read(&node, &am, "stderr").await.unwrap_or_default();
                for word in log.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')) {
                    if is_container_of(word, &self.app_id) {
                        found.entry(word.to_string()).or_insert(None);
                    }
                }
            }
            found.insert(am, (!node.is_empty()).then_some(node));
        }
        for node in &self.nodes {
            let Ok(v) = self.rest.node_value(node, "/ws/v1/node/containers").await else {
                continue;
            };
            for c in one_or_many(&v["containers"]["container"]) {
                if let Some(id) = c["id"]
                    .as_str()
                    .filter(|id| is_container_of(id, &self.app_id))
                {
                    found.insert(id.to_string(), Some(node.clone()));
                }
            }
        }
        Ok(found)
    }

    /// The node that has `container`'s logs and its log file names: `known` first, then
    /// each node; `None` when no node has them (any more).
    pub async fn locate(
        &self,
        container: &str,
        known: Option<&str>,
    ) -> Option<(String, Vec<String>)> {
        let others = self
            .nodes
            .iter()
            .map(String::as_str)
            .filter(|n| Some(*n) != known);
        for node in known.into_iter().chain(others) {
            let files = self.files(node, container).await;
            if !files.is_empty() {
                return Some((node.to_string(), files));
            }
        }
        None
    }

    /// The log file names `node` has for `container` (empty: none, or it does not answer).
    pub async fn files(&self, node: &str, container: &str) -> Vec<String> {
        let path = format!("/ws/v1/node/containers/{container}/logs");
        let Ok(v) = self.rest.node_value(node, &path).await else {
            return Vec::new();
        };
        let mut names: Vec<String> = Vec::new();
        for info in one_or_many(&v["containerLogsInfo"]) {
            for f in one_or_many(&info["containerLogInfo"]) {
                if let Some(n) = f["fileName"].as_str() {
                    if !names.iter().any(|x| x == n) {
                        names.push(n.to_string());
                    }
                }
            }
        }
        names
    }

    /// One log file's text.
    pub async fn read(&self, node: &str, container: &str, file: &str) -> Result<String> {
        let path = format!("/ws/v1/node/containerlogs/{container}/{file}");
        let body = self.rest.node_text(node, &path).await?;
        Ok(strip_log_wrapper(&body, file).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_ids_of_an_app_with_and_without_the_rm_epoch() {
        let app = "application_1700000000000_0007";
        assert!(is_container_of(
            "container_1700000000000_0007_01_000001",
            app
        ));
        assert!(is_container_of(
            "container_e03_1700000000000_0007_02_000004",
            app
        ));
        assert!(!is_container_of(
            "container_1700000000000_00070_01_000001",
            app
        ));
        assert!(!is_container_of(
            "container_1700000000000_0008_01_000001",
            app
        ));
        assert!(!is_container_of(
            "container_eX_1700000000000_0007_01_000001",
            app
        ));
        assert!(!is_container_of("application_1700000000000_0007", app));
    }

    #[test]
    fn the_nm_wrapper_is_taken_off_and_a_bare_body_kept() {
        let body = "Container: c_1 on nm1:45454\nLogAggregationType: LOCAL\n\
                    LogType:stdout\nLogLength:6\nLogContents:\nhello\nEnd of LogType:stdout.\n";
        assert_eq!(strip_log_wrapper(body, "stdout"), "hello\n");
        assert_eq!(strip_log_wrapper("plain", "stdout"), "plain");
        let cut = "LogContents:\npartial";
        assert_eq!(strip_log_wrapper(cut, "stdout"), "partial");
    }
}
