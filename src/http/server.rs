//! The driver API's HTTP server: the router on hyper connections, with limits that keep a
//! misbehaving or hostile client from taking the AM down.
//!
//! The API port is reachable by anyone who can reach the NodeManager's host, and the
//! tracking page (`/`) needs no secret, so the server must stay up against clients that
//! open connections and never finish a request (slowloris) or never read a reply. What an
//! open connection costs the AM is a file descriptor, and the AM needs descriptors of its
//! own: a NodeManager launch that cannot open a socket fails and counts as an executor
//! failure. So:
//!
//! - **Header-read timeout** ([`Limits::header_read_timeout`]): a client has this long to
//!   send a request's headers, from accept or from the end of the previous reply. hyper runs
//!   the same timer while a kept-alive connection waits for its next request, so it is also
//!   the idle timeout. Executors poll every 300 ms and drivers reconnect transparently, so
//!   closing a connection idle this long costs a legitimate client one TCP handshake.
//! - **Stalled-write timeout** ([`Limits::write_stall_timeout`]): a reply (or an event
//!   stream) the client stops reading is dropped when no byte could be written for this long.
//! - **Connection cap** ([`Limits::max_connections`]): beyond it a new connection gets a
//!   `503` and is closed at once, rather than waiting. Waiting would mean either holding the
//!   accepted descriptor (which the cap is there to bound) or leaving it in the kernel's
//!   backlog, where a client's request sits unanswered for up to a header-read timeout and
//!   then times out with no explanation; a fast 503 tells the client what happened and lets
//!   it retry. The cap leaves [`FD_RESERVE`] descriptors below `RLIMIT_NOFILE` for the AM's
//!   own RM, NodeManager, HDFS and log files; the soft limit is raised to the hard one first.
//! - **Body size and deadline** ([`BODY_LIMIT`], [`BODY_READ_TIMEOUT`]): request bodies are
//!   JSON commands; a larger one is a 413, and a body read only after its request is
//!   authenticated (the Bearer secret, or an executor poll's MAC, which covers the body's
//!   digest: see `poll.rs`), within a deadline ([`read_body`]). So a client without a secret
//!   or key makes the AM hold at most its headers ([`HEADER_BUF_LIMIT`]) for at most the
//!   header-read timeout, and its connection is closed after the 401 (hyper closes a
//!   connection whose request body was left unread). Executor polls have their own, smaller
//!   limit and a cap on the poll bytes buffered at once (`poll.rs`).
//! - **TLS** ([`Transport::Tls`]): the driver API and the poll endpoint are served only over
//!   TLS with the application's certificate (`yarn_am_wire::tls`), so neither the Bearer
//!   secret nor task commands cross the network in clear. The handshake runs in the
//!   connection's own task, within the header-read timeout, and holds a connection slot:
//!   a client that opens a connection and never finishes its handshake costs what one that
//!   never sends its headers costs. A client speaking plain HTTP to the port fails the
//!   handshake and is closed without a reply. [`Transport::Plain`] serves only the tracking
//!   page (see `super::serve`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tracing::{debug, info, warn};

/// Default header-read (and keep-alive idle) timeout.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a reply may make no progress before the connection is dropped.
pub const WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(30);
/// The most connections the API serves at once, however many descriptors the AM may open.
pub const MAX_CONNECTIONS: usize = 2048;
/// Descriptors kept free for the AM's own work (RM and NodeManager connections, HDFS,
/// logs, the runtime).
pub const FD_RESERVE: u64 = 512;
/// Largest driver request body (a demand naming many hosts is the largest legitimate one).
pub const BODY_LIMIT: usize = 4 << 20;
/// How long an authenticated client has to send its request body.
pub const BODY_READ_TIMEOUT: Duration = if cfg!(test) {
    Duration::from_millis(300)
} else {
    Duration::from_secs(10)
};
/// The most a connection may buffer of a request's headers (hyper's read buffer; its
/// default is about 400 KiB). Our clients' headers are well under 1 KiB.
pub const HEADER_BUF_LIMIT: usize = 32 << 10;
/// How long shutdown waits for connections still serving a request.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What a connection may cost the AM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub header_read_timeout: Duration,
    pub write_stall_timeout: Duration,
    pub max_connections: usize,
}

