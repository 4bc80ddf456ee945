//! The job journal's files in the application's staging folder, where every AM attempt
//! appends what happens (see [`yarn_am_core::driver::journal`] for the entries and the replay)
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

use std::time::Duration;

use anyhow::Context;
use tokio::sync::oneshot;
use tracing::{info, warn};
use yarn_am_core::driver::journal::{decode, encode, whole_len, Entry};

use crate::staging::fs::{join, Appender, Handed, StagingFs};
use crate::staging::{StagingDir, StagingFolder};

pub use crate::staging::fs::HttpAuthSource;

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

/// The journal files an attempt reads and the one it appends to: one file for every
/// attempt where a crashed writer's file can be appended to again (local), else one per
/// attempt, `job-journal-<attempt>.jsonl` (HDFS).
fn journal_files(fs: &dyn StagingFs, dir: &str, attempt: u32) -> (Vec<String>, String) {
    if fs.one_writer_per_file() {
        let of = |a: u32| join(dir, &format!("job-journal-{a}.jsonl"));
        ((1..attempt).map(of).collect(), of(attempt))
    } else {
        let one = join(dir, JOURNAL_FILE);
        (vec![one.clone()], one)
    }
}

/// Writes this attempt's driver URL to [`URL_FILE`] in the staging folder, atomically (a
/// temporary file renamed over it; on HDFS with `RENAME` and `OVERWRITE`), so that
/// executors of a crashed earlier attempt, whose AM port refuses, find this one. The URL is
/// not secret: polls and replies are signed. A failure is logged (executors of an earlier
/// attempt then stop, and their tasks run again).
pub async fn publish_url(staging: &StagingDir, url: &str, auth: &HttpAuthSource) {
    let text = format!("{url}\n");
    let r = match StagingFolder::reach(staging, WEBHDFS_TIMEOUT, auth.clone()) {
        Ok(folder) => folder
            .fs
            .replace(&join(&folder.path, URL_FILE), text.into_bytes())
            .await
            .map_err(anyhow::Error::from),
        Err(e) => Err(e),
    };
    match r {
        Ok(()) => {
            info!(%url, staging = %staging.describe(), "published the driver URL for executors of earlier attempts")
        }
        Err(e) => warn!(staging = %staging.describe(), "could not publish the driver URL: {e:#}"),
    }
}

/// An open journal, positioned for appending.
pub struct Journal {
    appender: Box<dyn Appender>,
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
        let Some(staging) = staging else {
            return Ok(None);
        };
        let folder = StagingFolder::reach(staging, WEBHDFS_TIMEOUT, auth)?;
        Journal::open_in(&folder, attempt).await.map(Some)
    }

    async fn open_in(
        folder: &StagingFolder,
        attempt: u32,
    ) -> anyhow::Result<(Journal, Vec<Entry>)> {
        let fs = &*folder.fs;
        let (earlier, own) = journal_files(fs, &folder.path, attempt);
        let mut entries = Vec::new();
        // The bytes of our own file to keep (a single file read back, its torn tail dropped).
        let mut keep = 0;
        for file in earlier {
            let text = fs
                .read_to_string(&file)
                .await
                .with_context(|| format!("reading the job journal {file}"))?;
            // None: that attempt died before it wrote anything (or ran no job).
            let Some(text) = text else { continue };
            let whole = whole_len(text.as_bytes());
            if whole < text.len() {
                warn!(journal = %file, dropped = text.len() - whole,
                      "the job journal ends in a torn line (a write the crash cut short); dropping it");
            }
            entries.extend(decode(&text[..whole]).with_context(|| format!("in {file}"))?);
            if file == own {
                keep = whole as u64;
            }
        }
        if !entries.is_empty() {
            info!(staging = %fs.describe(&folder.path), entries = entries.len(), "read the job journal of earlier attempts");
        }
        let appender = fs
            .open_appender(&own, keep, "the job journal")
            .await
            .with_context(|| format!("opening the job journal {own}"))?;
        Ok((Journal { appender }, entries))
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
            Handed::Queued => Pending::Queued(durable),
            Handed::Written(ok) => Pending::Written(ok),
        })
    }

    /// Local: appended and synced (or not); WebHDFS: handed to the writer (or not, when it
    /// has stopped). Nothing to append counts as written.
    fn send(&mut self, entries: &[Entry], done: Option<oneshot::Sender<()>>) -> Handed {
        if entries.is_empty() {
            return Handed::Written(true);
        }
        let text: String = entries.iter().map(encode).collect();
        self.appender.append(text, done)
    }

    /// Stops writing because the staging folder, journal included, is about to be removed
    /// (the app is over): a WebHDFS append still queued or in flight would otherwise race
    /// the removal and fail with "block does not exist", a false alarm in the log.
    pub fn abandon(self) {
        self.appender.abandon();
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::io::Write;

    /// The journal of the app staged locally in `dir`, as the AM's first attempt opens it.
    async fn open_local(dir: &std::path::Path) -> (Journal, Vec<Entry>) {
        let staging = StagingDir::Local {
            path: dir.display().to_string(),
        };
        let auth = crate::staging::fs::fixed_auth(None);
        Journal::open(Some(&staging), 1, auth)
            .await
            .unwrap()
            .unwrap()
    }

    #[tokio::test]
    async fn a_reopened_journal_has_the_entries_and_loses_only_a_torn_tail() {
        let dir = std::env::temp_dir().join(format!("yarn-am-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(JOURNAL_FILE);
        let _ = std::fs::remove_file(&path);
        let (mut j, old) = open_local(&dir).await;
        assert!(old.is_empty());
        let a = Entry::AmAttempt { attempt: 1 };
        j.append(std::slice::from_ref(&a));
        drop(j);
        // A crash in the middle of the next line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"ev\":\"am_att").unwrap();
        drop(f);
        let (mut j, old) = open_local(&dir).await;
        assert_eq!(old, vec![a.clone()]);
        let b = Entry::AmAttempt { attempt: 2 };
        j.append(std::slice::from_ref(&b));
        drop(j);
        let (_, old) = open_local(&dir).await;
        assert_eq!(old, vec![a, b]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
