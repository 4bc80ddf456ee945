//! A Kerberos cluster (`cluster.sh up --secure`: MIT KDC, secure RM, NMs, NameNode and
//! DataNode, SPNEGO on the RM's REST API and WebHDFS) and yarn-am as the user `alice`:
//!
//! - the sample job (`conf/examples/job.json`) runs 60/60, staged on HDFS through WebHDFS
//!   with SPNEGO; the NMs localise with the HDFS delegation token submit collected, the AM
//!   lists nodes with the RM delegation token and removes the staging folder with the HDFS
//!   one;
//! - a keytab login (`--principal`/`--keytab`) works without any ticket cache;
//! - with a keytab, an application that outlives its HDFS delegation token (the secure
//!   profile sets `dfs.namenode.delegation.token.max-lifetime` to 90 s) still finishes and
//!   its AM removes the staging folder with the token it fetched again;
//! - no ticket, a stale keytab and an expired ticket are clear errors (exit 2) and nothing
//!   is staged or submitted.
//!
//! These tests switch the shared cluster to the secure profile: `scripts/test.sh` runs them
//! (`secure_cluster` in their names, also in it_split and it_spark) in a pass of their own.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use am::text;
use yarn_client::gssapi::{Credential, CredentialSource};
use yarn_client::http_auth::HttpAuth;
use yarn_client::rest::{RestError, RmRest};
use yarn_client::webhdfs::WebHdfs;

const PRINCIPAL: &str = "alice@YARN.TEST";

/// One test at a time: the refusal tests count the RM's application ids.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Secure {
    c: cluster::Cluster,
    kdc: PathBuf,
}

fn secure() -> &'static Secure {
    static S: OnceLock<Secure> = OnceLock::new();
    S.get_or_init(|| {
        let c = cluster::start_profile(&["--secure"]);
        let kdc = c.dir.join("kdc");
        // This process's own Kerberos calls (the checks below) use the test realm.
        std::env::set_var("KRB5_CONFIG", kdc.join("krb5.conf"));
        std::env::set_var("KRB5CCNAME", "FILE:/nonexistent/yarn-am-it-secure.cc");
        Secure { c, kdc }
    })
}

impl Secure {
    fn keytab(&self, name: &str) -> PathBuf {
        self.kdc.join("keytabs").join(name)
    }

    /// alice's login for the test's own REST and WebHDFS checks.
    fn auth(&self) -> HttpAuth {
        static CRED: OnceLock<Arc<Credential>> = OnceLock::new();
        let cred = CRED.get_or_init(|| {
            Arc::new(
                Credential::acquire(&CredentialSource::Keytab {
                    principal: PRINCIPAL.into(),
                    keytab: self.keytab("alice.keytab"),
                })
                .expect("alice's keytab login"),
            )
        });
        HttpAuth::kerberos(cred.clone())
    }

    fn rest(&self) -> RmRest {
        RmRest::new(&self.c.rm_web, "alice", Duration::from_secs(20))
            .unwrap()
            .with_auth(self.auth())
    }

    fn hdfs(&self) -> WebHdfs {
        WebHdfs::new(&self.c.webhdfs, "alice", Duration::from_secs(20))
            .unwrap()
            .with_auth(self.auth())
    }

    /// `yarn-am` with the cluster's configuration and krb5.conf, ticket cache `ccache`.
    fn yarn_am(&self, ccache: &str) -> Command {
        let mut cmd = am::yarn_am(&self.c);
        cmd.env("KRB5_CONFIG", self.kdc.join("krb5.conf"))
            .env("KRB5CCNAME", ccache);
        cmd
    }

    /// `yarn-am submit` of the job at `path` as alice from her keytab, with no ticket
    /// cache, staged through WebHDFS; `extra` goes last.
    fn submit_with_keytab(&self, name: &str, path: &Path, extra: &[&str]) -> Output {
        self.yarn_am("FILE:/nonexistent/no-ticket.cc")
            .args(["submit", "--name", name, "--max-attempts", "1"])
            .args([
                "--webhdfs",
                &self.c.webhdfs,
                "--principal",
                PRINCIPAL,
                "--keytab",
            ])
            .arg(self.keytab("alice.keytab"))
            .arg("--job")
            .arg(path)
            .args(extra)
            .output()
            .unwrap()
    }

    /// alice's ticket cache, as `cluster.sh up` filled it (`kinit` from her keytab).
    fn alice_cache(&self) -> String {
        format!("FILE:{}", self.kdc.join("alice.cc").display())
    }
}

fn sample_job() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/examples/job.json")
}

fn staging_of(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("staging folder: "))
        .unwrap_or_else(|| panic!("no staging folder in {}", text(out)));
    line.split(" on HDFS").next().unwrap().to_string()
}

