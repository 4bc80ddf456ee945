//! Federation / AMRMProxy: on a cluster whose NodeManagers run the AMRMProxy
//! (`cluster.sh up --amrmproxy`: `yarn.nodemanager.amrmproxy.enabled`, each NM's proxy on
//! `nmN:8049`), the NM that launches the AM container swaps the RM's AMRM token for one of
//! its own, which the RM refuses. The AM finds the proxy in its container's configuration
//! and registers, allocates and unregisters through the proxy of its own node; the sample
//! job runs to SUCCEEDED with executors granted that way. The proxy's own log lines (the
//! NM's `AMRMProxyService`) are the evidence: an AM that talked to the RM directly would
//! leave none (and, with the proxy's token, would not get registered at all).
//!
//! This test restarts the shared cluster in that profile, alone on it; `scripts/test.sh` runs
//! it in a pass of its own (`amrmproxy_cluster`) after the plain ones.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::Duration;

/// The NodeManager's log (`<runtime>/logs/nmN.log`, on either backend).
fn nm_log(c: &cluster::Cluster, nm: &str) -> String {
    std::fs::read_to_string(c.dir.join("logs").join(format!("{nm}.log"))).unwrap_or_default()
}

/// `appattempt_<cluster>_<seq>_000001` of `application_<cluster>_<seq>`.
fn first_attempt(app: &str) -> String {
    format!(
        "appattempt_{}_000001",
        app.strip_prefix("application_").expect("an application id")
    )
}

#[tokio::test]
async fn amrmproxy_cluster_am_registers_allocates_and_unregisters_through_its_nodes_proxy() {
    let _turn = gate::alone();
    let c: &'static cluster::Cluster =
        Box::leak(Box::new(cluster::start_profile(&["--amrmproxy"])));
    let _logs = cluster::LogsOnFailure(c);
    for nm in ["nm1", "nm2", "nm3"] {
        let log = nm_log(c, nm);
        assert!(
            log.contains("AMRMProxyService listening on address"),
            "{nm} runs no AMRMProxy: is the profile's yarn-site in effect?"
        );
    }

    let (_, app) = am::submit_sample_job_and_wait(c, "it-amrmproxy");
    let end = am::wait_succeeded(c, &app, Duration::from_secs(30)).await;
    let summary = am::summary_of(&end.diagnostics);
    assert_eq!(summary.tasks_succeeded, 60, "{}", end.diagnostics);

    let attempt = first_attempt(&app);
    let am_nm = am::am_host(c, &app);
    let am_log = am::am_log(c, &app);
    let chose = am_log
        .lines()
        .find(|l| l.contains("RM scheduler address"))
        .unwrap_or_else(|| panic!("the AM logged no scheduler address:\n{am_log}"));
    eprintln!("AM on {am_nm}: {chose}");
    assert!(
        chose.contains(&format!("scheduler={am_nm}:8049")) && chose.contains("via_amrmproxy=true"),
        "the AM did not choose its node's proxy: {chose}"
    );
    assert!(
        !am_log.contains("registering through the AMRMProxy failed"),
        "the AM fell back to the RM:\n{am_log}"
    );
    // Executors were granted (the job ran on them) and the proxy served every call of the
    // attempt: its registration, allocate calls, and the unregistration.
    let executors = c
        .container_log_dirs(&app)
        .into_iter()
        .filter(|d| !d.to_string_lossy().ends_with("_000001"))
        .count();
    assert!(executors > 0, "no executor container ran");
    let proxy_log = am::wait_for(
        &format!("{am_nm}'s AMRMProxy to log the unregistration of {attempt}"),
        Duration::from_secs(15),
        || async {
            let log = nm_log(c, &am_nm);
            log.lines()
                .any(|l| {
                    l.contains("FinishAM finished with isUnregistered = true")
                        && l.contains(&attempt)
                })
                .then_some(log)
        },
    )
    .await;
    let of_attempt = |what: &str| {
        proxy_log
            .lines()
            .filter(|l| l.contains(what) && l.contains(&attempt))
            .count()
    };
    let (registered, allocates) = (
        of_attempt("RegisteringAM Host:"),
        of_attempt("Allocate processing finished"),
    );
    eprintln!(
        "{am_nm}'s AMRMProxy for {attempt}: {registered} registration(s), {allocates} allocate \
         calls, {executors} executor containers"
    );
    assert_eq!(registered, 1, "the proxy saw no registration of {attempt}");
    assert!(allocates > 0, "the proxy saw no allocate call of {attempt}");
    // The other nodes' proxies saw nothing of it: the AM's own node holds its token.
    for nm in ["nm1", "nm2", "nm3"].into_iter().filter(|n| *n != am_nm) {
        assert!(
            !nm_log(c, nm).contains(&format!("for application {attempt}")),
            "{nm}'s proxy served {attempt}"
        );
    }
}
