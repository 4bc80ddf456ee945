//! The driver API: how any driver tells the AM what it wants and watches what it gets.
//!
//! HTTP/JSON (axum). The API holds no allocator state of its own: writes become [`DriverCommand`]s
//! on a channel that the AM loop consumes between heartbeats, and reads serve the latest
//! [`StateView`] the loop published. So data flows one way (driver -> AM loop -> allocator)
//! and a slow or broken client can never block the heartbeat.
//!
//! A command that waits for an answer names it by a [`ReplyTo`] this side picks (a counter
//! shared by every handler) and travels as a [`Call`] with the channel for the answer: the
//! loop keeps the channel under that id and sends on it the [`Reply`] the sans-IO core
//! queues for the id.

mod auth;
mod kv;
mod live;
mod metrics;
mod page;
mod poll;
mod server;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Json, Router};
use futures_util::{Stream, StreamExt};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;

pub use yarn_am_core::am::events::{DriverCommand, Reply, ReplyTo};
use yarn_am_wire::driver_api::{
    ApiError, Demand, ExecutorEvent, FinishRequest, KillOutcome, KillRequest, ProgressReport,
    StateView,
};

/// A driver command on its way to the AM loop, with the caller's end of the answer when it
/// waits for one (the command then names it by [`DriverCommand::reply_to`]).
#[derive(Debug)]
pub struct Call {
    pub command: DriverCommand,
    pub reply: Option<oneshot::Sender<Reply>>,
}

/// The AM loop's end of the API.
pub struct ApiHandle {
    pub commands: mpsc::Receiver<Call>,
    pub state: watch::Sender<Arc<StateView>>,
    pub events: broadcast::Sender<ExecutorEvent>,
    /// The key-value store's revision, published after each write is acknowledged: wakes
    /// the watches (`kv::watch`).
    pub kv_revision: watch::Sender<u64>,
}

/// The HTTP side's end, cloned into every handler.
#[derive(Clone)]
pub struct Shared {
    secret: Arc<str>,
    /// Checks executors' signed polls (keys derived from `secret`; see `poll_auth`).
    executors: Arc<std::sync::Mutex<yarn_am_wire::poll::Verifier>>,
    commands: mpsc::Sender<Call>,
    /// The next [`ReplyTo`] a call waiting for an answer takes.
    next_reply: Arc<AtomicU64>,
    state: watch::Receiver<Arc<StateView>>,
    events: broadcast::Sender<ExecutorEvent>,
    /// Turns true when the server stops; ends the event streams.
    closing: Arc<watch::Sender<bool>>,
    /// The tracking page as last rendered.
    page: Arc<page::PageCache>,
    /// Its live summary (`live.json`) as last rendered.
    live: Arc<page::PageCache>,
    /// Poll-body bytes that may be buffered at once (`poll::POLL_BYTES_IN_FLIGHT`).
    poll_bytes: Arc<tokio::sync::Semaphore>,
    /// The key-value store's revision as the loop last published it.
    kv_revision: watch::Receiver<u64>,
}

/// Makes both ends. `secret` guards every `/v1` route and `/metrics` (Bearer), except the
/// executors' poll, which each executor signs with its own key derived from it, and the
/// key-value store, which a container may also reach with its own KV key derived from it.
pub fn channel(secret: &str, initial: StateView) -> (Shared, ApiHandle) {
    let (cmd_tx, cmd_rx) = mpsc::channel(64);
    let (state_tx, state_rx) = watch::channel(Arc::new(initial));
    let (events_tx, _) = broadcast::channel(1024);
    let (kv_tx, kv_rx) = watch::channel(0);
    (
        Shared {
            secret: secret.into(),
            executors: Arc::new(std::sync::Mutex::new(yarn_am_wire::poll::Verifier::new(
                secret.as_bytes(),
            ))),
            commands: cmd_tx,
            next_reply: Arc::new(AtomicU64::new(0)),
            state: state_rx,
            events: events_tx.clone(),
            closing: Arc::new(watch::channel(false).0),
            page: Arc::default(),
            live: Arc::new(page::PageCache::rendering(live::live_json)),
            poll_bytes: Arc::new(tokio::sync::Semaphore::new(poll::POLL_BYTES_IN_FLIGHT)),
            kv_revision: kv_rx,
        },
        ApiHandle {
            commands: cmd_rx,
            state: state_tx,
            events: events_tx,
            kv_revision: kv_tx,
        },
    )
}

