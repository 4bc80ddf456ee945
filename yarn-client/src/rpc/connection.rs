//! One authenticated TCP connection with many calls in flight.
//!
//! A reader task owns the read half and routes each response to its caller by call id; a
//! keeper task sends pings while calls wait (so the server and middleboxes see traffic) and
//! closes the connection when it has been idle, as the Java client does. A FATAL reply, a
//! broken stream or a call that times out (a stalled connection) fails every waiting call
//! and marks the connection dead; the owning
//! [`super::RpcClient`] opens a new one on the next call.
//!
//! Under a SASL security layer (`auth-int`, `auth-conf`) the writer seals every packet
//! (calls and pings) and the reader opens every reply, see [`super::wrap`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use super::error::{RemoteError, RpcError};
use super::frame::{
    encode_request, read_frame_untimed, ErasedMessage, FrameError, ResponseFrame, MAX_FRAME_LEN,
};
use super::handshake::{handshake, remote_error, request_header, Auth, Floor, PING_CALL_ID};
use super::wrap::{wrap_stream, UnwrapError, Unwrapper};
use super::RpcConfig;
use crate::sasl::Seal;

type Reply = Result<ResponseFrame, RpcError>;

/// A call's failure, split by whether the request could have reached the server: a call
/// that found its connection already closed (e.g. idled out a moment ago) is safe to send
/// again on a new connection.
pub(crate) enum CallError {
    NotSent(RpcError),
    Failed(RpcError),
}

/// Why a connection ended; cloned into an error for every waiting call.
#[derive(Debug, Clone)]
enum Closed {
    Lost(String),
    Fatal(RemoteError),
}

impl Closed {
    fn to_error(&self, addr: &str) -> RpcError {
        match self {
            Closed::Lost(reason) => RpcError::ConnectionLost {
                addr: addr.to_string(),
                reason: reason.clone(),
            },
            Closed::Fatal(remote) if remote.is_auth_failure() => RpcError::AuthRejected {
                addr: addr.to_string(),
                remote: remote.clone(),
            },
            Closed::Fatal(remote) => RpcError::Remote {
                addr: addr.to_string(),
                remote: remote.clone(),
            },
        }
    }
}

struct Shared {
    addr: String,
    pending: Mutex<HashMap<i32, oneshot::Sender<Reply>>>,
    closed: Mutex<Option<Closed>>,
    last_activity: Mutex<Instant>,
    last_write: Mutex<Instant>,
}

impl Shared {
    /// Marks the connection dead (first cause wins) and fails all waiting calls.
    fn close(&self, cause: Closed) {
        let cause = {
            let mut closed = self.closed.lock().unwrap();
            closed.get_or_insert(cause).clone()
        };
        let pending: Vec<_> = self.pending.lock().unwrap().drain().collect();
        for (_, tx) in pending {
            let _ = tx.send(Err(cause.to_error(&self.addr)));
        }
    }

    /// Closes the connection if no call is pending and none was made for `max_idle`.
    /// Checked under the `closed` lock, which `call` also holds while registering a call,
    /// so a call cannot slip in between the check and the close.
    fn close_if_idle(&self, max_idle: Duration) -> bool {
        let mut closed = self.closed.lock().unwrap();
        if closed.is_some() {
            return true;
        }
        if !self.pending.lock().unwrap().is_empty()
            || self.last_activity.lock().unwrap().elapsed() < max_idle
        {
            return false;
        }
        *closed = Some(Closed::Lost("closed after being idle".into()));
        true
    }

    fn touch(&self) {
        *self.last_activity.lock().unwrap() = Instant::now();
    }
}

/// The write half, with the sealing side of the security layer if one was negotiated.
/// Sealing happens under the same lock that orders the writes, so the layer's sequence
/// numbers follow the order of packets on the wire.
struct Writer {
    half: OwnedWriteHalf,
    seal: Option<(Box<dyn Seal>, usize)>,
}

impl Writer {
    /// Writes one packet (length prefix included), sealed if there is a layer, and flushes.
    async fn send(&mut self, packet: &[u8]) -> std::io::Result<()> {
        match &mut self.seal {
            None => self.half.write_all(packet).await?,
            Some((sealer, max)) => {
                let wrapped = wrap_stream(sealer.as_mut(), *max, packet);
                self.half.write_all(&wrapped).await?
            }
        }
        self.half.flush().await
    }
}

