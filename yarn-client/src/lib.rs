//! yarn-client: the parts of Hadoop YARN's protocols that an ApplicationMaster needs,
//! written from the wire facts up (no JVM, no generated Hadoop code).
//!
//! # Layout
//!
//! Layers from the wire up; each module owns one concern (add new ones here, one line each).
//!
//! - Hadoop IPC, the layer the AMRM and NM clients stand on:
//!   - [`proto`]: the protobuf messages, generated from our own `proto/*.proto`
//!     (`common`: IPC headers, SASL, tokens; `yarn`: YARN records and requests).
//!   - [`rpc`]: the IPC client. `RpcClient` multiplexes calls over one connection
//!     (`rpc/connection.rs`); `frame.rs` is the length-prefixed packet framing,
//!     `handshake.rs` the preamble, SASL exchange and connection context, `wrap.rs` the
//!     framing under a SASL security layer, `error.rs` its errors.
//!   - `sasl` (crate-private): DIGEST-MD5 over a token (`digest.rs`) and the integrity and
//!     privacy layer it negotiates (`layer.rs`), free of I/O; `rpc::handshake` drives it.
//! - The clients:
//!   - [`amrm`]: ApplicationMasterProtocol (register, allocate, finish) and its plain
//!     records; [`ask`] is the ask vocabulary it shares with the request table.
//!   - [`nm`]: ContainerManagementProtocol (start, stop, query containers on one NM);
//!     [`launch_script`]: what the NM's `launch_container.sh` does to commands and
//!     environment values, and how to pass a value through it literally.
//!   - [`request_table`]: the AMRM bookkeeping without I/O (`AMRMClientImpl`'s memory
//!     between heartbeats): the request table (`table.rs`, its value types in
//!     `types.rs`), releases, exclusions, the response id and the tokens the RM hands
//!     out (`rm_tokens.rs`), put together in `AmrmState` (`amrm_state.rs`).
//!   - [`rest`]: the RM's REST API (submit, report, kill, nodes).
//!   - [`client_rm`]: ApplicationClientProtocol on the RM's client port (new application,
//!     submit): the submission for an AM container asking resource types, which REST drops.
//!   - [`webhdfs`]: the few WebHDFS operations a submitter needs to stage files.
//!   - `http_body` (crate-private): reading a REST or WebHDFS reply under a size cap.
//!   - [`tls`]: whom REST and WebHDFS trust on `https://` addresses (a PEM CA file from
//!     `YARN_AM_CA_FILE`, else the system's store); rustls on ring.
//! - Configuration and credentials:
//!   - [`conf`]: Hadoop XML configuration, read as Hadoop reads it (`xml.rs`,
//!     `expand.rs`, `load.rs`, the environment it expands from in `env_source.rs`), and
//!     the YARN keys (`yarn.rs`: RM addresses, HA).
//!   - [`credentials`]: the token-storage file (`HADOOP_TOKEN_FILE_LOCATION`);
//!     [`token`]: one Hadoop security token.
//!   - [`gssapi`]: Kerberos through the system's GSSAPI library, loaded at run time;
//!     [`http_auth`]: how the web clients (REST, WebHDFS) authenticate (simple, SPNEGO,
//!     delegation token).
//! - Container logs: [`node_logs`] reads live ones through the NodeManagers' web services;
//!   [`logs`] parses aggregated ones (`tfile.rs`: the TFile/BCFile container,
//!   `aggregated.rs`: YARN's log entries in it), free of I/O.
//! - [`ids`]: YARN ids (application, attempt, container, node) and their string forms.
//! - Tests only: `test_http`, a scripted loopback HTTP server (also offered to yarn-am's
//!   tests by the `test-fixtures` feature); `hostile_input_tests`, structure-aware fuzzing
//!   of the token-file, IPC frame and JSON reply parsers at realistic sizes.
//!
//! The public surface is the clients, configuration, credentials and their errors. The
//! protocol internals (`sasl`, the IPC framing, handshake and wrapping, the XML reader,
//! Hadoop's vints) are crate-private. `RpcClient` and `proto` stay public for callers that
//! speak a protocol the typed clients do not cover (the `test_am` example and the
//! client-port test call `ApplicationClientProtocol.getClusterNodes` with them).

pub mod acl;
pub mod amrm;
pub mod ask;
pub mod client_rm;
pub mod conf;
pub mod credentials;
pub mod gssapi;
#[cfg(test)]
mod hostile_input_tests;
pub mod http_auth;
pub(crate) mod http_body;
pub mod ids;
pub mod launch_script;
pub mod logs;
pub mod nm;
pub mod node_logs;
pub mod proto;
pub mod redact;
pub mod request_table;
pub mod rest;
pub mod rpc;
pub(crate) mod sasl;
#[cfg(any(test, feature = "test-fixtures"))]
#[doc(hidden)]
pub mod test_http;
pub mod tls;
pub mod token;
pub mod webhdfs;
