//! Protobuf messages generated from our own `proto/*.proto` files (only the messages an
//! ApplicationMaster needs). All are proto2: optional scalars are `Option<T>` so that a
//! field set to its default (e.g. `rpcOp = 0`) is still written, which Hadoop requires.

/// `hadoop.common`: IPC headers, SASL, connection context, tokens.
pub mod common {
    include!(concat!(env!("OUT_DIR"), "/hadoop.common.rs"));
}

/// `hadoop.yarn`: YARN records and the AM / NM protocol messages.
pub mod yarn {
    include!(concat!(env!("OUT_DIR"), "/hadoop.yarn.rs"));
}
