//! Per-application secret for the driver API.
//!
//! `yarn-am submit` makes a random secret ([`yarn_am_wire::driver_secret::new_secret`]),
//! keeps it in `~/.yarn-am/<app>.secret` for the user's driver and ships it to the AM in the AM container's credentials (never in an
//! environment: see [`yarn_am_wire::poll`]). Every `/v1` call and `/metrics` except the
//! executors' signed poll must carry it as `Authorization: Bearer <secret>`. Compared in
//! constant time so the reply time does not leak a prefix.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::{error, Shared};

pub fn is_authorized(expected: &str, header_value: Option<&str>) -> bool {
    let Some(given) = header_value.and_then(|v| v.strip_prefix("Bearer ")) else {
        return false;
    };
    given.as_bytes().ct_eq(expected.as_bytes()).into()
}

pub async fn require_secret(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let value = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if is_authorized(&shared.secret, value) {
        next.run(req).await
    } else {
        error(
            StatusCode::UNAUTHORIZED,
            "missing or wrong secret: send `Authorization: Bearer <secret>`",
        )
        .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yarn_am_wire::driver_secret::new_secret;

    #[test]
    fn only_the_exact_bearer_secret_passes() {
        let s = new_secret();
        assert_eq!(s.len(), 64);
        assert!(is_authorized(&s, Some(&format!("Bearer {s}"))));
        assert!(!is_authorized(&s, Some(&s)));
        assert!(!is_authorized(&s, Some(&format!("Bearer {}", &s[..63]))));
        assert!(!is_authorized(&s, Some("Bearer ")));
        assert!(!is_authorized(&s, None));
        assert_ne!(new_secret(), s);
    }
}