pub(crate) fn error(
    status: StatusCode,
    message: impl Into<String>,
) -> (StatusCode, Json<ApiError>) {
    (
        status,
        Json(ApiError {
            error: message.into(),
        }),
    )
}

/// Parses a JSON body ourselves so that the 400 names the field that was wrong.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    body: &[u8],
) -> Result<T, (StatusCode, Json<ApiError>)> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            String::new()
        } else {
            format!(" at `{path}`")
        };
        error(
            StatusCode::BAD_REQUEST,
            format!("malformed request{at}: {}", e.inner()),
        )
    })
}

pub fn router(shared: Shared) -> Router {
    let private = Router::new()
        .route("/v1/demand", post(post_demand))
        .route("/v1/kinds", post(post_kinds))
        .route("/v1/executors/kill", post(post_kill))
        .route("/v1/finish", post(post_finish))
        .route("/v1/progress", post(post_progress))
        .route("/v1/job", get(get_job))
        .route("/v1/executors", get(get_executors))
        .route("/v1/executors/{id}/loss-reason", get(get_loss_reason))
        .route("/v1/events", get(get_events))
        .route("/v1/state", get(get_state))
        .route("/metrics", get(get_metrics))
        // Inside the secret check: a body is read only for a request that showed the secret.
        .route_layer(middleware::from_fn(server::buffer_body))
        .route_layer(middleware::from_fn_with_state(
            shared.clone(),
            auth::require_secret,
        ));
    // The key-value store: the driver's secret or a container's own KV key (see `kv`).
    let kv_routes = Router::new()
        .route("/v1/kv", get(kv::list))
        .route(
            "/v1/kv/{*key}",
            get(kv::get_key).put(kv::put_key).delete(kv::delete_key),
        )
        .route_layer(middleware::from_fn(server::buffer_body))
        .route_layer(middleware::from_fn_with_state(
            shared.clone(),
            kv::require_kv_access,
        ));
    Router::new()
        .route("/", get(get_page))
        // Executors sign their polls with their own keys instead (see `poll`).
        .route(poll::PATH, post(poll::post_poll))
        .merge(private)
        .merge(kv_routes)
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
        .with_state(shared)
}

/// The tracking page alone, for the plain-HTTP listener: no secret, no API, no poll.
pub fn page_router(shared: Shared) -> Router {
    Router::new()
        .route("/", get(get_page))
        .route("/live.json", get(get_live))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "only the tracking page is here") })
        .with_state(shared)
}

/// Connections the plain page listener serves at once: people's browsers through the RM's
/// web proxy, a handful; the rest of the descriptor budget is the API's.
const PAGE_CONNECTIONS: usize = 64;

