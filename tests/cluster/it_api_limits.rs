//! The driver API under connection abuse, on the real cluster: 500 connections that are
//! idle or stop halfway through a request do not slow an authenticated call (answered
//! within 1 s, the acceptance bound), the AM's descriptor count stays bounded (by
//! what is held, then back to where it was once the header-read timeout closes them, and by
//! the connection cap when a client opens more), and the AM keeps launching executors.
//! Also checks that the private local staging folder (0700, files 0600/0700) is localised
//! by the NodeManagers and removed at the end.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use am::{am_pid, submit, wait_for, Driver};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Connections the acceptance criterion holds open.
const HELD: usize = 500;
/// The AM's own descriptors may move a little while we watch (RM and NM connections,
/// log files, an executor's launch).
const SLACK: u64 = 60;
/// The server's header-read timeout (`api::server::HEADER_READ_TIMEOUT`).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Mirrors `api::server::{MAX_CONNECTIONS, FD_RESERVE}`.
const MAX_CONNECTIONS: u64 = 2048;
const FD_RESERVE: u64 = 512;
/// Refused connections the server may hold for a moment to deliver their 503.
const REFUSING: u64 = 64;

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o7777
}

fn open_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the AM runs on this machine")
        .count() as u64
}

/// The AM's soft descriptor limit (raised to the hard one at start).
fn nofile(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

/// `yarn_am_open_fds` from the AM's `/metrics`.
async fn metric_fds(d: &Driver) -> u64 {
    let text = d.get_text("/metrics").await;
    text.lines()
        .find_map(|l| l.strip_prefix("yarn_am_open_fds "))
        .unwrap_or_else(|| panic!("no yarn_am_open_fds in {text}"))
        .parse()
        .unwrap()
}

/// A pinned TLS connection to the driver API.
type Tls = tokio_rustls::client::TlsStream<TcpStream>;

/// Opens `n` TLS connections to the driver API: every other one sends half a request and
/// stops. Returns those whose handshake completed, and how many the server closed in the
/// handshake (beyond its refusal backlog it closes without answering).
async fn open_abusive(d: &Driver, n: usize) -> (Vec<Tls>, usize) {
    let mut held = Vec::with_capacity(n);
    let mut closed = 0;
    for i in 0..n {
        let mut s = match d.tls_connect().await {
            Ok(s) => s,
            Err(e) if i > 0 => {
                eprintln!("connection {i}: {e}");
                closed += 1;
                continue;
            }
            Err(e) => panic!("connection {i} to {}: {e}", d.url),
        };
        if i % 2 == 1 {
            s.write_all(b"GET /v1/state HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ")
                .await
                .unwrap();
        }
        held.push(s);
    }
    (held, closed)
}

/// Times one authenticated `GET /v1/state` on a fresh connection (TLS handshake included).
async fn timed_state(d: &Driver) -> Duration {
    let http = d.client();
    let t = Instant::now();
    let resp = http
        .get(format!("{}/v1/state", d.url))
        .bearer_auth(&d.secret)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let _: serde_json::Value = resp.json().await.unwrap();
    t.elapsed()
}

/// Waits until the AM holds at most `most` descriptors.
async fn fds_fall_to(pid: u32, most: u64, limit: Duration) {
    wait_for(
        &format!("the AM's descriptors to fall to {most}"),
        limit,
        || async { (open_fds(pid) <= most).then_some(()) },
    )
    .await;
}

#[tokio::test]
async fn idle_and_half_sent_connections_neither_slow_the_api_nor_exhaust_the_am() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let out = am::yarn_am(c)
        .args(["submit", "--name", "it-api-limits", "--max-attempts", "1"])
        .args(["--executors", "1", "--max-executors", "10"])
        .args([
            "--executor-memory",
            "512",
            "--executor-command",
            "sleep 600",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "submit failed: {}", am::text(&out));
    let app = am::submitted_app(&out);
    let d = Driver::find(c, &app).await;
    d.wait_running(1, Duration::from_secs(60)).await;

    // The staging folder is private, and the NodeManagers localised it all the same (the
    // AM and its executor run from it).
    let staged = am::Staged::of(c, &am::text(&out));
    staged.assert_private().await;
    let home = std::env::var("HOME").unwrap_or_else(|_| "/tmp".into());
    let secrets = Path::new(&home).join(".yarn-am");
    assert_eq!(mode(&secrets), 0o700);
    assert_eq!(mode(&secrets.join(format!("{app}.secret"))), 0o600);

    let pid = am_pid(c, &app).expect("the AM's pid");
    let base = open_fds(pid);
    let reported = metric_fds(&d).await;
    assert!(
        reported.abs_diff(base) <= SLACK,
        "/metrics says {reported} descriptors, /proc {base}"
    );
    // 500 connections: half idle, half stopped halfway through their headers.
    let (mut held, closed) = open_abusive(&d, HELD).await;
    assert_eq!(
        closed, 0,
        "connections under the cap were closed in the handshake"
    );
    // The AM accepts them (it holds one descriptor each) ...
    wait_for(
        "the AM to accept the held connections",
        Duration::from_secs(5),
        || async { (open_fds(pid) >= base + HELD as u64 - SLACK).then_some(()) },
    )
    .await;
    let holding = open_fds(pid);
    assert!(
        holding <= base + HELD as u64 + SLACK,
        "{holding} descriptors with {HELD} connections held (from {base})"
    );
    // ... and still answers a legitimate caller at once.
    let mut slowest = Duration::ZERO;
    for _ in 0..5 {
        let took = timed_state(&d).await;
        slowest = slowest.max(took);
        assert!(
            took < Duration::from_secs(1),
            "GET /v1/state took {took:?} with {HELD} idle or half-sent connections open"
        );
    }
    eprintln!(
        "AM descriptors: {base} before, {holding} with {HELD} held; slowest GET /v1/state {slowest:?}"
    );
    // The AM still launches executors (each launch needs descriptors of its own).
    d.post("/v1/demand", json!({"target_executors": 3})).await;
    d.wait_running(3, Duration::from_secs(60)).await;

    // The header-read timeout closes every held connection (they read the end of the
    // stream, and no state), and the AM's descriptors are back to about where they were.
    fds_fall_to(pid, base + SLACK, HEADER_READ_TIMEOUT * 3).await;
    for s in held.iter_mut() {
        let mut buf = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf)).await;
        assert!(
            matches!(read, Ok(Ok(_)) | Ok(Err(_))),
            "a held connection was not closed by the server"
        );
        assert!(!String::from_utf8_lossy(&buf).contains("\"executors\""));
    }
    drop(held);

    // More connections than the cap: those beyond it are answered 503 and closed, so the
    // AM's descriptors stay under the cap plus its own.
    let cap = (nofile(pid).saturating_sub(FD_RESERVE)).clamp(16, MAX_CONNECTIONS);
    let over = 100;
    let base = open_fds(pid);
    let (mut held, closed) = open_abusive(&d, cap as usize + over).await;
    let peak = open_fds(pid);
    assert!(
        peak <= base + cap + REFUSING + SLACK,
        "{peak} descriptors with {} connections offered (cap {cap}, from {base})",
        cap as usize + over
    );
    eprintln!(
        "AM descriptors: {peak} with {} connections offered (cap {cap}, from {base})",
        cap as usize + over
    );
    // Closed in the handshake counts as refused: the server could not answer them all.
    let mut refused = closed;
    for s in held.iter_mut().rev().take(over.saturating_sub(closed)) {
        let mut buf = Vec::new();
        // Refused connections are closed at once; accepted ones stay open: do not wait.
        if let Ok(Ok(_)) =
            tokio::time::timeout(Duration::from_millis(200), s.read_to_end(&mut buf)).await
        {
            if String::from_utf8_lossy(&buf).starts_with("HTTP/1.1 503") {
                refused += 1;
            }
        }
    }
    assert!(
        refused >= over / 2,
        "only {refused} of the last {over} connections beyond the cap of {cap} got a 503"
    );
    drop(held);
    fds_fall_to(pid, base + SLACK, Duration::from_secs(10)).await;
    let took = timed_state(&d).await;
    assert!(
        took < Duration::from_secs(1),
        "GET /v1/state took {took:?} after"
    );

    d.post(
        "/v1/finish",
        json!({"status": "succeeded", "diagnostics": "it-api-limits done"}),
    )
    .await;
    let r = am::rest(c)
        .wait_final(&app, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(r.final_status, "SUCCEEDED", "{r:?}");
    wait_for(
        "the staging folder to be removed",
        Duration::from_secs(20),
        || async { (!staged.exists().await).then_some(()) },
    )
    .await;
}

