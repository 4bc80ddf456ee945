//! The AM's delegation tokens while the application runs.
//!
//! [`SharedTokens`] holds the AM's credentials (what the NodeManager gave it) for the parts
//! of the AM that use them later: the launcher (executors get the tokens minus the AMRM
//! token) and the staging removal at the end (WebHDFS with the HDFS token).
//!
//! An HDFS delegation token dies at its maximum lifetime
//! (`dfs.namenode.delegation.token.max-lifetime`, 7 days by default) however often the RM
//! renews it. With `submit --principal/--keytab` the AM has the keytab ([`TokenRefresh`]):
//! at 75% of the current token's lifetime it logs in again and fetches a new one, which new
//! executors and the final staging removal then use (Spark's `HadoopDelegationTokenManager`
//! does the same). Running executors keep the token file they started with: they do not use
//! HDFS themselves.

use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context;
use tracing::{info, warn};
use yarn_client::credentials::Credentials;
use yarn_client::gssapi::{short_name, Credential, CredentialSource};
use yarn_client::http_auth::HttpAuth;
use yarn_client::token::Token;
use yarn_client::webhdfs::WebHdfs;

use yarn_am_wire::credentials::{for_containers, AmAuth, HDFS_TOKEN_KIND};
use yarn_am_wire::spec::TokenRefresh;

/// How long a refresh may take; a failed one is tried again after [`RETRY`].
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);
const RETRY: Duration = Duration::from_secs(10);
/// A token's life used before it is replaced (Spark renews at 75% too).
const REFRESH_FRACTION: f64 = 0.75;
/// Refresh at least this often: a fetched token is renewed by nobody, so it also dies at
/// its renew interval (`dfs.namenode.delegation.token.renew-interval`, 24 h by default).
const MAX_REFRESH_INTERVAL: Duration = Duration::from_secs(18 * 3600);

/// What executors start from: the AM's credentials minus what is the AM's alone, the AMRM
/// and RM delegation tokens and every yarn-am entry (each executor gets only its own key,
/// derived from the master secret). YARN's distributed shell and Spark also keep the AMRM
/// token to the AM. The rule is [`for_containers`].
pub fn executor_base(creds: &Credentials) -> Credentials {
    for_containers(creds)
}

/// The AM's credentials, replaceable while it runs.
#[derive(Debug, Clone)]
pub struct SharedTokens(Arc<RwLock<Credentials>>);

impl SharedTokens {
    pub fn new(creds: Credentials) -> Self {
        Self(Arc::new(RwLock::new(creds)))
    }

