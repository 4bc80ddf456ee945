//! The staging root: opened before the RM is asked for an application id, so a wrong or
//! unreachable staging place fails the submission before anything is created.

use std::sync::Arc;

use anyhow::Context;
use tracing::info;
use yarn_client::webhdfs::WebHdfs;

use super::cache::{CACHE_DIR_NAME, PUBLIC_DIR_NAME};
use super::fs::{self, join, Readers, StagingFs};
use super::{Stager, StagingOptions};

/// A staging root that exists and is writable; [`StagingRoot::app_folder`] makes the
/// per-application folder.
pub struct StagingRoot {
    fs: Arc<dyn StagingFs>,
    root: String,
}

impl StagingRoot {
    /// Resolves the root (on HDFS, the user's home folder when none is given) and creates it.
    pub async fn open(opts: &StagingOptions) -> anyhow::Result<StagingRoot> {
        let (fs, root) = fs::open_root(opts).await?;
        Ok(StagingRoot { fs, root })
    }

    /// The WebHDFS client when staging on HDFS (input listing uses the same client and
    /// authentication).
    pub fn webhdfs(&self) -> Option<&WebHdfs> {
        self.fs.webhdfs()
    }

    /// Creates `<root>/<app_id>`, ours alone.
    pub async fn app_folder(self, app_id: &str) -> anyhow::Result<Stager> {
        let dir = join(&self.root, app_id);
        self.fs
            .own_dir(&dir, Readers::Owner)
            .await
            .context("creating the application's staging folder")?;
        info!(dir = %self.fs.describe(&dir), "staging on {}", self.fs.name());
        Ok(Stager::new(
            self.fs,
            dir,
            join(&self.root, CACHE_DIR_NAME),
            join(&self.root, PUBLIC_DIR_NAME),
        ))
    }
}