impl Limits {
    /// The limits for this process: raises the soft `RLIMIT_NOFILE` to the hard limit and
    /// caps connections below it.
    pub fn for_this_process() -> Limits {
        let soft = match raise_nofile_limit() {
            Ok(n) => n,
            Err(e) => {
                warn!("could not read or raise RLIMIT_NOFILE ({e}); assuming 1024");
                1024
            }
        };
        let limits = Limits {
            header_read_timeout: HEADER_READ_TIMEOUT,
            write_stall_timeout: WRITE_STALL_TIMEOUT,
            max_connections: connection_cap(soft),
        };
        info!(
            nofile = soft,
            max_connections = limits.max_connections,
            "driver API limits"
        );
        limits
    }
}

/// The connection cap for a descriptor limit: [`FD_RESERVE`] below it, at most
/// [`MAX_CONNECTIONS`], and at least a handful so that a tiny limit still serves someone.
pub fn connection_cap(nofile: u64) -> usize {
    let room = nofile.saturating_sub(FD_RESERVE).max(16);
    usize::try_from(room)
        .unwrap_or(usize::MAX)
        .min(MAX_CONNECTIONS)
}

/// Raises the soft descriptor limit to the hard one; returns the soft limit now in force.
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = lim.rlim_max;
        } else {
            warn!(
                "could not raise RLIMIT_NOFILE from {} to {}: {}",
                lim.rlim_cur,
                lim.rlim_max,
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(lim.rlim_cur)
}

/// What a connection beyond the cap reads before it is closed.
fn busy_reply() -> String {
    let body = r#"{"error":"the ApplicationMaster serves too many connections; try again"}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Refused connections that may be answered at once (each holds its descriptor for at most
/// [`REFUSE_LINGER`]); beyond this many a refused connection is just closed.
const REFUSING: usize = 64;
/// How long a refused connection is kept to deliver its 503.
const REFUSE_LINGER: Duration = Duration::from_secs(1);

/// Answers a connection beyond the cap with a 503 and closes it. The client has usually
/// sent its request already: closing with it unread would reset the connection and the
/// client would lose the reply, so what it sent is read and dropped for a moment (a bounded
/// number of such connections at a time; past that the connection is simply closed). On a
/// TLS listener the 503 goes inside a handshake (within the same moment), so that a TLS
/// client reads a reply rather than garbage.
fn refuse(
    stream: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    refusing: &Arc<Semaphore>,
) {
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let _ = tokio::time::timeout(REFUSE_LINGER, async {
            match tls {
                None => answer_busy(stream).await,
                Some(acceptor) => answer_busy(acceptor.accept(stream).await?).await,
            }
        })
        .await;
        drop(permit);
    });
}

/// Writes the 503, closes our side and drains what the client sent.
async fn answer_busy<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(busy_reply().as_bytes()).await?;
    stream.shutdown().await?;
    let mut sink = [0u8; 1024];
    while stream.read(&mut sink).await? > 0 {}
    Ok(())
}

