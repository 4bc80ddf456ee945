//! The fixtures of the cluster tests: the cluster itself, the gate that keeps disruptive tests
//! alone, helpers to submit and drive apps, and a delaying TCP proxy.

pub mod am;
pub mod cluster;
pub mod delay_proxy;
pub mod gate;