async fn assert_gone(s: &Secure, dir: &str) {
    let err = s
        .hdfs()
        .status(dir)
        .await
        .expect_err("the staging folder is still on HDFS");
    assert!(err.is_not_found(), "GETFILESTATUS {dir}: {err}");
}

#[tokio::test]
async fn secure_cluster_the_sample_job_runs_as_alice_staged_through_webhdfs() {
    let _turn = gate::shared();
    let _serial = SERIAL.lock().await;
    let s = secure();
    let _logs = cluster::LogsOnFailure(&s.c);
    // The cluster really wants Kerberos: a user name alone is turned away.
    let plain = RmRest::new(&s.c.rm_web, "alice", Duration::from_secs(20)).unwrap();
    match plain.cluster_info().await {
        Err(RestError::NeedsKerberos { .. }) => {}
        other => panic!("user.name on the secure RM: {other:?}"),
    }

    let out = s
        .yarn_am(&s.alice_cache())
        .args([
            "submit",
            "--name",
            "it-secure-sample",
            "--max-attempts",
            "1",
        ])
        .args(["--webhdfs", &s.c.webhdfs, "--job"])
        .arg(sample_job())
        .output()
        .unwrap();
    assert!(out.status.success(), "submit failed: {}", text(&out));
    let app = am::submitted_app(&out);
    let dir = staging_of(&out);
    assert!(dir.starts_with("/user/alice/"), "{dir}");

    let r = am::wait_succeeded_via(&s.rest(), &app, Duration::from_secs(240)).await;
    assert_eq!(r.user, "alice");
    let summary = am::summary_of(&r.diagnostics);
    assert_eq!((summary.tasks_total, summary.tasks_succeeded), (60, 60));
    // submit did not wait: the AM removed the folder, with the HDFS delegation token.
    assert_gone(s, &dir).await;
}

