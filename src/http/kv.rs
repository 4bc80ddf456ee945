//! The key-value store's endpoints (the contract: [`yarn_am_wire::kv`]). Every request
//! goes to the AM loop as a [`DriverCommand::Kv`], where the store lives
//! ([`yarn_am_core::kv`]); a write is answered only once the loop has made its journal entry
//! durable. A watch (`?wait=`) asks the loop, and asks again each time the loop publishes a
//! new store revision, until the answer comes or its time is up: it holds no store state
//! here and never blocks the loop.

use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use tracing::debug;

use super::{ask_raw, auth, error, DriverCommand, Shared};
use yarn_am_core::kv::{KvAnswer, KvRequest};
use yarn_am_wire::kv::{check_auth, KV_AUTH_HEADER, MAX_WAIT_SECS};

/// Who may use the store: the driver (its Bearer secret) or a container of the app (its KV
/// key in [`KV_AUTH_HEADER`]); nobody else, and a container's key opens nothing but this.
pub async fn require_kv_access(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if auth::is_authorized(&shared.secret, bearer) {
        return next.run(req).await;
    }
    let Some(kv) = req.headers().get(KV_AUTH_HEADER) else {
        return error(
            StatusCode::UNAUTHORIZED,
            format!(
                "missing credential: send `Authorization: Bearer <secret>` or a container's {KV_AUTH_HEADER}"
            ),
        )
        .into_response();
    };
    match kv
        .to_str()
        .map_err(|_| yarn_am_wire::kv::KvAuthError::Malformed)
        .and_then(|v| check_auth(shared.secret.as_bytes(), v))
    {
        Ok(container) => {
            debug!(%container, method = %req.method(), "key-value request from a container");
            next.run(req).await
        }
        Err(e) => error(StatusCode::UNAUTHORIZED, e.to_string()).into_response(),
    }
}

/// The query of `GET /v1/kv/{key}` and `GET /v1/kv`, as text: numbers are parsed here so
/// that a bad one gets a 400 naming it.
#[derive(Debug, Default, Deserialize)]
pub struct KvQuery {
    wait: Option<String>,
    after: Option<String>,
    prefix: Option<String>,
}

/// A query number, or the 400's message naming it.
fn number(name: &str, v: Option<&str>) -> Result<Option<u64>, String> {
    v.map(|s| {
        s.parse::<u64>()
            .map_err(|_| format!("{name} must be a whole number, not {s:?}"))
    })
    .transpose()
}

async fn ask_kv(shared: &Shared, request: KvRequest) -> Result<KvAnswer, Response> {
    let make = |reply| DriverCommand::Kv { request, reply };
    ask_raw(shared, make, "key-value request")
        .await
        .map_err(IntoResponse::into_response)
}

/// The HTTP answer for one store answer; `absent` is the 404's message.
fn respond(answer: KvAnswer, absent: impl FnOnce() -> String) -> Response {
    match answer {
        KvAnswer::Entry(Some(e)) => Json(e).into_response(),
        KvAnswer::Entry(None) => error(StatusCode::NOT_FOUND, absent()).into_response(),
        KvAnswer::Stored(s) => Json(s).into_response(),
        KvAnswer::Deleted(d) => Json(d).into_response(),
        KvAnswer::Listing(l) => Json(l).into_response(),
        KvAnswer::Refused(e) if e.is_too_large() => {
            error(StatusCode::PAYLOAD_TOO_LARGE, format!("{e}; nothing stored")).into_response()
        }
        KvAnswer::Refused(e) => error(StatusCode::BAD_REQUEST, e.to_string()).into_response(),
        KvAnswer::NotJournaled => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the write is applied but could not be journaled: a restarted ApplicationMaster may not have it",
        )
        .into_response(),
    }
}

pub async fn put_key(
    State(shared): State<Shared>,
    Path(key): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let Ok(value) = String::from_utf8(body.to_vec()) else {
        return error(StatusCode::BAD_REQUEST, "the value is not UTF-8 text").into_response();
    };
    match ask_kv(&shared, KvRequest::Put { key, value }).await {
        Ok(a) => respond(a, String::new),
        Err(e) => e,
    }
}

pub async fn delete_key(State(shared): State<Shared>, Path(key): Path<String>) -> Response {
    match ask_kv(&shared, KvRequest::Delete { key }).await {
        Ok(a) => respond(a, String::new),
        Err(e) => e,
    }
}

pub async fn list(State(shared): State<Shared>, Query(q): Query<KvQuery>) -> Response {
    let prefix = q.prefix.unwrap_or_default();
    match ask_kv(&shared, KvRequest::List { prefix }).await {
        Ok(a) => respond(a, String::new),
        Err(e) => e,
    }
}

pub async fn get_key(
    State(shared): State<Shared>,
    Path(key): Path<String>,
    Query(q): Query<KvQuery>,
) -> Response {
    let (wait, after) = match (
        number("wait", q.wait.as_deref()),
        number("after", q.after.as_deref()),
    ) {
        (Ok(w), Ok(a)) => (w, a.unwrap_or(0)),
        (Err(e), _) | (_, Err(e)) => return error(StatusCode::BAD_REQUEST, e).into_response(),
    };
    let Some(wait) = wait else {
        if q.after.is_some() {
            return error(StatusCode::BAD_REQUEST, "after= goes with wait=").into_response();
        }
        return match ask_kv(&shared, KvRequest::Get { key: key.clone() }).await {
            Ok(a) => respond(a, || format!("no key {key:?}")),
            Err(e) => e,
        };
    };
    if wait > MAX_WAIT_SECS {
        return error(
            StatusCode::BAD_REQUEST,
            format!("wait={wait} is over the longest wait of {MAX_WAIT_SECS} s: poll again"),
        )
        .into_response();
    }
    watch(&shared, key, after, Duration::from_secs(wait)).await
}

/// A long poll: asks the loop, and again after every new revision it publishes, until the
/// key holds a version above `after` or `wait` is over (404) or the server stops (503).
async fn watch(shared: &Shared, key: String, after: u64, wait: Duration) -> Response {
    let deadline = tokio::time::Instant::now() + wait;
    let mut revisions = shared.kv_revision.clone();
    let mut closing = shared.closing.subscribe();
    loop {
        // Marked seen before asking: a write after the answer wakes the next wait.
        revisions.borrow_and_update();
        let request = KvRequest::Watch {
            key: key.clone(),
            after,
        };
        match ask_kv(shared, request).await {
            Ok(KvAnswer::Entry(None)) => {}
            Ok(a) => return respond(a, String::new),
            Err(e) => return e,
        }
        tokio::select! {
            changed = tokio::time::timeout_at(deadline, revisions.changed()) => match changed {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => break,
                Err(_) => {
                    let what = if after == 0 {
                        format!("no key {key:?}")
                    } else {
                        format!("no version of {key:?} above {after}")
                    };
                    return error(
                        StatusCode::NOT_FOUND,
                        format!("{what} within {} s", wait.as_secs()),
                    )
                    .into_response();
                }
            },
            _ = closing.wait_for(|c| *c) => break,
        }
    }
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the ApplicationMaster is stopping",
    )
    .into_response()
}
