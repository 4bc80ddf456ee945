//! What staging hands YARN: a staged file as a local resource of a container.

use serde::{Deserialize, Serialize};
use yarn_client::rest::LocalResource;

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
    fn is_file(&self) -> bool {
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
    fn is_application(&self) -> bool {
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
