//! `POST /v1/executors/poll`: the executors' endpoint. Executors do not hold the driver's
//! Bearer secret; each signs its polls with its own key and the AM signs every reply to an
//! authenticated poll, so that an executor can tell its AM from an impostor (the scheme is in
//! [`crate::protocol::poll`]). The driver's secret does not open this endpoint, and executor keys
//! open no other.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::protocol::poll::{SignedRequest, Verified, AUTH_HEADER, REPLY_MAC_HEADER};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tracing::warn;

use super::{ask, error, parse, DriverCommand, Shared};
use crate::protocol::poll::PollRequest;

pub const PATH: &str = crate::protocol::poll::POLL_PATH;

/// A reply body larger than this is not something the AM makes; refuse rather than buffer it.
const MAX_REPLY: usize = 64 << 20;

pub async fn post_poll(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let header = headers.get(AUTH_HEADER).and_then(|v| v.to_str().ok());
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let request = SignedRequest {
        method: "POST",
        path: PATH,
        body: &body,
    };
    let verified = shared
        .executors
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .verify(header, &request, now_ms);
    let verified = match verified {
        Ok(v) => v,
        Err(e) => {
            // Unsigned: whoever sent this has not shown it holds a key.
            warn!("refused an executor poll: {e}");
            return error(StatusCode::UNAUTHORIZED, e.to_string()).into_response();
        }
    };
    let reply = match parse::<PollRequest>(&body) {
        Ok(req) if req.executor_id != verified.executor_id => error(
            StatusCode::UNAUTHORIZED,
            format!(
                "the poll is signed by executor {} but speaks for executor {}",
                verified.executor_id, req.executor_id
            ),
        )
        .into_response(),
        Ok(request) => {
            let make = |reply| DriverCommand::ExecutorPoll { request, reply };
            ask(&shared, make, "poll").await
        }
        Err(e) => e.into_response(),
    };
    sign(reply, &verified).await
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
