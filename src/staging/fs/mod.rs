//! The staging file system: one folder tree, on the local disk or on HDFS through WebHDFS,
//! behind one trait, [`StagingFs`], with one file per back end ([`local`], [`webhdfs`]).
//!
//! Which back end serves a folder is decided here and nowhere else: from the submitter's
//! flags ([`open_root`]) or from the [`StagingDir`] the spec and the executors' environment
//! carry ([`StagingFolder::reach`]). Everything above (staging, the upload cache, the job
//! journal, finding a next AM attempt) speaks to the trait. Where the back ends differ in
//! what they can do (only HDFS keeps copies shared by several apps; only a local file can be
//! appended to again after its writer crashed), the trait says so as a capability rather
//! than by name.
//!
//! Paths are absolute and joined with `/` ([`join`]) on both back ends.

pub mod local;
pub mod webhdfs;

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::sync::oneshot;
use tracing::{info, warn};
use yarn_client::http_auth::HttpAuth;
use yarn_client::webhdfs::{WebHdfs, WebHdfsError};

pub use yarn_client::webhdfs::{FileStatus, FileType};

use super::private_fs::Unsafe;
use super::{StagingOptions, REMOVE_TIMEOUT};

/// What a staging file system call returns: boxed, so that the trait stays usable as
/// `dyn StagingFs` (no `async_trait` crate needed).
pub type Fut<'a, T> = Pin<Box<dyn Future<Output = Result<T, StagingError>> + Send + 'a>>;

/// The current WebHDFS credentials, asked again for every call (the AM's HDFS delegation
/// token is refreshed on long apps); `None`: `user.name` (no security).
pub type HttpAuthSource = Arc<dyn Fn() -> Option<HttpAuth> + Send + Sync>;

/// Credentials that never change (the submitter's, or none).
pub fn fixed_auth(auth: Option<HttpAuth>) -> HttpAuthSource {
    Arc::new(move || auth.clone())
}

/// What failed in the staging file system, naming the path.
#[derive(Debug, thiserror::Error)]
pub enum StagingError {
    /// Why an HDFS staging folder is not used (audit L3). HDFS's MKDIRS answers `true` for a
    /// folder that already exists and leaves its owner and mode alone, so with a shared
    /// `--staging-dir` another user could create `<root>/<app-id>` first (app ids are
    /// predictable) and read or replace what we stage there, the keytab included.
    #[error(
        "refusing staging folder {path} on HDFS: it is {what}, expected a folder owned by \
         {user} with mode {mode} (did another user create it first? remove it or \
         choose another --staging-dir)"
    )]
    NotOurs {
        path: String,
        user: String,
        /// The mode it should have ([`super::HDFS_DIR_MODE`], or
        /// [`super::HDFS_PUBLIC_DIR_MODE`]).
        mode: &'static str,
        /// What the NameNode reported, e.g. `a folder owned by mallory with mode 777`.
        what: String,
    },
    /// A local path that is not safe to use (see [`super::private_fs`]).
    #[error(transparent)]
    Unsafe(#[from] Unsafe),
    /// A local file system call.
    #[error("{what} {path}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A WebHDFS call.
    #[error("{what} {path} through WebHDFS at {url}")]
    Webhdfs {
        what: &'static str,
        path: String,
        url: String,
        /// Boxed: the error is large, and every staging call returns it.
        #[source]
        source: Box<WebHdfsError>,
    },
    /// No `hdfs://` authority for the URLs YARN localises.
    #[error(
        "the NameNode at {url} did not name its RPC address (no namenoderpcaddress in its \
         DataNode URLs); pass --hdfs-uri hdfs://HOST:PORT"
    )]
    NoRpcAddress { url: String },
    /// Something this back end does not do (a caller checks the capability first).
    #[error("{what} {path}: not possible on {place}")]
    Unsupported {
        what: &'static str,
        path: String,
        place: &'static str,
    },
}

/// Who may read a folder or file staging makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readers {
    /// Its owner alone (and the NodeManagers, which localise as the application's user).
    Owner,
    /// Every user: a PUBLIC resource, localised once per node for all (`--public`).
    Everyone,
}

