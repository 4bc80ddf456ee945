//! Reading an HTTP reply's body under a size cap (audit L4).
//!
//! Every reply the web clients read (RM REST, WebHDFS's NameNode JSON, a small file read
//! whole) comes from a server whose address can be squatted or sat in the middle of: a
//! reply read "to the end" lets such a server fill the client's memory. So a body is read
//! chunk by chunk and refused as soon as it passes the cap (a declared `Content-Length`
//! over the cap is refused before any byte is read), and the caller turns that into its
//! own typed error naming the limit.

/// Why a body could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// More than `limit` bytes (declared or received).
    #[error("reply larger than the {limit}-byte limit")]
    TooLarge { limit: u64 },
    /// The transport failed while the body was read (cut off, timed out).
    #[error("reading the reply")]
    Read(#[source] reqwest::Error),
}

/// The body of `resp` as text (invalid UTF-8 replaced), at most `limit` bytes.
pub(crate) async fn text_capped(
    mut resp: reqwest::Response,
    limit: u64,
) -> Result<String, BodyError> {
    if resp.content_length().is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Read)? {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(BodyError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}
