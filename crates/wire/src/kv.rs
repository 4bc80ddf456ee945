//! The key-value store's contract: its endpoints and JSON, and the credential a container
//! (an executor and the tasks it runs) uses to reach it.
//!
//! # Endpoints (driver API, TLS)
//! - `PUT /v1/kv/{key}`: the body is the value (UTF-8); answers [`KvStored`] once the write
//!   is in the journal. 413 for a value, key count or store total over its limit, 400 for a
//!   bad key or a body that is not UTF-8; nothing is stored then.
//! - `GET /v1/kv/{key}`: [`KvEntry`], 404 when absent. With `?wait=SECONDS` (at most
//!   [`MAX_WAIT_SECS`]) and optionally `&after=VERSION`: a long poll that answers as soon as
//!   the key holds a version above `after` (0 by default: any), else 404 when the wait ends.
//! - `DELETE /v1/kv/{key}`: [`KvDeleted`].
//! - `GET /v1/kv?prefix=P`: [`KvListing`], every entry whose key starts with `P`.
//!
//! Keys may contain `/` (`dask/scheduler`); they are percent-decoded from the path.
//!
//! # Who may call
//! The driver, with its Bearer secret (every driver power). A container of the app, with its
//! own key and nothing else: [`kv_key`] = HMAC-SHA256(master secret, container id), which the
//! AM puts in each container's credentials under [`KV_KEY_ALIAS`] (beside the certificate's
//! fingerprint under [`KV_PIN_ALIAS`]). Unlike the executor's poll key, these aliases do not
//! start with `yarn-am.`, so the executor leaves them in the token file it rewrites for its
//! tasks: the tasks of a container share its KV key. The key opens only these endpoints.
//! It travels in [`KV_AUTH_HEADER`] (`<container id> <hex key>`) over the pinned TLS
//! connection, as the driver's secret does; every AM attempt derives the same keys from the
//! same master secret, so containers keep their access across an AM restart.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The prefix of the store's paths.
pub const KV_PATH: &str = "/v1/kv";
/// Request header with a container's KV credential.
pub const KV_AUTH_HEADER: &str = "x-yarn-am-kv-auth";
/// Alias of a container's KV key in its credentials (kept for its tasks).
pub const KV_KEY_ALIAS: &str = "yarn-am-kv.key";
/// Alias of the AM certificate's fingerprint for the KV client (kept for the tasks, which
/// lose the executor's copy under `yarn-am.tls-sha256`).
pub const KV_PIN_ALIAS: &str = "yarn-am-kv.tls-sha256";
/// The longest one long poll waits (clients poll again for longer waits).
pub const MAX_WAIT_SECS: u64 = 60;

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvEntry {
    pub key: String,
    pub value: String,
    /// The store's revision when this value was written (see `yarn_am_core::kv`).
    pub version: u64,
}

/// A prefix listing, in key order, with the store's revision at that moment.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KvListing {
    pub entries: Vec<KvEntry>,
    pub revision: u64,
}

/// The answer to a put.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvStored {
    pub key: String,
    pub version: u64,
}

/// The answer to a delete: whether the key was there, and the revision of the delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvDeleted {
    pub key: String,
    pub deleted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
}

/// The KV key of one container: only the AM (holding the master secret) can derive it.
pub fn kv_key(master: &[u8], container_id: &str) -> [u8; 32] {
    let mut m = Hmac::<Sha256>::new_from_slice(master).expect("HMAC takes keys of any length");
    m.update(b"yarn-am kv key v1\n");
    m.update(container_id.as_bytes());
    m.finalize().into_bytes().into()
}

/// The [`KV_AUTH_HEADER`] value a container sends.
pub fn auth_header(container_id: &str, key: &[u8; 32]) -> String {
    format!("{container_id} {}", hex::encode(key))
}

/// Why a container's KV credential was refused (never echoes the key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvAuthError {
    #[error("malformed {KV_AUTH_HEADER} header: want `<container id> <64 hex digits>`")]
    Malformed,
    #[error("the KV key does not match the container it names")]
    WrongKey,
}

/// Checks a [`KV_AUTH_HEADER`] value against the key derived from `master`; returns the
/// container it names. Constant-time comparison.
pub fn check_auth(master: &[u8], header: &str) -> Result<String, KvAuthError> {
    let (container, key_hex) = header
        .trim()
        .split_once(' ')
        .ok_or(KvAuthError::Malformed)?;
    let valid_id = !container.is_empty()
        && container.len() <= 128
        && container
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    let given = hex::decode(key_hex.trim()).map_err(|_| KvAuthError::Malformed)?;
    if !valid_id || given.len() != 32 {
        return Err(KvAuthError::Malformed);
    }
    let want = kv_key(master, container);
    if bool::from(subtle::ConstantTimeEq::ct_eq(&want[..], &given[..])) {
        Ok(container.to_string())
    } else {
        Err(KvAuthError::WrongKey)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_container_key_opens_only_its_own_name_and_never_shows_in_errors() {
        let master = b"master";
        let key = kv_key(master, "container_1_0001_01_000002");
        let h = auth_header("container_1_0001_01_000002", &key);
        assert_eq!(
            check_auth(master, &h).unwrap(),
            "container_1_0001_01_000002"
        );
        // Another container's name with this key, another master, garbage.
        let other = auth_header("container_1_0001_01_000003", &key);
        assert_eq!(check_auth(master, &other), Err(KvAuthError::WrongKey));
        assert_eq!(check_auth(b"other", &h), Err(KvAuthError::WrongKey));
        for bad in [
            "",
            "c",
            "c zz",
            "c\n 00",
            &format!("a/b {}", hex::encode(key)),
        ] {
            assert_eq!(
                check_auth(master, bad),
                Err(KvAuthError::Malformed),
                "{bad:?}"
            );
        }
        let shown = format!("{} {}", KvAuthError::WrongKey, KvAuthError::Malformed);
        assert!(!shown.contains(&hex::encode(key)));
        assert_ne!(key, kv_key(master, "container_1_0001_02_000002"));
    }
}
