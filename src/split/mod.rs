//! `yarn-am split cat`: the reader a task over an HDFS input runs (`{split.cat}` in the job's
//! `inputs.command`) to write its split's records to stdout.
//!
//! The record rule is sans-IO ([`yarn_am_core::inputs::records`]); this is its I/O shell:
//!
//! - **The split** comes from the task's environment (`YARN_AM_SPLIT_URL`, `_PATH`,
//!   `_OFFSET`, `_LENGTH`; the NameNode's web address is the URL's).
//! - **Authentication** from the container's own credentials: the HDFS delegation token in
//!   its token file (`HADOOP_TOKEN_FILE_LOCATION`, which the executor leaves to its tasks)
//!   goes out as WebHDFS's `delegation=` and nowhere else; without one (no security) the
//!   caller is `$USER` (`user.name=`), the application's user as YARN sets it. Errors name
//!   URLs only as [`yarn_client::redact::RedactedUrl`]s, so no token reaches a log.
//! - **Locality**: the blocks of the range come from `GETFILEBLOCKLOCATIONS`; each block is
//!   read from a replica on this host (`NM_HOST`, matched by name, short name or address as
//!   the submitter matches DataNodes to NodeManagers) before any other. WebHDFS has no "read
//!   from this DataNode" call: `OPEN` goes to the NameNode, which redirects to the first
//!   replica of the block in its own order (by network distance from the caller) that is not
//!   in `excludedatanodes`; so the reader asks with every other replica excluded, and the
//!   NameNode's answer (with `noredirect=true`, a JSON `Location`) names the wanted
//!   DataNode, whose WebHDFS server reads its own replica. Each request stays within one
//!   block.
//! - **Failures**: a DataNode that refuses, errs or dies mid-read is left for the block's
//!   next replica, from the byte where the read stopped (the state machine has written out
//!   exactly what it was fed, so nothing is repeated or lost); every replica is tried
//!   [`ROUNDS`] times at most, [`ROUND_PAUSE`] apart, then the error names the block and the
//!   DataNodes tried.

#[cfg(test)]
mod tests;

use std::io::Write;
use std::time::Duration;

use anyhow::Context;
use tracing::warn;
use yarn_client::webhdfs::{BlockLocation, WebHdfs, WebHdfsError};

use crate::cli::SplitCatArgs;
use yarn_am_core::inputs::records::{RecordError, SplitRecords};
use yarn_am_core::inputs::split::HostMap;

/// Times each replica of a block is tried before the read fails.
pub const ROUNDS: usize = 2;
/// Pause between two rounds over a block's replicas.
pub const ROUND_PAUSE: Duration = Duration::from_secs(1);
/// Bytes asked for per request past the split's end (a line's rest is usually short).
const PAST_END_STEP: u64 = 64 << 10;
/// Block locations asked for per `GETFILEBLOCKLOCATIONS` call beyond the split.
const LOCATIONS_WINDOW: u64 = 64 << 20;

/// Why a split could not be read. Every message is free of credentials.
#[derive(Debug, thiserror::Error)]
pub enum SplitReadError {
    #[error(
        "no replica of block {block_offset}+{block_length} of {path} could be read \
         ({attempts} attempts on {tried}); last error: {last}"
    )]
    NoReplica {
        path: String,
        block_offset: u64,
        block_length: u64,
        tried: String,
        attempts: usize,
        last: String,
    },
    #[error("HDFS reports no block of {path} holding byte {offset} (the file has {length} bytes)")]
    NoBlock {
        path: String,
        offset: u64,
        length: u64,
    },
    #[error("reading {path}")]
    Hdfs {
        path: String,
        #[source]
        source: Box<WebHdfsError>,
    },
    #[error("{path}")]
    Records {
        path: String,
        #[source]
        source: RecordError,
    },
    #[error("writing the records to stdout")]
    Output(#[source] std::io::Error),
}

/// The split of this task, from its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSplit {
    /// The NameNode's web address, e.g. `http://rm:9870`.
    pub webhdfs: String,
    pub path: String,
    pub offset: u64,
    pub length: u64,
}

impl TaskSplit {
    pub fn from_env() -> anyhow::Result<TaskSplit> {
        let var = |name: &str| {
            std::env::var(name).with_context(|| {
                format!("{name} is not set: `yarn-am split cat` runs in a task over HDFS inputs")
            })
        };
        let num = |name: &str| -> anyhow::Result<u64> {
            let v = var(name)?;
            v.parse()
                .with_context(|| format!("{name} is not a number: {v:?}"))
        };
        let url = var("YARN_AM_SPLIT_URL")?;
        let webhdfs = url
            .split_once("/webhdfs/v1")
            .map(|(base, _)| base.to_string())
            .with_context(|| format!("YARN_AM_SPLIT_URL is not a WebHDFS URL: {url:?}"))?;
        Ok(TaskSplit {
            webhdfs,
            path: var("YARN_AM_SPLIT_PATH")?,
            offset: num("YARN_AM_SPLIT_OFFSET")?,
            length: num("YARN_AM_SPLIT_LENGTH")?,
        })
    }
}

