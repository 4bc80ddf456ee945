//! Connection start: preamble, SASL negotiation, connection context.
//!
//! The RM scheduler port and NodeManagers accept only TOKEN (DIGEST-MD5) auth, even on an
//! insecure cluster, so an AM always negotiates. SIMPLE is used when the caller has no
//! token (client port on an insecure cluster). A server that answers our token with a
//! switch to SIMPLE skips the proof that it knows the token's password (rspauth), so that
//! switch is refused unless the caller opted in ([`super::FALLBACK_TO_SIMPLE_KEY`]).
//!
//! When the exchange settles on `auth-int` or `auth-conf`, the connection context is the
//! first packet sent through the security layer, which [`handshake`] hands back.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tracing::{debug, info};

use super::error::{RemoteError, RpcError};
use super::frame::{encode_request, read_frame, ResponseFrame, MAX_PREAUTH_FRAME_LEN};
use super::wrap::wrap_stream;
use crate::proto::common::rpc_request_header_proto::OperationProto;
use crate::proto::common::rpc_response_header_proto::RpcStatusProto;
use crate::proto::common::rpc_sasl_proto::{SaslAuth, SaslState};
use crate::proto::common::{
    IpcConnectionContextProto, RpcKindProto, RpcRequestHeaderProto, RpcSaslProto,
    UserInformationProto,
};
use crate::sasl::{DigestMd5Client, Qop, SaslError, SaslMechanism, SecurityLayer};
use crate::token::Token;

pub const SASL_CALL_ID: i32 = -33;
pub const CONTEXT_CALL_ID: i32 = -3;
pub const PING_CALL_ID: i32 = -4;
const AUTH_SASL: u8 = 0xDF;
const AUTH_NONE: u8 = 0x00;

/// How to authenticate a connection.
#[derive(Clone, Debug)]
pub enum Auth {
    /// SASL TOKEN / DIGEST-MD5 with this token (AMRM token, NM token).
    Token(Token),
    /// No SASL; the connection context names `user` (insecure clusters, client port only).
    Simple { user: String },
}

/// The 7-byte connection preamble: `hrpc`, version 9, service class 0, auth protocol.
pub fn preamble(sasl: bool) -> [u8; 7] {
    [
        b'h',
        b'r',
        b'p',
        b'c',
        9,
        0,
        if sasl { AUTH_SASL } else { AUTH_NONE },
    ]
}

/// The request header for out-of-band packets and calls.
pub fn request_header(call_id: i32, client_id: &[u8], retry_count: i32) -> RpcRequestHeaderProto {
    RpcRequestHeaderProto {
        rpc_kind: Some(RpcKindProto::RpcProtocolBuffer as i32),
        rpc_op: Some(OperationProto::RpcFinalPacket as i32),
        call_id,
        client_id: client_id.to_vec(),
        retry_count: Some(retry_count),
    }
}

/// Turns a non-SUCCESS response header into the server's exception.
pub fn remote_error(frame: &ResponseFrame) -> Option<RemoteError> {
    let status = frame.header.status;
    if status == RpcStatusProto::Success as i32 {
        return None;
    }
    Some(RemoteError {
        class: frame
            .header
            .exception_class_name
            .clone()
            .unwrap_or_else(|| "<no exception class>".into()),
        message: frame.header.error_msg.clone().unwrap_or_default(),
        fatal: status != RpcStatusProto::Error as i32,
        code: frame.header.error_detail,
    })
}

/// How the SASL dialogue ended.
enum Negotiated {
    /// The server switched to SIMPLE (and the caller allowed it).
    Simple,
    /// Token auth succeeded; the layer is `None` under qop `auth`.
    Token(Option<SecurityLayer>),
}

/// The least a server must agree to for the client to go on: a SIMPLE fallback only when
/// allowed (and never under a qop floor above `auth`), and no qop below `min_qop`.
#[derive(Debug, Clone, Copy)]
pub struct Floor {
    pub allow_simple_fallback: bool,
    pub min_qop: Qop,
}

