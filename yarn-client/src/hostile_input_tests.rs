//! Structure-aware fuzzing of the parsers that read what a server (or a token file) hands us:
//! the token-file decoder, the IPC frame reader, and the WebHDFS and RM REST JSON replies.
//!
//! The existing fuzz tests feed short random bytes (up to 512), which mostly stop at the
//! first header check. These start from valid input of realistic size (a token file with
//! dozens of tokens, a 1,000-entry listing page, a 1,000-node cluster, frames up to 256 KiB)
//! and damage it (truncate, overwrite, insert, duplicate a stretch), so the parsers are
//! driven deep into their structure. The property: a typed error or a value, never a panic,
//! and no allocation beyond what the input holds (a claimed length or count larger than the
//! input is refused, not allocated).

use proptest::collection::vec;
use proptest::prelude::*;

use crate::credentials::{Credentials, CredentialsError, Format};
use crate::rpc::frame::{read_frame_untimed, FrameError, MAX_FRAME_LEN, MAX_PREAUTH_FRAME_LEN};
use crate::token::Token;

/// One way to damage an input: (what, where, a byte, a length), positions taken modulo
/// the input's length.
type Mutation = (u8, usize, u8, usize);

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    vec((0u8..4, any::<usize>(), any::<u8>(), 1usize..64), 0..8)
}

/// `input` with `muts` applied in order.
fn damage(mut input: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for &(what, at, byte, len) in muts {
        if input.is_empty() {
            break;
        }
        let at = at % input.len();
        match what {
            0 => input.truncate(at),
            1 => input[at] = byte,
            2 => {
                let filler = std::iter::repeat_n(byte, len);
                input.splice(at..at, filler);
            }
            _ => {
                let end = (at + len).min(input.len());
                let copy = input[at..end].to_vec();
                input.splice(at..at, copy);
            }
        }
    }
    input
}

fn token() -> impl Strategy<Value = (String, Token)> {
    (
        "[a-z0-9.:-]{0,40}",
        vec(any::<u8>(), 0..512),
        vec(any::<u8>(), 0..64),
        "[A-Z_]{0,32}",
        "[a-z0-9.:]{0,64}",
    )
        .prop_map(|(alias, identifier, password, kind, service)| {
            (
                alias,
                Token {
                    identifier,
                    password,
                    kind,
                    service,
                },
            )
        })
}

fn credentials() -> impl Strategy<Value = Credentials> {
    (
        vec(token(), 0..64),
        vec(("[a-z.-]{0,40}", vec(any::<u8>(), 0..4096)), 0..16),
    )
        .prop_map(|(tokens, secrets)| Credentials { tokens, secrets })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// A server frame: length prefix, an RPC response header for `call_id`, then `body`.
fn server_frame(call_id: u32, body: &[u8]) -> Vec<u8> {
    use prost::Message;
    let header = crate::proto::common::RpcResponseHeaderProto {
        call_id,
        status: 0,
        ..Default::default()
    };
    let mut payload = Vec::new();
    header.encode_length_delimited(&mut payload).unwrap();
    payload.extend_from_slice(body);
    let mut out = (payload.len() as u32).to_be_bytes().to_vec();
    out.extend(payload);
    out
}

/// A `LISTSTATUS_BATCH` reply of `names.len()` entries, as the NameNode writes it.
fn listing_json(names: &[String], remaining: u64) -> String {
    let entries: Vec<serde_json::Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            serde_json::json!({
                "accessTime": 1_700_000_000_000u64 + i as u64, "blockSize": 134217728,
                "childrenNum": 0, "fileId": 16386 + i as u64, "group": "supergroup",
                "length": i * 1000, "modificationTime": 1_700_000_000_000u64, "owner": "alice",
                "pathSuffix": n, "permission": "644", "replication": 3, "storagePolicy": 0,
                "type": if i % 7 == 0 { "DIRECTORY" } else { "FILE" }
            })
        })
        .collect();
    serde_json::json!({"DirectoryListing": {
        "partialListing": {"FileStatuses": {"FileStatus": entries}},
        "remainingEntries": remaining
    }})
    .to_string()
}

