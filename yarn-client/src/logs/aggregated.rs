//! YARN's aggregated log file (the `TFile` log aggregation format), free of I/O.
//!
//! When an application ends, each NodeManager that ran its containers writes one file to
//! `{yarn.nodemanager.remote-app-log-dir}/{user}/bucket-{suffix}-tfile/{app number % 10000,
//! four digits}/{app id}/{node host}_{node port}` (Hadoop 3.3 and later; before, without the
//! `bucket-` and number folders): a [TFile](super::tfile) whose entries are
//!
//! - `VERSION`: a big-endian `i32` (1);
//! - `APPLICATION_OWNER`: the user, and `APPLICATION_ACL`: pairs of access type and ACL;
//! - one entry per container: for each of its log files, the file's name, its length as
//!   decimal text, then that many bytes.
//!
//! Keys and the strings inside values are Java's `writeUTF`: a big-endian `u16` length and
//! modified UTF-8 (the same as UTF-8 for the names YARN writes). Facts from Hadoop's
//! `AggregatedLogFormat` (`LogWriter`, `LogReader`, `LogValue.write`).

use std::collections::BTreeMap;

use super::tfile::{Cursor, TFile, TFileError};

const VERSION_KEY: &str = "VERSION";
const OWNER_KEY: &str = "APPLICATION_OWNER";
const ACL_KEY: &str = "APPLICATION_ACL";

/// What was malformed in an aggregated log file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AggregatedLogError {
    #[error("the TFile container: {0}")]
    TFile(#[from] TFileError),
    #[error("entry {index}: the key is not a Java UTF string ({source})")]
    Key { index: usize, source: TFileError },
    #[error("entry {key}: {source}")]
    Value { key: String, source: TFileError },
    #[error("container {container}, file {file:?}: length {length:?} is not a number")]
    FileLength {
        container: String,
        file: String,
        length: String,
    },
    #[error(
        "container {container}, file {file:?}: {length} bytes declared, {left} left in the entry"
    )]
    FileTruncated {
        container: String,
        file: String,
        length: u64,
        left: usize,
    },
}

/// One log file of a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    pub name: String,
    pub data: Vec<u8>,
}

/// The whole of one aggregated file: who owns the app and each container's log files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AggregatedLog {
    /// The `VERSION` entry, when present.
    pub version: Option<i32>,
    pub owner: Option<String>,
    /// (access type, ACL), as written.
    pub acls: Vec<(String, String)>,
    /// Container id -> its files in the order written (sorted by path on the NM).
    pub containers: BTreeMap<String, Vec<LogFile>>,
}

impl AggregatedLog {
    /// The file `name` of `container`, if this node's file has it.
    pub fn file(&self, container: &str, name: &str) -> Option<&LogFile> {
        self.containers
            .get(container)?
            .iter()
            .find(|f| f.name == name)
    }
}

/// Java's `DataInput.readUTF` (modified UTF-8 decoded as UTF-8, invalid bytes replaced).
fn read_utf(c: &mut Cursor<'_>) -> Result<String, TFileError> {
    let n = c.u16_be()?;
    Ok(String::from_utf8_lossy(c.take(n as u64)?).into_owned())
}

/// Parses an aggregated log file (its whole bytes).
pub fn parse(bytes: &[u8]) -> Result<AggregatedLog, AggregatedLogError> {
    let tfile = TFile::parse(bytes)?;
    let mut log = AggregatedLog::default();
    for (index, entry) in tfile.entries()?.into_iter().enumerate() {
        let key = read_utf(&mut Cursor::new(&entry.key, "entry key"))
            .map_err(|source| AggregatedLogError::Key { index, source })?;
        let mut v = Cursor::new(&entry.value, "entry value");
        let value_err = |source| AggregatedLogError::Value {
            key: key.clone(),
            source,
        };
        match key.as_str() {
            VERSION_KEY => log.version = Some(v.i32_be().map_err(value_err)?),
            OWNER_KEY => log.owner = Some(read_utf(&mut v).map_err(value_err)?),
            ACL_KEY => {
                while v.remaining() > 0 {
                    let access = read_utf(&mut v).map_err(value_err)?;
                    let acl = read_utf(&mut v).map_err(value_err)?;
                    log.acls.push((access, acl));
                }
            }
            _ => {
                let files = container_files(&key, &mut v)?;
                // A container written twice (rolling uploads) keeps both parts, in order.
                log.containers.entry(key).or_default().extend(files);
            }
        }
    }
    Ok(log)
}