/// What a listener speaks.
#[derive(Clone)]
pub enum Transport {
    /// TLS with this configuration (the application's certificate).
    Tls(Arc<rustls::ServerConfig>),
    /// Plain HTTP: only for what carries no secret (the tracking page).
    Plain,
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves, then stops
/// accepting, lets requests in flight finish (at most [`SHUTDOWN_GRACE`]) and returns.
pub async fn run(
    listener: TcpListener,
    app: Router,
    transport: Transport,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let tls = match transport {
        Transport::Tls(config) => Some(tokio_rustls::TlsAcceptor::from(config)),
        Transport::Plain => None,
    };
    let app = app.layer(DefaultBodyLimit::max(BODY_LIMIT));
    let service = TowerToHyperService::new(app);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .max_buf_size(HEADER_BUF_LIMIT)
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let refused = AtomicU64::new(0);
    let refusing = Arc::new(Semaphore::new(REFUSING));
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors (EMFILE/ENFILE) or a connection reset before we
                    // got it: wait a little instead of spinning on the error.
                    debug!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            let n = refused.fetch_add(1, Ordering::Relaxed);
            if n.is_power_of_two() || n == 0 {
                warn!(
                    max = limits.max_connections,
                    refused = n + 1,
                    "driver API at its connection cap: refusing new connections"
                );
            }
            refuse(stream, tls.clone(), &refusing);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let stream = StallGuard::new(stream, limits.write_stall_timeout);
        let (http, service, watcher) = (http.clone(), service.clone(), graceful.watcher());
        let (tls, handshake_limit) = (tls.clone(), limits.header_read_timeout);
        tokio::spawn(async move {
            let served = match tls {
                None => {
                    let conn = http.serve_connection(TokioIo::new(stream), service);
                    watcher.watch(conn).await
                }
                Some(acceptor) => {
                    let tls = match tokio::time::timeout(handshake_limit, acceptor.accept(stream))
                        .await
                    {
                        Ok(Ok(tls)) => tls,
                        Ok(Err(e)) => {
                            debug!("driver API TLS handshake failed: {e}");
                            return;
                        }
                        Err(_) => {
                            debug!("driver API TLS handshake not done in {handshake_limit:?}");
                            return;
                        }
                    };
                    let conn = http.serve_connection(TokioIo::new(tls), service);
                    watcher.watch(conn).await
                }
            };
            if let Err(e) = served {
                debug!("driver API connection ended: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        warn!(
            "driver API connections still open {} s after shutdown; leaving them",
            SHUTDOWN_GRACE.as_secs()
        );
    }
    Ok(())
}

/// Why a request body could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// Over the limit (told by `content-length`, or found while reading).
    TooLarge,
    /// Not all there within the deadline.
    TimedOut,
    /// The connection broke or the body was malformed.
    Broken,
}

impl BodyError {
    /// The answer for it: a status and a message.
    pub fn reply(self, limit: usize, deadline: Duration) -> (axum::http::StatusCode, String) {
        use axum::http::StatusCode;
        match self {
            BodyError::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is over {limit} bytes"),
            ),
            BodyError::TimedOut => (
                StatusCode::REQUEST_TIMEOUT,
                format!("the request body did not arrive within {deadline:?}"),
            ),
            BodyError::Broken => (
                StatusCode::BAD_REQUEST,
                "the request body could not be read".to_string(),
            ),
        }
    }
}

/// The length a request declares, if it declares one that parses.
pub fn content_length(headers: &axum::http::HeaderMap) -> Option<usize> {
    headers
        .get(axum::http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Reads a request body of at most `limit` bytes within `deadline`. A body that declares
/// more is refused before a byte is read.
pub async fn read_body(
    headers: &axum::http::HeaderMap,
    body: axum::body::Body,
    limit: usize,
    deadline: Duration,
) -> Result<axum::body::Bytes, BodyError> {
    if content_length(headers).is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge);
    }
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, limit)).await {
        Err(_) => Err(BodyError::TimedOut),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            while let Some(s) = source {
                if s.is::<http_body_util::LengthLimitError>() {
                    return Err(BodyError::TooLarge);
                }
                source = s.source();
            }
            Err(BodyError::Broken)
        }
    }
}

/// Middleware for authenticated routes (inside the secret check): buffers the body within
/// [`BODY_LIMIT`] and [`BODY_READ_TIMEOUT`] before the handler runs, so that no handler reads
/// a body without a deadline.
pub async fn buffer_body(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (parts, body) = req.into_parts();
    match read_body(&parts.headers, body, BODY_LIMIT, BODY_READ_TIMEOUT).await {
        Ok(bytes) => {
            next.run(axum::extract::Request::from_parts(
                parts,
                axum::body::Body::from(bytes),
            ))
            .await
        }
        Err(e) => {
            let (status, message) = e.reply(BODY_LIMIT, BODY_READ_TIMEOUT);
            super::error(status, message).into_response()
        }
    }
}

/// A stream whose writes fail with `TimedOut` when the peer has not taken a byte for
/// `limit`: a client that stops reading a reply cannot hold its connection forever.
struct StallGuard<S> {
    inner: S,
    limit: Duration,
    /// Armed while a write is pending; cleared by any progress.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> StallGuard<S> {
    fn new(inner: S, limit: Duration) -> Self {
        StallGuard {
            inner,
            limit,
            stalled: None,
        }
    }

