//! Staging: where an application's files (the yarn-am binary, the spec, `--file`s) wait for
//! the NodeManagers to localise them, and how that folder is removed when the app ends.
//!
//! One folder per application, `<root>/<app-id>`, on one of two back ends behind one
//! staging file system ([`fs`]):
//!
//! - **local** (`file://` URLs): a folder on a file system every NodeManager sees (a
//!   single-host cluster, or a shared mount). Default root `/tmp/yarn-am-staging`.
//! - **WebHDFS** (`hdfs://` URLs): a folder on HDFS, written and removed over the
//!   NameNode's HTTP API, so a submitter needs no Hadoop jars or HDFS RPC. The NMs read the
//!   files with their own HDFS client. Default root `<home>/.yarn-am-staging`, where home is
//!   what the NameNode says (`/user/<user>`).
//!
//! Files are copied, never referenced in place: YARN refuses a resource whose size or
//! modification time changed since submission, so a rebuild during the run must not touch
//! what YARN will fetch. Size and mtime are read back from the copy (`stat`, or
//! GETFILESTATUS) because that is what the NM compares with.
//!
//! A local folder is private (see [`fs::local`]), so the NodeManagers must read it as the
//! submitting user: true where they run as that user (a single-user cluster like the test
//! cluster) or localise as the application's user (secure clusters); a cluster that
//! localises as another user (LinuxContainerExecutor's non-secure `nobody`) must stage on
//! HDFS.
//!
//! The submitter opens a [`StagingRoot`] and works with a [`Stager`] in the app's folder;
//! the AM only needs to remove the folder, so the spec carries the serialisable
//! [`StagingDir`].

pub mod cache;
pub mod diagnose;
pub mod fs;
pub mod private_fs;
mod public;
mod resource;
mod root;
mod stager;

use std::time::Duration;

use yarn_client::http_auth::HttpAuth;

pub use fs::{remove_folder, StagingDir, StagingError, StagingFolder};
pub use resource::{ResourceKind, StagedFile, Visibility};
pub use root::StagingRoot;
pub use stager::Stager;

/// Default staging root on the local back end.
pub const DEFAULT_LOCAL_ROOT: &str = "/tmp/yarn-am-staging";
/// Default staging root on HDFS, below the user's home folder.
pub const HDFS_ROOT_NAME: &str = ".yarn-am-staging";
/// How long removing the folder may take at the end of an app. Short: after SIGTERM the
/// NodeManager kills the AM soon (`yarn.nodemanager.sleep-delay-before-sigkill.ms`).
pub const REMOVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Mode of an application's folder on HDFS: only its owner (and the NodeManagers, which
/// localise as the application's user) read it, like Spark's `.sparkStaging` folders.
pub const HDFS_DIR_MODE: &str = "700";
/// Mode of a file staged on HDFS (the spec, a keytab, `--file`s, the journal): the owner's
/// alone, whatever the folder's mode, instead of WebHDFS's world-readable default 644.
pub const HDFS_FILE_MODE: &str = "600";
/// Mode of an executable staged on HDFS: the NodeManager's `FSDownload` keeps the owner's
/// execute bit when it localises a file, so the binary needs it.
pub const HDFS_EXEC_MODE: &str = "700";

/// Mode of a folder of the PUBLIC area (`<root>/.public` and its digest folders): the
/// NodeManager localises a PUBLIC resource as itself, into one cache for every user, and
/// only if every folder above the file lets others in (`FSDownload.isPublic`).
pub const HDFS_PUBLIC_DIR_MODE: &str = "755";
/// Mode of a PUBLIC file: others must read it (`FSDownload.isPublic`).
pub const HDFS_PUBLIC_FILE_MODE: &str = "644";
/// Mode of a PUBLIC executable (the owner's execute bit survives localisation).
pub const HDFS_PUBLIC_EXEC_MODE: &str = "755";

/// Where and how to stage, from the command line.
pub struct StagingOptions {
    /// The NameNode's web address; `None` stages locally.
    pub webhdfs: Option<String>,
    /// `hdfs://host:port` for the local-resource URLs (default: from the NameNode).
    pub hdfs_uri: Option<String>,
    /// Staging root; the app's folder is `<root>/<app-id>`.
    pub root: Option<String>,
    pub user: String,
    /// How to authenticate to WebHDFS (`user.name` on an insecure cluster).
    pub auth: HttpAuth,
    pub timeout: Duration,
}
