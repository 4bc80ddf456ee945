//! Hadoop's framing for a SASL security layer (`SaslRpcClient`'s wrapped streams, the
//! server's `unwrapPacketAndProcessRpcs`/`wrapWithSasl`): once `auth-int` or `auth-conf` is
//! negotiated, the ordinary byte stream of length-prefixed packets is cut into messages,
//! each sealed into a token and sent as its own packet `[len][request header, call id
//! -33][RpcSaslProto{state: WRAP, token}]`. Replies arrive the same way (response header
//! with call id -33); their plaintext is again a stream of length-prefixed packets, which
//! one token may hold several of, or part of one.
//!
//! Pure: bytes in, bytes or frames out, so it is unit-tested without sockets.

use bytes::{Buf, BytesMut};

use super::error::RemoteError;
use super::frame::{decode_response_frame, encode_request, FrameError, ResponseFrame};
use super::handshake::{remote_error, request_header, SASL_CALL_ID};
use crate::proto::common::rpc_sasl_proto::SaslState;
use crate::proto::common::RpcSaslProto;
use crate::sasl::{LayerError, Seal, Unseal};

/// Seals `plain` (one or more whole packets, length prefixes included) in messages of at
/// most `max_message` bytes and returns the WRAP packets to write, in order.
pub fn wrap_stream(sealer: &mut dyn Seal, max_message: usize, plain: &[u8]) -> BytesMut {
    let mut out = BytesMut::new();
    for chunk in plain.chunks(max_message.max(1)) {
        let msg = RpcSaslProto {
            state: SaslState::Wrap as i32,
            token: Some(sealer.seal(chunk)),
            ..Default::default()
        };
        out.extend_from_slice(&encode_request(
            &request_header(SASL_CALL_ID, &[], -1),
            &[&msg],
        ));
    }
    out
}

