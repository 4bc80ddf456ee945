//! The environment the AM launches an executor with: the one owner of its variables' names
//! and of their wire form, both ways. The AM's launcher writes it ([`ExecutorEnv::to_env`]);
//! `yarn-am executor` and `yarn-am kv` read it back ([`ExecutorEnv::from_env`], or
//! [`ExecutorEnv::from_vars`] from any lookup, so the parsing is testable without touching the
//! process environment). The names are a contract beyond Rust too: the Spark plugin's
//! executor command reads `$YARN_AM_EXECUTOR_ID` and `$YARN_AM_APP_ID`, a user's command
//! `$YARN_AM_EXECUTOR_KIND`, `$YARN_AM_EXECUTOR_RESOURCES` and `$YARN_AM_LOG_DIR`, so they
//! never change.
//!
//! Nothing here is secret: the NodeManager writes the environment into `launch_container.sh`
//! in the container's log folder. The executor's key travels in its launch credentials
//! (see [`crate::poll`]).

use crate::staged::StagingDir;

/// The executor's id (the AM's `ExecutorId`, as a decimal number).
pub const EXECUTOR_ID: &str = "YARN_AM_EXECUTOR_ID";
/// The executor's container (`container_<ts>_<app>_<attempt>_<n>`).
pub const CONTAINER_ID: &str = "YARN_AM_CONTAINER_ID";
/// The application (`application_<ts>_<n>`).
pub const APP_ID: &str = "YARN_AM_APP_ID";
/// The AM's driver API (`https://HOST:PORT`): executors poll it, `yarn-am kv` calls it. The
/// AM-run driver gets it under the same name (`protocol::driver_process`).
pub const DRIVER_URL: &str = "YARN_AM_DRIVER_URL";
/// The vcores of the executor's container: how many tasks it runs at once.
pub const CORES: &str = "YARN_AM_EXECUTOR_CORES";
/// The executor's kind, in an app with, or with room for, several (`submit --executor-kind`,
/// kinds declared while the app runs); unset otherwise.
pub const KIND: &str = "YARN_AM_EXECUTOR_KIND";
/// The countable resources beyond memory and vcores the container holds, as YARN granted
/// them (`yarn.io/gpu=2,example.com/x=1`); unset when none.
pub const RESOURCES: &str = "YARN_AM_EXECUTOR_RESOURCES";
/// The container's log folder: what `<LOG_DIR>` is in a command the launch script expanded,
/// for scripts (a command shipped as a script never sees `<LOG_DIR>` expanded) that write
/// logs YARN keeps. The NodeManager fills it in ([`LOG_DIR_MARKER`]); the AM-run driver gets
/// it under the same name.
pub const LOG_DIR: &str = "YARN_AM_LOG_DIR";
/// The value of [`LOG_DIR`] in a launch context: the NodeManager's marker for the container's
/// log folder, the one value the launch script must expand.
pub const LOG_DIR_MARKER: &str = "<LOG_DIR>";
/// The application's staging folder, where a later AM attempt publishes its URL; set only by
/// AM attempts that are not the last.
pub const STAGING_DIR: &str = "YARN_AM_STAGING_DIR";
/// With [`STAGING_DIR`] on HDFS: the NameNode's WebHDFS address.
pub const STAGING_WEBHDFS: &str = "YARN_AM_STAGING_WEBHDFS";
/// With [`STAGING_WEBHDFS`]: the user WebHDFS is told about without security.
pub const STAGING_USER: &str = "YARN_AM_STAGING_USER";

/// Why the environment is not one the AM launched an executor with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    #[error("{0} is not set (the AM sets it in each container it launches)")]
    Missing(&'static str),
    #[error("{var} {value:?} is {why}")]
    Invalid {
        var: &'static str,
        value: String,
        why: &'static str,
    },
}

/// What an executor is told at launch, besides its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorEnv {
    /// [`EXECUTOR_ID`].
    pub id: String,
    /// [`CONTAINER_ID`].
    pub container: String,
    /// [`APP_ID`].
    pub app: String,
    /// [`DRIVER_URL`]: always `https://` (the AM serves only TLS).
    pub driver_url: String,
    /// [`CORES`].
    pub cores: u32,
    /// [`KIND`].
    pub kind: Option<String>,
    /// [`RESOURCES`], by name, in the order YARN granted them.
    pub resources: Vec<(String, i64)>,
    /// [`STAGING_DIR`] and, on HDFS, [`STAGING_WEBHDFS`] and [`STAGING_USER`].
    pub staging: Option<StagingDir>,
}

