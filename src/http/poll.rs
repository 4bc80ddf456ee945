//! `POST /v1/executors/poll`: the executors' endpoint. Executors do not hold the driver's
//! Bearer secret; each signs its polls with its own key and the AM signs every reply to an
//! authenticated poll, so that an executor can tell its AM from an impostor (the scheme is in
//! [`yarn_am_wire::poll`]). The driver's secret does not open this endpoint, and executor keys
//! open no other.
//!
//! Anyone who can reach the AM's port can send a poll, so nothing of a poll's body is read
//! before its header's MAC verified (the MAC covers the body's digest, which the header
//! carries). An unauthenticated poll is answered 401 at once and its connection closed with
//! the body unread. An authenticated one must declare its length, at most [`POLL_BODY_LIMIT`];
//! it is read within [`POLL_BODY_TIMEOUT`], and all poll bodies being read at once hold at
//! most [`POLL_BYTES_IN_FLIGHT`] (a poll that cannot get its share within the deadline is a
//! 503, which the executor retries).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tracing::warn;
use yarn_am_wire::poll::{Verified, AUTH_HEADER, POLL_BODY_LIMIT, REPLY_MAC_HEADER};

use super::server::{content_length, read_body};
use super::{ask, error, parse, DriverCommand, Shared};
use yarn_am_wire::poll::PollRequest;

pub const PATH: &str = yarn_am_wire::poll::POLL_PATH;

/// How long an authenticated executor has to send its poll's body.
pub const POLL_BODY_TIMEOUT: Duration = if cfg!(test) {
    Duration::from_millis(300)
} else {
    Duration::from_secs(5)
};
/// The most poll-body bytes buffered at once, over all connections.
pub const POLL_BYTES_IN_FLIGHT: usize = 16 << 20;

/// A reply body larger than this is not something the AM makes; refuse rather than buffer it.
const MAX_REPLY: usize = 64 << 20;

pub async fn post_poll(State(shared): State<Shared>, headers: HeaderMap, body: Body) -> Response {
    let header = headers.get(AUTH_HEADER).and_then(|v| v.to_str().ok());
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let verified = shared
        .executors
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .verify_header(header, "POST", PATH, now_ms);
    let verified = match verified {
        Ok(v) => v,
        Err(e) => {
            // Unsigned: whoever sent this has not shown it holds a key. Its body stays
            // unread, and the connection goes with it.
            warn!("refused an executor poll: {e}");
            let mut refused = error(StatusCode::UNAUTHORIZED, e.to_string()).into_response();
            refused
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return refused;
        }
    };
    let reply = match read_poll(&shared, &headers, body, &verified).await {
        Ok(request) => {
            let make = |reply| DriverCommand::ExecutorPoll { request, reply };
            ask::<yarn_am_wire::poll::PollReply>(&shared, make, "poll").await
        }
        Err(refused) => refused,
    };
    sign(reply, &verified).await
}

/// Reads, checks and parses the body of a poll whose header verified.
async fn read_poll(
    shared: &Shared,
    headers: &HeaderMap,
    body: Body,
    verified: &Verified,
) -> Result<PollRequest, Response> {
    let refuse = |status, message: String| error(status, message).into_response();
    let Some(len) = content_length(headers) else {
        return Err(refuse(
            StatusCode::LENGTH_REQUIRED,
            "a poll declares its length (content-length)".into(),
        ));
    };
    if len > POLL_BODY_LIMIT {
        return Err(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a poll body is at most {POLL_BODY_LIMIT} bytes; this one is {len}"),
        ));
    }
    // Bounded by POLL_BODY_LIMIT, so the cast cannot truncate.
    let share = shared.poll_bytes.clone().acquire_many_owned(len as u32);
    let Ok(Ok(_share)) = tokio::time::timeout(POLL_BODY_TIMEOUT, share).await else {
        return Err(refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the ApplicationMaster is reading too many polls; try again".into(),
        ));
    };
    let bytes: Bytes = read_body(headers, body, POLL_BODY_LIMIT, POLL_BODY_TIMEOUT)
        .await
        .map_err(|e| {
            let (status, message) = e.reply(POLL_BODY_LIMIT, POLL_BODY_TIMEOUT);
            refuse(status, message)
        })?;
    shared
        .executors
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .accept_body(verified, &bytes)
        .map_err(|e| {
            warn!("refused an executor poll: {e}");
            refuse(StatusCode::UNAUTHORIZED, e.to_string())
        })?;
    let request = parse::<PollRequest>(&bytes).map_err(IntoResponse::into_response)?;
    if request.executor_id != verified.executor_id {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            format!(
                "the poll is signed by executor {} but speaks for executor {}",
                verified.executor_id, request.executor_id
            ),
        ));
    }
    Ok(request)
}

/// Adds the reply MAC over the exact bytes sent, whatever the status: the executor trusts
/// no reply without it.
async fn sign(reply: Response, verified: &Verified) -> Response {
    let (mut parts, body) = reply.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REPLY).await else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the poll reply could not be buffered for signing",
        )
        .into_response();
    };
    let mac = verified.sign_reply(parts.status.as_u16(), &bytes);
    if let Ok(v) = HeaderValue::from_str(&mac) {
        parts.headers.insert(REPLY_MAC_HEADER, v);
    }
    Response::from_parts(parts, Body::from(bytes))
}
