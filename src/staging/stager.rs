//! The submitter's side of staging: copies files into the application's folder, or through
//! the content-addressed cache and the PUBLIC area where the back end keeps shared copies
//! ([`super::cache`]), and describes each as YARN will check it.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use tracing::info;
use yarn_client::webhdfs::WebHdfs;

use super::cache;
use super::fs::{join, FileType, Readers, StagingFs};
use super::public::check_public;
use super::{ResourceKind, StagedFile, StagingDir, Visibility};

/// An application's staging folder, being filled.
pub struct Stager {
    fs: Arc<dyn StagingFs>,
    dir: String,
    /// `<root>/.cache`, the content-addressed files ([`cache`]).
    cache: String,
    /// Whether the cache folder was made and checked to be ours in this submit.
    cache_ready: bool,
    /// `<root>/.public`, the content-addressed PUBLIC files ([`cache::PUBLIC_DIR_NAME`]).
    public: String,
    /// Whether the public folder was made and checked (ours, 755, reachable by all).
    public_ready: bool,
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

impl Stager {
    pub(super) fn new(fs: Arc<dyn StagingFs>, dir: String, cache: String, public: String) -> Self {
        Stager {
            fs,
            dir,
            cache,
            cache_ready: false,
            public,
            public_ready: false,
        }
    }

    /// The WebHDFS client when staging on HDFS.
    pub fn webhdfs(&self) -> Option<&WebHdfs> {
        self.fs.webhdfs()
    }

    /// The application's folder.
    pub fn path(&self) -> &str {
        &self.dir
    }

    /// What the AM needs to remove the folder.
    pub fn dir(&self) -> StagingDir {
        self.fs.locate(&self.dir)
    }

    /// Copies the local file `src` into the folder as `name`.
    pub async fn put_file(&mut self, src: &Path, name: &str) -> anyhow::Result<StagedFile> {
        let path = join(&self.dir, name);
        self.copy_to(src, &path).await
    }

    /// Copies the local file `src` to `path` and describes it.
    async fn copy_to(&self, src: &Path, path: &str) -> anyhow::Result<StagedFile> {
        let len = self
            .fs
            .put_file(src, path, Readers::Owner)
            .await
            .with_context(|| format!("staging {}", src.display()))?;
        self.describe(path, len).await
    }

    /// Writes `data` into the folder as `name`.
    pub async fn put_bytes(&mut self, name: &str, data: Vec<u8>) -> anyhow::Result<StagedFile> {
        let path = join(&self.dir, name);
        let len = self
            .fs
            .put_bytes(&path, data)
            .await
            .with_context(|| format!("staging {name}"))?;
        self.describe(&path, len).await
    }

    /// Ships the local file `src` as `name` through the content-addressed cache ([`cache`])
    /// where the back end keeps shared copies (HDFS): uploaded only when the cache has no
    /// file with its digest, and declared PRIVATE so the NodeManagers reuse their copy across
    /// this user's apps. Otherwise it is copied into the app's folder. Returns the file and
    /// whether bytes were sent.
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
        if !self.fs.keeps_shared_copies() {
            let mut staged = self.put_own_copy(src, name, &stored, kind).await?;
            staged.kind = kind;
            return Ok((staged, true));
        }
        let area = self.area(Readers::Owner).await?;
        let (path, len, uploaded) = self
            .put_addressed(src, &stored, &area, Readers::Owner)
            .await?;
        let mut staged = self.describe(&path, len).await?;
        staged.kind = kind;
        staged.visibility = Visibility::Private;
        info!(file = %src.display(), %path, uploaded, "staged through the cache");
        Ok((staged, uploaded))
    }

    /// [`Stager::put_shared`] without shared copies: a copy in the app's folder. A link name
    /// with folders (`__spark_libs__/a.jar`) puts its copy into the same folders of the
    /// app's; an archive gets a folder of its own per link name, which keeps two archives
    /// of one file name apart.
    async fn put_own_copy(
        &mut self,
        src: &Path,
        name: &str,
        stored: &str,
        kind: ResourceKind,
    ) -> anyhow::Result<StagedFile> {
        if let Some((parent, _)) = name.rsplit_once('/') {
            let parent = match kind {
                ResourceKind::File => join(&self.dir, parent),
                ResourceKind::Archive => join(&self.dir, &format!("archive-{parent}")),
            };
            self.fs
                .sub_dir(&parent, Readers::Owner)
                .await
                .with_context(|| format!("staging {}", src.display()))?;
        }
        match kind {
            ResourceKind::File => self.put_file(src, name).await,
            ResourceKind::Archive => {
                let folder = join(&self.dir, &format!("archive-{name}"));
                self.fs
                    .own_dir(&folder, Readers::Owner)
                    .await
                    .with_context(|| format!("staging archive {}", src.display()))?;
                self.copy_to(src, &join(&folder, stored)).await
            }
        }
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
        if !self.fs.keeps_shared_copies() {
            bail!(
                "--public needs staging on HDFS (--webhdfs): a local staging folder is \
                 private to its user, and a NodeManager's public cache serves every user"
            );
        }
        let area = self.area(Readers::Everyone).await?;
        let (path, len, uploaded) = self
            .put_addressed(src, &stored, &area, Readers::Everyone)
            .await?;
        check_public(&*self.fs, &path).await?;
        let mut staged = self.describe(&path, len).await?;
        staged.kind = kind;
        staged.visibility = Visibility::Public;
        info!(file = %src.display(), %path, uploaded, "staged as a public resource");
        Ok((staged, uploaded))
    }

