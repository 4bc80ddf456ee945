//! The pin on a real TLS handshake over loopback (tokio-rustls on both ends).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use super::*;

/// A loopback server that completes one handshake per connection and echoes one line.
async fn echo_server(config: Arc<rustls::ServerConfig>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = TlsAcceptor::from(config);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(mut tls) = acceptor.accept(stream).await {
                    let mut buf = [0u8; 5];
                    if tls.read_exact(&mut buf).await.is_ok() {
                        let _ = tls.write_all(&buf).await;
                        let _ = tls.shutdown().await;
                    }
                }
            });
        }
    });
    addr
}

/// Handshakes with `pin` and sends "hello"; the echo, or the handshake's error.
async fn talk(addr: std::net::SocketAddr, pin: Fingerprint) -> std::io::Result<String> {
    let connector = TlsConnector::from(Arc::new(pinned_client_config(pin)));
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = tokio::time::timeout(Duration::from_secs(5), connector.connect(name, tcp))
        .await
        .expect("the handshake did not end within 5 s")?;
    tls.write_all(b"hello").await?;
    let mut out = String::new();
    tls.read_to_string(&mut out).await?;
    Ok(out)
}

#[tokio::test]
async fn the_pinned_certificate_is_accepted_whatever_the_name() {
    let cert = AppCert::generate().unwrap();
    let addr = echo_server(cert.server_config().unwrap()).await;
    // The certificate names `yarn-am`; the client dials 127.0.0.1: the pin is what counts.
    assert_eq!(talk(addr, cert.fingerprint()).await.unwrap(), "hello");
}

#[tokio::test]
async fn another_certificate_is_refused_naming_both_fingerprints() {
    let cert = AppCert::generate().unwrap();
    let other = AppCert::generate().unwrap();
    let addr = echo_server(cert.server_config().unwrap()).await;
    let err = talk(addr, other.fingerprint()).await.unwrap_err();
    match pin_error(&err) {
        Some(TlsError::WrongCertificate { expected, seen }) => {
            assert_eq!(expected, other.fingerprint());
            assert_eq!(seen, cert.fingerprint());
        }
        other => panic!("not a pin refusal: {other:?} ({err})"),
    }
    let text = pin_error(&err).unwrap().to_string();
    assert!(
        text.contains(&cert.fingerprint().to_string())
            && text.contains(&other.fingerprint().to_string()),
        "{text}"
    );
}

/// A server that presents the pinned certificate without its key (it copied the DER, as
/// anyone who connected once could) cannot sign the handshake: refused.
#[tokio::test]
async fn the_pinned_certificate_without_its_key_is_refused() {
    #[derive(Debug)]
    struct Stolen(Arc<rustls::sign::CertifiedKey>);
    impl rustls::server::ResolvesServerCert for Stolen {
        fn resolve(
            &self,
            _: rustls::server::ClientHello<'_>,
        ) -> Option<Arc<rustls::sign::CertifiedKey>> {
            Some(self.0.clone())
        }
    }
    let genuine = AppCert::generate().unwrap();
    let thief = AppCert::generate().unwrap();
    let key = provider()
        .key_provider
        .load_private_key(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            thief.key_der.clone(),
        )))
        .unwrap();
    let certified =
        rustls::sign::CertifiedKey::new(vec![CertificateDer::from(genuine.cert_der.clone())], key);
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(Stolen(Arc::new(certified))));
    let addr = echo_server(Arc::new(config)).await;
    let err = talk(addr, genuine.fingerprint()).await.unwrap_err();
    assert!(pin_error(&err).is_none(), "{err}");
    assert!(
        err.to_string().to_lowercase().contains("signature"),
        "{err}"
    );
}

#[test]
fn fingerprints_parse_in_the_forms_tools_print() {
    let cert = AppCert::generate().unwrap();
    let f = cert.fingerprint();
    let hex = f.to_string();
    assert_eq!(hex.len(), 64);
    let colons: Vec<String> = f.0.iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(Fingerprint::parse(&colons.join(":")).unwrap(), f);
    assert_eq!(Fingerprint::parse(&hex).unwrap(), f);
    assert!(Fingerprint::parse("abc").is_err());
    assert_eq!(Fingerprint::from_bytes(&f.0).unwrap(), f);
    assert!(Fingerprint::from_bytes(&[1, 2]).is_err());
}

#[test]
fn the_credentials_carry_the_certificate_and_key() {
    let cert = AppCert::generate().unwrap();
    let creds = Credentials {
        tokens: vec![],
        secrets: cert.credential_secrets().to_vec(),
    };
    let back = AppCert::from_credentials(&creds).unwrap();
    assert_eq!(back.fingerprint(), cert.fingerprint());
    assert!(back.server_config().is_ok());
    let missing = AppCert::from_credentials(&Credentials::default()).unwrap_err();
    assert!(missing.to_string().contains(CERT_ALIAS), "{missing}");
}
