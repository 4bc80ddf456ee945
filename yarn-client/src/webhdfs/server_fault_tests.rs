//! WebHDFS against faulty or hostile servers on loopback. Audit M2: the errors of a call
//! made with a delegation token, on the real error paths (a NameNode that does not answer,
//! one that answers an error page echoing the URL, a DataNode redirect that carries the
//! token), carry neither the token nor the user name. Audit L1: no redirect is followed with
//! our credentials (the DataNode gets only the URL the NameNode wrote, which carries the
//! NameNode's own `delegation=`). Audit L4: a reply is read under a cap.

use super::*;
use crate::test_http::{reply, serve};

const TOKEN: &str = "EW93bmVyLUhERlMtVE9LRU4tUEFTU1dPUkQ";

fn client(address: &str) -> WebHdfs {
    WebHdfs::new(address, "alice", Duration::from_secs(5))
        .unwrap()
        .with_auth(HttpAuth::Delegation {
            token: TOKEN.to_string(),
        })
}

fn assert_clean(e: &WebHdfsError) {
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(shown.contains("delegation=REDACTED"), "{shown}");
}

/// One HTTP reply per connection, whatever was asked.
async fn answer_with(reply: String) -> String {
    serve("127.0.0.1", move |_| reply.clone().into_bytes())
        .await
        .0
}

#[tokio::test]
async fn webhdfs_errors_carry_no_delegation_token() {
    // Nobody listens (a NameNode restarting): the journal append's error.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let e = client(&format!("http://{closed}"))
        .append(
            "/user/alice/.yarn-am-staging/app/job-journal-1.jsonl",
            b"x".to_vec(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, WebHdfsError::Unreachable { .. }), "{e}");
    assert_clean(&e);

    // An error page that echoes the URL, token included.
    let page = format!("<html>bad gateway for /webhdfs/v1/x?op=DELETE&delegation={TOKEN}</html>");
    let nn = answer_with(format!(
        "HTTP/1.1 502 Bad Gateway\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
        page.len()
    ))
    .await;
    let e = client(&nn).delete("/x", true).await.unwrap_err();
    assert!(matches!(e, WebHdfsError::Status { .. }), "{e}");
    assert_clean(&e);

    // A NameNode that sends the append to a DataNode that is not there: the DataNode
    // URL carries the token, as real redirects do.
    let dn = format!(
        "http://{closed}/webhdfs/v1/x?op=APPEND&delegation={TOKEN}&namenoderpcaddress=nn:8020"
    );
    let body = format!("{{\"Location\":\"{dn}\"}}");
    let nn = answer_with(format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ))
    .await;
    let e = client(&nn).append("/x", b"x".to_vec()).await.unwrap_err();
    assert!(matches!(e, WebHdfsError::Unreachable { .. }), "{e}");
    assert_clean(&e);
}

#[tokio::test]
async fn a_namenode_redirect_is_not_followed_with_our_credentials() {
    let (other, seen) = serve("127.0.0.2", |_| reply("201 Created", "", "")).await;
    let location = format!(
        "location: {other}/webhdfs/v1/f?op=CREATE&delegation=NN-MADE&namenoderpcaddress=nn:8020\r\n"
    );
    let (nn, _) = serve("127.0.0.1", move |_| {
        reply("307 Temporary Redirect", &location, "")
    })
    .await;
    // A metadata call: the 307 is not followed at all.
    let e = client(&nn).status("/f").await.unwrap_err();
    assert!(matches!(e, WebHdfsError::BadReply { .. }), "{e}");
    assert!(seen.lock().unwrap().is_empty());
    // A CREATE: the bytes go where the NameNode said, with its URL and nothing of ours.
    client(&nn)
        .create("/f", b"x".to_vec(), true, None)
        .await
        .unwrap();
    let heads = seen.lock().unwrap();
    assert_eq!(heads.len(), 1);
    assert!(heads[0].contains("delegation=NN-MADE"), "{}", heads[0]);
    let lower = heads[0].to_ascii_lowercase();
    assert!(!heads[0].contains(TOKEN), "{}", heads[0]);
    assert!(
        !lower.contains("authorization") && !lower.contains("cookie"),
        "{lower}"
    );
}

#[tokio::test]
async fn an_oversized_reply_is_refused() {
    let (nn, _) = serve("127.0.0.1", |_| {
        let mut r = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n".to_vec();
        r.extend(std::iter::repeat_n(b' ', 256 << 10));
        r
    })
    .await;
    let e = client(&nn)
        .with_reply_limit(64 << 10)
        .list_page("/in", None)
        .await
        .unwrap_err();
    assert!(
        matches!(e, WebHdfsError::TooLarge { limit, .. } if limit == 64 << 10),
        "{e}"
    );
    assert!(e.to_string().contains("65536-byte limit"), "{e}");
    assert!(!e.to_string().contains(TOKEN), "{e}");
}
