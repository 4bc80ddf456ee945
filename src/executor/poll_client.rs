//! The poll client: one signed poll to the AM, and its reply checked for the AM's signature
//! before anything in it is read (the scheme: [`yarn_am_wire::poll`]).

use anyhow::Context;

use super::config::Config;
use yarn_am_wire::poll::{self, PollReply, PollRequest, RequestAuth};

/// Why a poll got no reply to act on.
pub(super) enum PollError {
    /// The AM answered and will not take this poll however often it is sent.
    Refused(String),
    /// A reply that does not carry this application's AM's signature.
    Forged(poll::ReplyError),
    /// The server's TLS certificate is not the AM's: nothing was sent (the handshake
    /// comes before the request).
    WrongCertificate(yarn_am_wire::tls::TlsError),
    /// Nobody listens on the AM's port (connection refused).
    Gone(anyhow::Error),
    /// No answer, or one that may change (5xx, a broken reply).
    Unreachable(anyhow::Error),
}

/// Whether the connection was refused: nobody listens on the AM's port any more.
fn connection_refused(e: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = s.source();
    }
    false
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// One poll: signed as this executor, and its reply checked for the AM's signature before
/// anything in it is read.
pub(super) async fn poll(
    http: &reqwest::Client,
    cfg: &Config,
    seq: u64,
    req: &PollRequest,
) -> Result<PollReply, PollError> {
    let body = serde_json::to_vec(req)
        .context("encoding the poll")
        .map_err(PollError::Unreachable)?;
    if body.len() > poll::POLL_BODY_LIMIT {
        // Cannot happen with task ids of at most 200 bytes and results bounded by the cpus;
        // say so rather than have the AM answer 413.
        return Err(PollError::Refused(format!(
            "this poll is {} bytes, over the AM's limit of {}",
            body.len(),
            poll::POLL_BODY_LIMIT
        )));
    }
    let auth = RequestAuth::sign(
        &cfg.key,
        &cfg.id,
        &cfg.container_id,
        seq,
        now_ms(),
        rand::random(),
        &poll::SignedRequest {
            method: "POST",
            path: poll::POLL_PATH,
            body: &body,
        },
    );
    let resp = http
        .post(format!("{}{}", cfg.url, poll::POLL_PATH))
        .header(poll::AUTH_HEADER, auth.header_value())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| {
            if let Some(wrong) = yarn_am_wire::tls::pin_error(&e) {
                PollError::WrongCertificate(wrong)
            } else if connection_refused(&e) {
                PollError::Gone(anyhow::Error::new(e).context("sending the poll"))
            } else {
                PollError::Unreachable(anyhow::Error::new(e).context("sending the poll"))
            }
        })?;
    let status = resp.status();
    let mac = resp
        .headers()
        .get(poll::REPLY_MAC_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = resp
        .bytes()
        .await
        .context("reading the AM's reply")
        .map_err(PollError::Unreachable)?;
    let signed = poll::check_reply(&cfg.key, &auth, status.as_u16(), &bytes, mac.as_deref());
    if status.is_success() {
        signed.map_err(PollError::Forged)?;
        return serde_json::from_slice(&bytes)
            .context("reading the AM's reply")
            .map_err(PollError::Unreachable);
    }
    // An error reply is only text shown to people; a wrong signature on it still means
    // someone else answers.
    if let (Some(_), Err(e)) = (&mac, &signed) {
        return Err(PollError::Forged(e.clone()));
    }
    let body = String::from_utf8_lossy(&bytes);
    let body = body.trim();
    Err(match status.as_u16() {
        401 => PollError::Refused(format!(
            "{status}: {body} (this executor's key or clock is not one the AM accepts)"
        )),
        404 => PollError::Refused(format!(
            "{status}: {body} (is YARN_AM_DRIVER_URL this application's driver API?)"
        )),
        // The body did not reach the AM in time: the next poll sends it again.
        408 => PollError::Unreachable(anyhow::anyhow!("the AM answered {status}: {body}")),
        400..=499 => PollError::Refused(format!("{status}: {body}")),
        _ => PollError::Unreachable(anyhow::anyhow!("the AM answered {status}: {body}")),
    })
}
