//! Staging: where an application's files (the yarn-am binary, the spec, `--file`s) wait for
//! the NodeManagers to localise them, and how that folder is removed when the app ends.
//!
//! One folder per application, `<root>/<app-id>`, on one of two back ends:
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
//! A local folder is private: created 0700 by `mkdir` itself (a path already there, a
//! planted link included, is refused), files 0600 (0700 for the binary), in a root that is
//! a real folder only we can change or a sticky one like `/tmp`; it is removed only while
//! it is still our real folder (see [`crate::staging::private_fs`]). So the NodeManagers must read it
//! as the submitting user: true where they run as that user (a single-user cluster like the
//! test cluster) or localise as the application's user (secure clusters); a cluster that
//! localises as another user (LinuxContainerExecutor's non-secure `nobody`) must stage on
//! HDFS.
//!
//! The submitter works with a [`Stager`]; the AM only needs to remove the folder, so the
//! spec carries the serialisable [`StagingDir`].

pub mod cache;
pub mod diagnose;
pub mod private_fs;

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use tracing::{info, warn};
use yarn_client::http_auth::HttpAuth;
use yarn_client::rest::LocalResource;
use yarn_client::webhdfs::{Created, FileType, WebHdfs};

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

/// Why an HDFS staging folder is not used (audit L3). HDFS's MKDIRS answers `true` for a
/// folder that already exists and leaves its owner and mode alone, so with a shared
/// `--staging-dir` another user could create `<root>/<app-id>` first (app ids are
/// predictable) and read or replace what we stage there, the keytab included.
#[derive(Debug, thiserror::Error)]
pub enum StagingError {
    #[error(
        "refusing staging folder {path} on HDFS: it is {what}, expected a folder owned by \
         {user} with mode {mode} (did another user create it first? remove it or \
         choose another --staging-dir)"
    )]
    NotOurs {
        path: String,
        user: String,
        /// The mode it should have ([`HDFS_DIR_MODE`], or [`HDFS_PUBLIC_DIR_MODE`]).
        mode: &'static str,
        /// What the NameNode reported, e.g. `a folder owned by mallory with mode 777`.
        what: String,
    },
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

/// An application's staging folder as the AM (and `submit --wait`) needs to know it to
/// remove it. Serialised into the spec file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum StagingDir {
    /// A folder on a file system every NodeManager sees.
    Local { path: String },
    /// A folder on HDFS, removed through WebHDFS at `url` as `user`.
    Webhdfs {
        url: String,
        user: String,
        path: String,
    },
}

impl StagingDir {
    /// Removes the folder and everything in it. Never fails: a leftover folder is worth a
    /// warning, not a failed application. A folder that is already gone is fine (the AM and
    /// `submit --wait` may both try). `auth` is how to authenticate to WebHDFS (SPNEGO for
    /// the submitter, the HDFS delegation token in the AM); `None` sends `user.name`.
    pub async fn remove_with(&self, auth: Option<&HttpAuth>) {
        match self {
            StagingDir::Local { path } => match private_fs::remove_private_dir(Path::new(path)) {
                Ok(true) => info!(%path, "staging folder removed"),
                Ok(false) => {}
                Err(e) => warn!("not removing staging folder {path}: {e}"),
            },
            StagingDir::Webhdfs { url, user, path } => {
                let client = match WebHdfs::new(url, user, REMOVE_TIMEOUT) {
                    Ok(c) => match auth {
                        Some(a) => c.with_auth(a.clone()),
                        None => c,
                    },
                    Err(e) => {
                        warn!("could not remove staging folder {path} on HDFS: {e}");
                        return;
                    }
                };
                match client.delete(path, true).await {
                    Ok(true) => info!(%path, webhdfs = %url, "staging folder removed from HDFS"),
                    Ok(false) => {}
                    Err(e) => warn!("could not remove staging folder {path} on HDFS: {e}"),
                }
            }
        }
    }

    /// For messages: where the folder is.
    pub fn describe(&self) -> String {
        match self {
            StagingDir::Local { path } => path.clone(),
            StagingDir::Webhdfs { url, path, .. } => format!("{path} on HDFS (WebHDFS {url})"),
        }
    }
}

/// The submitter's side of staging: creates the folder and copies files into it.
pub enum Stager {
    Local {
        dir: PathBuf,
    },
    Webhdfs {
        client: WebHdfs,
        dir: String,
        /// `hdfs://host:port` the NMs must read from: `--hdfs-uri`, else learned from the
        /// NameNode on the first upload.
        hdfs_uri: Option<String>,
        /// `<root>/.cache`, the content-addressed files ([`cache`]).
        cache: String,
        /// Whether the cache folder was made and checked to be ours in this submit.
        cache_ready: bool,
        /// `<root>/.public`, the content-addressed PUBLIC files ([`cache::PUBLIC_DIR_NAME`]).
        public: String,
        /// Whether the public folder was made and checked (ours, 755, reachable by all).
        public_ready: bool,
    },
}

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

