//! Reads: a whole small file, or a streamed byte range from a replica of the caller's
//! choice.

use std::time::Duration;

use super::*;
use crate::redact::RedactedUrl;

/// A range being read from a DataNode ([`WebHdfs::open_range`]).
pub struct RangeRead {
    /// `host:port` of the DataNode serving the read (nothing secret).
    pub datanode: String,
    url: RedactedUrl,
    resp: reqwest::Response,
}

impl RangeRead {
    /// The next bytes; `None` at the end of the reply. A transport failure (the DataNode
    /// died, the read timed out) is [`WebHdfsError::Unreachable`] naming the redacted URL.
    pub async fn chunk(&mut self) -> Result<Option<bytes::Bytes>> {
        self.resp
            .chunk()
            .await
            .map_err(|e| unreachable("OPEN", self.url.as_str(), e))
    }

    /// The DataNode URL of the read, redacted.
    pub fn url(&self) -> &RedactedUrl {
        &self.url
    }
}

impl WebHdfs {
    /// The whole content of the file `path` (`op=OPEN`, read from the DataNode the NameNode
    /// names), as text (invalid UTF-8 replaced). For small files: it is held in memory.
    pub async fn read_to_string(&self, path: &str) -> Result<String> {
        let url = self.op_url(path, "OPEN", &[("noredirect", "true")])?;
        let dn = self
            .datanode_url("OPEN", path, self.http.get(&url), url)
            .await?;
        let resp = self
            .http
            .get(&dn)
            .send()
            .await
            .map_err(|e| unreachable("OPEN", &dn, e))?;
        let (_, body, _) = self.read_reply("OPEN", path, &dn, resp).await?;
        Ok(body)
    }

    /// Starts reading `length` bytes of `path` from `offset` (`op=OPEN` with `noredirect`,
    /// then a GET of the DataNode URL the NameNode answers). The NameNode picks the first
    /// replica of the block at `offset`, in its order by network distance from the caller,
    /// that is not in `exclude` (`excludedatanodes`: DataNode transfer addresses `ip:port`,
    /// as [`BlockLocation::names`] gives them); the DataNode named serves the range through
    /// its own HDFS client, which reads a replica it holds itself before any other. The read
    /// gets the base timeout plus time for `length` at a slow but live rate.
    pub async fn open_range(
        &self,
        path: &str,
        offset: u64,
        length: u64,
        exclude: &[String],
    ) -> Result<RangeRead> {
        let (o, l, x) = (offset.to_string(), length.to_string(), exclude.join(","));
        let mut params = vec![("offset", o.as_str()), ("length", l.as_str())];
        params.push(("noredirect", "true"));
        if !exclude.is_empty() {
            params.push(("excludedatanodes", x.as_str()));
        }
        let url = self.op_url(path, "OPEN", &params)?;
        let dn = self
            .datanode_url("OPEN", path, self.http.get(&url), url)
            .await?;
        let resp = self
            .http
            .get(&dn)
            .timeout(self.timeout + Duration::from_secs(length / MIN_UPLOAD_RATE))
            .send()
            .await
            .map_err(|e| unreachable("OPEN", &dn, e))?;
        let status = resp.status().as_u16();
        if status >= 400 {
            // An error reply is small JSON; read_reply turns it into the error.
            return Err(match self.read_reply("OPEN", path, &dn, resp).await {
                Err(e) => e,
                Ok(_) => WebHdfsError::BadReply {
                    op: "OPEN",
                    url: RedactedUrl::new(&dn),
                    reason: format!("HTTP {status}"),
                },
            });
        }
        Ok(RangeRead {
            datanode: url_authority(&dn).to_string(),
            url: RedactedUrl::new(&dn),
            resp,
        })
    }
}
