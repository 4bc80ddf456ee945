//! Pieces of a scripted Hadoop IPC server for unit tests (the RPC client's own tests and
//! the AMRM client's): response frames, reading client packets, and the SASL steps the
//! tests play through. Each test still writes its own script; only the wire chores are here.

use bytes::BytesMut;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::frame::ErasedMessage;
use crate::proto::common::rpc_sasl_proto::{SaslAuth, SaslState};
use crate::proto::common::{RpcRequestHeaderProto, RpcResponseHeaderProto, RpcSaslProto};

/// A listener on a free loopback port, and its address.
pub async fn listen() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap().to_string();
    (l, addr)
}

/// One server packet: length prefix, delimited response header, then the delimited body.
pub fn frame(header: &RpcResponseHeaderProto, body: Option<&dyn ErasedMessage>) -> Vec<u8> {
    let mut payload = BytesMut::new();
    header.encode_length_delimited(&mut payload).unwrap();
    if let Some(b) = body {
        b.encode_delimited(&mut payload);
    }
    let mut out = (payload.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&payload);
    out
}

/// Reads one client packet, returning its header and the rest of the payload.
pub async fn read_packet(s: &mut TcpStream) -> Option<(RpcRequestHeaderProto, bytes::Bytes)> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await.ok()?;
    let mut buf = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut buf).await.ok()?;
    let mut b = bytes::Bytes::from(buf);
    let h = RpcRequestHeaderProto::decode_length_delimited(&mut b).ok()?;
    Some((h, b))
}

/// Consumes the preamble and the NEGOTIATE packet (so closing afterwards is a clean FIN);
/// returns the preamble.
pub async fn drain_hello(s: &mut TcpStream) -> [u8; 7] {
    let mut pre = [0u8; 7];
    s.read_exact(&mut pre).await.unwrap();
    read_packet(s).await.unwrap();
    pre
}

/// A successful response header for `call_id` (the SASL exchange uses call id -33).
pub fn ok_header(call_id: i32) -> RpcResponseHeaderProto {
    RpcResponseHeaderProto {
        call_id: call_id as u32,
        status: 0,
        ..Default::default()
    }
}

/// The header of every SASL reply.
pub fn sasl_header() -> RpcResponseHeaderProto {
    ok_header(-33)
}

/// A SASL NEGOTIATE offering TOKEN / DIGEST-MD5 with this challenge.
pub fn digest_negotiate(challenge: &[u8]) -> RpcSaslProto {
    RpcSaslProto {
        state: SaslState::Negotiate as i32,
        auths: vec![SaslAuth {
            method: "TOKEN".into(),
            mechanism: "DIGEST-MD5".into(),
            protocol: Some(String::new()),
            server_id: Some("default".into()),
            challenge: Some(challenge.to_vec()),
        }],
        ..Default::default()
    }
}

/// Skips authentication: drains the hello, answers NEGOTIATE with SUCCESS (the SIMPLE
/// fallback) and reads the connection context, whose header it returns.
pub async fn accept_without_auth(s: &mut TcpStream) -> RpcRequestHeaderProto {
    drain_hello(s).await;
    let ok = RpcSaslProto {
        state: SaslState::Success as i32,
        ..Default::default()
    };
    s.write_all(&frame(&sasl_header(), Some(&ok)))
        .await
        .unwrap();
    read_packet(s).await.unwrap().0
}

/// The value of a directive in a DIGEST-MD5 response (quoted or not).
pub fn directive(resp: &str, key: &str) -> Option<String> {
    resp.split(',')
        .find_map(|kv| kv.trim().strip_prefix(&format!("{key}=")))
        .map(|v| v.trim_matches('"').to_string())
}

/// Plays a Hadoop server's DIGEST-MD5 exchange for `token` with `challenge`: checks the
/// client's response, sends SUCCESS with the right rspauth, and returns the client's
/// response text plus the server's security layer (`None` under qop `auth`).
pub async fn accept_digest(
    s: &mut TcpStream,
    token: &crate::token::Token,
    challenge: &str,
) -> (
    String,
    Option<(
        crate::sasl::layer::DigestSealer,
        crate::sasl::layer::DigestOpener,
    )>,
) {
    use crate::sasl::layer::{new_layer, Side};
    use crate::sasl::{parse_challenge, DigestMd5Client, Qop};
    drain_hello(s).await;
    let neg = digest_negotiate(challenge.as_bytes());
    s.write_all(&frame(&sasl_header(), Some(&neg)))
        .await
        .unwrap();
    let (_, mut body) = read_packet(s).await.unwrap();
    let init = RpcSaslProto::decode_length_delimited(&mut body).unwrap();
    let resp = String::from_utf8(init.token.unwrap()).unwrap();
    let qop = Qop::parse(&directive(&resp, "qop").unwrap()).unwrap();
    let p = parse_challenge(challenge.as_bytes()).unwrap();
    let server = DigestMd5Client::with_cnonce(
        &token.identifier,
        &token.password,
        directive(&resp, "cnonce").unwrap(),
    );
    let realm = p.realm.clone().unwrap_or_default();
    let (expected, rspauth) = server.compute(&p, &realm, "/default", qop);
    assert_eq!(directive(&resp, "response").unwrap(), expected, "{resp}");
    let ok = RpcSaslProto {
        state: SaslState::Success as i32,
        token: Some(format!("rspauth={rspauth}").into_bytes()),
        ..Default::default()
    };
    s.write_all(&frame(&sasl_header(), Some(&ok)))
        .await
        .unwrap();
    let layer = new_layer(qop, &server.ha1(&realm, &p.nonce), Side::Server);
    (resp, layer)
}

/// Reads WRAP packets until the plaintext holds at least one whole client packet; returns
/// the complete packets (header, rest). `plain` keeps a partial packet for the next call.
pub async fn read_wrapped(
    s: &mut TcpStream,
    opener: &mut dyn crate::sasl::Unseal,
    plain: &mut Vec<u8>,
) -> Option<Vec<(RpcRequestHeaderProto, bytes::Bytes)>> {
    loop {
        let mut out = Vec::new();
        while plain.len() >= 4 {
            let len = u32::from_be_bytes(plain[..4].try_into().unwrap()) as usize;
            if plain.len() < 4 + len {
                break;
            }
            let mut body = bytes::Bytes::copy_from_slice(&plain[4..4 + len]);
            plain.drain(..4 + len);
            let h = RpcRequestHeaderProto::decode_length_delimited(&mut body).ok()?;
            out.push((h, body));
        }
        if !out.is_empty() {
            return Some(out);
        }
        let (h, mut body) = read_packet(s).await?;
        assert_eq!(
            h.call_id, -33,
            "client sent a packet outside the security layer"
        );
        let m = RpcSaslProto::decode_length_delimited(&mut body).ok()?;
        assert_eq!(m.state, SaslState::Wrap as i32);
        plain.extend(
            opener
                .unseal(&m.token.unwrap_or_default())
                .expect("client token opens"),
        );
    }
}

/// Sends `plain` (whole or partial server packets) as one WRAP packet.
pub async fn write_wrapped(s: &mut TcpStream, sealer: &mut dyn crate::sasl::Seal, plain: &[u8]) {
    let m = RpcSaslProto {
        state: SaslState::Wrap as i32,
        token: Some(sealer.seal(plain)),
        ..Default::default()
    };
    s.write_all(&frame(&sasl_header(), Some(&m))).await.unwrap();
}
