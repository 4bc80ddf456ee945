//! Files and their block locations in, splits and tasks out.
//!
//! A split's preferred hosts are the hosts holding most of its bytes (with one split per
//! block: that block's replica hosts), named as the NodeManagers name themselves, so that the
//! scheduler's NODE_LOCAL level means "a replica is on this node" (MapReduce's
//! `getSplitHosts` and Spark's preferred locations do the same).

use std::collections::HashMap;

use super::records::RecordFormat;
use super::{InputsError, InputsSpec, SplitBy};
use crate::driver::job::TaskSpec;

/// A file an input path stands for, as a listing reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    pub path: String,
    pub length: u64,
}

/// One block of a file: its byte range and the (NodeManager) hosts holding a replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub offset: u64,
    pub length: u64,
    pub hosts: Vec<String>,
}

/// A byte range of one file, run as one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub path: String,
    pub offset: u64,
    pub length: u64,
    pub hosts: Vec<String>,
}

/// Most splits (tasks) the inputs of one job may make: the tasks travel in the spec file and
/// sit in the AM's memory (a few hundred bytes each).
pub const MAX_SPLITS: usize = 1_000_000;

/// Cuts one file into splits. `blocks` must be sorted by offset and cover the file without
/// gaps or overlaps (as HDFS reports them); anything else is [`InputsError::BadBlocks`].
pub fn split_file(
    file: &InputFile,
    blocks: &[Block],
    how: SplitBy,
    split_size: Option<u64>,
) -> Result<Vec<Split>, InputsError> {
    if file.length == 0 {
        return Err(InputsError::EmptyFile(file.path.clone()));
    }
    check_cover(file, blocks)?;
    let ranges: Vec<(u64, u64)> = match how {
        SplitBy::Block => blocks.iter().map(|b| (b.offset, b.length)).collect(),
        SplitBy::File => vec![(0, file.length)],
        SplitBy::Size => {
            let size = split_size
                .filter(|&s| s > 0)
                .ok_or(InputsError::NoSplitSize)?;
            (0..file.length.div_ceil(size))
                .map(|i| {
                    let off = i * size;
                    (off, size.min(file.length - off))
                })
                .collect()
        }
    };
    Ok(ranges
        .into_iter()
        .map(|(offset, length)| Split {
            path: file.path.clone(),
            offset,
            length,
            hosts: preferred_hosts(offset, length, blocks),
        })
        .collect())
}

fn check_cover(file: &InputFile, blocks: &[Block]) -> Result<(), InputsError> {
    let bad = |why: String| {
        Err(InputsError::BadBlocks {
            path: file.path.clone(),
            why,
        })
    };
    let mut next = 0u64;
    for b in blocks {
        if b.offset != next {
            return bad(format!(
                "a block starts at {} where {next} was expected",
                b.offset
            ));
        }
        if b.length == 0 {
            return bad(format!("the block at {} is empty", b.offset));
        }
        next = match b.offset.checked_add(b.length) {
            Some(n) => n,
            None => return bad("a block ends past 2^64".into()),
        };
    }
    if next != file.length {
        return bad(format!(
            "the blocks end at {next} but the file has {} bytes",
            file.length
        ));
    }
    Ok(())
}

/// The hosts holding the most bytes of `[offset, offset + length)` (ties all kept, sorted by
/// name so the choice is stable). `blocks` are sorted by offset; only those overlapping the
/// range are looked at (found by binary search), so a block-sized split costs O(log n).
pub fn preferred_hosts(offset: u64, length: u64, blocks: &[Block]) -> Vec<String> {
    let end = offset.saturating_add(length);
    let first = blocks.partition_point(|b| b.offset + b.length <= offset);
    let mut bytes: HashMap<&str, u64> = HashMap::new();
    for b in blocks[first..].iter().take_while(|b| b.offset < end) {
        let overlap = (b.offset + b.length).min(end) - b.offset.max(offset);
        for h in &b.hosts {
            *bytes.entry(h.as_str()).or_default() += overlap;
        }
    }
    let Some(&most) = bytes.values().max() else {
        return Vec::new();
    };
    let mut hosts: Vec<String> = bytes
        .into_iter()
        .filter(|&(_, n)| n == most)
        .map(|(h, _)| h.to_string())
        .collect();
    hosts.sort();
    hosts
}

/// DataNode names to NodeManager host names. HDFS names a replica's DataNode by its host
/// name and `ip:port`; YARN names a node by its NodeManager's host. A DataNode is mapped to
/// the NodeManager with the same host name (or the same short name: `nm1.example.com` and
/// `nm1`), else to the one NodeManager whose address is the DataNode's IP. DataNodes on
/// hosts without a NodeManager map to nothing: no task can run beside them.
#[derive(Debug, Clone, Default)]
pub struct HostMap {
    by_name: HashMap<String, String>,
    by_short: HashMap<String, Option<String>>,
    by_ip: HashMap<String, Option<String>>,
}