/// A container entry's value: (name, length as text, bytes) until the value ends.
fn container_files(
    container: &str,
    v: &mut Cursor<'_>,
) -> Result<Vec<LogFile>, AggregatedLogError> {
    let value_err = |source| AggregatedLogError::Value {
        key: container.to_string(),
        source,
    };
    let mut files = Vec::new();
    while v.remaining() > 0 {
        let name = read_utf(v).map_err(value_err)?;
        let length = read_utf(v).map_err(value_err)?;
        let n: u64 = length.parse().map_err(|_| AggregatedLogError::FileLength {
            container: container.to_string(),
            file: name.clone(),
            length: length.clone(),
        })?;
        if n > v.remaining() as u64 {
            return Err(AggregatedLogError::FileTruncated {
                container: container.to_string(),
                file: name,
                length: n,
                left: v.remaining(),
            });
        }
        let data = v.take(n).map_err(value_err)?.to_vec();
        files.push(LogFile { name, data });
    }
    Ok(files)
}

/// The folder of `app_id`'s aggregated files as Hadoop 3.3+ writes it:
/// `{root}/{user}/bucket-{suffix}/{number % 10000 as %04d}/{app_id}`. `suffix` is the
/// TFile controller's (`yarn.log-aggregation.TFile.remote-app-log-dir-suffix`, else
/// `yarn.nodemanager.remote-app-log-dir-suffix` + `-tfile`). `None` for a malformed id.
pub fn app_dir(root: &str, user: &str, suffix: &str, app_id: &str) -> Option<String> {
    let number: u64 = app_id.rsplit('_').next()?.parse().ok()?;
    let root = root.trim_end_matches('/');
    Some(format!(
        "{root}/{user}/bucket-{suffix}/{:04}/{app_id}",
        number % 10000
    ))
}

/// The folder before Hadoop 3.3 (`{root}/{user}/{suffix}/{app_id}`), which 3.4's readers
/// still look in.
pub fn older_app_dir(root: &str, user: &str, suffix: &str, app_id: &str) -> String {
    let root = root.trim_end_matches('/');
    format!("{root}/{user}/{suffix}/{app_id}")
}

