//! The transport's tests. Audit M2 (RM side): an RM REST error names its URL without the
//! caller's `user.name`. Audit L1 and L4 on the RM side: redirects carry credentials only to
//! known RMs, and a reply is read under a cap.

use super::*;
use crate::http_auth::RM_DELEGATION_HEADER;
use crate::test_http::{reply, serve};

#[tokio::test]
async fn rest_errors_carry_no_user_name() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let rm = RmRest::new(
        &format!("http://{closed}"),
        "alice-secret-name",
        Duration::from_secs(5),
    )
    .unwrap();
    let e = rm.new_application().await.unwrap_err();
    let mut shown = format!("{e} {e:?}");
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        shown.push_str(&format!(": {s}"));
        source = s.source();
    }
    assert!(!shown.contains("alice-secret-name"), "{shown}");
    assert!(shown.contains("user.name=REDACTED"), "{shown}");
}

const TOKEN: &str = "RM-DELEGATION-TOKEN-SECRET";

fn client(base: &str) -> RmRest {
    RmRest::new(base, "alice", Duration::from_secs(5))
        .unwrap()
        .with_auth(HttpAuth::Delegation {
            token: TOKEN.into(),
        })
}

const NEW_APP: &str = r#"{"application-id":"application_1_0001"}"#;
const PATH: &str = "/ws/v1/cluster/apps/new-application";

/// A host that answers every call with a new application id.
async fn rm() -> (String, crate::test_http::Seen) {
    serve("127.0.0.2", |_| reply("200 OK", "", NEW_APP)).await
}

/// A host that redirects every call to `target` + the path.
async fn redirecting_to(ip: &str, target: &str) -> String {
    let location = format!("location: {target}{PATH}\r\n");
    serve(ip, move |_| reply("307 Temporary Redirect", &location, ""))
        .await
        .0
}

#[tokio::test]
async fn a_redirect_to_another_host_is_refused_and_gets_no_token() {
    let (b, seen_by_b) = rm().await;
    let a = redirecting_to("127.0.0.1", &b).await;
    let e = client(&a).new_application().await.unwrap_err();
    assert!(matches!(e, RestError::ForeignRedirect { .. }), "{e}");
    assert!(seen_by_b.lock().unwrap().is_empty(), "host B was asked");
    assert!(e.to_string().contains("127.0.0.2"), "{e}");
    assert!(!format!("{e} {e:?}").contains(TOKEN), "{e:?}");
}

#[tokio::test]
async fn a_standby_rm_redirect_to_a_known_rm_is_followed_with_the_token() {
    let (b, seen_by_b) = rm().await;
    let a = redirecting_to("127.0.0.1", &b).await;
    let app = client(&a)
        .with_other_rms(&[b.trim_start_matches("http://")])
        .new_application()
        .await
        .unwrap();
    assert_eq!(app.application_id, "application_1_0001");
    let heads = seen_by_b.lock().unwrap();
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].starts_with(&format!("POST {PATH}")),
        "{}",
        heads[0]
    );
    let header = format!("{RM_DELEGATION_HEADER}: {TOKEN}").to_ascii_lowercase();
    assert!(
        heads[0].to_ascii_lowercase().contains(&header),
        "{}",
        heads[0]
    );
}

#[tokio::test]
async fn a_redirect_loop_on_the_same_rm_ends() {
    let (a, seen) = serve("127.0.0.1", |_| {
        reply(
            "307 Temporary Redirect",
            &format!("location: {PATH}\r\n"),
            "",
        )
    })
    .await;
    let e = client(&a).new_application().await.unwrap_err();
    assert!(matches!(e, RestError::TooManyRedirects { .. }), "{e}");
    assert_eq!(seen.lock().unwrap().len(), MAX_REDIRECTS + 1);
}

#[tokio::test]
async fn an_oversized_reply_is_refused_by_its_length_or_as_it_streams() {
    // Declared too large: refused before reading.
    let (a, _) = serve("127.0.0.1", |_| {
        b"HTTP/1.1 200 OK\r\ncontent-length: 1073741824\r\nconnection: close\r\n\r\n{".to_vec()
    })
    .await;
    let e = client(&a).cluster_info().await.unwrap_err();
    assert!(
        matches!(e, RestError::TooLarge { limit, .. } if limit == MAX_REPLY_BYTES),
        "{e}"
    );
    assert!(e.to_string().contains(&MAX_REPLY_BYTES.to_string()), "{e}");
    // No length, a body past the cap: refused once the cap is passed.
    let (a, _) = serve("127.0.0.1", |_| {
        let mut r = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n".to_vec();
        r.extend(std::iter::repeat_n(b' ', 256 << 10));
        r
    })
    .await;
    let e = client(&a)
        .with_reply_limit(64 << 10)
        .cluster_info()
        .await
        .unwrap_err();
    assert!(
        matches!(e, RestError::TooLarge { limit, .. } if limit == 64 << 10),
        "{e}"
    );
}
