//! Staging on HDFS (`hdfs://` URLs), written and read over the NameNode's HTTP API, so a
//! submitter needs no Hadoop jars or HDFS RPC; the NodeManagers read the files with their
//! own HDFS client.
//!
//! Modes are explicit on every folder and file made (WebHDFS's default is world-readable
//! 644): an app's folder and the cache 700, files 600 (700 for a program, whose owner's
//! execute bit survives localisation); the PUBLIC area 755 and its files 644 (755).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::sync::{mpsc, oneshot};
use tracing::warn;
use yarn_client::webhdfs::{Created, WebHdfs, WebHdfsError};

use super::{
    Appender, FileStatus, FileType, Fut, Handed, HttpAuthSource, Readers, StagingDir, StagingError,
    StagingFs,
};
use crate::staging::{
    StagingOptions, HDFS_DIR_MODE, HDFS_EXEC_MODE, HDFS_FILE_MODE, HDFS_PUBLIC_DIR_MODE,
    HDFS_PUBLIC_EXEC_MODE, HDFS_PUBLIC_FILE_MODE, HDFS_ROOT_NAME,
};

/// The HDFS back end: a WebHDFS client and the `hdfs://` authority of the URLs YARN gets.
pub struct WebHdfsFs {
    client: WebHdfs,
    /// Credentials asked again for every call (the AM's refreshed delegation token);
    /// `None`: the client's own.
    fresh_auth: Option<HttpAuthSource>,
    /// `hdfs://host:port` the NMs must read from: `--hdfs-uri`, else learned from the
    /// NameNode on the first upload (or a read request's DataNode URL).
    hdfs_uri: Arc<OnceLock<String>>,
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

/// The mode of a file made for `readers`, from whether it is a program.
fn file_mode(readers: Readers, executable: bool) -> &'static str {
    match (readers, executable) {
        (Readers::Owner, true) => HDFS_EXEC_MODE,
        (Readers::Owner, false) => HDFS_FILE_MODE,
        (Readers::Everyone, true) => HDFS_PUBLIC_EXEC_MODE,
        (Readers::Everyone, false) => HDFS_PUBLIC_FILE_MODE,
    }
}

/// The mode of a folder made for `readers`.
fn dir_mode(readers: Readers) -> &'static str {
    match readers {
        Readers::Owner => HDFS_DIR_MODE,
        Readers::Everyone => HDFS_PUBLIC_DIR_MODE,
    }
}

impl WebHdfsFs {
    /// The folder tree behind the NameNode at `url`, as `user`, with the credentials `auth`
    /// gives at each call.
    pub fn reach(
        url: &str,
        user: &str,
        timeout: Duration,
        auth: HttpAuthSource,
    ) -> Result<WebHdfsFs, WebHdfsError> {
        Ok(WebHdfsFs {
            client: WebHdfs::new(url, user, timeout)?,
            fresh_auth: Some(auth),
            hdfs_uri: Arc::default(),
        })
    }

    /// The submitter's root: `--staging-dir`, else `<home>/.yarn-am-staging` where home is
    /// what the NameNode says (`/user/<user>`); created with the server's default mode (it
    /// may be shared, and on a fresh cluster MKDIRS also creates /user). Each app's own
    /// folder is private.
    pub async fn open_root(
        address: &str,
        opts: &StagingOptions,
    ) -> anyhow::Result<(WebHdfsFs, String)> {
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
                super::join(&home, HDFS_ROOT_NAME)
            }
        };
        if !root.starts_with('/') {
            bail!("--staging-dir must be an absolute HDFS path with --webhdfs, got {root:?}");
        }
        client.mkdirs(&root, None).await.with_context(|| {
            format!(
                "creating staging root {root} through WebHDFS at {}",
                client.base_url()
            )
        })?;
        let known = OnceLock::new();
        if let Some(u) = hdfs_uri {
            let _ = known.set(u);
        }
        let fs = WebHdfsFs {
            client,
            fresh_auth: None,
            hdfs_uri: Arc::new(known),
        };
        Ok((fs, root))
    }

    /// The client with the credentials of the moment.
    fn client(&self) -> WebHdfs {
        match self.fresh_auth.as_ref().and_then(|f| f()) {
            Some(auth) => self.client.clone().with_auth(auth),
            None => self.client.clone(),
        }
    }

    fn failed(&self, what: &'static str, path: &str) -> impl FnOnce(WebHdfsError) -> StagingError {
        let (path, url) = (path.to_string(), self.client.base_url().to_string());
        move |source| StagingError::Webhdfs {
            what,
            path,
            url,
            source: Box::new(source),
        }
    }

    /// What a read call found; `None` when nothing is at `path`.
    fn unless_missing<T>(
        &self,
        r: Result<T, WebHdfsError>,
        what: &'static str,
        path: &str,
    ) -> Result<Option<T>, StagingError> {
        match r {
            Ok(found) => Ok(Some(found)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(self.failed(what, path)(e)),
        }
    }

    /// Keeps the NameNode's RPC address an upload named, when none is known yet.
    fn learn(&self, created: &Created) {
        if let Some(nn) = &created.namenode_rpc_address {
            let _ = self.hdfs_uri.set(format!("hdfs://{nn}"));
        }
    }

    /// Checks that the HDFS folder `dir` is a folder we own with mode `mode` (see
    /// [`StagingError::NotOurs`]). Who "we" are is the NameNode's view (GETHOMEDIRECTORY
    /// ends in the short name it knows us by), so it holds for `user.name`, SPNEGO and
    /// delegation tokens alike.
    async fn check_ours(&self, dir: &str, mode: &'static str) -> Result<(), StagingError> {
        let client = self.client();
        let home = client
            .home_directory()
            .await
            .map_err(self.failed("checking staging folder", dir))?;
        let user = home
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default();
        let status = client
            .status(dir)
            .await
            .map_err(self.failed("checking staging folder", dir))?;
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
            });
        }
        Ok(())
    }
}

