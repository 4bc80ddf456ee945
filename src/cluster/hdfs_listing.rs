//! The I/O edge of HDFS inputs: lists the job's input paths through WebHDFS (paged
//! `LISTSTATUS_BATCH`, `GETFILESTATUS`, windowed `GETFILEBLOCKLOCATIONS`), asks the RM for its
//! NodeManagers, and hands what they said to the pure [`yarn_am_core::inputs`] logic, which makes
//! the tasks. Runs in `submit` before the RM is asked for an application id, so a bad input
//! leaves nothing behind. Every call is bounded by the WebHDFS client's timeout. `yarn-am
//! logs` lists folders with [`list_dir`] too.

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{bail, Context};
use tracing::info;
use yarn_am_core::driver::job::Job;
use yarn_am_core::inputs::glob::{Component, PathPattern};
use yarn_am_core::inputs::split::{self, Block, HostMap, InputFile, Split, MAX_SPLITS};
use yarn_am_core::inputs::{InputsError, InputsSpec};
use yarn_client::rest::RmRest;
use yarn_client::webhdfs::{FileType, WebHdfs, WebHdfsError};

/// Blocks asked for per `GETFILEBLOCKLOCATIONS` call: a file of 100k blocks is read in
/// pages of this many, so no reply holds more than about 0.5 MB of JSON.
const BLOCKS_PER_CALL: u64 = 1000;

/// How long resolving the NodeManagers' host names may take in all.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Replaces `job.inputs` by one task per split, appended to `job.tasks`.
pub async fn expand(job: &mut Job, client: Option<&WebHdfs>, rest: &RmRest) -> anyhow::Result<()> {
    let Some(inputs) = job.inputs.take() else {
        return Ok(());
    };
    let Some(client) = client else {
        bail!("the job names HDFS inputs but no WebHDFS address was given (--webhdfs or YARN_AM_WEBHDFS)");
    };
    let t0 = std::time::Instant::now();
    let hosts = host_map(rest).await?;
    let splits = list_splits(&inputs, client, &hosts).await?;
    let base = client.base_url().to_string();
    let n = splits.len();
    job.tasks.extend(
        splits
            .iter()
            .enumerate()
            .map(|(i, s)| split::task_for(&inputs, i, s, &base)),
    );
    let with_host = splits.iter().filter(|s| !s.hosts.is_empty()).count();
    info!(
        splits = n,
        with_preferred_host = with_host,
        elapsed_ms = t0.elapsed().as_millis() as u64,
        "listed the job's HDFS inputs"
    );
    eprintln!("inputs: {n} splits ({with_host} with a replica on a NodeManager host)");
    job.validate().context("the job with its input tasks")?;
    Ok(())
}

/// Every NodeManager the RM knows, with the addresses its name resolves to.
async fn host_map(rest: &RmRest) -> anyhow::Result<HostMap> {
    let nodes = rest
        .nodes(&[])
        .await
        .context("asking the RM for its nodes (to map DataNodes to NodeManagers)")?;
    let mut out = Vec::new();
    let resolve = async {
        for n in &nodes {
            let ips = tokio::net::lookup_host((n.node_host_name.as_str(), 0))
                .await
                .map(|a| a.map(|a| a.ip().to_string()).collect())
                .unwrap_or_default();
            out.push((n.node_host_name.clone(), ips));
        }
    };
    tokio::time::timeout(RESOLVE_TIMEOUT, resolve)
        .await
        .context("resolving the NodeManagers' host names took over 10 s")?;
    Ok(HostMap::new(&out))
}