fn short(host: &str) -> String {
    host.split('.').next().unwrap_or(host).to_ascii_lowercase()
}

impl HostMap {
    /// `nodes`: each NodeManager's host name and the IP addresses it resolves to.
    pub fn new(nodes: &[(String, Vec<String>)]) -> HostMap {
        let mut m = HostMap::default();
        for (name, ips) in nodes {
            m.by_name.insert(name.to_ascii_lowercase(), name.clone());
            // A short name or IP shared by two NodeManagers identifies neither.
            m.by_short
                .entry(short(name))
                .and_modify(|v| *v = None)
                .or_insert_with(|| Some(name.clone()));
            for ip in ips {
                m.by_ip
                    .entry(ip.clone())
                    .and_modify(|v| {
                        if v.as_deref() != Some(name) {
                            *v = None
                        }
                    })
                    .or_insert_with(|| Some(name.clone()));
            }
        }
        m
    }

    /// The NodeManager host of a DataNode known as `host` at `addr` (`ip:port`, may be empty).
    pub fn node_of(&self, host: &str, addr: &str) -> Option<String> {
        if let Some(n) = self.by_name.get(&host.to_ascii_lowercase()) {
            return Some(n.clone());
        }
        if let Some(Some(n)) = self.by_short.get(&short(host)) {
            return Some(n.clone());
        }
        let ip = addr.rsplit_once(':').map_or(addr, |(ip, _)| ip);
        self.by_ip.get(ip).cloned().flatten()
    }
}

/// Percent-encodes a path for a URL, keeping `/` and the unreserved characters.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Single-quotes a value for bash.
fn shell_quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', r"'\''"))
}