impl StagingFs for WebHdfsFs {
    fn name(&self) -> &'static str {
        "HDFS"
    }

    fn describe(&self, path: &str) -> String {
        self.locate(path).describe()
    }

    fn locate(&self, dir: &str) -> StagingDir {
        StagingDir::Webhdfs {
            url: self.client.base_url().to_string(),
            user: self.client.user().to_string(),
            path: dir.to_string(),
        }
    }

    fn webhdfs(&self) -> Option<&WebHdfs> {
        Some(&self.client)
    }

    fn keeps_shared_copies(&self) -> bool {
        true
    }

    fn one_writer_per_file(&self) -> bool {
        true
    }

    fn own_dir<'a>(&'a self, path: &'a str, readers: Readers) -> Fut<'a, ()> {
        Box::pin(async move {
            let mode = dir_mode(readers);
            self.client()
                .mkdirs(path, Some(mode))
                .await
                .map_err(self.failed("creating staging folder", path))?;
            self.check_ours(path, mode).await
        })
    }

    fn sub_dir<'a>(&'a self, path: &'a str, readers: Readers) -> Fut<'a, ()> {
        Box::pin(async move {
            self.client()
                .mkdirs(path, Some(dir_mode(readers)))
                .await
                .map_err(self.failed("creating", path))
        })
    }

    fn put_file<'a>(&'a self, src: &'a Path, path: &'a str, readers: Readers) -> Fut<'a, u64> {
        Box::pin(async move {
            let executable = std::fs::metadata(src)
                .map_err(|source| StagingError::Io {
                    what: "reading",
                    path: src.display().to_string(),
                    source,
                })?
                .permissions()
                .mode()
                & 0o100
                != 0;
            let created = self
                .client()
                .create_from_file(path, src, true, Some(file_mode(readers, executable)))
                .await
                .map_err(self.failed("uploading to", path))?;
            self.learn(&created);
            Ok(created.bytes)
        })
    }

    fn put_bytes<'a>(&'a self, path: &'a str, data: Vec<u8>) -> Fut<'a, u64> {
        Box::pin(async move {
            let created = self
                .client()
                .create(path, data, true, Some(HDFS_FILE_MODE))
                .await
                .map_err(self.failed("uploading to", path))?;
            self.learn(&created);
            Ok(created.bytes)
        })
    }

    fn replace<'a>(&'a self, path: &'a str, data: Vec<u8>) -> Fut<'a, ()> {
        Box::pin(async move {
            let tmp = format!("{path}.tmp");
            let c = self.client();
            c.create(&tmp, data, true, Some(HDFS_FILE_MODE))
                .await
                .map_err(self.failed("uploading to", &tmp))?;
            c.rename_over(&tmp, path)
                .await
                .map_err(self.failed("renaming over", path))
        })
    }

    fn rename<'a>(&'a self, from: &'a str, to: &'a str) -> Fut<'a, bool> {
        Box::pin(async move {
            self.client()
                .rename(from, to)
                .await
                .map_err(self.failed("moving a file to", to))
        })
    }

    fn status<'a>(&'a self, path: &'a str) -> Fut<'a, Option<FileStatus>> {
        Box::pin(async move {
            let r = self.client().status(path).await;
            self.unless_missing(r, "reading the status of", path)
        })
    }

    fn read_to_string<'a>(&'a self, path: &'a str) -> Fut<'a, Option<String>> {
        Box::pin(async move {
            let r = self.client().read_to_string(path).await;
            self.unless_missing(r, "reading", path)
        })
    }

    fn remove_file<'a>(&'a self, path: &'a str) -> Fut<'a, ()> {
        Box::pin(async move {
            self.client()
                .delete(path, false)
                .await
                .map(|_| ())
                .map_err(self.failed("removing", path))
        })
    }

    fn remove_dir<'a>(&'a self, path: &'a str) -> Fut<'a, bool> {
        Box::pin(async move {
            self.client()
                .delete(path, true)
                .await
                .map_err(self.failed("removing", path))
        })
    }

    fn resource_url<'a>(&'a self, path: &'a str) -> Fut<'a, String> {
        Box::pin(async move {
            if self.hdfs_uri.get().is_none() {
                let nn = self
                    .client()
                    .namenode_rpc_address(path)
                    .await
                    .map_err(self.failed("asking the NameNode how to name for YARN", path))?;
                let Some(nn) = nn else {
                    return Err(StagingError::NoRpcAddress {
                        url: self.client.base_url().to_string(),
                    });
                };
                let _ = self.hdfs_uri.set(format!("hdfs://{nn}"));
            }
            let authority = self.hdfs_uri.get().map(String::as_str).unwrap_or_default();
            Ok(format!("{authority}{}", url_path(path)))
        })
    }

    fn open_appender<'a>(
        &'a self,
        path: &'a str,
        _keep: u64,
        label: &'static str,
    ) -> Fut<'a, Box<dyn Appender>> {
        Box::pin(async move {
            // Created by the writer with the first batch: nothing on HDFS delays the start.
            let (tx, rx) = mpsc::unbounded_channel();
            let fs = WebHdfsFs {
                client: self.client.clone(),
                fresh_auth: self.fresh_auth.clone(),
                hdfs_uri: self.hdfs_uri.clone(),
            };
            let writer = tokio::spawn(write_batches(rx, path.to_string(), fs, label));
            Ok(Box::new(BatchAppender { tx, writer }) as Box<dyn Appender>)
        })
    }
}