/// Runs preamble + authentication + connection context on a fresh stream. Returns the
/// security layer every later packet must pass through, if one was negotiated.
pub async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    addr: &str,
    auth: &Auth,
    protocol: &str,
    client_id: &[u8; 16],
    timeout: Duration,
    floor: Floor,
) -> Result<Option<SecurityLayer>, RpcError> {
    let io = |source| RpcError::Io {
        addr: addr.to_string(),
        source,
    };
    let mut layer = None;
    let user_info = match auth {
        Auth::Simple { user } => {
            stream.write_all(&preamble(false)).await.map_err(io)?;
            UserInformationProto {
                effective_user: Some(user.clone()),
                real_user: None,
            }
        }
        Auth::Token(token) => {
            match sasl_exchange(stream, addr, token, timeout, floor).await? {
                // The server switched to SIMPLE: it needs a user name, and we have no other
                // than the process's.
                Negotiated::Simple => UserInformationProto {
                    effective_user: std::env::var("USER").ok(),
                    real_user: None,
                },
                Negotiated::Token(l) => {
                    layer = l;
                    // After TOKEN auth the server takes the user from the token; claiming
                    // one makes it refuse us ("Authenticated user ... doesn't match").
                    UserInformationProto::default()
                }
            }
        }
    };
    let context = IpcConnectionContextProto {
        user_info: Some(user_info),
        protocol: Some(protocol.to_string()),
    };
    let packet = encode_request(&request_header(CONTEXT_CALL_ID, client_id, -1), &[&context]);
    match layer.as_mut() {
        Some(l) => {
            let wrapped = wrap_stream(l.sealer.as_mut(), l.max_message, &packet);
            stream.write_all(&wrapped).await.map_err(io)?;
        }
        None => stream.write_all(&packet).await.map_err(io)?,
    }
    stream.flush().await.map_err(io)?;
    Ok(layer)
}

fn sasl_packet(msg: &RpcSaslProto) -> bytes::BytesMut {
    encode_request(&request_header(SASL_CALL_ID, &[], -1), &[msg])
}

/// The SASL dialogue: NEGOTIATE out, then the server's replies in turn until SUCCESS.
async fn sasl_exchange<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    addr: &str,
    token: &Token,
    timeout: Duration,
    floor: Floor,
) -> Result<Negotiated, RpcError> {
    let mut d = SaslDialogue {
        stream,
        addr,
        token,
        timeout,
        floor,
        chosen: None,
    };
    d.send_negotiate().await?;
    // DIGEST-MD5 needs at most NEGOTIATE, (CHALLENGE), SUCCESS; more means a confused server.
    for _round in 0..4 {
        let msg = d.read_reply().await?;
        match SaslState::try_from(msg.state) {
            Ok(SaslState::Negotiate) => {
                if let Some(done) = d.choose_mechanism(&msg).await? {
                    return Ok(done);
                }
            }
            Ok(SaslState::Challenge) => d.answer_challenge(&msg).await?,
            Ok(SaslState::Success) => return d.finish(&msg),
            other => {
                return Err(protocol_error(
                    addr,
                    format!(
                        "unexpected SASL state {other:?} ({}) from server",
                        msg.state
                    ),
                ))
            }
        }
    }
    Err(protocol_error(
        addr,
        "SASL negotiation did not finish".into(),
    ))
}

fn io_error(addr: &str) -> impl FnOnce(std::io::Error) -> RpcError + '_ {
    move |source| RpcError::Io {
        addr: addr.to_string(),
        source,
    }
}

fn sasl_error(addr: &str) -> impl FnOnce(SaslError) -> RpcError + '_ {
    move |source| RpcError::Sasl {
        addr: addr.to_string(),
        source,
    }
}

fn protocol_error(addr: &str, reason: String) -> RpcError {
    RpcError::Protocol {
        addr: addr.to_string(),
        reason,
    }
}

