//! The AM's loop on the real cluster: it never waits on the RM. With every RM scheduler call
//! slowed to 5 s by a proxy, the driver API still answers at once; a job's first container
//! request follows the backlog timeout, not the heartbeat; and executors are told to stop
//! before the AM goes.

use crate::support::am;
use crate::support::cluster;
use crate::support::delay_proxy;
use crate::support::gate;

use std::time::{Duration, Instant};

use am::{rest, submit, submit_job, Driver};
use delay_proxy::DelayProxy;
use serde_json::json;

/// The acceptance bound: p99 of driver calls while the RM is slow.
const P99_LIMIT: Duration = Duration::from_millis(100);
const RM_DELAY: Duration = Duration::from_secs(5);

/// One call's status and latency.
async fn timed(d: &Driver, path: &str, body: serde_json::Value) -> (u16, Duration) {
    let t = Instant::now();
    let resp = d
        .http
        .post(format!("{}{path}", d.url))
        .bearer_auth(&d.secret)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    let status = resp.status().as_u16();
    let _ = resp.bytes().await;
    (status, t.elapsed())
}

/// A poll signed as an executor (`999` in a made-up container): polls take executor keys,
/// not the driver's Bearer secret, and the key derives from the master secret we hold.
async fn timed_poll(d: &Driver, seq: u64, body: serde_json::Value) -> (u16, Duration) {
    use yarn_am_wire::poll::{executor_key, RequestAuth, SignedRequest, AUTH_HEADER, POLL_PATH};
    let (executor, container) = ("999", "container_1_0001_01_000999");
    let key = executor_key(d.secret.as_bytes(), executor, container);
    let bytes = serde_json::to_vec(&body).unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mut nonce = [0u8; 16];
    nonce[..8].copy_from_slice(&seq.to_be_bytes());
    let req = SignedRequest {
        method: "POST",
        path: POLL_PATH,
        body: &bytes,
    };
    let auth = RequestAuth::sign(&key, executor, container, seq, now_ms, nonce, &req);
    let t = Instant::now();
    let resp = d
        .http
        .post(format!("{}{POLL_PATH}", d.url))
        .header(AUTH_HEADER, auth.header_value())
        .header("content-type", "application/json")
        .body(bytes)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {POLL_PATH}: {e}"));
    let status = resp.status().as_u16();
    let _ = resp.bytes().await;
    (status, t.elapsed())
}

fn p99(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() * 99).div_ceil(100) - 1]
}

#[tokio::test]
async fn driver_calls_are_answered_promptly_while_every_rm_call_takes_5_s() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let proxy = DelayProxy::start("rm:8030", RM_DELAY);
    let app = submit(
        c,
        "it-loop-slow-rm",
        &[
            "--executors",
            "1",
            "--max-executors",
            "3",
            "--rm-scheduler",
            &proxy.addr,
        ],
    );
    let d = Driver::find(c, &app).await;
    // Registration and the first grants go through the slow proxy too.
    d.wait_running(1, Duration::from_secs(120)).await;
    let forwarded_before = proxy.forwarded_chunks();
    let mut latencies: Vec<(&str, u16, Duration)> = Vec::new();
    let start = Instant::now();
    let mut i = 0u32;
    // Long enough for several 5 s allocate calls to be in flight while we call.
    while start.elapsed() < Duration::from_secs(16) {
        let target = 1 + i % 2;
        let (s, t) = timed(&d, "/v1/demand", json!({"target_executors": target})).await;
        latencies.push(("demand", s, t));
        let (s, t) = timed(&d, "/v1/executors/kill", json!({"executor_ids": ["999"]})).await;
        latencies.push(("kill", s, t));
        let poll = json!({"executor_id": "999", "host": "nm1", "free_cpus": 1});
        let (s, t) = timed_poll(&d, u64::from(i) + 1, poll).await;
        latencies.push(("poll", s, t));
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rm_traffic = proxy.forwarded_chunks() - forwarded_before;
    assert!(
        rm_traffic >= 2,
        "the AM made no RM calls through the proxy while we measured ({rm_traffic} chunks)"
    );
    for what in ["demand", "kill", "poll"] {
        let mine: Vec<_> = latencies.iter().filter(|l| l.0 == what).collect();
        let bad: Vec<_> = mine.iter().filter(|l| l.1 >= 300).collect();
        assert!(bad.is_empty(), "{what}: error statuses {bad:?}");
        let p = p99(mine.iter().map(|l| l.2).collect());
        let max = mine.iter().map(|l| l.2).max().unwrap();
        eprintln!(
            "{what}: {} calls with every RM call delayed {RM_DELAY:?}: p99 {p:?}, max {max:?}",
            mine.len()
        );
        assert!(p < P99_LIMIT, "{what}: p99 {p:?} >= {P99_LIMIT:?}");
    }
    // The slow RM still hears of what we asked: a real kill goes through too.
    let state = d.state().await;
    let live = am::live(&am::executors_of(&state))
        .into_iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert!(!live.is_empty(), "{state}");
    let (s, t) = timed(&d, "/v1/executors/kill", json!({"executor_ids": [live[0]]})).await;
    assert_eq!(s, 200);
    assert!(t < P99_LIMIT, "a real kill took {t:?}");
    d.post("/v1/finish", json!({"status": "succeeded"})).await;
    let r = rest(c)
        .wait_final(&app, Duration::from_secs(120))
        .await
        .unwrap();
    assert_eq!(r.final_status, "SUCCEEDED", "{}", r.diagnostics);
}

#[tokio::test]
async fn a_job_asks_at_its_backlog_timeout_and_its_executors_stop_before_the_am() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let tasks: Vec<_> = (0..8)
        .map(|i| json!({"id": format!("t{i}"), "command": "sleep 1", "cpus": 1}))
        .collect();
    let job = json!({"name": "it-loop-job",
        "executor": {"cores": 2, "memory_mb": 256, "max_executors": 4},
        "allocation": {"backlog_timeout_ms": 1000},
        "tasks": tasks});
    let app = submit_job(c, "it-loop-job", &job);
    let r = rest(c)
        .wait_final(&app, Duration::from_secs(180))
        .await
        .unwrap();
    assert_eq!(r.final_status, "SUCCEEDED", "{}", r.diagnostics);
    let log = am::am_log(c, &app);
    let at = |needle: &str| {
        log.lines()
            .find(|l| l.contains(needle))
            .and_then(am::log_time_ms)
            .unwrap_or_else(|| panic!("no {needle:?} line in the AM log:\n{log}"))
    };
    let started = at("running a job with the embedded driver");
    let first_ask = at("asking the RM for containers");
    let after = first_ask.saturating_sub(started);
    eprintln!("first container request {after} ms after the job started (backlog timeout 1000 ms)");
    // The backlog timeout, then at most one heartbeat's slack (the loop's start-up included).
    assert!(
        (900..=2000).contains(&after),
        "first request {after} ms after the job started"
    );
    am::assert_executors_told_to_stop(c, &app).await;
}