/// A batch for the writer, and who waits for it to be on HDFS.
type Batch = (String, Option<oneshot::Sender<()>>);

/// Appends through a writer task that batches everything handed to it since its last call
/// into one `APPEND`, so the caller never waits on HDFS. An `APPEND` returns once every
/// DataNode of the pipeline acknowledged the bytes. A failed append is logged and not
/// retried (a retry after a timeout could write the records twice).
struct BatchAppender {
    tx: mpsc::UnboundedSender<Batch>,
    writer: tokio::task::JoinHandle<()>,
}

impl Appender for BatchAppender {
    fn append(&mut self, data: String, done: Option<oneshot::Sender<()>>) -> Handed {
        match self.tx.send((data, done)) {
            Ok(()) => Handed::Queued,
            Err(_) => Handed::Written(false),
        }
    }

    fn abandon(self: Box<Self>) {
        self.writer.abort();
    }
}

/// The writer: each call carries everything queued since the last one, in order; those
/// waiting hear when it is on HDFS (or, by their channel's drop, that it failed).
async fn write_batches(
    mut rx: mpsc::UnboundedReceiver<Batch>,
    file: String,
    fs: WebHdfsFs,
    label: &'static str,
) {
    let mut created = false;
    while let Some((mut text, done)) = rx.recv().await {
        let mut waiting: Vec<oneshot::Sender<()>> = done.into_iter().collect();
        while let Ok((more, done)) = rx.try_recv() {
            text.push_str(&more);
            waiting.extend(done);
        }
        let c = fs.client();
        let r = if created {
            c.append(&file, text.into_bytes()).await
        } else {
            // A writer's file is new (attempt numbers are not reused): nothing to keep.
            c.create(&file, text.into_bytes(), true, Some(HDFS_FILE_MODE))
                .await
                .map(|_| created = true)
        };
        match r {
            Ok(()) => {
                for w in waiting {
                    let _ = w.send(());
                }
            }
            Err(e) => warn!(file = %file, "could not append to {label}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdfs_paths_join_and_escape() {
        assert_eq!(super::super::join("/user/a/", "x"), "/user/a/x");
        assert_eq!(super::super::join("/user/a", "x"), "/user/a/x");
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
}
