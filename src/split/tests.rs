//! The reader against a scripted NameNode and DataNodes on loopback: the local replica is
//! asked for first, a DataNode that dies mid-read is left for the next replica without a
//! byte lost or repeated, and when no replica answers the error names the block and carries
//! no token.

use std::sync::Arc;
use std::time::Duration;

use yarn_client::http_auth::HttpAuth;
use yarn_client::test_http::{query_value, webhdfs_datanode, webhdfs_namenode};

use super::*;
use yarn_am_core::inputs::records::{records_of, RecordFormat, SplitRecords};

const TOKEN: &str = "SPLITTOKEN-PASSWORD-abcdef";

/// Three blocks of 16 bytes; lines straddle both block boundaries.
fn file() -> Vec<u8> {
    b"one two\nthree four five\nsix\nseven eight nine\nten eleven".to_vec()
}
const BLOCK: u64 = 16;

fn param(head: &str, key: &str) -> Option<u64> {
    query_value(head, key)?.parse().ok()
}

/// A DataNode serving the file; `cut`: it hangs up after that many bytes of each range.
async fn datanode(cut: Option<usize>) -> String {
    webhdfs_datanode(Arc::new(file()), cut).await
}

/// A NameNode for the file, whose blocks are on DataNodes `a` and `b` (hosts `dna`, `dnb`,
/// transfer addresses 127.0.0.1:1 and :2); OPEN goes to `a` unless it is excluded.
async fn namenode(a: String, b: String) -> (String, yarn_client::test_http::Seen) {
    let dns = vec![
        ("dna".to_string(), "127.0.0.1:1".to_string(), a),
        ("dnb".to_string(), "127.0.0.1:2".to_string(), b),
    ];
    webhdfs_namenode(file().len() as u64, BLOCK, dns).await
}

fn client(nn: &str) -> WebHdfs {
    WebHdfs::new(nn, "alice", Duration::from_secs(5))
        .unwrap()
        .with_auth(HttpAuth::Delegation {
            token: TOKEN.to_string(),
        })
}

fn host(name: &str) -> HostMap {
    HostMap::new(&[(name.to_string(), vec![])])
}

async fn cat(
    nn: &str,
    here: &HostMap,
    start: u64,
    len: u64,
) -> Result<(Vec<u8>, ReadStats), SplitReadError> {
    let m = SplitRecords::new(RecordFormat::Text, start, len, 1 << 20);
    let mut out = Vec::new();
    let client = client(nn);
    let reader = Reader {
        client: &client,
        path: "/f",
        here,
        idle: Duration::from_secs(5),
    };
    let stats = reader.read(m, &mut out).await?;
    Ok((out, stats))
}

#[test]
fn replicas_on_this_host_come_first() {
    let b = BlockLocation {
        offset: 0,
        length: 1,
        hosts: vec!["nm1".into(), "nm2".into(), "nm3".into()],
        names: vec![
            "10.0.0.1:9866".into(),
            "10.0.0.2:9866".into(),
            "10.0.0.3:9866".into(),
        ],
        corrupt: false,
    };
    assert_eq!(replica_order(&b, &host("nm3")), [2, 0, 1]);
    assert_eq!(replica_order(&b, &host("nm2.example.com")), [1, 0, 2]);
    let by_ip = HostMap::new(&[("node-x".into(), vec!["10.0.0.2".into()])]);
    assert_eq!(replica_order(&b, &by_ip), [1, 0, 2]);
    assert_eq!(replica_order(&b, &HostMap::default()), [0, 1, 2]);
}

