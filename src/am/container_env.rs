//! The AM container's environment, as the NodeManager and the RM set it.
//!
//! Parsed once at start into a typed struct so that a missing variable is a clear startup
//! error naming the variable, not a failure deep inside the heartbeat loop.

use std::collections::HashMap;
use std::path::PathBuf;

use yarn_client::ids::{app_attempt_of, parse_container_id};

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("{0} is not set: `yarn-am am` must run inside a YARN container (YARN starts it)")]
    Missing(&'static str),
    #[error("{var} has an unexpected value {value:?}: {why}")]
    Invalid {
        var: &'static str,
        value: String,
        why: &'static str,
    },
}

/// What the AM learns from its container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerEnv {
    /// `container_<ts>_<app>_<attempt>_<n>` (with an optional `e<epoch>_` after the prefix).
    pub container_id: String,
    /// `application_<ts>_<app>`, derived from the container id.
    pub app_id: String,
    /// Attempt number, derived from the container id.
    pub attempt: u32,
    pub nm_host: String,
    pub nm_http_port: u16,
    /// First of `LOG_DIRS`: where our own files (executor launch records) go.
    pub log_dir: PathBuf,
    pub token_file: PathBuf,
    /// `/proxy/<app>` when the RM web proxy fronts our tracking page.
    pub web_proxy_base: Option<String>,
    pub max_app_attempts: Option<u32>,
}

fn get<'a>(vars: &'a HashMap<String, String>, key: &'static str) -> Result<&'a str, EnvError> {
    vars.get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .ok_or(EnvError::Missing(key))
}

impl ContainerEnv {
    pub fn from_process() -> Result<Self, EnvError> {
        Self::from_map(&std::env::vars().collect())
    }

    pub fn from_map(vars: &HashMap<String, String>) -> Result<Self, EnvError> {
        let container_id = get(vars, "CONTAINER_ID")?.to_string();
        let parsed = parse_container_id(&container_id).ok_or_else(|| EnvError::Invalid {
            var: "CONTAINER_ID",
            value: container_id.clone(),
            why: "not a YARN container id",
        })?;
        let (app_id, attempt) = app_attempt_of(&parsed);
        let port = get(vars, "NM_HTTP_PORT")?;
        let nm_http_port = port.parse().map_err(|_| EnvError::Invalid {
            var: "NM_HTTP_PORT",
            value: port.to_string(),
            why: "not a port number",
        })?;
        let log_dir = get(vars, "LOG_DIRS")?
            .split(',')
            .next()
            .map(PathBuf::from)
            .ok_or(EnvError::Missing("LOG_DIRS"))?;
        Ok(Self {
            container_id,
            app_id,
            attempt,
            nm_host: get(vars, "NM_HOST")?.to_string(),
            nm_http_port,
            log_dir,
            token_file: PathBuf::from(get(vars, "HADOOP_TOKEN_FILE_LOCATION")?),
            web_proxy_base: vars.get("APPLICATION_WEB_PROXY_BASE").cloned(),
            max_app_attempts: vars.get("MAX_APP_ATTEMPTS").and_then(|v| v.parse().ok()),
        })
    }

    /// Whether YARN will start another attempt if this one fails.
    pub fn is_last_attempt(&self) -> bool {
        self.max_app_attempts.is_none_or(|max| self.attempt >= max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> HashMap<String, String> {
        [
            ("CONTAINER_ID", "container_1795309636707_0004_02_000001"),
            ("NM_HOST", "nm2"),
            ("NM_HTTP_PORT", "8042"),
            ("LOG_DIRS", "/l/app/c1,/m/app/c1"),
            ("HADOOP_TOKEN_FILE_LOCATION", "/w/container_tokens"),
            (
                "APPLICATION_WEB_PROXY_BASE",
                "/proxy/application_1795309636707_0004",
            ),
            ("MAX_APP_ATTEMPTS", "2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn container_env_is_parsed() {
        let env = ContainerEnv::from_map(&vars()).unwrap();
        assert_eq!(env.app_id, "application_1795309636707_0004");
        assert_eq!(env.attempt, 2);
        assert_eq!(env.log_dir, PathBuf::from("/l/app/c1"));
        assert!(env.is_last_attempt());
    }

    #[test]
    fn missing_and_bad_variables_are_named() {
        let mut v = vars();
        v.remove("NM_HOST");
        let err = ContainerEnv::from_map(&v).unwrap_err().to_string();
        assert!(err.contains("NM_HOST is not set"), "{err}");
        let mut v = vars();
        v.insert("NM_HTTP_PORT".into(), "http".into());
        let err = ContainerEnv::from_map(&v).unwrap_err().to_string();
        assert!(err.contains("NM_HTTP_PORT"), "{err}");
    }
}
