//! Finding the next AM attempt: when the AM's port refuses, a newer attempt may have
//! published its address in the application's staging folder (`driver.url`); the folder gone
//! means the application is over (see [`crate::protocol::poll`], "Finding the next AM
//! attempt").

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use tracing::warn;
use yarn_client::webhdfs::WebHdfs;

use super::config::var;

/// Where to poll after the AM's port refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NextAm {
    /// A newer AM attempt published this address.
    Moved(String),
    /// Nothing new (yet): keep trying the same address for a while.
    Unchanged,
    /// The staging folder is gone: the application ended; no attempt will follow.
    AppOver,
}

/// The application's staging folder, as an executor reaches it.
pub(crate) enum StagingFolder {
    Local(PathBuf),
    /// On HDFS, through WebHDFS with the container's HDFS delegation token (`user.name`
    /// without security).
    Webhdfs {
        client: WebHdfs,
        dir: String,
    },
}

/// Any one WebHDFS call while looking for a next AM attempt.
const WEBHDFS_TIMEOUT: Duration = Duration::from_secs(5);

impl StagingFolder {
    pub(crate) fn from_env() -> anyhow::Result<Option<Self>> {
        let Some(dir) = std::env::var_os("YARN_AM_STAGING_DIR") else {
            return Ok(None);
        };
        let Ok(url) = std::env::var("YARN_AM_STAGING_WEBHDFS") else {
            return Ok(Some(StagingFolder::Local(PathBuf::from(dir))));
        };
        let user = var("YARN_AM_STAGING_USER")?;
        let client = WebHdfs::new(&url, &user, WEBHDFS_TIMEOUT)
            .with_context(|| format!("YARN_AM_STAGING_WEBHDFS {url:?}"))?;
        // Read after `take_key` rewrote the token file: it keeps the HDFS tokens.
        let client = match crate::protocol::credentials::AmAuth::from_container().webhdfs {
            Some(auth) => client.with_auth(auth),
            None => client,
        };
        Ok(Some(StagingFolder::Webhdfs {
            client,
            dir: dir.to_string_lossy().trim_end_matches('/').to_string(),
        }))
    }

    pub(crate) async fn next_am(&self, current: &str) -> NextAm {
        match self {
            StagingFolder::Local(dir) => next_am(dir, current),
            StagingFolder::Webhdfs { client, dir } => {
                match client.status(dir).await {
                    Err(e) if e.is_not_found() => return NextAm::AppOver,
                    Err(e) => {
                        warn!("could not look at the staging folder {dir} on HDFS: {e}");
                        return NextAm::Unchanged;
                    }
                    Ok(_) => {}
                }
                match client.read_to_string(&format!("{dir}/driver.url")).await {
                    Ok(text) => moved(&text, current),
                    Err(_) => NextAm::Unchanged,
                }
            }
        }
    }
}

/// What a `driver.url` reading says, against the URL polled now.
fn moved(text: &str, current: &str) -> NextAm {
    let url = text.trim();
    // Only an https:// URL: every attempt serves TLS with the application's certificate.
    if url.starts_with("https://") && url != current {
        NextAm::Moved(url.to_string())
    } else {
        NextAm::Unchanged
    }
}

/// Reads the driver URL a next AM attempt publishes in `staging_dir` (see the AM's
/// `publish_url` in `src/am/journal_store.rs`). The staging folder rather than the RM: an executor holds no RM
/// credentials (the AMRM token is the AM's alone, and RM REST needs SPNEGO on a secure
/// cluster), the folder is already readable to every container of the app, and its removal
/// at the app's end tells the executor at once that no attempt will follow.
pub(super) fn next_am(staging_dir: &Path, current: &str) -> NextAm {
    if !staging_dir.is_dir() {
        return NextAm::AppOver;
    }
    match std::fs::read_to_string(staging_dir.join("driver.url")) {
        Ok(text) => moved(&text, current),
        Err(_) => NextAm::Unchanged,
    }
}
