//! Staging on a local file system every NodeManager sees (`file://` URLs).
//!
//! A local folder is private: created 0700 by `mkdir` itself (a path already there, a
//! planted link included, is refused), files 0600 (0700 for a program), in a root that is a
//! real folder only we can change or a sticky one like `/tmp`; it is removed only while it
//! is still our real folder (see [`crate::staging::private_fs`]).

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use tokio::sync::oneshot;
use tracing::warn;
use yarn_client::webhdfs::WebHdfs;

use super::{
    Appender, FileStatus, FileType, Fut, Handed, Readers, StagingDir, StagingError, StagingFs,
};
use crate::staging::private_fs;
use crate::staging::DEFAULT_LOCAL_ROOT;

/// The local back end: paths are the file system's own.
pub struct LocalFs;

/// Checks the root (`--staging-dir`, else [`DEFAULT_LOCAL_ROOT`]) is safe, creating it
/// when missing; its absolute path.
pub fn open_root(root: Option<&str>) -> anyhow::Result<String> {
    let root = Path::new(root.unwrap_or(DEFAULT_LOCAL_ROOT));
    private_fs::open_parent(root).context("the local staging root is not safe to use")?;
    // Absolute: the AM removes the app's folder from another working directory.
    let root = std::fs::canonicalize(root)
        .with_context(|| format!("resolving staging root {}", root.display()))?;
    Ok(root.display().to_string())
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StagingError + 'a {
    move |source| StagingError::Io {
        what,
        path: path.display().to_string(),
        source,
    }
}

fn unsupported(what: &'static str, path: &str) -> StagingError {
    StagingError::Unsupported {
        what,
        path: path.to_string(),
        place: "a local staging folder (private to its user)",
    }
}

/// A new file only we can read (`mode` 0600, or 0700 for a program); refuses an existing
/// path, a link included.
fn create_private(path: &Path, mode: u32) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
}

/// Copies `src` to the new file `dst`: 0700 if `src` is executable (the yarn-am binary the
/// containers run), else 0600; the bytes copied.
fn copy_private(src: &Path, dst: &Path) -> std::io::Result<u64> {
    let mut from = File::open(src)?;
    let executable = from.metadata()?.permissions().mode() & 0o111 != 0;
    let mut to = create_private(dst, if executable { 0o700 } else { 0o600 })?;
    std::io::copy(&mut from, &mut to)
}

/// `path`'s status as the NodeManager will see it (links followed); `None` when nothing is
/// there.
fn status(path: &Path) -> Result<Option<FileStatus>, StagingError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("reading the status of", path)(e)),
    };
    let mtime = meta
        .modified()
        .map_err(io("reading the modification time of", path))?
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| io("reading the modification time of", path)(std::io::Error::other(e)))?;
    Ok(Some(FileStatus {
        length: meta.len(),
        modification_time: mtime.as_millis() as u64,
        kind: if meta.is_dir() {
            FileType::Directory
        } else {
            FileType::File
        },
        owner: meta.uid().to_string(),
        permission: format!("{:o}", meta.mode() & 0o7777),
        replication: 0,
        block_size: 0,
    }))
}

