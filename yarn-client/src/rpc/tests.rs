//! Error handling of the IPC client against local sockets that misbehave: silence,
//! garbage, truncated frames, FATAL replies, refused connections. Plus call multiplexing
//! against a minimal scripted server. (The real-protocol proof is the cluster test.)

use std::time::Duration;

use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::test_server::{
    accept_without_auth, digest_negotiate, drain_hello, frame, listen, ok_header, read_packet,
    sasl_header,
};
use super::*;
use crate::proto::common::rpc_response_header_proto::RpcStatusProto;
use crate::proto::common::rpc_sasl_proto::SaslState;
use crate::proto::common::{RpcResponseHeaderProto, RpcSaslProto};
use crate::proto::yarn::{
    FinishApplicationMasterRequestProto, FinishApplicationMasterResponseProto,
};

/// Short timeouts; SIMPLE fallback allowed because most scripts here skip authentication
/// (`accept_without_auth`) to test what comes after it.
pub(super) fn cfg() -> RpcConfig {
    RpcConfig {
        connect_timeout: Duration::from_millis(500),
        call_timeout: Duration::from_millis(500),
        ping_interval: Duration::from_millis(100),
        max_idle: Duration::from_millis(300),
        fallback_to_simple_auth_allowed: true,
        min_qop: Qop::Auth,
    }
}

pub(super) fn token() -> Token {
    Token {
        identifier: vec![1, 2, 3],
        password: vec![4, 5, 6],
        kind: "YARN_AM_RM_TOKEN".into(),
        service: String::new(),
    }
}

/// Binds a listener and runs `serve` on the first accepted connection.
pub(super) async fn server<F, Fut>(serve: F) -> String
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let (l, addr) = listen().await;
    tokio::spawn(async move {
        if let Ok((s, _)) = l.accept().await {
            serve(s).await;
        }
    });
    addr
}

/// One call against a server that runs `script` on its connection; the call must fail.
async fn failed_call<F, Fut>(script: F) -> RpcError
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let addr = server(script).await;
    call(&client(&addr)).await.unwrap_err()
}

fn client(addr: &str) -> RpcClient {
    client_with(addr, cfg())
}

/// A token client of `test.Protocol` with these settings.
pub(super) fn client_with(addr: &str, cfg: RpcConfig) -> RpcClient {
    RpcClient::new(addr, "test.Protocol", 1, Auth::Token(token()), cfg)
}

pub(super) async fn call(c: &RpcClient) -> Result<FinishApplicationMasterResponseProto, RpcError> {
    c.call(
        "finishApplicationMaster",
        &FinishApplicationMasterRequestProto::default(),
    )
    .await
}

#[tokio::test]
async fn silent_server_times_out() {
    let e = failed_call(|mut s| async move {
        let mut sink = vec![0u8; 1024];
        while s.read(&mut sink).await.is_ok_and(|n| n > 0) {}
    })
    .await;
    assert!(matches!(e, RpcError::Timeout { .. }), "{e}");
}

#[tokio::test]
async fn garbage_is_a_protocol_or_frame_error() {
    let e = failed_call(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 404 Not Found\r\n\r\nnot hadoop at all")
            .await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    })
    .await;
    assert!(matches!(e, RpcError::Frame { .. }), "{e}");
}

