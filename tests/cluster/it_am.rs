//! The ApplicationMaster end to end on the real cluster: submitted with `yarn-am submit`,
//! driven through its driver API, ended by the driver, by `yarn-am kill` and by SIGTERM.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::{Duration, Instant};

use am::{executors_of, live, rest, submit, submit_one_executor, text, wait_for, yarn_am, Driver};
use serde_json::json;

async fn final_report(c: &cluster::Cluster, app: &str) -> yarn_client::rest::AppReport {
    let r = rest(c)
        .wait_final(app, Duration::from_secs(60))
        .await
        .unwrap();
    assert!(r.is_final(), "{app} still {} after 60 s", r.state);
    r
}

#[tokio::test]
async fn demand_places_executors_near_their_tasks_then_shrinks_kills_and_finishes() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // 1 GiB executors: each 4 GiB node holds at most 4, so capacity limits are reachable.
    let submitted = Instant::now();
    let app = submit(
        c,
        "it-demand",
        &[
            "--executors",
            "0",
            "--max-executors",
            "40",
            "--executor-memory",
            "1024",
            "--executor-command",
            "sleep 600",
        ],
    );
    let d = Driver::find(c, &app).await;

    // Unauthenticated calls are refused and change nothing.
    let anon = d
        .http
        .post(format!("{}/v1/demand", d.url))
        .json(&json!({"target_executors": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(anon.status(), 401);
    assert_eq!(d.state().await["demand"]["target_executors"], 0);

    d.assert_tls_only_with_its_pin().await;

    // 6 executors for tasks preferring nm1 (4 tasks) and nm3 (8 tasks).
    d.post(
        "/v1/demand",
        json!({"target_executors": 6, "locality_aware_tasks": 12,
               "host_to_local_task_count": {"nm1": 4, "nm3": 8}}),
    )
    .await;
    d.wait_running(6, Duration::from_secs(90)).await;
    let to_six = submitted.elapsed();
    let execs = executors_of(&d.state().await);
    let live_execs = live(&execs);
    assert_eq!(live_execs.len(), 6);
    let mut node_local = 0;
    for e in &live_execs {
        let host = e["host"].as_str().unwrap();
        match e["locality"].as_str().unwrap() {
            "node" => {
                assert!(host == "nm1" || host == "nm3", "node-local on {host}: {e}");
                node_local += 1;
            }
            "rack" => assert!(
                e["rack"] == "/rack2" || e["rack"] == "/rack1",
                "rack-local without a rack: {e}"
            ),
            "any" => {}
            other => panic!("unknown locality {other}"),
        }
    }
    let hosts: Vec<String> = live_execs
        .iter()
        .map(|e| format!("{}@{}", e["host"].as_str().unwrap(), e["locality"]))
        .collect();
    eprintln!(
        "placement: {hosts:?}, {node_local} of 6 node-local; submit -> 6 running in {to_six:?}"
    );
    // nm3 holds 4 such executors and nm1 3 or 4 (the AM may sit there): node-local is
    // possible for all 6; YARN's locality delay may let a few fall back to rack or any.
    assert!(
        node_local >= 4,
        "only {node_local} of 6 node-local: {hosts:?}"
    );

    // More than the cluster holds: requests stay pending; lowering the demand cancels them.
    d.post("/v1/demand", json!({"target_executors": 30})).await;
    wait_for("pending requests", Duration::from_secs(30), || async {
        let s = d.state().await;
        let pending =
            s["pending"]["locality"].as_u64().unwrap() + s["pending"]["any_host"].as_u64().unwrap();
        (pending > 0 && s["running"].as_u64().unwrap() >= 8).then_some(())
    })
    .await;
    let before = d.state().await;
    d.post("/v1/demand", json!({"target_executors": 2})).await;
    let after = wait_for(
        "pending requests cancelled",
        Duration::from_secs(20),
        || async {
            let s = d.state().await;
            (s["pending"]["locality"] == 0 && s["pending"]["any_host"] == 0).then_some(s)
        },
    )
    .await;
    eprintln!(
        "pending before {} / after {}",
        before["pending"], after["pending"]
    );
    // No new executor after the cancel: containers already starting may still come up, but
    // nothing beyond them (a fresh-clone run once saw a starting one turn running here).
    let live_now = after["running"].as_u64().unwrap() + after["starting"].as_u64().unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let later = d.state().await;
    let live_later = later["running"].as_u64().unwrap() + later["starting"].as_u64().unwrap();
    assert!(
        live_later <= live_now,
        "{live_later} live executors after the cancel, {live_now} at it"
    );

    // Killing executors releases their containers; YARN reports them completed by the AM.
    let ids: Vec<String> = live(&executors_of(&d.state().await))
        .iter()
        .take(2)
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let outcome = d
        .post(
            "/v1/executors/kill",
            json!({"executor_ids": [ids[0], ids[1], "999"]}),
        )
        .await;
    assert_eq!(outcome["killed"], json!([ids[0], ids[1]]));
    assert_eq!(outcome["unknown"], json!(["999"]));
    for id in &ids {
        let reason = wait_for("a loss reason", Duration::from_secs(30), || async {
            let r = d.get(&format!("/v1/executors/{id}/loss-reason")).await;
            (r["state"] == "exited").then_some(r)
        })
        .await;
        // -100: ABORTED, "Container released by application".
        assert_eq!(reason["exit_status"], -100, "{reason}");
        assert_eq!(reason["counts_against_app"], false, "{reason}");
        assert!(
            reason["reason"]
                .as_str()
                .unwrap()
                .contains("released by the AM"),
            "{reason}"
        );
    }

    let metrics = d.get_text("/metrics").await;
    let rss = metrics
        .lines()
        .find_map(|l| l.strip_prefix("yarn_am_process_resident_memory_bytes "))
        .and_then(|v| v.parse::<u64>().ok())
        .expect("RSS in /metrics");
    eprintln!("AM RSS {:.1} MiB", rss as f64 / 1048576.0);

    // The tracking page is reachable through the RM's web proxy.
    let page = reqwest::get(format!("http://{}/proxy/{app}/", c.rm_web))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains(&format!("yarn-am — {app}")), "{page}");
    assert!(page.contains("Executors per host"));

    d.post(
        "/v1/finish",
        json!({"status": "succeeded", "diagnostics": "driver is done"}),
    )
    .await;
    let r = final_report(c, &app).await;
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED")
    );
    assert!(
        r.diagnostics.contains("driver is done"),
        "{}",
        r.diagnostics
    );
}