impl StagingFs for LocalFs {
    fn name(&self) -> &'static str {
        "the local disk"
    }

    fn describe(&self, path: &str) -> String {
        self.locate(path).describe()
    }

    fn locate(&self, dir: &str) -> StagingDir {
        StagingDir::Local {
            path: dir.to_string(),
        }
    }

    fn webhdfs(&self) -> Option<&WebHdfs> {
        None
    }

    fn keeps_shared_copies(&self) -> bool {
        false
    }

    fn one_writer_per_file(&self) -> bool {
        false
    }

    fn own_dir<'a>(&'a self, path: &'a str, readers: Readers) -> Fut<'a, ()> {
        Box::pin(async move {
            if readers == Readers::Everyone {
                return Err(unsupported("creating a public folder", path));
            }
            Ok(private_fs::create_private_dir(Path::new(path))?)
        })
    }

    fn sub_dir<'a>(&'a self, path: &'a str, readers: Readers) -> Fut<'a, ()> {
        Box::pin(async move {
            if readers == Readers::Everyone {
                return Err(unsupported("creating a public folder", path));
            }
            private_fs::ensure_private_dir(Path::new(path))?;
            Ok(())
        })
    }

    fn put_file<'a>(&'a self, src: &'a Path, path: &'a str, readers: Readers) -> Fut<'a, u64> {
        Box::pin(async move {
            if readers == Readers::Everyone {
                return Err(unsupported("staging a public file", path));
            }
            let dst = Path::new(path);
            copy_private(src, dst).map_err(io("copying to", dst))
        })
    }

    fn put_bytes<'a>(&'a self, path: &'a str, data: Vec<u8>) -> Fut<'a, u64> {
        Box::pin(async move {
            let dst = Path::new(path);
            create_private(dst, 0o600)
                .and_then(|mut f| f.write_all(&data))
                .map_err(io("writing", dst))?;
            Ok(data.len() as u64)
        })
    }

    fn replace<'a>(&'a self, path: &'a str, data: Vec<u8>) -> Fut<'a, ()> {
        Box::pin(async move {
            let dst = Path::new(path);
            let tmp = PathBuf::from(format!("{path}.tmp"));
            std::fs::write(&tmp, data).map_err(io("writing", &tmp))?;
            std::fs::rename(&tmp, dst).map_err(io("renaming over", dst))
        })
    }

    fn rename<'a>(&'a self, from: &'a str, to: &'a str) -> Fut<'a, bool> {
        Box::pin(async move {
            // A hard link never replaces what is there, unlike rename(2).
            match std::fs::hard_link(from, to) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
                Err(e) => return Err(io("moving a file to", Path::new(to))(e)),
            }
            std::fs::remove_file(from).map_err(io("removing", Path::new(from)))?;
            Ok(true)
        })
    }

    fn status<'a>(&'a self, path: &'a str) -> Fut<'a, Option<FileStatus>> {
        Box::pin(async move { status(Path::new(path)) })
    }

    fn read_to_string<'a>(&'a self, path: &'a str) -> Fut<'a, Option<String>> {
        Box::pin(async move {
            match std::fs::read(path) {
                // Lossy: a crash may have cut a character in two at the end.
                Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io("reading", Path::new(path))(e)),
            }
        })
    }

    fn remove_file<'a>(&'a self, path: &'a str) -> Fut<'a, ()> {
        Box::pin(async move { std::fs::remove_file(path).map_err(io("removing", Path::new(path))) })
    }

    fn remove_dir<'a>(&'a self, path: &'a str) -> Fut<'a, bool> {
        Box::pin(async move { Ok(private_fs::remove_private_dir(Path::new(path))?) })
    }

    fn resource_url<'a>(&'a self, path: &'a str) -> Fut<'a, String> {
        Box::pin(async move {
            let p = Path::new(path);
            let real = std::fs::canonicalize(p).map_err(io("resolving", p))?;
            Ok(format!("file://{}", real.display()))
        })
    }

    fn open_appender<'a>(
        &'a self,
        path: &'a str,
        keep: u64,
        label: &'static str,
    ) -> Fut<'a, Box<dyn Appender>> {
        Box::pin(async move {
            let p = PathBuf::from(path);
            let mut file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&p)
                .map_err(io("opening", &p))?;
            let len = file.metadata().map_err(io("reading", &p))?.len();
            if len > keep {
                file.set_len(keep).map_err(io("truncating", &p))?;
            }
            file.seek(SeekFrom::Start(keep))
                .map_err(io("seeking in", &p))?;
            Ok(Box::new(LocalAppender {
                path: p,
                file,
                label,
            }) as Box<dyn Appender>)
        })
    }
}

/// Appends in place, each followed by `fdatasync`: durable on return, so a record the
/// caller acted on survives a `kill -9` or a node crash.
struct LocalAppender {
    path: PathBuf,
    file: File,
    label: &'static str,
}

impl Appender for LocalAppender {
    fn append(&mut self, data: String, _done: Option<oneshot::Sender<()>>) -> Handed {
        let r = self
            .file
            .write_all(data.as_bytes())
            .and_then(|()| self.file.sync_data());
        if let Err(e) = &r {
            warn!(file = %self.path.display(), "could not append to {}: {e}", self.label);
        }
        Handed::Written(r.is_ok())
    }

    fn abandon(self: Box<Self>) {}
}
