//! The contract carried in an application's credentials: which tokens the submitter puts
//! there for the AM (by kind), the aliases of yarn-am's own secrets, and how a process in a
//! container reads its authentication back from its token file.
//!
//! YARN hands every container a token file (`HADOOP_TOKEN_FILE_LOCATION`); it is the only way
//! a secret reaches the AM and the executors (never an environment variable or a command
//! line). The submitter writes (`crate::submit`), the AM re-issues to its executors
//! (`crate::am::launcher`, `crate::am::token_refresh`), the executor strips yarn-am's own
//! entries before its tasks see the file (`crate::executor`).

use yarn_client::credentials::{Credentials, AMRM_TOKEN_KIND};
use yarn_client::http_auth::HttpAuth;

/// Kind of the NameNode's delegation tokens (what HDFS RPC clients, the NMs, accept).
pub const HDFS_TOKEN_KIND: &str = "HDFS_DELEGATION_TOKEN";
/// Kind of the ResourceManager's delegation tokens.
pub const RM_TOKEN_KIND: &str = "RM_DELEGATION_TOKEN";
/// Alias of the RM token in the application's credentials (its service is empty).
pub const RM_TOKEN_ALIAS: &str = "yarn-am.rm-delegation-token";

/// Alias of the master secret in the AM container's credentials.
pub const MASTER_SECRET_ALIAS: &str = "yarn-am.master-secret";
/// Alias of an executor's own key in its container's credentials.
pub const EXECUTOR_KEY_ALIAS: &str = "yarn-am.executor-key";
/// Every yarn-am credential's alias starts so: none of them is for tasks.
pub const ALIAS_PREFIX: &str = "yarn-am.";
/// Alias prefix of the auxiliary-service data (`submit --service-data`) in the AM
/// container's credentials: the AM puts each into every executor's launch context, never
/// into a container's credentials (the `yarn-am.` prefix keeps it from them).
pub const SERVICE_DATA_ALIAS_PREFIX: &str = "yarn-am.service-data.";

/// The alias of auxiliary service `name`'s data.
pub fn service_data_alias(name: &str) -> String {
    format!("{SERVICE_DATA_ALIAS_PREFIX}{name}")
}

/// Every auxiliary service's data in `creds`, by service name.
pub fn service_data(creds: &Credentials) -> std::collections::BTreeMap<String, Vec<u8>> {
    creds
        .secrets
        .iter()
        .filter_map(|(alias, bytes)| {
            alias
                .strip_prefix(SERVICE_DATA_ALIAS_PREFIX)
                .map(|name| (name.to_string(), bytes.clone()))
        })
        .collect()
}

/// Name of the keytab in the AM container (never shipped to executors).
pub const KEYTAB_NAME: &str = "yarn-am.keytab";

/// Token kinds only the AM may hold (audit L2): they act on YARN as the user. The AMRM
/// token is the AM's identity to the scheduler; the RM delegation token lets its holder
/// submit and kill applications through the RM's REST API for the application's whole life.
/// Executors and the tasks they run use HDFS (and whatever other service tokens the user
/// shipped), never the RM.
pub const AM_ONLY_TOKEN_KINDS: [&str; 2] = [AMRM_TOKEN_KIND, RM_TOKEN_KIND];

/// Whether a credential entry is the AM's alone: yarn-am's own entries (their alias) and
/// the YARN control tokens (their kind, whatever alias the submitter or the RM gave them).
fn am_only(alias: &str, kind: Option<&str>) -> bool {
    alias.starts_with(ALIAS_PREFIX) || kind.is_some_and(|k| AM_ONLY_TOKEN_KINDS.contains(&k))
}

/// The part of the AM's credentials a container it launches (an executor) and the tasks in
/// it may have: every token but the [`AM_ONLY_TOKEN_KINDS`] and yarn-am's own entries, and
/// every secret but yarn-am's (an executor gets its own key added by the launcher, and
/// strips that before its tasks see the file). One rule for the launcher and the executor,
/// so the task file holds no more than the executor's.
pub fn for_containers(creds: &Credentials) -> Credentials {
    Credentials {
        tokens: creds
            .tokens
            .iter()
            .filter(|(alias, t)| !am_only(alias, Some(&t.kind)))
            .cloned()
            .collect(),
        secrets: creds
            .secrets
            .iter()
            .filter(|(alias, _)| !am_only(alias, None))
            .cloned()
            .collect(),
    }
}

/// In the AM: how to authenticate to WebHDFS and to the RM's REST API, from the tokens of
/// its container. `None` means no token of that kind (an insecure cluster): `user.name`.
#[derive(Debug, Clone, Default)]
pub struct AmAuth {
    pub webhdfs: Option<HttpAuth>,
    pub rm: Option<HttpAuth>,
}

impl AmAuth {
    pub fn from_credentials(creds: &Credentials) -> Self {
        let delegation = |kind| {
            creds.find_kind(kind).map(|t| HttpAuth::Delegation {
                token: t.to_url_string(),
            })
        };
        Self {
            webhdfs: delegation(HDFS_TOKEN_KIND),
            rm: delegation(RM_TOKEN_KIND),
        }
    }

    /// From the container's token file; nothing when it cannot be read.
    pub fn from_container() -> Self {
        Credentials::from_env()
            .map(|c| Self::from_credentials(&c))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yarn_client::token::Token;

    #[test]
    fn the_am_uses_the_tokens_it_was_given() {
        let token = |kind: &str| Token {
            identifier: vec![1, 2],
            password: vec![3],
            kind: kind.into(),
            service: "rm:8020".into(),
        };
        let creds = Credentials {
            tokens: vec![
                ("a".into(), token("YARN_AM_RM_TOKEN")),
                ("rm:8020".into(), token(HDFS_TOKEN_KIND)),
            ],
            secrets: vec![],
        };
        let auth = AmAuth::from_credentials(&creds);
        match auth.webhdfs {
            Some(HttpAuth::Delegation { token: t }) => {
                assert_eq!(Token::from_url_string(&t).unwrap(), token(HDFS_TOKEN_KIND))
            }
            other => panic!("{other:?}"),
        }
        assert!(auth.rm.is_none());
    }
}
