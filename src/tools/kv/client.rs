//! How `yarn-am kv` reaches the store: where the AM is, which credential to show, and
//! finding the AM again when its address stops answering (a next AM attempt).
//!
//! From outside (an application id given): the driver's secret file for the Bearer secret
//! and the pin, the RM's report for the address (`amRPCAddress`, which every attempt
//! registers). Inside a container of the app: the container's KV key and the pin from its
//! token file (never from the environment or the command line), its id from `CONTAINER_ID`,
//! the address from the driver URL the AM put in the environment
//! ([`yarn_am_wire::executor_env`]), and the next attempt's address from the staging
//! folder as the executor finds it (`crate::cluster::next_am`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use reqwest::{Method, StatusCode};
use yarn_client::credentials::Credentials;
use yarn_client::rest::RmRest;

use crate::cluster::driver_client::pinned_http_client;
use crate::cluster::next_am::{NextAm, StagingFolder};
use yarn_am_wire::driver_api::ApiError;
use yarn_am_wire::driver_secret::DriverSecret;
use yarn_am_wire::executor_env::{self, process_var};
use yarn_am_wire::kv::{auth_header, KV_AUTH_HEADER, KV_KEY_ALIAS, KV_PATH, KV_PIN_ALIAS};
use yarn_am_wire::tls::Fingerprint;

/// How long a request keeps looking for an AM that does not answer (an AM restart takes a
/// few seconds; YARN starts the next attempt after the RM notices the loss).
const REACH_LIMIT: Duration = Duration::from_secs(120);
/// Any one request, besides a long poll's own wait.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the store answered: the body of a 2xx, or "absent" (404) with its message.
pub enum Reply {
    Ok(Vec<u8>),
    Absent(String),
}

enum Access {
    Driver { secret: String },
    Container { header: String },
}

enum Finder {
    Rm { rest: RmRest, app: String },
    Staging(Option<StagingFolder>),
}

pub struct KvClient {
    http: reqwest::Client,
    url: Option<String>,
    access: Access,
    finder: Finder,
}

impl KvClient {
    /// From outside, as the driver of `app`.
    pub fn outside(app: &str, secret_dir: Option<PathBuf>, rest: RmRest) -> anyhow::Result<Self> {
        let dir = secret_dir.unwrap_or_else(yarn_am_wire::driver_secret::default_dir);
        let path = yarn_am_wire::driver_secret::file_of(&dir, app);
        let secret = DriverSecret::read(&path)?;
        let pin = secret.tls_pin.with_context(|| {
            format!(
                "{} has no certificate pin (written by an old yarn-am)",
                path.display()
            )
        })?;
        Ok(Self {
            http: client(pin)?,
            url: None,
            access: Access::Driver {
                secret: secret.secret,
            },
            finder: Finder::Rm {
                rest,
                app: app.to_string(),
            },
        })
    }

    /// Inside a container of the app, with its own KV key.
    pub fn in_container() -> anyhow::Result<Self> {
        let outside = "not in a container of a yarn-am application: give the application id \
                       (`yarn-am kv get APP KEY`)";
        let creds = Credentials::from_env().context(outside)?;
        let key: [u8; 32] = creds
            .secret(KV_KEY_ALIAS)
            .and_then(|k| k.try_into().ok())
            .with_context(|| {
                format!("the container's token file has no {KV_KEY_ALIAS}: {outside}")
            })?;
        let pin = creds
            .secret(KV_PIN_ALIAS)
            .with_context(|| format!("the container's token file has no {KV_PIN_ALIAS}"))
            .and_then(|b| Ok(Fingerprint::from_bytes(b)?))?;
        let container = process_var("CONTAINER_ID")
            .or_else(|| process_var(executor_env::CONTAINER_ID))
            .with_context(|| {
                format!(
                    "neither CONTAINER_ID nor {} is set",
                    executor_env::CONTAINER_ID
                )
            })?;
        let url = executor_env::driver_url(&process_var)?;
        Ok(Self {
            http: client(pin)?,
            url: Some(url),
            access: Access::Container {
                header: auth_header(&container, &key),
            },
            finder: Finder::Staging(StagingFolder::from_env()?),
        })
    }