    fn read(&self) -> Credentials {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// What a new executor's credentials start from (the launcher adds its own key): the
    /// AM's current tokens, e.g. HDFS delegation tokens, without the AMRM and RM tokens
    /// (only the AM may hold them) and without any yarn-am secret.
    pub fn executor_tokens(&self) -> Credentials {
        executor_base(&self.read())
    }

    /// WebHDFS with the current HDFS delegation token, if there is one.
    pub fn webhdfs_auth(&self) -> Option<HttpAuth> {
        AmAuth::from_credentials(&self.read()).webhdfs
    }

    fn hdfs_token(&self) -> Option<Token> {
        self.read().find_kind(HDFS_TOKEN_KIND).cloned()
    }

    /// Puts `token` in place of the HDFS token of the same service (or adds it).
    fn replace_hdfs(&self, token: Token) {
        let mut creds = self.0.write().unwrap_or_else(|e| e.into_inner());
        match creds
            .tokens
            .iter_mut()
            .find(|(_, t)| t.kind == HDFS_TOKEN_KIND && t.service == token.service)
        {
            Some((_, t)) => *t = token,
            None => creds.tokens.push((token.service.clone(), token)),
        }
    }
}

/// How long after `now_ms` to replace a token issued at `issue_ms` that dies at `max_ms`.
pub fn refresh_delay(issue_ms: u64, max_ms: u64, now_ms: u64) -> Duration {
    let life = max_ms.saturating_sub(issue_ms);
    let due = issue_ms + (life as f64 * REFRESH_FRACTION) as u64;
    Duration::from_millis(due.saturating_sub(now_ms)).min(MAX_REFRESH_INTERVAL)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Logs in from the keytab and fetches a new HDFS delegation token.
async fn fetch(refresh: &TokenRefresh) -> anyhow::Result<Token> {
    let source = CredentialSource::Keytab {
        principal: refresh.principal.clone(),
        keytab: Path::new(&refresh.keytab)
            .canonicalize()
            .with_context(|| format!("the keytab {} in the AM's folder", refresh.keytab))?,
    };
    let credential = tokio::task::spawn_blocking(move || Credential::acquire(&source))
        .await
        .context("the Kerberos login thread failed")??;
    let user = short_name(credential.principal()).to_string();
    let client = WebHdfs::new(&refresh.webhdfs, &user, FETCH_TIMEOUT)?
        .with_auth(HttpAuth::kerberos(Arc::new(credential)));
    let url = client
        .delegation_token(&refresh.renewer, HDFS_TOKEN_KIND)
        .await?;
    Ok(Token::from_url_string(&url)?)
}

/// Keeps the HDFS delegation token of `tokens` fresh until the task is dropped.
pub fn spawn(refresh: TokenRefresh, tokens: SharedTokens) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let delay = match tokens.hdfs_token().and_then(|t| t.delegation_dates()) {
                Some((issue, max)) => refresh_delay(issue, max, now_ms()),
                None => {
                    warn!("no HDFS delegation token with readable dates; not refreshing");
                    return;
                }
            };
            info!(in_s = delay.as_secs(), "next HDFS delegation token refresh");
            tokio::time::sleep(delay).await;
            match fetch(&refresh).await {
                Ok(token) => {
                    let max = token.delegation_dates().map(|(_, m)| m);
                    tokens.replace_hdfs(token);
                    info!(principal = %refresh.principal, ?max, "HDFS delegation token refreshed from the keytab");
                }
                Err(e) => {
                    warn!(
                        "refreshing the HDFS delegation token failed (again in {}s): {e:#}",
                        RETRY.as_secs()
                    );
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use yarn_am_wire::credentials::{RM_TOKEN_ALIAS, RM_TOKEN_KIND};
    use yarn_client::credentials::AMRM_TOKEN_KIND;

    #[test]
    fn refresh_comes_at_three_quarters_of_the_life() {
        // A 100 s token issued at t = 1000 s: replaced at 1075 s.
        assert_eq!(
            refresh_delay(1_000_000, 1_100_000, 1_010_000),
            Duration::from_secs(65)
        );
        // Already past due: at once.
        assert_eq!(
            refresh_delay(1_000_000, 1_100_000, 1_090_000),
            Duration::ZERO
        );
        // A 7-day token: no later than the renew-interval bound.
        let week = 7 * 24 * 3600 * 1000;
        assert_eq!(refresh_delay(0, week, 0), MAX_REFRESH_INTERVAL);
    }

    #[test]
    fn executors_get_no_amrm_or_rm_token_and_refreshes_replace_in_place() {
        let token = |kind: &str, service: &str, pw: u8| Token {
            identifier: vec![0],
            password: vec![pw],
            kind: kind.into(),
            service: service.into(),
        };
        let shared = SharedTokens::new(Credentials {
            tokens: vec![
                ("amrm".into(), token(AMRM_TOKEN_KIND, "rm:8030", 1)),
                (RM_TOKEN_ALIAS.into(), token(RM_TOKEN_KIND, "", 3)),
                ("nn".into(), token(HDFS_TOKEN_KIND, "nn:8020", 2)),
            ],
            secrets: vec![],
        });
        let file = shared.executor_tokens();
        assert_eq!(file.tokens.len(), 1);
        assert_eq!(file.tokens[0].1.kind, HDFS_TOKEN_KIND);

        shared.replace_hdfs(token(HDFS_TOKEN_KIND, "nn:8020", 9));
        let file = shared.executor_tokens();
        assert_eq!(file.tokens.len(), 1);
        assert_eq!(file.tokens[0].1.password, vec![9]);

        let only_amrm = SharedTokens::new(Credentials {
            tokens: vec![("amrm".into(), token(AMRM_TOKEN_KIND, "rm:8030", 1))],
            secrets: vec![],
        });
        assert!(only_amrm.executor_tokens().tokens.is_empty());
        assert!(only_amrm.webhdfs_auth().is_none());
    }
}
