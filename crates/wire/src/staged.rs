//! Where an application's files are and how YARN fetches them: what the submitter tells the
//! AM (in the spec) and what the AM tells its executors (in their launch environment). The
//! staging layer does the I/O; these are its words on the wire.

use serde::{Deserialize, Serialize};
use yarn_client::rest::LocalResource;

/// An application's staging folder as the AM (and `submit --wait`) needs to know it to
/// reach it again. Serialised into the spec file: the choice of back end travels as its
/// `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum StagingDir {
    /// A folder on a file system every NodeManager sees.
    Local { path: String },
    /// A folder on HDFS, reached through WebHDFS at `url` as `user`.
    Webhdfs {
        url: String,
        user: String,
        path: String,
    },
}

impl StagingDir {
    /// For messages: where the folder is.
    pub fn describe(&self) -> String {
        match self {
            StagingDir::Local { path } => path.clone(),
            StagingDir::Webhdfs { url, path, .. } => format!("{path} on HDFS (WebHDFS {url})"),
        }
    }
}

/// A file YARN copies into a container; size and mtime must match what is on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagedFile {
    pub url: String,
    pub size: u64,
    pub timestamp_ms: u64,
    /// A file, or an archive the NodeManager unpacks into a folder of the resource's name.
    #[serde(default, skip_serializing_if = "ResourceKind::is_file")]
    pub kind: ResourceKind,
    /// Who may share the NodeManager's localised copy (see [`Visibility`]).
    #[serde(default, skip_serializing_if = "Visibility::is_application")]
    pub visibility: Visibility,
}

/// YARN's LocalResourceType, the two kinds `submit` ships.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    #[default]
    File,
    /// A zip, tar, tar.gz or jar the NodeManager unpacks (LocalResourceType ARCHIVE).
    Archive,
}

impl ResourceKind {
    pub fn is_file(&self) -> bool {
        *self == ResourceKind::File
    }

    fn as_yarn(self) -> &'static str {
        match self {
            ResourceKind::File => "FILE",
            ResourceKind::Archive => "ARCHIVE",
        }
    }
}

/// YARN's LocalResourceVisibility. The NodeManager keeps one localised copy per URL, size
/// and mtime for each scope: APPLICATION copies die with the app, PRIVATE ones are reused by
/// the same user's next apps on that node (what content-addressed files are for: a second
/// submit of the same binary localises nothing), PUBLIC ones by every user (the NodeManager
/// then requires the file and its folders to be world-readable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    #[default]
    Application,
    Private,
    Public,
}

impl Visibility {
    pub fn is_application(&self) -> bool {
        *self == Visibility::Application
    }

    fn as_yarn(self) -> &'static str {
        match self {
            Visibility::Application => "APPLICATION",
            Visibility::Private => "PRIVATE",
            Visibility::Public => "PUBLIC",
        }
    }
}

impl StagedFile {
    /// The file as a YARN local resource of a container (the AM's or an executor's).
    pub fn local_resource(&self) -> LocalResource {
        LocalResource {
            resource: self.url.clone(),
            kind: self.kind.as_yarn().into(),
            visibility: self.visibility.as_yarn().into(),
            size: self.size,
            timestamp: self.timestamp_ms,
        }
    }
}