/// What became of an append when it was handed to an [`Appender`].
#[derive(Debug)]
pub enum Handed {
    /// In the back end's queue; the `done` sender hears when it is durable.
    Queued,
    /// Done with at once; whether it is durable.
    Written(bool),
}

/// A file open for appending records (the job journal).
pub trait Appender: Send {
    /// Hands `data` over. `done` hears when it is durable (a queued append); an append done
    /// at once says so in [`Handed::Written`] instead.
    fn append(&mut self, data: String, done: Option<oneshot::Sender<()>>) -> Handed;
    /// Stops writing: the folder is about to be removed, so an append still in flight would
    /// race the removal.
    fn abandon(self: Box<Self>);
}

/// A folder tree staging writes to and reads from (see the module's documentation).
pub trait StagingFs: Send + Sync {
    /// The back end, for messages: `the local disk`, `HDFS`.
    fn name(&self) -> &'static str;
    /// For messages: where `path` is.
    fn describe(&self, path: &str) -> String;
    /// The folder `dir` as the spec carries it to the AM and the executors.
    fn locate(&self, dir: &str) -> StagingDir;
    /// The WebHDFS client on HDFS (delegation tokens, input listing and references to HDFS
    /// files use the same client and authentication).
    fn webhdfs(&self) -> Option<&WebHdfs>;
    /// Whether files shipped by many apps are kept once, content-addressed below the root
    /// and reused across apps and users ([`super::cache`]): on HDFS. A local staging
    /// folder is private to its user and its host, so each app gets its own copies.
    fn keeps_shared_copies(&self) -> bool;
    /// Whether a log must go to one file per writer: an HDFS file whose writer died cannot
    /// be appended to until the NameNode recovers its lease; a local one can at once.
    fn one_writer_per_file(&self) -> bool;

    /// A folder of ours with the mode `readers` gives, checked to be ours: locally a new one
    /// (`mkdir` itself; anything already there is refused), on HDFS made or found, then
    /// checked (MKDIRS leaves an existing folder's owner and mode alone).
    fn own_dir<'a>(&'a self, path: &'a str, readers: Readers) -> Fut<'a, ()>;
    /// A folder below one of ours, made if missing: locally it must then be our real
    /// private folder; on HDFS it gets the mode `readers` gives when made.
    fn sub_dir<'a>(&'a self, path: &'a str, readers: Readers) -> Fut<'a, ()>;
    /// Copies the local file `src` to `path` (a program stays executable); the bytes sent.
    fn put_file<'a>(&'a self, src: &'a Path, path: &'a str, readers: Readers) -> Fut<'a, u64>;
    /// Writes `data` to `path`, for its owner alone; the bytes sent.
    fn put_bytes<'a>(&'a self, path: &'a str, data: Vec<u8>) -> Fut<'a, u64>;
    /// Replaces `path` with `data` at once for readers: written beside it, then renamed
    /// over it.
    fn replace<'a>(&'a self, path: &'a str, data: Vec<u8>) -> Fut<'a, ()>;
    /// Moves `from` to `to` unless something is at `to` already (then `false`).
    fn rename<'a>(&'a self, from: &'a str, to: &'a str) -> Fut<'a, bool>;
    /// What is at `path`; `None` when nothing is.
    fn status<'a>(&'a self, path: &'a str) -> Fut<'a, Option<FileStatus>>;
    /// The whole file at `path`; `None` when nothing is there.
    fn read_to_string<'a>(&'a self, path: &'a str) -> Fut<'a, Option<String>>;
    /// Removes the file `path`.
    fn remove_file<'a>(&'a self, path: &'a str) -> Fut<'a, ()>;
    /// Removes our folder `path` and everything in it; `false` when it was already gone.
    fn remove_dir<'a>(&'a self, path: &'a str) -> Fut<'a, bool>;
    /// The URL YARN localises `path` from (`file://` or `hdfs://`).
    fn resource_url<'a>(&'a self, path: &'a str) -> Fut<'a, String>;
    /// Opens `path` for appending after its first `keep` bytes (a torn tail is dropped;
    /// a file that is not there is created, for its owner alone). `label` names the file in
    /// logs (`the job journal`).
    fn open_appender<'a>(
        &'a self,
        path: &'a str,
        keep: u64,
        label: &'static str,
    ) -> Fut<'a, Box<dyn Appender>>;
}