#[tokio::test]
async fn every_split_reads_its_lines_from_the_local_replica() {
    let (a, b) = (datanode(None).await, datanode(None).await);
    let (nn, seen) = namenode(a, b).await;
    let f = file();
    let mut all = Vec::new();
    for start in (0..f.len() as u64).step_by(10) {
        let len = 10.min(f.len() as u64 - start);
        let (out, stats) = cat(&nn, &host("dnb"), start, len).await.unwrap();
        let want = records_of(&f, RecordFormat::Text, start, len, 1 << 20, 4).unwrap();
        assert_eq!(out, want, "split at {start}");
        assert_eq!(stats.retries, 0);
        all.extend(out);
    }
    assert_eq!(all, f);
    // Every OPEN excluded the other replica, so the NameNode sent it to this host's.
    let heads = seen.lock().unwrap();
    let opens: Vec<&String> = heads.iter().filter(|h| h.contains("op=OPEN")).collect();
    assert!(!opens.is_empty());
    for h in opens {
        assert!(h.contains("excludedatanodes=127.0.0.1%3A1"), "{h}");
        assert!(h.contains("noredirect=true"), "{h}");
    }
}

#[tokio::test]
async fn a_datanode_dying_mid_read_is_left_for_the_next_replica() {
    // The preferred DataNode sends 5 bytes of each range, then hangs up.
    let (a, b) = (datanode(Some(5)).await, datanode(None).await);
    let (nn, _) = namenode(a, b).await;
    let f = file();
    let (out, stats) = cat(&nn, &host("dna"), 0, f.len() as u64).await.unwrap();
    assert_eq!(out, f);
    assert!(stats.retries >= 1, "{stats:?}");
}

#[tokio::test]
async fn when_no_replica_answers_the_error_names_the_block_and_no_token() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (nn, _) = namenode(closed.clone(), closed).await;
    let e = cat(&nn, &HostMap::default(), 16, 16).await.unwrap_err();
    let shown = format!("{e} {e:?}");
    let shown = format!("{shown} {:#}", anyhow::Error::new(e));
    assert!(shown.contains("block 0+16 of /f"), "{shown}");
    assert!(shown.contains("dna, dnb"), "{shown}");
    assert!(
        shown.contains(&format!("{} attempts", 2 * ROUNDS)),
        "{shown}"
    );
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(shown.contains("delegation=REDACTED"), "{shown}");
}

/// A DataNode that sends the head and a few bytes, then holds the connection open silently
/// (a host that vanished): after `idle` the read goes on from the next replica.
#[tokio::test]
async fn a_silent_datanode_is_left_after_the_idle_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let off = param(&head, "offset").unwrap_or(0) as usize;
                // The right first bytes of the range, then silence.
                let mut r = b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n".to_vec();
                r.extend_from_slice(&file()[off..(off + 3).min(file().len())]);
                let _ = s.write_all(&r).await;
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
        }
    });
    let (nn, _) = namenode(silent, datanode(None).await).await;
    let client = client(&nn);
    let reader = Reader {
        client: &client,
        path: "/f",
        here: &host("dna"),
        idle: Duration::from_millis(300),
    };
    let f = file();
    let m = SplitRecords::new(RecordFormat::Text, 0, f.len() as u64, 1 << 20);
    let mut out = Vec::new();
    let t0 = std::time::Instant::now();
    let stats = reader.read(m, &mut out).await.unwrap();
    assert_eq!(out, f);
    assert!(stats.retries >= 1, "{stats:?}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
}

/// Whatever byte the preferred DataNode hangs up at and however the file is split, the
/// splits' outputs are their records exactly, and concatenated they are the file.
#[tokio::test]
async fn cut_offs_anywhere_lose_and_repeat_nothing() {
    let f = file();
    for cut in [0, 1, 2, 7, 15] {
        let (a, b) = (datanode(Some(cut)).await, datanode(None).await);
        let (nn, _) = namenode(a, b).await;
        for split in [3u64, 10, 17, f.len() as u64] {
            let mut all = Vec::new();
            for start in (0..f.len() as u64).step_by(split as usize) {
                let len = split.min(f.len() as u64 - start);
                let (out, _) = cat(&nn, &host("dna"), start, len).await.unwrap();
                let want = records_of(&f, RecordFormat::Text, start, len, 1 << 20, 1).unwrap();
                assert_eq!(out, want, "cut {cut}, split {start}+{len}");
                all.extend(out);
            }
            assert_eq!(all, f, "cut {cut}, splits of {split}");
        }
    }
}