#[tokio::test]
async fn secure_cluster_a_keytab_login_needs_no_ticket_cache() {
    let _turn = gate::shared();
    let _serial = SERIAL.lock().await;
    let s = secure();
    let _logs = cluster::LogsOnFailure(&s.c);
    let job = am::one_task_job("it-secure-keytab", "echo keytab-ok");
    let path = am::write_job(&s.c, "it-secure-keytab", &job);
    let out = s.submit_with_keytab(
        "it-secure-keytab",
        &path,
        &["--wait", "--wait-timeout", "180"],
    );
    assert!(out.status.success(), "submit failed: {}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("user alice"), "{}", text(&out));
    assert!(stdout.contains("1/1 tasks succeeded"), "{}", text(&out));
}

/// A failing login: exit 2, `want` in the message, and no application id asked for and no
/// staging root created (the login is checked before either).
async fn assert_refused(s: &Secure, ccache: &str, login: &[String], want: &[&str]) {
    let root = format!("/user/alice/it-secure-refused-{}", std::process::id());
    let before = s.rest().new_application().await.unwrap().application_id;
    let out = s
        .yarn_am(ccache)
        .args([
            "submit",
            "--name",
            "it-secure-refused",
            "--webhdfs",
            &s.c.webhdfs,
        ])
        .args(login)
        .args(["--staging-dir", &root, "--job"])
        .arg(sample_job())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for w in want {
        assert!(stderr.contains(w), "no {w:?} in {}", text(&out));
    }
    assert!(!stderr.contains("panicked"), "{}", text(&out));
    let after = s.rest().new_application().await.unwrap().application_id;
    let seq = |id: &str| id.rsplit('_').next().unwrap().parse::<u32>().unwrap();
    assert_eq!(
        seq(&after),
        seq(&before) + 1,
        "submit asked the RM for an id"
    );
    assert_gone(s, &root).await;
}

#[tokio::test]
async fn secure_cluster_without_a_ticket_submit_names_kinit_and_keytab_and_stages_nothing() {
    let _turn = gate::alone();
    let _serial = SERIAL.lock().await;
    let s = secure();
    let _logs = cluster::LogsOnFailure(&s.c);
    let want = ["no Kerberos ticket", "kinit", "--keytab"];
    assert_refused(s, "FILE:/nonexistent/no-ticket.cc", &[], &want).await;
}

#[tokio::test]
async fn secure_cluster_a_stale_keytab_and_an_expired_ticket_are_clear_errors() {
    let _turn = gate::alone();
    let _serial = SERIAL.lock().await;
    let s = secure();
    let _logs = cluster::LogsOnFailure(&s.c);
    // alice-stale.keytab holds an older key of alice (cluster.sh exported her twice).
    let login = [
        "--principal".to_string(),
        PRINCIPAL.to_string(),
        "--keytab".to_string(),
        s.keytab("alice-stale.keytab").display().to_string(),
    ];
    let want = [
        "cannot log in as alice@YARN.TEST with the keytab",
        "alice-stale.keytab",
    ];
    assert_refused(s, "FILE:/nonexistent/no-ticket.cc", &login, &want).await;

    // A ticket that lived two seconds.
    let file =
        s.c.dir
            .join(format!("it-secure-expired-{}.cc", std::process::id()));
    let cache = format!("FILE:{}", file.display());
    let kinit = Command::new("kinit")
        .env("KRB5_CONFIG", s.kdc.join("krb5.conf"))
        .args(["-l", "2s", "-c", &cache, "-kt"])
        .arg(s.keytab("alice.keytab"))
        .arg(PRINCIPAL)
        .output()
        .expect("kinit (krb5-user) is installed by scripts/prereqs.sh");
    assert!(kinit.status.success(), "kinit: {}", text(&kinit));
    std::thread::sleep(Duration::from_secs(3));
    assert_refused(s, &cache, &[], &["has expired", "kinit"]).await;
    let _ = std::fs::remove_file(file);
}

#[tokio::test]
async fn secure_cluster_with_a_keytab_an_app_outlives_its_first_hdfs_token() {
    let _turn = gate::shared();
    let serial = SERIAL.lock().await;
    let s = secure();
    let _logs = cluster::LogsOnFailure(&s.c);
    // Past the 90 s max lifetime of the token submit fetched.
    let job = am::one_task_job("it-secure-refresh", "sleep 100 && echo outlived");
    let path = am::write_job(&s.c, "it-secure-refresh", &job);
    let krb5 = format!("KRB5_CONFIG={}", s.kdc.join("krb5.conf").display());
    // The AM finds the test KDC through the same krb5.conf (a real cluster's nodes have it
    // in /etc).
    let out = s.submit_with_keytab("it-secure-refresh", &path, &["--env", &krb5]);
    assert!(out.status.success(), "submit failed: {}", text(&out));
    let app = am::submitted_app(&out);
    let dir = staging_of(&out);
    // The other tests may run while this one waits.
    drop(serial);

    am::wait_succeeded_via(&s.rest(), &app, Duration::from_secs(300)).await;
    let am_log = am::am_log_dir(&s.c, &app)
        .map(|d| std::fs::read_to_string(d.join("stderr")).unwrap_or_default())
        .unwrap_or_default();
    assert!(
        am_log.contains("HDFS delegation token refreshed from the keytab"),
        "no refresh in the AM log:\n{am_log}"
    );
    // Removed after the first token died: with the refreshed one.
    assert_gone(s, &dir).await;
}

/// The audit's M2 on the real cluster: an HDFS outage mid-job (`cluster.sh restart-nn`: the
/// NameNode stopped and started again) makes the AM's WebHDFS calls fail, and none of their
/// errors puts the HDFS delegation token into a container log.
#[tokio::test]
async fn secure_cluster_a_namenode_outage_leaves_no_token_in_any_log() {
    let _turn = gate::alone();
    let serial = SERIAL.lock().await;
    let s = secure();
    let _logs = cluster::LogsOnFailure(&s.c);
    let name = "it-secure-nn-outage";
    let tasks: Vec<_> = (0..60)
        .map(|i| serde_json::json!({"id": format!("t{i:02}"), "command": "sleep 1"}))
        .collect();
    let job = serde_json::json!({"name": name,
        "executor": {"cores": 2, "memory_mb": 256, "min_executors": 2, "max_executors": 2,
                     "idle_timeout_ms": 600000},
        "tasks": tasks});
    let path = am::write_job(&s.c, name, &job);
    let out = s
        .yarn_am(&s.alice_cache())
        .args(["submit", "--name", name, "--max-attempts", "1"])
        .args(["--webhdfs", &s.c.webhdfs, "--job"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "submit failed: {}", text(&out));
    let app = am::submitted_app(&out);
    // Tasks finish (and are journaled on HDFS) every half second or so from here.
    let rest = s.rest();
    am::wait_for("the app running", Duration::from_secs(90), || async {
        let r = rest.app(&app).await.ok()?;
        (r.state == "RUNNING").then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert!(
        cluster::cluster_sh("restart-nn"),
        "cluster.sh restart-nn failed"
    );
    drop(serial);
    let r = am::wait_succeeded_via(&rest, &app, Duration::from_secs(300)).await;
    let summary = am::summary_of(&r.diagnostics);
    assert_eq!(summary.tasks_succeeded, 60, "{}", r.diagnostics);
    // The outage reached the AM: its journal appends failed while the NameNode was down.
    let am_log = am::am_log_dir(&s.c, &app)
        .map(|d| std::fs::read_to_string(d.join("stderr")).unwrap_or_default())
        .unwrap_or_default();
    assert!(
        am_log.contains("could not append to the job journal")
            || am_log.contains("the job journal append failed"),
        "no WebHDFS failure in the AM's log during the outage:\n{am_log}"
    );
    am::assert_no_delegation_token_in_logs(&s.c, &app);
}
