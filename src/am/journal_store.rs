//! The job journal's files in the application's staging folder, where every AM attempt
//! appends what happens (see [`crate::core::driver::journal`] for the entries and the replay)
//! and the next attempt, after a crash, reads it back; and `driver.url`, where executors of
//! a crashed attempt find the next one.
//!
//! The staging folder is the place because it outlives an attempt exactly as long as the
//! application does: the AM removes it at the app's end and keeps it when a failed attempt
//! will be retried.
//!
//! - Local staging (`file://`, a file system every node sees): one file,
//!   `job-journal.jsonl`; each append is followed by `fdatasync`, so an outcome the AM has
//!   acted on survives a `kill -9` or a node crash.
//! - WebHDFS staging: one file per AM attempt, `job-journal-<attempt>.jsonl` (a new attempt
//!   never appends to a file whose writer just died: HDFS would refuse it until the dead
//!   writer's lease is recovered). A writer task batches everything the loop handed it since
//!   its last call into one `APPEND`, so the loop never waits on HDFS, except that a batch
//!   naming executors about to be launched is waited for, at most [`DURABLE_WAIT`] (their
//!   ids must be on record before they can poll, or a next attempt could not adopt them).
//!   Durability: an `APPEND` returns once the DataNode closed the file, that is once every
//!   DataNode of the pipeline acknowledged the bytes (in their memory; HDFS does not fsync
//!   on close). That survives a `kill -9` of the AM, a lost AM node and, with replication,
//!   a DataNode crash; not a power loss of every replica at once. A failed append is logged
//!   and not retried (a retry after a timeout could write the entries twice): those
//!   outcomes are lost to a next attempt, whose only cost is running those tasks again.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::core::driver::journal::{decode, encode, whole_len, Entry};
use anyhow::Context;
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};
use yarn_client::webhdfs::WebHdfs;

use crate::staging::{StagingDir, HDFS_FILE_MODE};

/// The current WebHDFS credentials (the AM's HDFS delegation token, refreshed on long
/// apps), asked again for every call; `None`: `user.name` (no security).
pub type HttpAuthSource = Arc<dyn Fn() -> Option<yarn_client::http_auth::HttpAuth> + Send + Sync>;

/// The journal's name in a local staging folder.
pub const JOURNAL_FILE: &str = "job-journal.jsonl";

/// The file in the staging folder naming the current AM attempt's driver URL.
pub const URL_FILE: &str = "driver.url";

/// The longest the loop waits for a WebHDFS append it must not run ahead of (executor
/// launches). Past it, the launch goes ahead unrecorded: a next attempt would release that
/// executor instead of adopting it.
pub const DURABLE_WAIT: Duration = Duration::from_secs(3);

/// Any one WebHDFS call of the journal.
const WEBHDFS_TIMEOUT: Duration = Duration::from_secs(10);

/// The journal file of AM attempt `attempt` in a WebHDFS staging folder.
fn webhdfs_journal(dir: &str, attempt: u32) -> String {
    format!("{}/job-journal-{attempt}.jsonl", dir.trim_end_matches('/'))
}

/// A WebHDFS client for the staging folder, with the AM's current HDFS delegation token
/// (or `user.name` on a cluster without security).
fn webhdfs(url: &str, user: &str, auth: &HttpAuthSource) -> anyhow::Result<WebHdfs> {
    let c = WebHdfs::new(url, user, WEBHDFS_TIMEOUT)?;
    Ok(match auth() {
        Some(a) => c.with_auth(a),
        None => c,
    })
}

/// Writes this attempt's driver URL to [`URL_FILE`] in the staging folder, atomically (a
/// temporary file renamed over it; on HDFS with `RENAME` and `OVERWRITE`), so that
/// executors of a crashed earlier attempt, whose AM port refuses, find this one. The URL is
/// not secret: polls and replies are signed. A failure is logged (executors of an earlier
/// attempt then stop, and their tasks run again).
pub async fn publish_url(staging: &StagingDir, url: &str, auth: &HttpAuthSource) {
    let text = format!("{url}\n");
    let r = match staging {
        StagingDir::Local { path } => {
            let dir = Path::new(path);
            let tmp = dir.join(format!("{URL_FILE}.tmp"));
            std::fs::write(&tmp, text)
                .and_then(|()| std::fs::rename(&tmp, dir.join(URL_FILE)))
                .map_err(anyhow::Error::from)
        }
        StagingDir::Webhdfs {
            url: nn,
            user,
            path,
        } => {
            let dir = path.trim_end_matches('/');
            let (tmp, dest) = (format!("{dir}/{URL_FILE}.tmp"), format!("{dir}/{URL_FILE}"));
            async {
                let c = webhdfs(nn, user, auth)?;
                c.create(&tmp, text.into_bytes(), true, Some(HDFS_FILE_MODE))
                    .await?;
                c.rename_over(&tmp, &dest).await?;
                anyhow::Ok(())
            }
            .await
        }
    };
    match r {
        Ok(()) => {
            info!(%url, staging = %staging.describe(), "published the driver URL for executors of earlier attempts")
        }
        Err(e) => warn!(staging = %staging.describe(), "could not publish the driver URL: {e:#}"),
    }
}