pub(crate) struct Connection {
    shared: Arc<Shared>,
    writer: Arc<tokio::sync::Mutex<Writer>>,
    client_id: [u8; 16],
    next_call_id: AtomicI32,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Connection {
    /// Connects, authenticates and sends the connection context, all within
    /// `cfg.connect_timeout`.
    pub async fn open(
        addr: &str,
        auth: &Auth,
        protocol: &str,
        client_id: [u8; 16],
        cfg: &RpcConfig,
    ) -> Result<Self, RpcError> {
        let timeout = cfg.connect_timeout;
        let mut stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| RpcError::Timeout {
                addr: addr.to_string(),
                what: "connect",
                after: timeout,
            })?
            .map_err(|source| RpcError::Connect {
                addr: addr.to_string(),
                source,
            })?;
        let _ = stream.set_nodelay(true);
        let layer = tokio::time::timeout(
            timeout,
            handshake(
                &mut stream,
                addr,
                auth,
                protocol,
                &client_id,
                timeout,
                Floor {
                    allow_simple_fallback: cfg.fallback_to_simple_auth_allowed,
                    min_qop: cfg.min_qop,
                },
            ),
        )
        .await
        .map_err(|_| RpcError::Timeout {
            addr: addr.to_string(),
            what: "connection setup",
            after: timeout,
        })??;
        debug!(addr, protocol, qop = ?layer.as_ref().map(|l| l.qop), "IPC connection established");
        let (seal, unwrapper) = match layer {
            Some(l) => (
                Some((l.sealer, l.max_message)),
                Some(Unwrapper::new(l.opener)),
            ),
            None => (None, None),
        };
        let (rd, wr) = stream.into_split();
        let shared = Arc::new(Shared {
            addr: addr.to_string(),
            pending: Mutex::new(HashMap::new()),
            closed: Mutex::new(None),
            last_activity: Mutex::new(Instant::now()),
            last_write: Mutex::new(Instant::now()),
        });
        let writer = Arc::new(tokio::sync::Mutex::new(Writer { half: wr, seal }));
        let reader = tokio::spawn(read_loop(rd, shared.clone(), unwrapper));
        let keeper = tokio::spawn(keep_loop(
            shared.clone(),
            writer.clone(),
            client_id,
            cfg.clone(),
        ));
        Ok(Self {
            shared,
            writer,
            client_id,
            next_call_id: AtomicI32::new(0),
            tasks: vec![reader, keeper],
        })
    }

    /// Sends a ping packet (call id -4) now; the server does not answer it.
    pub async fn ping(&self, timeout: Duration) -> Result<(), RpcError> {
        let ping = encode_request(&request_header(PING_CALL_ID, &self.client_id, -1), &[]);
        let write = async { self.writer.lock().await.send(&ping).await };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => {
                *self.shared.last_write.lock().unwrap() = Instant::now();
                Ok(())
            }
            Ok(Err(source)) => Err(RpcError::Io {
                addr: self.shared.addr.clone(),
                source,
            }),
            Err(_) => Err(RpcError::Timeout {
                addr: self.shared.addr.clone(),
                what: "sending a ping",
                after: timeout,
            }),
        }
    }

    pub fn is_alive(&self) -> bool {
        self.shared.closed.lock().unwrap().is_none()
    }

    /// Sends one call and waits (at most `timeout`) for its response frame.
    pub async fn call(
        &self,
        request_header: &crate::proto::common::RequestHeaderProto,
        body: &dyn ErasedMessage,
        timeout: Duration,
    ) -> Result<ResponseFrame, CallError> {
        let addr = &self.shared.addr;
        let id = self.next_call_id.fetch_add(1, Ordering::Relaxed) & 0x7FFF_FFFF;
        let (tx, rx) = oneshot::channel();
        {
            let closed = self.shared.closed.lock().unwrap();
            if let Some(c) = closed.as_ref() {
                return Err(CallError::NotSent(c.to_error(addr)));
            }
            self.shared.pending.lock().unwrap().insert(id, tx);
        }
        self.shared.touch();
        let packet = encode_request(
            &super::handshake::request_header(id, &self.client_id, 0),
            &[request_header, body],
        );
        let write = async { self.writer.lock().await.send(&packet).await };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => *self.shared.last_write.lock().unwrap() = Instant::now(),
            Ok(Err(e)) => {
                self.shared
                    .close(Closed::Lost(format!("write failed: {e}")));
                return Err(CallError::Failed(RpcError::Io {
                    addr: addr.clone(),
                    source: e,
                }));
            }
            Err(_) => {
                self.shared.close(Closed::Lost("write timed out".into()));
                return Err(CallError::Failed(RpcError::Timeout {
                    addr: addr.clone(),
                    what: "sending a call",
                    after: timeout,
                }));
            }
        }
        let result = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(RpcError::ConnectionLost {
                addr: addr.clone(),
                reason: "connection dropped".into(),
            }),
            Err(_) => {
                // No reply in time: the connection is presumed stalled (a hung server, a
                // dead peer behind a NAT). Keeping it would make every later call wait out
                // its timeout too, while a new connection may well work; so it is closed
                // (failing any other call still waiting on it) and the next call reconnects.
                self.shared.pending.lock().unwrap().remove(&id);
                self.shared.close(Closed::Lost(format!(
                    "no reply to a call within {timeout:?}; closed as stalled"
                )));
                Err(RpcError::Timeout {
                    addr: addr.clone(),
                    what: "waiting for a reply",
                    after: timeout,
                })
            }
        };
        self.shared.touch();
        result.map_err(CallError::Failed)
    }
}

