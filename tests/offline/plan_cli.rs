//! `yarn-am plan` as a user runs it: JSON in, JSON out, exit code 2 on bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

fn plan(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_yarn-am"))
        .arg("plan")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yarn-am runs");
    // The process may exit without reading stdin (bad flags, a file argument).
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

fn issue_input() -> Value {
    json!({"target_executors": 16, "tasks_per_executor": 2, "locality_aware_tasks": 30,
           "host_to_local_task_count": {"h1": 30, "h2": 30, "h3": 20, "h4": 10},
           "running": {"h1": 1, "h2": 1, "h3": 1, "h4": 1}, "starting": 0,
           "pending": [["h1", "h2"], []], "racks": {"h1": "/rack1"}})
}

fn ok_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn bad(args: &[&str], input: &str, mentions: &str) {
    let out = plan(args, input);
    assert_eq!(out.status.code(), Some(2), "input {input}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(mentions),
        "stderr {err:?} should mention {mentions:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn issue_example_spark() {
    let out = plan(&["--strategy", "spark", "-"], &issue_input().to_string());
    assert_eq!(
        ok_json(&out),
        json!({"cancel": [1], "add": [
            {"count": 3, "nodes": ["h1","h2","h3","h4"], "racks": ["/default-rack","/rack1"]},
            {"count": 6, "nodes": ["h1","h2","h3"], "racks": ["/default-rack","/rack1"]},
            {"count": 2, "nodes": ["h1","h2"], "racks": ["/default-rack","/rack1"]}]})
    );
}

#[test]
fn worked_example_from_a_file_with_both_strategies() {
    let mut input = issue_input();
    input["pending"] = json!([]);
    input.as_object_mut().unwrap().remove("racks");
    let path = std::env::temp_dir().join(format!("yarn-am-plan-{}.json", std::process::id()));
    std::fs::write(&path, input.to_string()).unwrap();
    let spark = json!({"cancel": [], "add": [
        {"count": 3, "nodes": ["h1","h2","h3","h4"], "racks": ["/default-rack"]},
        {"count": 6, "nodes": ["h1","h2","h3"], "racks": ["/default-rack"]},
        {"count": 3, "nodes": ["h1","h2"], "racks": ["/default-rack"]}]});
    // The default's fresh placement (nothing local pending) names each host as often as its
    // share of the stage's work (task count over all hosts' counts, of 12 executors), one host a
    // request: docs/allocator.md's worked example, 4 x h1, 4 x h2, 3 x h3, 1 x h4.
    let default = json!({"cancel": [], "add": [
        {"count": 1, "nodes": ["h4"], "racks": ["/default-rack"]},
        {"count": 3, "nodes": ["h3"], "racks": ["/default-rack"]},
        {"count": 4, "nodes": ["h1"], "racks": ["/default-rack"]},
        {"count": 4, "nodes": ["h2"], "racks": ["/default-rack"]}]});
    for (strategy, expected) in [("spark", spark), ("default", default)] {
        let out = plan(&["--strategy", strategy, path.to_str().unwrap()], "");
        assert_eq!(ok_json(&out), expected, "{strategy}");
    }
    std::fs::remove_file(path).ok();
}

#[test]
fn any_host_group_has_empty_lists() {
    let input = json!({"target_executors": 3, "tasks_per_executor": 1, "locality_aware_tasks": 0,
        "host_to_local_task_count": {}, "running": {}, "starting": 1, "pending": []});
    assert_eq!(
        ok_json(&plan(&["--strategy", "spark"], &input.to_string())),
        json!({"cancel": [], "add": [{"count": 2, "nodes": [], "racks": []}]})
    );
}

#[test]
fn default_accepts_cluster_fields() {
    // dn1 runs no NodeManager; nm1 is full (3 of 3); nm2 has room, and its 4 tasks keep
    // ceil(4 x 8 / 12) = 3 executors busy, so 3 of the 5 requests name it (and its rack only:
    // the fresh placement puts each named request on its host); the 2 that can name no host
    // ask for /r1, the rack of dn1 and nm1, as Spark's would.
    let input = json!({"target_executors": 8, "tasks_per_executor": 1, "locality_aware_tasks": 12,
        "host_to_local_task_count": {"dn1": 4, "nm1": 4, "nm2": 4}, "running": {"nm1": 3}, "starting": 0,
        "pending": [], "racks": {"dn1": "/r1", "nm1": "/r1"}, "nodes": ["nm1", "nm2"], "capacity": {"nm1": 3},
        "excluded": []});
    assert_eq!(
        ok_json(&plan(&[], &input.to_string())),
        json!({"cancel": [], "add": [
            {"count": 3, "nodes": ["nm2"], "racks": ["/default-rack"]},
            {"count": 2, "nodes": [], "racks": ["/r1"]}]})
    );
    bad(
        &["--strategy", "spark"],
        &input.to_string(),
        "unknown field",
    );
}

#[test]
fn bad_input_exits_2_with_a_message() {
    bad(&[], "{not json", "bad allocator state");
    bad(&[], "", "EOF");
    let mut missing = issue_input();
    missing.as_object_mut().unwrap().remove("starting");
    bad(
        &["--strategy", "spark"],
        &missing.to_string(),
        "missing field `starting`",
    );
    let mut negative = issue_input();
    negative["target_executors"] = json!(-1);
    bad(
        &[],
        &negative.to_string(),
        "target_executors must not be negative",
    );
    let mut negative_host = issue_input();
    negative_host["running"]["h2"] = json!(-3);
    bad(
        &["--strategy", "spark"],
        &negative_host.to_string(),
        "running[\"h2\"] must not be negative",
    );
    let mut zero = issue_input();
    zero["tasks_per_executor"] = json!(0);
    bad(
        &[],
        &zero.to_string(),
        "tasks_per_executor must be at least 1",
    );
    let mut unknown = issue_input();
    unknown["surprise"] = json!(true);
    bad(
        &["--strategy", "default"],
        &unknown.to_string(),
        "unknown field `surprise`",
    );
    let mut wrong_type = issue_input();
    wrong_type["pending"] = json!("h1");
    bad(&[], &wrong_type.to_string(), "bad allocator state");
    bad(
        &["--strategy", "fastest"],
        &issue_input().to_string(),
        "unknown strategy `fastest`",
    );
    bad(&["/nonexistent/state.json"], "", "/nonexistent/state.json");
}

/// Security audit L7: a count near `u32::MAX` used to abort the process (two arrays of that
/// many items in the default strategy's level caps); every count is now limited and the
/// message names the field.
#[test]
fn extreme_counts_are_refused_naming_the_field() {
    for field in ["target_executors", "locality_aware_tasks", "starting"] {
        let mut input = issue_input();
        input[field] = json!(4_294_967_295u64);
        for strategy in ["spark", "default"] {
            bad(
                &["--strategy", strategy],
                &input.to_string(),
                &format!("{field} is too large (got 4294967295, at most 10000000)"),
            );
        }
    }
    let mut host = issue_input();
    host["host_to_local_task_count"]["h1"] = json!(10_000_001);
    bad(
        &[],
        &host.to_string(),
        "host_to_local_task_count[\"h1\"] is too large",
    );
    // The largest accepted state is planned, not aborted.
    let mut big = issue_input();
    big["target_executors"] = json!(10_000_000);
    big["locality_aware_tasks"] = json!(10_000_000);
    big["host_to_local_task_count"] = json!({"h1": 10_000_000, "h2": 9_000_000, "h3": 1});
    let out = ok_json(&plan(&["--strategy", "default"], &big.to_string()));
    assert!(
        out["add"].as_array().is_some_and(|a| !a.is_empty()),
        "{out}"
    );
}

/// `yarn-am plan < state | head -0`: a reader that is gone before the answer is written
/// ends the command quietly with the shell's broken-pipe code, not a panic.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_yarn-am"))
        .arg("plan")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yarn-am runs");
    // The reader goes first; the input comes after, so the answer always meets a closed pipe.
    drop(child.stdout.take());
    let input = issue_input().to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