    /// One request to `/v1/kv` + `path_and_query`; `wait` is a long poll's own wait. An AM
    /// that does not answer is looked for again for up to [`REACH_LIMIT`].
    pub async fn call(
        &mut self,
        method: Method,
        path_and_query: &str,
        body: Option<String>,
        wait: Duration,
    ) -> anyhow::Result<Reply> {
        let give_up = tokio::time::Instant::now() + REACH_LIMIT;
        loop {
            let url = match &self.url {
                Some(u) => u.clone(),
                None => match self.relocate().await? {
                    Some(u) => u,
                    // Between two attempts (the RM starts the next one): ask again.
                    None if tokio::time::Instant::now() < give_up => {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                    None => bail!(
                        "no ApplicationMaster answered within {} s",
                        REACH_LIMIT.as_secs()
                    ),
                },
            };
            let mut req = self
                .http
                .request(method.clone(), format!("{url}{KV_PATH}{path_and_query}"))
                .timeout(REQUEST_TIMEOUT + wait);
            req = match &self.access {
                Access::Driver { secret } => req.bearer_auth(secret),
                Access::Container { header } => req.header(KV_AUTH_HEADER, header),
            };
            if let Some(b) = &body {
                req = req.body(b.clone());
            }
            match req.send().await {
                Ok(resp) => return answer(resp).await,
                // Nobody listens (the AM is gone), or, for a read, the connection broke
                // under it (the AM died mid-request): look for the AM again.
                Err(e)
                    if (e.is_connect() || (method == Method::GET && !e.is_timeout()))
                        && tokio::time::Instant::now() < give_up =>
                {
                    tracing::info!(%url, "the ApplicationMaster does not answer; looking for it again");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    self.url = None;
                    if let Finder::Staging(_) = self.finder {
                        // The container's own URL until a next attempt publishes another.
                        self.url = Some(url.clone());
                        if let Some(moved) = self.next_in_staging(&url).await? {
                            self.url = Some(moved);
                        }
                    }
                }
                Err(e) => {
                    if let Some(t) = yarn_am_wire::tls::pin_error(&e) {
                        bail!("{t}");
                    }
                    return Err(e).with_context(|| format!("calling the key-value store at {url}"));
                }
            }
        }
    }

    /// The driver API's address from the RM's report (outside); `None` while the app has
    /// no AM registered (an attempt starting), an error once it has ended.
    async fn relocate(&mut self) -> anyhow::Result<Option<String>> {
        let Finder::Rm { rest, app } = &self.finder else {
            bail!("no address for the ApplicationMaster");
        };
        let r = rest
            .app(app)
            .await
            .with_context(|| format!("asking the RM about {app}"))?;
        if r.is_final() {
            bail!("{app} has ended ({} / {})", r.state, r.final_status);
        }
        match r
            .am_rpc_address
            .filter(|a| r.state == "RUNNING" && !a.is_empty() && a != "N/A")
        {
            Some(addr) => {
                let url = format!("https://{addr}");
                self.url = Some(url.clone());
                Ok(Some(url))
            }
            None => {
                tracing::info!(%app, state = %r.state, "no ApplicationMaster address yet");
                Ok(None)
            }
        }
    }

    /// A next AM attempt's address from the staging folder (inside a container).
    async fn next_in_staging(&self, current: &str) -> anyhow::Result<Option<String>> {
        let Finder::Staging(Some(folder)) = &self.finder else {
            return Ok(None);
        };
        match folder.next_am(current).await {
            NextAm::Moved(url) => Ok(Some(url)),
            NextAm::Unchanged => Ok(None),
            NextAm::AppOver => bail!("the application has ended (its staging folder is gone)"),
        }
    }
}

fn client(pin: Fingerprint) -> anyhow::Result<reqwest::Client> {
    Ok(pinned_http_client(pin)
        .connect_timeout(Duration::from_secs(10))
        .build()?)
}

async fn answer(resp: reqwest::Response) -> anyhow::Result<Reply> {
    let status = resp.status();
    let body = resp
        .bytes()
        .await
        .context("reading the key-value store's answer")?;
    if status.is_success() {
        return Ok(Reply::Ok(body.to_vec()));
    }
    let message = serde_json::from_slice::<ApiError>(&body)
        .map(|e| e.error)
        .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned());
    match status {
        StatusCode::NOT_FOUND => Ok(Reply::Absent(message)),
        _ => bail!("HTTP {}: {message}", status.as_u16()),
    }
}

/// A key as one path segment: every byte but `A-Z a-z 0-9 - . _ ~` percent-encoded (`/`
/// too, so that no URL library turns `a/../b` into `b`).
pub fn encode_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
