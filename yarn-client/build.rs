//! Compiles our own `.proto` files with protox (a pure-Rust protobuf compiler), so building
//! this crate needs no system `protoc`.
fn main() {
    let dir = std::path::Path::new("proto");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("yarn-client/proto exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    files.sort();
    println!("cargo:rerun-if-changed=proto");
    if files.is_empty() {
        return;
    }
    let fds = protox::compile(&files, [dir]).expect("our .proto files compile");
    prost_build::Config::new()
        .compile_fds(fds)
        .expect("prost generates Rust from the descriptors");
}