/// Joins an HDFS folder and a name with exactly one `/`.
fn hdfs_join(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

/// Checks `--hdfs-uri` and returns it without a trailing `/`.
fn parse_hdfs_uri(uri: &str) -> anyhow::Result<String> {
    let u = uri.trim().trim_end_matches('/');
    match u.split_once("://") {
        Some((scheme, authority))
            if !scheme.is_empty() && !authority.is_empty() && !authority.contains('/') =>
        {
            Ok(u.to_string())
        }
        _ => {
            bail!("--hdfs-uri wants SCHEME://HOST[:PORT] (e.g. hdfs://namenode:8020), got {uri:?}")
        }
    }
}

/// A staging root that exists and is writable; [`StagingRoot::app_folder`] makes the
/// per-application folder. Opened before the RM is asked for an application id, so a wrong
/// or unreachable WebHDFS address fails the submission before anything is created.
pub enum StagingRoot {
    Local(PathBuf),
    Webhdfs {
        client: WebHdfs,
        root: String,
        hdfs_uri: Option<String>,
    },
}

impl StagingRoot {
    /// Resolves the root (on HDFS, the user's home folder when none is given) and creates it.
    pub async fn open(opts: &StagingOptions) -> anyhow::Result<StagingRoot> {
        let Some(address) = &opts.webhdfs else {
            let root = Path::new(opts.root.as_deref().unwrap_or(DEFAULT_LOCAL_ROOT));
            private_fs::open_parent(root).context("the local staging root is not safe to use")?;
            // Absolute: the AM removes the app's folder from another working directory.
            let root = std::fs::canonicalize(root)
                .with_context(|| format!("resolving staging root {}", root.display()))?;
            return Ok(StagingRoot::Local(root));
        };
        let hdfs_uri = opts.hdfs_uri.as_deref().map(parse_hdfs_uri).transpose()?;
        let client = WebHdfs::new(address, &opts.user, opts.timeout)
            .with_context(|| format!("setting up the WebHDFS client for {address}"))?
            .with_auth(opts.auth.clone());
        let root = match &opts.root {
            Some(r) => r.clone(),
            None => {
                let home = client.home_directory().await.with_context(|| {
                    format!(
                        "asking the NameNode at {} for the home folder of {}",
                        client.base_url(),
                        opts.user
                    )
                })?;
                hdfs_join(&home, HDFS_ROOT_NAME)
            }
        };
        if !root.starts_with('/') {
            bail!("--staging-dir must be an absolute HDFS path with --webhdfs, got {root:?}");
        }
        // The root keeps the server's default mode: it may be shared, and on a fresh cluster
        // MKDIRS also creates /user. Each app's own folder is private (see app_folder).
        client.mkdirs(&root, None).await.with_context(|| {
            format!(
                "creating staging root {root} through WebHDFS at {}",
                client.base_url()
            )
        })?;
        Ok(StagingRoot::Webhdfs {
            client,
            root,
            hdfs_uri,
        })
    }

    /// The WebHDFS client when staging on HDFS (input listing uses the same client and
    /// authentication).
    pub fn webhdfs(&self) -> Option<&WebHdfs> {
        match self {
            StagingRoot::Webhdfs { client, .. } => Some(client),
            StagingRoot::Local(_) => None,
        }
    }

    /// Creates `<root>/<app_id>`.
    pub async fn app_folder(self, app_id: &str) -> anyhow::Result<Stager> {
        match self {
            StagingRoot::Local(root) => {
                let dir = root.join(app_id);
                private_fs::create_private_dir(&dir)
                    .context("creating the application's staging folder")?;
                Ok(Stager::Local { dir })
            }
            StagingRoot::Webhdfs {
                client,
                root,
                hdfs_uri,
            } => {
                let dir = hdfs_join(&root, app_id);
                client
                    .mkdirs(&dir, Some(HDFS_DIR_MODE))
                    .await
                    .with_context(|| {
                        format!(
                            "creating staging folder {dir} through WebHDFS at {}",
                            client.base_url()
                        )
                    })?;
                check_ours(&client, &dir, HDFS_DIR_MODE).await?;
                info!(%dir, webhdfs = %client.base_url(), "staging on HDFS");
                Ok(Stager::Webhdfs {
                    client,
                    dir,
                    hdfs_uri,
                    cache: hdfs_join(&root, cache::CACHE_DIR_NAME),
                    cache_ready: false,
                    public: hdfs_join(&root, cache::PUBLIC_DIR_NAME),
                    public_ready: false,
                })
            }
        }
    }
}

/// Checks that the HDFS folder `dir` is a folder we own with mode `mode` (see
/// [`StagingError`]). Who "we" are is the NameNode's view (GETHOMEDIRECTORY ends in the
/// short name it knows us by), so it holds for `user.name`, SPNEGO and delegation tokens
/// alike.
async fn check_ours(client: &WebHdfs, dir: &str, mode: &'static str) -> anyhow::Result<()> {
    let ask = || {
        format!(
            "checking staging folder {dir} through WebHDFS at {}",
            client.base_url()
        )
    };
    let home = client.home_directory().await.with_context(ask)?;
    let user = home
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let status = client.status(dir).await.with_context(ask)?;
    let kind = match status.kind {
        FileType::Directory => "a folder",
        FileType::File => "a file",
        FileType::Symlink => "a link",
    };
    if status.kind != FileType::Directory
        || user.is_empty()
        || status.owner != user
        || status.permission != mode
    {
        return Err(StagingError::NotOurs {
            path: dir.to_string(),
            user: user.to_string(),
            mode,
            what: format!(
                "{kind} owned by {} with mode {}",
                status.owner, status.permission
            ),
        }
        .into());
    }
    Ok(())
}

/// What keeps the NodeManager from localising the HDFS file `path` as PUBLIC, as its
/// `FSDownload.isPublic` decides: the file must be readable by others and every folder
/// above it, `/` included, searchable (`x`) by others. `modes` are the octal permissions
/// WebHDFS reports, the file's first, then its folders from the nearest up to `/`.
/// `None` when all is well.
fn public_refusal(path: &str, modes: &[(String, String)]) -> Option<String> {
    let others = |m: &str| u32::from_str_radix(m, 8).map(|v| v & 0o7).unwrap_or(0);
    let (file, file_mode) = modes.first()?;
    if others(file_mode) & 0o4 == 0 {
        return Some(format!(
            "{file} has mode {file_mode}: others cannot read it, so a NodeManager refuses it \
             as a PUBLIC resource (fix: hdfs dfs -chmod o+r {file})"
        ));
    }
    for (dir, mode) in &modes[1..] {
        if others(mode) & 0o1 == 0 {
            return Some(format!(
                "{dir} has mode {mode}: others cannot enter it, so a NodeManager refuses \
                 {path} below it as a PUBLIC resource (fix: hdfs dfs -chmod o+x {dir}, or \
                 a --staging-dir whose folders all allow o+x)"
            ));
        }
    }
    None
}

/// The folders above the absolute HDFS path `path`, nearest first, `/` last.
fn ancestors(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = path.trim_end_matches('/');
    while let Some((parent, _)) = p.rsplit_once('/') {
        out.push(if parent.is_empty() { "/" } else { parent }.to_string());
        p = parent;
    }
    out
}

/// Fails with what to fix when the NodeManager would refuse `path` as a PUBLIC resource
/// ([`public_refusal`]): one GETFILESTATUS per folder above it.
async fn check_public(client: &WebHdfs, path: &str) -> anyhow::Result<()> {
    let mut modes = Vec::new();
    for p in std::iter::once(path.to_string()).chain(ancestors(path)) {
        let st = client
            .status(&p)
            .await
            .with_context(|| format!("reading the permissions of {p} through WebHDFS"))?;
        modes.push((p, st.permission));
    }
    match public_refusal(path, &modes) {
        Some(why) => bail!(why),
        None => Ok(()),
    }
}

impl Stager {
    /// The WebHDFS client when staging on HDFS.
    pub fn webhdfs(&self) -> Option<&WebHdfs> {
        match self {
            Stager::Webhdfs { client, .. } => Some(client),
            Stager::Local { .. } => None,
        }
    }

    /// Copies the local file `src` into the folder as `name`.
    pub async fn put_file(&mut self, src: &Path, name: &str) -> anyhow::Result<StagedFile> {
        match self {
            Stager::Local { dir } => stage_local_copy(src, &dir.join(name)),
            Stager::Webhdfs { dir, .. } => {
                let path = hdfs_join(dir, name);
                let created = self.put_at(src, &path).await?;
                self.describe_upload(&path, created).await
            }
        }
    }

    /// Ships the local file `src` as `name` through the content-addressed cache ([`cache`])
    /// when staging on HDFS: uploaded only when the cache has no file with its digest, and
    /// declared PRIVATE so the NodeManagers reuse their copy across this user's apps. Locally
    /// it is copied into the app's folder. Returns the file and whether bytes were sent.
    ///
    /// The staged copy keeps `src`'s own file name (`name` is only the link the container
    /// sees): the NodeManager picks how to unpack an archive by that name's extension.
    pub async fn put_shared(
        &mut self,
        src: &Path,
        name: &str,
        kind: ResourceKind,
    ) -> anyhow::Result<(StagedFile, bool)> {
        let stored = stored_name(src)?;
        let Stager::Webhdfs {
            client,
            cache,
            cache_ready,
            ..
        } = self
        else {
            let Stager::Local { dir } = self else {
                unreachable!("not WebHDFS")
            };
            // A link name with folders (`__spark_libs__/a.jar`): its copy goes into the same
            // folders of the app's.
            if let Some((parent, _)) = name.rsplit_once('/') {
                let parent = match kind {
                    ResourceKind::File => dir.join(parent),
                    ResourceKind::Archive => dir.join(format!("archive-{parent}")),
                };
                private_fs::ensure_private_dir(&parent)
                    .with_context(|| format!("staging {}", src.display()))?;
            }
            let mut staged = match kind {
                ResourceKind::File => self.put_file(src, name).await?,
                ResourceKind::Archive => {
                    // A folder of its own per link name keeps two archives of one file
                    // name apart.
                    let Stager::Local { dir } = self else {
                        unreachable!("not WebHDFS")
                    };
                    let folder = dir.join(format!("archive-{name}"));
                    private_fs::create_private_dir(&folder)
                        .with_context(|| format!("staging archive {}", src.display()))?;
                    stage_local_copy(src, &folder.join(&stored))?
                }
            };
            staged.kind = kind;
            return Ok((staged, true));
        };
        if !*cache_ready {
            client
                .mkdirs(cache, Some(HDFS_DIR_MODE))
                .await
                .with_context(|| format!("creating the staging cache {cache} through WebHDFS"))?;
            check_ours(client, cache, HDFS_DIR_MODE).await?;
            *cache_ready = true;
        }
        let area = cache.clone();
        let (path, len, uploaded) = self.put_addressed(src, &stored, &area, false).await?;
        let mut staged = self.describe(&path, len).await?;
        staged.kind = kind;
        staged.visibility = Visibility::Private;
        info!(file = %src.display(), %path, uploaded, "staged through the cache");
        Ok((staged, uploaded))
    }

    /// Ships the local file `src` as a PUBLIC resource (`--public`): through the
    /// content-addressed area `<root>/.public/<sha256>/<file name>` (folders 755, the file 644
    /// or 755), which the NodeManagers localise once per node for every app and user naming
    /// it. Only on HDFS: a local staging folder is private to its user. Fails, naming the
    /// folder and the fix, when a folder above the file does not let others in, since the
    /// NodeManager would then refuse the resource at localisation.
    pub async fn put_public(
        &mut self,
        src: &Path,
        kind: ResourceKind,
    ) -> anyhow::Result<(StagedFile, bool)> {
        let stored = stored_name(src)?;
        let Stager::Webhdfs {
            client,
            public,
            public_ready,
            ..
        } = self
        else {
            bail!(
                "--public needs staging on HDFS (--webhdfs): a local staging folder is \
                 private to its user, and a NodeManager's public cache serves every user"
            );
        };
        if !*public_ready {
            client
                .mkdirs(public, Some(HDFS_PUBLIC_DIR_MODE))
                .await
                .with_context(|| {
                    format!("creating the public staging area {public} through WebHDFS")
                })?;
            check_ours(client, public, HDFS_PUBLIC_DIR_MODE).await?;
            *public_ready = true;
        }
        let area = public.clone();
        let (path, len, uploaded) = self.put_addressed(src, &stored, &area, true).await?;
        let Stager::Webhdfs { client, .. } = self else {
            unreachable!("matched above")
        };
        check_public(client, &path).await?;
        let mut staged = self.describe(&path, len).await?;
        staged.kind = kind;
        staged.visibility = Visibility::Public;
        info!(file = %src.display(), %path, uploaded, "staged as a public resource");
        Ok((staged, uploaded))
    }

    /// Puts `src` at `<area>/<sha256>/<stored>` unless a file is there already; returns the
    /// path, the length and whether bytes were sent. `public` gives the digest folder 755 and
    /// the file 644 (755 if executable) instead of the owner's alone.
    async fn put_addressed(
        &mut self,
        src: &Path,
        stored: &str,
        area: &str,
        public: bool,
    ) -> anyhow::Result<(String, u64, bool)> {
        let Stager::Webhdfs { client, dir, .. } = self else {
            unreachable!("only WebHDFS stagers have content-addressed areas")
        };
        let owned = src.to_path_buf();
        let digest = tokio::task::spawn_blocking(move || cache::file_digest(&owned))
            .await
            .context("hashing a file to stage")??;
        let len = std::fs::metadata(src)
            .with_context(|| format!("reading {} to stage it", src.display()))?
            .len();
        let path = cache::cached_path(area, &digest, stored);
        let uploaded = match cache::cached_length(client, &path).await? {
            Some(have) if have == len => false,
            Some(have) => bail!(
                "{path} in the staging cache has {have} bytes where {} has {len}: the cache \
                 holds a damaged copy; remove it (or {area}) and submit again",
                src.display()
            ),
            None => {
                if public {
                    // Made here with its mode: MKDIRS of the file's parent would give it
                    // the server's default.
                    let folder = hdfs_join(area, &digest);
                    client
                        .mkdirs(&folder, Some(HDFS_PUBLIC_DIR_MODE))
                        .await
                        .with_context(|| format!("creating {folder} through WebHDFS"))?;
                }
                // Written under a name no reader trusts, then renamed into place. Never over
                // a file already there: another submit of the same bytes may have won the
                // race, and its app's NodeManagers check the mtime it declared.
                let app = dir.rsplit('/').next().unwrap_or("upload").to_string();
                let tmp = format!("{path}.{app}.part");
                self.put_at_mode(src, &tmp, public).await?;
                let Stager::Webhdfs { client, .. } = self else {
                    unreachable!("matched above")
                };
                let moved = client
                    .rename(&tmp, &path)
                    .await
                    .with_context(|| format!("moving {tmp} to {path} in the staging cache"))?;
                if !moved {
                    client.delete(&tmp, false).await.ok();
                }
                moved
            }
        };
        Ok((path, len, uploaded))
    }

    /// A file already on HDFS, shipped by reference: its size and mtime read through
    /// WebHDFS (YARN compares them with the file at localisation). PRIVATE, so the
    /// NodeManagers reuse their copy across this user's apps, or PUBLIC (`--public`), checked
    /// first to be readable by all as the NodeManager will require.
    pub async fn reference_hdfs(
        &mut self,
        url: &str,
        path: &str,
        kind: ResourceKind,
        visibility: Visibility,
    ) -> anyhow::Result<StagedFile> {
        let Stager::Webhdfs { client, .. } = self else {
            bail!(
                "{url}: shipping a file from HDFS needs --webhdfs (yarn-am reads its size \
                 and time through it)"
            );
        };
        let status = client
            .status(path)
            .await
            .with_context(|| format!("reading the status of {url} through WebHDFS"))?;
        if status.kind != FileType::File {
            bail!("{url} is not a file on HDFS");
        }
        if visibility == Visibility::Public {
            check_public(client, path)
                .await
                .with_context(|| format!("--public {url}"))?;
        }
        Ok(StagedFile {
            url: url.to_string(),
            size: status.length,
            timestamp_ms: status.modification_time,
            kind,
            visibility,
        })
    }

    /// Uploads the local file `src` to the HDFS path `path` (its mode from `src`'s execute
    /// bit).
    async fn put_at(&mut self, src: &Path, path: &str) -> anyhow::Result<Created> {
        self.put_at_mode(src, path, false).await
    }

    /// [`Stager::put_at`], readable by all (644, or 755 if executable) when `public`.
    async fn put_at_mode(
        &mut self,
        src: &Path,
        path: &str,
        public: bool,
    ) -> anyhow::Result<Created> {
        let Stager::Webhdfs { client, .. } = self else {
            unreachable!("only WebHDFS stagers upload to a path")
        };
        let executable = std::fs::metadata(src)
            .with_context(|| format!("reading {} to stage it", src.display()))?
            .permissions()
            .mode()
            & 0o100
            != 0;
        let mode = match (public, executable) {
            (false, true) => HDFS_EXEC_MODE,
            (false, false) => HDFS_FILE_MODE,
            (true, true) => HDFS_PUBLIC_EXEC_MODE,
            (true, false) => HDFS_PUBLIC_FILE_MODE,
        };
        client
            .create_from_file(path, src, true, Some(mode))
            .await
            .with_context(|| {
                format!(
                    "uploading {} to {path} through WebHDFS at {}",
                    src.display(),
                    client.base_url()
                )
            })
    }

    /// Writes `data` into the folder as `name`.
    pub async fn put_bytes(&mut self, name: &str, data: Vec<u8>) -> anyhow::Result<StagedFile> {
        match self {
            Stager::Local { dir } => {
                let dst = dir.join(name);
                create_private(&dst, 0o600)
                    .and_then(|mut f| f.write_all(&data))
                    .with_context(|| format!("writing {}", dst.display()))?;
                local_staged(&dst)
            }
            Stager::Webhdfs { client, dir, .. } => {
                let path = hdfs_join(dir, name);
                let created = client
                    .create(&path, data, true, Some(HDFS_FILE_MODE))
                    .await
                    .with_context(|| {
                        format!(
                            "uploading {name} to {path} through WebHDFS at {}",
                            client.base_url()
                        )
                    })?;
                self.describe_upload(&path, created).await
            }
        }
    }

    /// The `hdfs://` URL, size and mtime of a file just uploaded to `path`. Size and mtime
    /// are read back from the NameNode: YARN compares the NM's view with what we declare.
    async fn describe_upload(
        &mut self,
        path: &str,
        created: Created,
    ) -> anyhow::Result<StagedFile> {
        if let Stager::Webhdfs {
            client, hdfs_uri, ..
        } = self
        {
            if hdfs_uri.is_none() {
                let Some(nn) = created.namenode_rpc_address else {
                    bail!(
                        "the NameNode at {} did not name its RPC address (no \
                         namenoderpcaddress in {}); pass --hdfs-uri hdfs://HOST:PORT",
                        client.base_url(),
                        created.datanode_url
                    );
                };
                *hdfs_uri = Some(format!("hdfs://{nn}"));
            }
        }
        self.describe(path, created.bytes).await
    }

    /// The `hdfs://` URL, size and mtime of the file at `path`, which must hold `len` bytes.
    /// Size and mtime are read back from the NameNode: YARN compares the NM's view with what
    /// we declare. The NameNode's RPC address, when no upload named it yet, comes from a read
    /// request's DataNode URL.
    async fn describe(&mut self, path: &str, len: u64) -> anyhow::Result<StagedFile> {
        let Stager::Webhdfs {
            client, hdfs_uri, ..
        } = self
        else {
            unreachable!("only WebHDFS files are described here");
        };
        if hdfs_uri.is_none() {
            let nn = client
                .namenode_rpc_address(path)
                .await
                .with_context(|| format!("asking the NameNode how to name {path} for YARN"))?;
            let Some(nn) = nn else {
                bail!(
                    "the NameNode at {} did not name its RPC address (no namenoderpcaddress \
                     in its DataNode URLs); pass --hdfs-uri hdfs://HOST:PORT",
                    client.base_url()
                );
            };
            *hdfs_uri = Some(format!("hdfs://{nn}"));
        }
        let status = client
            .status(path)
            .await
            .with_context(|| format!("reading back {path} through WebHDFS"))?;
        if status.length != len {
            bail!("{path} on HDFS has {} bytes, expected {len}", status.length);
        }
        Ok(StagedFile {
            url: format!(
                "{}{}",
                hdfs_uri.as_deref().unwrap_or_default(),
                url_path(path)
            ),
            size: status.length,
            timestamp_ms: status.modification_time,
            kind: ResourceKind::File,
            visibility: Visibility::Application,
        })
    }

    /// What the AM needs to remove the folder.
    pub fn dir(&self) -> StagingDir {
        match self {
            Stager::Local { dir } => StagingDir::Local {
                path: dir.display().to_string(),
            },
            Stager::Webhdfs { client, dir, .. } => StagingDir::Webhdfs {
                url: client.base_url().to_string(),
                user: client.user().to_string(),
                path: dir.clone(),
            },
        }
    }
}

/// A new file only we can read (`mode` 0600, or 0700 for a program); refuses an existing
/// path, a link included.
fn create_private(path: &Path, mode: u32) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
}

