//! The driver API's pinned TLS on an HTTPS-only cluster (`cluster.sh up --https`: `yarn.http.policy` and
//! `dfs.http.policy` `HTTPS_ONLY`, every web server behind the cluster's own CA, which the
//! client is given as `YARN_AM_CA_FILE`): the plain web ports do not answer and a client
//! without the CA is refused; the sample job runs with `yarn-am submit` talking to the RM's
//! REST API and staging through WebHDFS over TLS only, and its AM and executors (the CA file
//! shipped to them) reach the RM over TLS from inside their containers; a live AM's tracking
//! page answers through the RM's https web proxy with its executors' log links on the NMs'
//! https port, and its driver API answers TLS only and refuses a client pinning another
//! certificate.
//!
//! This test restarts the shared cluster in that profile, alone on it; `scripts/test.sh` runs
//! it in a pass of its own (`https_cluster`) after the plain ones.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::path::Path;
use std::time::{Duration, Instant};

use am::{rest, text, yarn_am, Driver};
use serde_json::json;

/// Whether anything answers HTTP at `url` (a refused connection, a reset or a timeout is no).
async fn answers_plain_http(url: &str) -> bool {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
        .get(url)
        .send()
        .await
        .is_ok()
}

#[tokio::test]
async fn https_cluster_runs_the_sample_job_and_the_driver_api_refuses_a_wrong_pin() {
    let _turn = gate::alone();
    let started = Instant::now();
    let c: &'static cluster::Cluster = Box::leak(Box::new(cluster::start_profile(&["--https"])));
    let ready = started.elapsed();
    let _logs = cluster::LogsOnFailure(c);
    let ca = c.ca_file.clone().expect("the https profile has a CA file");

    // HTTPS_ONLY is really on: no plain listener on the RM, an NM or the NameNode, and the
    // TLS ones answer with the cluster CA only.
    for url in [
        "http://rm:8088/ws/v1/cluster/info",
        "http://nm1:8042/ws/v1/node/info",
        "http://rm:9870/webhdfs/v1/?op=GETFILESTATUS&user.name=yarn-am-test",
    ] {
        assert!(!answers_plain_http(url).await, "plain HTTP answered: {url}");
    }
    let info = rest(c).cluster_info().await.expect("RM REST over https");
    eprintln!("RM over https: {info:?}");
    let untrusting = yarn_client::rest::RmRest::with_trust(
        &c.rm_web,
        "yarn-am-test",
        Duration::from_secs(10),
        &yarn_client::tls::TlsTrust::System,
    )
    .unwrap();
    let err = untrusting
        .cluster_info()
        .await
        .expect_err("the cluster's CA is in no system store");
    eprintln!("without the CA: {err}");

    // The sample job, as `make run` submits it, through https RM REST and WebHDFS staging.
    let job_started = Instant::now();
    let out = yarn_am(c)
        .env("YARN_AM_WEBHDFS", &c.webhdfs)
        .args(["submit", "--wait", "--wait-timeout", "240"])
        .args(["--max-attempts", "1", "--name", "it-https-job", "--job"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/examples/job.json"))
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let app = am::submitted_app(&out);
    assert!(
        matches!(am::Staged::of(c, &all), am::Staged::Hdfs(..)),
        "not staged on HDFS: {all}"
    );
    let report = am::job_report(c, &app);
    assert!(report.succeeded, "{report:?}");
    assert_eq!((report.tasks_total, report.tasks_succeeded), (60, 60));
    let job_secs = job_started.elapsed();
    // The AM's log over the NMs' https web services, as `yarn-am logs` reads it.
    let logs = yarn_am(c).args(["logs", &app]).output().unwrap();
    assert!(logs.status.success(), "yarn-am logs: {}", text(&logs));
    assert!(
        String::from_utf8_lossy(&logs.stdout).contains("driver API listening"),
        "yarn-am logs found no AM log: {}",
        text(&logs)
    );

    // A live AM with one executor: its driver API and its tracking page.
    let api_started = Instant::now();
    let api_app = am::submit(
        c,
        "it-https-api",
        &["--executors", "1", "--executor-command", "sleep 600"],
    );
    let d = Driver::find(c, &api_app).await;
    d.wait_running(1, Duration::from_secs(60)).await;

    // The driver API answers only TLS with the certificate the secret file pins.
    d.assert_tls_only_with_its_pin().await;
    assert!(
        !answers_plain_http(&d.url.replacen("https://", "http://", 1)).await,
        "the driver API answered plain HTTP"
    );

    // The tracking page through the RM's web proxy, over https with the cluster CA; the
    // executor's log links point at its NM's https port (scheme-relative).
    let proxy = format!("{}/proxy/{api_app}/", c.rm_url());
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(&ca).unwrap()).unwrap())
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let page = am::wait_for(
        "the tracking page with an executor's log links through the https proxy",
        Duration::from_secs(30),
        || async {
            let resp = http.get(&proxy).send().await.ok()?;
            let page = resp.text().await.ok()?;
            page.contains(":8044/ws/v1/node/containerlogs/")
                .then_some(page)
        },
    )
    .await;
    assert!(page.contains(&format!("yarn-am — {api_app}")), "{page}");
    let tracking = rest(c).app(&api_app).await.unwrap().tracking_url;
    eprintln!("tracking URL: {tracking:?}");

    d.post(
        "/v1/finish",
        json!({"status": "succeeded", "diagnostics": "driver is done"}),
    )
    .await;
    let r = rest(c)
        .wait_final(&api_app, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED")
    );
    eprintln!(
        "it_https: cluster ready in {ready:?}, sample job in {job_secs:?}, driver API and \
         proxy checks in {:?}, total {:?}",
        api_started.elapsed(),
        started.elapsed()
    );
}
