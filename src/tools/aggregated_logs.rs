//! `yarn-am logs` after log aggregation: an ended app's container logs from the files the
//! NodeManagers wrote to HDFS, fetched through WebHDFS with the CLI's own authentication
//! and parsed by [`yarn_client::logs::aggregated`].
//!
//! Where they are comes from the Hadoop configuration as the NodeManagers read it
//! (`yarn.nodemanager.remote-app-log-dir`, the suffixes); the app's owner from the RM. The
//! RM's `logAggregationStatus` says when the NodeManagers are done: until then the folder
//! may miss nodes or hold `.tmp` files, so the caller waits on it (bounded).

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use yarn_client::conf::Configuration;
use yarn_client::logs::aggregated::{self, AggregatedLog};
use yarn_client::rest::RmRest;
use yarn_client::webhdfs::{FileType, WebHdfs};

use crate::cli::LogsArgs;
use crate::cluster::hdfs_listing::list_dir;
use crate::cluster::rm::{http_auth, user_name};

pub const REMOTE_DIR_KEY: &str = "yarn.nodemanager.remote-app-log-dir";
pub const REMOTE_SUFFIX_KEY: &str = "yarn.nodemanager.remote-app-log-dir-suffix";
pub const TFILE_SUFFIX_KEY: &str = "yarn.log-aggregation.TFile.remote-app-log-dir-suffix";
/// yarn-default.xml's values.
const DEFAULT_REMOTE_DIR: &str = "/tmp/logs";
const DEFAULT_SUFFIX: &str = "logs";
/// A node's file is read whole into memory: above this, refuse and name `yarn logs`.
pub const MAX_NODE_FILE: u64 = 512 * 1024 * 1024;
/// How often the RM is asked whether aggregation is done, and the progress line repeated.
const POLL_EVERY: Duration = Duration::from_secs(1);
const SAY_EVERY: Duration = Duration::from_secs(10);

/// The remote folder's path on HDFS and the two suffixes, from the Hadoop configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLayout {
    pub root: String,
    /// The TFile controller's suffix (`logs-tfile` by default).
    pub tfile_suffix: String,
    /// The NodeManager's suffix, the one folders before Hadoop 3.3 used (`logs`).
    pub suffix: String,
}

impl RemoteLayout {
    pub fn from_conf(conf: Option<&Configuration>) -> anyhow::Result<RemoteLayout> {
        let get = |key: &str| -> anyhow::Result<Option<String>> {
            Ok(match conf {
                Some(c) => c.get_trimmed(key)?.filter(|v| !v.is_empty()),
                None => None,
            })
        };
        let root = get(REMOTE_DIR_KEY)?.unwrap_or_else(|| DEFAULT_REMOTE_DIR.into());
        let suffix = get(REMOTE_SUFFIX_KEY)?.unwrap_or_else(|| DEFAULT_SUFFIX.into());
        let tfile_suffix = get(TFILE_SUFFIX_KEY)?.unwrap_or_else(|| format!("{suffix}-tfile"));
        Ok(RemoteLayout {
            root: hdfs_path(&root)?,
            tfile_suffix,
            suffix,
        })
    }

