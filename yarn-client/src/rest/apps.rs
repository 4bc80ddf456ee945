//! Applications: new ids, submission, reports, lifetime and kill.

use super::{iso8601_utc, NewApplication};
use crate::redact::RedactedUrl;
use std::time::Duration;

use serde::Deserialize;

use super::{RestError, Result, RmRest, Submission};

/// `GET /ws/v1/cluster/apps/{id}` -> `app` (the fields we use).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppReport {
    pub id: String,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub queue: String,
    pub state: String,
    #[serde(default)]
    pub final_status: String,
    #[serde(default)]
    pub progress: f64,
    #[serde(default)]
    pub tracking_url: Option<String>,
    #[serde(default)]
    pub diagnostics: String,
    #[serde(default)]
    pub running_containers: i64,
    #[serde(default)]
    pub allocated_mb: i64,
    #[serde(default)]
    pub am_container_logs: Option<String>,
    #[serde(default)]
    pub am_host_http_address: Option<String>,
    /// Milliseconds since the epoch (0 before the app started).
    #[serde(default)]
    pub started_time: i64,
    #[serde(default)]
    pub application_type: String,
    #[serde(default)]
    pub priority: i32,
    /// `host:port` the AM registered as its RPC address (yarn-am's driver API).
    #[serde(default, rename = "amRPCAddress")]
    pub am_rpc_address: Option<String>,
    /// Where moving the app's logs to the remote folder stands: `DISABLED`, `NOT_START`,
    /// `RUNNING`, `RUNNING_WITH_FAILURE`, `SUCCEEDED`, `FAILED` or `TIME_OUT` (empty from
    /// an RM that does not say).
    #[serde(default)]
    pub log_aggregation_status: String,
}

impl AppReport {
    /// FINISHED, FAILED and KILLED are final: the RM will not change them again.
    pub fn is_final(&self) -> bool {
        matches!(self.state.as_str(), "FINISHED" | "FAILED" | "KILLED")
    }
}

impl RmRest {
    pub async fn new_application(&self) -> Result<NewApplication> {
        let url = self.url("/ws/v1/cluster/apps/new-application");
        let (_, text) = self.send("POST", url.clone(), None).await?;
        serde_json::from_str(&text).map_err(|e| RestError::BadReply {
            url: url.into(),
            reason: format!("new-application reply: {e}"),
        })
    }

    pub async fn submit(&self, sub: &Submission) -> Result<()> {
        let url = self.url("/ws/v1/cluster/apps");
        self.send("POST", url, Some(sub.to_json())).await?;
        Ok(())
    }

    pub async fn app(&self, app_id: &str) -> Result<AppReport> {
        let path = format!("/ws/v1/cluster/apps/{app_id}");
        let v = self.get_json(&path).await?;
        self.field(&path, v, "app")
    }

    /// The applications of type `app_type` that `user` submitted, in `states` (all states
    /// when empty), as the RM lists them (`GET /ws/v1/cluster/apps`).
    pub async fn apps(
        &self,
        app_type: &str,
        user: &str,
        states: &[&str],
    ) -> Result<Vec<AppReport>> {
        let mut path = format!(
            "/ws/v1/cluster/apps?applicationTypes={}&user={}",
            crate::webhdfs::encode(app_type, false),
            crate::webhdfs::encode(user, false)
        );
        if !states.is_empty() {
            path.push_str("&states=");
            path.push_str(&states.join(","));
        }
        let v = self.get_json(&path).await?;
        // `{"apps": null}` when there are none; `app` is a list otherwise.
        match v.get("apps").and_then(|a| a.get("app")) {
            None | Some(serde_json::Value::Null) => Ok(Vec::new()),
            Some(list) => serde_json::from_value(list.clone()).map_err(|e| RestError::BadReply {
                url: RedactedUrl::new(&self.url(&path)),
                reason: format!("`apps.app` has an unexpected shape: {e}"),
            }),
        }
    }

    /// Sets the application's lifetime to end at `expiry`: the RM kills it then, saying so
    /// in its diagnostics (`PUT /ws/v1/cluster/apps/{id}/timeout`; the REST submission has
    /// no timeout field).
    pub async fn set_lifetime(&self, app_id: &str, expiry: std::time::SystemTime) -> Result<()> {
        let url = self.url(&format!("/ws/v1/cluster/apps/{app_id}/timeout"));
        let body = serde_json::json!({
            "timeout": {"type": "LIFETIME", "expiryTime": iso8601_utc(expiry)}
        });
        self.send("PUT", url, Some(body)).await?;
        Ok(())
    }

    /// Asks the RM to kill the application. Returns once the RM accepted the request;
    /// poll [`RmRest::app`] to see it reach KILLED.
    pub async fn kill(&self, app_id: &str, diagnostics: &str) -> Result<()> {
        let url = self.url(&format!("/ws/v1/cluster/apps/{app_id}/state"));
        let body = serde_json::json!({"state": "KILLED", "diagnostics": diagnostics});
        self.send("PUT", url, Some(body)).await?;
        Ok(())
    }

    /// Polls the application until it reaches a final state or `deadline` passes.
    pub async fn wait_final(&self, app_id: &str, deadline: Duration) -> Result<AppReport> {
        let start = std::time::Instant::now();
        loop {
            let report = self.app(app_id).await?;
            if report.is_final() || start.elapsed() >= deadline {
                return Ok(report);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}
