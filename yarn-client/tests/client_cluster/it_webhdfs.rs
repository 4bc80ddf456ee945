//! The WebHDFS client against the test cluster's real NameNode and DataNode: every
//! operation, and the Java exceptions HDFS raises, as the client reports them.

use std::time::{Duration, Instant};

use crate::common::{cluster, LogsOnFailure};
use yarn_client::webhdfs::{FileType, WebHdfs, WebHdfsError, FILE_NOT_FOUND};

const USER: &str = "yarn-client-it";

fn client() -> WebHdfs {
    WebHdfs::new(&cluster().webhdfs, USER, Duration::from_secs(20)).unwrap()
}

/// A folder of its own per test run, so runs and tests never see each other's files.
fn scratch(name: &str) -> String {
    format!(
        "/tmp/yarn-client-it/{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    )
}

#[tokio::test]
async fn folders_files_status_overwrite_and_recursive_delete() {
    let c = cluster();
    let _logs = LogsOnFailure(c);
    let hdfs = client();
    assert_eq!(
        hdfs.home_directory().await.unwrap(),
        format!("/user/{USER}")
    );

    let dir = scratch("ops");
    hdfs.mkdirs(&format!("{dir}/sub"), Some("700"))
        .await
        .unwrap();
    let st = hdfs.status(&format!("{dir}/sub")).await.unwrap();
    assert_eq!(st.kind, FileType::Directory);
    assert_eq!(st.permission, "700");
    assert_eq!(st.owner, USER);

    // Two-step CREATE: the NameNode names a DataNode and its own RPC address.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let file = format!("{dir}/sub/hello.txt");
    let created = hdfs
        .create(&file, b"hello, hdfs\n".to_vec(), false, None)
        .await
        .unwrap();
    // The test cluster runs a DataNode on each of nm1..nm3, with WebHDFS at nmN:98N4.
    assert!(
        ["http://nm1:9814/", "http://nm2:9824/", "http://nm3:9834/"]
            .iter()
            .any(|dn| created
                .datanode_url
                .as_str()
                .starts_with(&format!("{dn}webhdfs/v1/"))),
        "{created:?}"
    );
    assert_eq!(created.namenode_rpc_address.as_deref(), Some("rm:8020"));
    assert_eq!(created.bytes, 12);
    let st = hdfs.status(&file).await.unwrap();
    assert_eq!(st.kind, FileType::File);
    assert_eq!(st.length, 12);
    assert_eq!(st.replication, 2, "the test cluster's dfs.replication");
    assert!(
        st.modification_time + 5_000 >= before,
        "mtime {} vs {before}",
        st.modification_time
    );

    // Without overwrite an existing file is an error carrying HDFS's own exception class.
    let err = hdfs
        .create(&file, b"again".to_vec(), false, None)
        .await
        .unwrap_err();
    match &err {
        WebHdfsError::Remote {
            java_class,
            message,
            ..
        } => {
            assert_eq!(
                java_class,
                "org.apache.hadoop.fs.FileAlreadyExistsException"
            );
            assert!(message.contains("hello.txt"), "{message}");
        }
        other => panic!("expected a RemoteException, got {other:?}"),
    }
    // With overwrite the new bytes replace the old (and the length follows).
    hdfs.create(&file, b"bye".to_vec(), true, None)
        .await
        .unwrap();
    assert_eq!(hdfs.status(&file).await.unwrap().length, 3);

    // A folder below a file: HDFS refuses, and the class says why.
    let err = hdfs
        .mkdirs(&format!("{file}/below"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WebHdfsError::Remote { java_class, .. }
            if java_class == "org.apache.hadoop.fs.ParentNotDirectoryException"),
        "{err}"
    );

    assert!(hdfs.delete(&dir, true).await.unwrap());
    let err = hdfs.status(&file).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(err.to_string().contains(FILE_NOT_FOUND), "{err}");
    // Deleting what is gone is not an error: HDFS answers false.
    assert!(!hdfs.delete(&dir, true).await.unwrap());
}

#[tokio::test]
async fn a_large_file_streams_from_disk() {
    let c = cluster();
    let _logs = LogsOnFailure(c);
    let hdfs = client();
    let dir = scratch("large");
    let local = std::env::temp_dir().join(format!("yarn-client-it-large-{}", std::process::id()));
    // 24 MiB of a pattern, so a short or shifted write would change the length check.
    let data: Vec<u8> = (0..24u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&local, &data).unwrap();
    let start = Instant::now();
    let created = hdfs
        .create_from_file(&format!("{dir}/big.bin"), &local, true, None)
        .await
        .unwrap();
    eprintln!("24 MiB uploaded through WebHDFS in {:?}", start.elapsed());
    assert_eq!(created.bytes, data.len() as u64);
    assert_eq!(
        hdfs.status(&format!("{dir}/big.bin")).await.unwrap().length,
        data.len() as u64
    );
    std::fs::remove_file(&local).unwrap();
    let missing = hdfs
        .create_from_file(&format!("{dir}/x"), &local, true, None)
        .await
        .unwrap_err();
    assert!(
        matches!(missing, WebHdfsError::LocalFile { .. }),
        "{missing}"
    );
    hdfs.delete(&dir, true).await.unwrap();
}

#[tokio::test]
async fn nothing_listening_is_a_fast_typed_error_naming_the_url() {
    // Port 9 (discard) on rm: the host exists, nothing listens.
    let hdfs = WebHdfs::new("http://rm:9", USER, Duration::from_secs(5)).unwrap();
    let start = Instant::now();
    let err = hdfs.status("/").await.unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5), "{err}");
    assert!(matches!(err, WebHdfsError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains("http://rm:9/webhdfs/v1/"), "{err}");
}

/// APPEND adds to a file in order, OPEN reads it back whole, and RENAME with OVERWRITE
/// replaces a file at once (what the AM's job journal and `driver.url` rely on).
#[tokio::test]
async fn append_read_and_rename_over() {
    let c = cluster();
    let _logs = LogsOnFailure(c);
    let hdfs = client();
    let dir = scratch("append");
    let file = format!("{dir}/journal.jsonl");
    hdfs.create(&file, Vec::new(), false, None).await.unwrap();
    for line in ["one\n", "two\n", "three\n"] {
        hdfs.append(&file, line.as_bytes().to_vec()).await.unwrap();
    }
    assert_eq!(
        hdfs.read_to_string(&file).await.unwrap(),
        "one\ntwo\nthree\n"
    );
    let missing = hdfs
        .append(&format!("{dir}/nope"), b"x".to_vec())
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    let err = hdfs
        .read_to_string(&format!("{dir}/nope"))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");

    let (url, tmp) = (format!("{dir}/driver.url"), format!("{dir}/driver.url.tmp"));
    for text in ["http://nm1:1\n", "http://nm2:2\n"] {
        hdfs.create(&tmp, text.as_bytes().to_vec(), true, None)
            .await
            .unwrap();
        hdfs.rename_over(&tmp, &url).await.unwrap();
        assert_eq!(hdfs.read_to_string(&url).await.unwrap(), text);
    }
    assert!(hdfs.status(&tmp).await.unwrap_err().is_not_found());
    assert!(hdfs.delete(&dir, true).await.unwrap());
}
