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
