//! Writes: create (from bytes or a file) and append, each a NameNode request naming a
//! DataNode and an upload of the bytes to it.

use std::time::Duration;

use super::*;
use crate::redact::{redact, RedactedUrl};

/// Where a CREATE's bytes went, as the NameNode named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The DataNode URL the bytes were sent to.
    pub datanode_url: RedactedUrl,
    /// `host:port` of the NameNode's RPC server (or the HA nameservice), from the
    /// `namenoderpcaddress` parameter of the DataNode URL: what `hdfs://` URLs must name.
    pub namenode_rpc_address: Option<String>,
    /// Bytes sent.
    pub bytes: u64,
}

/// Bytes a second an upload is granted on top of the request timeout: a large binary on a
/// slow link must not be cut off by a timeout meant for metadata calls, while a stalled
/// DataNode still ends in an error.
pub(super) const MIN_UPLOAD_RATE: u64 = 1 << 20;

impl WebHdfs {
    /// Writes `data` to `path`, replacing any file there when `overwrite` (`op=CREATE`, then
    /// the bytes to the DataNode the NameNode names). Missing parent folders are created.
    /// `permission` is the file's octal mode, e.g. `"600"` for a secret; `None` leaves the
    /// server's default (644 minus the umask), readable by everyone.
    pub async fn create(
        &self,
        path: &str,
        data: Vec<u8>,
        overwrite: bool,
        permission: Option<&str>,
    ) -> Result<Created> {
        let len = data.len() as u64;
        self.create_body(path, reqwest::Body::from(data), len, overwrite, permission)
            .await
    }

    /// Like [`WebHdfs::create`], streaming the local file `local` (a large binary is never
    /// held in memory whole).
    pub async fn create_from_file(
        &self,
        path: &str,
        local: &std::path::Path,
        overwrite: bool,
        permission: Option<&str>,
    ) -> Result<Created> {
        let io_err = |source: std::io::Error| WebHdfsError::LocalFile {
            path: local.display().to_string(),
            source,
        };
        let file = tokio::fs::File::open(local).await.map_err(io_err)?;
        let len = file.metadata().await.map_err(io_err)?.len();
        self.create_body(path, reqwest::Body::from(file), len, overwrite, permission)
            .await
    }

    async fn create_body(
        &self,
        path: &str,
        body: reqwest::Body,
        len: u64,
        overwrite: bool,
        permission: Option<&str>,
    ) -> Result<Created> {
        let mut params = vec![
            ("overwrite", if overwrite { "true" } else { "false" }),
            ("noredirect", "true"),
        ];
        params.extend(permission.map(|p| ("permission", p)));
        let url = self.op_url(path, "CREATE", &params)?;
        let datanode_url = self
            .datanode_url("CREATE", path, self.http.put(&url), url)
            .await?;
        let resp = self
            .upload(
                "CREATE",
                self.http.put(&datanode_url),
                &datanode_url,
                body,
                len,
            )
            .await?;
        let (status, reply, _) = self.read_reply("CREATE", path, &datanode_url, resp).await?;
        if status != 201 && status != 200 {
            return Err(WebHdfsError::BadReply {
                op: "CREATE",
                url: RedactedUrl::new(&datanode_url),
                reason: redact(&format!(
                    "DataNode answered {status}, not 201 Created: {reply}"
                )),
            });
        }
        Ok(Created {
            namenode_rpc_address: query_param(&datanode_url, "namenoderpcaddress"),
            datanode_url: datanode_url.into(),
            bytes: len,
        })
    }

    /// Sends `len` bytes to the DataNode URL the NameNode named (CREATE's PUT, APPEND's
    /// POST). The upload gets the base timeout plus time for its size at a slow but live
    /// rate; the URL is used as the NameNode wrote it, since it carries the token the
    /// DataNode checks.
    async fn upload(
        &self,
        op: &'static str,
        req: reqwest::RequestBuilder,
        datanode_url: &str,
        body: reqwest::Body,
        len: u64,
    ) -> Result<reqwest::Response> {
        req.timeout(self.timeout + Duration::from_secs(len / MIN_UPLOAD_RATE))
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            // A streamed body would otherwise go out chunked; the length is known.
            .header(reqwest::header::CONTENT_LENGTH, len)
            .body(body)
            .send()
            .await
            .map_err(|e| unreachable(op, datanode_url, e))
    }

    /// Where the NameNode sends the data of `op` on `path` (asked with `noredirect`, so the
    /// answer is a JSON `Location` or a 307 with the header).
    pub(super) async fn datanode_url(
        &self,
        op: &'static str,
        path: &str,
        req: reqwest::RequestBuilder,
        url: String,
    ) -> Result<String> {
        let (status, reply, location) = self.send(op, path, req, &url).await?;
        match (status, location) {
            (307, Some(loc)) => Ok(loc),
            (307, None) => Err(WebHdfsError::BadReply {
                op,
                url: url.into(),
                reason: "307 without a Location header".into(),
            }),
            _ => Self::json::<String>(op, &url, &reply, "Location"),
        }
    }

    /// `host:port` of the NameNode's RPC server (or HA nameservice) as the NameNode names it
    /// in the DataNode URL for reading the existing file `path` (`op=OPEN&noredirect=true`:
    /// nothing is read), for `hdfs://` URLs when no upload told it ([`Created`]).
    pub async fn namenode_rpc_address(&self, path: &str) -> Result<Option<String>> {
        let url = self.op_url(path, "OPEN", &[("noredirect", "true")])?;
        let dn = self
            .datanode_url("OPEN", path, self.http.get(&url), url)
            .await?;
        Ok(query_param(&dn, "namenoderpcaddress"))
    }

    /// Appends `data` to the existing file `path` (`op=APPEND`, then the bytes to the
    /// DataNode the NameNode names). Returned once the DataNode closed the file: the bytes
    /// are then on every DataNode of the pipeline (acknowledged, not fsynced to disk).
    pub async fn append(&self, path: &str, data: Vec<u8>) -> Result<()> {
        let url = self.op_url(path, "APPEND", &[("noredirect", "true")])?;
        let dn = self
            .datanode_url("APPEND", path, self.http.post(&url), url)
            .await?;
        let len = data.len() as u64;
        let resp = self
            .upload("APPEND", self.http.post(&dn), &dn, data.into(), len)
            .await?;
        self.read_reply("APPEND", path, &dn, resp).await?;
        Ok(())
    }
}