#[tokio::test]
async fn truncated_frame_then_close() {
    let e = failed_call(|mut s| async move {
        drain_hello(&mut s).await;
        let _ = s.write_all(&[0, 0, 0, 50, 1, 2, 3]).await;
    })
    .await;
    assert!(
        matches!(
            e,
            RpcError::Frame {
                source: frame::FrameError::Truncated { got: 3, want: 50 },
                ..
            }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn truncated_frame_then_silence_times_out() {
    let e = failed_call(|mut s| async move {
        let _ = s.write_all(&[0, 0, 0, 50, 1, 2, 3]).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
    })
    .await;
    assert!(matches!(e, RpcError::Timeout { .. }), "{e}");
}

#[tokio::test]
async fn immediate_close_is_eof() {
    let e = failed_call(|mut s| async move {
        drain_hello(&mut s).await;
        drop(s)
    })
    .await;
    assert!(
        matches!(
            e,
            RpcError::Frame {
                source: frame::FrameError::Eof,
                ..
            }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn refused_connection_is_connect_error() {
    let (l, addr) = listen().await;
    drop(l);
    let e = call(&client(&addr)).await.unwrap_err();
    assert!(matches!(e, RpcError::Connect { .. }), "{e}");
}

#[tokio::test]
async fn unroutable_address_times_out() {
    // TEST-NET-1: never answers; connect must give up within the timeout.
    let start = std::time::Instant::now();
    let e = call(&client("192.0.2.1:8030")).await.unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(
        matches!(e, RpcError::Timeout { .. } | RpcError::Connect { .. }),
        "{e}"
    );
}

#[tokio::test]
async fn fatal_sasl_reply_is_auth_rejected() {
    let e = failed_call(|mut s| async move {
        let pre = drain_hello(&mut s).await;
        assert_eq!(&pre, b"hrpc\x09\x00\xDF");
        let h = RpcResponseHeaderProto {
            call_id: (-1i32) as u32,
            status: RpcStatusProto::Fatal as i32,
            exception_class_name: Some(
                "org.apache.hadoop.security.token.SecretManager$InvalidToken".into(),
            ),
            error_msg: Some("Invalid AMRMToken from appattempt_1_0001_000001".into()),
            error_detail: Some(15),
            ..Default::default()
        };
        let _ = s.write_all(&frame(&h, None)).await;
    })
    .await;
    assert!(e.is_auth_failure(), "{e}");
    assert!(e.is_class("InvalidToken"), "{e}");
    assert!(e.to_string().contains("Invalid AMRMToken"), "{e}");
}

#[tokio::test]
async fn wrong_rspauth_is_sasl_error() {
    let e = failed_call(|mut s| async move {
        drain_hello(&mut s).await;
        let sasl_hdr = sasl_header();
        let negotiate = digest_negotiate(
            b"realm=\"default\",nonce=\"abc\",qop=\"auth\",charset=utf-8,algorithm=md5-sess",
        );
        s.write_all(&frame(&sasl_hdr, Some(&negotiate)))
            .await
            .unwrap();
        let (_, mut body) = read_packet(&mut s).await.unwrap();
        let init = RpcSaslProto::decode_length_delimited(&mut body).unwrap();
        assert_eq!(init.state, SaslState::Initiate as i32);
        assert_eq!(init.auths.len(), 1);
        assert_eq!(
            init.auths[0].challenge, None,
            "challenge must not be echoed"
        );
        assert_eq!(
            init.auths[0].protocol.as_deref(),
            Some(""),
            "empty protocol must stay present"
        );
        let success = RpcSaslProto {
            state: SaslState::Success as i32,
            token: Some(b"rspauth=0123456789abcdef0123456789abcdef".to_vec()),
            ..Default::default()
        };
        let _ = s.write_all(&frame(&sasl_hdr, Some(&success))).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    })
    .await;
    assert!(
        matches!(
            e,
            RpcError::Sasl {
                source: crate::sasl::SaslError::BadServerProof,
                ..
            }
        ),
        "{e}"
    );
}

/// A scripted server that skips auth (SUCCESS to NEGOTIATE = SIMPLE fallback), then answers
/// two concurrent calls in reverse order, then an ERROR, then goes FATAL.
#[tokio::test]
async fn multiplexes_calls_and_maps_errors() {
    let addr = server(|mut s| async move {
        let ctx = accept_without_auth(&mut s).await;
        assert_eq!(ctx.call_id, -3);
        let (a, _) = read_packet(&mut s).await.unwrap();
        let (b, _) = read_packet(&mut s).await.unwrap();
        for (id, unreg) in [(b.call_id, false), (a.call_id, true)] {
            let h = ok_header(id);
            let body = FinishApplicationMasterResponseProto {
                is_unregistered: Some(unreg),
            };
            s.write_all(&frame(&h, Some(&body))).await.unwrap();
        }
        let (c, _) = read_packet(&mut s).await.unwrap();
        let err = RpcResponseHeaderProto {
            call_id: c.call_id as u32,
            status: RpcStatusProto::Error as i32,
            exception_class_name: Some(
                "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException".into(),
            ),
            error_msg: Some("AM is not registered\n\tat stack".into()),
            error_detail: Some(1),
            ..Default::default()
        };
        s.write_all(&frame(&err, None)).await.unwrap();
        let (_d, _) = read_packet(&mut s).await.unwrap();
        let fatal = RpcResponseHeaderProto {
            call_id: (-1i32) as u32,
            status: RpcStatusProto::Fatal as i32,
            exception_class_name: Some("org.apache.hadoop.ipc.IpcException".into()),
            error_msg: Some("going away".into()),
            ..Default::default()
        };
        s.write_all(&frame(&fatal, None)).await.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
    })
    .await;
    let c = client(&addr);
    c.connect().await.unwrap();
    let (r1, r2) = tokio::join!(call(&c), call(&c));
    let mut got = [r1.unwrap().is_unregistered(), r2.unwrap().is_unregistered()];
    got.sort();
    assert_eq!(got, [false, true]);
    let e = call(&c).await.unwrap_err();
    assert!(e.is_class("ApplicationMasterNotRegisteredException"), "{e}");
    assert_eq!(e.remote().unwrap().summary(), "AM is not registered");
    let e = call(&c).await.unwrap_err();
    assert!(e.is_class("IpcException"), "{e}");
    assert!(e.remote().unwrap().fatal);
    // The connection is dead; the next call reconnects (to a listener that no longer
    // answers) and fails cleanly instead of reusing the closed connection.
    let e = call(&c).await.unwrap_err();
    assert!(
        matches!(e, RpcError::Connect { .. } | RpcError::Timeout { .. }),
        "{e}"
    );
}

/// Idle connections close themselves; the next call opens a new one.
#[tokio::test]
async fn idle_close_and_reconnect() {
    let (l, addr) = listen().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                accept_without_auth(&mut s).await;
                while let Some((h, _)) = read_packet(&mut s).await {
                    tx.send(h.call_id).unwrap();
                    if h.call_id < 0 {
                        continue; // ping: no reply
                    }
                    let r = ok_header(h.call_id);
                    let body = FinishApplicationMasterResponseProto::default();
                    s.write_all(&frame(&r, Some(&body))).await.unwrap();
                }
                tx.send(-100).unwrap(); // connection closed by the client
            });
        }
    });
    let c = client(&addr);
    call(&c).await.unwrap();
    assert_eq!(rx.recv().await, Some(0));
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(3), rx.recv())
            .await
            .unwrap(),
        Some(-100),
        "idle connection should be closed"
    );
    call(&c).await.unwrap();
    assert_eq!(rx.recv().await, Some(0), "new connection restarts call ids");
}