/// Copies `src` to the new file `dst`: 0700 if `src` is executable (the yarn-am binary the
/// containers run), else 0600.
fn copy_private(src: &Path, dst: &Path) -> std::io::Result<()> {
    let mut from = std::fs::File::open(src)?;
    let executable = from.metadata()?.permissions().mode() & 0o111 != 0;
    let mut to = create_private(dst, if executable { 0o700 } else { 0o600 })?;
    std::io::copy(&mut from, &mut to)?;
    Ok(())
}

/// The name a staged copy keeps: `src`'s own file name, since the NodeManager picks how to
/// unpack an archive by its extension (the link name the container sees may differ).
fn stored_name(src: &Path) -> anyhow::Result<String> {
    Ok(src
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{} has no file name", src.display()))?
        .to_string())
}

/// Copies `src` to the new private file `dst` (see [`copy_private`]) and describes it.
fn stage_local_copy(src: &Path, dst: &Path) -> anyhow::Result<StagedFile> {
    copy_private(src, dst)
        .with_context(|| format!("staging {} to {}", src.display(), dst.display()))?;
    local_staged(dst)
}

/// A staged local copy, described by its canonical `file://` URL, size and mtime.
fn local_staged(path: &Path) -> anyhow::Result<StagedFile> {
    let lr = LocalResource::local_file(path, "APPLICATION")
        .with_context(|| format!("reading back {}", path.display()))?;
    Ok(StagedFile {
        url: lr.resource,
        size: lr.size,
        timestamp_ms: lr.timestamp,
        kind: ResourceKind::File,
        visibility: Visibility::Application,
    })
}