/// `yarn-am split cat`.
pub fn cat(args: SplitCatArgs) -> anyhow::Result<()> {
    let split = TaskSplit::from_env()?;
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    rt.block_on(async {
        let timeout = Duration::from_secs(args.timeout);
        let user = std::env::var("USER").unwrap_or_else(|_| "yarn".into());
        let client = WebHdfs::new(&split.webhdfs, &user, timeout)
            .with_context(|| format!("YARN_AM_SPLIT_URL's address {:?}", split.webhdfs))?;
        let token = yarn_am_wire::credentials::AmAuth::from_container().webhdfs;
        let has_token = token.is_some();
        let client = match token {
            Some(auth) => client.with_auth(auth),
            None => client,
        };
        let here = this_host().await;
        let machine = SplitRecords::new(args.format, split.offset, split.length, args.max_line_bytes);
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
        let reader = Reader {
            client: &client,
            path: &split.path,
            here: &here,
            idle: timeout,
        };
        let done = reader.read(machine, &mut out).await;
        let done = done.and_then(|s| out.flush().map(|_| s).map_err(SplitReadError::Output));
        match done {
            Ok(stats) => {
                eprintln!(
                    "yarn-am split cat: {} {}+{}: {} bytes read, {} written, {} of {} requests to a local DataNode, {} retried",
                    split.path, split.offset, split.length, stats.read, stats.written,
                    stats.local_requests, stats.requests, stats.retries
                );
                Ok(())
            }
            // The reader downstream stopped (`| head`): not our failure.
            Err(SplitReadError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) if has_token => Err(e.into()),
            // Say how we asked: on a Kerberized cluster that is the likely cause.
            Err(e) => Err(anyhow::Error::new(e).context(format!(
                "reading as {user} (user.name): the container's token file holds no HDFS \
                 delegation token"
            ))),
        }
    })
}

/// This host as the NameNode's block locations may name it: `NM_HOST` and its addresses.
async fn this_host() -> HostMap {
    let Ok(host) = std::env::var("NM_HOST") else {
        return HostMap::default();
    };
    let ips = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::lookup_host((host.as_str(), 0)),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .map(|a| a.map(|a| a.ip().to_string()).collect())
    .unwrap_or_default();
    HostMap::new(&[(host, ips)])
}

/// What one split's read did (the summary line on stderr).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReadStats {
    pub read: u64,
    pub written: u64,
    pub requests: u32,
    pub local_requests: u32,
    pub retries: u32,
}

/// The indexes of `block`'s replicas in the order to try them: those on this host first,
/// then the NameNode's order.
pub fn replica_order(block: &BlockLocation, here: &HostMap) -> Vec<usize> {
    let local = |i: &usize| {
        let name = block.names.get(*i).map_or("", String::as_str);
        here.node_of(&block.hosts[*i], name).is_some()
    };
    let (mut first, rest): (Vec<usize>, Vec<usize>) = (0..block.hosts.len()).partition(local);
    first.extend(rest);
    first
}

/// How the NameNode's `excludedatanodes` names replica `i`: its transfer address.
fn replica_id(block: &BlockLocation, i: usize) -> String {
    block
        .names
        .get(i)
        .cloned()
        .unwrap_or_else(|| block.hosts[i].clone())
}

/// One split's read: where from, as whom, and how long a DataNode may stay silent.
pub struct Reader<'a> {
    pub client: &'a WebHdfs,
    pub path: &'a str,
    /// This host, to find local replicas.
    pub here: &'a HostMap,
    /// Longest wait for the next bytes of a read before its DataNode is taken for dead (a
    /// host that vanished sends no reset; the request's own timeout is as long as the
    /// block takes at a slow rate).
    pub idle: Duration,
}