impl ExecutorEnv {
    /// The variables, by name, with their values as the executor must see them (the launcher
    /// quotes them for the launch script). [`LOG_DIR`] is not among them: it is the
    /// NodeManager's to fill in ([`LOG_DIR_MARKER`]).
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let mut env = vec![
            (EXECUTOR_ID, self.id.clone()),
            (CONTAINER_ID, self.container.clone()),
            (APP_ID, self.app.clone()),
            (DRIVER_URL, self.driver_url.clone()),
            (CORES, self.cores.to_string()),
        ];
        if let Some(kind) = &self.kind {
            env.push((KIND, kind.clone()));
        }
        if !self.resources.is_empty() {
            let got: Vec<String> = self
                .resources
                .iter()
                .map(|(name, n)| format!("{name}={n}"))
                .collect();
            env.push((RESOURCES, got.join(",")));
        }
        match &self.staging {
            Some(StagingDir::Local { path }) => env.push((STAGING_DIR, path.clone())),
            Some(StagingDir::Webhdfs { path, url, user }) => env.extend([
                (STAGING_DIR, path.clone()),
                (STAGING_WEBHDFS, url.clone()),
                (STAGING_USER, user.clone()),
            ]),
            None => {}
        }
        env
    }

    /// From this process's environment.
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_vars(process_var)
    }

    /// From `get`, which looks a variable up by name (`None` when unset). An empty value
    /// counts as unset.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let vars = Vars(get);
        let cores = vars.required(CORES)?;
        Ok(Self {
            id: vars.required(EXECUTOR_ID)?,
            container: vars.required(CONTAINER_ID)?,
            app: vars.required(APP_ID)?,
            driver_url: driver_url(&vars.0)?,
            cores: cores.parse().map_err(|_| EnvError::Invalid {
                var: CORES,
                value: cores.clone(),
                why: "not a number",
            })?,
            kind: vars.optional(KIND),
            resources: match vars.optional(RESOURCES) {
                Some(text) => parse_resources(&text)?,
                None => Vec::new(),
            },
            staging: staging(&vars.0)?,
        })
    }
}

/// This process's variable `name`, if set and Unicode.
pub fn process_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// [`DRIVER_URL`] alone, for a process that needs no more of the executor's environment
/// (`yarn-am kv` in any container of the app, the AM-run driver's included).
pub fn driver_url(get: &impl Fn(&str) -> Option<String>) -> Result<String, EnvError> {
    let url = Vars(get).required(DRIVER_URL)?;
    // The AM serves only TLS; a plain URL could only lead somewhere else.
    match url.starts_with("https://") {
        true => Ok(url),
        false => Err(EnvError::Invalid {
            var: DRIVER_URL,
            value: url,
            why: "not https://: the AM's driver API is served over TLS",
        }),
    }
}

/// [`STAGING_DIR`] with, on HDFS, its address and user; `None` when the AM attempt that
/// launched this container was the last.
pub fn staging(get: &impl Fn(&str) -> Option<String>) -> Result<Option<StagingDir>, EnvError> {
    let vars = Vars(get);
    let Some(path) = vars.optional(STAGING_DIR) else {
        return Ok(None);
    };
    Ok(Some(match vars.optional(STAGING_WEBHDFS) {
        None => StagingDir::Local { path },
        Some(url) => StagingDir::Webhdfs {
            path,
            url,
            user: vars.required(STAGING_USER)?,
        },
    }))
}

/// `name=n,name=n`.
fn parse_resources(text: &str) -> Result<Vec<(String, i64)>, EnvError> {
    text.split(',')
        .map(|item| {
            item.split_once('=')
                .filter(|(name, _)| !name.is_empty())
                .and_then(|(name, n)| Some((name.to_string(), n.parse().ok()?)))
                .ok_or_else(|| EnvError::Invalid {
                    var: RESOURCES,
                    value: text.to_string(),
                    why: "not a list of NAME=COUNT separated by commas",
                })
        })
        .collect()
}

/// A lookup that takes an empty value for an unset one.
struct Vars<F>(F);

