//! The executor's configuration, from the container the AM launched it in: the environment
//! the AM set ([`ExecutorEnv`]), and this executor's key, taken from the container's token file and hidden
//! from the tasks (see the module doc of [`super`], "Trust").

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use tracing::warn;
use yarn_client::credentials::{Credentials, Format, TOKEN_FILE_ENV};

use super::{AM_GONE_AFTER, AM_LOST_AFTER, AM_RESTART_WAIT, IDLE_POLL, REQUEST_TIMEOUT};
use crate::cluster::next_am::StagingFolder;
use yarn_am_wire::credentials;
use yarn_am_wire::executor_env::ExecutorEnv;
use yarn_am_wire::tls::{self, Fingerprint};

/// Where and how this executor polls, and where its tasks' output goes.
pub(super) struct Config {
    pub(super) url: String,
    /// This executor's own key (see [`yarn_am_wire::poll`]).
    pub(super) key: [u8; 32],
    /// The fingerprint of the AM's certificate, pinned on every poll (see
    /// [`yarn_am_wire::tls`]); from the same credentials as the key.
    pub(super) tls_pin: Fingerprint,
    pub(super) id: String,
    pub(super) container_id: String,
    pub(super) host: String,
    pub(super) cpus: u32,
    pub(super) log_dir: PathBuf,
    pub(super) am_lost_after: Duration,
    pub(super) am_gone_after: Duration,
    /// The staging folder where a next AM attempt publishes its URL (set by AM attempts
    /// that are not the last; see [`yarn_am_wire::executor_env::StagingEnv`]).
    pub(super) staging_dir: Option<StagingFolder>,
    pub(super) am_restart_wait: Duration,
    pub(super) request_timeout: Duration,
    pub(super) idle_poll: Duration,
}

/// A variable the NodeManager sets in every container (the AM's own are [`ExecutorEnv`]'s).
pub(super) fn var(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| {
        format!("{name} is not set: `yarn-am executor` runs in containers the AM starts")
    })
}

impl Config {
    pub(super) fn from_env() -> anyhow::Result<Self> {
        // The key first: whatever else is wrong, it leaves the token file before we exit.
        let token_file = PathBuf::from(var(TOKEN_FILE_ENV)?);
        let (key, tls_pin) = take_key(&token_file)?;
        let env = ExecutorEnv::from_env()
            .context("`yarn-am executor` runs in containers the AM starts")?;
        Ok(Self {
            url: env.driver_url,
            key,
            tls_pin,
            id: env.id,
            container_id: env.container,
            host: var("NM_HOST")?,
            cpus: env.cores,
            log_dir: var("LOG_DIRS")?
                .split(',')
                .next()
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .context("LOG_DIRS is empty")?,
            am_lost_after: AM_LOST_AFTER,
            am_gone_after: AM_GONE_AFTER,
            staging_dir: StagingFolder::from_env()?,
            am_restart_wait: AM_RESTART_WAIT,
            request_timeout: REQUEST_TIMEOUT,
            idle_poll: IDLE_POLL,
        })
    }
}

/// Reads this executor's key and the AM's certificate fingerprint from the container's token
/// file, then rewrites the file without
/// any yarn-am secret (atomically, mode 0600), so the tasks, which inherit
/// `HADOOP_TOKEN_FILE_LOCATION` and the working directory, find their other tokens there but
/// not the key. Fails closed: an executor that cannot hide its key from its tasks does not run.
pub(super) fn take_key(token_file: &Path) -> anyhow::Result<([u8; 32], Fingerprint)> {
    let creds =
        Credentials::read_file(token_file).context("reading this container's token file")?;
    let key = creds
        .secret(credentials::EXECUTOR_KEY_ALIAS)
        .with_context(|| {
            format!(
                "{} has no secret {:?}: was this executor started by its AM?",
                token_file.display(),
                credentials::EXECUTOR_KEY_ALIAS
            )
        })?
        .try_into()
        .with_context(|| {
            format!(
                "the secret {:?} is not 32 bytes",
                credentials::EXECUTOR_KEY_ALIAS
            )
        })?;
    let pin = creds
        .secret(tls::PIN_ALIAS)
        .with_context(|| {
            format!(
                "{} has no secret {:?}: was this executor started by an AM that serves TLS?",
                token_file.display(),
                tls::PIN_ALIAS
            )
        })
        .and_then(|b| Ok(Fingerprint::from_bytes(b)?))?;
    write_task_tokens(token_file, &for_tasks(&creds))?;
    Ok((key, pin))
}

/// The credentials tasks may have: what any container of the app may have (no yarn-am
/// secret, no AMRM or RM token), applied again here so that an executor started by an
/// older AM still leaves its tasks no more.
fn for_tasks(creds: &Credentials) -> Credentials {
    credentials::for_containers(creds)
}

/// Replaces `path` with `creds` (written beside it, mode 0600, then renamed over it).
fn write_task_tokens(path: &Path, creds: &Credentials) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("yarn-am-tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&creds.encode(Format::Writable))?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // The NodeManager writes the file through Hadoop's checksummed local file system,
        // which leaves `.<name>.crc` beside it; a Java task reading the new file through that
        // file system would fail on the old checksum, and reads it unchecked without one.
        if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
            let crc = dir.join(format!(".{}.crc", name.to_string_lossy()));
            match std::fs::remove_file(crc) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    };
    write().with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!(
            "rewriting {} without this executor's key (tasks must not read it)",
            path.display()
        )
    })
}

/// Makes this process non-dumpable: processes of the same user (our tasks) can then neither
/// ptrace it nor read its memory or environment through `/proc`. Tasks get the default back
/// (exec resets it). Best effort: a kernel that refuses leaves the README's caveat.
pub(super) fn not_dumpable() {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's dumpable flag.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        warn!(
            "could not make the executor non-dumpable: {}",
            std::io::Error::last_os_error()
        );
    }
}
