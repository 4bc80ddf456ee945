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
