//! The HTTP layer over a real loopback socket. A tiny loop stands in for the AM's command
//! handling so each endpoint's contract (auth, validation, replies) is checked on its own.

use std::sync::Arc;

use super::*;
use yarn_am_wire::driver_api::*;
use yarn_am_wire::driver_secret::new_secret;
use yarn_am_wire::poll::{PollReply, TaskAssignment};
use yarn_am_wire::tls::{AppCert, Fingerprint};

/// Serves `shared` as the AM does: the API over TLS with a fresh certificate, the page alone
/// in plain HTTP. Returns the API's `https://` base, the page's `http://` base, the pin and
/// the server's task.
async fn serve_as_the_am(
    shared: Shared,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> (
    String,
    String,
    Fingerprint,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let cert = AppCert::generate().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    let page_base = format!("http://{}", page.local_addr().unwrap());
    let server = tokio::spawn(serve(
        listener,
        Some(page),
        shared,
        cert.server_config().unwrap(),
        shutdown,
    ));
    (base, page_base, cert.fingerprint(), server)
}

fn pinned(pin: Fingerprint) -> reqwest::Client {
    crate::cluster::driver_client::pinned_http_client(pin)
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap()
}

struct Running {
    base: String,
    /// The tracking page's plain-HTTP base.
    page_base: String,
    pin: Fingerprint,
    secret: String,
    http: reqwest::Client,
    handle_state: watch::Sender<Arc<StateView>>,
    events: broadcast::Sender<ExecutorEvent>,
    demands: Arc<std::sync::Mutex<Vec<Demand>>>,
}

fn executor(id: u64, state: ExecutorState) -> ExecutorView {
    ExecutorView {
        id: ExecutorId::new(id),
        container_id: format!("container_1_0001_01_00000{id}"),
        host: "nm1".into(),
        rack: "/rack1".into(),
        locality: Locality::Node,
        state,
        exit_status: (state == ExecutorState::Exited).then_some(1),
        reason: (state == ExecutorState::Exited).then(|| "exited with 1".into()),
        counts_against_app: (state == ExecutorState::Exited).then_some(true),
        node_http_address: Some("nm1:8042".into()),
        kind: None,
        resources: Default::default(),
    }
}

async fn start() -> Running {
    let secret = new_secret();
    let initial = StateView {
        app_id: "application_1_0001".into(),
        executors: vec![
            executor(1, ExecutorState::Running),
            executor(2, ExecutorState::Exited),
        ]
        .into(),
        running: 1,
        ..Default::default()
    };
    let (shared, mut handle) = channel(&secret, initial);
    let demands = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = demands.clone();
    let kv_revision = handle.kv_revision;
    tokio::spawn(async move {
        // The store as the AM core serves it, every write "journaled" at once.
        let mut kv = yarn_am_core::kv::KvDesk::new(yarn_am_core::kv::KvStore::new(
            yarn_am_core::kv::KvLimits {
                max_value_bytes: 64 << 10,
                ..Default::default()
            },
        ));
        while let Some(Call { command, reply }) = handle.commands.recv().await {
            let answer = |a: Reply| {
                let _ = reply.expect("a call that waits").send(a);
            };
            match command {
                DriverCommand::Kv { request, reply: to } => {
                    let now = kv.handle(request, to);
                    kv.take_journal();
                    let held = kv.take_acks(true).into_iter().map(|(_, a)| a);
                    answer(Reply::Kv(now.into_iter().chain(held).next().unwrap()));
                    let rev = kv.store().revision();
                    kv_revision.send_if_modified(|v| std::mem::replace(v, rev) != rev);
                }
                DriverCommand::SetDemand(d) => seen.lock().unwrap().push(d),
                DriverCommand::Kill { executor_ids, .. } => {
                    let (killed, unknown): (Vec<_>, _) =
                        executor_ids.into_iter().partition(|i| i == "1");
                    let killed = killed.iter().map(|i| i.parse().unwrap()).collect();
                    answer(Reply::Killed(KillOutcome { killed, unknown }));
                }
                // The loop's answers as `Pool::declare_kind` gives them: `rp1` is there with
                // 2 vcores, there is room for nothing else.
                DriverCommand::DeclareKind { declaration, .. } => {
                    use yarn_am_core::am::pool::DeclareError;
                    let declared = match (declaration.name.as_str(), declaration.vcores) {
                        ("rp1", 2) => Ok(yarn_am_wire::driver_api::KindDeclared {
                            name: declaration.name,
                            index: 1,
                            created: false,
                        }),
                        ("rp1", n) => Err(DeclareError::Conflict {
                            name: declaration.name,
                            difference: format!("vcores (2 there, {n} asked)"),
                        }),
                        _ => Err(DeclareError::Full { max: 2 }),
                    };
                    answer(Reply::KindDeclared(declared));
                }
                DriverCommand::Finish(_) | DriverCommand::Progress(_) => {}
                DriverCommand::ExecutorPoll { .. } => answer(Reply::Poll(PollReply::default())),
            }
        }
    });
    let (base, page_base, pin, _) = serve_as_the_am(shared, std::future::pending()).await;
    Running {
        base,
        page_base,
        pin,
        secret,
        http: pinned(pin),
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
    /// GETs `path` (with the secret) and returns the body as text.
    async fn get_text(&self, path: &str) -> String {
        self.get(path).send().await.unwrap().text().await.unwrap()
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
        (
            r#"{"target_executors": 2, "excluded_hosts": ["nm1", " "]}"#,
            "excluded_hosts",
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

/// A demand names one of the app's executor kinds (or none, or `default`); another kind is a
/// 400 that names it, and the AM never hears of it.
#[tokio::test]
async fn a_demand_for_an_executor_kind_the_app_lacks_is_refused() {
    let r = start().await;
    let mut next = (**r.handle_state.borrow()).clone();
    next.kinds = vec![
        yarn_am_wire::driver_api::KindView {
            name: "default".into(),
            ..Default::default()
        },
        yarn_am_wire::driver_api::KindView {
            name: "accel".into(),
            ..Default::default()
        },
    ];
    r.handle_state.send(Arc::new(next)).unwrap();
    let resp = r
        .post("/v1/demand", r#"{"target_executors": 1, "kind": "gpu"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let err: ApiError = resp.json().await.unwrap();
    assert_eq!(err.error, r#"this application has no executor kind "gpu""#);
    for kind in ["accel", "default"] {
        let body = format!(r#"{{"target_executors": 2, "kind": "{kind}"}}"#);
        let resp = r.post("/v1/demand", &body).send().await.unwrap();
        assert_eq!(resp.status(), 202, "{kind}");
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let kinds: Vec<Option<String>> = r
        .demands
        .lock()
        .unwrap()
        .iter()
        .map(|d| d.kind.clone())
        .collect();
    assert_eq!(kinds, [Some("accel".into()), Some("default".into())]);
}

/// `POST /v1/kinds`: bad values are a 400 before the loop hears of them; the loop's answer
/// is a 200 with the kind's index, or a 409 that says why.
#[tokio::test]
async fn a_kind_declaration_is_checked_and_answered_with_the_loops_word() {
    let r = start().await;
    let body = |name: &str, vcores: i32, extra: &str| {
        format!(r#"{{"name": "{name}", "memory_mb": 1024, "vcores": {vcores}{extra}}}"#)
    };
    let resp = r
        .post("/v1/kinds", &body("rp1", 2, ""))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let made: yarn_am_wire::driver_api::KindDeclared = resp.json().await.unwrap();
    assert_eq!((made.index, made.created), (1, false));
    for (b, says) in [
        (body("rp1", 0, ""), "vcores must be positive"),
        (body("a b", 1, ""), "kind name"),
        (body("default", 1, ""), "the default kind is fixed"),
        (
            body("rp1", 2, r#", "resources": {"x": 0}"#),
            "a name and a positive count",
        ),
        (
            body("rp1", 2, r#", "env": {"YARN_AM_EXECUTOR_ID": "9"}"#),
            "YARN_AM_*",
        ),
        (body("rp1", 2, r#", "colour": 1"#), "unknown field"),
    ] {
        let resp = r.post("/v1/kinds", &b).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{b}");
        let err: ApiError = resp.json().await.unwrap();
        assert!(err.error.contains(says), "{b}: {}", err.error);
    }
    // Another shape under a known name, and a kind beyond the room: 409s naming why.
    for (b, says) in [
        (body("rp1", 3, ""), "vcores (2 there, 3 asked)"),
        (body("rp2", 1, ""), "room for 2 executor kinds"),
    ] {
        let resp = r.post("/v1/kinds", &b).send().await.unwrap();
        assert_eq!(resp.status(), 409, "{b}");
        let err: ApiError = resp.json().await.unwrap();
        assert!(err.error.contains(says), "{b}: {}", err.error);
    }
}

/// A driver's progress must be a number from 0 to 1; the RM shows it as a percentage.
#[tokio::test]
async fn progress_reports_from_0_to_1_are_taken_and_others_refused() {
    let r = start().await;
    for (body, needle) in [
        (r#"{"progress": 1.5}"#, "from 0 to 1"),
        (r#"{"progress": -0.1}"#, "from 0 to 1"),
        (r#"{"progress": "half"}"#, "progress"),
        (r#"{"progress": 0.5, "of": 2}"#, "of"),
    ] {
        let resp = r.post("/v1/progress", body).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{body}");
        let err: ApiError = resp.json().await.unwrap();
        assert!(err.error.contains(needle), "{body}: {}", err.error);
    }
    let ok = r
        .post("/v1/progress", r#"{"progress": 0.5}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 202);
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
    assert_eq!(out.killed, [ExecutorId::new(1)]);
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

    // Once finished executors are forgotten, an old id gets a 404 that says so.
    let mut next = (**r.handle_state.borrow()).clone();
    next.retention = Retention {
        finished_kept: 1000,
        forgotten: 5,
        last_id: ExecutorId::new(9),
    };
    r.handle_state.send(Arc::new(next)).unwrap();
    let resp = r.get("/v1/executors/7/loss-reason").send().await.unwrap();
    assert_eq!(resp.status(), 404);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(
        body["error"],
        "executor 7 is forgotten: only the last 1000 finished executors are kept"
    );
    let resp = r.get("/v1/executors/10/loss-reason").send().await.unwrap();
    assert_eq!(resp.status(), 404);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"], r#"no executor "10""#);

    let mut next = (**r.handle_state.borrow()).clone();
    next.demand.target_executors = 9;
    next.pending.any_host = 3;
    r.handle_state.send(Arc::new(next)).unwrap();
    let state: StateView = r.get_json("/v1/state").await;
    assert_eq!(state.demand.target_executors, 9);
    assert_eq!(state.pending.any_host, 3);
    let metrics = r.get_text("/metrics").await;
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
            executor: executor(5, ExecutorState::Starting),
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

/// The list with entry `i` changed by `edit`.
fn edited(
    list: &Listed<ExecutorView>,
    i: usize,
    edit: impl FnOnce(&mut ExecutorView),
) -> Listed<ExecutorView> {
    let mut v: Vec<ExecutorView> = list.iter().map(|e| (**e).clone()).collect();
    edit(&mut v[i]);
    v.into()
}

#[tokio::test]
async fn tracking_page_is_html_and_escapes_names() {
    let r = start().await;
    let mut next = (**r.handle_state.borrow()).clone();
    next.executors = edited(&next.executors, 0, |e| e.host = "<script>".into());
    r.handle_state.send(Arc::new(next)).unwrap();
    let resp = r.http.get(format!("{}/", r.base)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let html = resp.text().await.unwrap();
    assert!(html.contains("yarn-am — application_1_0001"));
    // The page's own script is its only one: the host name is text.
    assert!(html.contains("&lt;script&gt;") && html.matches("<script>").count() == 1);
    let missing = r.get("/v2/nothing").send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn a_poll_reply_the_loop_sends_too_late_comes_back_to_the_loop() {
    // A loop that answers after the HTTP side stopped waiting (it was in an RM call): the
    // send fails and returns the reply, so the AM can queue its tasks again.
    let secret = new_secret();
    let (shared, mut handle) = channel(&secret, StateView::default());
    let (late_tx, late_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        if let Some(Call {
            command: DriverCommand::ExecutorPoll { .. },
            reply: Some(reply),
        }) = handle.commands.recv().await
        {
            tokio::time::sleep(ASK_TIMEOUT + Duration::from_millis(300)).await;
            let answer = PollReply {
                tasks: vec![TaskAssignment {
                    task_id: "t1".into(),
                    attempt: 0,
                    command: "true".into(),
                    cpus: 1,
                }],
                ..Default::default()
            };
            let _ = late_tx.send(reply.send(Reply::Poll(answer)));
        }
    });
    let (base, _, pin, _) = serve_as_the_am(shared, std::future::pending()).await;
    let body = serde_json::json!({"executor_id": "1", "host": "nm1", "free_cpus": 1});
    let (resp, _) = signed_poll(&pinned(pin), &base, &secret, "1", 1, &body).await;
    assert_eq!(resp.status(), 503);
    let err: ApiError = resp.json().await.unwrap();
    assert!(
        err.error.contains("did not answer the poll"),
        "{}",
        err.error
    );
    let returned = late_rx
        .await
        .unwrap()
        .expect_err("the late reply is refused");
    let returned = PollReply::try_from(returned).unwrap();
    assert_eq!(returned.tasks[0].task_id, "t1");
}

#[tokio::test]
async fn a_slow_event_client_is_told_how_many_events_it_missed() {
    let (tx, rx) = broadcast::channel(2);
    let (_closing_tx, closing) = watch::channel(false);
    let items = sse_items(rx, closing);
    for id in [1, 2, 3, 4, 5] {
        tx.send(ExecutorEvent::Added {
            executor: executor(id, ExecutorState::Starting),
        })
        .unwrap();
    }
    drop(tx);
    let got: Vec<SseItem> = items.collect().await;
    let names: Vec<&str> = got.iter().map(|i| i.name).collect();
    assert_eq!(names, ["lagged", "executor_added", "executor_added"]);
    assert_eq!(got[0].data, r#"{"missed":3}"#);
    assert!(got[1].data.contains(r#""id":"4""#), "{}", got[1].data);
    assert!(got[2].data.contains(r#""id":"5""#), "{}", got[2].data);
}

#[tokio::test]
async fn event_streams_end_when_the_server_stops() {
    let (tx, rx) = broadcast::channel(8);
    let (closing_tx, closing) = watch::channel(false);
    let mut items = Box::pin(sse_items(rx, closing));
    tx.send(ExecutorEvent::Added {
        executor: executor(1, ExecutorState::Starting),
    })
    .unwrap();
    assert_eq!(items.next().await.unwrap().name, "executor_added");
    closing_tx.send_replace(true);
    let end = tokio::time::timeout(Duration::from_secs(2), items.next())
        .await
        .expect("the stream ends instead of waiting for more events");
    assert!(end.is_none());
    // The sender is still alive: the shutdown, not a closed channel, ended the stream.
    drop(tx);
}

#[tokio::test]
async fn server_shutdown_is_not_held_up_by_an_open_event_stream() {
    let secret = new_secret();
    let (shared, _handle) = channel(&secret, StateView::default());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (base, _, pin, server) = serve_as_the_am(shared, async {
        let _ = stopped.await;
    })
    .await;
    let resp = pinned(pin)
        .get(format!("{base}/v1/events"))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(3), server)
        .await
        .expect("the server stops with a client still on /v1/events")
        .unwrap()
        .unwrap();
    drop(resp);
}

#[tokio::test]
async fn tracking_page_shows_the_job_summary_and_tasks_escaped() {
    let r = start().await;
    let mut next = (**r.handle_state.borrow()).clone();
    next.executors = edited(&next.executors, 1, |e| {
        e.reason = Some("exit <b>1</b> & \"lost\"".into())
    });
    let job = serde_json::json!({
        "name": "<job>",
        "succeeded": false,
        "failure": "task `<t2>` failed 4 times",
        "tasks_total": 2,
        "tasks_succeeded": 1,
        "tasks_failed": 1,
        "by_locality": {"node_local": 1, "no_pref": 0, "rack_local": 0, "any": 0},
        "executors_over_time": [{"t_ms": 0, "executors": 1}],
        "wall_time_ms": 2500,
        "tasks": [{"task_id": "<t1>", "executor_id": "1", "host": "nm<1>",
                   "locality": "NODE_LOCAL", "attempts": 1, "duration_ms": 1200,
                   "exit_code": 0}]
    });
    next.job = Some(serde_json::from_value(job.clone()).unwrap());
    r.handle_state.send(Arc::new(next)).unwrap();
    // The report reads back as it was given, on its own and inside the state.
    let got: serde_json::Value = r.get_json("/v1/job").await;
    assert_eq!(got, job);
    let state: serde_json::Value = r.get_json("/v1/state").await;
    assert_eq!(state["job"], job);
    let html = r.get_text("/").await;
    assert!(html.contains("<h2>Job &lt;job&gt;</h2>"), "{html}");
    assert!(
        html.contains("failed: 1/2 tasks succeeded in 2.5 s"),
        "{html}"
    );
    assert!(html.contains("NODE_LOCAL 1, NO_PREF 0"), "{html}");
    assert!(html.contains("<td>&lt;t1&gt;</td><td>1</td><td>nm&lt;1&gt;</td><td>NODE_LOCAL</td>"));
    assert!(
        html.contains("&quot;tasks_succeeded&quot;:1"),
        "summary JSON: {html}"
    );
    assert!(
        html.contains("exit &lt;b&gt;1&lt;/b&gt; &amp; &quot;lost&quot;"),
        "{html}"
    );
    for raw in ["<job>", "<t1>", "<t2>", "nm<1>", "<b>1</b>"] {
        assert!(!html.contains(raw), "{raw} unescaped in {html}");
    }
}

const CONTAINER: &str = "container_1_0001_01_000002";

/// The claim executor `id` (container [`CONTAINER`]) signs a poll of `body` with, now.
fn sign_poll(master: &str, id: &str, seq: u64, body: &[u8]) -> yarn_am_wire::poll::RequestAuth {
    use yarn_am_wire::poll::{executor_key, RequestAuth, SignedRequest, POLL_PATH};
    let key = executor_key(master.as_bytes(), id, CONTAINER);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let req = SignedRequest {
        method: "POST",
        path: POLL_PATH,
        body,
    };
    RequestAuth::sign(&key, id, CONTAINER, seq, now, rand::random(), &req)
}

/// Sends a poll signed as executor `id` (container [`CONTAINER`]) with sequence number `seq`;
/// returns the reply and the claim it was signed with.
async fn signed_poll(
    http: &reqwest::Client,
    base: &str,
    master: &str,
    id: &str,
    seq: u64,
    body: &serde_json::Value,
) -> (reqwest::Response, yarn_am_wire::poll::RequestAuth) {
    use yarn_am_wire::poll::AUTH_HEADER;
    let bytes = serde_json::to_vec(body).unwrap();
    let auth = sign_poll(master, id, seq, &bytes);
    let resp = http
        .post(format!("{base}/v1/executors/poll"))
        .header(AUTH_HEADER, auth.header_value())
        .header("content-type", "application/json")
        .body(bytes)
        .send()
        .await
        .unwrap();
    (resp, auth)
}

#[tokio::test]
async fn signed_polls_get_signed_replies_and_replays_or_impersonation_are_refused() {
    use yarn_am_wire::poll::{check_reply, executor_key, REPLY_MAC_HEADER};
    let r = start().await;
    let key = executor_key(r.secret.as_bytes(), "1", CONTAINER);
    let body = serde_json::json!({"executor_id": "1", "host": "nm1", "free_cpus": 1});
    let (resp, auth) = signed_poll(&r.http, &r.base, &r.secret, "1", 1, &body).await;
    assert_eq!(resp.status(), 200);
    let mac = resp.headers()[REPLY_MAC_HEADER]
        .to_str()
        .unwrap()
        .to_string();
    let bytes = resp.bytes().await.unwrap();
    assert_eq!(check_reply(&key, &auth, 200, &bytes, Some(&mac)), Ok(()));

    // The same request again (a replay): refused, unsigned.
    let (again, _) = signed_poll(&r.http, &r.base, &r.secret, "1", 1, &body).await;
    assert_eq!(again.status(), 401);
    assert!(again.headers().get(REPLY_MAC_HEADER).is_none());
    let err: ApiError = again.json().await.unwrap();
    assert!(err.error.contains("replayed"), "{}", err.error);

    // Executor 2's key speaking for executor 1: refused (signed: the claim itself verified).
    let (other, _) = signed_poll(&r.http, &r.base, &r.secret, "2", 1, &body).await;
    assert_eq!(other.status(), 401);
    let err: ApiError = other.json().await.unwrap();
    assert!(err.error.contains("speaks for executor 1"), "{}", err.error);

    // Signed with another application's secret: refused.
    let (forged, _) = signed_poll(&r.http, &r.base, &new_secret(), "1", 2, &body).await;
    assert_eq!(forged.status(), 401);
}

#[tokio::test]
async fn the_driver_secret_does_not_open_the_poll_and_executor_keys_open_nothing_else() {
    use yarn_am_wire::poll::executor_key;
    let r = start().await;
    let body = r#"{"executor_id": "1", "host": "nm1", "free_cpus": 1}"#;
    let bearer = r.post("/v1/executors/poll", body).send().await.unwrap();
    assert_eq!(bearer.status(), 401);
    let err: ApiError = bearer.json().await.unwrap();
    assert!(err.error.contains("sign their polls"), "{}", err.error);

    let key = hex::encode(executor_key(r.secret.as_bytes(), "1", CONTAINER));
    for (path, body) in [
        ("/v1/finish", r#"{"status": "failed"}"#),
        ("/v1/demand", r#"{"target_executors": 9}"#),
        ("/v1/executors/kill", r#"{"executor_ids": ["1"]}"#),
    ] {
        let resp = r
            .http
            .post(format!("{}{path}", r.base))
            .bearer_auth(&key)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "{path}");
    }
    assert!(r.demands.lock().unwrap().is_empty());
}

/// Sends `head` and `body` on a fresh TLS connection to `r`'s API and reads until the server
/// closes it; `None` when it has not within 5 s (the server is still waiting for something).
async fn raw_exchange(r: &Running, head: &str, body: &[u8]) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let tcp = tokio::net::TcpStream::connect(r.base.trim_start_matches("https://"))
        .await
        .unwrap();
    let connector =
        tokio_rustls::TlsConnector::from(Arc::new(yarn_am_wire::tls::pinned_client_config(r.pin)));
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut s = connector.connect(name, tcp).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut out = Vec::new();
    // A reset after the reply (the server closed with our bytes unread) still ends the read.
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&out).into_owned())
}

/// A poll head signed for `body` by executor 1, declaring `len` bytes of body.
fn signed_poll_head(master: &str, body: &[u8], len: usize) -> String {
    use yarn_am_wire::poll::AUTH_HEADER;
    let auth = sign_poll(master, "1", 1, body);
    format!(
        "POST /v1/executors/poll HTTP/1.1\r\nhost: x\r\n{AUTH_HEADER}: {}\r\n\
         content-length: {len}\r\n\r\n",
        auth.header_value()
    )
}

/// Audit H1: a poll nobody signed is answered before its body is read, and its connection
/// closed; the body is never buffered (on the old code the server waited for all 4 MiB).
#[tokio::test]
async fn an_unsigned_poll_is_refused_before_its_body_is_read() {
    let r = start().await;
    let forged = signed_poll_head(&new_secret(), b"{}", 4 << 20);
    let unsigned = "POST /v1/executors/poll HTTP/1.1\r\nhost: x\r\n\
                    content-length: 4194304\r\n\r\n";
    for head in [forged.as_str(), unsigned] {
        let reply = raw_exchange(&r, head, b"{\"exec")
            .await
            .expect("the server waited for the body of an unsigned poll");
        assert!(reply.starts_with("HTTP/1.1 401"), "{reply}");
        assert!(reply.contains("connection: close"), "{reply}");
    }
    // A genuine executor is served as before.
    let body = serde_json::json!({"executor_id": "1", "host": "nm1", "free_cpus": 1});
    let (ok, _) = signed_poll(&r.http, &r.base, &r.secret, "1", 1, &body).await;
    assert_eq!(ok.status(), 200);
}

/// Audit H1: an authenticated poll's body is read within a deadline and a small limit, and
/// must be the body its MAC covers.
#[tokio::test]
async fn a_signed_polls_body_is_bounded_in_time_and_size_and_must_match_its_mac() {
    use yarn_am_wire::poll::{POLL_BODY_LIMIT, REPLY_MAC_HEADER};
    let r = start().await;
    let body = br#"{"executor_id": "1", "host": "nm1", "free_cpus": 1}"#;
    // Half the body, then silence: 408 at the deadline (signed: the header verified).
    let head = signed_poll_head(&r.secret, body, body.len());
    let reply = raw_exchange(&r, &head, &body[..10])
        .await
        .expect("the server waited past its body deadline");
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains(REPLY_MAC_HEADER), "{reply}");
    // Declared over the limit: 413 before a byte of it is read.
    let head = signed_poll_head(&r.secret, body, POLL_BODY_LIMIT + 1);
    let reply = raw_exchange(&r, &head, b"").await.unwrap();
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    // Another body than the one signed: refused.
    let other = br#"{"executor_id": "1", "host": "nm2", "free_cpus": 1}"#;
    let head = signed_poll_head(&r.secret, body, other.len())
        .replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n");
    let reply = raw_exchange(&r, &head, other).await.unwrap();
    assert!(reply.starts_with("HTTP/1.1 401"), "{reply}");
    assert!(reply.contains("not the one its MAC covers"), "{reply}");
    // None of these was recorded: sequence number 1 is still free.
    let (ok, _) = signed_poll(
        &r.http,
        &r.base,
        &r.secret,
        "1",
        1,
        &serde_json::from_slice(body).unwrap(),
    )
    .await;
    assert_eq!(ok.status(), 200);
}

/// A driver request with the secret whose body stalls is cut at the body deadline.
#[tokio::test]
async fn a_driver_body_that_stalls_is_cut_at_the_deadline() {
    let r = start().await;
    let head = format!(
        "POST /v1/demand HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
         content-type: application/json\r\ncontent-length: 100\r\n\r\n",
        r.secret
    );
    let reply = raw_exchange(&r, &head, b"{\"target")
        .await
        .expect("the server waited past its body deadline");
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(r.demands.lock().unwrap().is_empty());
}

/// The API port speaks only TLS. A plain-HTTP request, secret and all, gets no
/// HTTP reply (the handshake fails on its first bytes and the connection is closed).
#[tokio::test]
async fn plain_http_to_the_api_port_gets_nothing_useful() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let r = start().await;
    let mut s = tokio::net::TcpStream::connect(r.base.trim_start_matches("https://"))
        .await
        .unwrap();
    let head = format!(
        "GET /v1/state HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\r\n",
        r.secret
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
        .await
        .expect("the server did not close a plain-HTTP connection");
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains("HTTP/1.1"), "{text}");
    assert!(!text.contains("application_1_0001"), "{text}");
    // reqwest with the pinned client refuses an http:// URL before connecting.
    let http_url = r.base.replacen("https://", "http://", 1);
    let err = r
        .http
        .get(format!("{http_url}/v1/state"))
        .bearer_auth(&r.secret)
        .send()
        .await
        .unwrap_err();
    assert!(err.is_builder(), "{err}");
}

/// A client pinned to another certificate is refused in the handshake, with a
/// typed error naming both fingerprints, before it sends its request (and its secret).
#[tokio::test]
async fn a_client_with_the_wrong_fingerprint_is_refused() {
    let r = start().await;
    let wrong = AppCert::generate().unwrap().fingerprint();
    let err = pinned(wrong)
        .get(format!("{}/v1/state", r.base))
        .bearer_auth(&r.secret)
        .send()
        .await
        .unwrap_err();
    match yarn_am_wire::tls::pin_error(&err) {
        Some(yarn_am_wire::tls::TlsError::WrongCertificate { expected, seen }) => {
            assert_eq!((expected, seen), (wrong, r.pin));
        }
        other => panic!("not a pin refusal: {other:?}: {err:#}"),
    }
    // The right pin on the same server works.
    let state: StateView = r.get_json("/v1/state").await;
    assert_eq!(state.app_id, "application_1_0001");
}

/// The plain page port (for the RM's web proxy) serves the page and nothing else: no API,
/// no poll, whatever the secret.
#[tokio::test]
async fn the_plain_page_port_serves_only_the_page() {
    let r = start().await;
    let plain = reqwest::Client::new();
    let page = plain.get(format!("{}/", r.page_base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("application_1_0001"));
    // The page's live summary is there too, without a secret.
    let live = plain
        .get(format!("{}/live.json", r.page_base))
        .send()
        .await
        .unwrap();
    assert_eq!(live.status(), 200);
    let live: serde_json::Value = live.json().await.unwrap();
    assert_eq!(live["running"], 1);
    let state = plain
        .get(format!("{}/v1/state", r.page_base))
        .bearer_auth(&r.secret)
        .send()
        .await
        .unwrap();
    assert_eq!(state.status(), 404);
    let poll = plain
        .post(format!("{}/v1/executors/poll", r.page_base))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(poll.status(), 404);
    let metrics = plain
        .get(format!("{}/metrics", r.page_base))
        .bearer_auth(&r.secret)
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status(), 404);
}

// -- the key-value store (`kv.rs`) --------------------------------------------------------

impl Running {
    fn kv(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}/v1/kv{path}", self.base))
            .bearer_auth(&self.secret)
    }
    /// GETs `/v1/kv` + `path` and decodes the JSON body.
    async fn kv_json<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        let resp = self.kv(reqwest::Method::GET, path).send().await.unwrap();
        resp.json().await.unwrap()
    }
}

#[tokio::test]
async fn kv_put_get_list_delete_with_slashes_in_keys() {
    use reqwest::Method;
    let r = start().await;
    let put = |k: &str, v: &str| r.kv(Method::PUT, k).body(v.to_string()).send();
    let a = put("/dask%2Fscheduler", "tcp://nm1:8786").await.unwrap();
    assert_eq!(a.status(), 200);
    let stored: yarn_am_wire::kv::KvStored = a.json().await.unwrap();
    assert_eq!((stored.key.as_str(), stored.version), ("dask/scheduler", 1));
    // A literal slash in the path is the same key.
    assert_eq!(put("/dask/workers/1", "w1").await.unwrap().status(), 200);
    assert_eq!(put("/other", "o").await.unwrap().status(), 200);
    let e: yarn_am_wire::kv::KvEntry = r.kv_json("/dask/scheduler").await;
    assert_eq!((e.value.as_str(), e.version), ("tcp://nm1:8786", 1));
    let l: yarn_am_wire::kv::KvListing = r.kv_json("?prefix=dask%2F").await;
    let keys: Vec<_> = l.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["dask/scheduler", "dask/workers/1"]);
    assert_eq!(l.revision, 3);
    let d = r.kv(Method::DELETE, "/other").send().await.unwrap();
    assert_eq!(d.status(), 200);
    let gone = r.kv(Method::GET, "/other").send().await.unwrap();
    assert_eq!(gone.status(), 404);
    let err: ApiError = gone.json().await.unwrap();
    assert!(err.error.contains("no key \"other\""), "{}", err.error);
}

#[tokio::test]
async fn kv_an_oversized_value_is_413_and_a_bad_request_400_with_nothing_stored() {
    use reqwest::Method;
    let r = start().await;
    let big = "x".repeat((64 << 10) + 1);
    let resp = r.kv(Method::PUT, "/k").body(big).send().await.unwrap();
    assert_eq!(resp.status(), 413);
    let err: ApiError = resp.json().await.unwrap();
    assert!(err.error.contains("nothing stored"), "{}", err.error);
    let long_key = format!("/{}", "k".repeat(1025));
    let resp = r.kv(Method::PUT, &long_key).body("v").send().await.unwrap();
    assert_eq!(resp.status(), 400);
    let not_text = r
        .kv(Method::PUT, "/k")
        .body(vec![0xff, 0xfe])
        .send()
        .await
        .unwrap();
    assert_eq!(not_text.status(), 400);
    for q in ["/k?wait=x", "/k?wait=61", "/k?after=3"] {
        let resp = r.kv(Method::GET, q).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{q}");
    }
    assert_eq!(r.kv(Method::GET, "/k").send().await.unwrap().status(), 404);
}

#[tokio::test]
async fn kv_a_watch_answers_when_the_key_appears_or_changes_and_404s_at_its_end() {
    use reqwest::Method;
    let r = Arc::new(start().await);
    let waiter = {
        let r = r.clone();
        tokio::spawn(async move {
            let t0 = std::time::Instant::now();
            let resp = r.kv(Method::GET, "/addr?wait=10").send().await.unwrap();
            (resp.status(), resp.text().await.unwrap(), t0.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    r.kv(Method::PUT, "/unrelated")
        .body("u")
        .send()
        .await
        .unwrap();
    r.kv(Method::PUT, "/addr").body("a1").send().await.unwrap();
    let (status, body, took) = waiter.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"a1\""), "{body}");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(5),
        "{took:?}"
    );
    // Present, not above the version seen: waits, then a 404 naming the version.
    let get = |path: &'static str| r.kv(Method::GET, path).send();
    let resp = get("/addr?wait=1&after=2").await.unwrap();
    assert_eq!(resp.status(), 404);
    let err: ApiError = resp.json().await.unwrap();
    assert!(err.error.contains("above 2 within 1 s"), "{}", err.error);
    // Present above `after`: at once.
    let resp = get("/addr?wait=30&after=1").await.unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn kv_a_containers_key_opens_the_store_and_nothing_else() {
    use reqwest::Method;
    use yarn_am_wire::kv::{auth_header, kv_key, KV_AUTH_HEADER};
    let r = start().await;
    let container = "container_1_0001_01_000002";
    let good = auth_header(container, &kv_key(r.secret.as_bytes(), container));
    // The status of `method path` with `credential` in the container's header (if any).
    let status = |method: Method, path: &str, credential: Option<&str>, body: &str| {
        let mut req = r
            .http
            .request(method, format!("{}{path}", r.base))
            .body(body.to_string());
        if let Some(c) = credential {
            req = req.header(KV_AUTH_HEADER, c);
        }
        async move { req.send().await.unwrap().status() }
    };
    let key = "/v1/kv/from-task";
    assert_eq!(status(Method::PUT, key, Some(&good), "hi").await, 200);
    assert_eq!(status(Method::GET, key, Some(&good), "").await, 200);
    // The same key under another container's name, no credential: refused.
    let forged = auth_header(
        "container_1_0001_01_000003",
        &kv_key(r.secret.as_bytes(), container),
    );
    assert_eq!(status(Method::GET, key, Some(&forged), "").await, 401);
    assert_eq!(status(Method::GET, key, None, "").await, 401);
    // No other endpoint takes it.
    for path in ["/v1/state", "/metrics"] {
        assert_eq!(
            status(Method::GET, path, Some(&good), "").await,
            401,
            "{path}"
        );
    }
    let demand = r#"{"target_executors": 1}"#;
    assert_eq!(
        status(Method::POST, "/v1/demand", Some(&good), demand).await,
        401
    );
    assert!(r.demands.lock().unwrap().is_empty());
}

#[tokio::test]
async fn kv_a_long_poll_outlives_the_header_read_timeout() {
    let r = start().await;
    let t0 = std::time::Instant::now();
    let resp = r
        .kv(reqwest::Method::GET, "/nothing?wait=12")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404, "{:?}", t0.elapsed());
    assert!(t0.elapsed() >= Duration::from_secs(12));
}
