//! IPC without SASL against the real RM client port (ApplicationClientProtocol, 8032): an
//! insecure cluster lets a client name itself (SIMPLE), which exercises the non-token path
//! of the handshake, NodeReport decoding, and the RPC-level errors for a wrong protocol or
//! method name. Also: an address where nothing listens fails fast with a typed error, and
//! `client_rm`'s getNewApplication hands out an id and the largest container with the
//! cluster's resource types.

use std::time::{Duration, Instant};

use crate::common::{cluster, rm_client, rm_web, LogsOnFailure};
use yarn_client::proto::yarn::{
    GetClusterNodesRequestProto, GetClusterNodesResponseProto, NodeStateProto,
};
use yarn_client::rest::RmRest;
use yarn_client::rpc::{Auth, RpcClient, RpcConfig, RpcError};

const CLIENT_PB: &str = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

fn simple(protocol: &str) -> RpcClient {
    let user = std::env::var("USER").unwrap_or("root".into());
    RpcClient::new(
        &rm_client(),
        protocol,
        1,
        Auth::Simple { user },
        RpcConfig::default(),
    )
}

fn running() -> GetClusterNodesRequestProto {
    GetClusterNodesRequestProto {
        node_states: vec![NodeStateProto::NsRunning as i32],
    }
}

#[tokio::test]
async fn simple_auth_lists_nodes_like_rest() {
    let _logs = LogsOnFailure(cluster());
    let c = simple(CLIENT_PB);
    let resp: GetClusterNodesResponseProto = c.call("getClusterNodes", &running()).await.unwrap();
    let mut ipc: Vec<(String, String)> = resp
        .node_reports
        .iter()
        .map(|n| {
            let id = n.node_id.as_ref().unwrap();
            (
                format!("{}:{}", id.host(), id.port()),
                n.rack_name().to_string(),
            )
        })
        .collect();
    ipc.sort();
    eprintln!("getClusterNodes over IPC: {ipc:?}");
    let user = std::env::var("USER").unwrap_or("root".into());
    let rest = RmRest::new(&rm_web(), &user, Duration::from_secs(20)).unwrap();
    let mut via_rest: Vec<(String, String)> = rest
        .nodes(&["RUNNING"])
        .await
        .unwrap()
        .into_iter()
        .map(|n| (n.id, n.rack))
        .collect();
    via_rest.sort();
    assert_eq!(ipc, via_rest);
    assert!(!ipc.is_empty());
    assert!(resp
        .node_reports
        .iter()
        .all(|n| n.node_state() == NodeStateProto::NsRunning));
}

#[tokio::test]
async fn wrong_method_and_protocol_are_typed_remote_errors() {
    let _logs = LogsOnFailure(cluster());
    let c = simple(CLIENT_PB);
    let e = c
        .call::<_, GetClusterNodesResponseProto>("noSuchMethod", &running())
        .await
        .unwrap_err();
    eprintln!("unknown method: {e}");
    let r = e
        .remote()
        .unwrap_or_else(|| panic!("not a remote error: {e}"));
    assert!(!r.fatal);
    assert!(r.is_class("RpcNoSuchMethodException"), "{r:?}");
    // The connection survives an ERROR reply.
    c.call::<_, GetClusterNodesResponseProto>("getClusterNodes", &running())
        .await
        .unwrap();

    let c = simple("org.apache.hadoop.yarn.api.NoSuchProtocolPB");
    let e = c
        .call::<_, GetClusterNodesResponseProto>("getClusterNodes", &running())
        .await
        .unwrap_err();
    eprintln!("unknown protocol: {e}");
    let r = e
        .remote()
        .unwrap_or_else(|| panic!("not a remote error: {e}"));
    assert!(r.is_class("RpcNoSuchProtocolException"), "{r:?}");
}

#[tokio::test]
async fn closed_port_on_the_rm_host_fails_fast() {
    let _logs = LogsOnFailure(cluster());
    let host = rm_client().split(':').next().unwrap().to_string();
    let c = RpcClient::new(
        &format!("{host}:1"),
        CLIENT_PB,
        1,
        Auth::Simple { user: "x".into() },
        RpcConfig {
            connect_timeout: Duration::from_secs(3),
            ..RpcConfig::default()
        },
    );
    let t = Instant::now();
    let e = c
        .call::<_, GetClusterNodesResponseProto>("getClusterNodes", &running())
        .await
        .unwrap_err();
    eprintln!("closed port: {e}");
    assert!(
        matches!(e, RpcError::Connect { .. } | RpcError::Timeout { .. }),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn get_new_application_names_an_id_and_the_largest_container_with_its_types() {
    let _logs = LogsOnFailure(cluster());
    let user = std::env::var("USER").unwrap_or("root".into());
    let c = yarn_client::client_rm::ClientRm::simple(&rm_client(), &user, RpcConfig::default());
    let a = c.new_application().await.unwrap();
    let b = c.new_application().await.unwrap();
    eprintln!("getNewApplication: {a:?}");
    assert!(a.application_id.starts_with("application_"), "{a:?}");
    assert_ne!(a.application_id, b.application_id);
    assert!(a.max_memory_mb > 0 && a.max_vcores > 0, "{a:?}");
    // The test cluster declares example.com/accelerator, 2 per NodeManager: the scheduler's
    // maximum follows the largest registered node.
    assert!(
        a.max_resources
            .contains(&("example.com/accelerator".to_string(), 2)),
        "{a:?}"
    );
}