/// All splits of all input paths, each file once, in the order the paths name them.
pub async fn list_splits(
    inputs: &InputsSpec,
    client: &WebHdfs,
    hosts: &HostMap,
) -> anyhow::Result<Vec<Split>> {
    let mut seen = HashSet::new();
    let mut splits = Vec::new();
    for path in &inputs.paths {
        let pattern = PathPattern::parse(path)?;
        let files = matching_files(&pattern, path, client).await?;
        if files.is_empty() {
            return Err(InputsError::NoMatch(path.clone()).into());
        }
        for (file, block_size) in files {
            if !seen.insert(file.path.clone()) {
                continue;
            }
            let blocks = blocks_of(&file, block_size, client, hosts).await?;
            splits.extend(split::split_file(
                &file,
                &blocks,
                inputs.split,
                inputs.split_size_bytes,
            )?);
            if splits.len() > MAX_SPLITS {
                return Err(InputsError::TooManySplits {
                    count: splits.len(),
                    limit: MAX_SPLITS,
                }
                .into());
            }
        }
    }
    Ok(splits)
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Every entry of the folder `dir`, page by page; a missing folder (or a file) has none,
/// and `Ok(false)` says it is missing. HDFS lists a folder in name order and each page
/// starts after the cursor, so every page must end past the previous one: a page that does
/// not (empty, or ending at or before the cursor) while entries are said to remain is
/// [`InputsError::ListingStuck`], not another request. `yarn-am logs` lists the aggregated
/// log folders with it too.
pub(crate) async fn list_dir(
    client: &WebHdfs,
    dir: &str,
    mut each: impl FnMut(yarn_client::webhdfs::DirEntry),
) -> anyhow::Result<bool> {
    let mut after: Option<String> = None;
    loop {
        let page = match client.list_page(dir, after.as_deref()).await {
            Ok(p) => p,
            Err(e) if e.is_not_found() && after.is_none() => return Ok(false),
            Err(e) => return Err(e).with_context(|| format!("listing folder {dir}")),
        };
        let last = page.entries.last().map(|e| e.path_suffix.clone());
        let is_file = page.entries.len() == 1 && page.entries[0].path_suffix.is_empty();
        if is_file {
            return Ok(true);
        }
        page.entries.into_iter().for_each(&mut each);
        if page.remaining == 0 {
            return Ok(true);
        }
        let stuck = |why| InputsError::ListingStuck {
            path: dir.to_string(),
            after: after.clone().unwrap_or_default(),
            why,
            remaining: page.remaining,
        };
        match last {
            None => return Err(stuck("is empty").into()),
            // Byte order, as the NameNode compares names.
            Some(l) if after.as_ref().is_some_and(|a| l.as_bytes() <= a.as_bytes()) => {
                return Err(stuck("does not end past it").into())
            }
            Some(l) => after = Some(l),
        }
    }
}

/// The files `pattern` stands for (with their block size): globs are matched component by
/// component against folder listings; a folder stands for the visible files in it.
async fn matching_files(
    pattern: &PathPattern,
    text: &str,
    client: &WebHdfs,
) -> anyhow::Result<Vec<(InputFile, u64)>> {
    let mut candidates = vec!["/".to_string()];
    for c in &pattern.components {
        let mut next = Vec::new();
        match c {
            Component::Literal(name) => next.extend(candidates.iter().map(|d| join(d, name))),
            Component::Glob(p) => {
                for d in &candidates {
                    let mut names = Vec::new();
                    list_dir(client, d, |e| {
                        if p.matches(&e.path_suffix) {
                            names.push(join(d, &e.path_suffix));
                        }
                    })
                    .await?;
                    next.extend(names);
                }
            }
        }
        candidates = next;
    }
    let mut files = Vec::new();
    for path in candidates {
        let status = match client.status(&path).await {
            Ok(s) => s,
            Err(e) if e.is_not_found() && pattern.is_literal() => {
                bail!("input {text} does not exist on HDFS ({})", e)
            }
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(unreadable(e, &path)),
        };
        match status.kind {
            FileType::Directory => {
                let mut in_dir = Vec::new();
                list_dir(client, &path, |e| {
                    let hidden = e.path_suffix.starts_with(['_', '.']);
                    if e.kind == FileType::File && !hidden {
                        in_dir.push((
                            InputFile {
                                path: join(&path, &e.path_suffix),
                                length: e.length,
                            },
                            e.block_size,
                        ));
                    }
                })
                .await?;
                files.extend(in_dir);
            }
            _ => files.push((
                InputFile {
                    path,
                    length: status.length,
                },
                status.block_size,
            )),
        }
    }
    Ok(files)
}

fn unreadable(e: WebHdfsError, path: &str) -> anyhow::Error {
    anyhow::Error::new(e).context(format!("input {path} cannot be read"))
}

/// The blocks of `file`, fetched in windows of [`BLOCKS_PER_CALL`] blocks, their replica
/// hosts mapped to NodeManager names.
async fn blocks_of(
    file: &InputFile,
    block_size: u64,
    client: &WebHdfs,
    hosts: &HostMap,
) -> anyhow::Result<Vec<Block>> {
    if file.length == 0 {
        return Err(InputsError::EmptyFile(file.path.clone()).into());
    }
    let window = block_size.max(1).saturating_mul(BLOCKS_PER_CALL);
    let mut blocks: Vec<Block> = Vec::new();
    let mut offset = 0;
    while offset < file.length {
        let got = client
            .block_locations(&file.path, offset, window.min(file.length - offset))
            .await
            .map_err(|e| unreadable(e, &file.path))?;
        let before = blocks.len();
        for b in got {
            // A window's first block may start before it (it overlaps the window's start).
            if b.offset < offset {
                continue;
            }
            let mut nodes: Vec<String> = b
                .hosts
                .iter()
                .enumerate()
                .filter_map(|(i, h)| hosts.node_of(h, b.names.get(i).map_or("", String::as_str)))
                .collect();
            nodes.sort();
            nodes.dedup();
            blocks.push(Block {
                offset: b.offset,
                length: b.length,
                hosts: nodes,
            });
        }
        let Some(last) = blocks.last() else { break };
        if blocks.len() == before {
            break; // no progress: split_file reports the gap
        }
        offset = last.offset + last.length;
    }
    Ok(blocks)
}

/// Audit L6 against a scripted NameNode: listing pages must advance.
#[cfg(test)]
mod tests {
    use super::*;
    use yarn_client::test_http::{reply, serve};

    /// A `LISTSTATUS_BATCH` reply with these names and `remaining` entries to come.
    fn page(names: &[&str], remaining: u64) -> Vec<u8> {
        let entries: Vec<String> = names
            .iter()
            .map(|n| format!(r#"{{"pathSuffix":"{n}","length":1,"type":"FILE","blockSize":1}}"#))
            .collect();
        reply(
            "200 OK",
            "",
            &format!(
                r#"{{"DirectoryListing":{{"partialListing":{{"FileStatuses":{{"FileStatus":[{}]}}}},"remainingEntries":{remaining}}}}}"#,
                entries.join(",")
            ),
        )
    }

    async fn list(nn: &str) -> anyhow::Result<Vec<String>> {
        let client = WebHdfs::new(nn, "alice", Duration::from_secs(5)).unwrap();
        let mut names = Vec::new();
        // Bounded, so the old code's endless loop fails the test instead of hanging it.
        tokio::time::timeout(
            Duration::from_secs(20),
            list_dir(&client, "/in", |e| names.push(e.path_suffix)),
        )
        .await
        .expect("the listing ended")?;
        Ok(names)
    }

    #[tokio::test]
    async fn a_listing_that_repeats_its_page_or_sends_an_empty_one_stops_with_an_error() {
        let (nn, seen) = serve("127.0.0.1", |_| page(&["a", "b"], 5)).await;
        let e = list(&nn).await.unwrap_err();
        let shown = format!("{e:#}");
        assert!(
            matches!(e.downcast_ref(), Some(InputsError::ListingStuck { after, .. }) if after == "b"),
            "{shown}"
        );
        assert!(shown.contains("does not end past it"), "{shown}");
        assert_eq!(seen.lock().unwrap().len(), 2);

        let (nn, _) = serve("127.0.0.1", |_| page(&[], 3)).await;
        let e = list(&nn).await.unwrap_err();
        assert!(format!("{e:#}").contains("is empty"), "{e:#}");
    }

    #[tokio::test]
    async fn pages_that_advance_are_all_listed() {
        let (nn, _) = serve("127.0.0.1", |head| {
            if head.contains("startAfter=b") {
                page(&["c"], 0)
            } else {
                page(&["a", "b"], 1)
            }
        })
        .await;
        assert_eq!(list(&nn).await.unwrap(), ["a", "b", "c"]);
    }
}