/// An HDFS path as it appears in a URL: characters a URI path may not hold are escaped,
/// since YARN parses the resource as a `java.net.URI`.
fn url_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_run_from_the_parent_up_to_the_root() {
        assert_eq!(
            ancestors("/user/a/.yarn-am-staging/.public/ab/x.zip"),
            [
                "/user/a/.yarn-am-staging/.public/ab",
                "/user/a/.yarn-am-staging/.public",
                "/user/a/.yarn-am-staging",
                "/user/a",
                "/user",
                "/"
            ]
        );
        assert_eq!(ancestors("/x"), ["/"]);
    }

    #[test]
    fn a_public_file_needs_others_read_and_every_folder_above_others_x() {
        let modes = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(p, m)| (p.to_string(), m.to_string()))
                .collect()
        };
        let ok = modes(&[
            ("/s/.public/d/f", "644"),
            ("/s/.public/d", "755"),
            ("/", "1777"),
        ]);
        assert_eq!(public_refusal("/s/.public/d/f", &ok), None);
        // Others' execute bit alone (711) is enough for a folder, as for the NodeManager.
        let ok = modes(&[("/s/f", "604"), ("/s", "711"), ("/", "755")]);
        assert_eq!(public_refusal("/s/f", &ok), None);
        let unreadable = modes(&[("/s/f", "640"), ("/s", "755"), ("/", "755")]);
        let why = public_refusal("/s/f", &unreadable).unwrap();
        assert!(
            why.contains("/s/f has mode 640") && why.contains("chmod o+r /s/f"),
            "{why}"
        );
        let closed = modes(&[
            ("/u/a/s/f", "644"),
            ("/u/a/s", "755"),
            ("/u/a", "750"),
            ("/u", "755"),
        ]);
        let why = public_refusal("/u/a/s/f", &closed).unwrap();
        assert!(
            why.contains("/u/a has mode 750") && why.contains("chmod o+x /u/a"),
            "{why}"
        );
    }

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

    #[test]
    fn hdfs_paths_join_and_escape() {
        assert_eq!(hdfs_join("/user/a/", "x"), "/user/a/x");
        assert_eq!(hdfs_join("/user/a", "x"), "/user/a/x");
        assert_eq!(url_path("/user/a b/x%y"), "/user/a%20b/x%25y");
        assert_eq!(
            url_path("/user/root/.yarn-am-staging/f"),
            "/user/root/.yarn-am-staging/f"
        );
    }

    #[test]
    fn hdfs_uri_flag_is_checked() {
        assert_eq!(parse_hdfs_uri("hdfs://nn:8020/").unwrap(), "hdfs://nn:8020");
        assert_eq!(
            parse_hdfs_uri("hdfs://mycluster").unwrap(),
            "hdfs://mycluster"
        );
        assert!(parse_hdfs_uri("nn:8020").is_err());
        assert!(parse_hdfs_uri("hdfs://nn:8020/path").is_err());
    }

    #[tokio::test]
    async fn local_staging_copies_and_removes() {
        let root =
            std::env::temp_dir().join(format!("yarn-am-staging-test-{}", std::process::id()));
        let opts = StagingOptions {
            webhdfs: None,
            hdfs_uri: None,
            root: Some(root.display().to_string()),
            user: "u".into(),
            auth: HttpAuth::simple("u"),
            timeout: Duration::from_secs(5),
        };
        let mut s = StagingRoot::open(&opts)
            .await
            .unwrap()
            .app_folder("application_1_0001")
            .await
            .unwrap();
        let f = s.put_bytes("spec.json", b"{}".to_vec()).await.unwrap();
        assert!(f.url.starts_with("file:///"), "{}", f.url);
        assert_eq!(f.size, 2);
        let dir = s.dir();
        assert!(matches!(&dir, StagingDir::Local { path } if path.ends_with("application_1_0001")));
        dir.remove_with(None).await;
        assert!(!root.join("application_1_0001").exists());
        dir.remove_with(None).await; // already gone: no panic, no error
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    fn local_opts(root: &Path) -> StagingOptions {
        StagingOptions {
            webhdfs: None,
            hdfs_uri: None,
            root: Some(root.display().to_string()),
            user: "u".into(),
            timeout: Duration::from_secs(5),
            auth: HttpAuth::simple("u"),
        }
    }

    /// A scratch root under the system temp dir, fresh per test.
    fn scratch(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "yarn-am-staging-{name}-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        assert!(!p.exists());
        p
    }

    #[tokio::test]
    async fn local_staging_is_private() {
        let root = scratch("modes");
        let mut s = StagingRoot::open(&local_opts(&root))
            .await
            .unwrap()
            .app_folder("application_1_0003")
            .await
            .unwrap();
        assert_eq!(mode(&root), 0o700, "a root we create is ours alone");
        let Stager::Local { dir } = &s else { panic!() };
        let dir = dir.clone();
        assert_eq!(mode(&dir), 0o700);
        s.put_bytes("spec.json", b"{}".to_vec()).await.unwrap();
        assert_eq!(mode(&dir.join("spec.json")), 0o600);
        // The running binary stands in for yarn-am: it must stay executable.
        let exe = std::env::current_exe().unwrap();
        s.put_file(&exe, "yarn-am").await.unwrap();
        assert_eq!(mode(&dir.join("yarn-am")), 0o700);
        let data = root.join("data.txt");
        std::fs::write(&data, "x").unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o644)).unwrap();
        s.put_file(&data, "data.txt").await.unwrap();
        assert_eq!(mode(&dir.join("data.txt")), 0o600);
        // A name staged twice is refused rather than overwritten.
        let e = s.put_bytes("spec.json", b"{}".to_vec()).await.unwrap_err();
        assert!(format!("{e:#}").contains("spec.json"), "{e:#}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[tokio::test]
    async fn a_planted_app_folder_or_link_is_refused_and_never_removed() {
        let root = scratch("planted");
        let opts = local_opts(&root);
        StagingRoot::open(&opts).await.unwrap();
        // Someone else's folder, made ready for our next application.
        let victim = root.join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("precious"), "x").unwrap();
        std::os::unix::fs::symlink(&victim, root.join("application_1_0004")).unwrap();
        let e = StagingRoot::open(&opts)
            .await
            .unwrap()
            .app_folder("application_1_0004")
            .await
            .err()
            .unwrap();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("application_1_0004 already exists; refusing to use a folder"),
            "{msg}"
        );
        // Plain folders already there are refused the same way.
        std::fs::create_dir(root.join("application_1_0005")).unwrap();
        assert!(StagingRoot::open(&opts)
            .await
            .unwrap()
            .app_folder("application_1_0005")
            .await
            .is_err());
        // The AM asked to remove a folder that became a link leaves it (and its target).
        let dir = StagingDir::Local {
            path: root.join("application_1_0004").display().to_string(),
        };
        dir.remove_with(None).await;
        assert!(victim.join("precious").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[tokio::test]
    async fn an_unsafe_local_root_is_refused_naming_it() {
        let base = scratch("roots");
        std::fs::create_dir(&base).unwrap();
        let open = |root: PathBuf| async move {
            match StagingRoot::open(&local_opts(&root)).await {
                Ok(_) => String::new(),
                Err(e) => format!("{e:#}"),
            }
        };
        let shared = base.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let msg = open(shared.clone()).await;
        assert!(
            msg.contains(&format!(
                "{} can be changed by other users",
                shared.display()
            )),
            "{msg}"
        );
        let link = base.join("link");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        let msg = open(link.clone()).await;
        assert!(
            msg.contains(&format!("{} is a symbolic link", link.display())),
            "{msg}"
        );
        let file = base.join("file");
        std::fs::write(&file, "").unwrap();
        let msg = open(file.clone()).await;
        assert!(
            msg.contains(&format!("{} is not a folder", file.display())),
            "{msg}"
        );
        // Sticky and world-writable, like /tmp: fine.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(open(shared).await, "");
        std::fs::remove_dir_all(&base).unwrap();
    }
}