    /// The folders an app's files may be in, newest layout first.
    pub fn app_dirs(&self, user: &str, app_id: &str) -> Vec<String> {
        let mut dirs: Vec<String> =
            aggregated::app_dir(&self.root, user, &self.tfile_suffix, app_id)
                .into_iter()
                .collect();
        for s in [&self.tfile_suffix, &self.suffix] {
            let d = aggregated::older_app_dir(&self.root, user, s, app_id);
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        dirs
    }
}

/// The path part of `yarn.nodemanager.remote-app-log-dir`, which may be a whole URI
/// (`hdfs://nn:8020/tmp/logs`) when the default file system is not HDFS. WebHDFS reaches
/// the cluster's default NameNode only, so another scheme is refused.
pub fn hdfs_path(value: &str) -> anyhow::Result<String> {
    let Some((scheme, rest)) = value.split_once("://") else {
        return Ok(value.to_string());
    };
    if !matches!(scheme, "hdfs" | "viewfs" | "webhdfs" | "swebhdfs") {
        bail!("{REMOTE_DIR_KEY} is {value}: yarn-am reads aggregated logs from HDFS only");
    }
    Ok(match rest.find('/') {
        Some(i) => rest[i..].to_string(),
        None => "/".to_string(),
    })
}

/// A WebHDFS client as `submit` makes one: `--webhdfs` / `YARN_AM_WEBHDFS`, else the
/// NameNode web address of the Hadoop configuration; SPNEGO on a Kerberos cluster.
pub fn webhdfs_client(args: &LogsArgs, conf: Option<&Configuration>) -> anyhow::Result<WebHdfs> {
    let address = match (&args.webhdfs, conf) {
        (Some(a), _) => a.clone(),
        (None, Some(c)) => yarn_client::conf::hdfs::namenode_web_url(c)?,
        (None, None) => bail!(
            "reading aggregated logs needs the NameNode's web address: --webhdfs, \
             YARN_AM_WEBHDFS or HADOOP_CONF_DIR"
        ),
    };
    let rm = &args.app.rm;
    Ok(
        WebHdfs::new(&address, &user_name(rm), Duration::from_secs(rm.timeout))
            .with_context(|| format!("setting up the WebHDFS client for {address}"))?
            .with_auth(http_auth(rm)?),
    )
}

/// Whether the RM says aggregation is on for the app (it reports `DISABLED` when off).
pub fn aggregation_on(status: &str) -> bool {
    !matches!(status, "" | "DISABLED")
}

/// Whether the NodeManagers are done with the app's logs, well or not.
pub fn aggregation_done(status: &str) -> bool {
    matches!(status, "SUCCEEDED" | "FAILED" | "TIME_OUT")
}

/// Waits up to `limit` for the RM to say aggregation is done, with a progress line on
/// stderr; the last status seen.
pub async fn wait_for_aggregation(
    rest: &RmRest,
    app: &str,
    mut status: String,
    limit: Duration,
) -> anyhow::Result<String> {
    let start = Instant::now();
    let mut said: Option<Instant> = None;
    while !aggregation_done(&status) && start.elapsed() < limit {
        if said.is_none_or(|t| t.elapsed() >= SAY_EVERY) {
            eprintln!(
                "yarn-am: waiting for the NodeManagers to aggregate the logs of {app} \
                 ({status}, {}s of at most {}s)",
                start.elapsed().as_secs(),
                limit.as_secs()
            );
            said = Some(Instant::now());
        }
        tokio::time::sleep(POLL_EVERY).await;
        status = rest
            .app(app)
            .await
            .with_context(|| format!("asking the RM about {app}"))?
            .log_aggregation_status;
    }
    Ok(status)
}

/// One node's aggregated file, parsed.
pub struct NodeFile {
    /// Its HDFS path (named in messages).
    pub path: String,
    pub log: AggregatedLog,
}

/// Reads and parses every finished node file of `app_id` (owned by `owner`); the folder
/// read, or an error naming the folders tried when none exists.
pub async fn read_app(
    client: &WebHdfs,
    layout: &RemoteLayout,
    owner: &str,
    app_id: &str,
) -> anyhow::Result<(String, Vec<NodeFile>)> {
    let dirs = layout.app_dirs(owner, app_id);
    for dir in &dirs {
        let mut names = Vec::new();
        let found = list_dir(client, dir, |e| {
            if e.kind == FileType::File {
                names.push((e.path_suffix, e.length));
            }
        })
        .await
        .with_context(|| format!("listing {dir} through WebHDFS"))?;
        if !found {
            continue;
        }
        let mut out = Vec::new();
        for (name, length) in names {
            if !aggregated::is_node_file(&name) {
                continue;
            }
            let path = format!("{dir}/{name}");
            if length > MAX_NODE_FILE {
                bail!(
                    "{path} holds {length} bytes, more than yarn-am reads into memory \
                     ({MAX_NODE_FILE}); `yarn logs -applicationId {app_id}` streams it"
                );
            }
            let bytes = read_whole(client, &path, length)
                .await
                .with_context(|| format!("reading {path} through WebHDFS"))?;
            let log = aggregated::parse(&bytes).with_context(|| {
                format!(
                    "{path} is not a readable aggregated log file (yarn-am reads the TFile \
                     format; IndexedFormat files are not read yet)"
                )
            })?;
            out.push(NodeFile { path, log });
        }
        return Ok((dir.clone(), out));
    }
    bail!(
        "no aggregated logs of {app_id} on HDFS (looked in {})",
        dirs.join(", ")
    )
}

/// The whole file `path` of `length` bytes (never more are kept).
async fn read_whole(client: &WebHdfs, path: &str, length: u64) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(length.min(8 << 20) as usize);
    if length == 0 {
        return Ok(out);
    }
    let mut read = client.open_range(path, 0, length, &[]).await?;
    while let Some(chunk) = read.chunk().await? {
        if out.len() as u64 + chunk.len() as u64 > length {
            bail!("the DataNode sent more than the file's {length} bytes");
        }
        out.extend_from_slice(&chunk);
    }
    if (out.len() as u64) < length {
        bail!(
            "the DataNode's reply ended after {} of {length} bytes",
            out.len()
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_follows_the_configuration_and_its_defaults() {
        let l = RemoteLayout::from_conf(None).unwrap();
        assert_eq!(
            l,
            RemoteLayout {
                root: "/tmp/logs".into(),
                tfile_suffix: "logs-tfile".into(),
                suffix: "logs".into()
            }
        );
        assert_eq!(
            l.app_dirs("alice", "application_1_0042"),
            [
                "/tmp/logs/alice/bucket-logs-tfile/0042/application_1_0042",
                "/tmp/logs/alice/logs-tfile/application_1_0042",
                "/tmp/logs/alice/logs/application_1_0042"
            ]
        );
        let mut c = Configuration::new();
        c.set(REMOTE_DIR_KEY, "hdfs://rm:8020/app-logs");
        c.set(REMOTE_SUFFIX_KEY, "agg");
        let l = RemoteLayout::from_conf(Some(&c)).unwrap();
        assert_eq!(
            (l.root.as_str(), l.tfile_suffix.as_str()),
            ("/app-logs", "agg-tfile")
        );
        c.set(TFILE_SUFFIX_KEY, "tf");
        let l = RemoteLayout::from_conf(Some(&c)).unwrap();
        assert_eq!(l.tfile_suffix, "tf");
        c.set(REMOTE_DIR_KEY, "s3a://bucket/logs");
        let err = RemoteLayout::from_conf(Some(&c)).unwrap_err().to_string();
        assert!(err.contains("HDFS only"), "{err}");
    }

    #[test]
    fn aggregation_states() {
        assert!(!aggregation_on("DISABLED") && !aggregation_on(""));
        assert!(aggregation_on("NOT_START") && aggregation_on("SUCCEEDED"));
        for s in ["SUCCEEDED", "FAILED", "TIME_OUT"] {
            assert!(aggregation_done(s));
        }
        for s in ["NOT_START", "RUNNING", "RUNNING_WITH_FAILURE"] {
            assert!(!aggregation_done(s));
        }
    }
}
