//! The HTTP layer over a real loopback socket. A tiny loop stands in for the AM's command
//! handling so each endpoint's contract (auth, validation, replies) is checked on its own.

use std::sync::Arc;

use super::model::*;
use super::*;

struct Running {
    base: String,
    secret: String,
    http: reqwest::Client,
    handle_state: watch::Sender<Arc<StateView>>,
    events: broadcast::Sender<ExecutorEvent>,
    demands: Arc<std::sync::Mutex<Vec<Demand>>>,
}

fn executor(id: &str, state: ExecutorState) -> ExecutorView {
    ExecutorView {
        id: id.into(),
        container_id: format!("container_1_0001_01_00000{id}"),
        host: "nm1".into(),
        rack: "/rack1".into(),
        locality: Locality::Node,
        state,
        exit_status: (state == ExecutorState::Exited).then_some(1),
        reason: (state == ExecutorState::Exited).then(|| "exited with 1".into()),
        counts_against_app: (state == ExecutorState::Exited).then_some(true),
    }
}

async fn start() -> Running {
    let secret = new_secret();
    let initial = StateView {
        app_id: "application_1_0001".into(),
        executors: vec![
            executor("1", ExecutorState::Running),
            executor("2", ExecutorState::Exited),
        ],
        running: 1,
        ..Default::default()
    };
    let (shared, mut handle) = channel(&secret, initial);
    let demands = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = demands.clone();
    tokio::spawn(async move {
        while let Some(cmd) = handle.commands.recv().await {
            match cmd {
                Command::SetDemand(d) => seen.lock().unwrap().push(d),
                Command::Kill {
                    executor_ids,
                    reply,
                } => {
                    let (killed, unknown) = executor_ids.into_iter().partition(|i| i == "1");
                    let _ = reply.send(KillOutcome { killed, unknown });
                }
                Command::Finish(_) => {}
                Command::ExecutorPoll { reply, .. } => {
                    let _ = reply.send(PollReply::default());
                }
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, shared, std::future::pending()));
    Running {
        base,
        secret,
        http: reqwest::Client::new(),
        handle_state: handle.state,
        events: handle.events,
        demands,
    }
}

impl Running {
    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.secret)
    }
    /// GETs `path` and decodes the JSON body (whatever the status).
    async fn get_json<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        self.get(path).send().await.unwrap().json().await.unwrap()
    }
    fn post(&self, path: &str, body: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.secret)
            .header("content-type", "application/json")
            .body(body.to_string())
    }
}

#[tokio::test]
async fn demand_is_forwarded_whole() {
    let r = start().await;
    let body = r#"{"target_executors": 6, "locality_aware_tasks": 12,
                   "host_to_local_task_count": {"nm1": 4, "nm3": 8}}"#;
    let resp = r.post("/v1/demand", body).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let seen = r.demands.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].target_executors, 6);
    assert_eq!(seen[0].host_to_local_task_count["nm3"], 8);
}

#[tokio::test]
async fn unauthenticated_or_wrong_secret_is_refused_and_changes_nothing() {
    let r = start().await;
    let url = format!("{}/v1/demand", r.base);
    let body = r#"{"target_executors": 1}"#;
    let none = r.http.post(&url).body(body).send().await.unwrap();
    assert_eq!(none.status(), 401);
    let err: ApiError = none.json().await.unwrap();
    assert!(err.error.contains("secret"), "{}", err.error);
    let wrong = r
        .http
        .post(&url)
        .bearer_auth("nope")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let metrics = r
        .http
        .get(format!("{}/metrics", r.base))
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status(), 401);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(r.demands.lock().unwrap().is_empty());
}

#[tokio::test]
async fn malformed_demands_get_400_naming_the_problem() {
    let r = start().await;
    for (body, needle) in [
        ("{not json", "malformed request"),
        (r#"{"target_executors": -1}"#, "target_executors"),
        (r#"{"target_executors": 2, "bogus": 1}"#, "bogus"),
        (r#"{"locality_aware_tasks": 2}"#, "target_executors"),
        (
            r#"{"target_executors": 2, "host_to_local_task_count": {"h": -3}}"#,
            "host_to_local_task_count",
        ),
    ] {
        let resp = r.post("/v1/demand", body).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let err: ApiError = resp.json().await.unwrap();
        assert!(err.error.contains(needle), "{body}: {}", err.error);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(r.demands.lock().unwrap().is_empty());
}

#[tokio::test]
async fn kill_reports_known_and_unknown_ids() {
    let r = start().await;
    let resp = r
        .post("/v1/executors/kill", r#"{"executor_ids": ["1", "9"]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let out: KillOutcome = resp.json().await.unwrap();
    assert_eq!(out.killed, ["1"]);
    assert_eq!(out.unknown, ["9"]);
}

#[tokio::test]
async fn executors_state_and_loss_reason_reflect_the_published_snapshot() {
    let r = start().await;
    let list: Vec<ExecutorView> = r.get_json("/v1/executors").await;
    assert_eq!(list.len(), 2);
    let reason: serde_json::Value = r.get_json("/v1/executors/2/loss-reason").await;
    assert_eq!(reason["exit_status"], 1);
    assert_eq!(reason["counts_against_app"], true);
    assert_eq!(
        r.get("/v1/executors/7/loss-reason")
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    let mut next = (**r.handle_state.borrow()).clone();
    next.demand.target_executors = 9;
    next.pending.any_host = 3;
    r.handle_state.send(Arc::new(next)).unwrap();
    let state: StateView = r.get_json("/v1/state").await;
    assert_eq!(state.demand.target_executors, 9);
    assert_eq!(state.pending.any_host, 3);
    let metrics = r
        .get("/metrics")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("yarn_am_target_executors 9"), "{metrics}");
    assert!(
        metrics.contains("yarn_am_pending_requests{placement=\"any\"} 3"),
        "{metrics}"
    );
    assert!(
        metrics.contains("yarn_am_running_executors_by_locality{level=\"node\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn events_stream_as_server_sent_events() {
    let r = start().await;
    let resp = r.get("/v1/events").send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = resp.bytes_stream();
    // The subscription exists once the response headers are back; publish after that.
    r.events
        .send(ExecutorEvent::Added {
            executor: executor("5", ExecutorState::Starting),
        })
        .unwrap();
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .expect("an event within 5 s")
            .unwrap()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.contains("event: executor_added"), "{text}");
    assert!(text.contains("\"id\":\"5\""), "{text}");
}

#[tokio::test]
async fn tracking_page_is_html_and_escapes_names() {
    let r = start().await;
    let mut next = (**r.handle_state.borrow()).clone();
    next.executors[0].host = "<script>".into();
    r.handle_state.send(Arc::new(next)).unwrap();
    let resp = r.http.get(format!("{}/", r.base)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let html = resp.text().await.unwrap();
    assert!(html.contains("yarn-am — application_1_0001"));
    assert!(html.contains("&lt;script&gt;") && !html.contains("<script>"));
    let missing = r.get("/v2/nothing").send().await.unwrap();
    assert_eq!(missing.status(), 404);
}
