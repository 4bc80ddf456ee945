//! The namespace: folders, status, delete, rename, listings and block locations, and the
//! parsers of their NameNode JSON.

use serde::Deserialize;

use super::*;

/// `FILE` or `DIRECTORY` (or `SYMLINK`), as GETFILESTATUS reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum FileType {
    File,
    Directory,
    Symlink,
}

/// `GET ?op=GETFILESTATUS` -> `FileStatus` (the fields we use). YARN checks `length` and
/// `modification_time` of a local resource against what the submitter declared.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStatus {
    pub length: u64,
    /// Milliseconds since the epoch.
    pub modification_time: u64,
    #[serde(rename = "type")]
    pub kind: FileType,
    #[serde(default)]
    pub owner: String,
    #[serde(default)]
    pub permission: String,
    #[serde(default)]
    pub replication: u32,
    #[serde(default)]
    pub block_size: u64,
}

/// One entry of a folder listing (`LISTSTATUS_BATCH`), the fields input listing uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirEntry {
    /// The entry's name in its folder (empty when the listed path is a file).
    pub path_suffix: String,
    pub length: u64,
    #[serde(rename = "type")]
    pub kind: FileType,
    #[serde(default)]
    pub block_size: u64,
}

/// One page of a folder listing and how many entries follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingPage {
    pub entries: Vec<DirEntry>,
    pub remaining: u64,
}

/// One block of a file (`GETFILEBLOCKLOCATIONS`): its byte range and where its replicas are.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockLocation {
    pub offset: u64,
    pub length: u64,
    /// DataNode host names, one per replica.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// DataNode `ip:port` transfer addresses, in the order of `hosts`.
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub corrupt: bool,
}