/// Serves the driver API and the executors' poll endpoint on `listener` over TLS with
/// `tls`, and, when given, the tracking page alone on `page` in plain HTTP, until
/// `shutdown` resolves, within the limits of [`server`].
///
/// Why a plain page listener: the AM registers its tracking URL with the RM, whose web
/// proxy fetches it with the JVM's default trust store, which does not trust the
/// application's self-signed certificate (`WebAppProxyServlet` has no way to pin it). The
/// page holds nothing secret (anyone who can reach the NodeManager could always load it),
/// so it stays reachable through the proxy in plain HTTP, on its own port where no secret
/// and no task command is ever served.
pub async fn serve(
    listener: tokio::net::TcpListener,
    page: Option<tokio::net::TcpListener>,
    shared: Shared,
    tls: std::sync::Arc<rustls::ServerConfig>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let closing = shared.closing.clone();
    let limits = server::Limits::for_this_process();
    let (stop, stopped) = watch::channel(false);
    let until_stopped = |mut rx: watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let page_server = async {
        match page {
            Some(page) => {
                let page_limits = server::Limits {
                    max_connections: PAGE_CONNECTIONS.min(limits.max_connections),
                    ..limits
                };
                server::run(
                    page,
                    page_router(shared.clone()),
                    server::Transport::Plain,
                    page_limits,
                    until_stopped(stopped.clone()),
                )
                .await
            }
            None => Ok(()),
        }
    };
    let api_server = server::run(
        listener,
        router(shared.clone()),
        server::Transport::Tls(tls),
        limits,
        until_stopped(stopped.clone()),
    );
    let stopper = async move {
        shutdown.await;
        closing.send_replace(true);
        stop.send_replace(true);
    };
    let (api, page, ()) = tokio::join!(api_server, page_server, stopper);
    api.and(page)
}

/// Tests: any router served as the driver API is, over TLS with `tls` (for stand-in AMs).
#[cfg(test)]
pub(crate) async fn serve_router_tls(
    listener: tokio::net::TcpListener,
    app: Router,
    tls: std::sync::Arc<rustls::ServerConfig>,
) -> std::io::Result<()> {
    let limits = server::Limits::for_this_process();
    server::run(
        listener,
        app,
        server::Transport::Tls(tls),
        limits,
        std::future::pending(),
    )
    .await
}

fn snapshot(shared: &Shared) -> Arc<StateView> {
    shared.state.borrow().clone()
}

async fn send(shared: &Shared, command: DriverCommand) -> Result<(), (StatusCode, Json<ApiError>)> {
    call(
        shared,
        Call {
            command,
            reply: None,
        },
    )
    .await
}

async fn call(shared: &Shared, call: Call) -> Result<(), (StatusCode, Json<ApiError>)> {
    // The loop drains this channel every round; a full channel means it is stuck or gone.
    match tokio::time::timeout(Duration::from_secs(5), shared.commands.send(call)).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the ApplicationMaster is not taking commands (shutting down?)",
        )),
    }
}