async fn read_loop(mut rd: OwnedReadHalf, shared: Arc<Shared>, mut unwrapper: Option<Unwrapper>) {
    loop {
        let frame = match read_frame_untimed(&mut rd, MAX_FRAME_LEN).await {
            Ok(f) => f,
            Err(FrameError::Eof) => {
                shared.close(Closed::Lost("server closed the connection".into()));
                return;
            }
            Err(e) => {
                shared.close(Closed::Lost(e.to_string()));
                return;
            }
        };
        let frames = match unwrapper.as_mut() {
            None => vec![frame],
            Some(u) => match u.push(&frame) {
                Ok(frames) => frames,
                Err(UnwrapError::NotWrapped {
                    remote: Some(remote),
                    ..
                }) if remote.fatal => {
                    warn!(addr = %shared.addr, %remote, "FATAL reply; closing connection");
                    shared.close(Closed::Fatal(remote));
                    return;
                }
                Err(e) => {
                    warn!(addr = %shared.addr, %e, "closing connection");
                    shared.close(Closed::Lost(e.to_string()));
                    return;
                }
            },
        };
        for frame in frames {
            if !deliver(&shared, frame) {
                return;
            }
        }
    }
}

/// Hands one reply to its waiting call; false when it was FATAL and closed the connection.
fn deliver(shared: &Shared, frame: ResponseFrame) -> bool {
    if let Some(remote) = remote_error(&frame) {
        if remote.fatal {
            warn!(addr = %shared.addr, %remote, "FATAL reply; closing connection");
            shared.close(Closed::Fatal(remote));
            return false;
        }
    }
    let id = frame.call_id();
    let tx = shared.pending.lock().unwrap().remove(&id);
    match tx {
        Some(tx) => {
            let _ = tx.send(Ok(frame));
        }
        None => debug!(addr = %shared.addr, id, "reply for an unknown or abandoned call"),
    }
    true
}

async fn keep_loop(
    shared: Arc<Shared>,
    writer: Arc<tokio::sync::Mutex<Writer>>,
    client_id: [u8; 16],
    cfg: RpcConfig,
) {
    let tick = (cfg.ping_interval.min(cfg.max_idle) / 4).max(Duration::from_millis(50));
    loop {
        tokio::time::sleep(tick).await;
        if shared.closed.lock().unwrap().is_some() {
            return;
        }
        let busy = !shared.pending.lock().unwrap().is_empty();
        if busy {
            if shared.last_write.lock().unwrap().elapsed() >= cfg.ping_interval {
                let ping = encode_request(&request_header(PING_CALL_ID, &client_id, -1), &[]);
                let mut w = writer.lock().await;
                match tokio::time::timeout(cfg.call_timeout, w.send(&ping)).await {
                    Ok(Ok(())) => *shared.last_write.lock().unwrap() = Instant::now(),
                    _ => {
                        shared.close(Closed::Lost("ping failed".into()));
                        return;
                    }
                }
                debug!(addr = %shared.addr, "sent ping");
            }
        } else if shared.close_if_idle(cfg.max_idle) {
            debug!(addr = %shared.addr, "closed idle connection");
            let _ = writer.lock().await.half.shutdown().await;
            return;
        }
    }
}