/// A `LISTSTATUS_BATCH` reply, `url` naming it in errors. Pure, so it is fuzzed
/// (`hostile_input_tests`).
pub(crate) fn parse_listing(url: &str, body: &str) -> Result<ListingPage> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Listing {
        partial_listing: Partial,
        #[serde(default)]
        remaining_entries: u64,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Partial {
        file_statuses: Statuses,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Statuses {
        #[serde(default)]
        file_status: Vec<DirEntry>,
    }
    let l: Listing = WebHdfs::json("LISTSTATUS_BATCH", url, body, "DirectoryListing")?;
    Ok(ListingPage {
        entries: l.partial_listing.file_statuses.file_status,
        remaining: l.remaining_entries,
    })
}

/// A `GETFILEBLOCKLOCATIONS` reply, `url` naming it in errors. Pure, so it is fuzzed.
pub(crate) fn parse_block_locations(url: &str, body: &str) -> Result<Vec<BlockLocation>> {
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Locations {
        #[serde(default)]
        block_location: Vec<BlockLocation>,
    }
    // An empty file has `"BlockLocations": null` on some versions.
    let l: Option<Locations> = WebHdfs::json("GETFILEBLOCKLOCATIONS", url, body, "BlockLocations")?;
    Ok(l.map(|l| l.block_location).unwrap_or_default())
}

/// A `GETFILESTATUS` reply, `url` naming it in errors. Pure, so it is fuzzed.
pub(crate) fn parse_file_status(url: &str, body: &str) -> Result<FileStatus> {
    WebHdfs::json("GETFILESTATUS", url, body, "FileStatus")
}

impl WebHdfs {
    /// Creates `path` and any missing parents (`op=MKDIRS`). `permission` is octal, e.g.
    /// `"700"`; `None` leaves the server default (755 minus the umask).
    pub async fn mkdirs(&self, path: &str, permission: Option<&str>) -> Result<()> {
        let params: Vec<(&str, &str)> = permission.map(|p| ("permission", p)).into_iter().collect();
        let url = self.op_url(path, "MKDIRS", &params)?;
        let (_, body, _) = self.send("MKDIRS", path, self.http.put(&url), &url).await?;
        let made: bool = Self::json("MKDIRS", &url, &body, "boolean")?;
        if !made {
            return Err(WebHdfsError::BadReply {
                op: "MKDIRS",
                url: url.into(),
                reason: "the NameNode answered false (folder not created)".into(),
            });
        }
        Ok(())
    }

    /// The status of `path` (`op=GETFILESTATUS`); a missing path is a
    /// [`WebHdfsError::Remote`] for which [`WebHdfsError::is_not_found`] is true.
    pub async fn status(&self, path: &str) -> Result<FileStatus> {
        let url = self.op_url(path, "GETFILESTATUS", &[])?;
        let (_, body, _) = self
            .send("GETFILESTATUS", path, self.http.get(&url), &url)
            .await?;
        parse_file_status(&url, &body)
    }

    /// Deletes `path` (with everything below it when `recursive`). Returns false when there
    /// was nothing to delete.
    pub async fn delete(&self, path: &str, recursive: bool) -> Result<bool> {
        let url = self.op_url(
            path,
            "DELETE",
            &[("recursive", if recursive { "true" } else { "false" })],
        )?;
        let (_, body, _) = self
            .send("DELETE", path, self.http.delete(&url), &url)
            .await?;
        Self::json("DELETE", &url, &body, "boolean")
    }

    /// Renames `from` to `to` unless something is already at `to` (`op=RENAME`): false
    /// when the NameNode refused (the destination exists, or `from` does not).
    pub async fn rename(&self, from: &str, to: &str) -> Result<bool> {
        check_path(to)?;
        let url = self.op_url(from, "RENAME", &[("destination", to)])?;
        let (_, body, _) = self.send("RENAME", from, self.http.put(&url), &url).await?;
        Self::json::<bool>("RENAME", &url, &body, "boolean")
    }

    /// Renames `from` to `to`, replacing a file at `to` (`op=RENAME` with
    /// `renameoptions=OVERWRITE`, HDFS's atomic rename2): readers see the old file or the
    /// new one, never a half-written one.
    pub async fn rename_over(&self, from: &str, to: &str) -> Result<()> {
        check_path(to)?;
        let url = self.op_url(
            from,
            "RENAME",
            &[("destination", to), ("renameoptions", "OVERWRITE")],
        )?;
        self.send("RENAME", from, self.http.put(&url), &url).await?;
        Ok(())
    }

    /// One page of the listing of `path` (`op=LISTSTATUS_BATCH`): the entries after
    /// `start_after` (a name from the previous page), as many as the NameNode's
    /// `dfs.ls.limit` (1000 by default). Paging keeps a huge folder's listing out of one reply.
    pub async fn list_page(&self, path: &str, start_after: Option<&str>) -> Result<ListingPage> {
        let params: Vec<(&str, &str)> =
            start_after.map(|s| ("startAfter", s)).into_iter().collect();
        let url = self.op_url(path, "LISTSTATUS_BATCH", &params)?;
        let (_, body, _) = self
            .send("LISTSTATUS_BATCH", path, self.http.get(&url), &url)
            .await?;
        parse_listing(&url, &body)
    }

    /// The blocks of `path` overlapping `[offset, offset + length)`
    /// (`op=GETFILEBLOCKLOCATIONS`), with their replicas' DataNodes.
    pub async fn block_locations(
        &self,
        path: &str,
        offset: u64,
        length: u64,
    ) -> Result<Vec<BlockLocation>> {
        let (o, l) = (offset.to_string(), length.to_string());
        let url = self.op_url(
            path,
            "GETFILEBLOCKLOCATIONS",
            &[("offset", &o), ("length", &l)],
        )?;
        let (_, body, _) = self
            .send("GETFILEBLOCKLOCATIONS", path, self.http.get(&url), &url)
            .await?;
        parse_block_locations(&url, &body)
    }

    /// The user's home folder (`op=GETHOMEDIRECTORY`), e.g. `/user/alice`.
    pub async fn home_directory(&self) -> Result<String> {
        let url = self.op_url("/", "GETHOMEDIRECTORY", &[])?;
        let (_, body, _) = self
            .send("GETHOMEDIRECTORY", "/", self.http.get(&url), &url)
            .await?;
        Self::json("GETHOMEDIRECTORY", &url, &body, "Path")
    }
}
