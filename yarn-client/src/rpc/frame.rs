//! Hadoop IPC framing: every packet is a big-endian `u32` length followed by that many
//! bytes, which hold varint-delimited protobuf messages (header first, then the body).
//!
//! The decoding functions here are pure (bytes in, result out) so they can be fuzzed with
//! arbitrary input; the async reading lives in [`read_frame`], which bounds both the size
//! and the time it will wait.

use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::proto::common::{RpcRequestHeaderProto, RpcResponseHeaderProto};

/// Largest frame we accept from an authenticated server: Hadoop's client default
/// `ipc.maximum.response.length` (128 MiB); an AM never receives anything close, so a bigger
/// length means garbage on the wire.
pub const MAX_FRAME_LEN: u32 = 128 * 1024 * 1024;

/// Largest frame we accept before SASL has completed (audit L4): until then the server has
/// proved nothing, and anyone on its address could make us buffer 128 MiB per connection.
/// Hadoop's own client applies `ipc.maximum.response.length` to these frames too; we are
/// stricter because the SASL replies to a DIGEST-MD5 token client are small: a NEGOTIATE
/// with a challenge (RFC 2831 caps a digest-challenge below 2048 bytes), a SUCCESS with
/// `rspauth`, or a FATAL error whose message carries a Java stack trace of a few KB.
pub const MAX_PREAUTH_FRAME_LEN: u32 = 64 * 1024;

/// Why a packet could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("server closed the connection")]
    Eof,
    #[error("connection closed in the middle of a frame ({got} of {want} bytes)")]
    Truncated { got: usize, want: usize },
    #[error("frame length {len} exceeds the {limit}-byte limit{}", if *.limit < MAX_FRAME_LEN { " before authentication" } else { " (not a Hadoop IPC server?)" })]
    TooLarge { len: u32, limit: u32 },
    #[error("malformed frame: {0}")]
    Malformed(String),
    #[error("no frame within {0:?}")]
    Timeout(Duration),
    #[error("i/o error while reading a frame: {0}")]
    Io(#[from] std::io::Error),
}

/// One packet from the server: the response header and the (still encoded, length-delimited)
/// payload, which is empty for errors, pings and connection-context acks.
#[derive(Debug, Clone)]
pub struct ResponseFrame {
    pub header: RpcResponseHeaderProto,
    pub payload: Bytes,
}

impl ResponseFrame {
    /// The call id as the client sent it: the server echoes it as a `uint32`, so negative
    /// out-of-band ids (-33 for SASL) arrive as large unsigned values.
    pub fn call_id(&self) -> i32 {
        self.header.call_id as i32
    }

    /// Decodes the single varint-delimited message that follows the header.
    pub fn decode_body<M: Message + Default>(&self) -> Result<M, FrameError> {
        let mut buf = self.payload.clone();
        let m = M::decode_length_delimited(&mut buf)
            .map_err(|e| FrameError::Malformed(format!("response body: {e}")))?;
        if buf.has_remaining() {
            return Err(FrameError::Malformed(format!(
                "{} trailing bytes after the response body",
                buf.remaining()
            )));
        }
        Ok(m)
    }
}

/// Encodes one client packet: length prefix, delimited header, then each delimited part.
pub fn encode_request(header: &RpcRequestHeaderProto, parts: &[&dyn ErasedMessage]) -> BytesMut {
    let mut body = BytesMut::new();
    header
        .encode_length_delimited(&mut body)
        .expect("BytesMut grows as needed");
    for p in parts {
        p.encode_delimited(&mut body);
    }
    let mut out = BytesMut::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Object-safe view of a prost message, so one packet can carry messages of several types.
/// `Send + Sync` (as every prost message is) so calls can run on any tokio worker.
pub trait ErasedMessage: Send + Sync {
    fn encode_delimited(&self, buf: &mut BytesMut);
}

impl<M: Message> ErasedMessage for M {
    fn encode_delimited(&self, buf: &mut BytesMut) {
        self.encode_length_delimited(buf)
            .expect("BytesMut grows as needed");
    }
}

/// Splits a frame payload (without the 4-byte length) into header and body.
pub fn decode_response_payload(mut payload: Bytes) -> Result<ResponseFrame, FrameError> {
    let header = RpcResponseHeaderProto::decode_length_delimited(&mut payload)
        .map_err(|e| FrameError::Malformed(format!("response header: {e}")))?;
    Ok(ResponseFrame { header, payload })
}

/// Decodes one complete frame from the start of `buf` (length prefix included). Returns the
/// frame and how many bytes it used; `Truncated` if `buf` holds less than a whole frame.
pub fn decode_response_frame(buf: &[u8]) -> Result<(ResponseFrame, usize), FrameError> {
    if buf.len() < 4 {
        return Err(FrameError::Truncated {
            got: buf.len(),
            want: 4,
        });
    }
    let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if len > MAX_FRAME_LEN {
        return Err(FrameError::TooLarge {
            len,
            limit: MAX_FRAME_LEN,
        });
    }
    let want = 4 + len as usize;
    if buf.len() < want {
        return Err(FrameError::Truncated {
            got: buf.len() - 4,
            want: len as usize,
        });
    }
    let frame = decode_response_payload(Bytes::copy_from_slice(&buf[4..want]))?;
    Ok((frame, want))
}

/// Reads one frame of at most `limit` bytes, failing with [`FrameError::Timeout`] if the
/// whole frame does not arrive within `timeout` (a silent or stuck server must not hang the
/// AM).
pub async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut R,
    timeout: Duration,
    limit: u32,
) -> Result<ResponseFrame, FrameError> {
    tokio::time::timeout(timeout, read_frame_untimed(r, limit))
        .await
        .map_err(|_| FrameError::Timeout(timeout))?
}

