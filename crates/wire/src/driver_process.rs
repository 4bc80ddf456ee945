//! What the AM gives the driver it runs in its own container (`submit --driver-command`,
//! Spark's cluster deploy mode): files in the container's working directory and variables in
//! the driver's environment. The Spark plugin reads them (`YarnAmClusterManager`,
//! `Launcher`, `YarnAmSchedulerBackend`), so the names never change; `submit` keeps its own
//! files from taking the file names.

use std::ffi::OsString;
use std::path::PathBuf;

use super::executor_env::{APP_ID, DRIVER_URL, LOG_DIR};

/// The driver's secret file, in the container's working directory (0600), in the format of
/// [`crate::driver_secret`].
pub const SECRET_FILE: &str = "yarn-am-driver.secret";
/// Where the driver may leave a message for the app's diagnostics.
pub const DIAGNOSTICS_FILE: &str = "yarn-am-driver.diagnostics";

/// The path of [`SECRET_FILE`].
pub const SECRET_FILE_VAR: &str = "YARN_AM_SECRET_FILE";
/// The path of [`DIAGNOSTICS_FILE`].
pub const DIAGNOSTICS_VAR: &str = "YARN_AM_DRIVER_DIAGNOSTICS";

/// The driver's environment (nothing secret: the secret itself is only in its file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverEnv {
    /// The driver API, as executors get it ([`DRIVER_URL`]).
    pub api_url: String,
    /// [`SECRET_FILE_VAR`].
    pub secret_file: PathBuf,
    /// [`APP_ID`].
    pub app_id: String,
    /// [`DIAGNOSTICS_VAR`].
    pub diagnostics: PathBuf,
    /// The AM container's log folder ([`LOG_DIR`]).
    pub log_dir: PathBuf,
}

impl DriverEnv {
    /// The variables, by name, as the driver must see them.
    pub fn to_env(&self) -> Vec<(&'static str, OsString)> {
        vec![
            (DRIVER_URL, self.api_url.clone().into()),
            (SECRET_FILE_VAR, self.secret_file.clone().into()),
            (APP_ID, self.app_id.clone().into()),
            (DIAGNOSTICS_VAR, self.diagnostics.clone().into()),
            (LOG_DIR, self.log_dir.clone().into()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the Spark plugin reads.
    #[test]
    fn the_driver_gets_the_names_the_spark_plugin_reads() {
        let env = DriverEnv {
            api_url: "https://am:4000".into(),
            secret_file: "/c/yarn-am-driver.secret".into(),
            app_id: "application_1_0001".into(),
            diagnostics: "/c/yarn-am-driver.diagnostics".into(),
            log_dir: "/logs".into(),
        };
        let got: Vec<(&str, String)> = env
            .to_env()
            .into_iter()
            .map(|(k, v)| (k, v.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            got,
            [
                ("YARN_AM_DRIVER_URL", "https://am:4000".to_string()),
                ("YARN_AM_SECRET_FILE", "/c/yarn-am-driver.secret".into()),
                ("YARN_AM_APP_ID", "application_1_0001".into()),
                (
                    "YARN_AM_DRIVER_DIAGNOSTICS",
                    "/c/yarn-am-driver.diagnostics".into()
                ),
                ("YARN_AM_LOG_DIR", "/logs".into()),
            ]
        );
    }
}
