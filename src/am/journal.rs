//! The job journal's file: `job-journal.jsonl` in the application's staging folder, where
//! every AM attempt appends what happens (see [`yarn_am::driver::journal`] for the entries
//! and the replay) and the next attempt, after a crash, reads it back.
//!
//! The staging folder is the place because it outlives an attempt exactly as long as the
//! application does: the AM removes it at the app's end and keeps it when a failed attempt
//! will be retried. Each append is followed by `fdatasync`, so an outcome the AM has acted
//! on (and told an executor about) survives a `kill -9` or a node crash; the cost is one
//! small write per task start or end, next to tasks that take seconds.
//!
//! Only a local staging folder (`file://`, a file system every node sees) is journaled for
//! now; with WebHDFS staging the AM runs without a journal (a restarted attempt reruns the
//! job, as before) and says so in its log.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use tracing::{info, warn};
use yarn_am::driver::journal::{decode, encode, whole_len, Entry};

use crate::staging::StagingDir;

/// The journal's name in the staging folder.
pub const JOURNAL_FILE: &str = "job-journal.jsonl";

/// The file in the staging folder naming the current AM attempt's driver URL.
pub const URL_FILE: &str = "driver.url";

/// Writes this attempt's driver URL to [`URL_FILE`] in the staging folder, atomically (a
/// temporary file renamed over it), so that executors of a crashed earlier attempt, whose
/// AM port refuses, find this one. The URL is not secret: polls and replies are signed.
/// Local staging only, like the journal; a failure is logged (executors of an earlier
/// attempt then stop, and their tasks run again).
pub fn publish_url(staging: &StagingDir, url: &str) {
    let StagingDir::Local { path } = staging else {
        return;
    };
    let dir = Path::new(path);
    let tmp = dir.join(format!("{URL_FILE}.tmp"));
    let r = std::fs::write(&tmp, format!("{url}\n"))
        .and_then(|()| std::fs::rename(&tmp, dir.join(URL_FILE)));
    match r {
        Ok(()) => {
            info!(%url, staging = %path, "published the driver URL for executors of earlier attempts")
        }
        Err(e) => warn!(staging = %path, "could not publish the driver URL: {e}"),
    }
}

/// An open journal, positioned for appending.
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens (or creates, mode 0600) the journal of the app staged in `staging`, reads what
    /// earlier attempts wrote, and cuts off a torn last line so that appends start clean.
    /// `Ok(None)`: this staging back end has no journal.
    pub fn open(staging: Option<&StagingDir>) -> anyhow::Result<Option<(Journal, Vec<Entry>)>> {
        match staging {
            Some(StagingDir::Local { path }) => {
                let path = Path::new(path).join(JOURNAL_FILE);
                Journal::open_local(&path).map(Some)
            }
            Some(StagingDir::Webhdfs { path, .. }) => {
                warn!(staging = %path, "no job journal with WebHDFS staging: a restarted attempt runs the job again");
                Ok(None)
            }
            None => Ok(None),
        }
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
            Journal {
                path: path.to_path_buf(),
                file,
            },
            entries,
        ))
    }

    /// Appends `entries` and makes them durable. A failure is logged, not fatal: the job
    /// goes on, only a later attempt would rerun more of it.
    pub fn append(&mut self, entries: &[Entry]) {
        if entries.is_empty() {
            return;
        }
        let text: String = entries.iter().map(encode).collect();
        let r = self
            .file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data());
        if let Err(e) = r {
            warn!(journal = %self.path.display(), "could not append to the job journal: {e}");
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
