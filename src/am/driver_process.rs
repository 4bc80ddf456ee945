//! A driver the AM runs in its own container (`submit --driver-command`): Spark's cluster
//! deploy mode, or any program that drives the app through the driver API from beside the AM.
//!
//! Why in the AM's container and not in one of its own: the driver then starts with the AM
//! (no second allocation round trip before the app can work), lives exactly as long as the
//! AM, reaches the driver API on the same host, and its logs are in the AM container's log
//! folder, as Spark's YARN cluster mode does it. Its memory is part of the AM container's
//! (`submit --am-memory`).
//!
//! The driver gets, in its environment ([`DriverEnv`]): the driver API's URL, the path of its
//! secret file (a 0600 file in the container's working directory in the format of
//! `~/.yarn-am/<app>.secret`: the secret and the certificate's pin; the secret itself is in
//! no environment), the app's id, and a path where it may write a short message for the
//! app's diagnostics. Its stdout and stderr are `driver.stdout` and `driver.stderr` in the
//! container's log folder.
//!
//! Its exit ends the app: 0 SUCCEEDED, anything else FAILED ([`finish_request`]), with the
//! message it left. A driver that ends the app earlier with `POST /v1/finish` is stopped
//! (SIGTERM, then SIGKILL after [`STOP_GRACE`]) when the AM finishes.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use anyhow::Context;
use tracing::{info, warn};

use super::container_env::ContainerEnv;
use yarn_am_wire::driver_api::{FinalOutcome, FinishRequest};
use yarn_am_wire::driver_process::{DriverEnv, DIAGNOSTICS_FILE, SECRET_FILE};
use yarn_am_wire::driver_secret::DriverSecret;
use yarn_am_wire::tls::Fingerprint;

/// At most this much of the driver's message goes into the diagnostics.
const DIAGNOSTICS_LIMIT: usize = 4096;
/// How long a driver still running when the AM finishes gets after SIGTERM.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// A running driver.
pub struct DriverProcess {
    child: tokio::process::Child,
    diagnostics: PathBuf,
}

impl DriverProcess {
    /// Starts `bash <command_file>` in the working directory, after writing its secret file.
    pub fn spawn(
        command_file: &str,
        env: &ContainerEnv,
        api_url: &str,
        secret: &str,
        pin: Fingerprint,
    ) -> anyhow::Result<Self> {
        let cwd = std::env::current_dir().context("the AM's working directory")?;
        let secret_path = cwd.join(SECRET_FILE);
        write_private(&secret_path, &DriverSecret::render(secret, pin))?;
        let diagnostics = cwd.join(DIAGNOSTICS_FILE);
        let _ = std::fs::remove_file(&diagnostics);
        let log = |name: &str| {
            let path = env.log_dir.join(name);
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))
        };
        let driver_env = DriverEnv {
            api_url: api_url.to_string(),
            secret_file: secret_path,
            app_id: env.app_id.clone(),
            diagnostics: diagnostics.clone(),
            log_dir: env.log_dir.clone(),
        };
        let child = tokio::process::Command::new("bash")
            .arg(command_file)
            .envs(driver_env.to_env())
            .stdin(Stdio::null())
            .stdout(log("driver.stdout")?)
            .stderr(log("driver.stderr")?)
            .spawn()
            .with_context(|| format!("starting the driver command ({command_file})"))?;
        info!(pid = child.id(), "driver started");
        Ok(Self { child, diagnostics })
    }

    /// Waits for the driver to exit (cancel-safe: a `select!` may drop it and call again).
    pub async fn exited(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// The driver's message, if it left one (bounded, trimmed).
    pub fn message(&self) -> Option<String> {
        read_bounded(&self.diagnostics)
    }

    /// Stops a driver that is still running: SIGTERM, then SIGKILL after `grace`.
    pub async fn stop(mut self, grace: Duration) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on our own child's pid, which we have not reaped yet.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => info!(?status, "driver stopped"),
            Err(_) => {
                warn!("the driver did not stop within {grace:?} of SIGTERM: killing it");
                let _ = self.child.kill().await;
            }
        }
    }
}

/// How the app ends when its driver exits with `status`, leaving `message`.
pub fn finish_request(status: ExitStatus, message: Option<&str>) -> FinishRequest {
    let (outcome, what) = match (status.code(), status.signal()) {
        (Some(0), _) => (FinalOutcome::Succeeded, "the driver exited 0".to_string()),
        (Some(code), _) => (
            FinalOutcome::Failed,
            format!("the driver exited with code {code}"),
        ),
        (None, Some(sig)) => (
            FinalOutcome::Failed,
            format!("the driver was ended by signal {sig}"),
        ),
        (None, None) => (
            FinalOutcome::Failed,
            "the driver ended without an exit code".to_string(),
        ),
    };
    let diagnostics = match message.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => format!("{what}: {m}"),
        None => format!("{what} (its log: driver.stderr in the AM container's logs)"),
    };
    FinishRequest {
        status: outcome,
        diagnostics,
    }
}

/// Creates `path` readable by its owner only (replacing an earlier attempt's file).
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// At most [`DIAGNOSTICS_LIMIT`] bytes of the file, as text; `None` when absent or blank.
fn read_bounded(path: &Path) -> Option<String> {
    let f = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    f.take(DIAGNOSTICS_LIMIT as u64)
        .read_to_end(&mut buf)
        .ok()?;
    let text = String::from_utf8_lossy(&buf).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn exit_zero_succeeds_and_anything_else_fails_with_the_drivers_words() {
        let ok = finish_request(exit(0), None);
        assert_eq!(ok.status, FinalOutcome::Succeeded);
        assert!(ok.diagnostics.starts_with("the driver exited 0"), "{ok:?}");
        let failed = finish_request(exit(3), Some("  User class threw: boom\n"));
        assert_eq!(failed.status, FinalOutcome::Failed);
        assert_eq!(
            failed.diagnostics,
            "the driver exited with code 3: User class threw: boom"
        );
        let blank = finish_request(exit(1), Some(" \n"));
        assert!(blank.diagnostics.contains("driver.stderr"), "{blank:?}");
        let killed = finish_request(ExitStatus::from_raw(libc::SIGKILL), None);
        assert_eq!(killed.status, FinalOutcome::Failed);
        assert!(killed.diagnostics.contains("signal 9"), "{killed:?}");
    }

    #[test]
    fn the_message_is_bounded_and_the_secret_file_private() {
        let dir = std::env::temp_dir().join(format!("yarn-am-driver-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let msg = dir.join("msg");
        std::fs::write(&msg, "x".repeat(10_000)).unwrap();
        assert_eq!(read_bounded(&msg).unwrap().len(), DIAGNOSTICS_LIMIT);
        assert_eq!(read_bounded(&dir.join("absent")), None);
        let secret = dir.join("s");
        write_private(&secret, "old").unwrap();
        write_private(&secret, "new").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&secret).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
