//! The connection under a SASL security layer and the refusal of SIMPLE fallback, against
//! a scripted server that plays Hadoop's side with the server half of our own layer (the
//! layer itself is checked against JDK-made vectors in `sasl::layer`; the real cluster
//! test `it_qop` is the end-to-end proof).

use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::frame::MAX_PREAUTH_FRAME_LEN;
use super::test_server::{
    accept_digest, digest_negotiate, directive, drain_hello, frame, ok_header, read_packet,
    read_wrapped, sasl_header, write_wrapped,
};
use super::tests::{call, cfg, client_with, server, token};
use super::*;
use crate::proto::common::rpc_sasl_proto::{SaslAuth, SaslState};
use crate::proto::common::{IpcConnectionContextProto, RpcSaslProto};
use crate::proto::yarn::FinishApplicationMasterResponseProto;

const CONF_CHALLENGE: &str = "realm=\"default\",nonce=\"NzQ\",qop=\"auth-conf\",charset=utf-8,\
                              cipher=\"3des,rc4,des,rc4-56,rc4-40\",algorithm=md5-sess";
const INT_CHALLENGE: &str =
    "realm=\"default\",nonce=\"NzQ\",qop=\"auth-int\",charset=utf-8,algorithm=md5-sess";

fn strict_client(addr: &str) -> RpcClient {
    client_with(
        addr,
        RpcConfig {
            fallback_to_simple_auth_allowed: false,
            call_timeout: Duration::from_secs(2),
            ..cfg()
        },
    )
}

/// Under auth-conf and auth-int: the connection context, the call and a ping all go out
/// wrapped, and a reply cut across two tokens reaches the caller.
#[tokio::test]
async fn calls_context_and_pings_are_wrapped() {
    for challenge in [CONF_CHALLENGE, INT_CHALLENGE] {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let addr = server(move |mut s| async move {
            let (resp, layer) = accept_digest(&mut s, &token(), challenge).await;
            let (mut sealer, mut opener) = layer.expect("a layer was negotiated");
            let mut plain = Vec::new();
            let ctx = read_wrapped(&mut s, &mut opener, &mut plain).await.unwrap();
            assert_eq!(ctx[0].0.call_id, -3, "the connection context comes first");
            let mut body = ctx[0].1.clone();
            let c = IpcConnectionContextProto::decode_length_delimited(&mut body).unwrap();
            assert_eq!(c.protocol.as_deref(), Some("test.Protocol"));
            let call_pkt = match ctx.get(1) {
                Some(p) => p.clone(),
                None => read_wrapped(&mut s, &mut opener, &mut plain).await.unwrap()[0].clone(),
            };
            // Stay silent past the ping interval: the ping must be wrapped too.
            let ping = read_wrapped(&mut s, &mut opener, &mut plain).await.unwrap();
            tx.send((resp, call_pkt.0.call_id, ping[0].0.call_id))
                .unwrap();
            let reply = frame(
                &ok_header(call_pkt.0.call_id),
                Some(&FinishApplicationMasterResponseProto {
                    is_unregistered: Some(true),
                }),
            );
            let (a, b) = reply.split_at(7);
            write_wrapped(&mut s, &mut sealer, a).await;
            write_wrapped(&mut s, &mut sealer, b).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        })
        .await;
        let c = strict_client(&addr);
        assert!(call(&c).await.unwrap().is_unregistered());
        let (resp, call_id, ping_id) = rx.recv().await.unwrap();
        let qop = directive(&resp, "qop").unwrap();
        assert_eq!(
            qop,
            if challenge == CONF_CHALLENGE {
                "auth-conf"
            } else {
                "auth-int"
            }
        );
        assert_eq!(
            directive(&resp, "cipher").is_some(),
            challenge == CONF_CHALLENGE,
            "{resp}"
        );
        assert_eq!((call_id, ping_id), (0, -4));
    }
}

/// A reply whose token was altered on the way ends the connection with the layer's reason.
#[tokio::test]
async fn tampered_reply_fails_the_call() {
    let addr = server(|mut s| async move {
        let (_, layer) = accept_digest(&mut s, &token(), INT_CHALLENGE).await;
        let (mut sealer, mut opener) = layer.unwrap();
        let mut plain = Vec::new();
        let mut pkts = read_wrapped(&mut s, &mut opener, &mut plain).await.unwrap();
        if pkts.len() < 2 {
            pkts.extend(read_wrapped(&mut s, &mut opener, &mut plain).await.unwrap());
        }
        let reply = frame(&ok_header(pkts[1].0.call_id), None);
        let mut token = crate::sasl::Seal::seal(&mut sealer, &reply);
        token[0] ^= 0xFF;
        let m = RpcSaslProto {
            state: SaslState::Wrap as i32,
            token: Some(token),
            ..Default::default()
        };
        s.write_all(&frame(&sasl_header(), Some(&m))).await.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
    })
    .await;
    let e = call(&strict_client(&addr)).await.unwrap_err();
    assert!(
        matches!(&e, RpcError::ConnectionLost { reason, .. } if reason.contains("MAC")),
        "{e}"
    );
}

