//! Containers as a Skein or DistributedShell user runs them, on the real
//! cluster: an `--executor-command` and an `--executor-env` value reach bash exactly as
//! typed; an executors-only app ends by itself (SUCCEEDED when every executor exited 0,
//! FAILED at the failure limit); `submit --wait --wait-timeout` on a longer app exits 4.

use crate::support::am;
use crate::support::cluster;
use crate::support::gate;

use std::path::PathBuf;
use std::process::Output;

use am::{rest, submitted_app, text, yarn_am};

/// `yarn-am submit --wait` with one attempt and `args`; the app is tracked for cleanup.
fn submit_and_wait(c: &cluster::Cluster, name: &str, args: &[&str]) -> (Output, String) {
    let out = yarn_am(c)
        .args(["submit", "--wait", "--wait-timeout", "180", "--name", name])
        .args(["--max-attempts", "1"])
        .args(args)
        .output()
        .unwrap();
    let app = submitted_app(&out);
    (out, app)
}

/// The log folders of the app's executors (every container but the AM's).
fn executor_log_dirs(c: &cluster::Cluster, app: &str) -> Vec<PathBuf> {
    c.container_log_dirs(app)
        .into_iter()
        .filter(|d| !d.to_string_lossy().ends_with("_000001"))
        .collect()
}

/// Quotes of both kinds, `$(...)`, backticks, `$VAR`, a newline between two commands,
/// non-ASCII text and the NodeManager's own markers: bash must run this as written.
const COMMAND: &str = r#"printf '<%s>\n' "$(echo sub shell)" `echo back ticks` 'single "quoted" $HOME' "double 'quoted' \$HOME \`x\`" 'non-ASCII: héllo ✓ 日本' '{{HOME}} <LOG_DIR> <CPS>'
echo "after a newline"
printf '%s' "$LITERAL" > "$YARN_AM_LOG_DIR/literal.out"
cat yarn-am-command.sh > "$YARN_AM_LOG_DIR/script.out""#;

/// What bash prints for [`COMMAND`] (the unquoted backticks' output is split into two
/// words, as bash does).
const EXPECTED_STDOUT: &str = "<sub shell>\n<back>\n<ticks>\n<single \"quoted\" $HOME>\n\
<double 'quoted' $HOME `x`>\n<non-ASCII: héllo ✓ 日本>\n<{{HOME}} <LOG_DIR> <CPS>>\n\
after a newline\n";

/// An environment value with everything the launch script would otherwise expand.
const VALUE: &str = "$(echo no) `echo no` $HOME ${HOME} 'single' \"double\" back\\slash \
{{HOME}} <LOG_DIR> <CPS>\nline two: héllo ✓ 日本 \\";

#[tokio::test]
async fn an_executor_command_and_an_environment_value_run_exactly_as_typed() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let env = format!("LITERAL={VALUE}");
    let (out, app) = submit_and_wait(
        c,
        "it-literal",
        &[
            "--executors",
            "1",
            "--executor-command",
            COMMAND,
            "--executor-env",
            &env,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dirs = executor_log_dirs(c, &app);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let read = |name: &str| {
        std::fs::read_to_string(dirs[0].join(name))
            .unwrap_or_else(|e| panic!("{name} in {}: {e}", dirs[0].display()))
    };
    assert_eq!(
        read("script.out"),
        COMMAND,
        "the script holds the command's bytes"
    );
    assert_eq!(
        read("stdout"),
        EXPECTED_STDOUT,
        "stderr: {}",
        read("stderr")
    );
    assert_eq!(read("literal.out"), VALUE);
}

#[tokio::test]
async fn an_executors_only_app_succeeds_when_every_executor_exited_0() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let (out, app) = submit_and_wait(
        c,
        "it-exit-0",
        &["--executors", "3", "--executor-command", "exit 0"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = rest(c).app(&app).await.unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "SUCCEEDED")
    );
    assert!(
        r.diagnostics.contains("all 3 executors exited 0"),
        "{}",
        r.diagnostics
    );
    assert_eq!(executor_log_dirs(c, &app).len(), 3, "none replaced");
}

#[tokio::test]
async fn an_executors_only_app_fails_at_the_failure_limit() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let (out, app) = submit_and_wait(
        c,
        "it-exit-1",
        &["--executors", "3", "--executor-command", "exit 1"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = rest(c).app(&app).await.unwrap();
    assert_eq!(
        (r.state.as_str(), r.final_status.as_str()),
        ("FINISHED", "FAILED")
    );
    // max(2 x 3 executors, 3) = 6: failed executors were restarted until then (the count
    // may pass it when several containers end in one allocate answer).
    let failures: u32 = r
        .diagnostics
        .split_once(" executor failures (limit 6)")
        .and_then(|(n, _)| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", r.diagnostics));
    assert!((6..=8).contains(&failures), "{}", r.diagnostics);
    assert!(r.diagnostics.contains("exit code 1"), "{}", r.diagnostics);
    assert!(executor_log_dirs(c, &app).len() >= 6);
}

#[tokio::test]
async fn wait_timeout_exits_4_and_leaves_the_app_running() {
    let _turn = gate::shared();
    let c = cluster::cluster();
    let _logs = cluster::LogsOnFailure(c);
    let out = yarn_am(c)
        .args([
            "submit",
            "--wait",
            "--wait-timeout",
            "1",
            "--name",
            "it-wait-timeout",
        ])
        .args(["--max-attempts", "1", "--executors", "1"])
        .args(["--executor-command", "sleep 600"])
        .output()
        .unwrap();
    let app = submitted_app(&out);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("it keeps running"), "{}", text(&out));
    let r = rest(c).app(&app).await.unwrap();
    assert!(!r.is_final(), "{}", r.state);
    // Still running, it still needs its staging folder.
    let staging = am::Staged::of(c, &String::from_utf8_lossy(&out.stdout));
    assert!(staging.exists().await, "{}", text(&out));
    let kill = yarn_am(c).args(["kill", &app]).output().unwrap();
    assert!(kill.status.success(), "{}", text(&kill));
}
