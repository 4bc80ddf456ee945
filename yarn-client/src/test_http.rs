//! A scripted HTTP server on loopback for the web clients' unit tests: it answers each
//! connection with what the script returns for the request's head, and keeps every head it
//! saw, so a test can check what reached a host (headers included) and what did not.
//! Built for tests only (`cfg(test)`, or the `test-fixtures` feature for yarn-am's tests).

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the server saw: one request head (request line and headers) per connection.
pub type Seen = Arc<Mutex<Vec<String>>>;

/// Serves on `ip`, port 0, one reply per connection (`connection: close`), the reply being
/// `script(request_head)`. Returns the base URL `http://ip:port` and the heads seen.
pub async fn serve<F>(ip: &str, script: F) -> (String, Seen)
where
    F: Fn(&str) -> Vec<u8> + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let script = Arc::new(script);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let (log, script) = (log.clone(), script.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                log.lock().unwrap().push(head.clone());
                let _ = s.write_all(&script(&head)).await;
            });
        }
    });
    (base, seen)
}

/// A complete reply: `status` line, JSON content type, `body`.
pub fn reply(status: &str, extra_headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n{extra_headers}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The value of query parameter `key` in a request head, `%3A` and `%2C` decoded.
pub fn query_value(head: &str, key: &str) -> Option<String> {
    let query = head.split_once('?')?.1.split(' ').next()?;
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.replace("%3A", ":").replace("%2C", ","))
    })
}

/// A WebHDFS NameNode for one file of `len` bytes in blocks of `block`, every block on the
/// DataNodes `dns` (host name, transfer address `ip:port`, base URL), in that order:
/// GETFILESTATUS, GETFILEBLOCKLOCATIONS, and OPEN answered as with `noredirect=true`: the URL
/// of the first DataNode not in `excludedatanodes`, carrying the request's query along (a
/// `delegation=` too, as the NameNode does).
pub async fn webhdfs_namenode(
    len: u64,
    block: u64,
    dns: Vec<(String, String, String)>,
) -> (String, Seen) {
    serve("127.0.0.1", move |head| {
        let body = if head.contains("op=GETFILESTATUS") {
            format!(r#"{{"FileStatus":{{"length":{len},"modificationTime":1,"type":"FILE"}}}}"#)
        } else if head.contains("op=GETFILEBLOCKLOCATIONS") {
            let hosts: Vec<String> = dns.iter().map(|d| format!("{:?}", d.0)).collect();
            let names: Vec<String> = dns.iter().map(|d| format!("{:?}", d.1)).collect();
            let blocks: Vec<String> = (0..len.div_ceil(block))
                .map(|i| {
                    format!(
                        r#"{{"offset":{},"length":{},"hosts":[{}],"names":[{}]}}"#,
                        i * block,
                        block.min(len - i * block),
                        hosts.join(","),
                        names.join(",")
                    )
                })
                .collect();
            format!(r#"{{"BlockLocations":{{"BlockLocation":[{}]}}}}"#, blocks.join(","))
        } else {
            let excluded = query_value(head, "excludedatanodes").unwrap_or_default();
            let excluded: Vec<&str> = excluded.split(',').collect();
            let Some(dn) = dns.iter().find(|d| !excluded.contains(&d.1.as_str())) else {
                return reply(
                    "403 Forbidden",
                    "",
                    r#"{"RemoteException":{"exception":"IOException","javaClassName":"java.io.IOException","message":"No active nodes contain this block"}}"#,
                );
            };
            let query = head.split_once('?').unwrap().1.split(' ').next().unwrap();
            format!(r#"{{"Location":"{}/webhdfs/v1/f?{query}&namenoderpcaddress=nn:8020"}}"#, dn.2)
        };
        reply("200 OK", "", &body)
    })
    .await
}

/// A WebHDFS DataNode serving `[offset, offset + length)` of `data`; with `cut`, only that
/// many bytes of the body (the whole length declared), then it hangs up (a DataNode dying
/// mid-read).
pub async fn webhdfs_datanode(data: Arc<Vec<u8>>, cut: Option<usize>) -> String {
    serve("127.0.0.1", move |head| {
        let num = |k| query_value(head, k).and_then(|v| v.parse::<usize>().ok());
        let off = num("offset").unwrap_or(0).min(data.len());
        let end = off.saturating_add(num("length").unwrap_or(usize::MAX)).min(data.len());
        let body = &data[off..end];
        let mut r = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(&body[..cut.unwrap_or(body.len()).min(body.len())]);
        r
    })
    .await
    .0
}