/// Why a packet from the server could not be unwrapped. Each ends the connection.
#[derive(Debug, thiserror::Error)]
pub enum UnwrapError {
    /// A packet outside the layer. The Java client refuses these too; `remote` keeps the
    /// server's error if that is what it was, for a useful message.
    #[error("server sent a packet outside the SASL security layer (call id {call_id})")]
    NotWrapped {
        call_id: i32,
        remote: Option<RemoteError>,
    },
    #[error("SASL packet in state {0} where WRAP was expected")]
    NotWrap(i32),
    #[error("malformed wrapped packet: {0}")]
    Frame(#[from] FrameError),
    #[error("SASL security layer refused a packet: {0}")]
    Layer(#[from] LayerError),
}

/// The reading side: opens each WRAP packet and returns the packets its plaintext completes.
pub struct Unwrapper {
    opener: Box<dyn Unseal>,
    plain: BytesMut,
}

impl Unwrapper {
    pub fn new(opener: Box<dyn Unseal>) -> Self {
        Self {
            opener,
            plain: BytesMut::new(),
        }
    }

    /// Takes one packet as read from the socket; returns the inner packets now complete
    /// (none if the token held only part of one).
    pub fn push(&mut self, outer: &ResponseFrame) -> Result<Vec<ResponseFrame>, UnwrapError> {
        if outer.call_id() != SASL_CALL_ID || remote_error(outer).is_some() {
            return Err(UnwrapError::NotWrapped {
                call_id: outer.call_id(),
                remote: remote_error(outer),
            });
        }
        let msg: RpcSaslProto = outer.decode_body()?;
        if msg.state != SaslState::Wrap as i32 {
            return Err(UnwrapError::NotWrap(msg.state));
        }
        let token = msg.token.unwrap_or_default();
        self.plain.extend_from_slice(&self.opener.unseal(&token)?);
        let mut frames = Vec::new();
        loop {
            match decode_response_frame(&self.plain) {
                Ok((frame, used)) => {
                    self.plain.advance(used);
                    frames.push(frame);
                }
                Err(FrameError::Truncated { .. }) => return Ok(frames),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::common::{RpcRequestHeaderProto, RpcResponseHeaderProto};
    use crate::rpc::frame::decode_response_payload;
    use crate::rpc::test_server::{frame, ok_header, sasl_header};
    use crate::sasl::layer::{new_layer, Side};
    use crate::sasl::Qop;
    use prost::Message;

    /// The server side of [`wrap_stream`]: one WRAP packet's token, sealed by the server.
    fn server_wrap(sealer: &mut dyn Seal, plain: &[u8]) -> ResponseFrame {
        let msg = RpcSaslProto {
            state: SaslState::Wrap as i32,
            token: Some(sealer.seal(plain)),
            ..Default::default()
        };
        let bytes = frame(&sasl_header(), Some(&msg));
        decode_response_frame(&bytes).unwrap().0
    }

    /// Splits a client byte stream into (header, rest) per packet.
    fn packets(mut b: &[u8]) -> Vec<(RpcRequestHeaderProto, bytes::Bytes)> {
        let mut out = Vec::new();
        while !b.is_empty() {
            let len = u32::from_be_bytes(b[..4].try_into().unwrap()) as usize;
            let mut body = bytes::Bytes::copy_from_slice(&b[4..4 + len]);
            let h = RpcRequestHeaderProto::decode_length_delimited(&mut body).unwrap();
            out.push((h, body));
            b = &b[4 + len..];
        }
        out
    }

    #[test]
    fn client_stream_is_cut_sealed_and_framed() {
        for qop in [Qop::AuthInt, Qop::AuthConf] {
            let ha1 = [9u8; 16];
            let (mut cs, _) = new_layer(qop, &ha1, Side::Client).unwrap();
            let (_, mut so) = new_layer(qop, &ha1, Side::Server).unwrap();
            let plain: Vec<u8> = (0..250u32).map(|i| i as u8).collect();
            let wire = wrap_stream(&mut cs, 100, &plain);
            let pkts = packets(&wire);
            assert_eq!(pkts.len(), 3, "{qop}: 250 bytes in messages of 100");
            let mut back = Vec::new();
            for (h, mut body) in pkts {
                assert_eq!(h.call_id, SASL_CALL_ID);
                assert_eq!(h.retry_count, Some(-1));
                assert!(h.client_id.is_empty());
                let m = RpcSaslProto::decode_length_delimited(&mut body).unwrap();
                assert_eq!(m.state, SaslState::Wrap as i32);
                let token = m.token.unwrap();
                if qop == Qop::AuthConf {
                    assert!(
                        !token.windows(4).any(|w| w == [10, 11, 12, 13]),
                        "encrypted"
                    );
                }
                back.extend(so.unseal(&token).unwrap());
            }
            assert_eq!(back, plain);
        }
    }

    #[test]
    fn server_tokens_may_hold_several_or_part_of_a_packet() {
        let ha1 = [4u8; 16];
        let (mut ss, _) = new_layer(Qop::AuthConf, &ha1, Side::Server).unwrap();
        let (_, co) = new_layer(Qop::AuthConf, &ha1, Side::Client).unwrap();
        let mut u = Unwrapper::new(Box::new(co));
        let a = frame(&ok_header(1), Some(&RpcSaslProto::default()));
        let b = frame(&ok_header(2), None);
        let c = frame(&ok_header(3), None);
        // Token 1: a whole and half of b; token 2: the rest of b and all of c.
        let mut stream = a.clone();
        stream.extend(&b);
        stream.extend(&c);
        let cut = a.len() + b.len() / 2;
        let got = u.push(&server_wrap(&mut ss, &stream[..cut])).unwrap();
        assert_eq!(got.iter().map(|f| f.call_id()).collect::<Vec<_>>(), [1]);
        let got = u.push(&server_wrap(&mut ss, &stream[cut..])).unwrap();
        assert_eq!(got.iter().map(|f| f.call_id()).collect::<Vec<_>>(), [2, 3]);
    }

    #[test]
    fn unwrapped_or_tampered_packets_are_refused() {
        let ha1 = [5u8; 16];
        let (mut ss, _) = new_layer(Qop::AuthInt, &ha1, Side::Server).unwrap();
        let (_, co) = new_layer(Qop::AuthInt, &ha1, Side::Client).unwrap();
        let mut u = Unwrapper::new(Box::new(co));
        // A plain reply where only wrapped ones may come.
        let plain = decode_response_frame(&frame(&ok_header(7), None))
            .unwrap()
            .0;
        assert!(matches!(
            u.push(&plain),
            Err(UnwrapError::NotWrapped {
                call_id: 7,
                remote: None
            })
        ));
        // A FATAL error outside the layer keeps its message.
        let fatal = RpcResponseHeaderProto {
            call_id: (-1i32) as u32,
            status: 2,
            exception_class_name: Some("org.apache.hadoop.ipc.IpcException".into()),
            ..Default::default()
        };
        let fatal = decode_response_frame(&frame(&fatal, None)).unwrap().0;
        assert!(matches!(
            u.push(&fatal),
            Err(UnwrapError::NotWrapped { remote: Some(r), .. }) if r.fatal
        ));
        // A SASL packet in another state.
        let neg = RpcSaslProto {
            state: SaslState::Negotiate as i32,
            ..Default::default()
        };
        let neg = decode_response_frame(&frame(&sasl_header(), Some(&neg)))
            .unwrap()
            .0;
        assert!(matches!(u.push(&neg), Err(UnwrapError::NotWrap(1))));
        // A token whose bytes were changed on the way.
        let mut f = server_wrap(&mut ss, &frame(&ok_header(1), None));
        let mut m: RpcSaslProto = f.decode_body().unwrap();
        m.token.as_mut().unwrap()[2] ^= 1;
        let mut payload = BytesMut::new();
        f.header.encode_length_delimited(&mut payload).unwrap();
        m.encode_length_delimited(&mut payload).unwrap();
        f = decode_response_payload(payload.freeze()).unwrap();
        assert!(matches!(
            u.push(&f),
            Err(UnwrapError::Layer(LayerError::BadMac { seq: 0 }))
        ));
    }
}
