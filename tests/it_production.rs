//! Submission settings of production clusters (issue 26), on the real cluster: priority,
//! application type and a lifetime, each as the RM reports it, and the lifetime ending the
//! app at its deadline with diagnostics that say so.

#[path = "support/am.rs"]
mod am;
#[path = "support/cluster.rs"]
mod cluster;

use std::time::{Duration, Instant};

#[tokio::test]
async fn priority_type_and_a_lifetime_that_ends_the_app() {
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let t0 = Instant::now();
    let app = am::submit(
        c,
        "it-lifetime",
        &[
            "--executors",
            "1",
            "--keep-running",
            "--priority",
            "5",
            "--lifetime",
            "15",
            "--application-type",
            "YARN-AM-IT",
            "--attempt-failures-validity-interval",
            "60000",
        ],
    );
    let rest = am::rest(c);
    let r = rest.app(&app).await.unwrap();
    assert_eq!((r.priority, r.application_type.as_str()), (5, "YARN-AM-IT"));
    let timeouts = rest
        .get_value(&format!("/ws/v1/cluster/apps/{app}/timeouts"))
        .await
        .unwrap();
    let lifetime = &timeouts["timeouts"]["timeout"][0];
    assert_eq!(lifetime["type"], "LIFETIME", "{timeouts}");
    assert_ne!(lifetime["expiryTime"], "UNLIMITED", "{timeouts}");
    let end = rest
        .wait_final(&app, Duration::from_secs(90))
        .await
        .unwrap();
    let took = t0.elapsed();
    eprintln!(
        "killed by its lifetime {took:?} after submit: {}",
        end.diagnostics
    );
    assert_eq!(end.state, "KILLED", "{}", end.diagnostics);
    assert!(end.diagnostics.contains("lifetime"), "{}", end.diagnostics);
    assert!(
        took >= Duration::from_secs(14),
        "killed before its lifetime: {took:?}"
    );
}
