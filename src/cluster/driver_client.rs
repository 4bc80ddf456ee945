//! HTTP clients for an AM's driver API, as every caller outside the AM builds them: TLS
//! pinned to the application's certificate (`yarn_am_wire::tls`) and `https://` only, so a
//! URL that says `http://` fails instead of sending the secret in clear. Callers add their
//! timeouts.

use yarn_am_wire::driver_secret::DriverSecret;
use yarn_am_wire::tls::{pinned_client_config, Fingerprint};

/// A client builder that trusts only the certificate `pin` names.
pub fn pinned_http_client(pin: Fingerprint) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .use_preconfigured_tls(pinned_client_config(pin))
        .https_only(true)
}

/// A client for the AM a secret file names: pinned to its certificate. A version 1 file (no
/// pin) gives a plain client, for an AM from before TLS.
pub fn for_secret(secret: &DriverSecret) -> reqwest::ClientBuilder {
    match secret.tls_pin {
        Some(pin) => pinned_http_client(pin),
        None => reqwest::Client::builder(),
    }
}
