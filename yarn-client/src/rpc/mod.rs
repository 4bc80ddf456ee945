//! Hadoop IPC (protocol version 9) client on tokio: framing, SASL handshake, call
//! multiplexing, pings, idle close and reconnect-on-next-call.

mod connection;
mod error;
pub(crate) mod frame;
pub(crate) mod handshake;
#[cfg(test)]
pub(crate) mod test_server;
pub(crate) mod wrap;

use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use rand::RngCore;
use tracing::debug;

pub use error::{RemoteError, RpcError};
// The sources an `RpcError` can carry.
pub use crate::sasl::{Qop, SaslError};
pub use frame::FrameError;
pub use handshake::Auth;

use crate::proto::common::RequestHeaderProto;
use crate::token::Token;
use connection::{CallError, Connection};

/// Timeouts and keepalive settings. Defaults follow the Java client where it has one.
#[derive(Debug, Clone)]
pub struct RpcConfig {
    /// TCP connect plus the whole handshake.
    pub connect_timeout: Duration,
    /// Sending a call and waiting for its reply.
    pub call_timeout: Duration,
    /// Ping after this long without writing while calls are outstanding (Java:
    /// `ipc.ping.interval`, 60 s, but Java waits for replies forever by default; ours must
    /// stay below `call_timeout` to matter).
    pub ping_interval: Duration,
    /// Close after this long with no calls (`ipc.client.connection.maxidletime`).
    pub max_idle: Duration,
    /// Accept a server's switch to SIMPLE after we offered a token
    /// ([`FALLBACK_TO_SIMPLE_KEY`], default false as in Hadoop). Such a server never proves
    /// it knows the token, so it could be anyone listening on the address.
    pub fallback_to_simple_auth_allowed: bool,
    /// The weakest quality of protection accepted from a server: the client's
    /// `hadoop.rpc.protection` ([`PROTECTION_KEY`], read with
    /// [`Qop::minimum_from_protection`]; default `authentication`, as in Hadoop). The
    /// server's qop offer is not authenticated, so without a floor a man in the middle could
    /// downgrade an `integrity` or `privacy` connection to `auth`. A floor above `auth` also
    /// refuses a SIMPLE fallback, which has no protection at all.
    pub min_qop: Qop,
}

/// The Hadoop key whose weakest level is the client's minimum qop.
pub const PROTECTION_KEY: &str = "hadoop.rpc.protection";

/// The Hadoop key that opts in to SIMPLE fallback (read by `submit`, named in the error).
pub const FALLBACK_TO_SIMPLE_KEY: &str = "ipc.client.fallback-to-simple-auth-allowed";

impl Default for RpcConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(20),
            call_timeout: Duration::from_secs(60),
            ping_interval: Duration::from_secs(20),
            max_idle: Duration::from_secs(10),
            fallback_to_simple_auth_allowed: false,
            min_qop: Qop::Auth,
        }
    }
}

/// A client for one (server address, protocol, credentials). Calls may run concurrently;
/// they share one connection, which is (re)opened lazily.
pub struct RpcClient {
    addr: String,
    protocol: String,
    version: u64,
    auth: std::sync::Mutex<Auth>,
    cfg: RpcConfig,
    client_id: [u8; 16],
    conn: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

impl RpcClient {
    /// `protocol` is the Java PB interface name, e.g.
    /// `org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB`; all YARN protocols are version 1.
    pub fn new(addr: &str, protocol: &str, version: u64, auth: Auth, cfg: RpcConfig) -> Self {
        let mut client_id = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut client_id);
        Self {
            addr: addr.to_string(),
            protocol: protocol.to_string(),
            version,
            auth: std::sync::Mutex::new(auth),
            cfg,
            client_id,
            conn: tokio::sync::Mutex::new(None),
        }
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Uses `token` for connections opened from now on (AMRM token rollover); the current
    /// connection stays authenticated with the old one.
    pub fn set_token(&self, token: Token) {
        *self.auth.lock().unwrap() = Auth::Token(token);
    }

    /// Opens the connection now (otherwise the first call does), to surface auth errors early.
    pub async fn connect(&self) -> Result<(), RpcError> {
        self.connection().await.map(|_| ())
    }

    async fn connection(&self) -> Result<Arc<Connection>, RpcError> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            if c.is_alive() {
                return Ok(c.clone());
            }
            debug!(addr = %self.addr, "previous connection is closed; reconnecting");
        }
        let auth = self.auth.lock().unwrap().clone();
        let conn = Arc::new(
            Connection::open(&self.addr, &auth, &self.protocol, self.client_id, &self.cfg).await?,
        );
        *slot = Some(conn.clone());
        Ok(conn)
    }

    /// True when a connection is open and has not failed or idled out.
    pub async fn is_connected(&self) -> bool {
        self.conn
            .lock()
            .await
            .as_ref()
            .is_some_and(|c| c.is_alive())
    }

    /// Sends a keepalive ping on the current connection (opening one if needed). The
    /// connection also pings by itself while calls are outstanding.
    pub async fn ping(&self) -> Result<(), RpcError> {
        self.connection().await?.ping(self.cfg.call_timeout).await
    }

    /// Calls `method` with `req` and decodes the reply as `Resp`.
    pub async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Resp, RpcError> {
        let header = RequestHeaderProto {
            method_name: method.to_string(),
            declaring_class_protocol_name: self.protocol.clone(),
            client_protocol_version: self.version,
        };
        let mut attempt = 0;
        let frame = loop {
            let conn = self.connection().await?;
            match conn.call(&header, req, self.cfg.call_timeout).await {
                Ok(frame) => break frame,
                // The connection died before we sent anything: one fresh try is safe.
                Err(CallError::NotSent(_)) if attempt == 0 => attempt += 1,
                Err(CallError::NotSent(e) | CallError::Failed(e)) => return Err(e),
            }
        };
        if let Some(remote) = handshake::remote_error(&frame) {
            return Err(RpcError::Remote {
                addr: self.addr.clone(),
                remote,
            });
        }
        frame.decode_body().map_err(|source| RpcError::Decode {
            addr: self.addr.clone(),
            method: method.to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod security_tests;
#[cfg(test)]
mod tests;