/// Whether a name in the app's folder is a finished node file: the NM writes
/// `{node}.tmp` and renames it when done.
pub fn is_node_file(name: &str) -> bool {
    !name.ends_with(".tmp") && !name.starts_with('.')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::logs::tfile::tests::build;

    fn utf(s: &str) -> Vec<u8> {
        let mut v = (s.len() as u16).to_be_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v
    }

    fn files(list: &[(&str, &[u8])]) -> Vec<u8> {
        let mut v = Vec::new();
        for (name, data) in list {
            v.extend(utf(name));
            v.extend(utf(&data.len().to_string()));
            v.extend_from_slice(data);
        }
        v
    }

    /// An aggregated file as the NM's `LogWriter` writes it: version, owner, ACLs, then one
    /// entry per container (values in chunks of 7 bytes, as a small buffer would cut them).
    fn aggregated(containers: &[(&str, Vec<u8>)], compression: &str) -> Vec<u8> {
        let chunked = |v: Vec<u8>| -> Vec<Vec<u8>> {
            if v.is_empty() {
                vec![v]
            } else {
                v.chunks(7).map(<[u8]>::to_vec).collect()
            }
        };
        let mut acl = utf("VIEW_APP");
        acl.extend(utf("alice "));
        acl.extend(utf("MODIFY_APP"));
        acl.extend(utf(" "));
        let mut entries = vec![
            (utf("VERSION"), vec![1i32.to_be_bytes().to_vec()]),
            (utf("APPLICATION_OWNER"), vec![utf("alice")]),
            (utf("APPLICATION_ACL"), chunked(acl)),
        ];
        for (id, value) in containers {
            entries.push((utf(id), chunked(value.clone())));
        }
        let (a, b) = entries.split_at(4);
        build(&[a.to_vec(), b.to_vec()], compression)
    }

    const C1: &str = "container_1700000000000_0007_01_000001";
    const C2: &str = "container_1700000000000_0007_01_000002";

    #[test]
    fn owner_acls_and_each_containers_files() {
        for compression in ["none", "gz"] {
            let bytes = aggregated(
                &[
                    (C1, files(&[("stderr", b"am log\n"), ("stdout", b"")])),
                    (
                        C2,
                        files(&[("task-t0.0.stdout", b"hello\n"), ("stdout", b"x")]),
                    ),
                ],
                compression,
            );
            let log = parse(&bytes).unwrap();
            assert_eq!(log.version, Some(1));
            assert_eq!(log.owner.as_deref(), Some("alice"));
            assert_eq!(log.acls[0], ("VIEW_APP".to_string(), "alice ".to_string()));
            assert_eq!(log.containers.len(), 2);
            assert_eq!(log.file(C1, "stderr").unwrap().data, b"am log\n");
            assert_eq!(log.file(C1, "stdout").unwrap().data, b"");
            assert_eq!(log.file(C2, "task-t0.0.stdout").unwrap().data, b"hello\n");
            assert!(log.file(C2, "stderr").is_none());
        }
    }

    #[test]
    fn malformed_values_name_the_container_and_file() {
        let mut bad_len = utf("stdout");
        bad_len.extend(utf("12x"));
        let log = parse(&aggregated(&[(C1, bad_len)], "none")).unwrap_err();
        assert_eq!(
            log,
            AggregatedLogError::FileLength {
                container: C1.into(),
                file: "stdout".into(),
                length: "12x".into()
            }
        );
        let mut short = utf("stdout");
        short.extend(utf("100"));
        short.extend(b"only this");
        let err = parse(&aggregated(&[(C1, short)], "none")).unwrap_err();
        assert!(
            err.to_string().contains("100 bytes declared, 9 left"),
            "{err}"
        );
        let mut cut_name = utf("stdout");
        cut_name.truncate(3);
        let err = parse(&aggregated(&[(C2, cut_name)], "none")).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!("entry {C2}:")),
            "{err}"
        );
    }

    #[test]
    fn the_folders_hadoop_3_and_2_write() {
        assert_eq!(
            app_dir(
                "/tmp/logs/",
                "alice",
                "logs-tfile",
                "application_1700000000000_12345"
            )
            .unwrap(),
            "/tmp/logs/alice/bucket-logs-tfile/2345/application_1700000000000_12345"
        );
        assert_eq!(
            app_dir("/tmp/logs", "bob", "logs-tfile", "application_1_0007").unwrap(),
            "/tmp/logs/bob/bucket-logs-tfile/0007/application_1_0007"
        );
        assert!(app_dir("/tmp/logs", "bob", "logs", "application_1_x").is_none());
        assert_eq!(
            older_app_dir("/tmp/logs", "bob", "logs", "application_1_0007"),
            "/tmp/logs/bob/logs/application_1_0007"
        );
        assert!(is_node_file("nm1_45454"));
        assert!(!is_node_file("nm1_45454.tmp"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn corrupted_or_cut_aggregated_files_never_panic(
            gz in any::<bool>(),
            cut in any::<prop::sample::Index>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        ) {
            let mut bytes = aggregated(
                &[(C1, files(&[("stderr", b"am log\n"), ("stdout", b"0123456789")]))],
                if gz { "gz" } else { "none" },
            );
            for (at, byte) in flips {
                let i = at.index(bytes.len());
                bytes[i] = byte;
            }
            let len = cut.index(bytes.len() + 1);
            let _ = parse(&bytes[..len]);
        }
    }
}

/// The real file: what the test cluster's nm1 (Hadoop 3.4.1, compression `none`) wrote
/// for the one-task app of `it_surface`'s aggregated-logs test, captured through WebHDFS.
#[cfg(test)]
mod real_file {
    use super::*;
    use crate::logs::tfile::TFile;

    const NM1: &[u8] = include_bytes!("testdata/nm1_45454");
    const EXECUTOR: &str = "container_1795788819218_0001_01_000002";

    #[test]
    fn the_real_file_reads_as_the_node_wrote_it() {
        let t = TFile::parse(NM1).unwrap();
        assert_eq!(t.compression(), crate::logs::tfile::Compression::None);
        assert_eq!(t.blocks().len(), 1);
        let log = parse(NM1).unwrap();
        assert_eq!(log.version, Some(1));
        assert_eq!(log.owner.as_deref(), Some("root"));
        // The key is written even when the app has no ACLs.
        assert!(log.acls.is_empty());
        assert_eq!(log.containers.len(), 1);
        let names: Vec<&str> = log.containers[EXECUTOR]
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "directory.info",
                "launch_container.sh",
                "prelaunch.err",
                "prelaunch.out",
                "stderr",
                "stdout",
                "task-t0.0.stderr",
                "task-t0.0.stdout"
            ]
        );
        let data = |name| log.file(EXECUTOR, name).unwrap().data.as_slice();
        assert_eq!(data("task-t0.0.stdout"), b"aggregated-line-4711\n");
        assert_eq!(data("task-t0.0.stderr"), b"to-stderr\n");
        assert_eq!(data("launch_container.sh").len(), 3714);
        assert!(data("stderr").starts_with(b"2026-11-27T14:14:01"));
    }

    #[test]
    fn every_cut_of_the_real_file_is_an_error() {
        for len in 0..NM1.len() {
            assert!(parse(&NM1[..len]).is_err(), "cut at {len}");
        }
    }

    #[test]
    fn every_single_byte_change_of_the_real_file_is_survived() {
        // Each byte position with a few values: an error or a (different) parse, no panic.
        let mut bytes = NM1.to_vec();
        for i in 0..bytes.len() {
            let orig = bytes[i];
            for v in [0x00, 0x7f, 0x80, 0xff, orig ^ 0x01] {
                bytes[i] = v;
                let _ = parse(&bytes);
            }
            bytes[i] = orig;
        }
    }
}
