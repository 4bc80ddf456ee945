//! A Hadoop security token (`TokenProto`): what the token file holds, what SASL
//! authenticates with, and what the RM hands out (AMRM and NM tokens).

use crate::proto::common::TokenProto;

/// A Hadoop security token. Identifier and password are opaque bytes to us; SASL uses them.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub identifier: Vec<u8>,
    pub password: Vec<u8>,
    pub kind: String,
    pub service: String,
}

impl std::fmt::Debug for Token {
    /// Never prints the password: tokens end up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("kind", &self.kind)
            .field("service", &self.service)
            .field("identifier_len", &self.identifier.len())
            .field("password_len", &self.password.len())
            .finish()
    }
}

impl From<TokenProto> for Token {
    fn from(t: TokenProto) -> Self {
        Self {
            identifier: t.identifier,
            password: t.password,
            kind: t.kind,
            service: t.service,
        }
    }
}

impl From<&Token> for TokenProto {
    fn from(t: &Token) -> Self {
        TokenProto {
            identifier: t.identifier.clone(),
            password: t.password.clone(),
            kind: t.kind.clone(),
            service: t.service.clone(),
        }
    }
}