/// Replaces each `{split.<key>}` in `command` by its value shell-quoted, so that every
/// placeholder is one shell word whatever the value holds (HDFS names may contain `;`, `'`,
/// `$`, spaces). One pass: a value is never scanned again for placeholders. A placeholder
/// inside the job's own quotes would end them, so jobs must not quote placeholders (the
/// README says so); `{split.url}'&user.name=me'` joins a quoted suffix to the same word.
/// Values in `commands` are shell text already quoted word by word (`{split.cat}`), put in
/// as they are.
fn expand_placeholders(
    command: &str,
    values: &[(&str, String)],
    commands: &[(&str, String)],
) -> String {
    let mut out = String::with_capacity(command.len());
    let mut rest = command;
    while let Some(at) = rest.find("{split.") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let find = |set: &[(&str, String)], quote: bool| {
            set.iter().find_map(|(key, value)| {
                let token = format!("{{split.{key}}}");
                tail.starts_with(&token).then(|| {
                    let v = if quote {
                        shell_quote(value)
                    } else {
                        value.clone()
                    };
                    (token.len(), v)
                })
            })
        };
        match find(values, true).or_else(|| find(commands, false)) {
            Some((len, value)) => {
                out.push_str(&value);
                rest = &tail[len..];
            }
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The environment variable the executor sets for its tasks: the path of its own binary,
/// which `{split.cat}` runs (the container's `./yarn-am` when it is not set).
pub const BIN_ENV: &str = "YARN_AM_EXE";

/// The command `{split.cat}` stands for: `yarn-am split cat` in `format`, the split taken
/// from the task's environment. Every word quoted; the binary's path in double quotes so
/// that the variable expands.
pub fn cat_command(format: RecordFormat) -> String {
    format!(
        "\"${{{BIN_ENV}:-./yarn-am}}\" 'split' 'cat' '--format' '{}'",
        format.as_str()
    )
}

/// The task of split number `index`. `webhdfs_base` (e.g. `http://rm:9870`) makes the
/// split's URL: a WebHDFS OPEN of exactly its bytes, without any credential (the task adds
/// `&user.name=` or its own authentication).
pub fn task_for(spec: &InputsSpec, index: usize, split: &Split, webhdfs_base: &str) -> TaskSpec {
    let url = format!(
        "{}/webhdfs/v1{}?op=OPEN&offset={}&length={}",
        webhdfs_base.trim_end_matches('/'),
        encode_path(&split.path),
        split.offset,
        split.length
    );
    let values = [
        ("url", url),
        ("path", split.path.clone()),
        ("offset", split.offset.to_string()),
        ("length", split.length.to_string()),
        ("index", index.to_string()),
        ("format", spec.format.as_str().to_string()),
    ];
    let command = expand_placeholders(&spec.command, &values, &[("cat", cat_command(spec.format))]);
    let mut env = String::from("export");
    for (key, value) in &values {
        env.push_str(&format!(
            " YARN_AM_SPLIT_{}={}",
            key.to_ascii_uppercase(),
            shell_quote(value)
        ));
    }
    TaskSpec {
        id: format!("{}-{index:05}", spec.id_prefix),
        command: format!("{env}; {command}"),
        preferred_hosts: split.hosts.clone(),
        preferred_racks: Vec::new(),
        cpus: spec.cpus,
        // The job's own `timeout_ms` applies to split tasks.
        timeout_ms: None,
        kind: None,
    }
}

/// Every split of every file, in order, refusing more than `limit` splits (checked as they
/// are made, so a huge listing fails before its tasks are all built).
pub fn split_all<'a>(
    files: impl IntoIterator<Item = (&'a InputFile, &'a [Block])>,
    how: SplitBy,
    split_size: Option<u64>,
    limit: usize,
) -> Result<Vec<Split>, InputsError> {
    let mut out = Vec::new();
    for (file, blocks) in files {
        out.extend(split_file(file, blocks, how, split_size)?);
        if out.len() > limit {
            return Err(InputsError::TooManySplits {
                count: out.len(),
                limit,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn blocks(sizes: &[u64], hosts: &[&[&str]]) -> Vec<Block> {
        let mut off = 0;
        sizes
            .iter()
            .zip(hosts)
            .map(|(&len, h)| {
                let b = Block {
                    offset: off,
                    length: len,
                    hosts: h.iter().map(|s| s.to_string()).collect(),
                };
                off += len;
                b
            })
            .collect()
    }

    fn file(len: u64) -> InputFile {
        InputFile {
            path: "/d/f".into(),
            length: len,
        }
    }

    #[test]
    fn one_split_per_block_prefers_its_replica_hosts() {
        let b = blocks(
            &[4, 4, 2],
            &[&["nm1", "nm2"], &["nm2", "nm3"], &["nm3", "nm1"]],
        );
        let s = split_file(&file(10), &b, SplitBy::Block, None).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!((s[1].offset, s[1].length), (4, 4));
        assert_eq!(s[1].hosts, ["nm2", "nm3"]);
        assert_eq!(s[2].hosts, ["nm1", "nm3"]);
    }

    #[test]
    fn a_split_over_blocks_prefers_the_hosts_with_most_of_its_bytes() {
        let b = blocks(
            &[4, 4, 2],
            &[&["nm1", "nm2"], &["nm2", "nm3"], &["nm3", "nm1"]],
        );
        let s = split_file(&file(10), &b, SplitBy::File, None).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].hosts, ["nm2"]); // 8 bytes; nm1 and nm3 hold 6
        let s = split_file(&file(10), &b, SplitBy::Size, Some(6)).unwrap();
        assert_eq!(
            s.iter().map(|s| (s.offset, s.length)).collect::<Vec<_>>(),
            [(0, 6), (6, 4)]
        );
        assert_eq!(s[0].hosts, ["nm2"]); // 6 of 6 bytes; nm1 4, nm3 2
        assert_eq!(s[1].hosts, ["nm3"]); // 4 of 4; nm2 2, nm1 2
    }

    #[test]
    fn empty_files_and_blocks_not_covering_the_file_are_errors() {
        assert_eq!(
            split_file(&file(0), &[], SplitBy::Block, None),
            Err(InputsError::EmptyFile("/d/f".into()))
        );
        let b = blocks(&[4, 4], &[&["a"], &["b"]]);
        let e = split_file(&file(10), &b, SplitBy::Block, None).unwrap_err();
        assert!(e.to_string().contains("end at 8"), "{e}");
        let mut gap = b.clone();
        gap[1].offset = 5;
        assert!(split_file(&file(9), &gap, SplitBy::Block, None).is_err());
    }

    #[test]
    fn too_many_splits_are_refused() {
        let f = file(10);
        let b = blocks(&[10], &[&["a"]]);
        let e = split_all([(&f, b.as_slice())], SplitBy::Size, Some(1), 5).unwrap_err();
        assert_eq!(
            e,
            InputsError::TooManySplits {
                count: 10,
                limit: 5
            }
        );
    }

    #[test]
    fn datanodes_map_to_nodemanagers_by_name_short_name_or_ip() {
        let m = HostMap::new(&[
            ("nm1".into(), vec!["10.0.0.1".into()]),
            ("nm2.example.com".into(), vec!["10.0.0.2".into()]),
            ("nm3".into(), vec!["127.0.0.1".into()]),
            ("nm4".into(), vec!["127.0.0.1".into()]),
        ]);
        assert_eq!(m.node_of("NM1", "").as_deref(), Some("nm1"));
        assert_eq!(
            m.node_of("nm2", "1.2.3.4:9866").as_deref(),
            Some("nm2.example.com")
        );
        assert_eq!(m.node_of("dn-x", "10.0.0.1:9866").as_deref(), Some("nm1"));
        // An address two NodeManagers share names neither.
        assert_eq!(m.node_of("dn-y", "127.0.0.1:9866"), None);
        assert_eq!(m.node_of("elsewhere", ""), None);
    }

    #[test]
    fn a_task_gets_its_split_in_placeholders_and_environment() {
        let spec: InputsSpec = serde_json::from_str(
            r#"{"paths":["/d/*"],"command":"curl -s {split.url}'&user.name=me' | wc -l # {split.path} {split.offset}+{split.length}"}"#,
        )
        .unwrap();
        let split = Split {
            path: "/d/a b".into(),
            offset: 4,
            length: 6,
            hosts: vec!["nm2".into()],
        };
        let t = task_for(&spec, 7, &split, "http://rm:9870/");
        assert_eq!(t.id, "split-00007");
        assert_eq!(t.preferred_hosts, ["nm2"]);
        assert!(t.command.contains(
            "curl -s 'http://rm:9870/webhdfs/v1/d/a%20b?op=OPEN&offset=4&length=6''&user.name=me'"
        ));
        assert!(t.command.contains("# '/d/a b' '4'+'6'"), "{}", t.command);
        assert!(t.command.starts_with("export YARN_AM_SPLIT_URL='http://rm:9870/webhdfs/v1/d/a%20b?op=OPEN&offset=4&length=6' YARN_AM_SPLIT_PATH='/d/a b' YARN_AM_SPLIT_OFFSET='4' YARN_AM_SPLIT_LENGTH='6' YARN_AM_SPLIT_INDEX='7' YARN_AM_SPLIT_FORMAT='text'; "), "{}", t.command);
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "{}; echo \"$YARN_AM_SPLIT_PATH|$YARN_AM_SPLIT_LENGTH\"",
                t.command.split("; ").next().unwrap()
            ))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "/d/a b|6\n");
    }

    /// Unknown placeholders and lone braces are left alone (how each known one runs in a
    /// shell: `tests/split_task_commands.rs`).
    #[test]
    fn unknown_placeholders_and_lone_braces_are_left_alone() {
        let values = [("index", "1".to_string())];
        assert_eq!(
            expand_placeholders("{split.x} {split.index}{ {split.", &values, &[]),
            "{split.x} '1'{ {split."
        );
    }

    /// `{split.cat}` is the reading command, word by word, running the executor's binary
    /// (`YARN_AM_EXE`) or the container's `./yarn-am`; `{split.format}` the job's format.
    #[test]
    fn split_cat_expands_to_the_reading_command() {
        let spec: InputsSpec = serde_json::from_str(
            r#"{"paths":["/d"],"format":"bytes","command":"{split.cat} {split.format}"}"#,
        )
        .unwrap();
        let split = Split {
            path: "/d/f".into(),
            offset: 0,
            length: 1,
            hosts: vec![],
        };
        let t = task_for(&spec, 0, &split, "http://rm:9870");
        assert!(t.command.ends_with(
            r#"; "${YARN_AM_EXE:-./yarn-am}" 'split' 'cat' '--format' 'bytes' 'bytes'"#
        ));
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&t.command)
            .env(BIN_ENV, "/bin/echo")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "split cat --format bytes bytes\n"
        );
    }

    proptest! {
        /// Whatever the block layout and the way of splitting, the splits of a file cover it
        /// exactly, in order, and each prefers only hosts holding some of its bytes.
        #[test]
        fn splits_cover_the_file_and_prefer_hosts_holding_their_bytes(
            sizes in proptest::collection::vec(1u64..50, 1..20),
            host_bits in proptest::collection::vec(0u8..8, 20),
            how in 0..3u8,
            size in 1u64..60,
        ) {
            let names = ["nm1", "nm2", "nm3"];
            let hosts: Vec<Vec<&str>> = host_bits
                .iter()
                .map(|bits| names.iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, n)| *n).collect())
                .collect();
            let refs: Vec<&[&str]> = hosts.iter().map(|h| h.as_slice()).collect();
            let b = blocks(&sizes, &refs);
            let total: u64 = sizes.iter().sum();
            let how = [SplitBy::Block, SplitBy::File, SplitBy::Size][how as usize];
            let s = split_file(&file(total), &b, how, Some(size)).unwrap();
            let mut next = 0;
            for sp in &s {
                prop_assert_eq!(sp.offset, next);
                prop_assert!(sp.length > 0);
                next += sp.length;
                for h in &sp.hosts {
                    prop_assert!(b.iter().any(|bl| bl.hosts.contains(h)
                        && bl.offset < sp.offset + sp.length
                        && sp.offset < bl.offset + bl.length));
                }
            }
            prop_assert_eq!(next, total);
        }
    }
}