/// A `GET /ws/v1/cluster/nodes` reply of `n` nodes, as the RM writes it.
fn nodes_json(n: usize) -> String {
    let nodes: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "rack": format!("/rack{}", i % 40), "state": "RUNNING",
                "id": format!("nm{i}.example.com:45454"),
                "nodeHostName": format!("nm{i}.example.com"),
                "nodeHTTPAddress": format!("nm{i}.example.com:8042"),
                "lastHealthUpdate": 1_700_000_000_000u64, "version": "3.4.1",
                "healthReport": "", "numContainers": i % 9, "usedMemoryMB": 1024,
                "availMemoryMB": 7168, "usedVirtualCores": 1, "availableVirtualCores": 7
            })
        })
        .collect();
    serde_json::json!({"nodes": {"node": nodes}}).to_string()
}

/// `depth` nested arrays: serde_json's recursion limit must turn it into an error, not a
/// stack overflow.
fn deeply_nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

const URL: &str = "http://nn:9870/webhdfs/v1/in?op=X&user.name=alice";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A token file of realistic size in either format: decoded back whole, and damaged
    /// it gives a value or a typed error.
    #[test]
    fn token_files_survive_damage(creds in credentials(), muts in mutations(), protobuf in any::<bool>()) {
        let format = if protobuf { Format::Protobuf } else { Format::Writable };
        let bytes = creds.encode(format);
        let back = Credentials::decode(&bytes).unwrap();
        prop_assert_eq!(&back.tokens, &creds.tokens);
        prop_assert_eq!(&back.secrets, &creds.secrets);
        let damaged = damage(bytes, &muts);
        if let Ok(c) = Credentials::decode(&damaged) {
            // Whatever decodes fits in the input: nothing was made up from a length.
            let held: usize = c.tokens.iter().map(|(a, t)| a.len() + t.identifier.len() + t.password.len()).sum::<usize>()
                + c.secrets.iter().map(|(a, s)| a.len() + s.len()).sum::<usize>();
            prop_assert!(held <= damaged.len());
        }
    }

    /// Frames of up to 256 KiB, whole or damaged, read with the pre-authentication and the
    /// normal cap: a declared length over the cap is `TooLarge` naming that cap; otherwise a
    /// frame, `Truncated`, `Malformed` or `Eof`.
    #[test]
    fn frames_survive_damage(
        // Size matters here, not the content: a cheap pattern instead of 256 KiB of
        // generated bytes (the damage brings the randomness where it counts).
        body in (0usize..(256 << 10), any::<u8>())
            .prop_map(|(n, seed)| (0..n).map(|i| seed ^ (i as u8).wrapping_mul(31)).collect::<Vec<u8>>()),
        call_id in any::<u32>(),
        muts in mutations(),
        preauth in any::<bool>(),
    ) {
        let limit = if preauth { MAX_PREAUTH_FRAME_LEN } else { MAX_FRAME_LEN };
        let bytes = damage(server_frame(call_id, &body), &muts);
        let declared = (bytes.len() >= 4).then(|| u32::from_be_bytes(bytes[..4].try_into().unwrap()));
        let got = runtime().block_on(read_frame_untimed(&mut &bytes[..], limit));
        match got {
            Err(FrameError::TooLarge { len, limit: l }) => {
                prop_assert_eq!(l, limit);
                prop_assert_eq!(Some(len), declared);
                prop_assert!(len > limit);
            }
            Ok(f) => {
                prop_assert!(declared.is_some_and(|d| d <= limit));
                let _ = f.decode_body::<crate::proto::yarn::AllocateResponseProto>();
            }
            Err(FrameError::Truncated { .. } | FrameError::Malformed(_) | FrameError::Eof) => {}
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }

    /// A listing page of up to 1,000 entries: parsed whole, and damaged it parses or is
    /// `BadReply`.
    #[test]
    fn listing_pages_survive_damage(
        names in vec("[a-zA-Z0-9 ._\"\\\\\u{e9}\u{4e2d}-]{1,40}", 0..1000),
        remaining in any::<u64>(),
        muts in mutations(),
    ) {
        let body = listing_json(&names, remaining);
        let page = crate::webhdfs::parse_listing(URL, &body).unwrap();
        prop_assert_eq!(page.entries.len(), names.len());
        prop_assert_eq!(page.remaining, remaining);
        let damaged = String::from_utf8_lossy(&damage(body.into_bytes(), &muts)).into_owned();
        match crate::webhdfs::parse_listing(URL, &damaged) {
            Ok(_) => {}
            Err(e @ crate::webhdfs::WebHdfsError::BadReply { .. }) => {
                let shown = e.to_string();
                prop_assert!(!shown.contains("user.name=alice"), "{}", shown);
                prop_assert!(shown.len() < 2000, "{}", shown.len());
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    /// Block locations, file status and RemoteException bodies, damaged.
    #[test]
    fn other_webhdfs_replies_survive_damage(blocks in 0usize..2000, muts in mutations()) {
        let locations: Vec<serde_json::Value> = (0..blocks)
            .map(|i| serde_json::json!({
                "offset": i * 134217728, "length": 134217728, "corrupt": false,
                "hosts": ["nm1", "nm2", "nm3"],
                "names": ["10.0.0.1:9866", "10.0.0.2:9866", "10.0.0.3:9866"],
                "topologyPaths": ["/rack1/10.0.0.1:9866"], "cachedHosts": [], "storageTypes": ["DISK"]
            }))
            .collect();
        let body = serde_json::json!({"BlockLocations": {"BlockLocation": locations}}).to_string();
        prop_assert_eq!(crate::webhdfs::parse_block_locations(URL, &body).unwrap().len(), blocks);
        let damaged = String::from_utf8_lossy(&damage(body.into_bytes(), &muts)).into_owned();
        let _ = crate::webhdfs::parse_block_locations(URL, &damaged);
        let status = r#"{"FileStatus":{"accessTime":0,"blockSize":134217728,"childrenNum":0,"fileId":16386,"group":"supergroup","length":24930,"modificationTime":1700000000000,"owner":"alice","pathSuffix":"","permission":"700","replication":3,"storagePolicy":0,"type":"DIRECTORY"}}"#;
        let damaged = String::from_utf8_lossy(&damage(status.as_bytes().to_vec(), &muts)).into_owned();
        let _ = crate::webhdfs::parse_file_status(URL, &damaged);
        let remote = r#"{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /in"}}"#;
        let damaged = String::from_utf8_lossy(&damage(remote.as_bytes().to_vec(), &muts)).into_owned();
        let _ = crate::webhdfs::parse_remote_exception(&damaged);
    }

    /// The RM's node list for up to 1,000 nodes, damaged.
    #[test]
    fn node_lists_survive_damage(n in 0usize..1000, muts in mutations()) {
        let body = nodes_json(n);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        prop_assert_eq!(crate::rest::parse_nodes(URL, v).unwrap().len(), n);
        let damaged = String::from_utf8_lossy(&damage(body.into_bytes(), &muts)).into_owned();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&damaged) {
            match crate::rest::parse_nodes(URL, v) {
                Ok(_) | Err(crate::rest::RestError::BadReply { .. }) => {}
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
    }
}

/// Lengths and counts far beyond the input (a token file claiming 2^31 tokens, an
/// identifier of 2^31 bytes) are refused as truncated, without allocating for the claim.
#[test]
fn token_files_claiming_huge_counts_are_refused_cheaply() {
    let one = Credentials {
        tokens: vec![(
            "a".into(),
            Token {
                identifier: vec![1; 10],
                password: vec![2; 10],
                kind: "K".into(),
                service: "s".into(),
            },
        )],
        secrets: vec![],
    }
    .encode(Format::Writable);
    // After the 5-byte header, the token count is a Hadoop vint; 0x8c means "4 bytes follow".
    for count in [0x7fff_ffffu32, 0x1000_0000] {
        let mut bytes = one[..5].to_vec();
        bytes.push(0x8c);
        bytes.extend_from_slice(&count.to_be_bytes());
        bytes.extend_from_slice(&one[6..]);
        let e = Credentials::decode(&bytes).unwrap_err();
        assert!(
            matches!(
                e,
                CredentialsError::Truncated(_) | CredentialsError::Invalid(_)
            ),
            "{e}"
        );
    }
}

/// 100,000 nested arrays in any JSON reply: an error, not a stack overflow.
#[test]
fn deeply_nested_replies_are_errors() {
    let deep = deeply_nested(100_000);
    assert!(crate::webhdfs::parse_listing(URL, &deep).is_err());
    assert!(crate::webhdfs::parse_block_locations(URL, &deep).is_err());
    assert!(crate::webhdfs::parse_file_status(URL, &deep).is_err());
    assert!(crate::webhdfs::parse_remote_exception(&deep).is_none());
    assert!(serde_json::from_str::<serde_json::Value>(&deep).is_err());
    let wrapped = format!(r#"{{"DirectoryListing":{deep}}}"#);
    assert!(crate::webhdfs::parse_listing(URL, &wrapped).is_err());
}