    /// After the inner write returned `Pending`: arms the timer, or reports that it ran out.
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<T>> {
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the client read nothing for {:?}", limit),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn progressed<T>(
        &mut self,
        r: Poll<std::io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<T>> {
        match r {
            Poll::Pending => self.pending(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallGuard<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallGuard<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.progressed(r, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.progressed(r, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.progressed(r, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.progressed(r, cx)
    }
}

/// Descriptors this process has open (Linux: entries of /proc/self/fd; `None` elsewhere).
pub fn open_fds() -> Option<u64> {
    let n = std::fs::read_dir("/proc/self/fd").ok()?.count();
    // The directory handle read_dir held is one of them.
    Some(n.saturating_sub(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_keeps_a_reserve_below_the_descriptor_limit() {
        assert_eq!(connection_cap(1024), 512);
        assert_eq!(connection_cap(20_000), MAX_CONNECTIONS);
        assert_eq!(connection_cap(FD_RESERVE + 100), 100);
        // A limit at or under the reserve still serves a few.
        assert_eq!(connection_cap(256), 16);
        assert_eq!(connection_cap(u64::MAX), MAX_CONNECTIONS);
    }

    use axum::routing::{get, post};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// A server with `limits` on a loopback port; returns its address.
    async fn start(limits: Limits) -> std::net::SocketAddr {
        let app = Router::new().route("/", get(|| async { "hello" })).route(
            "/echo",
            post(|b: axum::body::Bytes| async move { b.len().to_string() }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(run(
            listener,
            app,
            Transport::Plain,
            limits,
            std::future::pending(),
        ));
        addr
    }

    fn limits(max_connections: usize) -> Limits {
        Limits {
            header_read_timeout: Duration::from_millis(300),
            write_stall_timeout: WRITE_STALL_TIMEOUT,
            max_connections,
        }
    }

    /// Everything the server sends until it closes the connection (bounded wait).
    async fn read_to_close(s: &mut TcpStream) -> String {
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
            .await
            .expect("the server did not close the connection within 5 s")
            .unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    async fn get_root(addr: std::net::SocketAddr) -> String {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        read_to_close(&mut s).await
    }

    #[tokio::test]
    async fn idle_and_half_sent_connections_are_closed_after_the_header_timeout() {
        let addr = start(limits(64)).await;
        let mut idle = TcpStream::connect(addr).await.unwrap();
        let mut half = TcpStream::connect(addr).await.unwrap();
        half.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n")
            .await
            .unwrap();
        // Kept alive after a full request, then idle: closed too.
        let mut kept = TcpStream::connect(addr).await.unwrap();
        kept.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(read_to_close(&mut idle).await, "");
        // hyper answers a header timeout with 408 when nothing was written yet.
        let h = read_to_close(&mut half).await;
        assert!(!h.contains("hello"), "{h}");
        let k = read_to_close(&mut kept).await;
        assert!(k.starts_with("HTTP/1.1 200") && k.ends_with("hello"), "{k}");
    }

    #[tokio::test]
    async fn connections_beyond_the_cap_get_a_503_and_are_closed() {
        let addr = start(Limits {
            header_read_timeout: Duration::from_secs(30),
            ..limits(3)
        })
        .await;
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(TcpStream::connect(addr).await.unwrap());
        }
        // Let the server accept them all before the next one arrives.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let refused = get_root(addr).await;
        assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
        let body = refused.split("\r\n\r\n").nth(1).unwrap();
        let len: usize = refused
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(body.len(), len);
        assert!(body.contains("too many connections"), "{body}");
        // A slot freed is a slot served.
        drop(held.pop());
        tokio::time::sleep(Duration::from_millis(100)).await;
        let ok = get_root(addr).await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused() {
        let addr = start(limits(8)).await;
        let http = reqwest::Client::new();
        let ok = http
            .post(format!("http://{addr}/echo"))
            .body(vec![b'x'; 1000])
            .send()
            .await
            .unwrap();
        assert_eq!(ok.text().await.unwrap(), "1000");
        let big = http
            .post(format!("http://{addr}/echo"))
            .body(vec![b'x'; BODY_LIMIT + 1])
            .send()
            .await
            .unwrap();
        assert_eq!(big.status(), 413);
    }

    #[test]
    fn open_fds_counts_a_descriptor_we_open() {
        let before = open_fds().unwrap();
        let f = std::fs::File::open("/proc/self/status").unwrap();
        assert_eq!(open_fds().unwrap(), before + 1);
        drop(f);
    }

    /// Drives a `StallGuard` over one end of a pipe whose other end never reads.
    #[tokio::test]
    async fn a_write_the_peer_never_reads_times_out() {
        let (a, _b) = tokio::io::duplex(64);
        let mut g = StallGuard::new(a, Duration::from_millis(300));
        g.write_all(&[0u8; 64]).await.unwrap(); // fills the pipe
        let start = tokio::time::Instant::now();
        let err = tokio::time::timeout(Duration::from_secs(5), g.write_all(&[0u8; 1]))
            .await
            .expect("the stalled write did not time out")
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(start.elapsed() >= Duration::from_millis(300));
        assert!(err.to_string().contains("read nothing for"), "{err}");
    }

    #[tokio::test]
    async fn a_slow_reader_that_keeps_reading_is_not_cut() {
        let (a, mut b) = tokio::io::duplex(16);
        let mut g = StallGuard::new(a, Duration::from_millis(300));
        let reader = tokio::spawn(async move {
            let mut got = 0;
            let mut buf = [0u8; 8];
            while got < 160 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                got += b.read(&mut buf).await.unwrap();
            }
            got
        });
        g.write_all(&[0u8; 160]).await.unwrap();
        assert_eq!(reader.await.unwrap(), 160);
    }
}
