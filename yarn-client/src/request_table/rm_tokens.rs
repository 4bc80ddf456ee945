//! Tokens the RM hands the AM during an attempt.
//!
//! * The AMRMToken authenticates the AM to the scheduler port. The RM rolls its master key
//!   (daily by default) and then sends a fresh token in allocate responses; connections
//!   already open keep working, but every *new* connection (reconnect, failover) must use
//!   the newest token, so we hold exactly one: the latest.
//! * NMTokens authenticate the AM to NodeManagers. The RM sends one for a node only the
//!   first time it allocates there in this attempt (or after its NM-token key rolls), so
//!   losing one means never being able to start containers on that node: they are cached
//!   for the whole attempt, keyed by NodeId `host:port`, newest replacing older.

use std::collections::HashMap;

use tracing::{debug, info};

use crate::token::Token;

/// The current AMRMToken.
#[derive(Debug, Clone, Default)]
pub struct AmrmToken {
    current: Option<Token>,
}

impl AmrmToken {
    pub fn new(initial: Option<Token>) -> Self {
        Self { current: initial }
    }

    /// Adopt a token from an allocate response. Returns true when it differs from the one
    /// held, i.e. when new connections must switch to it.
    pub fn update(&mut self, token: Token) -> bool {
        if self.current.as_ref() == Some(&token) {
            return false;
        }
        info!(kind = %token.kind, "AMRMToken rolled over; new connections will use it");
        self.current = Some(token);
        true
    }

    pub fn current(&self) -> Option<&Token> {
        self.current.as_ref()
    }
}

/// NMTokens by NodeId (`host:port`).
#[derive(Debug, Clone, Default)]
pub struct NmTokenCache {
    tokens: HashMap<String, Token>,
}

impl NmTokenCache {
    /// Store a token for a node, replacing any older one.
    pub fn insert(&mut self, node_id: impl Into<String>, token: Token) {
        let node_id = node_id.into();
        if self.tokens.insert(node_id.clone(), token).is_some() {
            debug!(node_id, "replaced NMToken");
        } else {
            debug!(node_id, "received NMToken");
        }
    }

    pub fn extend(&mut self, tokens: impl IntoIterator<Item = (String, Token)>) {
        for (node, token) in tokens {
            self.insert(node, token);
        }
    }

    pub fn get(&self, node_id: &str) -> Option<&Token> {
        self.tokens.get(node_id)
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request_table::tests::token;

    #[test]
    fn amrm_token_is_replaced_by_a_new_one() {
        let mut t = AmrmToken::new(Some(token(1)));
        assert!(!t.update(token(1)), "same token is not a roll-over");
        assert!(t.update(token(2)));
        assert_eq!(t.current(), Some(&token(2)));
    }

    #[test]
    fn nm_tokens_are_kept_and_replaced_per_node() {
        let mut c = NmTokenCache::default();
        c.insert("h1:8041", token(1));
        c.extend([("h2:8041".to_string(), token(2))]);
        c.insert("h1:8041", token(3));
        assert_eq!(c.len(), 2);
        assert_eq!(c.get("h1:8041"), Some(&token(3)));
        assert_eq!(c.get("h2:8041"), Some(&token(2)));
        assert_eq!(c.get("h3:8041"), None);
    }
}