/// Joins a folder and a name with exactly one `/`.
pub fn join(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

pub use yarn_am_wire::staged::StagingDir;

/// Removes an application's staging folder and everything in it. Never fails: a leftover
/// folder is worth a warning, not a failed application. A folder that is already gone is
/// fine (the AM and `submit --wait` may both try). `auth` is how to authenticate to WebHDFS
/// (SPNEGO for the submitter, the HDFS delegation token in the AM); `None` sends `user.name`.
pub async fn remove_folder(dir: &StagingDir, auth: Option<&HttpAuth>) {
    let folder = match StagingFolder::reach(dir, REMOVE_TIMEOUT, fixed_auth(auth.cloned())) {
        Ok(f) => f,
        Err(e) => {
            warn!("could not remove staging folder {}: {e:#}", dir.describe());
            return;
        }
    };
    match folder.fs.remove_dir(&folder.path).await {
        Ok(true) => info!(
            staging = %dir.describe(),
            "staging folder removed from {}",
            folder.fs.name()
        ),
        Ok(false) => {}
        Err(e) => warn!(
            "not removing staging folder {}: {:#}",
            dir.describe(),
            anyhow::Error::from(e)
        ),
    }
}

/// An application's staging folder, reached: its back end and its path there.
pub struct StagingFolder {
    pub fs: Arc<dyn StagingFs>,
    pub path: String,
}

impl StagingFolder {
    /// The back end serving `dir`; WebHDFS calls authenticate with what `auth` gives at the
    /// time and give up after `timeout`.
    pub fn reach(
        dir: &StagingDir,
        timeout: Duration,
        auth: HttpAuthSource,
    ) -> anyhow::Result<StagingFolder> {
        Ok(match dir {
            StagingDir::Local { path } => StagingFolder {
                fs: Arc::new(local::LocalFs),
                path: path.clone(),
            },
            StagingDir::Webhdfs { url, user, path } => StagingFolder {
                fs: Arc::new(
                    webhdfs::WebHdfsFs::reach(url, user, timeout, auth)
                        .with_context(|| format!("setting up the WebHDFS client for {url}"))?,
                ),
                path: path.trim_end_matches('/').to_string(),
            },
        })
    }
}

/// Opens the staging root the submitter's flags name (on HDFS, the user's home folder's
/// `.yarn-am-staging` when none is given), creating it: the back end and the root's
/// absolute path.
pub async fn open_root(opts: &StagingOptions) -> anyhow::Result<(Arc<dyn StagingFs>, String)> {
    Ok(match &opts.webhdfs {
        None => {
            let root = local::open_root(opts.root.as_deref())?;
            (Arc::new(local::LocalFs), root)
        }
        Some(address) => {
            let (fs, root) = webhdfs::WebHdfsFs::open_root(address, opts).await?;
            (Arc::new(fs), root)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_dirs_round_trip_with_a_kind_tag() {
        for d in [
            StagingDir::Local {
                path: "/tmp/yarn-am-staging/application_1_0001".into(),
            },
            StagingDir::Webhdfs {
                url: "http://rm:9870".into(),
                user: "alice".into(),
                path: "/user/alice/.yarn-am-staging/application_1_0001".into(),
            },
        ] {
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(serde_json::from_str::<StagingDir>(&json).unwrap(), d);
        }
        let v: serde_json::Value =
            serde_json::to_value(StagingDir::Local { path: "/x".into() }).unwrap();
        assert_eq!(v["kind"], "local");
        let err = serde_json::from_str::<StagingDir>(r#"{"kind":"local","path":"/x","extra":1}"#)
            .unwrap_err();
        assert!(err.to_string().contains("extra"), "{err}");
    }
}