/// A batch for the WebHDFS writer, and who waits for it to be on HDFS.
type Batch = (String, Option<oneshot::Sender<()>>);

/// An open journal, positioned for appending.
pub enum Journal {
    Local {
        path: PathBuf,
        file: File,
    },
    Webhdfs {
        tx: mpsc::UnboundedSender<Batch>,
        writer: tokio::task::JoinHandle<()>,
    },
}

impl Journal {
    /// Opens the journal of the app staged in `staging` for AM attempt `attempt`: reads
    /// what earlier attempts wrote (a torn last line dropped) and gets ready to append.
    /// `auth`: the AM's current WebHDFS credentials, asked again for every call (they are
    /// refreshed on long-running apps). `Ok(None)`: no staging folder.
    pub async fn open(
        staging: Option<&StagingDir>,
        attempt: u32,
        auth: HttpAuthSource,
    ) -> anyhow::Result<Option<(Journal, Vec<Entry>)>> {
        match staging {
            Some(StagingDir::Local { path }) => {
                let path = Path::new(path).join(JOURNAL_FILE);
                Journal::open_local(&path).map(Some)
            }
            Some(StagingDir::Webhdfs { url, user, path }) => {
                Journal::open_webhdfs(url, user, path, attempt, auth)
                    .await
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    async fn open_webhdfs(
        url: &str,
        user: &str,
        dir: &str,
        attempt: u32,
        auth: HttpAuthSource,
    ) -> anyhow::Result<(Journal, Vec<Entry>)> {
        let c = webhdfs(url, user, &auth)?;
        let mut entries = Vec::new();
        for earlier in 1..attempt {
            let file = webhdfs_journal(dir, earlier);
            let text = match c.read_to_string(&file).await {
                Ok(t) => t,
                // That attempt died before it wrote anything (or ran no job).
                Err(e) if e.is_not_found() => continue,
                Err(e) => return Err(e).with_context(|| format!("reading the job journal {file}")),
            };
            let whole = whole_len(text.as_bytes());
            if whole < text.len() {
                warn!(journal = %file, dropped = text.len() - whole,
                      "the job journal ends in a torn line (a write the crash cut short); dropping it");
            }
            entries.extend(decode(&text[..whole]).with_context(|| format!("in {file}"))?);
        }
        if !entries.is_empty() {
            info!(staging = %dir, entries = entries.len(), "read the job journal of earlier attempts");
        }
        // Created by the writer with the first batch: nothing on HDFS delays the start.
        let own = webhdfs_journal(dir, attempt);
        let (tx, rx) = mpsc::unbounded_channel();
        let (url, user) = (url.to_string(), user.to_string());
        let writer = tokio::spawn(write_webhdfs(rx, own, move || webhdfs(&url, &user, &auth)));
        Ok((Journal::Webhdfs { tx, writer }, entries))
    }

    fn open_local(path: &Path) -> anyhow::Result<(Journal, Vec<Entry>)> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("opening the job journal {}", path.display()))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .with_context(|| format!("reading the job journal {}", path.display()))?;
        let whole = whole_len(&bytes);
        if whole < bytes.len() {
            warn!(
                journal = %path.display(),
                dropped = bytes.len() - whole,
                "the job journal ends in a torn line (a write the crash cut short); dropping it"
            );
            file.set_len(whole as u64)
                .with_context(|| format!("truncating the job journal {}", path.display()))?;
        }
        file.seek(SeekFrom::Start(whole as u64))?;
        let text = String::from_utf8_lossy(&bytes[..whole]);
        let entries = decode(&text).with_context(|| format!("in {}", path.display()))?;
        if !entries.is_empty() {
            info!(journal = %path.display(), entries = entries.len(), "read the job journal of an earlier attempt");
        }
        Ok((
            Journal::Local {
                path: path.to_path_buf(),
                file,
            },
            entries,
        ))
    }

    /// Appends `entries`. Local: durable on return. WebHDFS: handed to the writer, on HDFS
    /// soon after. A failure is logged, not fatal: the job goes on, only a later attempt
    /// would rerun more of it.
    pub fn append(&mut self, entries: &[Entry]) {
        let _ = self.send(entries, None);
    }

    /// Appends `entries`; the returned [`Durable`] waits until they are durable. Two steps
    /// so that the caller holds no borrow of the journal while it waits on HDFS.
    pub fn append_durable(&mut self, entries: &[Entry]) -> Durable {
        let (done, durable) = oneshot::channel();
        Durable(match self.send(entries, Some(done)) {
            Sent::Queued => Pending::Queued(durable),
            Sent::Written(ok) => Pending::Written(ok),
        })
    }

    /// Local: appended and synced (or not); WebHDFS: handed to the writer (or not, when it
    /// has stopped). Nothing to append counts as written.
    fn send(&mut self, entries: &[Entry], done: Option<oneshot::Sender<()>>) -> Sent {
        if entries.is_empty() {
            return Sent::Written(true);
        }
        let text: String = entries.iter().map(encode).collect();
        match self {
            Journal::Local { path, file } => {
                let r = file
                    .write_all(text.as_bytes())
                    .and_then(|()| file.sync_data());
                if let Err(e) = &r {
                    warn!(journal = %path.display(), "could not append to the job journal: {e}");
                }
                Sent::Written(r.is_ok())
            }
            Journal::Webhdfs { tx, .. } => match tx.send((text, done)) {
                Ok(()) => Sent::Queued,
                Err(_) => Sent::Written(false),
            },
        }
    }

    /// Stops writing because the staging folder, journal included, is about to be removed
    /// (the app is over): a WebHDFS append still queued or in flight would otherwise race
    /// the removal and fail with "block does not exist", a false alarm in the log.
    pub fn abandon(self) {
        if let Journal::Webhdfs { writer, .. } = self {
            writer.abort();
        }
    }
}

/// What became of an append when it was handed over.
enum Sent {
    /// In the WebHDFS writer's queue.
    Queued,
    /// Done with (local staging, or nothing to append); whether it is durable.
    Written(bool),
}

enum Pending {
    Queued(oneshot::Receiver<()>),
    Written(bool),
}

/// An append in flight: a WebHDFS batch in the writer's hands, or a local append already
/// done (durable on return) or failed.
#[must_use = "wait for the append, or say why not"]
pub struct Durable(Pending);

impl Durable {
    /// Waits until the append is durable, at most `limit` (see [`DURABLE_WAIT`]); whether
    /// it is. A failure or a timeout is logged and the caller goes on.
    pub async fn wait(self, limit: Duration) -> bool {
        let durable = match self.0 {
            Pending::Written(ok) => return ok,
            Pending::Queued(rx) => rx,
        };
        match tokio::time::timeout(limit, durable).await {
            Ok(Ok(())) => true,
            Ok(Err(_)) => {
                warn!("the job journal append failed; going on unrecorded");
                false
            }
            Err(_) => {
                warn!(
                    "the job journal append took over {} ms; going on before it is durable",
                    limit.as_millis()
                );
                false
            }
        }
    }
}

/// The WebHDFS journal writer: each append carries everything queued since the last one,
/// in order; those waiting hear when it is on HDFS (or, by their channel's drop, that it
/// failed).
async fn write_webhdfs(
    mut rx: mpsc::UnboundedReceiver<Batch>,
    file: String,
    client: impl Fn() -> anyhow::Result<WebHdfs>,
) {
    let mut created = false;
    while let Some((mut text, done)) = rx.recv().await {
        let mut waiting: Vec<oneshot::Sender<()>> = done.into_iter().collect();
        while let Ok((more, done)) = rx.try_recv() {
            text.push_str(&more);
            waiting.extend(done);
        }
        let r = match client() {
            // Attempt numbers are not reused: no earlier file of this name to keep.
            Ok(c) if !created => c
                .create(&file, text.into_bytes(), true, Some(HDFS_FILE_MODE))
                .await
                .map(|_| created = true)
                .map_err(anyhow::Error::from),
            Ok(c) => c
                .append(&file, text.into_bytes())
                .await
                .map_err(anyhow::Error::from),
            Err(e) => Err(e),
        };
        match r {
            Ok(()) => {
                for w in waiting {
                    let _ = w.send(());
                }
            }
            Err(e) => warn!(journal = %file, "could not append to the job journal: {e:#}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reopened_journal_has_the_entries_and_loses_only_a_torn_tail() {
        let dir = std::env::temp_dir().join(format!("yarn-am-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(JOURNAL_FILE);
        let _ = std::fs::remove_file(&path);
        let (mut j, old) = Journal::open_local(&path).unwrap();
        assert!(old.is_empty());
        let a = Entry::AmAttempt { attempt: 1 };
        j.append(std::slice::from_ref(&a));
        drop(j);
        // A crash in the middle of the next line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"ev\":\"am_att").unwrap();
        drop(f);
        let (mut j, old) = Journal::open_local(&path).unwrap();
        assert_eq!(old, vec![a.clone()]);
        let b = Entry::AmAttempt { attempt: 2 };
        j.append(std::slice::from_ref(&b));
        drop(j);
        let (_, old) = Journal::open_local(&path).unwrap();
        assert_eq!(old, vec![a, b]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
