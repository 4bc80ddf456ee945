//! Token rollover against a scripted DIGEST-MD5 server (the real RM rolls its key only
//! daily, so the cluster tests cannot show it): after an allocate response carries a new
//! AMRM token, the next connection must authenticate with it.

use std::time::Duration;

use base64::Engine;
use prost::Message;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::*;
use crate::proto::common::rpc_sasl_proto::SaslState;
use crate::proto::common::{RequestHeaderProto, RpcSaslProto, TokenProto};
use crate::rpc::test_server::{
    digest_negotiate, drain_hello, frame, listen, ok_header, read_packet, sasl_header,
};
use crate::sasl::{parse_challenge, DigestMd5Client};

fn tok(id: u8) -> Token {
    Token {
        identifier: vec![id; 8],
        password: vec![id + 100; 20],
        kind: "YARN_AM_RM_TOKEN".into(),
        service: String::new(),
    }
}

fn directive(resp: &str, key: &str) -> String {
    let start = resp.find(&format!("{key}=\"")).unwrap() + key.len() + 2;
    resp[start..].split('"').next().unwrap().to_string()
}

/// Serves one connection like the RM: DIGEST-MD5 with whichever of `tokens` the client
/// names, then answers allocate calls. Reports the authenticated token id byte.
async fn serve(
    mut s: TcpStream,
    tokens: Vec<Token>,
    roll_to: Option<Token>,
    seen: tokio::sync::mpsc::UnboundedSender<u8>,
) {
    drain_hello(&mut s).await;
    let sasl = sasl_header();
    let challenge = "realm=\"default\",nonce=\"N1\",qop=\"auth\",charset=utf-8,algorithm=md5-sess";
    let neg = digest_negotiate(challenge.as_bytes());
    s.write_all(&frame(&sasl, Some(&neg))).await.unwrap();
    let (_, mut body) = read_packet(&mut s).await.unwrap();
    let init = RpcSaslProto::decode_length_delimited(&mut body).unwrap();
    let resp = String::from_utf8(init.token.unwrap()).unwrap();
    let user = base64::engine::general_purpose::STANDARD
        .decode(directive(&resp, "username"))
        .unwrap();
    let token = tokens
        .iter()
        .find(|t| t.identifier == user)
        .unwrap()
        .clone();
    seen.send(token.identifier[0]).unwrap();
    let server = DigestMd5Client::with_cnonce(
        &token.identifier,
        &token.password,
        directive(&resp, "cnonce"),
    );
    let (expected, rspauth) = server.compute(
        &parse_challenge(challenge.as_bytes()).unwrap(),
        "default",
        "/default",
        crate::sasl::Qop::Auth,
    );
    assert!(resp.contains(&format!("response={expected}")), "{resp}");
    let ok = RpcSaslProto {
        state: SaslState::Success as i32,
        token: Some(format!("rspauth={rspauth}").into_bytes()),
        ..Default::default()
    };
    s.write_all(&frame(&sasl, Some(&ok))).await.unwrap();
    read_packet(&mut s).await.unwrap(); // context
    let (h, mut body) = read_packet(&mut s).await.unwrap();
    let rh = RequestHeaderProto::decode_length_delimited(&mut body).unwrap();
    assert_eq!(rh.method_name, "allocate");
    let req = AllocateRequestProto::decode_length_delimited(&mut body).unwrap();
    let reply = AllocateResponseProto {
        response_id: Some(req.response_id() + 1),
        am_rm_token: roll_to.as_ref().map(TokenProto::from),
        ..Default::default()
    };
    let rh = ok_header(h.call_id);
    s.write_all(&frame(&rh, Some(&reply))).await.unwrap();
    // Then hang up, as an RM restart would.
}

#[tokio::test]
async fn rolled_over_token_is_used_for_the_next_connection() {
    let (l, addr) = listen().await;
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let (s, _) = l.accept().await.unwrap();
        serve(s, vec![tok(1), tok(2)], Some(tok(2)), tx.clone()).await;
        let (s, _) = l.accept().await.unwrap();
        serve(s, vec![tok(1), tok(2)], None, tx).await;
    });
    let cfg = RpcConfig {
        connect_timeout: Duration::from_secs(2),
        call_timeout: Duration::from_secs(2),
        ..RpcConfig::default()
    };
    let mut c = AmRmClient::new(&addr, tok(1), cfg);
    let r = c.allocate(&AllocateInput::default()).await.unwrap();
    assert_eq!(r.response_id(), 1);
    assert_eq!(seen.recv().await, Some(1));
    // Let the client notice the hang-up, then heartbeat again on a new connection.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let input = AllocateInput {
        response_id: 1,
        ..AllocateInput::default()
    };
    let r = c.allocate(&input).await.unwrap();
    assert_eq!(
        seen.recv().await,
        Some(2),
        "second connection must use the rolled token"
    );
    assert_eq!(r.response_id(), 2, "the caller's response id went out");
}
