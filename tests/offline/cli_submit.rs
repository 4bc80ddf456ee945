//! `yarn-am submit` / `status` / `kill` on bad input and a dead RM: a message naming what was
//! wrong, exit code 2 ("yarn-am could not do it", apart from 1 = "the app failed"), within the
//! timeout, and nothing submitted. No cluster needed: the RM here is a closed port.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `yarn-am` without the environment `cluster.sh env` exports in `make test` (the RM's address
/// and WebHDFS staging), so each test's flags alone decide.
fn yarn_am(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_yarn-am"))
        .env_remove("YARN_AM_RM_WEB")
        .env_remove("YARN_AM_WEBHDFS")
        .env_remove("YARN_AM_STAGING_DIR")
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("YARN_CONF_DIR")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A loopback port nothing listens on (bound, then released).
fn dead_rm() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap();
    drop(l);
    a.to_string()
}

#[test]
fn submit_to_a_dead_rm_names_it_and_exits_2() {
    let rm = dead_rm();
    let t = Instant::now();
    let out = yarn_am(&["submit", "--rm-web", &rm, "--timeout", "3", "--wait"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&rm), "{}", stderr(&out));
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
}

#[test]
fn status_and_kill_of_a_dead_rm_exit_2() {
    let rm = dead_rm();
    for cmd in ["status", "kill"] {
        let out = yarn_am(&[cmd, "--rm-web", &rm, "--timeout", "3", "application_1_0001"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("application_1_0001"),
            "{cmd}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn status_and_kill_of_a_malformed_app_id_exit_2_naming_it_without_asking_the_rm() {
    let rm = dead_rm();
    for cmd in ["status", "kill"] {
        let t = Instant::now();
        let out = yarn_am(&[cmd, "--rm-web", &rm, "--timeout", "20", "applicaton_1_0001"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("\"applicaton_1_0001\" is not an application id"),
            "{cmd}: {err}"
        );
        // Refused before any RM call: the error names the id, not the RM.
        assert!(!err.contains(&rm), "{cmd}: {err}");
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
}

#[test]
fn a_malformed_job_file_is_refused_before_anything_is_submitted() {
    let dir = std::env::temp_dir().join(format!("yarn-am-cli-submit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "truncated.json",
            r#"{"name": "x", "executor": {"cores": 2"#,
            "job",
        ),
        (
            "unknown.json",
            r#"{"name": "x", "executor": {"cores": 2, "memory_mb": 256},
                "tasks": [{"id": "a", "command": "true", "cpu": 1}]}"#,
            "tasks[0]",
        ),
        (
            "empty.json",
            r#"{"name": "x", "executor": {"cores": 2, "memory_mb": 256}, "tasks": []}"#,
            "task",
        ),
        (
            "forever.json",
            r#"{"name": "x", "executor": {"cores": 2, "memory_mb": 256},
                "allocation": {"backlog_timeout_ms": 18446744073709551615},
                "tasks": [{"id": "a", "command": "true"}]}"#,
            "allocation.backlog_timeout_ms is 18446744073709551615 ms, above the limit",
        ),
        (
            "cores.json",
            r#"{"name": "x", "executor": {"cores": 4294967295, "memory_mb": 256},
                "tasks": [{"id": "a", "command": "true"}]}"#,
            "executor.cores is 4294967295, above YARN's limit",
        ),
        // Made sparse below, 1 byte over 64 MiB: refused by its size, not read.
        (
            "huge.json",
            "",
            "has 67108865 bytes, above the limit of 67108864 bytes",
        ),
    ];
    // The RM address is dead on purpose: a job that got past validation would fail there
    // with another message.
    let rm = dead_rm();
    for (file, text, names) in cases {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        if text.is_empty() {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len((64 << 20) + 1).unwrap();
        }
        let out = yarn_am(&[
            "submit",
            "--rm-web",
            &rm,
            "--timeout",
            "3",
            "--job",
            path.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(
            err.contains(file),
            "{file}: the message should name the file: {err}"
        );
        assert!(err.contains(names), "{file}: {err}");
        assert!(!err.contains(&rm), "{file}: got as far as the RM: {err}");
        assert!(!err.contains("panicked"), "{file}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// An environment name the launch script could not export, or flags that contradict each
/// other, are refused with exit 2 before the RM is asked (its address is dead here).
#[test]
fn bad_environment_names_and_contradicting_flags_exit_2_before_asking_the_rm() {
    let rm = dead_rm();
    for (flag, pair, names) in [
        (
            "--executor-env",
            "1X=y",
            "\"1X\" is not an environment variable name",
        ),
        (
            "--env",
            "A-B=y",
            "\"A-B\" is not an environment variable name",
        ),
        (
            "--env",
            "A B=$(x)",
            "\"A B\" is not an environment variable name",
        ),
        ("--executor-env", "=y", "wants KEY=VALUE"),
        ("--executor-env", "novalue", "wants KEY=VALUE"),
    ] {
        let out = yarn_am(&["submit", "--rm-web", &rm, "--timeout", "3", flag, pair]);
        assert_eq!(out.status.code(), Some(2), "{pair}: {}", stderr(&out));
        assert!(stderr(&out).contains(names), "{pair}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains(&rm),
            "the RM was asked: {}",
            stderr(&out)
        );
    }
    for args in [
        &["--keep-running", "--job", "job.json"][..],
        &["--max-executor-failures", "0"][..],
        &["--max-executor-failures", "-1"][..],
    ] {
        let out = yarn_am(&[&["submit", "--rm-web", &rm][..], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}

#[test]
fn an_acl_with_a_newline_is_refused_before_asking_the_rm() {
    let rm = dead_rm();
    let out = yarn_am(&["submit", "--rm-web", &rm, "--view-acl", "bob\nmallory"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--view-acl") && err.contains("control character"),
        "{err}"
    );
    assert!(!err.contains(&rm), "asked the RM: {err}");
}

#[test]
fn a_node_label_expression_is_refused_before_asking_the_rm() {
    let rm = dead_rm();
    for bad in ["gpu && fast", "_x", ""] {
        let out = yarn_am(&["submit", "--rm-web", &rm, "--node-label", bad]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("--node-label") && err.contains("not a node label"),
            "{err}"
        );
    }
}

/// A bad `--executor-kind`, one named twice, or kinds beside a job: refused, naming what, and
/// the RM is never asked.
#[test]
fn executor_kinds_are_checked_before_asking_the_rm() {
    let rm = dead_rm();
    let job = std::env::temp_dir().join(format!("yarn-am-cli-kinds-{}.json", std::process::id()));
    std::fs::write(
        &job,
        r#"{"name":"j","executor":{"cores":1,"memory_mb":256},"tasks":[{"id":"a","command":"x"}]}"#,
    )
    .unwrap();
    let accel = "accel:memory=256,vcores=1";
    for (args, needle) in [
        (vec!["--executor-kind", "accel:vcores=1"], "memory=MB"),
        (
            vec!["--executor-kind", accel, "--executor-kind", accel],
            "given twice",
        ),
        (
            vec!["--executor-kind", accel, "--job", job.to_str().unwrap()],
            "declare the job file's `kinds`",
        ),
    ] {
        let mut all = vec!["submit", "--rm-web", &rm];
        all.extend(args);
        let out = yarn_am(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(needle), "{all:?}: {err}");
        assert!(!err.contains(&rm), "asked the RM: {err}");
    }
    std::fs::remove_file(&job).unwrap();
}

#[test]
fn service_data_on_the_command_line_or_twice_is_refused_before_the_rm_is_asked() {
    let rm = dead_rm();
    let out = yarn_am(&[
        "submit",
        "--rm-web",
        &rm,
        "--service-data",
        "spark_shuffle=hunter2",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("NAME=@FILE"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("hunter2"), "{}", stderr(&out));
    let out = yarn_am(&[
        "submit",
        "--rm-web",
        &rm,
        "--service-data",
        "svc",
        "--service-data",
        "svc",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("given twice"), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains(&rm),
        "the RM was not asked: {}",
        stderr(&out)
    );
}

#[test]
fn public_is_refused_for_private_files_without_files_and_on_local_staging_before_the_rm() {
    use std::os::unix::fs::PermissionsExt;
    let rm = dead_rm();
    let dir = std::env::temp_dir().join(format!("yarn-am-cli-public-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret = dir.join("creds.json");
    let open = dir.join("lookup.csv");
    for (f, mode) in [(&secret, 0o600), (&open, 0o644)] {
        std::fs::write(f, b"{}").unwrap();
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let (secret, open) = (secret.display().to_string(), open.display().to_string());
    let base = ["submit", "--rm-web", &rm, "--timeout", "3", "--public"];
    let cases: [(&[&str], &str); 4] = [
        (
            &["--file", &secret, "--webhdfs", "127.0.0.1:1"],
            "others cannot read",
        ),
        (
            &["--archive", &secret, "--webhdfs", "127.0.0.1:1"],
            "chmod o+r",
        ),
        (
            &["--webhdfs", "127.0.0.1:1"],
            "without a --file or --archive",
        ),
        (
            &["--file", &open],
            "--public needs staging on HDFS (--webhdfs)",
        ),
    ];
    for (extra, want) in cases {
        let out = yarn_am(&[&base[..], extra].concat());
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{extra:?}: {}", stderr(&out));
        // Refused before the (dead) RM or WebHDFS address is tried.
        assert!(!stderr(&out).contains(&rm), "{extra:?}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("127.0.0.1:1"),
            "{extra:?}: {}",
            stderr(&out)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
