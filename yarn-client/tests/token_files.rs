//! Token files written by real Hadoop: `container_tokens.writable` is the file a
//! NodeManager (3.4.1) wrote for our test AM's container (copied by the AM from
//! `HADOOP_TOKEN_FILE_LOCATION`); `container_tokens.protobuf` is the same credentials plus a
//! secret re-written by Hadoop's own `Credentials.writeTokenStorageToStream(out, PROTOBUF)`.

use prost::Message;
use yarn_client::credentials::{Credentials, Format, AMRM_TOKEN_KIND};
use yarn_client::proto::yarn::AmrmTokenIdentifierProto;

const WRITABLE: &[u8] = include_bytes!("data/container_tokens.writable");
const PROTOBUF: &[u8] = include_bytes!("data/container_tokens.protobuf");

#[test]
fn nodemanager_written_file_decodes() {
    let c = Credentials::decode(WRITABLE).unwrap();
    assert_eq!(c.tokens.len(), 1);
    assert!(c.secrets.is_empty());
    let (alias, t) = &c.tokens[0];
    // The RM stores the AMRM token under an empty alias with an empty service.
    assert_eq!(alias, "");
    assert_eq!(t.kind, AMRM_TOKEN_KIND);
    assert_eq!(t.service, "");
    assert_eq!(t.password.len(), 20, "HmacSHA1 password");
    let id = AmrmTokenIdentifierProto::decode(&t.identifier[..]).unwrap();
    let attempt = id.app_attempt_id.unwrap();
    assert_eq!(attempt.attempt_id, Some(1));
    assert_eq!(attempt.application_id.unwrap().id, Some(1));
    // Our writer reproduces the NodeManager's bytes exactly.
    assert_eq!(c.encode(Format::Writable), WRITABLE);
}

#[test]
fn hadoop_protobuf_file_decodes() {
    let p = Credentials::decode(PROTOBUF).unwrap();
    let w = Credentials::decode(WRITABLE).unwrap();
    assert_eq!(p.tokens, w.tokens);
    assert_eq!(p.secrets, vec![("test-secret".to_string(), vec![1, 2, 3])]);
    assert_eq!(
        p.require_kind(AMRM_TOKEN_KIND).unwrap(),
        w.find_kind(AMRM_TOKEN_KIND).unwrap()
    );
    // And Hadoop's protobuf bytes are what our writer produces.
    assert_eq!(p.encode(Format::Protobuf), PROTOBUF);
}

#[test]
fn corrupted_real_file_is_an_error_not_a_panic() {
    for cut in 0..WRITABLE.len() {
        let _ = Credentials::decode(&WRITABLE[..cut]);
    }
    for cut in 0..PROTOBUF.len() - 1 {
        assert!(Credentials::decode(&PROTOBUF[..cut]).is_err(), "cut {cut}");
    }
    let mut bad = WRITABLE.to_vec();
    bad[4] = 9;
    let e = Credentials::decode(&bad).unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown token file format version 9"),
        "{e}"
    );
}