/// While a call waits longer than the ping interval, the client pings (call id -4,
/// retry count -1, our client id) and the late reply still reaches the caller.
#[tokio::test]
async fn pings_while_a_call_is_outstanding() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let addr = server(|mut s| async move {
        accept_without_auth(&mut s).await;
        let (call, _) = read_packet(&mut s).await.unwrap();
        // Stay silent; the next packet must be a ping.
        let (ping, rest) = read_packet(&mut s).await.unwrap();
        tx.send((
            ping.call_id,
            ping.retry_count,
            rest.len(),
            ping.client_id == call.client_id,
        ))
        .unwrap();
        let r = ok_header(call.call_id);
        let body = FinishApplicationMasterResponseProto {
            is_unregistered: Some(true),
        };
        s.write_all(&frame(&r, Some(&body))).await.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
    })
    .await;
    let c = client_with(
        &addr,
        RpcConfig {
            call_timeout: Duration::from_secs(2),
            ..cfg()
        },
    );
    assert!(call(&c).await.unwrap().is_unregistered());
    assert_eq!(rx.recv().await, Some((-4, Some(-1), 0, true)));
}

/// A server that drops the socket after our SASL response (what a 3.4.1 NM does with a
/// non-NM token) is an authentication failure, not a generic EOF.
#[tokio::test]
async fn close_after_sasl_response_is_auth_failure() {
    let e = failed_call(|mut s| async move {
        drain_hello(&mut s).await;
        let negotiate = digest_negotiate(b"realm=\"default\",nonce=\"n\",qop=\"auth\"");
        s.write_all(&frame(&sasl_header(), Some(&negotiate)))
            .await
            .unwrap();
        read_packet(&mut s).await.unwrap();
    })
    .await;
    assert!(matches!(e, RpcError::SaslAborted { .. }), "{e}");
    assert!(e.is_auth_failure());
}

/// A FATAL reply fails every call in flight, not only the one it names.
#[tokio::test]
async fn fatal_fails_all_calls_in_flight() {
    let addr = server(|mut s| async move {
        accept_without_auth(&mut s).await;
        read_packet(&mut s).await.unwrap();
        read_packet(&mut s).await.unwrap();
        let fatal = RpcResponseHeaderProto {
            call_id: (-1i32) as u32,
            status: RpcStatusProto::Fatal as i32,
            exception_class_name: Some("org.apache.hadoop.ipc.IpcException".into()),
            error_msg: Some("bad header".into()),
            error_detail: Some(12),
            ..Default::default()
        };
        s.write_all(&frame(&fatal, None)).await.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
    })
    .await;
    let c = client(&addr);
    c.connect().await.unwrap();
    let (a, b) = tokio::join!(call(&c), call(&c));
    for e in [a.unwrap_err(), b.unwrap_err()] {
        let r = e.remote().unwrap_or_else(|| panic!("{e}"));
        assert!(
            r.fatal && r.is_class("IpcException") && r.code == Some(12),
            "{r:?}"
        );
    }
    assert!(!c.is_connected().await);
}

/// A call that times out closes its stalled connection: the next call opens a new one
/// (which works) instead of waiting on the stalled one again.
#[tokio::test]
async fn a_timed_out_call_closes_the_stalled_connection() {
    let (l, addr) = listen().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((mut s, _)) = l.accept().await {
            n += 1;
            let (tx, stall) = (tx.clone(), n == 1);
            tokio::spawn(async move {
                accept_without_auth(&mut s).await;
                while let Some((h, _)) = read_packet(&mut s).await {
                    if h.call_id < 0 {
                        continue; // ping
                    }
                    tx.send(n).unwrap();
                    if stall {
                        continue; // the first connection never answers
                    }
                    let r = ok_header(h.call_id);
                    let body = FinishApplicationMasterResponseProto::default();
                    s.write_all(&frame(&r, Some(&body))).await.unwrap();
                }
            });
        }
    });
    let c = client(&addr);
    let e = call(&c).await.unwrap_err();
    assert!(matches!(e, RpcError::Timeout { .. }), "{e}");
    assert!(!c.is_connected().await, "the stalled connection is closed");
    call(&c)
        .await
        .expect("the next call reconnects and gets its answer");
    assert_eq!(rx.recv().await, Some(1));
    assert_eq!(
        rx.recv().await,
        Some(2),
        "the retry went out on a new connection"
    );
}