/// Reads one frame of at most `limit` bytes ([`MAX_PREAUTH_FRAME_LEN`] before
/// authentication, [`MAX_FRAME_LEN`] after) with no time bound; callers wrap it in their own
/// timeout.
pub async fn read_frame_untimed<R: AsyncRead + Unpin>(
    mut r: &mut R,
    limit: u32,
) -> Result<ResponseFrame, FrameError> {
    let mut len = [0u8; 4];
    let got = read_full(&mut r, &mut len).await?;
    if got == 0 {
        return Err(FrameError::Eof);
    }
    if got < 4 {
        return Err(FrameError::Truncated { got, want: 4 });
    }
    let len = u32::from_be_bytes(len);
    if len > limit.min(MAX_FRAME_LEN) {
        return Err(FrameError::TooLarge {
            len,
            limit: limit.min(MAX_FRAME_LEN),
        });
    }
    // Grow the buffer as bytes arrive instead of trusting the length up front: a garbage
    // length followed by EOF must not cost a huge allocation.
    let mut payload = Vec::with_capacity((len as usize).min(64 * 1024));
    let got = r.take(len as u64).read_to_end(&mut payload).await?;
    if got < len as usize {
        return Err(FrameError::Truncated {
            got,
            want: len as usize,
        });
    }
    decode_response_payload(Bytes::from(payload))
}

/// Like `read_exact`, but reports how much arrived before EOF instead of a bare error.
async fn read_full<R: AsyncRead + Unpin>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        let k = r.read(&mut buf[n..]).await?;
        if k == 0 {
            break;
        }
        n += k;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::common::rpc_request_header_proto::OperationProto;
    use crate::proto::common::{RpcKindProto, RpcSaslProto};

    /// The exact NEGOTIATE packet from docs/hadoop-rpc-facts.md (section 1.8): proves rpcOp=0 and
    /// retryCount=-1 are written and callId is zigzag-encoded.
    #[test]
    fn sasl_negotiate_packet_is_byte_exact() {
        let header = RpcRequestHeaderProto {
            rpc_kind: Some(RpcKindProto::RpcProtocolBuffer as i32),
            rpc_op: Some(OperationProto::RpcFinalPacket as i32),
            call_id: -33,
            client_id: vec![],
            retry_count: Some(-1),
        };
        let sasl = RpcSaslProto {
            state: 1,
            ..Default::default()
        };
        let bytes = encode_request(&header, &[&sasl]);
        assert_eq!(
            &bytes[..],
            &[
                0, 0, 0, 0x0E, 0x0A, 0x08, 0x02, 0x10, 0x00, 0x18, 0x41, 0x22, 0x00, 0x28, 0x01,
                0x02, 0x10, 0x01
            ]
        );
    }

    #[test]
    fn negative_call_id_in_response_round_trips() {
        let h = RpcResponseHeaderProto {
            call_id: (-33i32) as u32,
            status: 0,
            ..Default::default()
        };
        let mut payload = BytesMut::new();
        h.encode_length_delimited(&mut payload).unwrap();
        let mut framed = (payload.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(&payload);
        let (f, used) = decode_response_frame(&framed).unwrap();
        assert_eq!(used, framed.len());
        assert_eq!(f.call_id(), -33);
    }

    #[test]
    fn oversized_and_truncated_frames_are_errors() {
        assert!(matches!(
            decode_response_frame(&[0xFF, 0xFF, 0xFF, 0xFF]),
            Err(FrameError::TooLarge { .. })
        ));
        assert!(matches!(
            decode_response_frame(&[0, 0, 0, 9, 1, 2]),
            Err(FrameError::Truncated { got: 2, want: 9 })
        ));
    }

    proptest::proptest! {
        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            if let Ok((f, _)) = decode_response_frame(&bytes) {
                let _ = f.decode_body::<RpcSaslProto>();
            }
        }

        #[test]
        fn decoder_never_panics_on_plausible_lengths(
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..256)
        ) {
            let mut framed = (body.len() as u32).to_be_bytes().to_vec();
            framed.extend_from_slice(&body);
            if let Ok((f, used)) = decode_response_frame(&framed) {
                proptest::prop_assert_eq!(used, framed.len());
                let _ = f.decode_body::<crate::proto::yarn::AllocateResponseProto>();
            }
        }
    }
}