/// The AM's resident and peak resident memory, in KiB.
fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Times one genuine executor poll: signed with the key the AM derives for `executor` in
/// `container` from the application's master secret, its reply's MAC checked.
async fn timed_poll(d: &Driver, executor: &str, container: &str, seq: u64) -> Duration {
    use yarn_am_wire::poll::{
        check_reply, executor_key, RequestAuth, SignedRequest, AUTH_HEADER, POLL_PATH,
        REPLY_MAC_HEADER,
    };
    let key = executor_key(d.secret.as_bytes(), executor, container);
    let body = serde_json::to_vec(&json!({"executor_id": executor, "host": "nm1", "free_cpus": 1}))
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let req = SignedRequest {
        method: "POST",
        path: POLL_PATH,
        body: &body,
    };
    let auth = RequestAuth::sign(&key, executor, container, seq, now, rand::random(), &req);
    let http = d.client();
    let t = Instant::now();
    let resp = http
        .post(format!("{}{POLL_PATH}", d.url))
        .header(AUTH_HEADER, auth.header_value())
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let mac = resp
        .headers()
        .get(REPLY_MAC_HEADER)
        .map(|v| v.to_str().unwrap().to_string());
    let bytes = resp.bytes().await.unwrap();
    let took = t.elapsed();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(
        check_reply(&key, &auth, status, &bytes, mac.as_deref()),
        Ok(())
    );
    took
}