#[tokio::test]
async fn failing_executors_are_replaced_until_the_limit_then_yarn_retries_the_attempt() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let out = yarn_am(c)
        .args([
            "submit",
            "--wait",
            "--wait-timeout",
            "180",
            "--name",
            "it-failing",
            "--max-attempts",
            "2",
            "--executors",
            "1",
            "--max-executors",
            "1",
            "--executor-command",
            "sleep 1; exit 1",
        ])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let app = am::submitted_app(&out);
    let r = rest(c).app(&app).await.unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "FAILED"),
        "{all}"
    );
    // max(2 x max executors, 3) = 3 failures end an attempt, each replaced until then.
    assert!(
        r.diagnostics.contains("3 executor failures (limit 3)"),
        "{}",
        r.diagnostics
    );
    assert!(r.diagnostics.contains("exit code 1"), "{}", r.diagnostics);
    // The first attempt failed without unregistering, so YARN made the second; that one,
    // the last, unregistered FAILED.
    let attempts = am::app_attempts(c, &app).await;
    let attempts = attempts["appAttempts"]["appAttempt"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    let containers = c.container_log_dirs(&app);
    assert_eq!(
        containers.len(),
        8,
        "two attempts, each the AM and 3 executors: {containers:?}"
    );
}

#[tokio::test]
async fn yarn_am_kill_ends_the_app_as_killed() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let (app, _) = submit_one_executor(c, "it-kill").await;
    let out = yarn_am(c).args(["kill", &app]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("state:       KILLED"),
        "{}",
        text(&out)
    );
    let r = final_report(c, &app).await;
    assert_eq!(r.state, "KILLED");
    let status = yarn_am(c).args(["status", &app]).output().unwrap();
    assert_eq!(status.status.code(), Some(3), "{}", text(&status));
}

#[tokio::test]
async fn sigterm_unregisters_the_app_as_killed() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let (app, _) = submit_one_executor(c, "it-sigterm").await;
    // The NM records the AM container's process id; YARN stops containers the same way.
    let pid = am::am_pid(c, &app).expect("AM pid file");
    let rc = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(rc.success());
    let r = final_report(c, &app).await;
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "KILLED"),
        "{}",
        r.diagnostics
    );
    assert!(r.diagnostics.contains("SIGTERM"), "{}", r.diagnostics);
}
