//! `--service-data NAME[=@FILE]`: bytes for a NodeManager auxiliary service, in every
//! executor's launch context (`service_data`, see `yarn_client::nm::LaunchSpec`). The NM
//! hands them to the service named NAME when an executor of the app starts on it; Spark's
//! external shuffle service (`spark_shuffle`) takes the app's shuffle secret there (empty
//! when Spark's authentication is off), MapReduce's ShuffleHandler (`mapreduce_shuffle`) a
//! serialised job token. The bytes are often secret, so they come from a file (or are empty),
//! never from the command line, and travel to the AM in its credentials (see
//! [`crate::credentials::service_data_alias`]), never in the spec, an environment
//! or a log.
//!
//! A NodeManager refuses to start a container whose service data names an auxiliary
//! service it does not run (`yarn.nodemanager.aux-services`): each executor launch then
//! fails with the NM's message, and the app once the executor-failure limit is reached.

use std::path::Path;

/// The most bytes one service's data may hold: the RM keeps the AM's credentials in its
/// state store, and the AM sends the bytes with every executor launch.
pub const MAX_BYTES: usize = 64 * 1024;

/// One `--service-data` argument, its file read at parse time (so a missing file fails
/// before anything is submitted).
#[derive(Clone, PartialEq, Eq)]
pub struct ServiceData {
    pub name: String,
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for ServiceData {
    /// Never prints the bytes (a shuffle secret, a token).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServiceData({}, {} bytes)", self.name, self.bytes.len())
    }
}

/// Whether `name` is a name YARN accepts for an auxiliary service (AuxServices checks
/// `yarn.nodemanager.aux-services` so: letters, digits and `_`, not starting with a digit).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses `NAME` (empty data) or `NAME=@FILE` (the file's bytes).
pub fn parse(arg: &str) -> Result<ServiceData, String> {
    let (name, file) = match arg.split_once('=') {
        None => (arg, None),
        Some((name, value)) => match value.strip_prefix('@') {
            Some(path) if !path.is_empty() => (name, Some(path)),
            _ => {
                return Err(format!(
                    "the data of {name:?} must come from a file, NAME=@FILE (or NAME alone for \
                     none): service data is often secret and a command line is not"
                ))
            }
        },
    };
    if !valid_name(name) {
        return Err(format!(
            "{name:?} is not an auxiliary service name (letters, digits and _, not starting \
             with a digit, as in yarn.nodemanager.aux-services)"
        ));
    }
    let bytes = match file {
        None => Vec::new(),
        Some(path) => read(Path::new(path))?,
    };
    Ok(ServiceData {
        name: name.to_string(),
        bytes,
    })
}

/// Reads at most one byte past [`MAX_BYTES`], so a file that grows (or a pipe) after the
/// size check is still bounded.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let too_large = |size: u64| {
        format!(
            "{} holds {size} bytes; service data is at most {MAX_BYTES}",
            path.display()
        )
    };
    let f = std::fs::File::open(path).map_err(err)?;
    let size = f.metadata().map_err(err)?.len();
    if size > MAX_BYTES as u64 {
        return Err(too_large(size));
    }
    let mut bytes = Vec::new();
    f.take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(err)?;
    if bytes.len() > MAX_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Every `--service-data`; one name twice is refused.
pub fn check_unique(all: &[ServiceData]) -> Result<(), String> {
    for (i, d) in all.iter().enumerate() {
        if all[..i].iter().any(|o| o.name == d.name) {
            return Err(format!("--service-data {:?} is given twice", d.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `bytes` in a fresh folder under the temporary directory.
    fn file_of(tag: &str, bytes: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("yarn-am-sd-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("data");
        std::fs::write(&f, bytes).unwrap();
        f
    }

    #[test]
    fn a_name_alone_is_empty_data_and_at_file_reads_the_file() {
        assert_eq!(
            parse("spark_shuffle").unwrap(),
            ServiceData {
                name: "spark_shuffle".into(),
                bytes: vec![]
            }
        );
        let f = file_of("ok", &[0u8, 1, 2, 0xff]);
        let d = parse(&format!("mapreduce_shuffle=@{}", f.display())).unwrap();
        assert_eq!(d.bytes, vec![0, 1, 2, 0xff]);
        // The bytes never show in a debug print.
        assert_eq!(format!("{d:?}"), "ServiceData(mapreduce_shuffle, 4 bytes)");
    }

    #[test]
    fn data_on_the_command_line_bad_names_and_missing_or_large_files_are_refused() {
        let e = parse("spark_shuffle=hunter2").unwrap_err();
        assert!(e.contains("must come from a file"), "{e}");
        assert!(!e.contains("hunter2"), "the value is not echoed: {e}");
        assert!(parse("spark_shuffle=@").is_err());
        for bad in ["", "1svc", "spark-shuffle", "a b", "x/y"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let e = parse("svc=@/nonexistent/file").unwrap_err();
        assert!(e.contains("/nonexistent/file"), "{e}");
        let big = file_of("big", &vec![0u8; MAX_BYTES + 1]);
        assert!(parse(&format!("svc=@{}", big.display()))
            .unwrap_err()
            .contains("at most"));
        let two = [
            parse("a").unwrap(),
            parse("b").unwrap(),
            parse("a").unwrap(),
        ];
        assert!(check_unique(&two).unwrap_err().contains("\"a\""));
        assert!(check_unique(&two[..2]).is_ok());
    }
}
