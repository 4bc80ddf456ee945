//! Finding and loading the site files an AM runs with.
//!
//! Order (later overrides earlier, `final` honoured): `core-site.xml` from
//! `$YARN_CONF_DIR` then `$HADOOP_CONF_DIR`, then `yarn-site.xml` from the same two
//! directories. `core-site` comes first because Hadoop's `YarnConfiguration` adds
//! `yarn-site` after `core-site`. A directory named by both variables is read once.
//! Missing directories or files are skipped: inside a container the NM usually sets only
//! `HADOOP_CONF_DIR`, and a test cluster may set neither.
//!
//! Note: Hadoop 3's launcher scripts do something different when both are set: they let
//! `YARN_CONF_DIR` *replace* `HADOOP_CONF_DIR` (`hadoop_deprecate_envvar`), so there the
//! YARN directory wins outright. The order here follows the project brief; to flip it,
//! reorder [`CONF_DIR_VARS`].

use std::path::PathBuf;

use tracing::info;

use super::configuration::Configuration;
use super::env_source::EnvSource;
use super::error::ConfError;
use super::yarn::with_yarn_defaults;

/// The site files read, in order.
pub const SITE_FILES: [&str; 2] = ["core-site.xml", "yarn-site.xml"];

/// Environment variables naming configuration directories, in load order.
pub const CONF_DIR_VARS: [&str; 2] = ["YARN_CONF_DIR", "HADOOP_CONF_DIR"];

/// The configuration directories named by the environment, in load order, deduplicated.
pub fn conf_dirs(env: &EnvSource) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for var in CONF_DIR_VARS {
        if let Some(dir) = env.var(var).filter(|d| !d.trim().is_empty()) {
            let dir = PathBuf::from(dir.trim());
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

impl Configuration {
    /// Merge the site files of `dirs` in the documented order; returns the files read.
    pub fn add_site_files(&mut self, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, ConfError> {
        let mut loaded = Vec::new();
        for file in SITE_FILES {
            for dir in dirs {
                let path = dir.join(file);
                if self.add_file(&path)? {
                    loaded.push(path);
                }
            }
        }
        Ok(loaded)
    }

    /// What an AM normally wants: YARN defaults, then the site files found through
    /// `env`'s `YARN_CONF_DIR` / `HADOOP_CONF_DIR`, with `overrides` for expansion.
    pub fn load(
        env: EnvSource,
        overrides: std::collections::HashMap<String, String>,
    ) -> Result<Configuration, ConfError> {
        let dirs = conf_dirs(&env);
        let mut conf =
            with_yarn_defaults(Configuration::new().with_env(env).with_overrides(overrides));
        let loaded = conf.add_site_files(&dirs)?;
        info!(?dirs, ?loaded, "Hadoop configuration loaded");
        Ok(conf)
    }

    /// [`Self::load`] from the process environment, without overrides.
    pub fn from_process_env() -> Result<Configuration, ConfError> {
        Self::load(EnvSource::Process, Default::default())
    }
}
