//! RM REST and WebHDFS on `https://` against a loopback rustls server whose certificate a test
//! CA (rcgen) signed, as a cluster with `HTTPS_ONLY` and its own CA serves them.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::rest::RmRest;
use crate::webhdfs::WebHdfs;

/// A test CA and a server certificate it issued for `localhost` and 127.0.0.1.
struct TestPki {
    ca_pem: String,
    server: Arc<rustls::ServerConfig>,
}

fn pki() -> TestPki {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "test cluster CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
        .unwrap()
        .signed_by(&leaf_key, &ca_cert, &ca_key)
        .unwrap();
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone(), ca_cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
    )
    .unwrap();
    TestPki {
        ca_pem: ca_cert.pem(),
        server: Arc::new(server),
    }
}

/// An https server answering every request with 200 and `body` (JSON); returns its port.
async fn serve(config: Arc<rustls::ServerConfig>, body: &'static str) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut s) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(reply.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

fn ca_file(pki: &TestPki, name: &str) -> std::path::PathBuf {
    let dir = tempfile::tempdir().unwrap().keep();
    let path = dir.join(name);
    std::fs::write(&path, &pki.ca_pem).unwrap();
    path
}

const CLUSTER_INFO: &str = r#"{"clusterInfo": {"id": 1, "state": "STARTED"}}"#;
const HOME: &str = r#"{"Path": "/user/alice"}"#;

#[tokio::test]
async fn the_rm_and_the_namenode_are_reached_over_https_with_the_cluster_ca() {
    let pki = pki();
    let trust = TlsTrust::CaFile(ca_file(&pki, "ca.pem"));
    let rm = serve(pki.server.clone(), CLUSTER_INFO).await;
    let rest = RmRest::with_trust(
        &format!("https://localhost:{rm}"),
        "alice",
        Duration::from_secs(5),
        &trust,
    )
    .unwrap();
    assert_eq!(rest.cluster_info().await.unwrap().state, "STARTED");
    let nn = serve(pki.server.clone(), HOME).await;
    for address in [
        format!("https://localhost:{nn}"),
        format!("swebhdfs://localhost:{nn}"),
    ] {
        let hdfs = WebHdfs::with_trust(&address, "alice", Duration::from_secs(5), &trust).unwrap();
        assert_eq!(hdfs.home_directory().await.unwrap(), "/user/alice");
    }
}

#[tokio::test]
async fn a_server_the_ca_did_not_sign_is_refused() {
    let (ours, theirs) = (pki(), pki());
    let trust = TlsTrust::CaFile(ca_file(&ours, "ca.pem"));
    let port = serve(theirs.server.clone(), CLUSTER_INFO).await;
    let rest = RmRest::with_trust(
        &format!("https://localhost:{port}"),
        "alice",
        Duration::from_secs(5),
        &trust,
    )
    .unwrap();
    let err = rest.cluster_info().await.unwrap_err();
    let chain = format!("{:#}", anyhow_like(&err));
    assert!(chain.to_lowercase().contains("certificate"), "{chain}");
    // The system store does not know the test CA either.
    let system = RmRest::with_trust(
        &format!("https://localhost:{port}"),
        "alice",
        Duration::from_secs(5),
        &TlsTrust::System,
    )
    .unwrap();
    assert!(system.cluster_info().await.is_err());
}

/// The error and its sources on one line (what anyhow's `{:#}` prints).
fn anyhow_like(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        out.push_str(": ");
        out.push_str(&s.to_string());
        next = s.source();
    }
    out
}

#[test]
fn a_ca_file_that_is_missing_empty_or_a_keystore_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = TlsTrust::CaFile(dir.path().join("nope.pem"));
    let e = missing.apply(reqwest::Client::builder()).unwrap_err();
    assert!(matches!(e, TlsConfigError::Read { .. }), "{e}");
    let jks = dir.path().join("truststore.jks");
    std::fs::write(&jks, [0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]).unwrap();
    let e = TlsTrust::CaFile(jks)
        .apply(reqwest::Client::builder())
        .unwrap_err();
    assert!(e.to_string().contains("keytool -exportcert"), "{e}");
    // Through the clients' constructors: a typed error, not a panic.
    let e = RmRest::with_trust("https://rm:8090", "u", Duration::from_secs(1), &missing)
        .err()
        .unwrap();
    assert!(matches!(e, crate::rest::RestError::Tls(_)), "{e}");
}