/// Audit L3 against a scripted NameNode: an app folder that someone else created is refused
/// before anything is staged, and staged files are created with mode 600.
#[cfg(test)]
mod hdfs_tests {
    use super::*;
    use yarn_client::test_http::{reply, serve, Seen};

    const APP: &str = "application_1_0001";

    /// A NameNode (and DataNode, same address) whose app folder has `owner` and `mode`.
    async fn namenode(owner: &'static str, mode: &'static str) -> (String, Seen) {
        serve("127.0.0.1", move |head| {
            let line = head.lines().next().unwrap_or_default();
            let host = head
                .lines()
                .find_map(|l| l.strip_prefix("host: "))
                .unwrap_or_default();
            let json = |body: String| reply("200 OK", "", &body);
            if line.contains("op=GETHOMEDIRECTORY") {
                json(r#"{"Path":"/user/alice"}"#.into())
            } else if line.contains("op=MKDIRS") {
                json(r#"{"boolean":true}"#.into())
            } else if line.contains("op=CREATE") && !line.contains("/dn/") {
                json(format!(
                    r#"{{"Location":"http://{host}/dn/f?op=CREATE&namenoderpcaddress=nn:8020"}}"#
                ))
            } else if line.contains("/dn/") {
                reply("201 Created", "", "")
            } else if line.contains(&format!("{APP}?op=GETFILESTATUS")) {
                json(format!(
                    r#"{{"FileStatus":{{"length":0,"modificationTime":1,"type":"DIRECTORY","owner":"{owner}","permission":"{mode}"}}}}"#
                ))
            } else if line.contains("op=GETFILESTATUS") {
                json(r#"{"FileStatus":{"length":1,"modificationTime":1,"type":"FILE","owner":"alice","permission":"600"}}"#.into())
            } else {
                reply("400 Bad Request", "", "{}")
            }
        })
        .await
    }

    fn opts(nn: &str) -> StagingOptions {
        StagingOptions {
            webhdfs: Some(nn.to_string()),
            hdfs_uri: Some("hdfs://nn:8020".into()),
            root: Some("/shared/staging".into()),
            user: "alice".into(),
            auth: HttpAuth::simple("alice"),
            timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn an_app_folder_created_by_someone_else_is_refused_before_staging() {
        for (owner, mode) in [("mallory", "700"), ("alice", "777"), ("alice", "755")] {
            let (nn, seen) = namenode(owner, mode).await;
            let root = StagingRoot::open(&opts(&nn)).await.unwrap();
            let e = match root.app_folder(APP).await {
                Err(e) => e,
                Ok(_) => panic!("a folder owned by {owner} with mode {mode} was accepted"),
            };
            let shown = format!("{e:#}");
            assert!(
                matches!(e.downcast_ref(), Some(StagingError::NotOurs { .. })),
                "{shown}"
            );
            assert!(
                shown.contains(&format!("owned by {owner} with mode {mode}")),
                "{shown}"
            );
            assert!(
                shown.contains("expected a folder owned by alice with mode 700"),
                "{shown}"
            );
            let heads = seen.lock().unwrap();
            assert!(!heads.iter().any(|h| h.contains("op=CREATE")), "{heads:?}");
        }
    }

    #[tokio::test]
    async fn our_folder_is_used_and_secrets_are_created_with_mode_600() {
        let (nn, seen) = namenode("alice", "700").await;
        let root = StagingRoot::open(&opts(&nn)).await.unwrap();
        let mut stager = root.app_folder(APP).await.unwrap();
        stager
            .put_bytes("yarn-am.keytab", b"k".to_vec())
            .await
            .unwrap();
        let heads = seen.lock().unwrap();
        let create = heads
            .iter()
            .find(|h| h.contains("yarn-am.keytab?op=CREATE"))
            .expect("a CREATE of the keytab");
        assert!(create.contains("&permission=600"), "{create}");
        let mkdirs = heads
            .iter()
            .find(|h| h.contains(&format!("{APP}?op=MKDIRS")));
        assert!(
            mkdirs.is_some_and(|h| h.contains("permission=700")),
            "{heads:?}"
        );
    }
}
