//! SASL integrity and privacy on the AM's token connections, on the real cluster: with
//! `hadoop.rpc.protection` set to `privacy` (then `integrity`) the RM offers the AMRM token
//! qop `auth-conf` (`auth-int`) and so do the NodeManagers to NM tokens; the sample job must
//! still run all its tasks, and the AM must have negotiated that qop with both.
//!
//! This test restarts the shared cluster in those profiles (`cluster.sh up --rpc-protection
//! ...`), alone on it; `scripts/test.sh` runs it in a pass of its own (`qop_cluster`).

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::path::Path;
use std::time::Instant;

/// The AM's log lines that report a negotiated security layer.
fn layer_lines(c: &cluster::Cluster, app: &str) -> Vec<String> {
    let dir = am::am_log_dir(c, app).expect("AM log dir");
    std::fs::read_to_string(dir.join("stderr"))
        .expect("AM stderr")
        .lines()
        .filter(|l| l.contains("SASL security layer negotiated"))
        .map(String::from)
        .collect()
}

#[test]
fn qop_cluster_runs_the_sample_job_under_privacy_and_integrity() {
    let _turn = gate::alone();
    let started = Instant::now();
    for (protection, qop) in [("privacy", "auth-conf"), ("integrity", "auth-int")] {
        let phase = Instant::now();
        let c: &'static cluster::Cluster = Box::leak(Box::new(cluster::start_profile(&[
            "--rpc-protection",
            protection,
        ])));
        let restarted = phase.elapsed();
        let _logs = cluster::LogsOnFailure(c);
        let out = am::yarn_am(c)
            .args(["submit", "--wait", "--wait-timeout", "240"])
            .args(["--max-attempts", "1", "--name"])
            .arg(format!("it-qop-{protection}"))
            .arg("--job")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/examples/job.json"))
            .output()
            .unwrap();
        let all = am::text(&out);
        assert!(out.status.success(), "{protection}: {all}");
        let app = am::submitted_app(&out);
        let report = am::job_report(c, &app);
        assert!(report.succeeded, "{protection}: {report:?}");
        assert_eq!(
            (report.tasks_total, report.tasks_succeeded),
            (60, 60),
            "{protection}"
        );
        let lines = layer_lines(c, &app);
        let rm = lines
            .iter()
            .any(|l| l.contains(":8030") && l.contains(&format!("qop={qop}")));
        let nm = lines
            .iter()
            .any(|l| !l.contains(":8030") && l.contains(&format!("qop={qop}")));
        assert!(
            rm && nm,
            "{protection}: want qop {qop} with the RM and an NM; AM logged {lines:#?}"
        );
        assert!(
            lines.iter().all(|l| l.contains(&format!("qop={qop}"))),
            "{protection}: {lines:#?}"
        );
        eprintln!(
            "{protection}: cluster ready in {restarted:?}, job and checks in {:?}, {} connections \
             with qop {qop}",
            phase.elapsed() - restarted,
            lines.len()
        );
    }
    eprintln!("it_qop total: {:?}", started.elapsed());
}