async fn post_demand(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    let demand: Demand = match parse(&body) {
        Ok(d) => d,
        Err(e) => return e.into_response(),
    };
    if demand.host_to_local_task_count.keys().any(|h| h.is_empty()) {
        return error(StatusCode::BAD_REQUEST, "host names must not be empty").into_response();
    }
    if demand.excluded_hosts.iter().any(|h| h.trim().is_empty()) {
        return error(
            StatusCode::BAD_REQUEST,
            "excluded_hosts must not contain empty host names",
        )
        .into_response();
    }
    if let Some(kind) = &demand.kind {
        let known = {
            let state = shared.state.borrow();
            kind == yarn_am_wire::spec::DEFAULT_KIND || state.kinds.iter().any(|k| &k.name == kind)
        };
        if !known {
            return error(
                StatusCode::BAD_REQUEST,
                format!("this application has no executor kind {kind:?}"),
            )
            .into_response();
        }
    }
    match send(&shared, DriverCommand::SetDemand(demand.clone())).await {
        Ok(()) => (StatusCode::ACCEPTED, Json(demand)).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `POST /v1/kinds`: declares an executor kind while the app runs (a Spark resource
/// profile). 200 with the kind's index (`created` false when it was there already), 400 for
/// bad values, 409 for the same name with another shape or no room left for a kind.
async fn post_kinds(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    let declaration: yarn_am_wire::driver_api::KindDeclaration = match parse(&body) {
        Ok(d) => d,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = declaration.check() {
        return error(StatusCode::BAD_REQUEST, e).into_response();
    }
    let make = |reply| DriverCommand::DeclareKind { declaration, reply };
    match ask_raw(&shared, make, "kind declaration").await {
        Ok(Ok(declared)) => {
            // The loop answers before it next publishes its view, which `POST /v1/demand`
            // checks kinds against: answer once the view shows the kind, so that a demand
            // for it right after is not refused (bounded: the view is published every round).
            let mut view = shared.state.clone();
            let name = declared.name.clone();
            let shown = view.wait_for(|s| s.kinds.iter().any(|k| k.name == name));
            let _ = tokio::time::timeout(KIND_SHOWN_WAIT, shown).await;
            Json(declared).into_response()
        }
        Ok(Err(refused)) => error(StatusCode::CONFLICT, refused.to_string()).into_response(),
        Err(e) => e.into_response(),
    }
}

/// How long `POST /v1/kinds` waits for the loop's view to show a kind it declared.
const KIND_SHOWN_WAIT: Duration = if cfg!(test) {
    Duration::from_millis(20)
} else {
    Duration::from_secs(2)
};

/// How long a call waits for the AM loop's reply (the loop may be in an RM call).
const ASK_TIMEOUT: Duration = if cfg!(test) {
    Duration::from_millis(300)
} else {
    Duration::from_secs(10)
};

/// Sends a command that waits for an answer and answers with what the loop replies.
pub(crate) async fn ask<R: serde::Serialize + TryFrom<Reply>>(
    shared: &Shared,
    make: impl FnOnce(ReplyTo) -> DriverCommand,
    what: &str,
) -> Response {
    match ask_raw::<R>(shared, make, what).await {
        Ok(r) => Json(r).into_response(),
        Err(e) => e.into_response(),
    }
}

/// Sends a command that waits for an answer (`make` names it by the [`ReplyTo`] given) and
/// returns the loop's reply, or the error to answer when the loop does not take the command
/// or does not reply in time.
pub(crate) async fn ask_raw<R: TryFrom<Reply>>(
    shared: &Shared,
    make: impl FnOnce(ReplyTo) -> DriverCommand,
    what: &str,
) -> Result<R, (StatusCode, Json<ApiError>)> {
    let (reply, mut rx) = oneshot::channel();
    let command = make(ReplyTo(shared.next_reply.fetch_add(1, Ordering::Relaxed)));
    let reply = Some(reply);
    call(shared, Call { command, reply }).await?;
    let answer = match tokio::time::timeout(ASK_TIMEOUT, &mut rx).await {
        Ok(r) => r.ok(),
        Err(_) => {
            // Closing first makes the loop's late `send` fail rather than vanish unseen; a
            // reply that got in before the close is still delivered. (A poll reply lost
            // here is found on the executor's next poll: see `am::deliveries`.)
            rx.close();
            rx.try_recv().ok()
        }
    };
    // The core answers each command with its own kind of reply; another is a bug, answered
    // as no answer.
    answer.and_then(|a| R::try_from(a).ok()).ok_or_else(|| {
        error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the ApplicationMaster did not answer the {what}"),
        )
    })
}

async fn post_kill(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    match parse::<KillRequest>(&body) {
        Ok(req) => {
            let make = |reply| DriverCommand::Kill {
                executor_ids: req.executor_ids,
                reply,
            };
            ask::<KillOutcome>(&shared, make, "kill request").await
        }
        Err(e) => e.into_response(),
    }
}

/// `{"progress": F}`, F from 0 to 1: an external driver's measure, reported to the RM.
async fn post_progress(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    let req: ProgressReport = match parse(&body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    if !(0.0..=1.0).contains(&req.progress) {
        return error(
            StatusCode::BAD_REQUEST,
            format!("progress must be from 0 to 1, got {}", req.progress),
        )
        .into_response();
    }
    match send(&shared, DriverCommand::Progress(req.progress)).await {
        Ok(()) => (StatusCode::ACCEPTED, Json(req)).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn post_finish(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    let req: FinishRequest = match parse(&body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    match send(&shared, DriverCommand::Finish(req.clone())).await {
        Ok(()) => (StatusCode::ACCEPTED, Json(req)).into_response(),
        Err(e) => e.into_response(),
    }
}

/// Answers with `value` as JSON, encoded on a blocking thread: the job report lists every
/// task (100,000 take tens of milliseconds), and the AM loop shares the runtime's workers.
async fn json_off_runtime<T: serde::Serialize + Send + 'static>(value: T) -> Response {
    match tokio::task::spawn_blocking(move || serde_json::to_vec(&value)).await {
        Ok(Ok(body)) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        _ => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the reply could not be encoded",
        )
        .into_response(),
    }
}

async fn get_job(State(shared): State<Shared>) -> Response {
    match &snapshot(&shared).job {
        Some(job) => json_off_runtime(job.clone()).await,
        None => error(
            StatusCode::NOT_FOUND,
            "this application runs no embedded job",
        )
        .into_response(),
    }
}

async fn get_executors(State(shared): State<Shared>) -> Response {
    json_off_runtime(snapshot(&shared).executors.clone()).await
}

async fn get_loss_reason(State(shared): State<Shared>, Path(id): Path<String>) -> Response {
    let state = snapshot(&shared);
    let known = id.parse().ok();
    match known.and_then(|n| state.executor(n)) {
        Some(e) => Json(serde_json::json!({
            "id": e.id,
            "state": e.state,
            "exit_status": e.exit_status,
            "reason": e.reason,
            "counts_against_app": e.counts_against_app,
        }))
        .into_response(),
        None if known.is_some_and(|n| state.retention.forgot(n)) => error(
            StatusCode::NOT_FOUND,
            format!(
                "executor {id} is forgotten: only the last {} finished executors are kept",
                state.retention.finished_kept
            ),
        )
        .into_response(),
        None => error(StatusCode::NOT_FOUND, format!("no executor {id:?}")).into_response(),
    }
}

async fn get_state(State(shared): State<Shared>) -> Response {
    json_off_runtime(snapshot(&shared)).await
}

/// One server-sent event: its name and JSON data.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SseItem {
    name: &'static str,
    data: String,
}

/// Executor events as SSE items. A client too slow to keep up with the AM (more than the
/// channel holds behind) is not waited for: it gets a `lagged` event saying how many it
/// missed (`GET /v1/state` has the full picture) and the stream goes on from the oldest
/// event still held. The stream ends when `closing` turns true (the server is stopping),
/// so an open stream does not hold up the AM's shutdown.
fn sse_items(
    events: broadcast::Receiver<ExecutorEvent>,
    mut closing: watch::Receiver<bool>,
) -> impl Stream<Item = SseItem> {
    let closed = async move {
        let _ = closing.wait_for(|c| *c).await;
    };
    BroadcastStream::new(events)
        .filter_map(|msg| async move {
            match msg {
                Ok(ev) => Some(SseItem {
                    name: ev.name(),
                    data: serde_json::to_string(&ev).ok()?,
                }),
                Err(BroadcastStreamRecvError::Lagged(missed)) => Some(SseItem {
                    name: "lagged",
                    data: serde_json::json!({ "missed": missed }).to_string(),
                }),
            }
        })
        .take_until(closed)
}

async fn get_events(
    State(shared): State<Shared>,
) -> Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>> {
    let items = sse_items(shared.events.subscribe(), shared.closing.subscribe());
    let stream = items.map(|i| Ok(Event::default().event(i.name).data(i.data)));
    Sse::new(stream).keep_alive(KeepAlive::default())
}

async fn get_metrics(State(shared): State<Shared>) -> Response {
    let text = metrics::metrics(&snapshot(&shared));
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

async fn get_live(State(shared): State<Shared>) -> Response {
    let body = shared
        .live
        .get(&snapshot(&shared), std::time::Instant::now());
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

async fn get_page(State(shared): State<Shared>) -> Html<axum::body::Bytes> {
    Html(
        shared
            .page
            .get(&snapshot(&shared), std::time::Instant::now()),
    )
}

#[cfg(test)]
mod tests;
