//! Application ACLs: who besides the owner (and YARN's admins) may view an application and
//! who may modify (kill, move) it. YARN takes them from the AM's launch context at
//! submission, and each NodeManager from the first launch context of the app it sees, which
//! guards reading the app's container logs there: so executors' launch contexts carry them
//! too. They are enforced only where `yarn.acl.enable` is true.

use serde::{Deserialize, Serialize};

use crate::proto::yarn::{ApplicationAccessTypeProto, ApplicationAclMapProto};

/// One ACL in YARN's `AccessControlList` syntax: comma-separated users, then a space and
/// comma-separated groups (`"alice,bob ops"`, `" ops"` for groups only), or `*` for all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppAcls {
    /// VIEW_APP: may see the app's report, its tracking page and its logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
    /// MODIFY_APP: may kill the app, move it between queues, change its priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modify: Option<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AclError {
    #[error("ACL {0:?} has a control character: YARN's ACL is users, a space, then groups")]
    ControlCharacter(String),
    #[error("ACL {0:?} is empty: give users (a,b), groups after a space (\" ops\"), or *")]
    Empty(String),
}

/// Checks an ACL string before it reaches the RM, whose parser would take any text (a stray
/// newline would silently grant nobody).
pub fn check_acl(acl: &str) -> Result<(), AclError> {
    if acl.chars().any(char::is_control) {
        return Err(AclError::ControlCharacter(acl.to_string()));
    }
    if acl.trim().is_empty() {
        return Err(AclError::Empty(acl.to_string()));
    }
    Ok(())
}

impl AppAcls {
    pub fn is_empty(&self) -> bool {
        self.view.is_none() && self.modify.is_none()
    }

    fn entries(&self) -> impl Iterator<Item = (&'static str, ApplicationAccessTypeProto, &str)> {
        [
            (
                "VIEW_APP",
                ApplicationAccessTypeProto::AppaccessViewApp,
                &self.view,
            ),
            (
                "MODIFY_APP",
                ApplicationAccessTypeProto::AppaccessModifyApp,
                &self.modify,
            ),
        ]
        .into_iter()
        .filter_map(|(name, kind, acl)| acl.as_deref().map(|a| (name, kind, a)))
    }

    /// The RM REST submission's `application-acls` (a JAXB entry map keyed by access type).
    pub fn rest_json(&self) -> serde_json::Value {
        let entry: Vec<_> = self
            .entries()
            .map(|(name, _, acl)| serde_json::json!({"key": name, "value": acl}))
            .collect();
        serde_json::json!({ "entry": entry })
    }

    /// The launch context's `application_ACLs`.
    pub fn to_proto(&self) -> Vec<ApplicationAclMapProto> {
        self.entries()
            .map(|(_, kind, acl)| ApplicationAclMapProto {
                access_type: Some(kind as i32),
                acl: Some(acl.to_string()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn acls_as_the_rm_and_the_nodemanagers_take_them() {
        let acls = AppAcls {
            view: Some("bob,carol ops".into()),
            modify: Some("*".into()),
        };
        assert_eq!(
            acls.rest_json(),
            serde_json::json!({"entry": [
                {"key": "VIEW_APP", "value": "bob,carol ops"},
                {"key": "MODIFY_APP", "value": "*"},
            ]})
        );
        let p = acls.to_proto();
        assert_eq!(p.len(), 2);
        // accessType = 1 (enum VIEW = 1), acl = 2: the bytes Hadoop's generated parser reads.
        assert_eq!(
            p[0].encode_to_vec(),
            [&[0x08, 0x01, 0x12, 13][..], b"bob,carol ops"].concat()
        );
        assert_eq!(p[1].access_type, Some(2));
        let only_view = AppAcls {
            view: Some("bob".into()),
            modify: None,
        };
        assert_eq!(only_view.to_proto().len(), 1);
        assert!(AppAcls::default().is_empty() && AppAcls::default().to_proto().is_empty());
    }

    #[test]
    fn acls_with_control_characters_or_nothing_are_refused() {
        assert!(check_acl("alice,bob ops").is_ok() && check_acl("*").is_ok());
        assert!(check_acl(" ops").is_ok());
        assert_eq!(
            check_acl("alice\nbob"),
            Err(AclError::ControlCharacter("alice\nbob".into()))
        );
        assert_eq!(check_acl("  "), Err(AclError::Empty("  ".into())));
    }
}
