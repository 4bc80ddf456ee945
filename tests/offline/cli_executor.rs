//! The `yarn-am executor` binary as YARN starts it (its environment and a token file, as the
//! NodeManager lays them out), against an impostor on the AM's address and against an AM that
//! is gone. No cluster needed: this is the binary's own handling of its key and of replies.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use yarn_am_wire::credentials::EXECUTOR_KEY_ALIAS;
use yarn_am_wire::executor_env::ExecutorEnv;
use yarn_am_wire::poll::executor_key;
use yarn_am_wire::tls::{AppCert, Fingerprint, PIN_ALIAS};
use yarn_client::credentials::{Credentials, Format};
use yarn_client::token::Token;

const CONTAINER: &str = "container_1_0001_01_000002";

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("yarn-am-cli-exec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    dir
}

fn hdfs_token() -> Token {
    Token {
        identifier: vec![1, 2],
        password: vec![3, 4],
        kind: "HDFS_DELEGATION_TOKEN".into(),
        service: "nn:8020".into(),
    }
}

/// The fingerprint every executor here pins (the AM's certificate, as the launcher gives it).
const PIN: Fingerprint = Fingerprint([7; 32]);

/// Runs the executor in `dir` with its key and [`PIN`] in `dir/container_tokens`, polling
/// `url`.
fn executor(dir: &Path, url: &str, key: &[u8]) -> Output {
    executor_pinned(dir, url, key, PIN)
}

fn executor_pinned(dir: &Path, url: &str, key: &[u8], pin: Fingerprint) -> Output {
    let creds = Credentials {
        tokens: vec![("hdfs".into(), hdfs_token())],
        secrets: vec![
            (EXECUTOR_KEY_ALIAS.into(), key.to_vec()),
            (PIN_ALIAS.into(), pin.0.to_vec()),
        ],
    };
    let tokens = dir.join("container_tokens");
    std::fs::write(&tokens, creds.encode(Format::Writable)).unwrap();
    Command::new(env!("CARGO_BIN_EXE_yarn-am"))
        .arg("executor")
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HADOOP_TOKEN_FILE_LOCATION", &tokens)
        .envs(launch_env(url).to_env())
        .env("NM_HOST", "localhost")
        .env("LOG_DIRS", dir.join("logs"))
        .output()
        .unwrap()
}

/// What the AM's launcher gives executor "1" of [`CONTAINER`] polling `url`.
fn launch_env(url: &str) -> ExecutorEnv {
    ExecutorEnv {
        id: "1".into(),
        container: CONTAINER.into(),
        app: "application_1_0001".into(),
        driver_url: url.into(),
        cores: 1,
        kind: None,
        resources: Vec::new(),
        staging: None,
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// After the executor read it, its token file keeps the HDFS token and loses the key.
fn assert_key_removed(dir: &Path) {
    let left = Credentials::read_file(&dir.join("container_tokens")).unwrap();
    assert_eq!(left.tokens, vec![("hdfs".to_string(), hdfs_token())]);
    assert!(left.secrets.is_empty(), "{left:?}");
}

/// A TLS server on `listener` with `cert`, answering every request with `body` (HTTP 200,
/// unsigned), one connection at a time.
fn tls_impostor(listener: std::net::TcpListener, cert: AppCert, body: String) {
    let config = cert.server_config().unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
            let Ok(tls) = rustls::ServerConnection::new(config.clone()) else {
                return;
            };
            let mut s = rustls::StreamOwned::new(tls, conn);
            let mut buf = [0u8; 65536];
            if s.read(&mut buf).is_err() {
                continue;
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(reply.as_bytes());
            s.conn.send_close_notify();
            let _ = s.flush();
        }
    });
}

#[test]
fn an_impostor_on_the_ams_address_is_refused_and_its_task_does_not_run() {
    let body = |dir: &Path| {
        serde_json::json!({
            "tasks": [{"task_id": "evil", "attempt": 0, "cpus": 1,
                       "command": format!("touch {}", dir.join("ran").display())}],
            "shutdown": false,
        })
        .to_string()
    };
    let key = executor_key(b"some master secret", "1", CONTAINER);
    // One that holds the pinned certificate's key (so TLS lets it in) but not the
    // executor's: its unsigned reply is refused.
    let dir = workdir("impostor");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let cert = AppCert::generate().unwrap();
    let pinned = cert.fingerprint();
    tls_impostor(listener, cert, body(&dir));
    let started = Instant::now();
    let out = executor_pinned(&dir, &url, &key, pinned);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10), "{err}");
    assert!(
        err.contains("refusing the reply") && err.contains("not signed"),
        "{err}"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!dir.join("ran").exists(), "the impostor's task ran");
    assert_key_removed(&dir);

    // One with another certificate: refused in the handshake, naming both fingerprints.
    let dir = workdir("impostor-cert");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    let cert = AppCert::generate().unwrap();
    let theirs = cert.fingerprint();
    tls_impostor(listener, cert, body(&dir));
    let started = Instant::now();
    let out = executor(&dir, &url, &key);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10), "{err}");
    assert!(
        err.contains("refusing the AM")
            && err.contains(&PIN.to_string())
            && err.contains(&theirs.to_string()),
        "{err}"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!dir.join("ran").exists(), "the impostor's task ran");
    assert_key_removed(&dir);
}

#[test]
fn a_plain_http_driver_url_is_refused_at_start() {
    let dir = workdir("plain-url");
    let key = executor_key(b"some master secret", "1", CONTAINER);
    let out = executor(&dir, "http://127.0.0.1:9", &key);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not https://"), "{err}");
    // The key left the token file all the same.
    assert_key_removed(&dir);
}

#[test]
fn an_executor_whose_am_is_gone_exits_within_5_s() {
    let dir = workdir("gone");
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}", l.local_addr().unwrap());
    drop(l);
    let key = executor_key(b"some master secret", "1", CONTAINER);
    let started = Instant::now();
    let out = executor(&dir, &url, &key);
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
    assert!(err.contains("is gone") && err.contains(&url), "{err}");
    assert_key_removed(&dir);
}

#[test]
fn an_executor_without_its_key_does_not_start() {
    let dir = workdir("nokey");
    let out = executor(&dir, "https://127.0.0.1:9", &[]);
    // An empty key is not 32 bytes: refused before any poll.
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(EXECUTOR_KEY_ALIAS) && err.contains("32 bytes"),
        "{err}"
    );
}
