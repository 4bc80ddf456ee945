//! What the AM gets in secret: its container's credentials, and the driver-API secret kept
//! for the submitter.

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::Context;
use tracing::warn;

use crate::cli::SubmitArgs;
use yarn_am_wire::service_data;

/// The AM container's credentials: everything secret the AM gets travels here, never in its
/// environment, command line or spec file (the NodeManager writes those into
/// `launch_container.sh` in the container's log dir, which its web UI serves). Today that is
/// the application's master secret (see [`yarn_am_wire::poll`]) and the driver API's
/// certificate with its private key (see [`yarn_am_wire::tls`]) and the auxiliary-service
/// data of `--service-data` (see [`service_data`]); delegation tokens for a
/// secure cluster go beside them. A small spec travels here too (not a secret: to spare the
/// AM container a localizer, see [`yarn_am_wire::spec`]).
pub(super) fn am_credentials(
    master_secret: &str,
    cert: &yarn_am_wire::tls::AppCert,
    tokens: Vec<(String, yarn_client::token::Token)>,
    spec: Option<Vec<u8>>,
    service_data: &[service_data::ServiceData],
) -> yarn_client::credentials::Credentials {
    let mut secrets = vec![(
        yarn_am_wire::credentials::MASTER_SECRET_ALIAS.to_string(),
        master_secret.as_bytes().to_vec(),
    )];
    secrets.extend(cert.credential_secrets());
    if let Some(spec) = spec {
        secrets.push((yarn_am_wire::spec::SPEC_ALIAS.to_string(), spec));
    }
    // Auxiliary-service data (often a secret) for the AM to put in every executor's launch
    // context; under yarn-am aliases, so no container the AM starts gets them as credentials.
    secrets.extend(service_data.iter().map(|d| {
        (
            yarn_am_wire::credentials::service_data_alias(&d.name),
            d.bytes.clone(),
        )
    }));
    yarn_client::credentials::Credentials { tokens, secrets }
}

/// Keeps the driver-API secret, with the fingerprint of the certificate the AM will serve,
/// where only this user can read it (the format: [`yarn_am_wire::driver_secret`]).
pub(super) fn write_secret(
    args: &SubmitArgs,
    app_id: &str,
    secret: &str,
    cert: &yarn_am_wire::tls::AppCert,
) -> anyhow::Result<PathBuf> {
    let dir = args
        .secret_dir
        .clone()
        .unwrap_or_else(yarn_am_wire::driver_secret::default_dir);
    // 0700 and ours; an existing folder that others could read is closed up.
    if crate::staging::private_fs::ensure_private_dir(&dir)
        .context("the secret folder is not safe")?
    {
        warn!(dir = %dir.display(), "the secret folder was readable by others; now 0700");
    }
    let path = yarn_am_wire::driver_secret::file_of(&dir, app_id);
    // O_NOFOLLOW: a link planted in our place is refused, not written through.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    // `mode` applies only to a new file.
    f.set_permissions(
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600),
    )
    .with_context(|| format!("setting the mode of {}", path.display()))?;
    let text = yarn_am_wire::driver_secret::DriverSecret::render(secret, cert.fingerprint());
    std::io::Write::write_all(&mut f, text.as_bytes())?;
    Ok(path)
}