impl Reader<'_> {
    /// Feeds `machine` the bytes of the file from its position until it is done, writing
    /// what it hands back to `out`.
    pub async fn read(
        &self,
        mut machine: SplitRecords,
        out: &mut impl Write,
    ) -> Result<ReadStats, SplitReadError> {
        let path = self.path;
        let hdfs = |source| SplitReadError::Hdfs {
            path: path.to_string(),
            source: Box::new(source),
        };
        let file_len = self.client.status(path).await.map_err(hdfs)?.length;
        let mut stats = ReadStats::default();
        let mut blocks: Vec<BlockLocation> = Vec::new();
        while !machine.is_done() {
            let pos = machine.position();
            if pos >= file_len {
                machine.end_of_file();
                break;
            }
            let holds = |b: &BlockLocation| b.offset <= pos && pos < b.offset + b.length;
            if !blocks.iter().any(holds) {
                let want = machine.end().saturating_sub(pos).max(LOCATIONS_WINDOW);
                blocks = self
                    .client
                    .block_locations(path, pos, want.min(file_len - pos))
                    .await
                    .map_err(hdfs)?;
            }
            let Some(block) = blocks.iter().find(|b| holds(b)).cloned() else {
                return Err(SplitReadError::NoBlock {
                    path: path.to_string(),
                    offset: pos,
                    length: file_len,
                });
            };
            self.read_block(&block, &mut machine, out, &mut stats)
                .await?;
        }
        Ok(stats)
    }

    /// Reads from `block` what `machine` wants of it, trying its replicas in
    /// [`replica_order`], each [`ROUNDS`] times at most.
    async fn read_block(
        &self,
        block: &BlockLocation,
        machine: &mut SplitRecords,
        out: &mut impl Write,
        stats: &mut ReadStats,
    ) -> Result<(), SplitReadError> {
        let block_end = block.offset + block.length;
        let order = replica_order(block, self.here);
        let mut last: Option<Box<WebHdfsError>> = None;
        let mut attempts = 0;
        for round in 0..ROUNDS {
            if round > 0 {
                tokio::time::sleep(ROUND_PAUSE).await;
            }
            for &r in &order {
                let pos = machine.position();
                let to = block_end.min(pos + machine.wanted(PAST_END_STEP));
                if machine.is_done() || to <= pos {
                    return Ok(());
                }
                let exclude: Vec<String> = (0..block.hosts.len())
                    .filter(|&i| i != r)
                    .map(|i| replica_id(block, i))
                    .collect();
                attempts += 1;
                if attempts > 1 {
                    stats.retries += 1;
                }
                match self.read_range(to, &exclude, machine, out, stats).await {
                    Ok(dn) => {
                        stats.requests += 1;
                        let host = dn.split(':').next().unwrap_or(&dn);
                        stats.local_requests += u32::from(self.here.node_of(host, &dn).is_some());
                        return Ok(());
                    }
                    Err(ReadFailure::Fatal(e)) => return Err(e),
                    Err(ReadFailure::Replica(e)) => {
                        warn!(
                            "reading {} at {} from replica {} ({}) failed, trying the next: {e}",
                            self.path,
                            machine.position(),
                            block.hosts[r],
                            replica_id(block, r)
                        );
                        last = Some(e);
                    }
                }
            }
        }
        let tried: Vec<&str> = order.iter().map(|&i| block.hosts[i].as_str()).collect();
        Err(SplitReadError::NoReplica {
            path: self.path.to_string(),
            block_offset: block.offset,
            block_length: block.length,
            tried: tried.join(", "),
            attempts,
            last: last.map_or_else(|| "none".to_string(), |e| e.to_string()),
        })
    }

    /// One request: from `machine`'s position to `to`, from the replica the NameNode picks
    /// with `exclude` left out, fed to `machine` as it arrives. `Ok` with the DataNode that
    /// served it (`host:port`) once the range is read or the machine is done.
    async fn read_range(
        &self,
        to: u64,
        exclude: &[String],
        machine: &mut SplitRecords,
        out: &mut impl Write,
        stats: &mut ReadStats,
    ) -> Result<String, ReadFailure> {
        let (path, pos) = (self.path, machine.position());
        let replica = |e| ReadFailure::Replica(Box::new(e));
        let mut read = self
            .client
            .open_range(path, pos, to - pos, exclude)
            .await
            .map_err(replica)?;
        let url = read.url().clone();
        let stopped = |why: String| {
            replica(WebHdfsError::BadReply {
                op: "OPEN",
                url: url.clone(),
                reason: why,
            })
        };
        loop {
            let chunk = match tokio::time::timeout(self.idle, read.chunk()).await {
                Ok(chunk) => chunk.map_err(replica)?,
                Err(_) => {
                    return Err(stopped(format!(
                        "no byte for {:?} at byte {} of {path}",
                        self.idle,
                        machine.position()
                    )))
                }
            };
            let Some(chunk) = chunk else { break };
            stats.read += chunk.len() as u64;
            let records = machine.feed(&chunk).map_err(|source| {
                ReadFailure::Fatal(SplitReadError::Records {
                    path: path.to_string(),
                    source,
                })
            })?;
            out.write_all(records)
                .map_err(|e| ReadFailure::Fatal(SplitReadError::Output(e)))?;
            stats.written += records.len() as u64;
            if machine.is_done() {
                return Ok(read.datanode.clone());
            }
        }
        if machine.position() < to {
            // The reply ended early: a DataNode that stopped sending, whatever it said.
            return Err(stopped(format!(
                "the reply ended at byte {} of {path}, before {to}",
                machine.position()
            )));
        }
        Ok(read.datanode.clone())
    }
}

enum ReadFailure {
    /// This replica failed; another may do.
    Replica(Box<WebHdfsError>),
    /// No replica can help (the records, stdout).
    Fatal(SplitReadError),
}