/// One SASL dialogue in progress: the stream, what we may accept, and the mechanism once
/// the server's NEGOTIATE let us choose one.
struct SaslDialogue<'a, S> {
    stream: &'a mut S,
    addr: &'a str,
    token: &'a Token,
    timeout: Duration,
    floor: Floor,
    /// DIGEST-MD5 and the advertised entry we echoed, after we answered NEGOTIATE with it.
    chosen: Option<(DigestMd5Client, SaslAuth)>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> SaslDialogue<'_, S> {
    /// Preamble and NEGOTIATE go out in one write, like the Java client, so an early
    /// rejection cannot race a half-written preamble.
    async fn send_negotiate(&mut self) -> Result<(), RpcError> {
        let mut first = preamble(true).to_vec();
        first.extend_from_slice(&sasl_packet(&RpcSaslProto {
            state: SaslState::Negotiate as i32,
            ..Default::default()
        }));
        self.stream
            .write_all(&first)
            .await
            .map_err(io_error(self.addr))?;
        self.stream.flush().await.map_err(io_error(self.addr))
    }

    /// Sends one SASL message; flushed unless it is the last one before the connection
    /// context (which flushes).
    async fn send(&mut self, msg: &RpcSaslProto, flush: bool) -> Result<(), RpcError> {
        self.stream
            .write_all(&sasl_packet(msg))
            .await
            .map_err(io_error(self.addr))?;
        if flush {
            self.stream.flush().await.map_err(io_error(self.addr))?;
        }
        Ok(())
    }

    /// The server's next SASL message; its errors and non-SASL replies as errors.
    async fn read_reply(&mut self) -> Result<RpcSaslProto, RpcError> {
        let addr = self.addr;
        let answered = self.chosen.is_some();
        // The server is not authenticated yet: small frames only.
        let frame = read_frame(self.stream, self.timeout, MAX_PREAUTH_FRAME_LEN)
            .await
            .map_err(|source| match source {
                super::frame::FrameError::Timeout(after) => RpcError::Timeout {
                    addr: addr.to_string(),
                    what: "SASL negotiation",
                    after,
                },
                // Seen on a 3.4.1 NodeManager given a token that is not an NM token: its
                // SASL callback throws (NPE) and it drops the socket without a FATAL reply.
                super::frame::FrameError::Eof if answered => RpcError::SaslAborted {
                    addr: addr.to_string(),
                },
                source => RpcError::Frame {
                    addr: addr.to_string(),
                    source,
                },
            })?;
        if let Some(remote) = remote_error(&frame) {
            debug!(addr, call_id = frame.call_id(), code = ?remote.code, "error during SASL");
            return Err(RpcError::AuthRejected {
                addr: addr.to_string(),
                remote,
            });
        }
        if frame.call_id() != SASL_CALL_ID {
            return Err(protocol_error(
                addr,
                format!(
                    "non-SASL reply (call id {}) during negotiation",
                    frame.call_id()
                ),
            ));
        }
        let msg: RpcSaslProto = frame.decode_body().map_err(|e| RpcError::Frame {
            addr: addr.to_string(),
            source: e,
        })?;
        debug!(
            addr,
            state = msg.state,
            auths = ?msg
                .auths
                .iter()
                .map(|a| (&a.method, &a.mechanism, &a.protocol, &a.server_id))
                .collect::<Vec<_>>(),
            // Challenges carry only realm, nonce and options; safe to log.
            challenge = ?msg.auths.first().and_then(|a| a.challenge.as_deref()).map(String::from_utf8_lossy),
            token = ?msg.token.as_deref().map(String::from_utf8_lossy),
            "SASL reply"
        );
        Ok(msg)
    }

    /// Answers NEGOTIATE: TOKEN/DIGEST-MD5 if offered (with the first response when the
    /// entry carries a challenge), else SIMPLE if the floor allows it, which ends the
    /// dialogue (`Some`).
    async fn choose_mechanism(
        &mut self,
        msg: &RpcSaslProto,
    ) -> Result<Option<Negotiated>, RpcError> {
        let offered: Vec<String> = msg
            .auths
            .iter()
            .map(|a| format!("{}/{}", a.method, a.mechanism))
            .collect();
        let auth = msg
            .auths
            .iter()
            .find(|a| a.method == "TOKEN" && a.mechanism == "DIGEST-MD5")
            .or_else(|| msg.auths.iter().find(|a| a.method == "SIMPLE"))
            .ok_or_else(|| {
                protocol_error(
                    self.addr,
                    format!(
                        "server offers no mechanism we support: {offered:?} (we have TOKEN/DIGEST-MD5)"
                    ),
                )
            })?;
        if auth.method == "SIMPLE" {
            let accepted = self.simple()?;
            let reply = RpcSaslProto {
                state: SaslState::Initiate as i32,
                auths: vec![auth.clone()],
                ..Default::default()
            };
            self.send(&reply, false).await?;
            return Ok(Some(accepted));
        }
        // Echo the advertised entry exactly (presence included), minus the challenge.
        let mut echo = auth.clone();
        echo.challenge = None;
        let mut m = DigestMd5Client::new(&self.token.identifier, &self.token.password)
            .with_min_qop(self.floor.min_qop);
        let token_bytes = match &auth.challenge {
            Some(ch) => m
                .respond(
                    ch,
                    auth.protocol.as_deref().unwrap_or(""),
                    auth.server_id.as_deref().unwrap_or(""),
                )
                .map_err(sasl_error(self.addr))?,
            None => Vec::new(),
        };
        let reply = RpcSaslProto {
            state: SaslState::Initiate as i32,
            token: Some(token_bytes),
            auths: vec![echo.clone()],
            ..Default::default()
        };
        self.send(&reply, true).await?;
        self.chosen = Some((m, echo));
        Ok(None)
    }

    /// Answers a CHALLENGE with the chosen mechanism's response.
    async fn answer_challenge(&mut self, msg: &RpcSaslProto) -> Result<(), RpcError> {
        let addr = self.addr;
        let (m, auth) = self
            .chosen
            .as_mut()
            .ok_or_else(|| protocol_error(addr, "CHALLENGE before we chose a mechanism".into()))?;
        let ch = msg
            .token
            .as_deref()
            .ok_or_else(|| protocol_error(addr, "CHALLENGE without a token".into()))?;
        let resp = m
            .respond(
                ch,
                auth.protocol.as_deref().unwrap_or(""),
                auth.server_id.as_deref().unwrap_or(""),
            )
            .map_err(sasl_error(addr))?;
        let reply = RpcSaslProto {
            state: SaslState::Response as i32,
            token: Some(resp),
            ..Default::default()
        };
        self.send(&reply, true).await
    }

    /// SUCCESS: checks the server's proof (rspauth) and sets up the security layer the qop
    /// asks for; straight after NEGOTIATE it means a SIMPLE-only server.
    fn finish(&mut self, msg: &RpcSaslProto) -> Result<Negotiated, RpcError> {
        let addr = self.addr;
        match self.chosen.as_mut() {
            None => self.simple(),
            Some((m, _)) => {
                let layer = m
                    .verify_success(msg.token.as_deref())
                    .map_err(sasl_error(addr))?;
                match &layer {
                    Some(l) => info!(
                        addr,
                        qop = %l.qop,
                        cipher = l.cipher.unwrap_or("none"),
                        "SASL security layer negotiated; every packet is wrapped"
                    ),
                    None => debug!(addr, "SASL negotiated qop auth"),
                }
                Ok(Negotiated::Token(layer))
            }
        }
    }

    /// The server switched to SIMPLE: accepted only when allowed and no qop floor above
    /// `auth` was asked for.
    fn simple(&self) -> Result<Negotiated, RpcError> {
        let addr = self.addr;
        if self.floor.min_qop > Qop::Auth {
            // No protection at all is below any floor above `auth`.
            Err(sasl_error(addr)(SaslError::QopBelowMinimum {
                offered: vec!["SIMPLE".into()],
                minimum: self.floor.min_qop,
            }))
        } else if self.floor.allow_simple_fallback {
            debug!(
                addr,
                "server switched to SIMPLE authentication; allowed by configuration"
            );
            Ok(Negotiated::Simple)
        } else {
            Err(RpcError::SimpleFallbackRefused {
                addr: addr.to_string(),
            })
        }
    }
}
