//! The `yarn-am split cat` binary as a task runs it (the split in its environment, the
//! container's token file), against a scripted NameNode and DataNodes on loopback. No cluster
//! needed: the Kerberized case is the token file's HDFS delegation token, which must reach
//! WebHDFS as `delegation=` and nothing else, and appear in no output, error or log line even
//! when a DataNode fails.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;

use yarn_am_core::inputs::records::{records_of, RecordFormat};
use yarn_client::credentials::{Credentials, Format};
use yarn_client::test_http::{webhdfs_datanode, webhdfs_namenode, Seen};
use yarn_client::token::Token;

/// Lines that straddle the 16-byte blocks, `\r\n`, no final newline.
fn file() -> Vec<u8> {
    b"alpha beta\r\ngamma delta epsilon\nzeta\neta theta iota kappa\nlambda mu".to_vec()
}

const PASSWORD: &[u8] = b"the-token-password";

fn token() -> Token {
    Token {
        identifier: b"alice-hdfs-token".to_vec(),
        password: PASSWORD.to_vec(),
        kind: "HDFS_DELEGATION_TOKEN".into(),
        service: "127.0.0.1:8020".into(),
    }
}

fn token_file(name: &str, with_token: bool) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("yarn-am-cli-split-{name}-{}", std::process::id()));
    let creds = Credentials {
        tokens: if with_token {
            vec![("hdfs".into(), token())]
        } else {
            vec![]
        },
        secrets: vec![],
    };
    std::fs::write(&path, creds.encode(Format::Writable)).unwrap();
    path
}

/// A NameNode whose blocks are on `dna` (the first, `a`) and `dnb` (`b`).
async fn namenode(a: String, b: String) -> (String, Seen) {
    let dns = vec![
        ("dna".to_string(), "127.0.0.1:1".to_string(), a),
        ("dnb".to_string(), "127.0.0.1:2".to_string(), b),
    ];
    webhdfs_namenode(file().len() as u64, 16, dns).await
}

/// `yarn-am split cat` for `[offset, offset + length)` on host `nm_host`.
async fn cat(nn: &str, tokens: &PathBuf, nm_host: &str, offset: u64, length: u64) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_yarn-am"));
    cmd.args(["split", "cat", "--format", "text"])
        .env_clear()
        .env(
            "YARN_AM_SPLIT_URL",
            format!("{nn}/webhdfs/v1/f?op=OPEN&offset={offset}&length={length}"),
        )
        .env("YARN_AM_SPLIT_PATH", "/f")
        .env("YARN_AM_SPLIT_OFFSET", offset.to_string())
        .env("YARN_AM_SPLIT_LENGTH", length.to_string())
        .env("HADOOP_TOKEN_FILE_LOCATION", tokens)
        .env("NM_HOST", nm_host)
        .env("USER", "bob");
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn assert_clean(out: &Output, secret: &str) {
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(secret), "{what}: {text}");
    }
}

#[tokio::test]
async fn the_token_goes_to_webhdfs_only_and_the_split_is_its_lines() {
    let data = Arc::new(file());
    let (a, b) = (
        webhdfs_datanode(data.clone(), None).await,
        webhdfs_datanode(data.clone(), None).await,
    );
    let (nn, seen) = namenode(a, b).await;
    let tokens = token_file("ok", true);
    let url_token = token().to_url_string();
    let mut all = Vec::new();
    for offset in (0..data.len() as u64).step_by(9) {
        let length = 9.min(data.len() as u64 - offset);
        let out = cat(&nn, &tokens, "dnb", offset, length).await;
        assert!(out.status.success(), "{out:?}");
        let want = records_of(&data, RecordFormat::Text, offset, length, 1 << 20, 5).unwrap();
        assert_eq!(out.stdout, want, "split at {offset}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("requests to a local DataNode"), "{err}");
        assert_clean(&out, &url_token);
        all.extend(out.stdout);
    }
    assert_eq!(all, *data);
    // Every request to the NameNode authenticated with the token, none with a user name;
    // reads went to dnb (this host) by excluding dna.
    let heads = seen.lock().unwrap();
    assert!(!heads.is_empty());
    for h in heads.iter() {
        assert!(h.contains(&format!("delegation={url_token}")), "{h}");
        assert!(!h.contains("user.name="), "{h}");
        if h.contains("op=OPEN") {
            assert!(h.contains("excludedatanodes=127.0.0.1%3A1"), "{h}");
        }
    }
    let _ = std::fs::remove_file(tokens);
}

#[tokio::test]
async fn a_failing_datanode_is_logged_without_the_token_and_the_next_replica_serves() {
    let data = Arc::new(file());
    // dna (this host's) hangs up after 3 bytes of every read.
    let (a, b) = (
        webhdfs_datanode(data.clone(), Some(3)).await,
        webhdfs_datanode(data.clone(), None).await,
    );
    let (nn, _) = namenode(a, b).await;
    let tokens = token_file("fail", true);
    let out = cat(&nn, &tokens, "dna", 0, data.len() as u64).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, *data);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("trying the next"), "{err}");
    assert!(err.contains("delegation=REDACTED"), "{err}");
    assert_clean(&out, &token().to_url_string());

    // No DataNode answers: exit 1, the block named, still no token.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (nn, _) = namenode(closed.clone(), closed).await;
    let out = cat(&nn, &tokens, "dna", 20, 10).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no replica of block 16+16 of /f"), "{err}");
    assert_clean(&out, &token().to_url_string());
    let _ = std::fs::remove_file(tokens);
}

#[tokio::test]
async fn without_a_token_the_reader_names_itself_as_user() {
    let data = Arc::new(file());
    let dn = webhdfs_datanode(data.clone(), None).await;
    let (nn, seen) = namenode(dn.clone(), dn).await;
    let tokens = token_file("none", false);
    let out = cat(&nn, &tokens, "elsewhere", 0, data.len() as u64).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, *data);
    let heads = seen.lock().unwrap();
    assert!(
        heads.iter().all(|h| h.contains("user.name=bob")),
        "{heads:?}"
    );
    assert!(
        heads.iter().all(|h| !h.contains("delegation=")),
        "{heads:?}"
    );
    let _ = std::fs::remove_file(tokens);
}