    /// The content-addressed area for `readers` (the cache, or the PUBLIC area), made and
    /// checked to be ours once per submit.
    async fn area(&mut self, readers: Readers) -> anyhow::Result<String> {
        let (area, ready, what) = match readers {
            Readers::Owner => (&self.cache, &mut self.cache_ready, "the staging cache"),
            Readers::Everyone => (
                &self.public,
                &mut self.public_ready,
                "the public staging area",
            ),
        };
        if !*ready {
            self.fs
                .own_dir(area, readers)
                .await
                .with_context(|| format!("creating {what} {area}"))?;
            *ready = true;
        }
        Ok(area.clone())
    }

    /// Puts `src` at `<area>/<sha256>/<stored>` unless a file is there already; returns the
    /// path, the length and whether bytes were sent. `Readers::Everyone` gives the digest
    /// folder 755 and the file 644 (755 if executable) instead of the owner's alone.
    async fn put_addressed(
        &mut self,
        src: &Path,
        stored: &str,
        area: &str,
        readers: Readers,
    ) -> anyhow::Result<(String, u64, bool)> {
        let owned = src.to_path_buf();
        let digest = tokio::task::spawn_blocking(move || cache::file_digest(&owned))
            .await
            .context("hashing a file to stage")??;
        let len = std::fs::metadata(src)
            .with_context(|| format!("reading {} to stage it", src.display()))?
            .len();
        let path = cache::cached_path(area, &digest, stored);
        let uploaded = match cache::cached_length(&*self.fs, &path).await? {
            Some(have) if have == len => false,
            Some(have) => bail!(
                "{path} in the staging cache has {have} bytes where {} has {len}: the cache \
                 holds a damaged copy; remove it (or {area}) and submit again",
                src.display()
            ),
            None => {
                self.upload_addressed(src, &path, area, &digest, readers)
                    .await?
            }
        };
        Ok((path, len, uploaded))
    }

    /// Uploads `src` to `path` in a content-addressed area; whether this upload put it
    /// there (`false`: another submit of the same bytes won the race).
    async fn upload_addressed(
        &self,
        src: &Path,
        path: &str,
        area: &str,
        digest: &str,
        readers: Readers,
    ) -> anyhow::Result<bool> {
        if readers == Readers::Everyone {
            // Made here with its mode: MKDIRS of the file's parent would give it the
            // server's default.
            let folder = join(area, digest);
            self.fs
                .sub_dir(&folder, readers)
                .await
                .with_context(|| format!("creating {folder}"))?;
        }
        // Written under a name no reader trusts, then renamed into place. Never over a file
        // already there: another submit of the same bytes may have won the race, and its
        // app's NodeManagers check the mtime it declared.
        let app = self.dir.rsplit('/').next().unwrap_or("upload");
        let tmp = format!("{path}.{app}.part");
        self.fs
            .put_file(src, &tmp, readers)
            .await
            .with_context(|| format!("staging {}", src.display()))?;
        let moved = self
            .fs
            .rename(&tmp, path)
            .await
            .with_context(|| format!("moving {tmp} to {path} in the staging cache"))?;
        if !moved {
            self.fs.remove_file(&tmp).await.ok();
        }
        Ok(moved)
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
        if self.fs.webhdfs().is_none() {
            bail!(
                "{url}: shipping a file from HDFS needs --webhdfs (yarn-am reads its size \
                 and time through it)"
            );
        }
        let what = || format!("reading the status of {url} through WebHDFS");
        let status = self
            .fs
            .status(path)
            .await
            .with_context(what)?
            .with_context(|| format!("{}: not found", what()))?;
        if status.kind != FileType::File {
            bail!("{url} is not a file on HDFS");
        }
        if visibility == Visibility::Public {
            check_public(&*self.fs, path)
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

    /// The URL, size and mtime of the file at `path`, which must hold `len` bytes. Size and
    /// mtime are read back from the file system: YARN compares the NM's view with what we
    /// declare.
    async fn describe(&self, path: &str, len: u64) -> anyhow::Result<StagedFile> {
        let url = self
            .fs
            .resource_url(path)
            .await
            .with_context(|| format!("naming {path} for YARN"))?;
        let status = self
            .fs
            .status(path)
            .await
            .with_context(|| format!("reading back {path}"))?
            .with_context(|| format!("reading back {path}: not found"))?;
        if status.length != len {
            bail!(
                "{} has {} bytes, expected {len}",
                self.fs.describe(path),
                status.length
            );
        }
        Ok(StagedFile {
            url,
            size: status.length,
            timestamp_ms: status.modification_time,
            kind: ResourceKind::File,
            visibility: Visibility::Application,
        })
    }
}

#[cfg(test)]
mod tests;