/// A server that answers the client's NEGOTIATE with `reply`, then reports the call ids of
/// what the client sent after it (up to the connection context, or the end).
async fn answer_negotiate(
    reply: RpcSaslProto,
) -> (String, tokio::sync::mpsc::UnboundedReceiver<Vec<i32>>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let addr = server(move |mut s| async move {
        drain_hello(&mut s).await;
        s.write_all(&frame(&sasl_header(), Some(&reply)))
            .await
            .unwrap();
        let mut after = Vec::new();
        while let Some((h, _)) = read_packet(&mut s).await {
            after.push(h.call_id);
            if h.call_id == -3 {
                break;
            }
        }
        tx.send(after).unwrap();
    })
    .await;
    (addr, rx)
}

/// Both ways a server can switch to SIMPLE after we offered a token are refused by
/// default, with an error naming the server and the key that allows it; the client sends
/// nothing more (no connection context).
#[tokio::test]
async fn simple_fallback_is_refused_unless_allowed() {
    let success = RpcSaslProto {
        state: SaslState::Success as i32,
        ..Default::default()
    };
    let simple_offer = RpcSaslProto {
        state: SaslState::Negotiate as i32,
        auths: vec![SaslAuth {
            method: "SIMPLE".into(),
            mechanism: String::new(),
            ..Default::default()
        }],
        ..Default::default()
    };
    for reply in [success, simple_offer] {
        for allowed in [false, true] {
            let (addr, mut rx) = answer_negotiate(reply.clone()).await;
            let c = client_with(
                &addr,
                RpcConfig {
                    fallback_to_simple_auth_allowed: allowed,
                    ..cfg()
                },
            );
            let r = c.connect().await;
            let after = rx.recv().await.unwrap();
            if allowed {
                r.unwrap();
                assert_eq!(
                    after.last(),
                    Some(&-3),
                    "context sent after allowed fallback"
                );
                continue;
            }
            let e = r.unwrap_err();
            assert!(matches!(e, RpcError::SimpleFallbackRefused { .. }), "{e}");
            assert!(e.is_auth_failure());
            let msg = e.to_string();
            assert!(msg.contains(&addr), "{msg}");
            assert!(msg.contains(FALLBACK_TO_SIMPLE_KEY), "{msg}");
            assert!(
                after.is_empty(),
                "nothing sent after the refusal: {after:?}"
            );
        }
    }
}

/// The QOP floor (the audit's design note): a client whose `hadoop.rpc.protection` is
/// `privacy` refuses a server that offers only `auth` (as a man in the middle stripping
/// the stronger qops from the unauthenticated challenge would), with an error naming both,
/// and answers nothing to it; nor does it accept a switch to SIMPLE, even where SIMPLE
/// fallback is allowed.
#[tokio::test]
async fn a_server_below_the_qop_floor_is_refused() {
    let auth_only = digest_negotiate(
        b"realm=\"default\",nonce=\"NzQ\",qop=\"auth\",charset=utf-8,algorithm=md5-sess",
    );
    let success = RpcSaslProto {
        state: SaslState::Success as i32,
        ..Default::default()
    };
    for (reply, offered) in [(auth_only, "\"auth\""), (success, "\"SIMPLE\"")] {
        let (addr, mut rx) = answer_negotiate(reply).await;
        let c = client_with(
            &addr,
            RpcConfig {
                min_qop: Qop::minimum_from_protection("privacy").unwrap(),
                fallback_to_simple_auth_allowed: true,
                ..cfg()
            },
        );
        let e = c.connect().await.unwrap_err();
        assert!(
            matches!(
                e,
                RpcError::Sasl {
                    source: SaslError::QopBelowMinimum {
                        minimum: Qop::AuthConf,
                        ..
                    },
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.is_auth_failure());
        let msg = e.to_string();
        for needle in [
            offered,
            "minimum auth-conf",
            "hadoop.rpc.protection = privacy",
            &addr,
        ] {
            assert!(msg.contains(needle), "{needle} not in {msg}");
        }
        drop(c);
        let after = rx.recv().await.unwrap();
        assert!(after.is_empty(), "sent after the refusal: {after:?}");
    }
}

/// Audit L4 on IPC: before SASL completes, a frame over `MAX_PREAUTH_FRAME_LEN` (64 KiB) is
/// refused on its length, before its bytes are read, with an error naming the limit.
#[tokio::test]
async fn a_large_frame_before_authentication_is_refused() {
    for len in [120u32 << 20, MAX_PREAUTH_FRAME_LEN + 1] {
        let addr = server(move |mut s| async move {
            drain_hello(&mut s).await;
            let mut head = len.to_be_bytes().to_vec();
            head.extend(std::iter::repeat_n(0u8, 4096));
            let _ = s.write_all(&head).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        })
        .await;
        let e = strict_client(&addr).connect().await.unwrap_err();
        assert!(
            matches!(
                e,
                RpcError::Frame {
                    source: FrameError::TooLarge {
                        limit: MAX_PREAUTH_FRAME_LEN,
                        ..
                    },
                    ..
                }
            ),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("65536-byte limit before authentication"),
            "{msg}"
        );
    }
}