/// Audit H1 on a running AM: 24 connections sending 4 MiB poll bodies nobody signed and
/// 2,100 header-only POSTs held open neither slow an authenticated `GET /v1/state` or a
/// genuine executor poll (each answered within 1 s) nor swell the AM (peak RSS under
/// 64 MiB). Before the fix the AM buffered every body (12 -> 112 MiB), and the header-only
/// POSTs held all 2,048 connection slots for good. Loopback only, bounded in count and time.
#[tokio::test]
async fn a_poll_flood_neither_slows_the_am_nor_swells_it() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let app = submit(
        c,
        "it-api-poll-flood",
        &[
            "--executors",
            "1",
            "--executor-memory",
            "512",
            "--executor-command",
            "sleep 600",
        ],
    );
    let d = Driver::find(c, &app).await;
    d.wait_running(1, Duration::from_secs(60)).await;
    let pid = am_pid(c, &app).expect("the AM's pid");
    let state = d.state().await;
    let exec = &am::executors_of(&state)[0];
    let executor = exec["id"].to_string().trim_matches('"').to_string();
    let container = exec["container_id"].as_str().unwrap().to_string();
    let (rss_before, _) = rss_kib(pid);

    // 24 connections each sending a 4 MiB poll body under a forged signature, then holding on.
    const BODY: usize = 4 << 20;
    let forged = format!(
        "POST /v1/executors/poll HTTP/1.1\r\nhost: x\r\nx-yarn-am-executor-auth: v2 executor=1 \
         container={container} seq=1 time=1 nonce={} body={} mac={}\r\n\
         content-type: application/json\r\ncontent-length: {BODY}\r\n\r\n",
        "0".repeat(32),
        "0".repeat(64),
        "0".repeat(64)
    );
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..24 {
        let head = forged.clone();
        let Ok(mut s) = d.tls_connect().await else {
            continue;
        };
        senders.spawn(async move {
            s.write_all(head.as_bytes()).await.ok()?;
            let chunk = vec![b' '; 64 << 10];
            let mut sent = 0;
            // The AM answers 401 and closes: the writes then fail, which ends the loop.
            while sent < BODY - 1 {
                let n = chunk.len().min(BODY - 1 - sent);
                let w = tokio::time::timeout(Duration::from_secs(2), s.write_all(&chunk[..n]));
                if !matches!(w.await, Ok(Ok(()))) {
                    break;
                }
                sent += n;
            }
            Some(s)
        });
    }
    // 2,100 header-only POSTs, held open.
    let header_only = "POST /v1/executors/poll HTTP/1.1\r\nhost: x\r\n\
                       content-type: application/json\r\ncontent-length: 4194304\r\n\r\n";
    let mut held = Vec::with_capacity(2100);
    for _ in 0..2100 {
        let Ok(mut s) = d.tls_connect().await else {
            continue;
        };
        if s.write_all(header_only.as_bytes()).await.is_ok() {
            held.push(s);
        }
    }
    let mut bodies = Vec::new();
    while let Some(s) = senders.join_next().await {
        bodies.extend(s.unwrap());
    }
    eprintln!(
        "flood: {} body senders and {} header-only POSTs connected and held",
        bodies.len(),
        held.len()
    );
    assert!(
        held.len() >= 2000,
        "only {} header-only POSTs got through",
        held.len()
    );

    // With all of it held open: an authenticated call and a genuine poll, each within 1 s.
    let mut slowest = (Duration::ZERO, Duration::ZERO);
    for seq in 1..=3 {
        let state = timed_state(&d).await;
        let poll = timed_poll(&d, &executor, &container, seq).await;
        slowest = (slowest.0.max(state), slowest.1.max(poll));
        assert!(
            state < Duration::from_secs(1),
            "GET /v1/state took {state:?} under the flood"
        );
        assert!(
            poll < Duration::from_secs(1),
            "a genuine poll took {poll:?} under the flood"
        );
    }
    let (rss, peak) = rss_kib(pid);
    eprintln!(
        "AM RSS {} MiB before, {} MiB under the flood, peak {} MiB; slowest GET /v1/state \
         {:?}, slowest poll {:?}",
        rss_before / 1024,
        rss / 1024,
        peak / 1024,
        slowest.0,
        slowest.1
    );
    assert!(
        peak < 64 * 1024,
        "the AM's peak RSS was {} MiB",
        peak / 1024
    );
    drop(held);
    drop(bodies);

    d.post(
        "/v1/finish",
        json!({"status": "succeeded", "diagnostics": "it-api-poll-flood done"}),
    )
    .await;
    let r = am::rest(c)
        .wait_final(&app, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(r.final_status, "SUCCEEDED", "{r:?}");
}
