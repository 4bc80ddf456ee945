//! Why an application failed before its AM ran, when staging is the cause.
//!
//! Local (`file://`) staging works only where every NodeManager sees the submitter's disk.
//! On a cluster of separate hosts the submit succeeds and the RM fails the attempt at
//! localisation, with YARN's own words: `File file:/<root>/<app>/<file> does not exist`.
//! Nothing before the submit can tell (a node may share the folder by a mount, and nodes
//! on loopback addresses may still be other hosts), so the explanation comes from the
//! diagnostics, where `submit --wait` and `status` show them.

use std::path::Path;

/// A hint for people when YARN's diagnostics say a NodeManager could not find a local
/// file: the folder it looked in, and how to stage where every node can read.
pub fn unseen_local_file(diagnostics: &str) -> Option<String> {
    const MARK: &str = "File file:";
    let start = diagnostics.find(MARK)? + MARK.len();
    let rest = &diagnostics[start..];
    let path = &rest[..rest.find(" does not exist")?];
    if path.is_empty() || path.contains('\n') {
        return None;
    }
    let folder = Path::new(path)
        .parent()
        .map_or(path.to_string(), |p| p.display().to_string());
    Some(format!(
        "a NodeManager could not read {folder} (local file:// staging): its host does not \
         see this machine's disk. Stage on HDFS instead: --webhdfs http://NAMENODE:9870 \
         (or YARN_AM_WEBHDFS)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yarns_localisation_failure_names_the_folder_and_webhdfs() {
        let d = "Application application_1_0002 failed 1 times due to AM Container for \
                 appattempt_1_0002_000001 exited with exitCode: -1000\nFailing this \
                 attempt.Diagnostics: [2026-11-27]File \
                 file:/tmp/yarn-am-staging/application_1_0002/yarn-am-spec.json does not \
                 exist\njava.io.FileNotFoundException: File file:/tmp/yarn-am-staging/...";
        let hint = unseen_local_file(d).expect("a hint");
        assert!(
            hint.contains("/tmp/yarn-am-staging/application_1_0002 "),
            "{hint}"
        );
        assert!(hint.contains("--webhdfs"), "{hint}");
    }

    #[test]
    fn other_failures_get_no_hint() {
        assert_eq!(unseen_local_file(""), None);
        assert_eq!(
            unseen_local_file("Container killed on request. Exit code is 137"),
            None
        );
        assert_eq!(
            unseen_local_file("File hdfs://rm:8020/x does not exist"),
            None,
            "HDFS staging is seen by every node"
        );
        assert_eq!(unseen_local_file("File file: and no end"), None);
    }
}