impl<F: Fn(&str) -> Option<String>> Vars<F> {
    fn optional(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.is_empty())
    }

    fn required(&self, name: &'static str) -> Result<String, EnvError> {
        self.optional(name).ok_or(EnvError::Missing(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn full() -> ExecutorEnv {
        ExecutorEnv {
            id: "7".into(),
            container: "container_1_0001_01_000002".into(),
            app: "application_1_0001".into(),
            driver_url: "https://nm1:4000".into(),
            cores: 3,
            kind: Some("accel".into()),
            resources: vec![
                ("example.com/accelerator".into(), 2),
                ("yarn.io/gpu".into(), 1),
            ],
            staging: Some(StagingDir::Webhdfs {
                path: "/user/a/.yarn-am-staging/application_1_0001".into(),
                url: "http://nn:9870".into(),
                user: "a".into(),
            }),
        }
    }

    fn map(env: &ExecutorEnv) -> BTreeMap<String, String> {
        env.to_env()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    fn read(vars: &BTreeMap<String, String>) -> Result<ExecutorEnv, EnvError> {
        ExecutorEnv::from_vars(|k| vars.get(k).cloned())
    }

    #[test]
    fn what_the_launcher_writes_the_executor_reads_back() {
        let mut env = full();
        assert_eq!(read(&map(&env)), Ok(env.clone()));
        env.staging = Some(StagingDir::Local {
            path: "/tmp/yarn-am-staging/application_1_0001".into(),
        });
        assert_eq!(read(&map(&env)), Ok(env.clone()));
        env.kind = None;
        env.resources.clear();
        env.staging = None;
        let vars = map(&env);
        assert_eq!(vars.len(), 5, "{vars:?}");
        assert_eq!(read(&vars), Ok(env));
    }

    #[test]
    fn the_wire_form_keeps_the_names_scripts_read() {
        let vars = map(&full());
        let names: Vec<&str> = vars.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "YARN_AM_APP_ID",
                "YARN_AM_CONTAINER_ID",
                "YARN_AM_DRIVER_URL",
                "YARN_AM_EXECUTOR_CORES",
                "YARN_AM_EXECUTOR_ID",
                "YARN_AM_EXECUTOR_KIND",
                "YARN_AM_EXECUTOR_RESOURCES",
                "YARN_AM_STAGING_DIR",
                "YARN_AM_STAGING_USER",
                "YARN_AM_STAGING_WEBHDFS",
            ]
        );
        assert_eq!(
            vars["YARN_AM_EXECUTOR_RESOURCES"],
            "example.com/accelerator=2,yarn.io/gpu=1"
        );
        assert_eq!(vars["YARN_AM_EXECUTOR_CORES"], "3");
    }

    #[test]
    fn a_missing_variable_is_named() {
        for name in [EXECUTOR_ID, CONTAINER_ID, APP_ID, DRIVER_URL, CORES] {
            let mut vars = map(&full());
            vars.remove(name);
            assert_eq!(read(&vars), Err(EnvError::Missing(name)));
            vars.insert(name.into(), String::new());
            assert_eq!(read(&vars), Err(EnvError::Missing(name)), "empty {name}");
        }
        let mut vars = map(&full());
        vars.remove(STAGING_USER);
        assert_eq!(read(&vars), Err(EnvError::Missing(STAGING_USER)));
        let shown = EnvError::Missing(EXECUTOR_ID).to_string();
        assert!(
            shown.starts_with("YARN_AM_EXECUTOR_ID is not set"),
            "{shown}"
        );
    }

    #[test]
    fn a_bad_value_is_named_with_the_value() {
        let bad = |name: &'static str, value: &str| {
            let mut vars = map(&full());
            vars.insert(name.into(), value.into());
            match read(&vars) {
                Err(EnvError::Invalid { var, value: v, .. }) => {
                    assert_eq!((var, v.as_str()), (name, value))
                }
                other => panic!("{name}={value}: {other:?}"),
            }
        };
        bad(CORES, "two");
        bad(CORES, "-1");
        bad(DRIVER_URL, "http://nm1:4000");
        bad(RESOURCES, "yarn.io/gpu");
        bad(RESOURCES, "yarn.io/gpu=x");
        bad(RESOURCES, "=1");
        bad(RESOURCES, "a=1,");
        let mut vars = map(&full());
        vars.insert(DRIVER_URL.into(), "http://nm1:4000".into());
        let shown = read(&vars).unwrap_err().to_string();
        assert!(shown.contains("not https://"), "{shown}");
    }

    #[test]
    fn the_driver_url_and_the_staging_folder_read_alone() {
        let vars = map(&full());
        let get = |k: &str| vars.get(k).cloned();
        assert_eq!(driver_url(&get), Ok("https://nm1:4000".into()));
        assert_eq!(staging(&get), Ok(full().staging));
        let none = |_: &str| None;
        assert_eq!(driver_url(&none), Err(EnvError::Missing(DRIVER_URL)));
        assert_eq!(staging(&none), Ok(None));
    }
}
