//! Auxiliary-service data in executors' launch contexts (`submit --service-data`)
//! on the real cluster. Spark's shuffle service is not available to the test cluster, so the
//! NodeManagers run Hadoop's own auxiliary service, MapReduce's ShuffleHandler, as
//! `mapreduce_shuffle` (`cluster.sh mapreduce`), whose `initializeApplication` reads its
//! service data as a serialised job token and logs `Added token for job_<app>` in the NM's
//! log: so the log line is there only if the bytes reached the service under its name and
//! parsed. A name the NMs do not run makes each NM refuse the executor; the app fails at the
//! executor-failure limit with the NM's message in its diagnostics.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::time::Duration;

use am::{rest, submit};

/// A Hadoop `Token` in its Writable form (identifier, password, kind, service, each a
/// vint length, here one byte, then the bytes), as ShuffleHandler reads its service data.
fn writable_token(identifier: &[u8], password: &[u8], kind: &str, service: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for field in [identifier, password, kind.as_bytes(), service.as_bytes()] {
        assert!(field.len() < 128);
        out.push(field.len() as u8);
        out.extend_from_slice(field);
    }
    out
}

/// The NodeManagers' logs joined (both backends write them under `<runtime>/logs`).
fn nm_logs(c: &cluster::Cluster) -> String {
    ["nm1", "nm2", "nm3"]
        .iter()
        .map(|n| std::fs::read_to_string(c.path(format!("logs/{n}.log"))).unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn service_data_reaches_the_named_auxiliary_service_and_an_unknown_name_is_refused() {
    let _turn = gate::alone();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    // Restarts the NMs that do not run it yet (fetches the MapReduce jars once).
    assert!(
        cluster::cluster_sh("mapreduce"),
        "cluster.sh mapreduce failed"
    );
    let dir = c.path("it-aux");
    std::fs::create_dir_all(&dir).unwrap();
    let token = dir.join("job-token");
    std::fs::write(
        &token,
        writable_token(b"\x05job_x", b"aux-pw-7f3e", "mapreduce.job", ""),
    )
    .unwrap();
    let known = format!("mapreduce_shuffle=@{}", token.display());
    let unknown = format!("no_such_service=@{}", token.display());
    let ok = submit(
        c,
        "it-aux-known",
        &[
            "--executors",
            "2",
            "--executor-command",
            "exit 0",
            "--service-data",
            &known,
        ],
    );
    let refused = submit(
        c,
        "it-aux-unknown",
        &[
            "--executors",
            "1",
            "--max-executor-failures",
            "2",
            "--executor-command",
            "exit 0",
            "--service-data",
            &unknown,
        ],
    );
    let rm = rest(c);
    let r = rm.wait_final(&ok, Duration::from_secs(120)).await.unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{}",
        r.diagnostics
    );
    assert!(
        r.diagnostics.contains("all 2 executors exited 0"),
        "{}",
        r.diagnostics
    );
    // ShuffleHandler names the app's job after the app: application_<ts>_<n> -> job_<ts>_<n>.
    let job = ok.replacen("application_", "job_", 1);
    let line = format!("Added token for {job}");
    let logs = am::wait_for(
        "the shuffle service's line for the app",
        Duration::from_secs(20),
        || async {
            let logs = nm_logs(c);
            logs.contains(&line).then_some(logs)
        },
    )
    .await;
    assert!(!logs.contains("Error during initApp"), "a bad token");
    eprintln!("NM log: {line}");

    let r = am::wait_failed_via(&rm, &refused, Duration::from_secs(120)).await;
    eprintln!("refused app's diagnostics: {}", r.diagnostics);
    for needle in [
        "executor failures (limit 2)",
        "refused the container: The auxService:no_such_service does not exist",
        "yarn.nodemanager.aux-services",
    ] {
        assert!(
            r.diagnostics.contains(needle),
            "{needle}: {}",
            r.diagnostics
        );
    }
    // The bytes are never in the AM's log.
    let am_log = am::am_log(c, &refused);
    assert!(!am_log.contains("aux-pw-7f3e"), "{am_log}");
}
