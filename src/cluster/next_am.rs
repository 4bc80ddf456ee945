//! Finding the next AM attempt: when the AM's port refuses, a newer attempt may have
//! published its address in the application's staging folder (`driver.url`); the folder gone
//! means the application is over (see [`yarn_am_wire::poll`], "Finding the next AM
//! attempt").

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context;
use tracing::warn;

use crate::staging::fs::join;

/// The application's staging folder, as an executor reaches it.
pub(crate) use crate::staging::StagingFolder;

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

/// Any one WebHDFS call while looking for a next AM attempt.
const WEBHDFS_TIMEOUT: Duration = Duration::from_secs(5);

impl StagingFolder {
    /// The folder the AM named in the container's environment; `None` when it named none.
    /// On HDFS, reached through WebHDFS with the container's HDFS delegation token
    /// (`user.name` without security).
    pub(crate) fn from_env() -> anyhow::Result<Option<Self>> {
        let get = |name: &str| std::env::var(name).ok();
        let Some(staging) = yarn_am_wire::executor_env::staging(&get)? else {
            return Ok(None);
        };
        // Read at the first WebHDFS call, after `take_key` rewrote the token file: it keeps
        // the HDFS tokens.
        let token = OnceLock::new();
        let auth = Arc::new(move || {
            token
                .get_or_init(|| yarn_am_wire::credentials::AmAuth::from_container().webhdfs)
                .clone()
        });
        StagingFolder::reach(&staging, WEBHDFS_TIMEOUT, auth)
            .map(Some)
            .context("the staging folder in YARN_AM_STAGING_DIR and YARN_AM_STAGING_WEBHDFS")
    }

    /// Reads the driver URL a next AM attempt publishes in the folder (see the AM's
    /// `publish_url` in `src/am/journal_store.rs`). The staging folder rather than the RM:
    /// an executor holds no RM credentials (the AMRM token is the AM's alone, and RM REST
    /// needs SPNEGO on a secure cluster), the folder is already readable to every container
    /// of the app, and its removal at the app's end tells the executor at once that no
    /// attempt will follow.
    pub(crate) async fn next_am(&self, current: &str) -> NextAm {
        match self.fs.status(&self.path).await {
            Ok(Some(st)) if st.kind == crate::staging::fs::FileType::Directory => {}
            Ok(_) => return NextAm::AppOver,
            Err(e) => {
                warn!(
                    "could not look at the staging folder: {:#}",
                    anyhow::Error::from(e)
                );
                return NextAm::Unchanged;
            }
        }
        match self
            .fs
            .read_to_string(&join(&self.path, "driver.url"))
            .await
        {
            Ok(Some(text)) => moved(&text, current),
            _ => NextAm::Unchanged,
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

/// [`StagingFolder::next_am`] for a local folder, at once (local reads never wait).
#[cfg(test)]
pub(crate) fn next_am(staging_dir: &std::path::Path, current: &str) -> NextAm {
    use futures_util::FutureExt;
    let staging = crate::staging::StagingDir::Local {
        path: staging_dir.display().to_string(),
    };
    let folder = StagingFolder::reach(
        &staging,
        WEBHDFS_TIMEOUT,
        crate::staging::fs::fixed_auth(None),
    )
    .expect("a local folder needs no client");
    folder
        .next_am(current)
        .now_or_never()
        .expect("local reads do not wait")
}
